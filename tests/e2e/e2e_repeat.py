#!/usr/bin/env python3
"""Repeated runs stay the same: the same job 10 times in a row (overwrite: true).

Before every run the previous output is replaced by a poisoned file, so each
run must really compute and replace it (a no-op would leave the poison).
Peak RSS (GNU time) and wall time of every run are printed. Asserted: the
peak RSS does not grow across runs (last <= first * 1.1 + 8 MiB, and no run
above the smallest * 1.1 + 8 MiB), every output is bit-identical to NumPy's
result. Times are printed, not asserted.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

RUNS = 10
DATES, IDS, NUMS = 16, 20011, 5


def repeat(chunk_axis):
    def case(ctx):
        d = ctx.dir("job")
        src = E.generate(ctx, os.path.join(d, "in.h5"), DATES, IDS, NUMS, seed=11)
        expected = E.expected_cv(src)
        unit = IDS * NUMS * 8 if chunk_axis == "date" else DATES * NUMS * 8 * 2000
        job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", output={"overwrite": True},
                          memory={"chunk_axis": chunk_axis, "max_slab": 3 * unit if chunk_axis == "date" else unit})
        slabs, _ = E.plan_slabs(ctx, job)
        E.check(slabs > 1, "the job should have several slabs")
        out = os.path.join(d, "out.h5")
        rss, wall = [], []
        for i in range(RUNS):
            E.poison(out)
            r = E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job], cwd=d, rss=True), 0, f"run {i}")
            rss.append(r.maxrss_kib)
            wall.append(r.wall)
            E.check_output(out, expected, what=f"run {i}")
            E.check(not E.leftovers(out), f"run {i} left {E.leftovers(out)}")
        print(f"{slabs} slabs, {RUNS} runs")
        print("run  wall s   peak RSS MiB")
        for i, (w, m) in enumerate(zip(wall, rss)):
            print(f"{i:3d}  {w:6.3f}   {m / 1024:8.1f}")
        tol = lambda base: base * 1.1 + 8 * 1024  # KiB
        E.check(rss[-1] <= tol(rss[0]), f"peak RSS grew from {rss[0]} KiB (first) to {rss[-1]} KiB (last)")
        E.check(max(rss) <= tol(min(rss)), f"peak RSS varies from {min(rss)} to {max(rss)} KiB across runs")
    return case


CASES = [
    ("repeat_10_runs_chunk_date", repeat("date")),
    ("repeat_10_runs_chunk_id", repeat("id")),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
