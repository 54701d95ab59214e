#!/usr/bin/python3
"""A first run with the app's defaults against an h5py + NumPy loop and
xarray + dask, each until durable, and on a transposed file ([id, date, num])
the default chunk_axis against each explicit one. Medians of interleaved
repeats; outputs checked against NumPy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

BLOCK = 64 << 20  # bytes of the first axis written or multiplied at once


def make_input(path: Path, shape: tuple, ids: int, seed: int) -> None:
    """discount of `shape` ([date, id, num] or [id, date, num]) and multBy, uniform(0.5, 1.5); a file
    already there with these shapes is kept."""
    import h5py
    import numpy as np
    try:
        with h5py.File(path, "r") as f:
            if f["discount"].shape == shape and f["multBy"].shape == (ids, shape[2]):
                return
    except (OSError, KeyError):
        pass
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    with h5py.File(tmp, "w") as f:
        f["multBy"] = rng.uniform(0.5, 1.5, (ids, shape[2]))
        d = f.create_dataset("discount", shape=shape, dtype="f8")
        step = max(1, BLOCK // (shape[1] * shape[2] * 8))
        for a in range(0, shape[0], step):
            d[a:a + step] = rng.uniform(0.5, 1.5, (min(shape[0], a + step) - a,) + shape[1:])
    os.replace(tmp, path)


def until_durable(fn) -> dict:
    run_s, sync_s = bl.seconds(fn), bl.sync()
    return {"wall_s": run_s + sync_s, "sync_s": sync_s}


def v_app(ctx, out, memory=None):
    cfg = Path(ctx["workdir"]) / "job.yaml"
    config = {"input": {"file": ctx["input"]}, "output": {"file": str(out), "overwrite": True}}
    if ctx["transposed"]:
        config["input"]["axes"] = ["id", "date", "num"]
    if memory:
        config["memory"] = memory
    bl.write_config(cfg, config)
    r = bl.run_app(ctx["app"], cfg, Path(ctx["workdir"]) / "report.json", extra=["--quiet"], then_sync=True)
    rep = r["report"]
    plan = rep.get("plan", "")
    return {"wall_s": r["wall_s"], "sync_s": r["sync_s"], "stages": {s["name"]: s["seconds"] for s in rep["stages"]},
            "plan": plan.get("text", "") if isinstance(plan, dict) else plan,
            "staging_s": rep.get("staging_seconds", 0.0)}


def v_h5py(ctx, out):
    import h5py

    def body():
        with h5py.File(ctx["input"], "r") as f, h5py.File(out, "w") as g:
            src, m = f["discount"], f["multBy"][...]
            dst = g.create_dataset("cv", shape=src.shape, dtype="f8")
            step = max(1, BLOCK // (src.shape[1] * src.shape[2] * 8))
            for a in range(0, src.shape[0], step):  # blocks of dates, or of ids when transposed
                dst[a:a + step] = src[a:a + step] * (m[a:a + step, None, :] if ctx["transposed"] else m[None])
    return until_durable(body)


def v_xarray(ctx, out):
    import xarray as xr

    def body():
        # h5py's files have no dimension names: netCDF-C names them by size,
        # so discount's [I, N] dims and multBy's match by name.
        with xr.open_dataset(ctx["input"], engine="netcdf4", chunks="auto") as ds:
            (ds["discount"] * ds["multBy"]).rename("cv").to_netcdf(out, engine="netcdf4")
    return until_durable(body)


def check(ctx, out) -> str:
    import h5py
    import numpy as np
    with h5py.File(ctx["input"], "r") as f, h5py.File(out, "r") as g:
        src, m, cv = f["discount"], f["multBy"][...], g["cv"]
        for a in sorted({0, src.shape[0] // 2, src.shape[0] - 1}):
            want = src[a] * (m[a][None, :] if ctx["transposed"] else m)
            if cv[a].shape != want.shape or not np.array_equal(cv[a], want):
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
            r["check"] = check(ctx, out)
            results[v].append(r)
            bl.log(f"[defaults] {ctx['layout']} #{rep + 1} {v:9s} {r['wall_s']:.3f} s {r['check']}")
            bl.remove(out)
    return results


def main(argv=None):
    p = bl.parser(__doc__, repeat=3)
    p.add_argument("--dates", type=int, default=60)
    p.add_argument("--ids", type=int, default=200_000)
    p.add_argument("--workdir", default="/tmp/discount_defaults_bench")
    args = p.parse_args(argv)
    bl.need_python_modules("h5py", "numpy", "xarray", "dask", "netCDF4")
    app = bl.find_app(args.app)
    info = bl.machine_info(app)
    wd = Path(args.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    D, I, N = args.dates, args.ids, 5
    out = {}
    for layout in ("standard", "transposed"):
        transposed = layout == "transposed"
        path = wd / f"in_{layout}_{D}x{I}x{N}.h5"
        make_input(path, (I, D, N) if transposed else (D, I, N), I, seed=22 if transposed else 21)
        ctx = {"app": app, "workdir": str(wd), "input": str(path), "transposed": transposed, "layout": layout}
        variants = {"app": v_app, "h5py": v_h5py}
        if transposed:
            variants["app_date"] = lambda c, o: v_app(c, o, {"chunk_axis": "date"})
            variants["app_id"] = lambda c, o: v_app(c, o, {"chunk_axis": "id"})
        else:
            variants["xarray"] = v_xarray
        out[layout] = bench(ctx, variants, args.repeat)

    print("\n" + "=" * 78)
    print(f"defaults benchmark: discount {D} dates x {I} ids x {N} nums float64 "
          f"({bl.fmt_bytes(D * I * N * 8)}), page cache warm, every time until durable (sync counted), "
          f"median of {args.repeat}")
    bl.print_machine(info)
    for layout, results in out.items():
        med = {v: bl.median([r["wall_s"] for r in rs]) for v, rs in results.items()}
        rows = [[v, med[v], min(r["wall_s"] for r in results[v]), max(r["wall_s"] for r in results[v]),
                 ",".join(sorted({r["check"] for r in results[v]}))] for v in results]
        bl.print_table(["variant", "median s", "min s", "max s", "check"], rows, title=f"[{layout}]")
        app_run = results["app"][0]
        print(f"  app plan: {app_run['plan'].splitlines()[1] if app_run.get('plan') else '?'}")
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
