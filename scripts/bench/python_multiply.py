#!/usr/bin/env python3
"""discount_app's Python module against its peers, as same-run ratios.

multiply on NumPy arrays against a Numba prange copy (the limit) and multiply,
np.multiply, a hand-chunked CuPy loop (device space), run() against the CLI,
and a 1 x 1 x 1 call; medians of --repeat after a warm-up. Needs the package
importable (PYTHONPATH=build/<preset>/python).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def pcie_limits(cp, nbytes: int = 1 << 30, reps: int = 5) -> tuple[float, float]:
    """GB/s of pinned-host <-> device copies, H2D and D2H running at once on two streams."""
    import cupyx
    host_up, host_down = cupyx.empty_pinned(nbytes, dtype="u1"), cupyx.empty_pinned(nbytes, dtype="u1")
    dev_up, dev_down = cp.empty(nbytes, dtype="u1"), cp.zeros(nbytes, dtype="u1")
    host_up.fill(1)
    s_up, s_down = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    rt = cp.cuda.runtime
    best_up = best_down = float("inf")
    for _ in range(reps):
        e = [cp.cuda.Event() for _ in range(4)]
        e[0].record(s_up)
        e[2].record(s_down)
        rt.memcpyAsync(dev_up.data.ptr, host_up.ctypes.data, nbytes, rt.memcpyHostToDevice, s_up.ptr)
        rt.memcpyAsync(host_down.ctypes.data, dev_down.data.ptr, nbytes, rt.memcpyDeviceToHost, s_down.ptr)
        e[1].record(s_up)
        e[3].record(s_down)
        e[1].synchronize()
        e[3].synchronize()
        best_up = min(best_up, cp.cuda.get_elapsed_time(e[0], e[1]) / 1e3)
        best_down = min(best_down, cp.cuda.get_elapsed_time(e[2], e[3]) / 1e3)
    return nbytes / best_up / 1e9, nbytes / best_down / 1e9


def run_against_cli(discount_app, app, mult, disc, a, results):
    """run() and the CLI on the same HDF5 job, alternating, so both see the same page cache and load."""
    import h5py
    ids = a.run_ids or a.ids
    work = tempfile.mkdtemp(prefix="discount_pybench_")
    src, cfg, cv = (os.path.join(work, f) for f in ("in.h5", "job.yaml", "cv.h5"))
    with h5py.File(src, "w") as f:
        f["multBy"], f["discount"] = mult[:ids], disc[:, :ids]
    B.write_config(cfg, {"input": {"file": "in.h5"}, "output": {"file": "cv.h5", "overwrite": True},
                         "compute": {"space": a.space}})
    t = B.interleaved({"run": lambda: (B.remove(cv), discount_app.run(cfg)),
                       "cli": lambda: (B.remove(cv), subprocess.run([app, "run", "-q", cfg], check=True))}, a.repeat)
    results["run_s"], results["cli_s"] = B.median(t["run"]), B.median(t["cli"])
    print(f"\nrun() vs the CLI on {B.fmt_bytes(8 * a.dates * ids * 5)} in HDF5 ({work}): run() "
          f"{results['run_s']:.3f} s, CLI {results['cli_s']:.3f} s (process start included), "
          f"run/CLI = {results['run_s'] / results['cli_s']:.3f}")
    B.remove(src, cv, cfg)
    os.rmdir(work)


def main():
    p = B.parser(__doc__, repeat=5)
    p.add_argument("--dates", type=int, default=20)
    p.add_argument("--ids", type=int, default=400000)
    p.add_argument("--space", default="host", choices=("host", "device"))
    p.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)),
                   help="threads for Numba (set OMP_NUM_THREADS to the same for the engine; default: it)")
    p.add_argument("--run-ids", type=int, default=None, help="ids of the run-vs-CLI job (default: --ids)")
    p.add_argument("--no-run", action="store_true", help="skip run() vs the CLI")
    p.add_argument("--no-peers", action="store_true",
                   help="skip np.multiply, the paired rounds and CuPy's loop (quick comparisons of settings; "
                        "the Numba copy and multiply and the PCIe limits stay)")
    p.add_argument("--calls", type=int, default=20, help="calls in a row for the flat-time check")
    a = p.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    os.environ.setdefault("OMP_PROC_BIND", "false")
    import numpy as np
    import discount_app
    # With OMP_PROC_BIND set, libgomp pins this process to one core when it
    # loads; Numba's threads and the CLI started from here would inherit it.
    cpus = len(os.sched_getaffinity(0))
    if cpus < a.threads:
        B.log(f"warning: this process may use {cpus} CPU(s), fewer than --threads {a.threads} "
              f"(OMP_PROC_BIND={os.environ.get('OMP_PROC_BIND')}): the peers' figures would not compare; "
              "run with OMP_PROC_BIND=false")
    app = None if a.no_run else B.find_app(a.app)
    info = B.machine_info(app)
    rng = np.random.default_rng(1)
    shape = (a.dates, a.ids, 5)
    B.log(f"making {B.fmt_bytes(8 * a.dates * a.ids * 5)} of disc")
    mult = rng.uniform(0.5, 1.5, shape[1:])
    disc = np.empty(shape)
    # Random non-zero values; past 8 dates each date is a random one scaled
    # (a 40 GB disc would take minutes of uniform() otherwise).
    for d in range(a.dates):
        if d < 8:
            disc[d] = rng.uniform(0.5, 1.5, shape[1:])
        else:
            np.multiply(disc[d % 8], 1.0 + d / 1024, out=disc[d])
    out = np.empty(shape)
    out.fill(0.0)  # its pages touched: the first call then pays the staging ring, not out's faults
    moved = 2 * disc.nbytes  # in and out
    rows = []
    results = {"machine": info, "shape": shape, "space": a.space, "threads": a.threads}

    def multiply(**kw):
        return lambda: discount_app.multiply(mult, disc, out, space=a.space, **kw)

    def row(name, t, peer=True):
        rows.append([name, t, B.gbps(moved, t), t / t_mul if peer else 1.0])

    # A first call makes (and on a GPU pins) its staging ring; later calls take the ring the
    # previous one kept. The first call's time on its own, after Kokkos and the GPU context
    # started at a 1 x 1 x 1 call:
    discount_app.multiply(np.ones((1, 1)), np.ones((1, 1, 1)), np.empty((1, 1, 1)), space=a.space)
    if hasattr(discount_app, "release_buffers"):
        discount_app.release_buffers()
    t_first = results["multiply_first_call_s"] = B.seconds(multiply())
    first_report = discount_app.last_report()
    print(f"multiply, first call (makes its staging ring): {t_first:.3f} s, staging "
          f"{first_report.get('staging_seconds', 0):.3f} s for {B.fmt_bytes(first_report.get('staging_bytes', 0))}")
    # On a GPU, disc and out are pinned in place by the second call that passes them (pin=None);
    # from then on the GPU copies them where they lie. pin=False calls first: the staged path.
    pins = a.space == "device" and hasattr(discount_app, "pinned_bytes")
    if pins:
        t_staged = results["multiply_staged_s"] = B.median_time(multiply(pin=False), a.repeat)
        t_pin = results["multiply_pinning_call_s"] = B.seconds(multiply())
        results["pinned_bytes"] = discount_app.pinned_bytes()
        print(f"multiply staged (pin=False): {t_staged:.3f} s; the call that pins disc and out in place: "
              f"{t_pin:.3f} s; pinned {B.fmt_bytes(discount_app.pinned_bytes())}")
    t_mul = B.median_time(multiply(), a.repeat)
    for d in range(a.dates):  # date by date: a whole-array product would double the memory
        assert (out[d] == mult * disc[d]).all(), f"multiply's result differs from NumPy's at date {d}"
    report = results["multiply_report"] = discount_app.last_report()
    row("multiply" + (" (pinned in place)" if pins and results["pinned_bytes"] > 0 else ""), t_mul, peer=False)
    row("multiply, first call", t_first)
    if pins:
        row("multiply staged (pin=False)", t_staged)
        row("multiply, the call that pins", t_pin)
    if not a.no_peers:
        row("np.multiply", B.median_time(lambda: np.multiply(mult[None], disc, out=out), a.repeat))

    try:
        import numba
        numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))
        copy, nmul = B.numba_kernels()
        d1, o1, m1 = disc.reshape(-1), out.reshape(-1), mult.reshape(-1)
        row(f"Numba prange copy ({numba.get_num_threads()} thr)", B.median_time(lambda: copy(d1, o1), a.repeat))
        row(f"Numba prange multiply ({numba.get_num_threads()} thr)", B.median_time(lambda: nmul(m1, d1, o1), a.repeat))
        # The host-space targets as paired ratios: multiply, the copy and np.multiply one after
        # another in each round, so that load which comes and goes hits all three alike.
        if not a.no_peers:
            paired = results["paired_ratios"] = {"copy / multiply (target >= 0.8)": [],
                                                 "np.multiply / multiply (target >= 1.5)": []}
            for _ in range(2 * a.repeat):
                t = [B.seconds(fn) for fn in (multiply(), lambda: copy(d1, o1),
                                              lambda: np.multiply(mult[None], disc, out=out))]
                paired["copy / multiply (target >= 0.8)"].append(t[1] / t[0])
                paired["np.multiply / multiply (target >= 1.5)"].append(t[2] / t[0])
    except ImportError:
        B.log("Numba missing: its rows are skipped")

    if pins:
        discount_app.release_buffers()  # CuPy's copies would gain from pages pinned by us
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() == 0:
            raise ImportError
        chunk = max(1, int(1 << 30) // (8 * a.ids * 5))
        mg = cp.asarray(mult)

        def cupy_chunks():
            for d0 in range(0, a.dates, chunk):
                g = cp.asarray(disc[d0:d0 + chunk])
                g *= mg[None]
                out[d0:d0 + chunk] = cp.asnumpy(g)
        if not a.no_peers:
            row(f"CuPy loop of {chunk}-date chunks", B.median_time(cupy_chunks, a.repeat))
        if a.space == "device":
            h2d, d2h = pcie_limits(cp)
            results["pcie_gb_per_s"] = {"h2d": h2d, "d2h": d2h}
            # disc goes up and cv comes down, each direction at its limit while both run.
            allowed = results["pcie_allowed_s"] = max(disc.nbytes / (h2d * 1e9), out.nbytes / (d2h * 1e9))
            print(f"PCIe, pinned, both directions at once (same run): H2D {h2d:.1f} GB/s, D2H {d2h:.1f} GB/s; "
                  f"they allow {allowed:.3f} s for these bytes; multiply / that = {t_mul / allowed:.2f} "
                  f"(target <= 1.25; the first call: {t_first / allowed:.2f}"
                  + (f"; staged: {t_staged / allowed:.2f}; the pinning call: {t_pin / allowed:.2f}" if pins else "")
                  + ")")
    except ImportError:
        B.log("CuPy (with a GPU) missing: its rows are skipped")

    stages = ", ".join(f"{s['name']} {s.get('gb_per_s', 0):.1f} GB/s" for s in report.get("stages", []))
    B.print_machine(info)
    print(f"\nshape {shape}, {B.fmt_bytes(moved)} moved per call, space {a.space}, OMP_NUM_THREADS "
          f"{os.environ['OMP_NUM_THREADS']}, {report.get('slabs', {}).get('total')} slab(s); stages: {stages}; staging "
          f"{report.get('staging_seconds', 0):.3f} s ({B.fmt_bytes(report.get('staging_reused_bytes', 0))} of "
          f"{B.fmt_bytes(report.get('staging_bytes', 0))} kept from the call before)")
    B.print_table(["variant", "median s", "GB/s (in+out)", "its time / multiply's"], rows,
                  "multiply against its peers (same run)")
    for name, values in results.get("paired_ratios", {}).items():
        print(f"paired, {len(values)} rounds: {name}: median {B.median(values):.2f} "
              f"(min {min(values):.2f}, max {max(values):.2f})")

    one = (np.ones((1, 1)), np.ones((1, 1, 1)), np.empty((1, 1, 1)))
    discount_app.multiply(*one, space=a.space)
    calls = [B.seconds(lambda: discount_app.multiply(*one, space=a.space)) for _ in range(50)]
    results["overhead_ms"] = 1e3 * B.median(calls)
    print(f"\n1 x 1 x 1 multiply after the first call: median {results['overhead_ms']:.2f} ms, "
          f"max {1e3 * max(calls):.2f} ms over 50 calls")
    # Calls in a row on a tenth of the dates: the first five against the last five.
    part, k = max(1, a.dates // 10), max(1, min(5, a.calls // 2))
    series = results["series_s"] = [B.seconds(lambda: discount_app.multiply(mult, disc[:part], out[:part],
                                                                             space=a.space)) for _ in range(a.calls)]
    print(f"{a.calls} calls in a row on {part} date(s): first {k} median {B.median(series[:k]):.4f} s, last {k} "
          f"median {B.median(series[-k:]):.4f} s (last/first {B.median(series[-k:]) / B.median(series[:k]):.3f})")
    if not a.no_run:
        run_against_cli(discount_app, app, mult, disc, a, results)
    results["rows"] = rows
    if a.json:
        B.write_json(a.json, results)


if __name__ == "__main__":
    main()
