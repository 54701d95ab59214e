#!/usr/bin/env python3
"""A checksum-sink run over the synthetic source, rechecked: cv recomputed
from the formula in lib/io/input/synthetic.hpp for chosen dates, its bit sums
compared with the report's `date_bits`.

  check_synthetic_checksum.py run.json --dates 0,1,199 [--seed 1]
"""
import argparse
import json
import sys

import numpy as np

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def mix(x):
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def key(seed, stream):
    return mix(np.uint64(seed) ^ (np.uint64(stream) << np.uint64(56)))


def value(k, n):
    with np.errstate(over="ignore"):
        return 0.5 + (mix(k + n) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("report")
    ap.add_argument("--dates", default="0", help="comma-separated dates to recompute, or 'all'")
    ap.add_argument("--seed", type=int, default=None, help="default: from the report's config")
    args = ap.parse_args()
    report = json.load(open(args.report))
    cfg = report["config"]
    if isinstance(cfg, dict):  # schema_version 2: the config as a JSON object
        synthetic = cfg.get("input", {}).get("synthetic")
        if not isinstance(synthetic, dict):
            sys.exit("the report's config has no input.synthetic")
        dates, ids, nums, seed = (int(synthetic[k]) for k in ("dates", "ids", "nums", "seed"))
    else:  # schema_version 1: the config as YAML text
        import re
        m = re.search(r"synthetic: \{dates: (\d+), ids: (\d+), nums: (\d+), seed: (\d+)\}", cfg)
        if not m:
            sys.exit("the report's config has no input.synthetic")
        dates, ids, nums, seed = (int(g) for g in m.groups())
    seed = args.seed if args.seed is not None else seed
    bits = [int(b) for b in report["checksum"]["date_bits"]]
    chosen = range(dates) if args.dates == "all" else [int(d) for d in args.dates.split(",")]
    mk, dk = key(seed, 1), key(seed, 2)
    row = ids * nums
    mult = value(mk, np.arange(row, dtype=np.uint64))
    bad = 0
    for d in chosen:
        cv = mult * value(dk, np.uint64(d * row) + np.arange(row, dtype=np.uint64))
        got = int(cv.view(np.uint64).sum(dtype=np.uint64))
        ok = got == bits[d]
        bad += not ok
        print(f"date {d}: NumPy {got:016x}  report {bits[d]:016x}  {'equal' if ok else 'DIFFERENT'}")
    if args.dates == "all":
        total = sum(bits) & 0xFFFFFFFFFFFFFFFF
        print(f"global: report {report['checksum']['global_bits_hex']}, sum of dates {total:016x}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
