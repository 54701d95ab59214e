#!/usr/bin/env python3
"""What a discount_app.multiply call costs, quiet and busy, and what a budget does to it.

Parts (ratios against NumPy doing the same work, one run): small (100 x 4000
x 5 against np.multiply, quiet and with --busy spinners), 1x1x1, sweep (the
calling thread against the thread team by size: the package's
_CALLER_MAX_BYTES), budget, slicings (against np.copyto), memmap (under a
256 MiB budget against a NumPy loop). Needs the package importable.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


@contextlib.contextmanager
def busy_loops(count: int):
    """`count` processes spinning on a core each, as a shared workstation's other users."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5)  # let the scheduler place them
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


@contextlib.contextmanager
def caller_bytes(D, limit: int):
    """Forces the calling-thread path (limit huge) or the engine's team (limit 0)."""
    saved, D._CALLER_MAX_BYTES = D._CALLER_MAX_BYTES, limit
    try:
        yield
    finally:
        D._CALLER_MAX_BYTES = saved


def small_calls(np, D, args) -> list:
    m, d, o = B.uniform_arrays(tuple(args.small))
    rows = []
    for label, busy in (("quiet", 0), (f"{args.busy} busy loops", args.busy)):
        with busy_loops(busy):
            app = B.median_time(lambda: D.multiply(m, d, out=o), args.repeat)
            ref = B.median_time(lambda: np.multiply(m[None], d, out=o), args.repeat)
        rows.append(["x".join(map(str, args.small)) + f", {label}", app * 1e3, ref * 1e3, B.ratio(ref, app)])
    one = [np.ones((1, 1)), np.ones((1, 1, 1)), np.empty((1, 1, 1))]
    t = B.median_time(lambda: D.multiply(one[0], one[1], out=one[2]), 200)
    ref = B.median_time(lambda: np.multiply(one[0][None], one[1], out=one[2]), 200)
    rows.append(["1x1x1, quiet", t * 1e3, ref * 1e3, None])
    B.print_table(["call", "multiply ms", "np.multiply ms", "np/multiply"], rows,
                  "Small calls (median of %d; np/multiply >= 1 means multiply is at least as fast)" % args.repeat)
    return rows


def sweep(np, D, args) -> list:
    rows = []
    for dates in args.sweep_dates:
        m, d, o = B.uniform_arrays((dates, 4000, 5))
        row = [B.fmt_bytes(d.nbytes)]
        for busy in (0, args.busy):
            with busy_loops(busy):
                with caller_bytes(D, 1 << 62):
                    caller = B.median_time(lambda: D.multiply(m, d, out=o), args.repeat)
                with caller_bytes(D, 0):
                    team = B.median_time(lambda: D.multiply(m, d, out=o), args.repeat)
            row += [caller * 1e3, team * 1e3, B.ratio(caller, team)]
        rows.append(row)
    B.print_table(["disc", "caller ms", "team ms", "team speed-up", f"caller ms ({args.busy} busy)",
                   "team ms (busy)", "team speed-up (busy)"], rows,
                  "Calling thread against the thread team (speed-up > 1: the team repays its start-up)")
    return rows


def budget(np, D, args) -> list:
    m, d, o = B.uniform_arrays(tuple(args.budget_shape))
    free = B.median_time(lambda: D.multiply(m, d, out=o), args.repeat)
    capped = B.median_time(lambda: D.multiply(m, d, out=o, host_budget="2GiB"), args.repeat)
    rows = [["x".join(map(str, args.budget_shape)) + f" ({B.fmt_bytes(d.nbytes)})", free, capped,
             B.ratio(capped, free)]]
    B.print_table(["arrays", "no budget s", 'host_budget="2GiB" s', "budget/none"], rows,
                  "A budget larger than the data (target: budget/none <= 1.05)")
    return rows


def slicings(np, D, args) -> list:
    m, d, o = B.uniform_arrays(tuple(args.budget_shape))
    copy = B.median_time(lambda: np.copyto(o, d), args.repeat)
    rows = []
    for dims in itertools.chain.from_iterable(itertools.combinations(("date", "id", "num"), k) for k in (1, 2, 3)):
        t = B.median_time(lambda: D.multiply(m, d, out=o, parallel_dims=dims), args.repeat)
        assert (o.view(np.uint64) == (m[None] * d).view(np.uint64)).all(), dims  # exact, or no figure
        rows.append([str(list(dims)), t, copy, B.ratio(copy, t)])
    B.print_table(["parallel_dims", "multiply s", "np.copyto s", "copy/multiply"], rows,
                  "Host kernels on " + "x".join(map(str, args.budget_shape))
                  + " against a NumPy copy of disc (target: copy/multiply >= 0.8)")
    return rows


def memmap(np, D, args) -> list:
    ids, nums = 2_000_000, 5
    dates = max(1, int(args.memmap_gb * 1e9 / (ids * nums * 8)))
    shape = (dates, ids, nums)
    folder = tempfile.mkdtemp(prefix="discount_calls.", dir=args.work)
    path = os.path.join(folder, "disc.f8")
    rng = np.random.default_rng(2)
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=shape)
    for j in range(dates):
        mm[j] = rng.uniform(0.5, 1.5, (ids, nums))
    mm.flush()
    del mm
    m, out = rng.uniform(0.5, 1.5, (ids, nums)), np.ones(shape)

    def numpy_loop(disc):
        for j in range(dates):
            np.multiply(m, disc[j], out=out[j])

    def timed(fn, cold):
        times = []
        for _ in range(max(2, args.repeat // 2) if cold else args.repeat):
            if cold:  # the file's pages out of the page cache (clean pages, nobody maps them)
                fd = os.open(path, os.O_RDONLY)
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.close(fd)
            disc = np.memmap(path, dtype=np.float64, mode="r", shape=shape)
            times.append(B.seconds(lambda: fn(disc)))
            del disc
        return B.median(times)

    rows = []
    for label, cold in (("warm", False), ("cold", True)):
        if not cold:
            B.warm_file(path)
        ref, got = timed(numpy_loop, cold), timed(lambda disc: D.multiply(m, disc, out=out, host_budget="256MiB"), cold)
        rows.append([f"{dates}x{ids}x{nums} ({B.fmt_bytes(dates * ids * nums * 8)}), {label}", ref, got,
                     B.ratio(ref, got)])
    shutil.rmtree(folder, ignore_errors=True)
    B.print_table(["np.memmap disc", "NumPy loop s", 'multiply 256MiB s', "loop/multiply"], rows,
                  "A memmap larger than the budget (target: loop/multiply >= 1; cold: the file's pages "
                  "dropped with posix_fadvise before each run)")
    return rows


def main():
    p = B.parser(__doc__, repeat=30, app=False, repeat_help="calls per median")
    p.add_argument("--busy", type=int, default=2, help="busy loops for the loaded runs")
    p.add_argument("--small", type=int, nargs=3, default=(100, 4000, 5), metavar=("DATES", "IDS", "NUMS"))
    p.add_argument("--sweep-dates", type=int, nargs="*", default=[1, 4, 16, 64, 256, 512, 1024, 2048],
                   help="dates of the sweep's arrays (x 4000 x 5)")
    p.add_argument("--budget-shape", type=int, nargs=3, default=(20, 1_000_000, 5), metavar=("DATES", "IDS", "NUMS"))
    p.add_argument("--memmap-gb", type=float, default=1.6)
    p.add_argument("--work", default=None, help="folder for the memmap file (default: the temporary folder)")
    args = p.parse_args()
    B.need_python_modules("numpy")
    import numpy as np
    import discount_app as D

    info = B.machine_info()
    B.print_machine(info)
    print(f"package: {D.__file__}; calling-thread threshold {B.fmt_bytes(D._CALLER_MAX_BYTES)} of disc + out")
    results = {"machine": info, "threshold_bytes": D._CALLER_MAX_BYTES}
    for part in (small_calls, sweep, budget, slicings, memmap):
        results[part.__name__.replace("_calls", "")] = part(np, D, args)
    if args.json:
        B.write_json(args.json, results)


if __name__ == "__main__":
    main()
