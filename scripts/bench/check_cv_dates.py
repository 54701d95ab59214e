#!/usr/bin/env python3
"""Whole dates of a discount_app output against NumPy, bit for bit
([date][id][num] order; the first, the last and N random dates).
Exit 0 when every element matches, 1 otherwise.

  scripts/bench/check_cv_dates.py in.h5 out.h5 --dates 12
"""
import argparse
import sys

import h5py
import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--dates", type=int, default=12, help="random dates to check besides the first and last")
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    with h5py.File(args.input, "r") as f, h5py.File(args.output, "r") as o:
        m = f["multBy"][...]
        d = f["discount"]
        cv = o["cv"]
        rng = np.random.default_rng(args.seed)
        dates = sorted(set(rng.integers(0, d.shape[0], args.dates).tolist()) | {0, d.shape[0] - 1})
        bad = n = 0
        for date in dates:
            expected = m * d[date]
            got = cv[date]
            bad += int((expected.view(np.uint64) != got.view(np.uint64)).sum())
            n += expected.size
    print(f"h5py check of {n} elements over {len(dates)} whole dates: {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
