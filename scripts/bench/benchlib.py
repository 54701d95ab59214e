"""Shared helpers for the benchmarks in scripts/bench/. Only the standard
library is imported at module level, so `--help` works with any Python 3.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# ----------------------------------------------------------------------------
# sizes and timing

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}


def parse_bytes(text: str | int) -> int:
    """'2GB' -> 2e9, '64MiB' -> 64*2^20, '123' -> 123."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 2GB, 512MiB, 1000000)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def fmt_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def gbps(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9 if seconds and seconds > 0 else float("nan")


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> float:
    return a / b if a and b and b == b and a == a else float("nan")


def seconds(fn) -> float:
    """Seconds of one call of fn()."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_time(fn, repeat: int, sync=None) -> float:
    """Median seconds of `repeat` calls of fn() after one warm-up call; sync() ends each call."""
    sync = sync or (lambda: None)
    fn()
    sync()
    return median([seconds(lambda: (fn(), sync())) for _ in range(repeat)])


def interleaved(runs: dict, rounds: int, warm_up: bool = True) -> dict[str, list[float]]:
    """Seconds of each contender in `rounds` rounds that run every one once, the order
    reversed every other round, so that load which comes and goes hits all alike."""
    if warm_up:
        for run in runs.values():
            run()
    times = {name: [] for name in runs}
    for r in range(rounds):
        for name in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            times[name].append(seconds(runs[name]))
    return times


# ----------------------------------------------------------------------------
# machine and tools


def machine_info(app: str | None = None) -> dict:
    info = {
        "hostname": socket.gethostname(),
        "nproc": os.cpu_count(),
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "loadavg_start": loadavg(),
    }
    # How busy the machine was just before we started, and a start sample for print_machine.
    a = _cpu_sample()
    time.sleep(1.0)
    b = _cpu_sample()
    info["busy_before"] = _others(a, b)["busy_share"]
    info["_cpu_start"] = b
    cpu = _proc_field("/proc/cpuinfo", "model name", lambda v: v.split(":", 1)[1].strip())
    mem = _proc_field("/proc/meminfo", "MemTotal", lambda v: int(v.split()[1]) * 1024)
    info.update({k: v for k, v in (("cpu", cpu), ("mem_total", mem)) if v is not None})
    for var in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "NUMBA_NUM_THREADS"):
        if os.environ.get(var):
            info[var] = os.environ[var]
    if app:
        try:
            out = subprocess.run([app, "--version"], capture_output=True, text=True, timeout=30).stdout
            info["app_version"] = " | ".join(line.strip() for line in out.splitlines() if line.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    return info


def _proc_field(path: str, name: str, parse):
    """parse(line) of the first line of a /proc file that starts with name, or None."""
    try:
        with open(path) as f:
            return next((parse(line) for line in f if line.startswith(name)), None)
    except OSError:
        return None


_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_sample() -> dict:
    """Machine-wide busy and steal seconds (/proc/stat) and this process's CPU, children included."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in f.readline().split()[1:9])
    t = os.times()
    return {"busy": (user + nice + system + irq + softirq) / _TCK, "steal": steal / _TCK,
            "own": t.user + t.system + t.children_user + t.children_system, "wall": time.monotonic()}


def _others(a: dict, b: dict) -> dict:
    wall = max(b["wall"] - a["wall"], 1e-9)
    cores = os.cpu_count() or 1
    others = max(0.0, (b["busy"] - a["busy"]) - (b["own"] - a["own"]))
    return {"wall_s": wall, "others_core_s": others, "others_share": others / (wall * cores),
            "busy_share": (b["busy"] - a["busy"]) / (wall * cores),
            "steal_share": (b["steal"] - a["steal"]) / (wall * cores)}


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def mem_available() -> int:
    return _proc_field("/proc/meminfo", "MemAvailable", lambda v: int(v.split()[1]) * 1024) or 0


def _find(what: str, explicit: str | None, env: str, candidates: list, hint: str) -> str:
    for c in [explicit, os.environ.get(env)] + candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    sys.exit(f"{what} not found: {hint}")


def find_bench(explicit: str | None) -> str:
    """The discount_bench binary: --bench, $DISCOUNT_BENCH, or a build under the repo."""
    return _find("discount_bench", explicit, "DISCOUNT_BENCH",
                 [str(REPO / "build" / d / "discount_bench") for d in ("bench", "openmp", "cuda")],
                 "build it (cmake --preset openmp -DDISCOUNT_BUILD_BENCH=ON && "
                 "cmake --build --preset openmp --target discount_bench) or pass --bench PATH")


def find_app(explicit: str | None) -> str:
    """The discount_app binary: --app, $DISCOUNT_APP, or a build under the repo."""
    return _find("discount_app", explicit, "DISCOUNT_APP",
                 [str(REPO / "build" / d / "app" / "discount_app") for d in ("bench", "openmp")]
                 + sorted(str(p) for p in (REPO / "build").glob("*/app/discount_app")),
                 "build it (see scripts/bench/README.md) or pass --app PATH")


def need_python_modules(*names: str) -> None:
    missing = []
    for name in names:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        sys.exit(f"{sys.executable} lacks {', '.join(missing)}; run this script with /usr/bin/python3")


def uniform_arrays(shape: tuple, seed: int = 1):
    """multBy (ids x nums), discount (shape) from uniform(0.5, 1.5), and an output array."""
    import numpy as np
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, shape[1:]), rng.uniform(0.5, 1.5, shape), np.empty(shape)


def numba_kernels():
    """Numba prange kernels on flat arrays: copy(d, o), and multiply(m, d, o) with o[n] = m[n % m.size] * d[n]."""
    from numba import njit, prange

    @njit(parallel=True)
    def copy(d, o):
        for n in prange(d.size):
            o[n] = d[n]

    @njit(parallel=True)
    def multiply(m, d, o):
        row = m.size
        for n in prange(d.size):
            o[n] = m[n % row] * d[n]
    return copy, multiply


# ----------------------------------------------------------------------------
# page cache and files


def sync() -> float:
    """Runs `sync`; returns its seconds."""
    return seconds(lambda: subprocess.run(["sync"], check=True))


def warm_file(path: str, block: int = 16 << 20) -> None:
    """Reads a file once so it sits in the page cache."""
    with open(path, "rb", buffering=0) as f:
        view = memoryview(bytearray(block))
        while f.readinto(view):
            pass


def warm_memory(nbytes: int, streams: int) -> tuple[float, int]:
    """Touches nbytes of anonymous memory once, in `streams` dd processes at once,
    and lets it go; returns (seconds, bytes touched). In a VM the first touch of a
    guest page is slow, so afterwards every contender meets pages in the same state."""
    streams, block = max(1, streams), 1 << 30
    blocks = max(0, nbytes // block)
    t0 = time.perf_counter()
    for done in range(0, blocks, streams):
        procs = [subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", f"bs={block}", "count=1",
                                  "iflag=fullblock"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(min(streams, blocks - done))]
        for p in procs:
            p.wait()
    return time.perf_counter() - t0, blocks * block


def remove(*paths) -> None:
    for p in paths:
        for q in (str(p), str(p) + ".partial"):
            try:
                os.unlink(q)
            except FileNotFoundError:
                pass


# ----------------------------------------------------------------------------
# running discount_app


def generate(app: str, path, dates: int, ids: int, nums: int, seed: int, force: bool = True) -> None:
    """`discount_app generate` of a [date, id, num] input file."""
    subprocess.run([app, "generate", "--dates", str(dates), "--ids", str(ids), "--nums", str(nums),
                    "--seed", str(seed), "--out", str(path)] + (["--force"] if force else []),
                   check=True, stdout=subprocess.DEVNULL)


def write_config(path: str | Path, config: dict) -> None:
    """JSON is valid YAML flow style; the app's strict parser reads it as is."""
    Path(path).write_text(json.dumps(config, indent=2) + "\n")


def run_app(app: str, config_path: str | Path, report_path: str | Path, extra: list[str] | None = None,
            then_sync: bool = False, env: dict | None = None) -> dict:
    """Runs `discount_app run CONFIG --report REPORT`. Returns wall seconds of the
    process, of the following `sync` (if asked), the parsed report and stderr."""
    remove(report_path)
    cmd = [app, "run", str(config_path), "--report", str(report_path)] + list(extra or [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=None if env is None else {**os.environ, **env})
    app_s = time.perf_counter() - t0
    sync_s = sync() if then_sync else 0.0
    result = {"cmd": " ".join(cmd), "rc": proc.returncode, "app_s": app_s, "sync_s": sync_s,
              "wall_s": app_s + sync_s, "stderr": proc.stderr[-4000:]}
    if proc.returncode != 0:
        raise RuntimeError(f"discount_app failed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    with open(report_path) as f:
        result["report"] = json.load(f)
    return result


def cv_dates_differ(src: str, out: str, dates: int, seed: int = 3) -> tuple[int, int, int]:
    """Whole dates of an output's cv against multBy * discount of its input, bit for bit: the first,
    the last and `dates` random ones. Returns (elements checked, elements that differ, dates)."""
    import h5py
    import numpy as np
    with h5py.File(src, "r") as f, h5py.File(out, "r") as o:
        m, d, cv = f["multBy"][...], f["discount"], o["cv"]
        rng = np.random.default_rng(seed)
        chosen = sorted(set(rng.integers(0, d.shape[0], dates).tolist()) | {0, d.shape[0] - 1})
        bad = sum(int(((m * d[date]).view(np.uint64) != cv[date].view(np.uint64)).sum()) for date in chosen)
        return len(chosen) * m.size, bad, len(chosen)


def stage(report: dict, name: str) -> dict | None:
    return next((s for s in report.get("stages", []) if s["name"] == name), None)


# ----------------------------------------------------------------------------
# command line and output


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description as written, and each option's default where it has one."""

    def _get_help_string(self, action):
        return action.help if action.default in (None, "", False) else super()._get_help_string(action)


def parser(doc: str, repeat: int | None = None, app: bool = True,
           repeat_help: str = "timed runs per variant; median reported") -> argparse.ArgumentParser:
    """An argument parser described by the script's docstring; with --app, --repeat (when given
    a default) and --json."""
    p = argparse.ArgumentParser(description=doc, formatter_class=_HelpFormatter)
    if app:
        p.add_argument("--app", help="discount_app binary (default: $DISCOUNT_APP, then build/bench, build/openmp)")
    if repeat is not None:
        p.add_argument("--repeat", type=int, default=repeat, help=repeat_help)
    p.add_argument("--json", metavar="PATH", help="write the raw results here as JSON")
    return p


def print_table(headers: list[str], rows: list[list], title: str | None = None) -> None:
    """Plain text table: first column left-aligned, the others right-aligned."""
    cells = [[_cell(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    if title:
        print(f"\n{title}")
    line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))
    print(line)
    print("-" * len(line))
    for r in cells:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def _cell(value) -> str:
    if isinstance(value, float):
        if value != value:
            return "-"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 0.001 or value == 0:
            return f"{value:.3f}"
        return f"{value:.1e}"
    return "-" if value is None else str(value)


def print_machine(info: dict) -> None:
    print(f"\nmachine: {info.get('hostname')}, nproc {info.get('nproc')}, {info.get('cpu', '?')}, "
          f"{fmt_bytes(info.get('mem_total', 0))} RAM, kernel {info.get('kernel')}")
    print(f"date:    {info.get('date')}")
    start = info.pop("_cpu_start", None)
    if start:
        o = _others(start, _cpu_sample())
        info.update(others_share=o["others_share"], steal_share=o["steal_share"])
        print(f"load:    before start {100 * info['busy_before']:.0f}% of all cores busy (load average "
              f"{info.get('loadavg_start')}); during the run other processes and kernel threads used "
              f"{100 * o['others_share']:.0f}% of the cores, hypervisor steal {100 * o['steal_share']:.0f}%")
        if max(info["busy_before"], o["others_share"]) > 0.15:
            print("WARNING: other work shared the machine (kernel I/O threads count too); figures are noisy")
    if info.get("app_version"):
        print(f"app:     {info['app_version']}")
    extra = {k: v for k, v in info.items() if k.startswith(("OMP_", "NUMBA_"))}
    if extra:
        print("env:     " + ", ".join(f"{k}={v}" for k, v in extra.items()))


def write_json(path: str | Path, obj) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    os.replace(tmp, path)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
