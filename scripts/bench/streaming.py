#!/usr/bin/python3
"""Out-of-core streaming benchmark: discount_app end to end (HDF5 -> HDF5, durable)
against `cp && sync` of the same input, h5py+NumPy slab streaming, the app
without overlap (pipeline_depth 1), and optionally dask.

Every variant is timed until its output is durable (a `sync` follows each one
and is counted). The page cache is dropped before each cold run; a warm
variant reads the input into the page cache first. Variants are interleaved
within each repeat and the median is reported. Timing is printed, never
asserted.

Run with /usr/bin/python3 (h5py, NumPy; dask for --with-dask).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

VARIANTS = ["read", "write", "cp", "app", "app_serial", "h5py", "dask"]
LABELS = {
    "read": "read only: cat input > /dev/null",
    "write": "write only: dd zeros, fdatasync, sync",
    "cp": "cp input output && sync",
    "app": "discount_app pipelined (depth 3) + sync",
    "app_serial": "discount_app serial (depth 1) + sync",
    "h5py": "h5py+NumPy slab streaming + sync",
    "dask": "dask.array over h5py, to_hdf5 + sync",
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="Example: /usr/bin/python3 scripts/bench/streaming.py --size 2GB --repeat 3 --json /tmp/streaming.json")
    p.add_argument("--size", type=bl.parse_bytes, default=bl.parse_bytes("2GB"),
                   help="bytes of the discount dataset (ids = size / (dates * nums * 8))")
    p.add_argument("--dates", type=int, default=200, help="dates of the generated input")
    p.add_argument("--nums", type=int, default=5, help="nums of the generated input")
    p.add_argument("--ids", type=int, help="ids of the generated input (overrides --size)")
    p.add_argument("--workdir", default="/tmp/discount_bench", help="where the input and outputs live")
    p.add_argument("--input", help="input HDF5 file (default WORKDIR/in_DxMxO.h5); reused if its shape matches, "
                   "otherwise generated with `discount_app generate`")
    p.add_argument("--max-slab", type=lambda t: None if t == "auto" else bl.parse_bytes(t), default=None,
                   help="memory.max_slab for both app runs, or auto: the app's defaults (max_slab and host_budget "
                   "left unset); the h5py and dask peers use the same dates per slab")
    p.add_argument("--depth", type=int, default=3, help="pipeline_depth of the pipelined app run")
    p.add_argument("--space", choices=["host", "device"], default="host",
                   help="compute.space of the app runs (host: OpenMP; device: the build's default space)")
    p.add_argument("--cache", choices=["cold", "warm", "both"], default="both",
                   help="cold: drop the page cache before each run; warm: read the input into it first")
    p.add_argument("--settle", type=float, default=0.0,
                   help="seconds to wait after deleting the previous output and syncing, before each run "
                   "(lets the disk finish discards and write-back)")
    p.add_argument("--with-dask", action="store_true", help="also time dask.array + to_hdf5 (slow)")
    p.add_argument("--skip", default="", help="comma-separated variants to leave out, of: " + ",".join(VARIANTS))
    p.add_argument("--delete-input", action="store_true", help="delete the input at the end (default: keep for reuse)")
    p.add_argument("--no-check", action="store_true", help="skip the sampled correctness check of each output")
    bl.add_common_args(p, repeat=3)
    return p.parse_args(argv)


# ----------------------------------------------------------------------------
# input


def input_shape(path: str):
    import h5py
    try:
        with h5py.File(path, "r") as f:
            d, m = f["discount"], f["multBy"]
            if d.dtype != "f8" or m.dtype != "f8" or d.chunks is not None:
                return None
            return tuple(d.shape), tuple(m.shape)
    except (OSError, KeyError):
        return None


def ensure_input(app: str, path: str, dates: int, ids: int, nums: int) -> dict:
    shape = input_shape(path) if os.path.exists(path) else None
    if shape == ((dates, ids, nums), (ids, nums)):
        return {"path": path, "generated": False, "seconds": 0.0}
    need = dates * ids * nums * 8 * 3 + ids * nums * 8
    if bl.free_bytes(os.path.dirname(path)) < need:
        sys.exit(f"not enough disk for input + one output: need {bl.fmt_bytes(need)} "
                 f"(input x 3 to be safe), have {bl.df_line(os.path.dirname(path))}")
    bl.log(f"[streaming] generating {path}: discount [{dates} x {ids} x {nums}] ({bl.fmt_bytes(dates*ids*nums*8)})")
    t0 = time.perf_counter()
    subprocess.run([app, "generate", "--dates", str(dates), "--ids", str(ids), "--nums", str(nums),
                    "--out", path, "--force"], check=True)
    return {"path": path, "generated": True, "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------
# variants: each returns a dict with at least wall_s (until durable) and bytes


def v_read(ctx, out):
    t0 = time.perf_counter()
    subprocess.run(["cat", ctx["input"]], stdout=subprocess.DEVNULL, check=True)
    return {"wall_s": time.perf_counter() - t0, "sync_s": 0.0, "bytes": ctx["file_bytes"]}


def v_write(ctx, out):
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={out}", "bs=16M", f"count={ctx['data_bytes']}",
                    "iflag=count_bytes", "conv=fdatasync", "status=none"], check=True)
    t1 = time.perf_counter()
    sync_s = bl.sync()
    return {"wall_s": t1 - t0 + sync_s, "sync_s": sync_s, "bytes": ctx["data_bytes"]}


def v_cp(ctx, out):
    t0 = time.perf_counter()
    subprocess.run(["cp", ctx["input"], out], check=True)
    t1 = time.perf_counter()
    sync_s = bl.sync()
    return {"wall_s": t1 - t0 + sync_s, "sync_s": sync_s, "bytes": 2 * ctx["file_bytes"]}


def _app(ctx, out, depth):
    wd = Path(ctx["workdir"])
    cfg = wd / f"job_depth{depth}.yaml"
    bl.write_config(cfg, app_config(ctx, out, depth))
    r = bl.run_app(ctx["app"], cfg, wd / f"report_depth{depth}.json", extra=["--quiet"], then_sync=True)
    rep = r.pop("report")
    return {"wall_s": r["wall_s"], "sync_s": r["sync_s"], "app_s": r["app_s"],
            "bytes": rep["input_bytes"] + rep["output_bytes"], "report": rep, "cmd": r["cmd"]}


def v_app(ctx, out):
    return _app(ctx, out, ctx["depth"])


def v_app_serial(ctx, out):
    return _app(ctx, out, 1)


def v_h5py(ctx, out):
    import h5py
    import numpy as np
    per = ctx["per_slab"]
    t0 = time.perf_counter()
    with h5py.File(ctx["input"], "r") as f:
        src = f["discount"]
        m = f["multBy"][...]
        D, M, O = src.shape
        buf = np.empty((min(per, D), M, O))
        with h5py.File(out, "w") as g:
            dst = g.create_dataset("cv", shape=(D, M, O), dtype="f8")
            for a in range(0, D, per):
                b = min(D, a + per)
                view = buf[: b - a]
                src.read_direct(view, np.s_[a:b])
                np.multiply(view, m[None], out=view)
                dst.write_direct(view, dest_sel=np.s_[a:b])
    t1 = time.perf_counter()
    sync_s = bl.sync()
    return {"wall_s": t1 - t0 + sync_s, "sync_s": sync_s, "bytes": ctx["file_bytes"] + ctx["data_bytes"]}


def v_dask(ctx, out):
    import dask.array as da
    import h5py
    per = ctx["per_slab"]
    t0 = time.perf_counter()
    with h5py.File(ctx["input"], "r") as f:
        src = f["discount"]
        x = da.from_array(src, chunks=(per,) + tuple(src.shape[1:]))
        m = f["multBy"][...]
        da.to_hdf5(out, "/cv", x * m[None])
    t1 = time.perf_counter()
    sync_s = bl.sync()
    return {"wall_s": t1 - t0 + sync_s, "sync_s": sync_s, "bytes": ctx["file_bytes"] + ctx["data_bytes"]}


RUNNERS = {"read": v_read, "write": v_write, "cp": v_cp, "app": v_app, "app_serial": v_app_serial,
           "h5py": v_h5py, "dask": v_dask}
CHECKED = {"app", "app_serial", "h5py", "dask"}


def app_config(ctx, out, depth):
    return {
        "input": {"file": ctx["input"]},
        "output": {"file": out, "overwrite": True},
        "compute": {"space": ctx["space"]},
        "memory": dict({"pipeline_depth": depth}, **({} if ctx["max_slab"] is None else {
            "max_slab": bl.app_size(ctx["max_slab"]), "host_budget": bl.app_size(ctx["host_budget"])})),
    }


def check_output(ctx, out) -> str:
    """Compares a few dates of cv with multBy * discount recomputed by NumPy."""
    import h5py
    import numpy as np
    D = ctx["shape"][0]
    with h5py.File(ctx["input"], "r") as f, h5py.File(out, "r") as g:
        m = f["multBy"][...]
        for d in sorted({0, D // 2, D - 1}):
            if not np.array_equal(g["cv"][d], m * f["discount"][d]):
                return f"MISMATCH at date {d}"
    return "ok"


# ----------------------------------------------------------------------------


def main(argv=None):
    args = parse_args(argv)
    bl.need_python_modules("h5py", "numpy")
    if args.with_dask:
        bl.need_python_modules("dask")
    app = bl.find_app(args.app)
    info = bl.machine_info(app)
    os.makedirs(args.workdir, exist_ok=True)
    workdir = os.path.abspath(args.workdir)

    D, O = args.dates, args.nums
    M = args.ids or max(1, args.size // (D * O * 8))
    path = os.path.abspath(args.input or os.path.join(workdir, f"in_{D}x{M}x{O}.h5"))
    gen = ensure_input(app, path, D, M, O)
    shape = input_shape(path)[0]
    D, M, O = shape
    data_bytes = D * M * O * 8
    file_bytes = os.path.getsize(path)
    free = bl.free_bytes(workdir)
    if free < data_bytes * 1.05:
        sys.exit(f"not enough disk for one output of {bl.fmt_bytes(data_bytes)}: {bl.df_line(workdir)}")

    ctx = {"app": app, "workdir": workdir, "input": path, "shape": shape, "data_bytes": data_bytes,
           "file_bytes": file_bytes, "max_slab": args.max_slab, "depth": args.depth,
           "space": args.space}
    # A budget that never binds, so both app runs get the slab that max_slab gives.
    if args.max_slab is not None:
        ctx["host_budget"] = max(1 << 30, (max(args.depth, 1) + 1) * args.max_slab + M * O * 8 + (64 << 20))
    bl.write_config(os.path.join(workdir, "job_plan.yaml"), app_config(ctx, os.path.join(workdir, "out.h5"), 1))
    plan = bl.app_plan(app, os.path.join(workdir, "job_plan.yaml"))
    ctx["per_slab"] = plan["per_slab"]

    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    unknown = skip - set(VARIANTS)
    if unknown:
        sys.exit(f"--skip: unknown variant(s) {', '.join(sorted(unknown))}; choose from {', '.join(VARIANTS)}")
    variants = [v for v in VARIANTS if v not in skip and (v != "dask" or args.with_dask)]

    modes = ["cold", "warm"] if args.cache == "both" else [args.cache]
    ok, drop_msg = bl.drop_caches()
    if not ok:
        modes = ["warm"]
    bl.log(f"[streaming] input {path} [{D} x {M} x {O}], {bl.fmt_bytes(file_bytes)}; "
           f"{plan['per_slab']} dates per slab, {plan['slabs']} slabs; modes {modes}; variants {variants}")

    outs = {v: os.path.join(workdir, f"out_{v}.h5") for v in variants}
    runs = []
    for mode in modes:
        for rep in range(args.repeat):
            # Rotate the order every repeat: this VM's disk alternates fast and
            # throttled runs, so a fixed order hands the same variant the same
            # luck every time (seen 2026-11-29: every second run 5x slower).
            for v in variants[rep % len(variants):] + variants[:rep % len(variants)]:
                bl.remove(*outs.values())
                if args.settle > 0:
                    bl.sync()
                    time.sleep(args.settle)
                if mode == "cold":
                    bl.drop_caches()
                else:
                    bl.sync()
                    bl.warm_file(path)
                try:
                    r = RUNNERS[v](ctx, outs[v])
                    if v in CHECKED and not args.no_check:
                        r["check"] = check_output(ctx, outs[v])
                except Exception as e:  # a failed variant is a figure too; keep going
                    r = {"wall_s": None, "error": str(e)}
                    bl.log(f"[streaming] {v} failed: {e}")
                r.update(variant=v, mode=mode, repeat=rep)
                runs.append(r)
                bl.log(f"[streaming] {mode} #{rep + 1} {v:10s} "
                       + (f"{r['wall_s']:.3f} s" if r.get("wall_s") else "FAILED"))
                bl.remove(outs[v])
    bl.remove(*outs.values())
    if args.delete_input:
        bl.remove(path)

    # ---------------------------------------------------------------- summary
    summary = {}
    for mode in modes:
        for v in variants:
            rs = [r for r in runs if r["mode"] == mode and r["variant"] == v and r.get("wall_s")]
            if not rs:
                continue
            walls = [r["wall_s"] for r in rs]
            med = bl.median(walls)
            rep_run = min(rs, key=lambda r: abs(r["wall_s"] - med))
            summary[(mode, v)] = {
                "median_s": med, "min_s": min(walls), "max_s": max(walls), "n": len(rs),
                "sync_s": bl.median([r.get("sync_s") for r in rs]), "bytes": rep_run["bytes"],
                "gb_per_s": bl.gbps(rep_run["bytes"], med),
                "check": ",".join(sorted({r.get("check", "") for r in rs} - {""})) or None,
                "report": rep_run.get("report")}

    print("\n" + "=" * 78)
    print(f"streaming benchmark: discount [{D} x {M} x {O}] float64, input file {bl.fmt_bytes(file_bytes)}, "
          f"{plan['per_slab']} dates per slab ({bl.fmt_bytes(plan['per_slab'] * M * O * 8)}, "
          f"max_slab {'auto' if args.max_slab is None else f'{args.max_slab >> 20} MiB'}), {plan['slabs']} slabs")
    print(f"input:   {path}" + (f" (generated in {gen['seconds']:.1f} s)" if gen["generated"] else " (reused)"))
    print(f"cache:   {drop_msg}")
    print(f"median of {args.repeat}; every wall time counts until the output is durable (sync included); "
          "GB/s = bytes read + written over wall")
    bl.print_machine(info)

    for mode in modes:
        rows = []
        for v in variants:
            s = summary.get((mode, v))
            if s:
                rows.append([LABELS[v], s["median_s"], s["sync_s"], s["min_s"], s["max_s"], bl.fmt_bytes(s["bytes"]),
                             s["gb_per_s"], s["check"]])
            else:
                rows.append([LABELS[v], None, None, None, None, None, None, "FAILED"])
        bl.print_table(["variant", "wall s", "sync s", "min s", "max s", "bytes", "GB/s", "check"], rows,
                       title=f"[{mode} cache] wall time until durable")

        for v in ("app", "app_serial"):
            s = summary.get((mode, v))
            if not s or not s["report"]:
                continue
            rep = s["report"]
            limits = {"read": summary.get((mode, "read")), "write": summary.get((mode, "write"))}
            rows = []
            for st in rep["stages"]:
                lim = limits.get(st["name"])
                lim_gbps = lim["gb_per_s"] if lim else float("nan")
                rows.append([st["name"], bl.fmt_bytes(st["bytes"]), st["seconds"],
                             100 * st["seconds"] / rep["wall_seconds"], st["gb_per_s"], lim_gbps,
                             bl.ratio(st["gb_per_s"], lim_gbps)])
            rows.append(["app wall (report)", bl.fmt_bytes(rep["input_bytes"] + rep["output_bytes"]),
                         rep["wall_seconds"], 100.0, rep["effective_gb_per_s"], None, None])
            bl.print_table(["stage", "bytes", "busy s", "% wall", "GB/s", "limit GB/s", "of limit"], rows,
                           title=f"[{mode} cache] {LABELS[v]}: stages of the median run "
                                 f"(limit: read-only / write-only rows above)")

    ratios = {}
    targets = [("app", "cp", "app / cp", "<= 1.25 (stretch 1.10)"),
               ("app", "h5py", "app / h5py", "< 1"),
               ("app", "app_serial", "pipelined / serial", "< 1"),
               ("app_serial", "cp", "serial / cp", ""),
               ("h5py", "cp", "h5py / cp", ""),
               ("app", "dask", "app / dask", "< 1")]
    rows = []
    for a, b, name, target in targets:
        if a not in variants or b not in variants:
            continue
        row = [name]
        for mode in modes:
            sa, sb = summary.get((mode, a)), summary.get((mode, b))
            for stat in ("median_s", "min_s"):
                val = bl.ratio(sa[stat], sb[stat]) if sa and sb else float("nan")
                ratios[f"{mode} {stat[:-2]}: {name}"] = val
                row.append(val)
        rows.append(row + [target])
    bl.print_table(["ratio of wall times"] + [f"{m} {s}" for m in modes for s in ("median", "min")] + ["target"],
                   rows, title="ratios (measured in this run; min = the least disturbed run of each variant)")

    result = {
        "machine": info, "args": {k: v for k, v in vars(args).items()}, "input": {**gen, "shape": shape,
                                                                               "file_bytes": file_bytes},
        "plan": plan, "cache": drop_msg, "modes": modes, "variants": variants, "ratios": ratios,
        "summary": [{"mode": m, "variant": v, **{k: x for k, x in s.items() if k != "report"}}
                    for (m, v), s in summary.items()],
        "runs": runs,
    }
    json_path = args.json or os.path.join(workdir, "streaming.json")
    bl.write_json(json_path, result)
    print(f"\nraw results: {json_path}")


if __name__ == "__main__":
    main()
