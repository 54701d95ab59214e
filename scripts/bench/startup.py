#!/usr/bin/env python3
"""Start-up of a file-to-file job: exec to the first read of input data.

Generates a --shape input (16 GB by default) in --dir, then runs the job
--repeat times after one run that measures the link limits afresh
(`--remeasure`, an empty limits cache): each run's JSON report gives its
start-up time and phases (report "start-up" line), its wall time and its
stage rates. `cp && sync` of the same input is timed in the same call for
scale. Printed, never asserted.

  /usr/bin/python3 scripts/bench/startup.py --app build/cuda/app/discount_app --dir /tmp/discount_startup
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--app")
    p.add_argument("--dir", default="/tmp/discount_startup")
    p.add_argument("--shape", default="200x2000000x5", help="dates x ids x nums (16 GB)")
    p.add_argument("--space", default="device")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--memory", default="{device_budget: 16GiB, host_budget: 8GiB, max_slab: 512MiB}")
    p.add_argument("--json")
    args = p.parse_args(argv)
    app = bl.find_app(args.app)
    dates, ids, nums = (int(x) for x in args.shape.lower().split("x"))
    os.makedirs(args.dir, exist_ok=True)
    src = os.path.join(args.dir, "in.h5")
    subprocess.run([app, "generate", "--dates", str(dates), "--ids", str(ids), "--nums", str(nums), "--seed", "5",
                    "--out", src, "--force"], check=True, stdout=subprocess.DEVNULL)
    cache = tempfile.mkdtemp(prefix="discount_limits_cache_")
    env = dict(os.environ, DISCOUNT_CACHE_DIR=cache)
    results = {"shape": [dates, ids, nums], "runs": []}
    print(f"machine: {os.uname().nodename}, {os.cpu_count()} cpus, load {bl.loadavg()}; input {src} "
          f"{os.path.getsize(src) / 1e9:.2f} GB; limits cache {cache} (empty at the start)", flush=True)
    for r in range(args.repeat + 1):
        yaml_path = os.path.join(args.dir, "job.yaml")
        report = os.path.join(args.dir, f"report_{r}.json")
        with open(yaml_path, "w") as y:
            y.write(f"input: {{file: in.h5}}\noutput: {{file: out.h5, overwrite: true}}\n"
                    f"compute: {{space: {args.space}}}\nmemory: {args.memory}\nreport: {report}\n")
        cmd = [app, "run", yaml_path, "-q"] + (["--remeasure"] if r == 0 else [])
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env)
        wall = time.perf_counter() - t0
        with open(report) as f:
            rep = json.load(f)
        phases = ", ".join(f"{ph['name']} {ph['seconds']:.3f}" for ph in rep.get("startup_phases", []))
        kind = "measuring the limits" if r == 0 else "limits from the cache"
        print(f"run {r} ({kind}): wall {wall:.2f} s, start-up {rep.get('startup_seconds', 0):.3f} s "
              f"[{phases}]; bottleneck {rep.get('bottleneck')}", flush=True)
        results["runs"].append({"wall_s": wall, "startup_s": rep.get("startup_seconds"),
                                "phases": rep.get("startup_phases"), "cached": r > 0,
                                "limits": rep.get("limits")})
        os.unlink(os.path.join(args.dir, "out.h5"))
    t0 = time.perf_counter()
    subprocess.run(["bash", "-c", f"cp {src} {args.dir}/cp.h5 && sync"], check=True)
    results["cp_sync_s"] = time.perf_counter() - t0
    os.unlink(f"{args.dir}/cp.h5")
    print(f"cp && sync of the input: {results['cp_sync_s']:.2f} s", flush=True)
    os.unlink(src)
    if args.json:
        bl.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
