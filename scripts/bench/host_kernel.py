#!/usr/bin/python3
"""Every slicing of the host kernel against memcpy, NumPy and Numba, in memory.

Runs `discount_bench --mode kernel --space host` --rounds times, each round
followed by the Python peers (NumPy copyto and multiply, Numba prange copy and
kernels) on the same shape; medians, every result checked exactly.
`--slicings` is accepted for older command lines (the only mode).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

# The CPUs this process may use, read before Numba's OpenMP layer pins the main
# thread to one CPU under OMP_PROC_BIND: children get this mask back.
START_CPUS = os.sched_getaffinity(0)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def cpu_list(cpus) -> str:
    """{0, 1, 2, 5} -> '0-2,5'."""
    runs = []
    for c in sorted(cpus):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "?"


def own_thread_masks() -> str:
    """Each thread of this process (Numba's pool included) and its CPU mask."""
    masks = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                masks.append("[" + next(line.split()[1] for line in f if line.startswith("Cpus_allowed_list")) + "]")
        except (OSError, StopIteration):
            continue
    return f"{len(masks)} threads: " + " ".join(masks)


def build_kernels():
    """Numba kernels, compiled here so that --help needs no Numba: the synthetic source's fill
    (value(n) = 0.5 + (mix(key + n) >> 11) * 2^-53, lib/io/input/synthetic.hpp) and three products."""
    import numpy as np
    from numba import njit, prange

    C1, C2, C3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    S30, S27, S31, S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)

    @njit(inline="always")
    def mix(x):
        x = x + C1
        x = (x ^ (x >> S30)) * C2
        x = (x ^ (x >> S27)) * C3
        return x ^ (x >> S31)

    @njit(parallel=True)
    def fill(flat, key):
        for n in prange(flat.size):
            flat[n] = 0.5 + np.float64(mix(key + np.uint64(n)) >> S11) * 2.0 ** -53

    @njit(parallel=True)
    def triple(m, d, o):
        for a in prange(d.shape[0]):
            for i in range(d.shape[1]):
                for k in range(d.shape[2]):
                    o[a, i, k] = m[i, k] * d[a, i, k]

    @njit(parallel=True)
    def flat_rows(m1, d2, o2):
        for a in prange(d2.shape[0]):
            for j in range(d2.shape[1]):
                o2[a, j] = m1[j] * d2[a, j]

    return {"fill": fill, "key": lambda seed, stream: mix(np.uint64(seed) ^ np.uint64(stream << 56)),
            "triple": triple, "flat_rows": flat_rows}


def bits_sum(a) -> int:
    import numpy as np
    return int(a.reshape(-1).view(np.uint64).sum(dtype=np.uint64))


def bench_round(bench, args, path) -> dict:
    """discount_bench: every variant once per round, after its own warm-up round; its JSON."""
    cmd = [bench, "--mode", "kernel", "--space", "host", "--dates", str(args.dates), "--ids", str(args.ids),
           "--nums", str(args.nums), "--reps", str(args.repeat), "--json", path] + (["--slow"] if args.slow else []) \
        + (["--columns"] + args.columns.split(",") if args.columns else [])
    bl.log(f"[host_kernel] {' '.join(cmd)}")
    proc = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, START_CPUS))
    if proc.returncode != 0:
        sys.exit(f"discount_bench failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    with open(path) as f:
        return json.load(f)


def main(argv=None):
    p = bl.parser(__doc__, repeat=3)
    p.add_argument("--dates", type=int, default=100)
    p.add_argument("--ids", type=int, default=250_000)
    p.add_argument("--nums", type=int, default=5)
    p.add_argument("--slicings", action="store_true", help="the only mode (accepted for older command lines)")
    p.add_argument("--rounds", type=int, default=5, help="discount_bench runs, each followed by the Python peers; "
                   "every variant gets rounds x repeat timed runs")
    p.add_argument("--bench", help="discount_bench binary (default: $DISCOUNT_BENCH, then build/bench, "
                   "build/openmp, build/cuda)")
    p.add_argument("--slow", action="store_true", help="also the slow generic MDRange slicings")
    p.add_argument("--columns", help="also time the default and [id,num] in place with these column tiles "
                   "(elements, comma-separated; the default tile is 65536)")
    p.add_argument("--workdir", default="/tmp/discount_bench", help="where discount_bench's JSON goes")
    args = p.parse_args(argv)
    bl.need_python_modules("numpy", "numba")
    import numba
    import numpy as np

    info = bl.machine_info(bl.find_app(args.app))
    info["numba_threads"] = nb = numba.config.NUMBA_NUM_THREADS
    info["numpy"], info["numba"] = np.__version__, numba.__version__
    bench = bl.find_bench(args.bench)
    D, M, O = args.dates, args.ids, args.nums
    N = D * M * O
    kernel_bytes, copy_bytes = 16 * N + 8 * M * O, 16 * N
    need = 2 * (16 * N + 8 * M * O)  # this process's arrays and discount_bench's, alive together
    if need > 0.9 * bl.mem_available():
        sys.exit(f"{D} x {M} x {O} needs {bl.fmt_bytes(need)} here and in discount_bench; only "
                 f"{bl.fmt_bytes(bl.mem_available())} available: use a smaller --ids")
    k = build_kernels()
    m, d, o = np.empty((M, O)), np.empty((D, M, O)), np.empty((D, M, O))
    k["fill"](m.reshape(-1), k["key"](1, 1))
    k["fill"](d.reshape(-1), k["key"](1, 2))
    d1, o1, m1, d2, o2 = d.reshape(-1), o.reshape(-1), m.reshape(-1), d.reshape(D, M * O), o.reshape(D, M * O)
    copy, flat_mod = bl.numba_kernels()
    peers = [  # key, label, kind, body
        ("numpy_copyto", "copy: NumPy copyto, 1 thread (limit)", "copy", lambda: np.copyto(o, d)),
        ("numba_copy", f"copy: Numba prange o[n] = d[n], {nb} threads (limit)", "copy", lambda: copy(d1, o1)),
        ("numpy", "peer: NumPy multiply(m[None], d, out=o), 1 thread", "kernel",
         lambda: np.multiply(m[None], d, out=o)),
        ("numba_triple", f"peer: Numba prange, triple loop, {nb} threads", "kernel", lambda: k["triple"](m, d, o)),
        ("numba_flat_rows", f"peer: Numba prange, rows flattened, {nb} threads", "kernel",
         lambda: k["flat_rows"](m1, d2, o2)),
        ("numba_flat_mod", f"peer: Numba prange, n % (M*O), {nb} threads", "kernel", lambda: flat_mod(m1, d1, o1)),
    ]
    samples, checks = {key: [] for key, *_ in peers}, {}
    d_bits = bits_sum(d)
    np.multiply(m[None], d, out=o)
    reference = bits_sum(o)
    app_rows, invalid, bench_masks = {}, [], []  # app_rows: name -> {"kind", "bytes", "check", "seconds"}
    python_masks = own_thread_masks()  # Numba's pool exists now (the fill ran)
    bl.log(f"[host_kernel] this process (NumPy, Numba {numba.threading_layer()} layer, {nb} threads): "
           f"{python_masks}; discount_bench starts with CPUs {cpu_list(START_CPUS)}")
    if len(START_CPUS) < max(nb, 1):
        invalid.append(f"this process may use {len(START_CPUS)} CPUs for {nb} Numba threads")
    os.makedirs(args.workdir, exist_ok=True)
    for r in range(args.rounds):
        result = bench_round(bench, args, os.path.join(args.workdir, f"host_slicings_round{r}.json"))
        bench_masks.append(f"{result.get('threads')} threads [{result.get('pool_masks')}]")
        bl.log(f"[host_kernel]   round {r + 1}/{args.rounds}: discount_bench: {result.get('threads')} threads on "
               f"{result.get('pool_cpus')} CPUs, masks {result.get('pool_masks')}")
        if not result.get("valid", True):
            invalid.append(f"round {r + 1}: discount_bench's {result.get('threads')} threads had only "
                           f"{result.get('pool_cpus')} CPUs")
        for v in result["variants"]:
            row = app_rows.setdefault(v["name"], {"kind": v["kind"], "bytes": v["bytes"], "check": v["check"],
                                                  "seconds": []})
            row["seconds"] += v["seconds"]
            if v["check"] != "exact":
                row["check"] = v["check"]
        # the Python peers, the same number of times, in turn
        for rep in range(args.repeat + 1):  # rep 0 is the warm-up (JIT, page faults)
            for i in range(len(peers)):
                key, _, kind, fn = peers[(i + rep) % len(peers)]
                o.fill(np.nan)  # poison: a peer that writes nothing fails its check
                t = bl.seconds(fn)
                if rep:
                    samples[key].append(t)
                elif r == 0:
                    checks[key] = "exact" if bits_sum(o) == (d_bits if kind == "copy" else reference) else "MISMATCH"

    rows = [{"name": name if name.startswith("copy") else "app: " + name, "kind": v["kind"], "bytes": v["bytes"],
             "seconds": v["seconds"], "check": v["check"]} for name, v in app_rows.items()]
    rows += [{"name": label, "kind": kind, "bytes": copy_bytes if kind == "copy" else kernel_bytes,
              "seconds": samples[key], "check": checks.get(key, "?"), "key": key} for key, label, kind, _ in peers]
    for row in rows:
        s = sorted(row["seconds"])
        row["median_s"] = bl.median(s)
        row["gb_per_s"] = bl.gbps(row["bytes"], row["median_s"])
        row["min_gb_per_s"], row["max_gb_per_s"] = bl.gbps(row["bytes"], s[-1]), bl.gbps(row["bytes"], s[0])
    limit = max((r for r in rows if r["name"].endswith("(limit)")), key=lambda r: r["gb_per_s"])
    for row in rows:
        row["of_copy"] = row["gb_per_s"] / limit["gb_per_s"]

    print("\n" + "=" * 78)
    print(f"host kernel, every slicing: cv = multBy[None] * discount, [{D} x {M} x {O}] float64 "
          f"({bl.fmt_bytes(8 * N)} per array, in memory)")
    print(f"GB/s = (16 B x {N:,} elements + multBy {bl.fmt_bytes(8 * M * O)}) / median seconds (copies: 16 B per "
          f"element); {args.rounds} rounds x {args.repeat} runs per variant, interleaved, after warm-ups")
    print(f"limit = the fastest copy in this run: {limit['name']}, {limit['gb_per_s']:.1f} GB/s. Out of place the "
          f"app's kernels store around the cache (non-temporal) above the LLC size, as glibc memcpy does; "
          f"the 'cached stores' rows pay the write-allocate read")
    bl.print_machine(info)
    print(f"threads: Python (Numba {numba.threading_layer()} layer) {python_masks}; discount_bench started with "
          f"CPUs {cpu_list(START_CPUS)}, its pool per round: " + "; ".join(sorted({str(m) for m in bench_masks})))
    for line in invalid:
        print(f"INVALID RUN: {line}: the multi-thread figures below do not measure the machine")
    bl.print_table(["variant", "median ms", "GB/s", "min GB/s", "max GB/s", "of copy", "check"],
                   [[r["name"], 1e3 * r["median_s"], r["gb_per_s"], r["min_gb_per_s"], r["max_gb_per_s"],
                     f"{100 * r['of_copy']:.1f}%", r["check"]] for r in rows],
                   title="figures (median, and the slowest and fastest run)")

    loops = [r for r in rows if r["name"].startswith("app: [")
             and not any(w in r["name"] for w in ("generic", "cached", "streaming", "column"))]
    blas = [r for r in rows if r["name"].startswith("app: kernel: blas")]
    default = [r for r in loops if r["name"].startswith("app: [date,id,num] (default)")]
    numba_best = max((r for r in rows if r.get("key", "").startswith("numba_") and r["kind"] == "kernel"),
                     key=lambda r: r["gb_per_s"])
    numpy = next(r for r in rows if r.get("key") == "numpy")
    worst = min(loops + blas, key=lambda r: r["of_copy"])
    worst_default = min(default, key=lambda r: r["of_copy"])
    beat = min(worst_default["gb_per_s"] / numpy["gb_per_s"], worst_default["gb_per_s"] / numba_best["gb_per_s"])
    verdict = lambda ok: "met" if ok else "NOT met"  # noqa: E731
    targets = [
        ["every slicing and blas, out of place and in place (worst: " + worst["name"][5:] + ")",
         f"{100 * worst['of_copy']:.1f}%", ">= 80%", verdict(worst["of_copy"] >= 0.80)],
        ["the default, out of place and in place (worst: " + worst_default["name"][5:] + ")",
         f"{100 * worst_default['of_copy']:.1f}%", ">= 95%", verdict(worst_default["of_copy"] >= 0.95)],
        [f"the default's worst / max(NumPy, best Numba: {numba_best['name'][6:]})", f"{beat:.2f}x", "> 1",
         verdict(beat > 1)],
    ]
    bl.print_table(["target (same run)", "figure", "target", "verdict"], targets, title="targets")
    json_path = args.json or os.path.join(args.workdir, "host_slicings.json")
    bl.write_json(json_path, {"machine": info, "args": vars(args), "shape": [D, M, O], "limit": limit["name"],
                              "invalid": invalid, "python_threads": python_masks, "bench_threads": bench_masks,
                              "start_cpus": cpu_list(START_CPUS), "limit_gb_per_s": limit["gb_per_s"], "rows": rows,
                              "targets": targets})
    print(f"\nraw results: {json_path}")


if __name__ == "__main__":
    main()
