#!/usr/bin/env python3
"""output.layout: split against the storage's own limits, in one call.

On one folder: a pair of parallel `dd` streams moving the job's bytes, `cp`,
an h5py + NumPy loop, and the app with layout single and split, each followed
by `sync` on a disk; outputs checked on whole dates (as check_cv_dates.py).
On memory-backed folders the free memory is touched first (benchlib.warm_memory).

  /usr/bin/python3 scripts/bench/storage_split.py --dir /tmp/split_small --size 200MB
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

NUMS = 5
DD_BLOCK = 8 << 20

# The h5py + NumPy contender: read, multiply, write, in blocks of dates.
H5PY_LOOP = r"""
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


def parse_args(argv=None):
    p = bl.parser(__doc__, repeat=1, repeat_help="runs of each contender; the best counts")
    p.add_argument("--dir", default="/dev/shm/discount_split", help="folder on the file system to measure")
    p.add_argument("--size", type=bl.parse_bytes, default="200MB", help="input bytes (the output is as large)")
    p.add_argument("--dates", type=int, default=200, help="dates of the input; ids follow from --size")
    p.add_argument("--writers", type=int, default=os.cpu_count() or 2, help="parallel dd streams each way")
    p.add_argument("--space", default="host",
                   help="compute.space of the app runs, or a comma list (device,host on a GPU node: both in one call)")
    p.add_argument("--only", default="",
                   help="comma list of contenders to run (dd_pair,cp,h5py,single,split); default all")
    return p.parse_args(argv)


def timed(commands, durable: bool) -> float:
    """Seconds for the commands run at once until the last ends, plus sync when durable."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in commands]
    for p, c in zip(procs, commands):
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(c)} failed: {err.decode(errors='replace')[-400:]}")
    if durable:
        bl.sync()
    return time.perf_counter() - t0


def dd_pair(folder: str, src: str, out_bytes: int, n: int, durable: bool) -> float:
    """n readers over disjoint ranges of src and n writers of out_bytes / n into separate files, at once."""
    per_read = -(-os.path.getsize(src) // n)
    per_write = max(1, out_bytes // n // DD_BLOCK)
    commands = []
    for i in range(n):
        commands.append(["dd", f"if={src}", "of=/dev/null", f"bs={DD_BLOCK}", "iflag=skip_bytes,count_bytes",
                         f"skip={i * per_read}", f"count={per_read}"])
        commands.append(["dd", "if=/dev/zero", f"of={folder}/dd_w{i}", f"bs={DD_BLOCK}", f"count={per_write}"])
    return timed(commands, durable)


def remove_output(folder: str, name: str) -> None:
    for entry in os.listdir(folder):
        if entry == f"{name}.h5" or entry.startswith(f"{name}.h5."):
            p = os.path.join(folder, entry)
            shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)


def check_dates(src: str, out: str) -> None:
    n, bad, _ = bl.cv_dates_differ(src, out, 4)
    if bad:
        raise RuntimeError(f"{out} differs from NumPy: {bad} of {n} elements")


def describe_stages(run: dict) -> str:
    """The report's stages, then where the process's wall time went: start-up (exec to the first read),
    the streaming and the output's finish, and the rest outside run_command and exec to main (exit)."""
    report = run["report"]
    text = ", ".join(f"{st['name']} {st.get('gb_per_s', 0):.1f} GB/s busy {st.get('seconds', 0):.2f} s"
                     for st in report.get("stages", []))
    if report.get("wall_seconds") is not None and report.get("startup_seconds") is not None:
        phases = report.get("startup_phases", [])
        to_main = sum(p.get("seconds", 0) for p in phases if p.get("name") == "exec to main")
        stream = report["wall_seconds"] - (report["startup_seconds"] - to_main)
        outside = run["wall_s"] - report["wall_seconds"] - to_main
        text += (f"; process {run['wall_s']:.2f} s = start-up {report['startup_seconds']:.2f} + "
                 f"streaming and finish {stream:.2f} (any stage busy "
                 f"{report.get('any_stage_seconds', 0):.2f}) + exit {outside:.2f}")
        slow = [f"{p['name']} {p['seconds']:.3f}" for p in phases if p.get("seconds", 0) >= 0.005]
        if slow:
            text += "; start-up phases of 5 ms or more: " + ", ".join(slow)
    if report.get("staging_seconds"):
        text += (f"; staging {bl.fmt_bytes(report.get('staging_bytes', 0))} made ready in "
                 f"{report['staging_seconds']:.2f} s")
    return text


def main(argv=None) -> int:
    args = parse_args(argv)
    bl.need_python_modules("h5py", "numpy")
    app = bl.find_app(args.app)
    os.makedirs(args.dir, exist_ok=True)
    folder = os.path.abspath(args.dir)
    fs = subprocess.run(["stat", "-f", "-c", "%T", folder], capture_output=True, text=True).stdout.strip()
    durable = fs not in ("tmpfs", "ramfs")
    ids = max(1, args.size // (args.dates * NUMS * 8))
    nbytes = args.dates * ids * NUMS * 8
    info = bl.machine_info(app)
    bl.print_machine(info)
    print(f"folder {folder} ({'disk: each contender followed by sync' if durable else 'memory-backed: no sync'}), "
          f"{bl.fmt_bytes(nbytes)} in and out ({args.dates} x {ids} x {NUMS}), {args.writers} dd streams each way")
    src = os.path.join(folder, "in.h5")
    bl.generate(app, src, args.dates, ids, NUMS, seed=7)
    bl.sync()
    h5py_script = os.path.join(folder, "h5py_loop.py")
    with open(h5py_script, "w") as f:
        f.write(H5PY_LOOP)
    block = max(1, (256 << 20) // (ids * NUMS * 8))
    if not durable:
        # All free memory but a margin (10%, at least 2 GiB) for the contenders' own.
        avail = bl.mem_available()
        seconds, touched = bl.warm_memory(avail - max(2 << 30, avail // 10), os.cpu_count() or 2)
        print(f"warmed {bl.fmt_bytes(touched)} of free memory in {seconds:.1f} s "
              f"({bl.gbps(touched, seconds):.2f} GB/s first touch), before any contender")
    spaces = [s for s in args.space.split(",") if s]
    tags = {space: "" if len(spaces) == 1 else f"_{space}" for space in spaces}  # "split" or "split_<space>"
    only = [c for c in args.only.split(",") if c]
    wanted = lambda contender: not only or contender in only  # noqa: E731
    apps = []  # (name, config)
    for space in spaces:
        for layout in ("single", "split"):
            if wanted(layout):
                name = layout + tags[space]
                path = os.path.join(folder, f"{name}.yaml")
                bl.write_config(path, {"input": {"file": "in.h5"}, "compute": {"space": space},
                                       "output": {"file": f"{name}.h5", "overwrite": True, "layout": layout}})
                apps.append((name, path))

    h5out = os.path.join(folder, "h5py.h5")
    tools = {"dd_pair": (lambda: dd_pair(folder, src, nbytes, args.writers, durable), None),
             "cp": (lambda: timed([["cp", src, os.path.join(folder, "cp.h5")]], durable), None),
             "h5py": (lambda: timed([[sys.executable, h5py_script, src, h5out, str(block)]], durable), h5out)}
    tools = {k: v for k, v in tools.items() if wanted(k)}
    times: dict[str, list[float]] = {k: [] for k in list(tools) + [name for name, _ in apps]}
    # CPU seconds (user + system) of each contender's processes, from the children's rusage.
    cpu: dict[str, list[float]] = {k: [] for k in times}

    def charged(name, run):
        """run(), its children's CPU seconds added to cpu[name]; returns what run() returns."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = run()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        return result

    described, stages = {}, {}
    for rep in range(args.repeat):
        for name, (run, out) in tools.items():
            times[name].append(charged(name, run))
            if out:
                check_dates(src, out)
            bl.remove(*(os.path.join(folder, f"dd_w{i}") for i in range(args.writers)),
                      os.path.join(folder, "cp.h5"), h5out)
        for name, yaml in apps:
            remove_output(folder, name)
            run = charged(name, lambda: bl.run_app(app, yaml, os.path.join(folder, f"{name}_run.json"),
                                                   then_sync=durable))
            times[name].append(run["wall_s"])
            described[name] = run["report"].get("output", "")
            stages[name] = describe_stages(run)
            check_dates(src, os.path.join(folder, f"{name}.h5"))
            remove_output(folder, name)
        print(f"repeat {rep + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))

    best = {k: min(v) for k, v in times.items()}
    best_cpu = {k: cpu[k][times[k].index(best[k])] for k in best}  # the best run's CPU time
    rows = [[k, f"{best[k]:.3f}", f"{bl.gbps(2 * nbytes, best[k]):.2f}", f"{best_cpu[k]:.2f}",
             f"{best_cpu[k] / best[k]:.1f}" if best[k] > 0 else "-"] for k in best]
    bl.print_table(["contender", "seconds (best)", "GB/s in+out", "cpu s", "cores busy"], rows, title="times")
    ratios = {}
    for space, tag in tags.items():
        label = f" [{space}]" if tag else ""
        split = best.get("split" + tag)
        if split is None:
            continue
        for name, text in (("dd_pair", "split / dd pair (target <= 1.4)"), ("cp", "cp / split (target >= 3)"),
                           ("h5py", "h5py / split (target >= 4)"), ("single" + tag, "single / split")):
            if name in best:
                ratios[text + label] = split / best[name] if name == "dd_pair" else best[name] / split
    bl.print_table(["ratio", "value"], [[k, f"{v:.2f}"] for k, v in ratios.items()], title="ratios (same run)")
    for name, text in described.items():
        print(f"{name}: output {text}\n    stages: {stages.get(name, '')}")
    if args.json:
        bl.write_json(args.json, {"machine": info, "folder": folder, "durable": durable, "bytes": nbytes,
                                  "shape": [args.dates, ids, NUMS], "writers": args.writers, "times": times,
                                  "cpu_s": cpu, "best": best, "ratios": ratios, "outputs": described,
                                  "stages": stages})
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
