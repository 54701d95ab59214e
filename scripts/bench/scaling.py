#!/usr/bin/env python3
"""Rank scaling: `mpirun -n R discount_app run job.yaml` for each R.

The synthetic job with the checksum sink (or --file: HDF5 to HDF5); every run's
checksum must equal the 1-rank run's. --device-path times `discount_bench
--mode stream` under mpirun instead.

  scripts/bench/scaling.py --app build/cuda-mpi/app/discount_app --ranks 1,2 --space device
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--app", required=True, help="discount_app of an MPI build")
    p.add_argument("--ranks", default="1,2", help="comma-separated rank counts (default 1,2)")
    p.add_argument("--shape", default="200x1000000x5", help="DATESxIDSxNUMS (default 200x1000000x5)")
    p.add_argument("--space", choices=["device", "host"], default="device")
    p.add_argument("--device-budget", default="16GiB")
    p.add_argument("--host-budget", default="8GiB", help="per rank")
    p.add_argument("--max-slab", default="512MiB")
    p.add_argument("--threads", type=int, default=0, help="OpenMP threads per rank (0: the app's default share)")
    p.add_argument("--repeat", type=int, default=2, help="runs per rank count; the best is reported")
    p.add_argument("--file", action="store_true", help="HDF5 file in, HDF5 file out (needs the disk space)")
    p.add_argument("--device-path", action="store_true",
                   help="the device path alone (discount_bench --mode stream): staging buffers filled once, then "
                        "slabs cycle host -> GPU -> host with no generation, reads, writes or checksum")
    p.add_argument("--bench", help="discount_bench of the same MPI build, for --device-path "
                                   "(default: next to --app's build folder)")
    p.add_argument("--work", default=None, help="scratch directory (default: a temporary one)")
    p.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--mpirun-args", default="", help="extra mpirun options, e.g. '--bind-to none'")
    return p.parse_args()


def digest(path):
    """SHA-256 of the cv dataset's bytes (the file also holds run times)."""
    import h5py
    h = hashlib.sha256()
    with h5py.File(path, "r") as f:
        cv = f["cv"]
        step = max(1, (64 << 20) // max(1, cv[0].nbytes))
        for d in range(0, cv.shape[0], step):
            h.update(cv[d:d + step].tobytes())
    return h.hexdigest()[:16]


def mib(size):
    """512MiB, 2GiB or a number of bytes, in MiB."""
    units = {"kib": 1 / 1024, "mib": 1, "gib": 1024, "tib": 1024 * 1024, "b": 1 / 1048576}
    text = size.strip().lower()
    for unit, scale in units.items():
        if text.endswith(unit):
            return float(text[:-len(unit)]) * scale
    return float(text) / 1048576


def main():
    a = parse_args()
    a.app = os.path.abspath(a.app)
    if a.device_path:
        a.bench = os.path.abspath(a.bench or os.path.join(os.path.dirname(os.path.dirname(a.app)), "discount_bench"))
        if not os.path.exists(a.bench):
            print(f"--device-path needs discount_bench (not found at {a.bench}; give --bench, or configure "
                  "with -DDISCOUNT_BUILD_BENCH=ON: it is off by default)", file=sys.stderr)
            return 64
    dates, ids, nums = (int(x) for x in a.shape.lower().split("x"))
    work = a.work or tempfile.mkdtemp(prefix="discount_scaling_")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    # Ranks share a node's cores: placement is the launcher's job (or the
    # app's share of an unbound node), not OMP_PROC_BIND's, whose places
    # would be the same cores in every rank.
    env["OMP_PROC_BIND"] = "false"
    env.pop("OMP_PLACES", None)
    if a.threads:
        env["OMP_NUM_THREADS"] = str(a.threads)
    memory = (f"memory: {{device_budget: {a.device_budget}, host_budget: {a.host_budget}, "
              f"max_slab: {a.max_slab}}}\n")
    if a.file:
        src = os.path.join(work, "in.h5")
        if not os.path.exists(src):
            subprocess.run([a.app, "generate", "--dates", str(dates), "--ids", str(ids), "--nums", str(nums),
                            "--seed", "7", "--out", src], check=True, env=env, stdout=subprocess.DEVNULL)
        job_input = "input: {file: in.h5}\n"
        job_output = "output: {file: out.h5, overwrite: true}\n"
    else:
        job_input = f"input: {{synthetic: {{dates: {dates}, ids: {ids}, nums: {nums}, seed: 1}}}}\n"
        job_output = "output: {mode: checksum}\n"
    job = os.path.join(work, "job.yaml")
    with open(job, "w") as f:
        f.write(job_input + job_output + f"compute: {{space: {a.space}}}\n" + memory)

    data_bytes = 2 * dates * ids * nums * 8  # discount in + cv out
    rows, reference = [], None
    print(f"scaling: {dates} x {ids} x {nums} float64 ({data_bytes / 1e9:.1f} GB in + out), space {a.space}, "
          f"{'file to file' if a.file else 'device path only' if a.device_path else 'synthetic source, checksum sink'}",
          flush=True)
    for ranks in [int(r) for r in a.ranks.split(",")]:
        best = None
        for rep in range(a.repeat):
            report = os.path.join(work, f"report_{ranks}_{rep}.json")
            argv = [a.mpirun, "-n", str(ranks)] + a.mpirun_args.split() + [a.app, "run", "-q", job, "--report", report,
                    "--kokkos-disable-warnings"]
            if a.device_path:
                argv = [a.mpirun, "-n", str(ranks)] + a.mpirun_args.split() + [
                    a.bench, "--mode", "stream", "--space", a.space, "--dates", str(dates), "--ids", str(ids),
                    "--nums", str(nums), "--slab-mib", str(mib(a.max_slab)), "--host-budget", a.host_budget,
                    "--device-budget", a.device_budget, "--reps", "1", "--report", report,
                    "--kokkos-disable-warnings"]
            t0 = time.monotonic()
            r = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True)
            if a.file:
                subprocess.run(["sync"], check=False)
            wall = time.monotonic() - t0
            if r.returncode != 0:
                print(f"R={ranks}: exit {r.returncode}\n{r.stdout}\n{r.stderr}", file=sys.stderr)
                return 1
            with open(report) as f:
                rep_json = json.load(f)
            if a.device_path:
                result = "(no result)"
            elif a.file:
                result = digest(os.path.join(work, "out.h5"))
            else:
                result = rep_json["checksum"]["global_bits_hex"]
            if reference is None:
                reference = result
            if result != reference:
                print(f"R={ranks}: result {result} differs from {reference}", file=sys.stderr)
                return 1
            row = {"ranks": ranks, "wall_s": wall, "app_wall_s": rep_json["wall_seconds"],
                   "device_path_s": rep_json.get("device_path_seconds", 0.0),
                   "bottleneck": rep_json.get("bottleneck", "-"), "result": result,
                   "stages": {st["name"]: round(st["gb_per_s"], 2) for st in rep_json["stages"]}}
            if best is None or row["wall_s"] < best["wall_s"]:
                best = row
        rows.append(best)
    base = rows[0]["wall_s"]
    print(f"{'ranks':>5} {'wall s':>8} {'app s':>8} {'GB/s':>8} {'speed-up':>9}  {'bottleneck':<10} result")
    for row in rows:
        row["gb_per_s"] = data_bytes / row["wall_s"] / 1e9
        row["speedup"] = base / row["wall_s"]
        print(f"{row['ranks']:>5} {row['wall_s']:>8.2f} {row['app_wall_s']:>8.2f} {row['gb_per_s']:>8.2f} "
              f"{row['speedup']:>8.2f}x  {row['bottleneck']:<10} {row['result']}  "
              + " ".join(f"{k} {v}" for k, v in row["stages"].items()))
    print("wall s: mpirun start to exit (plus sync for files); app s: the app's own wall time (rank 0);\n"
          "stage GB/s: combined bytes over the slowest rank's busy seconds")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"shape": [dates, ids, nums], "space": a.space, "file": a.file, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
