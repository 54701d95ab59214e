#!/usr/bin/env python3
"""The app's own ceiling with storage out of the way: file to file on tmpfs.

In one call, on one folder of a memory-backed file system (the node's
/dev/shm by default):
  1. the storage limit: N parallel `dd` writers (from /dev/zero), N readers
     (to /dev/null) and N readers + N writers at once, N = --streams; the best
     combined read+write rate is the ceiling;
  2. discount_app file to file, --shape in and the same out, on the device
     path and on the host path (--spaces), --repeat times each, with a JSON
     report per run (stage rates, start-up, bottleneck);
  3. `cp` of the input (same bytes read and written) and an h5py+NumPy script
     (read, multiply, write, date block by date block) on the same folder.
Each app run's output is checked on a few whole dates against NumPy
(check_cv_dates.py). Figures are printed, never asserted: the app's
effective rate (input + output bytes over its wall time) against the
ceiling, cp and h5py, all from this run.

  /usr/bin/python3 scripts/bench/fast_storage.py --app build/cuda/app/discount_app \\
      --dir /dev/shm/discount_fast --shape 200x2500000x5 --json fast_storage.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--app", help="discount_app binary (default: the newest build)")
    p.add_argument("--dir", default="/dev/shm/discount_fast", help="folder on the file system to measure")
    p.add_argument("--shape", default="200x2500000x5", help="dates x ids x nums of the input (20 GB)")
    p.add_argument("--streams", default="1,2,4,8,16", help="parallel dd streams to try")
    p.add_argument("--dd-bytes", type=bl.parse_bytes, default="8GiB", help="bytes each dd test moves in all")
    p.add_argument("--spaces", default="device,host", help="compute.space values to run")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--host-budget", default="8GiB")
    p.add_argument("--device-budget", default="16GiB")
    p.add_argument("--max-slab", default="512MiB")
    p.add_argument("--extra-yaml", default="", help="more YAML lines for every app run (e.g. 'memory: {...}')")
    p.add_argument("--no-peers", action="store_true", help="skip cp and h5py")
    p.add_argument("--variant", action="append", default=[],
                   help="extra environment for a further set of app runs, e.g. "
                        "'io16:DISCOUNT_IO_THREADS=16' or 'omp12:OMP_NUM_THREADS=12,DISCOUNT_IO_THREADS=4' (repeatable)")
    p.add_argument("--dd-only", action="store_true", help="only the storage measurements (no app, cp or h5py)")
    p.add_argument("--json", help="write every figure here")
    return p.parse_args(argv)


def timed(cmd, **kw) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, **kw)
    return time.perf_counter() - t0


DD_BLOCK = 8 << 20


def timed_together(commands) -> float:
    """Seconds for the commands run at once, until the last one ends."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("dd failed")
    return time.perf_counter() - t0


def dd_streams(folder: str, n: int, total: int, mode: str) -> float:
    """Seconds for n parallel dd of total/n bytes each: write, read or both."""
    count = max(1, total // n // DD_BLOCK)
    commands = []
    for i in range(n):
        if mode in ("read", "both"):
            commands.append(["dd", f"if={folder}/r{i}", "of=/dev/null", f"bs={DD_BLOCK}"])
        if mode in ("write", "both"):
            commands.append(["dd", "if=/dev/zero", f"of={folder}/w{i}", f"bs={DD_BLOCK}", f"count={count}"])
    return timed_together(commands)


def one_file_streams(folder: str, n: int, total: int, mode: str) -> float:
    """Seconds for n parallel dd on disjoint ranges of ONE file (as the app
    writes and reads its single output and input): write or read."""
    count = max(1, total // n // DD_BLOCK)
    if mode == "write":
        return timed_together([["dd", "if=/dev/zero", f"of={folder}/one", f"bs={DD_BLOCK}", f"count={count}",
                                f"seek={i * count}", "conv=notrunc"] for i in range(n)])
    return timed_together([["dd", f"if={folder}/one", "of=/dev/null", f"bs={DD_BLOCK}", f"count={count}",
                            f"skip={i * count}"] for i in range(n)])


def one_file_ceiling(folder: str, streams: list[int], total: int) -> dict:
    out = {}
    for n in streams:
        count = max(1, total // n // DD_BLOCK)
        moved = n * count * DD_BLOCK
        w = one_file_streams(folder, n, total, "write")  # a new file: its pages are allocated as it goes
        r = one_file_streams(folder, n, total, "read")
        rw = one_file_streams(folder, n, total, "write")  # pages already there: copies only
        os.unlink(f"{folder}/one")
        out[n] = {"write_gb_s": bl.gbps(moved, w), "read_gb_s": bl.gbps(moved, r), "rewrite_gb_s": bl.gbps(moved, rw)}
        print(f"one file, dd x{n:<3} write {out[n]['write_gb_s']:7.2f} GB/s (new pages)   "
              f"rewrite {out[n]['rewrite_gb_s']:7.2f} GB/s (pages there)   read {out[n]['read_gb_s']:7.2f} GB/s",
              flush=True)
    return out


def storage_ceiling(folder: str, streams: list[int], total: int) -> dict:
    out = {}
    for n in streams:
        count = max(1, total // n // DD_BLOCK)
        moved = n * count * DD_BLOCK
        # Files to read, made by the write test.
        w = dd_streams(folder, n, total, "write")
        for i in range(n):
            os.replace(f"{folder}/w{i}", f"{folder}/r{i}")
        r = dd_streams(folder, n, total, "read")
        b = dd_streams(folder, n, total, "both")
        out[n] = {"write_gb_s": bl.gbps(moved, w), "read_gb_s": bl.gbps(moved, r), "both_gb_s": bl.gbps(2 * moved, b)}
        for i in range(n):
            for name in (f"r{i}", f"w{i}"):
                try:
                    os.unlink(f"{folder}/{name}")
                except FileNotFoundError:
                    pass
        print(f"dd x{n:<3} write {out[n]['write_gb_s']:7.2f} GB/s   read {out[n]['read_gb_s']:7.2f} GB/s   "
              f"read+write at once {out[n]['both_gb_s']:7.2f} GB/s (combined)", flush=True)
    return out


H5PY_SCRIPT = r"""
import sys, h5py, numpy as np
src, dst, block = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(src, "r") as f, h5py.File(dst, "w") as o:
    m = f["multBy"][...]
    d = f["discount"]
    cv = o.create_dataset("cv", shape=d.shape, dtype="f8")
    for a in range(0, d.shape[0], block):
        b = min(d.shape[0], a + block)
        cv[a:b] = d[a:b] * m[None]
"""


def main(argv=None) -> int:
    args = parse_args(argv)
    app = bl.find_app(args.app)
    dates, ids, nums = (int(x) for x in args.shape.lower().split("x"))
    folder = args.dir
    os.makedirs(folder, exist_ok=True)
    du = shutil.disk_usage(folder)
    fstype = subprocess.run(["stat", "-f", "-c", "%T", folder], capture_output=True, text=True).stdout.strip()
    info = bl.machine_info(app)
    print(f"machine: {info.get('hostname')} {os.cpu_count()} cpus; {folder}: {fstype}, "
          f"{du.free / 1e9:.1f} GB free; load {bl.loadavg()}", flush=True)
    info.pop("_cpu_start", None)
    results = {"machine": info, "folder": folder, "fstype": fstype, "shape": [dates, ids, nums]}

    streams = [int(s) for s in args.streams.split(",") if s]
    results["dd"] = storage_ceiling(folder, streams, args.dd_bytes)
    best = max(v["both_gb_s"] for v in results["dd"].values())
    results["ceiling_gb_s"] = best
    print(f"ceiling: best combined read+write rate {best:.2f} GB/s", flush=True)
    # What one file allows (the app reads one input and writes one output).
    results["dd_one_file"] = one_file_ceiling(folder, streams, args.dd_bytes)
    if args.dd_only:
        if args.json:
            bl.write_json(args.json, results)
        return 0

    src = f"{folder}/in.h5"
    t = timed([app, "generate", "--dates", str(dates), "--ids", str(ids), "--nums", str(nums), "--seed", "11",
               "--out", src, "--force"], stdout=subprocess.DEVNULL)
    in_bytes = os.path.getsize(src)
    moved = 2 * dates * ids * nums * 8  # discount read + cv written (multBy is small)
    print(f"input: {src}, {in_bytes / 1e9:.2f} GB (generated in {t:.1f} s)", flush=True)

    results["app"] = {}
    variants = [("default", {})]
    for v in args.variant:
        name, _, assigns = v.partition(":")
        variants.append((name, dict(a.split("=", 1) for a in assigns.split(",") if a)))
    for (variant, extra_env), space in [(v, sp) for v in variants for sp in args.spaces.split(",") if sp]:
        env = dict(os.environ, **extra_env)
        label = space if variant == "default" else f"{space}/{variant}"
        runs = []
        for r in range(args.repeat):
            yaml_path = f"{folder}/job_{space}.yaml"
            report = f"{folder}/report_{space}_{r}.json"
            with open(yaml_path, "w") as y:
                y.write(f"input: {{file: in.h5}}\noutput: {{file: out.h5, overwrite: true}}\n"
                        f"compute: {{space: {space}}}\n"
                        f"memory: {{device_budget: {args.device_budget}, host_budget: {args.host_budget}, "
                        f"max_slab: {args.max_slab}}}\nreport: {report}\n{args.extra_yaml}\n")
            wall = timed([app, "run", yaml_path, "-q"], env=env)
            with open(report) as f:
                rep = json.load(f)
            stages = {s["name"]: s for s in rep["stages"]}
            run = {"wall_s": wall, "gb_s": bl.gbps(moved, wall), "of_ceiling": bl.gbps(moved, wall) / best,
                   "startup_s": rep.get("startup_seconds"), "bottleneck": rep.get("bottleneck"),
                   "stages": {n: {"gb_s": s["gb_per_s"], "busy_s": s["seconds"],
                                  "of_limit": s.get("fraction_of_limit")} for n, s in stages.items()},
                   "report_wall_s": rep["wall_seconds"], "output": rep.get("output")}
            runs.append(run)
            busy = ", ".join(f"{n} {s['gb_s']:.1f} GB/s busy {s['busy_s']:.2f} s"
                             + (f" ({100 * s['of_limit']:.0f}% of limit)" if s["of_limit"] is not None else "")
                             for n, s in run["stages"].items())
            print(f"app {label:12} run {r}: {wall:6.2f} s, {run['gb_s']:6.2f} GB/s = {100 * run['of_ceiling']:.0f}% "
                  f"of the ceiling; start-up {run['startup_s'] or 0:.2f} s; bottleneck {run['bottleneck']}; {busy}",
                  flush=True)
            ok = subprocess.run([sys.executable, f"{HERE}/check_cv_dates.py", src, f"{folder}/out.h5", "--dates", "4"],
                                capture_output=True, text=True)
            run["checked"] = ok.returncode == 0
            print(f"    check (4 random dates + first + last vs NumPy): {'exact' if ok.returncode == 0 else 'FAILED'} "
                  f"{ok.stdout.strip().splitlines()[-1] if ok.stdout.strip() else ok.stderr.strip()[-200:]}",
                  flush=True)
            os.unlink(f"{folder}/out.h5")
        results["app"][label] = runs

    if not args.no_peers:
        cp = [timed(["cp", src, f"{folder}/cp.h5"]) for _ in range(args.repeat)]
        os.unlink(f"{folder}/cp.h5")
        results["cp_s"] = cp
        print(f"cp: {' '.join(f'{c:.2f}' for c in cp)} s ({bl.gbps(2 * in_bytes, min(cp)):.2f} GB/s read+write)",
              flush=True)
        block = max(1, int(1e9 // (ids * nums * 8)))
        h5 = timed([sys.executable, "-c", H5PY_SCRIPT, src, f"{folder}/h5py.h5", str(block)])
        os.unlink(f"{folder}/h5py.h5")
        results["h5py_s"] = h5
        print(f"h5py+NumPy (blocks of {block} dates): {h5:.2f} s", flush=True)

    print("\nsummary (same call):")
    for space, runs in results["app"].items():
        w = min(r["wall_s"] for r in runs)
        line = f"  app {space:12} best {w:6.2f} s: {100 * bl.gbps(moved, w) / best:5.1f}% of the ceiling"
        if "cp_s" in results:
            line += f", {min(results['cp_s']) / w:4.2f}x cp, {results['h5py_s'] / w:4.2f}x h5py+NumPy"
        print(line)
    os.unlink(src)
    if args.json:
        bl.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
