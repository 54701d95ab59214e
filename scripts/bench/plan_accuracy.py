#!/usr/bin/env python3
"""`discount_app plan`'s predicted wall time against the run's.

The demo job and a ~2 GB job, each repeat: plan with rates measured now, the
run, plan --no-measure from that run's report, a second run.

  /usr/bin/python3 scripts/bench/plan_accuracy.py --repeat 3
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

WALL = re.compile(r"^predicted wall (\d+\.\d+) s", re.M)


def plan(app, config, no_measure):
    cmd = [app, "plan"] + (["--no-measure"] if no_measure else []) + [str(config)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
    m = WALL.search(out.stdout)
    block = out.stdout.split("\nresolved configuration", 1)[0]
    B.log(f"$ {' '.join(cmd)}  ({seconds:.2f} s)\n" + block.split("\nlimits ", 1)[-1])
    return (float(m.group(1)) if m else float("nan")), seconds


def run(app, config, report):
    r = B.run_app(app, config, report)
    wall = r["report"]["wall_seconds"]
    B.log(f"$ {r['cmd']}: report wall {wall:.3f} s, process {r['app_s']:.3f} s, stages "
          + ", ".join(f"{s['name']} {s['seconds']:.3f} s" for s in r["report"]["stages"])
          + f", in no stage {wall - r['report']['any_stage_seconds']:.3f} s")
    return wall, r["app_s"]


def main():
    parser = B.parser(__doc__, repeat=3)
    parser.add_argument("--workdir", default="/tmp/plan_accuracy", help="the big job's input and output")
    parser.add_argument("--big", default="40,1250000,5", help="dates,ids,nums of the big job")
    args = parser.parse_args()
    app = B.find_app(args.app)
    info = B.machine_info(app)
    work = Path(args.workdir)
    (work / "out").mkdir(parents=True, exist_ok=True)
    root = B.REPO
    demo_input = root / "data" / "demo.h5"
    if not demo_input.exists():
        (root / "data").mkdir(exist_ok=True)
        B.generate(app, demo_input, 60, 100003, 5, seed=2026, force=False)
    (root / "out").mkdir(exist_ok=True)
    dates, ids, nums = (int(x) for x in args.big.split(","))
    big_input = work / "big.h5"
    if not big_input.exists():
        B.generate(app, big_input, dates, ids, nums, seed=17, force=False)
    big_config = work / "big.yaml"
    B.write_config(big_config, {"input": {"file": "big.h5"}, "report": "out/big_run.json",
                                "output": {"file": "out/big_cv.h5", "overwrite": True}})
    jobs = [("demo (60 x 100,003 x 5, 240 MB)", root / "inputs" / "demo.yaml", root / "out" / "demo_run.json"),
            (f"big ({dates} x {ids:,} x {nums}, {dates * ids * nums * 8 / 1e9:.1f} GB)", big_config,
             work / "out" / "big_run.json")]

    rows = []
    for repeat in range(args.repeat):
        for name, config, report in jobs:
            B.remove(report)
            for rates, no_measure in (("measured now", False), ("earlier report", True)):
                predicted, plan_s = plan(app, config, no_measure)
                wall, process = run(app, config, report)
                rows.append([name, rates, repeat + 1, predicted, wall, predicted / wall, process, plan_s])
    B.print_table(["job", "rates", "rep", "predicted s", "run wall s", "predicted/run", "process s", "plan s"],
                  rows, "plan's predicted wall time against the run's (report wall_seconds)")
    summary = []
    for name, _, _ in jobs:
        for rates in ("measured now", "earlier report"):
            ratios = [r[5] for r in rows if r[0] == name and r[1] == rates]
            summary.append([name, rates, B.median(ratios), min(ratios), max(ratios)])
    B.print_table(["job", "rates", "median ratio", "min", "max"], summary, "predicted / run, over the repeats")
    B.print_machine(info)
    if args.json:
        keys = ["job", "rates", "repeat", "predicted_s", "wall_s", "ratio", "process_s", "plan_s"]
        B.write_json(args.json, {"machine": info, "runs": [dict(zip(keys, row)) for row in rows]})


if __name__ == "__main__":
    main()
