#!/usr/bin/env python3
"""Start-up of a job, exec to the first read of input data, from the run's report.

Default: a 16 GB file-to-file job on the device, first measuring the link
limits, then with the cached ones, beside `cp && sync`. --wide-ids: a
synthetic job with 2^31+17 ids in id slabs, on the device and on the host.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def show(label: str, r: dict) -> dict:
    rep = r["report"]
    phases = ", ".join(f"{ph['name']} {ph['seconds']:.3f}" for ph in rep.get("startup_phases", []))
    print(f"{label}: wall {r['app_s']:.2f} s, start-up {rep.get('startup_seconds', 0):.3f} s [{phases}]; "
          f"bottleneck {rep.get('bottleneck')}", flush=True)
    return {"label": label, "wall_s": r["app_s"], "startup_s": rep.get("startup_seconds"),
            "phases": rep.get("startup_phases"), "limits": rep.get("limits")}


def main(argv=None) -> int:
    p = bl.parser(__doc__, repeat=3)
    p.add_argument("--dir", default="/tmp/discount_startup")
    p.add_argument("--shape", help="dates x ids x nums (default 200x2000000x5, 16 GB; --wide-ids: 2x2147483665x1)")
    p.add_argument("--wide-ids", action="store_true", help="the 2^31+17-id synthetic job instead")
    args = p.parse_args(argv)
    app = bl.find_app(args.app)
    shape = args.shape or ("2x2147483665x1" if args.wide_ids else "200x2000000x5")
    dates, ids, nums = (int(x) for x in shape.lower().split("x"))
    os.makedirs(args.dir, exist_ok=True)
    cfg, out, report = (os.path.join(args.dir, f) for f in ("job.json", "out.h5", "report.json"))
    results = {"shape": [dates, ids, nums], "runs": []}
    machine = f"machine: {os.uname().nodename}, {os.cpu_count()} cpus, load {bl.loadavg()}"

    if args.wide_ids:
        print(f"{machine}; shape {shape}, output {dates * ids * nums * 8 / 1e9:.1f} GB in {args.dir}", flush=True)
        for space in ("device", "host"):
            bl.write_config(cfg, {"input": {"synthetic": {"dates": dates, "ids": ids, "nums": nums, "seed": 3}},
                                  "output": {"file": out, "overwrite": True}, "compute": {"space": space},
                                  "memory": {"chunk_axis": "id"}})
            results["runs"].append(show(space, bl.run_app(app, cfg, report, ["-q"])))
            bl.remove(out)
    else:
        src = os.path.join(args.dir, "in.h5")
        bl.generate(app, src, dates, ids, nums, seed=5)
        cache = tempfile.mkdtemp(prefix="discount_limits_cache_")
        print(f"{machine}; input {src} {os.path.getsize(src) / 1e9:.2f} GB; limits cache {cache} "
              "(empty at the start)", flush=True)
        bl.write_config(cfg, {"input": {"file": src}, "output": {"file": out, "overwrite": True},
                              "compute": {"space": "device"},
                              "memory": {"device_budget": "16GiB", "host_budget": "8GiB", "max_slab": "512MiB"}})
        for r in range(args.repeat + 1):
            run = bl.run_app(app, cfg, report, ["-q"] + (["--remeasure"] if r == 0 else []),
                             env={"DISCOUNT_CACHE_DIR": cache})
            results["runs"].append(show(f"run {r} ({'measuring the limits' if r == 0 else 'cached limits'})", run))
            bl.remove(out)
        results["cp_sync_s"] = bl.seconds(
            lambda: subprocess.run(["bash", "-c", f"cp {src} {args.dir}/cp.h5 && sync"], check=True))
        bl.remove(f"{args.dir}/cp.h5", src)
        print(f"cp && sync of the input: {results['cp_sync_s']:.2f} s", flush=True)
    if args.json:
        bl.write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
