#!/usr/bin/env python3
"""Rank scaling: `mpirun -n R discount_app run job.yaml` for each R.

The synthetic job with the checksum sink; every run's checksum must equal the
1-rank run's. --device-path times `discount_bench --mode stream` under mpirun instead.

  scripts/bench/scaling.py --app build/cuda-mpi/app/discount_app --ranks 1,2 --space device
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def parse_args():
    p = bl.parser(__doc__, repeat=2, repeat_help="runs per rank count; the best is reported")
    p.add_argument("--ranks", default="1,2", help="comma-separated rank counts")
    p.add_argument("--shape", default="200x1000000x5", help="DATESxIDSxNUMS")
    p.add_argument("--space", choices=["device", "host"], default="device")
    p.add_argument("--device-budget", default="16GiB")
    p.add_argument("--host-budget", default="8GiB", help="per rank")
    p.add_argument("--max-slab", default="512MiB")
    p.add_argument("--device-path", action="store_true",
                   help="the device path alone (discount_bench --mode stream): staging buffers filled once, then "
                        "slabs cycle host -> GPU -> host with no generation, reads, writes or checksum")
    p.add_argument("--bench", help="discount_bench of the same MPI build, for --device-path "
                                   "(default: next to --app's build folder)")
    p.add_argument("--mpirun-args", default="", help="extra mpirun options, e.g. '--bind-to none'")
    return p.parse_args()


def main():
    a = parse_args()
    if not a.app:
        sys.exit("scaling.py: --app (the discount_app of an MPI build) is required")
    a.app = os.path.abspath(a.app)
    if a.device_path:
        a.bench = os.path.abspath(a.bench or os.path.join(os.path.dirname(os.path.dirname(a.app)), "discount_bench"))
        if not os.path.exists(a.bench):
            print(f"--device-path needs discount_bench (not found at {a.bench}; give --bench, or configure "
                  "with -DDISCOUNT_BUILD_BENCH=ON: it is off by default)", file=sys.stderr)
            return 64
    dates, ids, nums = (int(x) for x in a.shape.lower().split("x"))
    work = tempfile.mkdtemp(prefix="discount_scaling_")
    # Ranks share a node's cores: placement is the launcher's job (or the app's share of an
    # unbound node), not OMP_PROC_BIND's, whose places would be the same cores in every rank.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMP_PROC_BIND="false")
    env.pop("OMP_PLACES", None)
    job = os.path.join(work, "job.yaml")
    bl.write_config(job, {"input": {"synthetic": {"dates": dates, "ids": ids, "nums": nums, "seed": 1}},
                          "output": {"mode": "checksum"}, "compute": {"space": a.space},
                          "memory": {"device_budget": a.device_budget, "host_budget": a.host_budget,
                                     "max_slab": a.max_slab}})
    data_bytes = 2 * dates * ids * nums * 8  # discount in + cv out
    mpirun = [shutil.which("mpirun") or "mpirun"]
    rows, reference = [], None
    print(f"scaling: {dates} x {ids} x {nums} float64 ({data_bytes / 1e9:.1f} GB in + out), space {a.space}, "
          f"{'device path only' if a.device_path else 'synthetic source, checksum sink'}", flush=True)
    for ranks in [int(r) for r in a.ranks.split(",")]:
        best = None
        for rep in range(a.repeat):
            report = os.path.join(work, f"report_{ranks}_{rep}.json")
            argv = [a.app, "run", "-q", job]
            if a.device_path:
                argv = [a.bench, "--mode", "stream", "--space", a.space, "--dates", str(dates), "--ids", str(ids),
                        "--nums", str(nums), "--slab-mib", str(bl.parse_bytes(a.max_slab) / 1048576),
                        "--host-budget", a.host_budget, "--device-budget", a.device_budget, "--reps", "1"]
            argv = mpirun + ["-n", str(ranks)] + a.mpirun_args.split() + argv + [
                "--report", report, "--kokkos-disable-warnings"]
            t0 = time.monotonic()
            r = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True)
            wall = time.monotonic() - t0
            if r.returncode != 0:
                print(f"R={ranks}: exit {r.returncode}\n{r.stdout}\n{r.stderr}", file=sys.stderr)
                return 1
            with open(report) as f:
                rep_json = json.load(f)
            result = "(no result)" if a.device_path else rep_json["checksum"]["global_bits_hex"]
            reference = reference or result
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
    print(f"{'ranks':>5} {'wall s':>8} {'app s':>8} {'GB/s':>8} {'speed-up':>9}  {'bottleneck':<10} result")
    for row in rows:
        row["gb_per_s"] = data_bytes / row["wall_s"] / 1e9
        row["speedup"] = rows[0]["wall_s"] / row["wall_s"]
        print(f"{row['ranks']:>5} {row['wall_s']:>8.2f} {row['app_wall_s']:>8.2f} {row['gb_per_s']:>8.2f} "
              f"{row['speedup']:>8.2f}x  {row['bottleneck']:<10} {row['result']}  "
              + " ".join(f"{k} {v}" for k, v in row["stages"].items()))
    print("wall s: mpirun start to exit; app s: the app's own wall time (rank 0);\n"
          "stage GB/s: combined bytes over the slowest rank's busy seconds")
    if a.json:
        bl.write_json(a.json, {"shape": [dates, ids, nums], "space": a.space, "rows": rows})
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
