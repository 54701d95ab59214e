#!/usr/bin/env python3
"""Compressed inputs and outputs: the app against h5py, h5repack and xarray, in one call.

On the same realistic data: the app on a contiguous and a gzip 4 + shuffle
input (chunks of 1 x 50000 x 5), an h5py script and h5repack + app on the gzip
file, the decode stage with all threads and one, and compressed output
(deflate, zstd) against h5py and xarray + dask writing the same codec; every
output checked against NumPy.

  /usr/bin/python3 scripts/bench/compressed.py --dir /tmp/bench_z --dates 40 --ids 200000
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

COMPRESSION_LINE = re.compile(
    r"compression: (?P<what>.*?), \d+ part\(s\), (?P<raw>[\d.]+) GB -> (?P<stored>[\d.]+) GB \(ratio [\d.]+\) in "
    r"(?P<s>[\d.]+) s on (?P<threads>\d+) threads: (?P<rate>[\d.]+) GB/s, (?P<per>[\d.]+) MB/s per thread"
    r"(?:; HDF5's chunk writes busy (?P<writer>[\d.]+) s)?")
PLAN_DECODE = re.compile(
    r"^decompression  .*: (?P<per_thread_mb>\d+) MB/s per thread on a sample of \d+ chunks, limit "
    r"(?P<limit_gb>[\d.]+) GB/s on (?P<threads>\d+) threads; (?P<together_gb>[\d.]+) GB/s with all", re.M)
PLAN_ENCODE = re.compile(
    r"^compression  .*; (?P<per_thread_mb>\d+) MB/s on one thread, .*; (?P<together_gb>[\d.]+) GB/s with all "
    r"(?P<threads>\d+) encoding at once", re.M)
LEVELS = {"deflate": 4, "zstd": 3, "blosc": 5}


def realistic(dates, ids, seed=1):
    """multBy in cents and discount factors exp(-rate t) rounded to 8 decimals."""
    import numpy as np
    rng = np.random.default_rng(seed)
    rate = np.round(rng.uniform(0.005, 0.08, (ids, 5)), 4)
    t = (np.arange(1, dates + 1, dtype=np.float64) / 12.0)[:, None, None]
    disc = np.round(np.exp(-rate[None] * t), 8)
    return np.round(rng.uniform(1.0, 1000.0, (ids, 5)), 2), disc


def job(folder, name, src, out, extra_output=None, mode="file", memory=None):
    cfg = {"input": {"file": src, "multiplier": "multBy", "discount": "discount"},
           "output": {"file": out, "overwrite": True, **(extra_output or {})} if mode == "file" else {"mode": mode}}
    if memory:
        cfg["memory"] = memory
    path = os.path.join(folder, name + ".yaml")
    bl.write_config(path, cfg)
    return path


def check_dates(out, mult, disc, dates=(0, -1)):
    import h5py
    import numpy as np
    try:
        import hdf5plugin  # noqa: F401  (LZ4, Blosc, maybe zstd)
    except ImportError:
        pass
    with h5py.File(out, "r") as f:
        for d in dates:
            if not np.array_equal(f["cv"][d], mult * disc[d]):
                raise SystemExit(f"{out}: date {d} differs from NumPy")


def h5py_filter(codec):
    """h5py's create_dataset arguments for a codec of the app's (hdf5plugin beyond deflate)."""
    if codec == "deflate":
        return {"compression": "gzip", "compression_opts": 4}
    import hdf5plugin
    return {"zstd": lambda: hdf5plugin.Zstd(clevel=3), "lz4": lambda: hdf5plugin.LZ4(),
            "blosc": lambda: hdf5plugin.Blosc(clevel=5)}[codec]()


def main(argv=None) -> int:
    p = bl.parser(__doc__, repeat=2, repeat_help="runs of each app job; the fastest counts (the first can meet "
                                                 "the page cache still writing the inputs out)")
    p.add_argument("--dir", default="/tmp/discount_compressed", help="folder for the files")
    p.add_argument("--dates", type=int, default=40)
    p.add_argument("--ids", type=int, default=200000)
    p.add_argument("--codecs", default="deflate,zstd", help="output codecs to time")
    p.add_argument("--skip-xarray", action="store_true")
    args = p.parse_args(argv)
    bl.need_python_modules("h5py", "numpy")
    import h5py
    app = bl.find_app(args.app)
    info = bl.machine_info(app)
    folder = args.dir
    os.makedirs(folder, exist_ok=True)
    cores = os.cpu_count() or 1

    def run(cfg, env=None):
        r = min((bl.run_app(app, cfg, os.path.join(folder, "report.json"), env=env)
                 for _ in range(max(1, args.repeat))), key=lambda one: one["app_s"])
        m = COMPRESSION_LINE.search(r["stderr"])
        r["compression"] = {k: v if k == "what" else float(v) for k, v in m.groupdict().items()
                            if v is not None} if m else None
        return r

    def read_stage(r):
        """The report's read stage: bytes as stored, busy seconds, wall seconds."""
        st = bl.stage(r["report"], "read") or {}
        return {"bytes": st.get("bytes"), "busy_s": st.get("seconds"), "wall_s": r["report"].get("wall_seconds")}

    bl.log("generating the inputs ...")
    mult, disc = realistic(args.dates, args.ids)
    raw = disc.nbytes
    contig, gz, out = (os.path.join(folder, f) for f in ("contig.h5", "gzip.h5", "cv.h5"))
    chunks = (1, min(50000, args.ids), 5)
    with h5py.File(contig, "w") as f:
        f["multBy"], f["discount"] = mult, disc
    with h5py.File(gz, "w") as f:
        f["multBy"] = mult
        f.create_dataset("discount", data=disc, chunks=chunks, compression="gzip", compression_opts=4, shuffle=True)
    gz_bytes = os.path.getsize(gz)
    bl.log(f"inputs: {bl.fmt_bytes(raw)} raw, gzip 4 + shuffle {bl.fmt_bytes(gz_bytes)} in chunks {chunks}")
    res = {"machine": info, "dates": args.dates, "ids": args.ids, "raw_bytes": raw, "gzip_bytes": gz_bytes}

    # ---------------------------------------------------------------- reads
    bl.log("1-2: the app on the contiguous and the gzip input ...")
    r = run(job(folder, "contig", contig, out))
    res["app_contig_s"], res["contig_report"] = r["app_s"], r["report"]
    check_dates(out, mult, disc)
    r = run(job(folder, "gzip", gz, out))
    res["app_gzip_s"], res["gzip_report"], res["app_gzip_read_stage"] = r["app_s"], r["report"], read_stage(r)
    res["gzip_read_path"] = {k: d.get("read_path") for k, d in r["report"]["input"]["datasets"].items()}
    plan = subprocess.run([app, "plan", "--no-measure", os.path.join(folder, "gzip.yaml")], capture_output=True,
                          text=True).stdout
    res["gzip_staging"] = "none" if "memory.staging: none" in plan else "ring"
    check_dates(out, mult, disc)
    res["app_gzip_ring_s"] = run(job(folder, "gzip_ring", gz, out, memory={"staging": "ring"}))["app_s"]
    check_dates(out, mult, disc)

    bl.log("3: h5py on the gzip input ...")
    h5out = os.path.join(folder, "h5py_cv.h5")

    def h5py_job():
        with h5py.File(gz, "r") as f, h5py.File(h5out, "w") as g:
            m, d = f["multBy"][...], f["discount"]
            if bl.mem_available() > 4 * raw:
                g["cv"] = m[None] * d[...]
            else:
                cv = g.create_dataset("cv", shape=d.shape, dtype="f8")
                step = max(1, int(2e9 // (m.nbytes or 1)))
                for b in range(0, d.shape[0], step):
                    cv[b:b + step] = m[None] * d[b:b + step]
    res["h5py_gzip_s"] = bl.seconds(h5py_job)
    check_dates(h5out, mult, disc)

    bl.log("4: h5repack to contiguous, then the app ...")
    repacked = os.path.join(folder, "repacked.h5")
    if shutil.which("h5repack"):
        res["h5repack_s"] = bl.seconds(
            lambda: subprocess.run(["h5repack", "-f", "NONE", "-l", "CONTI", gz, repacked], check=True))
        res["h5repack_app_s"] = res["h5repack_s"] + run(job(folder, "repacked", repacked, out))["app_s"]
    bl.log("5: the decode stage alone, all threads and one ...")
    cs = job(folder, "decode", gz, out, mode="checksum")
    r_all, r_one = run(cs), run(cs, env={"DISCOUNT_IO_THREADS": "1"})
    res["decode_all_s"], res["decode_one_s"] = r_all["app_s"], r_one["app_s"]
    res["decode_all_stage"], res["decode_one_stage"] = read_stage(r_all), read_stage(r_one)
    res["decode_all_report"] = r_all["report"].get("decompression")
    # plan's sample: one thread's rate, and every decoding thread at once on its own copy of the chunks
    m = PLAN_DECODE.search(subprocess.run([app, "plan", cs], capture_output=True, text=True).stdout)
    res["plan_decode"] = {k: float(v) for k, v in m.groupdict().items()} if m else None

    # ---------------------------------------------------------------- writes
    writes = {}
    cv = mult[None] * disc
    for codec in [c for c in args.codecs.split(",") if c]:
        spec = {"codec": codec, "shuffle": "byte", **({"level": LEVELS[codec]} if codec in LEVELS else {})}
        bl.log(f"6: the app writing {codec} ...")
        zout = os.path.join(folder, f"cv_{codec}.h5")
        try:
            r_all = run(job(folder, f"z_{codec}", contig, zout, {"compression": spec}))
            r_one = run(job(folder, f"z1_{codec}", contig, zout, {"compression": spec}),
                        env={"DISCOUNT_IO_THREADS": "1"})
        except RuntimeError as e:
            print(f"{codec}: the app cannot write it here: {str(e).splitlines()[-1]}")
            continue
        w = writes[codec] = {"app_s": r_all["app_s"], "app": r_all["compression"], "one_core": r_one["compression"],
                             "report": r_all["report"].get("compression") or {}}
        m = PLAN_ENCODE.search(subprocess.run([app, "plan", os.path.join(folder, f"z_{codec}.yaml")],
                                              capture_output=True, text=True).stdout)
        w["plan"] = {k: float(v) for k, v in m.groupdict().items()} if m else None
        try:
            check_dates(zout, mult, disc)
            w["exact"] = True
        except (OSError, SystemExit) as e:
            w["exact"] = f"not read by h5py here ({str(e)[:80]})"
        # The app's own chunk shape, for h5py's write.
        parts = [p for p in os.listdir(folder) if p.startswith(f"cv_{codec}.h5.parts-")]
        with h5py.File(os.path.join(folder, parts[0], "part-00000.h5"), "r") as f:
            w["chunks"] = f["cv"].chunks
        bl.log(f"7: h5py writing {codec} in chunks {w['chunks']} ...")
        hz = os.path.join(folder, f"h5py_{codec}.h5")
        try:
            kw = dict(h5py_filter(codec), chunks=w["chunks"], shuffle=True)

            def h5py_write():
                with h5py.File(hz, "w") as g:
                    g.create_dataset("cv", data=cv, **kw)
            t = bl.seconds(h5py_write)
            with h5py.File(hz, "r") as g:
                d = g["cv"]
                stored = sum(d.id.get_chunk_info(i).size for i in range(d.id.get_num_chunks()))
            w["h5py"] = {"s": t, "stored_bytes": stored, "gbps": bl.gbps(cv.nbytes, t)}
        except Exception as e:  # noqa: BLE001
            w["h5py"] = f"skipped: {e.__class__.__name__}: {str(e)[:100]}"
    res["writes"] = writes

    if not args.skip_xarray:
        try:
            import xarray as xr
            import dask  # noqa: F401
            bl.log("8: xarray + dask to_netcdf, zlib 4 ...")

            def xr_job():
                ds = xr.open_dataset(contig, engine="h5netcdf", phony_dims="sort",
                                     chunks={"phony_dim_0": max(1, args.dates // 4)})
                c = (ds["discount"] * ds["multBy"].data[None]).rename("cv")
                c.to_dataset().to_netcdf(os.path.join(folder, "xr.nc"), engine="h5netcdf",
                                         encoding={"cv": {"zlib": True, "complevel": 4, "shuffle": True}})
            res["xarray_zlib_s"] = bl.seconds(xr_job)
        except Exception as e:  # noqa: BLE001
            res["xarray_zlib_s"] = None
            print(f"xarray + dask: skipped ({e.__class__.__name__}: {str(e)[:120]})")

    # ---------------------------------------------------------------- figures
    bl.print_machine(info)
    print(f"\ndata: {args.dates} x {args.ids} x 5 float64 realistic, {bl.fmt_bytes(raw)}; gzip 4 + shuffle input "
          f"{bl.fmt_bytes(gz_bytes)} (ratio {raw / gz_bytes:.2f}) in chunks {chunks}; {cores} cores")
    print(f"read path: {res['gzip_read_path']}")
    rows = [["app, contiguous input", res["app_contig_s"]],
            [f"app, gzip input (auto: staging {res['gzip_staging']})", res["app_gzip_s"]],
            ["app, gzip input, staging ring", res["app_gzip_ring_s"]], ["h5py, gzip input", res["h5py_gzip_s"]]]
    if "h5repack_s" in res:
        rows.append(["h5repack to contiguous + app", res["h5repack_app_s"]])
    rows += [["decode stage, all threads (checksum mode)", res["decode_all_s"]],
             ["decode stage, one thread", res["decode_one_s"]]]
    bl.print_table(["reading", "s", "GB/s"], [[name, s, bl.gbps(raw, s)] for name, s in rows],
                   "Compressed input (GB/s of raw discount)")
    wrows = []
    for codec, w in writes.items():
        a, one, h = w.get("app") or {}, w.get("one_core") or {}, w.get("h5py")
        limit = one.get("per", 0) * 1e-3 * cores if one else float("nan")
        wrows.append([f"app {a.get('what', codec)}", w["app_s"], a.get("rate"), limit,
                      a.get("rate", 0) / limit if limit else float("nan"), a.get("raw", 0) / a.get("stored", 1)])
        if isinstance(h, dict):
            wrows.append([f"h5py {codec}, chunks {w['chunks']}", h["s"], h["gbps"], None, None,
                          cv.nbytes / h["stored_bytes"]])
        else:
            wrows.append([f"h5py {codec}", None, None, None, None, h])
    if res.get("xarray_zlib_s"):
        wrows.append(["xarray + dask to_netcdf zlib 4", res["xarray_zlib_s"], bl.gbps(cv.nbytes, res["xarray_zlib_s"]),
                      None, None, None])
    bl.print_table(["writing compressed", "s (job)", "GB/s", "limit GB/s", "of limit", "ratio"], wrows,
                   "Compressed output (the app's rate is its compression stage; limit = one thread's rate x cores)")
    for codec, w in writes.items():
        a = w.get("app") or {}
        if a.get("writer") is not None and a.get("s"):
            print(f"  {codec}: the one thread handing chunks to HDF5 was busy {a['writer']:.2f} s of the stage's "
                  f"{a['s']:.2f} s ({a['writer'] / a['s']:.0%}; near 100%: that writer is the cap)")
        z, pl = w.get("report") or {}, w.get("plan")
        if z.get("seconds"):
            fed = z.get("encoding_rate_bytes_per_s", 0) / 1e9
            one = (w.get("one_core") or {}).get("per", 0) * 1e-3 * cores
            print(f"  {codec}: stage {z['seconds']:.2f} s, of it {z.get('starved_seconds', 0):.2f} s with every "
                  f"encoder waiting for slabs, {z.get('closing_seconds', 0):.2f} s closing the parts (fsync, "
                  f"rename), {z.get('after_slabs_seconds', 0):.2f} s after the last slab; rate while encoding "
                  f"{fed:.2f} GB/s ({fed / one if one else float('nan'):.2f} of the limit); the "
                  f"encoders' {z['threads']} x {z['seconds']:.2f} thread-s: encoding {z.get('busy_seconds', 0):.2f}, "
                  f"waiting for slabs {z.get('slab_wait_seconds', 0):.2f}, for HDF5's thread "
                  f"{z.get('queue_wait_seconds', 0):.2f}")
            if pl:
                limit = pl["per_thread_mb"] * pl["threads"] / 1e3
                print(f"  {codec}: plan's sample: one thread x {pl['threads']:.0f} = {limit:.2f} GB/s, all encoding "
                      f"at once {pl['together_gb']:.2f} GB/s ({pl['together_gb'] / limit:.2f} of it); encoding "
                      f"/ all at once: {fed / pl['together_gb']:.2f}")

    print("\nratios (targets: node | this machine):")
    print(f"  gzip-input job speed / contiguous job speed: {res['app_contig_s'] / res['app_gzip_s']:.2f} "
          f"(>= 0.70 | >= 0.50); with the staging ring: {res['app_contig_s'] / res['app_gzip_ring_s']:.2f}")
    print(f"  h5py on gzip / app on gzip: {res['h5py_gzip_s'] / res['app_gzip_s']:.2f} (>= 5 on the node)")
    if "h5repack_app_s" in res:
        print(f"  h5repack + app / app on gzip: {res['h5repack_app_s'] / res['app_gzip_s']:.2f}")
    print(f"  decode, whole runs / (one thread x {cores} cores): "
          f"{res['decode_one_s'] / res['decode_all_s'] / cores:.2f} (start-up counts against it)")
    a, o = res["decode_all_stage"], res["decode_one_stage"]
    if a.get("busy_s") and o.get("busy_s"):
        print(f"  decode, read stage busy: {o['busy_s']:.2f} s on one thread, {a['busy_s']:.2f} s on {cores}: "
              f"{o['busy_s'] / a['busy_s'] / cores:.2f} of the parallel limit (>= 0.80)")
    p = res.get("plan_decode")
    if p and a.get("busy_s"):
        stage = raw / a["busy_s"] / 1e9
        print(f"  decode, read stage {stage:.2f} GB/s of raw discount; plan's sample: one thread x "
              f"{p['threads']:.0f} = {p['limit_gb']:.2f} GB/s, all {p['threads']:.0f} decoding at once "
              f"{p['together_gb']:.2f} GB/s (together / one x threads: {p['together_gb'] / p['limit_gb']:.2f}); "
              f"read stage / together: {stage / p['together_gb']:.2f}")
    for codec, w in writes.items():
        h, a = w.get("h5py"), w.get("app") or {}
        if isinstance(h, dict) and a:
            print(f"  {codec}: app compression rate / h5py write rate: {a['rate'] / h['gbps']:.2f} (>= 8 | >= 1.6); "
                  f"stored size app / h5py: {a['stored'] * 1e9 / h['stored_bytes']:.3f} (within 1.01)")
    if args.json:
        bl.write_json(args.json, res)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
