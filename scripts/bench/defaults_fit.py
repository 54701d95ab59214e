#!/usr/bin/python3
"""A first run with the app's defaults against an h5py + NumPy loop and
xarray + dask, each until durable, and on a transposed file ([id, date, num])
the default chunk_axis against each explicit one. Medians of interleaved
repeats; outputs checked against NumPy.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--dates", type=int, default=60)
    p.add_argument("--ids", type=int, default=200_000)
    p.add_argument("--nums", type=int, default=5)
    p.add_argument("--workdir", default="/tmp/discount_defaults_bench")
    p.add_argument("--skip-xarray", action="store_true", help="leave out the xarray + dask variant")
    p.add_argument("--skip-transposed", action="store_true", help="only the standard layout")
    bl.add_common_args(p, repeat=3)
    return p.parse_args(argv)


def make_input(path: Path, dates: int, ids: int, nums: int, transposed: bool, seed: int) -> None:
    import h5py
    import numpy as np
    shape = (ids, dates, nums) if transposed else (dates, ids, nums)
    if path.exists():
        try:
            with h5py.File(path, "r") as f:
                if f["discount"].shape == shape and f["multBy"].shape == (ids, nums):
                    return
        except (OSError, KeyError):
            pass
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    with h5py.File(tmp, "w") as f:
        f["multBy"] = rng.uniform(0.5, 1.5, (ids, nums))
        d = f.create_dataset("discount", shape=shape, dtype="f8")
        step = max(1, (64 << 20) // (shape[1] * shape[2] * 8))
        for a in range(0, shape[0], step):
            b = min(shape[0], a + step)
            d[a:b] = rng.uniform(0.5, 1.5, (b - a,) + shape[1:])
    os.replace(tmp, path)


def timed(fn) -> dict:
    """Seconds of fn() until durable: its own and the following sync's."""
    run_s, sync_s = bl.seconds(fn), bl.sync()
    return {"wall_s": run_s + sync_s, "sync_s": sync_s}


def v_app(ctx, out, memory=None):
    wd = Path(ctx["workdir"])
    cfg = wd / "job.yaml"
    config = {"input": {"file": ctx["input"]}, "output": {"file": str(out), "overwrite": True}}
    if ctx["transposed"]:
        config["input"]["axes"] = ["id", "date", "num"]
    if memory:
        config["memory"] = memory
    bl.write_config(cfg, config)
    r = bl.run_app(ctx["app"], cfg, wd / "report.json", extra=["--quiet"], then_sync=True)
    rep = r["report"]
    plan = rep.get("plan", "")
    plan = plan.get("text", "") if isinstance(plan, dict) else plan  # schema_version 2: an object
    return {"wall_s": r["wall_s"], "sync_s": r["sync_s"], "plan": plan,
            "stages": {s["name"]: s["seconds"] for s in rep.get("stages", [])},
            "staging_s": rep.get("staging_seconds", 0.0)}


def v_h5py(ctx, out):
    import h5py

    def body():
        with h5py.File(ctx["input"], "r") as f, h5py.File(out, "w") as g:
            src, m = f["discount"], f["multBy"][...]
            dst = g.create_dataset("cv", shape=src.shape, dtype="f8")
            if ctx["transposed"]:  # [id, date, num]: blocks of ids
                step = max(1, (64 << 20) // (src.shape[1] * src.shape[2] * 8))
                for a in range(0, src.shape[0], step):
                    b = min(src.shape[0], a + step)
                    dst[a:b] = src[a:b] * m[a:b, None, :]
            else:
                step = max(1, (64 << 20) // (src.shape[1] * src.shape[2] * 8))
                for a in range(0, src.shape[0], step):
                    b = min(src.shape[0], a + step)
                    dst[a:b] = src[a:b] * m[None]
    return timed(body)


def v_xarray(ctx, out):
    import xarray as xr

    def body():
        # h5py's files have no dimension names: netCDF-C names them by size,
        # so discount's [I, N] dims and multBy's match by name.
        with xr.open_dataset(ctx["input"], engine="netcdf4", chunks="auto") as ds:
            cv = (ds["discount"] * ds["multBy"]).rename("cv")
            cv.to_netcdf(out, engine="netcdf4")
    return timed(body)


def check(ctx, out, name) -> str:
    import h5py
    import numpy as np
    with h5py.File(ctx["input"], "r") as f, h5py.File(out, "r") as g:
        src, m = f["discount"], f["multBy"][...]
        cv = g[name]
        n = src.shape[0]
        for a in sorted({0, n // 2, n - 1}):
            want = src[a] * (m[a][None, :] if ctx["transposed"] else m)
            got = cv[a]
            if got.shape != want.shape or not np.array_equal(got, want):
                return f"MISMATCH at {a}"
    return "ok"


def bench(ctx, variants, repeat) -> dict:
    results = {v: [] for v in variants}
    out = Path(ctx["workdir"]) / "out.h5"
    names = list(variants)
    for rep in range(repeat):
        for v in names[rep % len(names):] + names[:rep % len(names)]:
            bl.remove(out)
            bl.sync()
            bl.warm_file(ctx["input"])
            r = variants[v](ctx, out)
            r["check"] = check(ctx, out, "cv" if v != "xarray" else "cv")
            results[v].append(r)
            bl.log(f"[defaults] {ctx['layout']} #{rep + 1} {v:9s} {r['wall_s']:.3f} s {r['check']}")
            bl.remove(out)
    return results


def summarise(results) -> dict:
    return {v: bl.median([r["wall_s"] for r in rs]) for v, rs in results.items()}


def main(argv=None):
    args = parse_args(argv)
    bl.need_python_modules("h5py", "numpy")
    if not args.skip_xarray:
        bl.need_python_modules("xarray", "dask", "netCDF4")
    app = bl.find_app(args.app)
    info = bl.machine_info(app)
    wd = Path(args.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    D, I, N = args.dates, args.ids, args.nums
    out = {}
    layouts = ["standard"] + ([] if args.skip_transposed else ["transposed"])
    for layout in layouts:
        transposed = layout == "transposed"
        path = wd / f"in_{layout}_{D}x{I}x{N}.h5"
        make_input(path, D, I, N, transposed, seed=22 if transposed else 21)
        ctx = {"app": app, "workdir": str(wd), "input": str(path), "transposed": transposed, "layout": layout}
        variants = {"app": v_app, "h5py": v_h5py}
        if not args.skip_xarray and not transposed:
            variants["xarray"] = v_xarray
        if transposed:
            variants["app_date"] = lambda c, o: v_app(c, o, {"chunk_axis": "date"})
            variants["app_id"] = lambda c, o: v_app(c, o, {"chunk_axis": "id"})
        out[layout] = bench(ctx, variants, args.repeat)

    print("\n" + "=" * 78)
    print(f"defaults benchmark: discount {D} dates x {I} ids x {N} nums float64 "
          f"({bl.fmt_bytes(D * I * N * 8)}), page cache warm, every time until durable (sync counted), "
          f"median of {args.repeat}")
    bl.print_machine(info)
    for layout, results in out.items():
        med = summarise(results)
        rows = [[v, med[v], min(r["wall_s"] for r in results[v]), max(r["wall_s"] for r in results[v]),
                 ",".join(sorted({r["check"] for r in results[v]}))] for v in results]
        bl.print_table(["variant", "median s", "min s", "max s", "check"], rows, title=f"[{layout}]")
        app_run = results["app"][0]
        print(f"  app plan: {app_run.get('plan', '').splitlines()[1] if app_run.get('plan') else '?'}")
        print("  app stages (first run): " + ", ".join(f"{k} {v:.2f} s" for k, v in app_run["stages"].items())
              + f", staging {app_run['staging_s']:.2f} s")
        for peer in ("h5py", "xarray"):
            if peer in med:
                print(f"  {peer} / app = {bl.ratio(med[peer], med['app']):.2f}x  (target >= 2)")
        if layout == "transposed":
            best = min(med["app_date"], med["app_id"])
            print(f"  app defaults / best chunk_axis = {bl.ratio(med['app'], best):.2f}  (target <= 1.2; "
                  f"date {med['app_date']:.3f} s, id {med['app_id']:.3f} s)")
    if args.json:
        bl.write_json(args.json, {"machine": info, "results": out})


if __name__ == "__main__":
    main()
