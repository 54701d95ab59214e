#!/usr/bin/env python3
"""Start-up of a job with more ids than 2^31, cut into id slabs.

Runs the synthetic source (formula in lib/io/synthetic.hpp, no input file)
with --dates x --ids x --nums (default 2 x (2^31+17) x 1) and `chunk_axis: id`,
writing the output file into --dir (tmpfs on a node: 34 GB at the default
shape), once per compute space. Prints each run's start-up time and phases
from its JSON report (the "output" phase is where the progress and run records
are created), its wall time and slab count. Printed, never asserted.

  /usr/bin/python3 scripts/bench/startup_ids.py --app build/cuda/app/discount_app --dir /dev/shm/ids
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--app")
    p.add_argument("--dir", default="/dev/shm/discount_startup_ids")
    p.add_argument("--dates", type=int, default=2)
    p.add_argument("--ids", type=int, default=2**31 + 17)
    p.add_argument("--nums", type=int, default=1)
    p.add_argument("--spaces", default="device,host")
    p.add_argument("--max-slab", default="auto")
    p.add_argument("--json")
    args = p.parse_args(argv)
    app = bl.find_app(args.app)
    os.makedirs(args.dir, exist_ok=True)
    out_bytes = args.dates * args.ids * args.nums * 8
    print(f"machine: {os.uname().nodename}, {os.cpu_count()} cpus, load {bl.loadavg()}; "
          f"shape {args.dates} x {args.ids} x {args.nums}, output {out_bytes / 1e9:.1f} GB in {args.dir}", flush=True)
    results = {"shape": [args.dates, args.ids, args.nums], "runs": []}
    for space in args.spaces.split(","):
        cfg = os.path.join(args.dir, "job.json")
        out = os.path.join(args.dir, "out.h5")
        bl.write_config(cfg, {
            "input": {"synthetic": {"dates": args.dates, "ids": args.ids, "nums": args.nums, "seed": 3}},
            "output": {"file": out, "overwrite": True},
            "compute": {"space": space},
            "memory": {"chunk_axis": "id", "max_slab": args.max_slab},
        })
        r = bl.run_app(app, cfg, os.path.join(args.dir, f"report_{space}.json"), ["-q"])
        rep = r["report"]
        phases = ", ".join(f"{ph['name']} {ph['seconds']:.3f}" for ph in rep.get("startup_phases", []))
        print(f"{space}: wall {r['app_s']:.2f} s, start-up {rep.get('startup_seconds', 0):.3f} s [{phases}]",
              flush=True)
        results["runs"].append({"space": space, "wall_s": r["app_s"], "startup_s": rep.get("startup_seconds"),
                                "phases": rep.get("startup_phases")})
        bl.remove(out)
    if args.json:
        bl.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
