#!/usr/bin/env python3
"""Whole dates of a discount_app output against NumPy, bit for bit
([date][id][num] order; the first, the last and N random dates).
Exit 0 when every element matches, 1 otherwise.

  scripts/bench/check_cv_dates.py in.h5 out.h5 --dates 12
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--dates", type=int, default=12, help="random dates to check besides the first and last")
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    n, bad, dates = bl.cv_dates_differ(args.input, args.output, args.dates, args.seed)
    print(f"h5py check of {n} elements over {dates} whole dates: {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
