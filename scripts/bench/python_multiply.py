#!/usr/bin/env python3
"""discount_app's Python module against its peers, as same-run ratios.

multiply on NumPy arrays against a Numba prange copy (the limit) and multiply,
np.multiply, a hand-chunked CuPy loop (device space), run() against the CLI,
and a 1 x 1 x 1 call; medians of --repeat after a warm-up. Needs the package
importable (PYTHONPATH=build/<preset>/python).
"""
from __future__ import annotations

import argparse
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dates", type=int, default=20)
    p.add_argument("--ids", type=int, default=400000)
    p.add_argument("--nums", type=int, default=5)
    p.add_argument("--space", default="host", choices=("host", "device"))
    p.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)),
                   help="threads for Numba (set OMP_NUM_THREADS to the same for the engine; default: it)")
    p.add_argument("--host-budget", default=None, help="multiply's host_budget (default: the engine's)")
    p.add_argument("--device-budget", default=None)
    p.add_argument("--run-ids", type=int, default=None, help="ids of the run-vs-CLI job (default: --ids)")
    p.add_argument("--no-run", action="store_true", help="skip run() vs the CLI")
    p.add_argument("--no-peers", action="store_true",
                   help="skip np.multiply, the paired rounds and CuPy's loop (quick comparisons of settings; "
                        "the Numba copy and multiply and the PCIe limits stay)")
    p.add_argument("--calls", type=int, default=20, help="calls in a row for the flat-time check (default 20)")
    p.add_argument("--work", default=None, help="folder for the run-vs-CLI files (default: a temporary one)")
    B.add_common_args(p, repeat=5)
    a = p.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    os.environ.setdefault("OMP_PROC_BIND", "false")
    import numpy as np
    import discount_app
    # With OMP_PROC_BIND set, libgomp pins this process to one core when it
    # loads; Numba's threads and the CLI started from here would inherit it.
    cpus = len(os.sched_getaffinity(0))
    if cpus < a.threads:
        print(f"warning: this process may use {cpus} CPU(s), fewer than --threads {a.threads} "
              f"(OMP_PROC_BIND={os.environ.get('OMP_PROC_BIND')}): the peers' figures would not compare; "
              "run with OMP_PROC_BIND=false", file=sys.stderr)
    app = None if a.no_run else B.find_app(a.app)
    info = B.machine_info(app)
    rng = np.random.default_rng(1)
    shape = (a.dates, a.ids, a.nums)
    B.log(f"making {B.fmt_bytes(8 * a.dates * a.ids * a.nums)} of disc")
    mult = rng.uniform(0.5, 1.5, (a.ids, a.nums))
    disc = np.empty(shape)
    # Random non-zero values; past 8 dates each date is a random one scaled
    # (a 40 GB disc would take minutes of uniform() otherwise).
    for d in range(a.dates):
        if d < 8:
            disc[d] = rng.uniform(0.5, 1.5, (a.ids, a.nums))
        else:
            np.multiply(disc[d % 8], 1.0 + d / 1024, out=disc[d])
    out = np.empty(shape)
    out.fill(0.0)  # its pages touched: the first call's figure then is the staging ring's cost, not out's faults
    moved = 2 * disc.nbytes  # in and out
    rows = []
    results = {"machine": info, "shape": shape, "space": a.space, "threads": a.threads}

    kw = dict(space=a.space, host_budget=a.host_budget, device_budget=a.device_budget)
    # A first call makes (and on a GPU pins) its staging ring; later calls take
    # the ring the previous one kept. The first call's time on its own:
    # (Kokkos and the GPU context start at a 1 x 1 x 1 call before it.)
    discount_app.multiply(np.ones((1, 1)), np.ones((1, 1, 1)), np.empty((1, 1, 1)), space=a.space)
    if hasattr(discount_app, "release_buffers"):
        discount_app.release_buffers()
    t_first = B.seconds(lambda: discount_app.multiply(mult, disc, out, **kw))
    first_report = discount_app.last_report()
    results["multiply_first_call_s"] = t_first
    print(f"multiply, first call (makes its staging ring): {t_first:.3f} s, staging "
          f"{first_report.get('staging_seconds', 0):.3f} s for {B.fmt_bytes(first_report.get('staging_bytes', 0))}")
    # On a GPU, disc and out are pinned in place by the second call that
    # passes them (multiply's pin=None); from then on the GPU copies them
    # where they lie. pin=False calls first: the staged path's steady time.
    pins = a.space == "device" and hasattr(discount_app, "pinned_bytes")
    t_staged = t_pin = None
    if pins:
        t_staged = B.median_time(lambda: discount_app.multiply(mult, disc, out, pin=False, **kw), a.repeat)
        t_pin = B.seconds(lambda: discount_app.multiply(mult, disc, out, **kw))
        results["multiply_staged_s"], results["multiply_pinning_call_s"] = t_staged, t_pin
        results["pinned_bytes"] = discount_app.pinned_bytes()
        print(f"multiply staged (pin=False): {t_staged:.3f} s; the call that pins disc and out in place: "
              f"{t_pin:.3f} s; pinned {B.fmt_bytes(discount_app.pinned_bytes())}")
    t_mul = B.median_time(lambda: discount_app.multiply(mult, disc, out, **kw), a.repeat)
    for d in range(a.dates):  # date by date: a whole-array product would double the memory
        assert (out[d] == mult * disc[d]).all(), f"multiply's result differs from NumPy's at date {d}"
    report = discount_app.last_report()
    stages = ", ".join(f"{s['name']} {s.get('gb_per_s', 0):.1f} GB/s" for s in report.get("stages", []))
    pinned_now = pins and results.get("pinned_bytes", 0) > 0
    rows.append(["multiply" + (" (pinned in place)" if pinned_now else ""), t_mul, B.gbps(moved, t_mul), 1.0])
    rows.append(["multiply, first call", t_first, B.gbps(moved, t_first), t_first / t_mul])
    if pins:
        rows.append(["multiply staged (pin=False)", t_staged, B.gbps(moved, t_staged), t_staged / t_mul])
        rows.append(["multiply, the call that pins", t_pin, B.gbps(moved, t_pin), t_pin / t_mul])
    results["multiply_report"] = report

    if not a.no_peers:
        t_np = B.median_time(lambda: np.multiply(mult[None], disc, out=out), a.repeat)
        rows.append(["np.multiply", t_np, B.gbps(moved, t_np), t_np / t_mul])

    t_copy = t_nmul = None
    try:
        import numba
        from numba import njit, prange
        numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))

        @njit(parallel=True, cache=False)
        def copy(d, o):
            for n in prange(d.size):
                o[n] = d[n]

        @njit(parallel=True, cache=False)
        def mul(m, d, o, per_date):
            for n in prange(d.size):
                o[n] = m[n % per_date] * d[n]
        d1, o1, m1 = disc.reshape(-1), out.reshape(-1), mult.reshape(-1)
        t_copy = B.median_time(lambda: copy(d1, o1), a.repeat)
        rows.append([f"Numba prange copy ({numba.get_num_threads()} thr)", t_copy, B.gbps(moved, t_copy),
                     t_copy / t_mul])
        t_nmul = B.median_time(lambda: mul(m1, d1, o1, m1.size), a.repeat)
        rows.append([f"Numba prange multiply ({numba.get_num_threads()} thr)", t_nmul, B.gbps(moved, t_nmul),
                     t_nmul / t_mul])
        # The host-space targets as paired ratios: multiply, the copy and
        # np.multiply one after another in each round, so that load which
        # comes and goes on a shared machine hits all three alike.
        paired = {"copy / multiply (target >= 0.8)": [], "np.multiply / multiply (target >= 1.5)": []}
        for _ in range(0 if a.no_peers else 2 * a.repeat):
            t = [B.seconds(fn) for fn in (lambda: discount_app.multiply(mult, disc, out, **kw), lambda: copy(d1, o1),
                                          lambda: np.multiply(mult[None], disc, out=out))]
            paired["copy / multiply (target >= 0.8)"].append(t[1] / t[0])
            paired["np.multiply / multiply (target >= 1.5)"].append(t[2] / t[0])
        if not a.no_peers:
            results["paired_ratios"] = paired
    except ImportError:
        B.log("Numba missing: its rows are skipped")

    if pins:
        # CuPy's copies would gain from pages pinned by us: unpinned first.
        discount_app.release_buffers()
    try:
        import cupy as cp
        if cp.cuda.runtime.getDeviceCount() == 0:
            raise ImportError
        chunk = max(1, int(1 << 30) // (8 * a.ids * a.nums))
        mg = cp.asarray(mult)

        def cupy_chunks():
            for d0 in range(0, a.dates, chunk):
                d1_ = min(a.dates, d0 + chunk)
                g = cp.asarray(disc[d0:d1_])
                g *= mg[None]
                out[d0:d1_] = cp.asnumpy(g)
        if not a.no_peers:
            t_cp = B.median_time(cupy_chunks, a.repeat)
            rows.append([f"CuPy loop of {chunk}-date chunks", t_cp, B.gbps(moved, t_cp), t_cp / t_mul])
            try:
                whole = cp.asarray(disc)
                results["cupy_asarray_whole"] = f"fit: {B.fmt_bytes(disc.nbytes)} on the device"
                del whole
            except Exception as e:  # the seed's failure, shown
                results["cupy_asarray_whole"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
            print(f"cupy.asarray(disc) of the whole {B.fmt_bytes(disc.nbytes)}: {results['cupy_asarray_whole']}")
        if a.space == "device":
            h2d, d2h = pcie_limits(cp)
            results["pcie_gb_per_s"] = {"h2d": h2d, "d2h": d2h}
            # disc goes up and cv comes down, each direction at its limit while both run.
            allowed = max(disc.nbytes / (h2d * 1e9), out.nbytes / (d2h * 1e9))
            results["pcie_allowed_s"] = allowed
            print(f"PCIe, pinned, both directions at once (same run): H2D {h2d:.1f} GB/s, D2H {d2h:.1f} GB/s; "
                  f"they allow {allowed:.3f} s for these bytes; multiply / that = {t_mul / allowed:.2f} "
                  f"(target <= 1.25; the first call: {t_first / allowed:.2f}"
                  + (f"; staged: {t_staged / allowed:.2f}; the pinning call: {t_pin / allowed:.2f}" if pins else "")
                  + ")")
            if t_copy is not None:
                # Staged arrays are copied twice on the host (in and out): a floor for the staged path.
                floor = 2 * t_copy
                results["two_host_copies_s"] = floor
                print(f"two host copies of these bytes at the Numba copy's rate: {floor:.3f} s = "
                      f"{floor / allowed:.2f} x what PCIe allows; the Numba multiply is {t_nmul / floor:.2f} x it (multiply "
                      f">= 1.5x Numba needs >= 1.5); multiply / that = {t_mul / floor:.2f}")
    except ImportError:
        B.log("CuPy (with a GPU) missing: its rows are skipped")

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

    # 1 x 1 x 1 calls after the first.
    one_m, one_d, one_o = np.ones((1, 1)), np.ones((1, 1, 1)), np.empty((1, 1, 1))
    discount_app.multiply(one_m, one_d, one_o, space=a.space)
    calls = [B.seconds(lambda: discount_app.multiply(one_m, one_d, one_o, space=a.space)) for _ in range(50)]
    results["overhead_ms"] = 1e3 * B.median(calls)
    print(f"\n1 x 1 x 1 multiply after the first call: median {results['overhead_ms']:.2f} ms, "
          f"max {1e3 * max(calls):.2f} ms over 50 calls")

    # Calls in a row on a tenth of the dates: the first five against the last five.
    part = max(1, a.dates // 10)
    series = [B.seconds(lambda: discount_app.multiply(mult, disc[:part], out[:part], **kw)) for _ in range(a.calls)]
    k = max(1, min(5, a.calls // 2))
    results["series_s"] = series
    print(f"{a.calls} calls in a row on {part} date(s): first {k} median {B.median(series[:k]):.4f} s, last {k} "
          f"median {B.median(series[-k:]):.4f} s (last/first {B.median(series[-k:]) / B.median(series[:k]):.3f})")

    if not a.no_run:
        import h5py
        ids = a.run_ids or a.ids
        work = a.work or tempfile.mkdtemp(prefix="discount_pybench_")
        os.makedirs(work, exist_ok=True)
        src = os.path.join(work, "in.h5")
        with h5py.File(src, "w") as f:
            f["multBy"] = mult[:ids]
            f["discount"] = disc[:, :ids]
        cfg = os.path.join(work, "job.yaml")
        with open(cfg, "w") as f:
            f.write(f"input: {{file: in.h5}}\noutput: {{file: cv.h5, overwrite: true}}\n"
                    f"compute: {{space: {a.space}}}\n")
        cv = os.path.join(work, "cv.h5")

        def py_run():
            B.remove(cv)
            discount_app.run(cfg)

        def cli_run():
            B.remove(cv)
            subprocess.run([app, "run", "-q", cfg], check=True)
        # Alternating, so both see the same page cache and load.
        t = B.interleaved({"run": py_run, "cli": cli_run}, a.repeat)
        results["run_s"], results["cli_s"] = B.median(t["run"]), B.median(t["cli"])
        print(f"\nrun() vs the CLI on {B.fmt_bytes(8 * a.dates * ids * a.nums)} in HDF5 ({work}): run() "
              f"{results['run_s']:.3f} s, CLI {results['cli_s']:.3f} s (process start included), "
              f"run/CLI = {results['run_s'] / results['cli_s']:.3f}")
        if not a.work:
            B.remove(src, cv, cfg)
            os.rmdir(work)

    results["rows"] = rows
    if a.json:
        B.write_json(a.json, results)


if __name__ == "__main__":
    main()
