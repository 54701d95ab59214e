#!/usr/bin/env python3
"""Peak RSS stays within the host budget: a ~200 MB input, host_budget 64MiB.

Bound: peak RSS <= 64 MiB + fixed overhead, where the fixed overhead is
measured in the same test as the peak RSS (GNU time) of the same binary
running the same kind of job over a 1 x 1 x 1 input (executable, shared
libraries: Kokkos, HDF5, yaml-cpp, OpenMP runtime; thread stacks, allocator
arenas), plus NOISE_MIB = 1 MiB for run-to-run jitter of that figure
(measured: +-0.3 MiB).
Measured on the 2-core dev box (OpenMP build): overhead ~15.3 MiB; chunk
axis date peaks at ~74.3 MiB (plan: 3 buffers x 19.08 MiB + 1.91 MiB
multBy = 59.15 MiB of the 64 MiB budget); chunk axis id peaks at ~79.1 MiB
(plan: 3 x 21.33 MiB = 64.00 MiB, the whole budget), i.e. the app's RSS is
its plan plus the fixed overhead.

Cases: chunk axis date (multBy resident), chunk axis id (multBy streamed
per slab), and an input stored chunked (HDF5 reads instead of positional
reads). Each output is checked against NumPy block by block, and the big
files are deleted afterwards.
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

BUDGET_MIB = 64
NOISE_MIB = 1
SHAPE = (100, 50021, 5)  # 200 MB of float64 discount


def peak_rss(ctx, d, src, memory, name):
    job = E.write_job(os.path.join(d, f"{name}.yaml"), src, f"{name}_cv.h5", output={"overwrite": True},
                      memory=dict({"host_budget": f"{BUDGET_MIB}MiB"}, **memory))
    r = E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job], cwd=d, rss=True), 0, name)
    return r, job, os.path.join(d, f"{name}_cv.h5")


def check_blocked(out, src, block=10):
    """Compare out to NumPy's multBy * discount a few dates at a time."""
    with E.h5py.File(src, "r") as fi, E.h5py.File(out, "r") as fo:
        m = fi["multBy"][...].astype(np.float64)
        cv = fo["cv"]
        E.check(cv.dtype == np.dtype("<f8") and cv.shape == fi["discount"].shape, f"output {cv.shape} {cv.dtype}")
        for b in range(0, cv.shape[0], block):
            e = m[None] * fi["discount"][b:b + block].astype(np.float64)
            E.assert_bits_equal(cv[b:b + block], e, f"dates {b}..{b + block}")


def write_chunked(path, rng):
    dates, ids, nums = SHAPE
    with E.h5py.File(path, "w") as f:
        f.create_dataset("multBy", data=E.random_nonzero(rng, (ids, nums)))
        ds = f.create_dataset("discount", shape=SHAPE, dtype="<f8", chunks=(1, 4999, nums))
        for b in range(0, dates, 10):
            ds[b:b + 10] = E.random_nonzero(rng, (10, ids, nums))
    return path


def case(memory, chunked=False):
    def run(ctx):
        d = ctx.dir("job")
        tiny = E.generate(ctx, os.path.join(d, "tiny.h5"), 1, 1, 1, seed=3)
        src = os.path.join(d, "in.h5")
        if chunked:
            write_chunked(src, np.random.default_rng(5))
        else:
            E.generate(ctx, src, *SHAPE, seed=4)
        try:
            base, _, _ = peak_rss(ctx, d, tiny, memory, "tiny")
            big, job, out = peak_rss(ctx, d, src, memory, "big")
            _, plan = E.plan_slabs(ctx, job)
            print(plan)
            overhead = base.maxrss_kib + NOISE_MIB * 1024  # KiB
            peak = big.maxrss_kib
            bound = BUDGET_MIB * 1024 + overhead
            print(f"input {os.path.getsize(src) / 1e6:.0f} MB; 1x1x1 run {base.maxrss_kib} KiB, fixed overhead "
                  f"{overhead} KiB ({overhead / 1024:.1f} MiB); peak RSS {peak} KiB ({peak / 1024:.1f} MiB); "
                  f"bound {BUDGET_MIB} MiB + overhead = {bound} KiB; headroom {bound - peak} KiB; wall {big.wall:.2f} s")
            E.check(peak <= bound, f"peak RSS {peak} KiB exceeds the budget {BUDGET_MIB} MiB + fixed overhead "
                                   f"{overhead} KiB by {peak - bound} KiB")
            check_blocked(out, src)
        finally:
            for name in ("in.h5", "big.h5"):
                p = os.path.join(d, name)
                if os.path.exists(p):
                    os.unlink(p)
    return run


CASES = [
    ("peak_rss_200MB_budget_64MiB_chunk_date", case({})),
    ("peak_rss_200MB_budget_64MiB_chunk_id", case({"chunk_axis": "id"})),
    ("peak_rss_200MB_budget_64MiB_chunked_input", case({}, chunked=True)),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
