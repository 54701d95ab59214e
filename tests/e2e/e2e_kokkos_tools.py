#!/usr/bin/env python3
"""Kokkos Tools regions and kernel labels.

The app runs a job with a Kokkos Tools library loaded: tests/tools/
kokkos_tool_recorder.cpp, which writes every region push and pop and every
kernel begin and end, with the thread that made it, to a file. The cases
check what kokkos-tools' space-time-stack or kernel timer, or Nsight Systems
through the NVTX connector, would show:

  - every pipeline stage of the run report (read, write, kernel; h2d and d2h
    when the kernel runs in device memory) appears as a region
    discount::<stage>, as many times as the report counts slabs on that stage
    (reads and uploads once more for a resident multBy), and so do the
    staging fault-in (once per staging buffer) and the input sums;
  - every push is popped on its own thread, in order (the recorder keeps one
    stack per thread and logs what each pop closes): no pop without a push,
    nothing left open at finalize, and per thread the pops replay the pushes;
  - every kernel of the app (label discount::apply*) is launched inside a
    discount::kernel region of the same thread, once per slab, and ends;
  - the output is still right: cv against NumPy, bit for bit (random non-zero
    inputs of odd sizes), so the kernels counted are the ones that ran.

Kokkos 3.4.01 loads the library named by KOKKOS_PROFILE_LIBRARY, Kokkos 4
and later the one in KOKKOS_TOOLS_LIBS; both are set, to the same file.
The library is found beside the app's build (tests/tools/), or at
$DISCOUNT_KOKKOS_TOOL.
"""

import collections
import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

TOOL_NAME = "libdiscount_kokkos_tool_recorder.so"


def tool_library(ctx):
    path = os.environ.get("DISCOUNT_KOKKOS_TOOL") or os.path.join(
        os.path.dirname(os.path.dirname(ctx.app)), "tests", "tools", TOOL_NAME)
    E.check(os.path.isfile(path), f"the recorder tool library {path} is missing: build the target "
                                  "discount_kokkos_tool_recorder (tests/tools) or set DISCOUNT_KOKKOS_TOOL")
    return path


def run_recorded(ctx, yaml, report):
    log = os.path.join(ctx.work, "tool.log")
    lib = tool_library(ctx)
    env = {"KOKKOS_TOOLS_LIBS": lib, "KOKKOS_PROFILE_LIBRARY": lib, "DISCOUNT_TOOL_LOG": log}
    E.expect_rc(E.app(ctx, "run", yaml, "--report", report, env=env), 0, "run with the recorder tool")
    E.check(os.path.exists(log), f"the tool wrote nothing to {log}: Kokkos did not load {lib}")
    with open(log) as f:
        events = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    with open(report) as f:
        return events, json.load(f)


def replay(events):
    """Checks the per-thread nesting; returns (pushes by name, kernels as (label, enclosing region))."""
    E.check(events and events[0][0] == "init", f"the first event is not init: {events[:3]}")
    E.check(events[-1][0] == "finalize", f"the last event is not finalize (Kokkos not finalised?): {events[-3:]}")
    stacks = collections.defaultdict(list)
    pushes, kernels, open_kernels = collections.Counter(), [], collections.Counter()
    for event in events:
        kind, thread = event[0], event[1]
        E.check(kind not in ("unmatched-pop", "open"), f"unbalanced regions: {event}")
        if kind == "push":
            stacks[thread].append(event[2])
            pushes[event[2]] += 1
        elif kind == "pop":
            E.check(stacks[thread] and stacks[thread][-1] == event[2],
                    f"thread {thread} pops {event[2]} but its innermost region is {stacks[thread][-1:]}")
            stacks[thread].pop()
        elif kind.startswith("begin_"):
            kernels.append((event[2], stacks[thread][-1] if stacks[thread] else None, thread))
            open_kernels[event[2]] += 1
        elif kind.startswith("end_"):
            E.check(open_kernels[event[2]] > 0, f"kernel {event[2]} ends without a begin")
            open_kernels[event[2]] -= 1
    left = {t: s for t, s in stacks.items() if s}
    E.check(not left, f"regions still open at the end, by thread: {left}")
    E.check(not +open_kernels, f"kernels that never ended: {dict(+open_kernels)}")
    return pushes, kernels


def check_run(ctx, dates, ids, nums, memory, compute=None, seed=0):
    rng = np.random.default_rng(seed)
    src = E.write_input(os.path.join(ctx.work, "in.h5"), E.random_nonzero(rng, (ids, nums)),
                        E.random_nonzero(rng, (dates, ids, nums)))
    out = os.path.join(ctx.work, "out.h5")
    yaml = E.write_job(os.path.join(ctx.work, "job.yaml"), "in.h5", "out.h5", memory=memory, compute=compute)
    events, report = run_recorded(ctx, yaml, os.path.join(ctx.work, "run.json"))
    E.check_output(out, E.expected_cv(src))

    pushes, kernels = replay(events)
    stages = {s["name"]: s["slabs"] for s in report["stages"]}
    slabs = report["slabs"]["run"]
    E.check(slabs >= 2, f"the job ran {slabs} slab(s): too few to tell regions per slab")
    for name in ("read", "kernel", "write"):
        E.check(stages.get(name) == slabs, f"the report's {name} stage counts {stages.get(name)} slabs, not {slabs}")
    E.check(("h2d" in stages) == ("d2h" in stages), f"report stages {sorted(stages)}")
    copies = "h2d" in stages
    resident = sum(1 for e in events if e[0] == "push" and e[2] == "discount::read") - stages["read"]
    E.check(resident in (0, 1), f"{resident} read regions beyond one per slab")
    fused = report["kernel"] == "fused"
    want = {"discount::pipeline": 1, "discount::read": stages["read"] + resident, "discount::write": stages["write"]}
    if not fused:
        want["discount::kernel"] = stages["kernel"]
    if copies:
        want["discount::h2d"] = stages["h2d"] + resident
        want["discount::d2h"] = stages["d2h"]
    for name, count in want.items():
        E.check(pushes[name] == count, f"region {name}: {pushes[name]} pushes, expected {count}; all: {dict(pushes)}")
    E.check(pushes["discount::staging"] >= 1, f"no staging region: {dict(pushes)}")
    E.check(pushes["discount::input_sums"] >= 1, f"no input_sums region: {dict(pushes)}")
    unknown = {n for n in pushes if n.startswith("discount::")} - set(want) - {"discount::staging",
                                                                              "discount::input_sums",
                                                                              "discount::kernel"}
    E.check(not unknown, f"regions nobody expects: {sorted(unknown)}")
    if not copies:
        E.check(not any(n in pushes for n in ("discount::h2d", "discount::d2h")), "copy regions without copies")

    ours = [k for k in kernels if k[0].startswith("discount::apply")]
    kernel_threads = {e[1] for e in events if e[0] == "push" and e[2] == "discount::kernel"}
    read_threads = {e[1] for e in events if e[0] == "push" and e[2] == "discount::read"}
    write_threads = {e[1] for e in events if e[0] == "push" and e[2] == "discount::write"}
    if fused:
        # The reader's I/O threads multiply each piece as it lands: one
        # kernel region per piece, on those threads, and no Kokkos kernel.
        E.check(not ours, f"kernel: fused launched Kokkos kernels: {ours}")
        E.check(pushes["discount::kernel"] >= slabs,
                f"{pushes['discount::kernel']} discount::kernel regions for {slabs} slabs")
        main = {e[1] for e in events if e[0] == "push" and e[2] == "discount::pipeline"}
        E.check(kernel_threads and not (kernel_threads & (write_threads | main)),
                f"threads: kernel {kernel_threads}, write {write_threads}, main {main}")
        E.check(read_threads & kernel_threads, f"threads: read {read_threads}, kernel {kernel_threads}: "
                                               "the reader thread multiplies no piece")
        return set()
    E.check(len(ours) == slabs, f"{len(ours)} discount::apply* kernels for {slabs} slabs: {kernels}")
    outside = [k for k in ours if k[1] != "discount::kernel"]
    E.check(not outside, f"kernels not directly inside a discount::kernel region: {outside}")
    E.check(len(kernel_threads) == 1 and len(write_threads) == 1 and not (kernel_threads & write_threads),
            f"threads: kernel {kernel_threads}, write {write_threads} (the writer has its own thread)")
    E.check(read_threads - kernel_threads, f"threads: read {read_threads}, kernel {kernel_threads}")
    return {k[0] for k in ours}


def stages_named(ctx):
    """One date per slab (7 slabs of 1009 x 3), resident multBy, the build's default space, MDRange."""
    labels = check_run(ctx, 7, 1009, 3, memory={"max_slab": 1009 * 3 * 8, "pipeline_depth": 2},
                       compute={"kernel": "mdrange"}, seed=25)
    E.check(labels, "no kernel label")


def host_space(ctx):
    """The host kernel in every build, two dates per slab, [id, num] parallel."""
    labels = check_run(ctx, 5, 2003, 3, memory={"max_slab": 2 * 2003 * 3 * 8, "pipeline_depth": 2},
                       compute={"space": "host", "parallel_dims": ["id", "num"]}, seed=26)
    E.check(labels == {"discount::apply_host"}, f"host kernel labels {labels}")


def fused_kernel(ctx):
    """Host space with the default slicing: kernel: auto takes fused; id slabs of 3 x 2011 x 3."""
    labels = check_run(ctx, 3, 6 * 2011, 3, memory={"max_slab": 3 * 2011 * 3 * 8, "pipeline_depth": 2,
                                                     "chunk_axis": "id"},
                       compute={"space": "host"}, seed=27)
    E.check(labels == set(), f"kernel labels {labels} under kernel: fused")


def unstaged(ctx):
    """memory.staging: none, the build's default space: the I/O threads push read, kernel and write once per
    piece of ~1 MiB (with a GPU also h2d and d2h, and one discount::apply_piece kernel per piece inside its
    kernel region); no staging region, no stage on the main thread. 9 x 40009 x 3: two pieces per 2-date slab."""
    dates, ids, nums = 9, 40009, 3
    rng = np.random.default_rng(28)
    src = E.write_input(os.path.join(ctx.work, "in.h5"), E.random_nonzero(rng, (ids, nums)),
                        E.random_nonzero(rng, (dates, ids, nums)))
    yaml = E.write_job(os.path.join(ctx.work, "job.yaml"), "in.h5", "out.h5",
                       output={"layout": "split", "parts": 3},
                       memory={"staging": "none", "max_slab": 2 * ids * nums * 8, "chunk_axis": "date"})
    events, report = run_recorded(ctx, yaml, os.path.join(ctx.work, "run.json"))
    E.check_output(os.path.join(ctx.work, "out.h5"), E.expected_cv(src))
    pushes, kernels = replay(events)
    stages = {s["name"]: s["slabs"] for s in report["stages"]}
    slabs = report["slabs"]["run"]
    E.check(slabs == 5, f"the job ran {slabs} slab(s), expected 5")
    copies = "h2d" in stages
    # Two pieces per 2-date slab (1.92 MB), one for the last slab (1 date); and the resident multBy's read.
    pieces = 2 * 4 + 1
    want = {"discount::pipeline": 1, "discount::read": pieces + 1, "discount::kernel": pieces,
            "discount::write": pieces + slabs}  # each piece's write, and each slab's record
    if copies:
        want["discount::h2d"] = pieces + 1  # and the resident multBy's upload
        want["discount::d2h"] = pieces
    for name, count in want.items():
        E.check(pushes[name] == count, f"region {name}: {pushes[name]} pushes, expected {count}; all: {dict(pushes)}")
    unknown = {n for n in pushes if n.startswith("discount::")} - set(want) - {"discount::input_sums"}
    E.check(not unknown, f"regions nobody expects under staging: none: {sorted(unknown)}")
    ours = [k for k in kernels if k[0].startswith("discount::apply")]
    if copies:
        E.check(len(ours) == pieces and all(k[0] == "discount::apply_piece" and k[1] == "discount::kernel"
                                            for k in ours), f"device pieces' kernels: {ours}")
    else:
        E.check(not ours, f"Kokkos kernels in host memory under staging: none: {ours}")
    main = {e[1] for e in events if e[0] == "push" and e[2] == "discount::pipeline"}
    per_stage = {name: {e[1] for e in events if e[0] == "push" and e[2] == "discount::" + name}
                 for name in ("kernel", "write")}
    E.check(per_stage["kernel"] and per_stage["kernel"] == per_stage["write"] and not (per_stage["kernel"] & main),
            f"threads: {per_stage}, main {main}: each I/O thread should multiply and write its own pieces")


CASES = [
    ("stages_named", stages_named),
    ("host_space", host_space),
    ("fused_kernel", fused_kernel),
    ("unstaged", unstaged),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
