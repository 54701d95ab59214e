#!/usr/bin/env python3
"""A checksum-sink run over the synthetic source, rechecked: cv recomputed
from the formula in lib/io/input/synthetic.hpp for chosen dates, its bit sums
compared with the report's `date_bits`.

  check_synthetic_checksum.py run.json --dates 0,1,199
"""
import argparse
import json
import sys

import numpy as np


def mix(x):
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def value(seed, stream, n):
    """The synthetic source's value n of a stream (1: multBy, 2: discount)."""
    key = mix(np.uint64(seed) ^ (np.uint64(stream) << np.uint64(56)))
    with np.errstate(over="ignore"):
        return 0.5 + (mix(key + n) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report")
    ap.add_argument("--dates", default="0", help="comma-separated dates to recompute, or 'all'")
    args = ap.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    synthetic = report["config"].get("input", {}).get("synthetic") if isinstance(report["config"], dict) else None
    if not isinstance(synthetic, dict):
        sys.exit("the report's config (schema_version 2) has no input.synthetic")
    dates, ids, nums, seed = (int(synthetic[k]) for k in ("dates", "ids", "nums", "seed"))
    bits = [int(b) for b in report["checksum"]["date_bits"]]
    row = np.arange(ids * nums, dtype=np.uint64)
    mult = value(seed, 1, row)
    bad = 0
    for d in range(dates) if args.dates == "all" else [int(d) for d in args.dates.split(",")]:
        got = int((mult * value(seed, 2, np.uint64(d * ids * nums) + row)).view(np.uint64).sum(dtype=np.uint64))
        bad += got != bits[d]
        print(f"date {d}: NumPy {got:016x}  report {bits[d]:016x}  {'equal' if got == bits[d] else 'DIFFERENT'}")
    if args.dates == "all":
        print(f"global: report {report['checksum']['global_bits_hex']}, sum of dates {sum(bits) & (2**64 - 1):016x}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
