#!/usr/bin/env python3
"""memory.staging: none. In host memory each I/O thread moves whole slabs of
its own in ~1 MiB pieces through a small buffer (read, checks, multiply,
write): no staging ring (docs/config.md).

Every case writes random non-zero odd-sized inputs with h5py and compares the
result, read back with h5py, bit for bit with NumPy; the output's pages are
never filled at creation, so a piece that was not written cannot match.
  - split and single outputs, three axis orders, a sub-range, float32 output,
    pieces that cross run edges (a transposed file's date slabs); `plan`
    and the run header say which path runs; verify passes;
  - kill -9 mid-run, then a resume with other slab sizes, whose slabs cross
    the parts' edges (those go whole through one slab buffer): exact;
  - a NaN is reported at the same element as on the staging ring;
  - none is refused with exit 78 where it cannot run, saying why;
  - auto keeps the ring off a memory-backed file system.
"""

import os
import signal
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 11, 30011, 3  # one date: 720 KiB; the pieces (1 MiB) cross date edges
DATE_BYTES = IDS * NUMS * 8
UNSTAGED = "no staging ring (memory.staging: none)"  # both texts hold it


def make_job(ctx, name, axes=("date", "id", "num"), seed=5, output=None, memory=None, inp=None, compute=None):
    d = ctx.dir(name)
    rng = np.random.default_rng(seed)
    shape = {"date": DATES, "id": IDS, "num": NUMS}
    src = E.write_input(os.path.join(d, "in.h5"), E.random_nonzero(rng, (IDS, NUMS)),
                        E.random_nonzero(rng, tuple(shape[a] for a in axes)))
    out = dict({"layout": "split", "parts": 3, "checkpoint_seconds": 0}, **(output or {}))
    mem = dict({"staging": "none", "max_slab": 2 * DATE_BYTES, "chunk_axis": "date"}, **(memory or {}))
    # Host memory: on a GPU build compute.space: device copies through the ring.
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", input=dict({"axes": list(axes)}, **(inp or {})),
                       output=out, memory=mem, compute=dict({"space": "host"}, **(compute or {})))
    return d, yaml, src, os.path.join(d, "out.h5")


def case_matches_numpy(ctx):
    gpu = "CUDA yes" in E.app(ctx, "--version").stdout
    for name, axes, output, inp in [
        ("split", ("date", "id", "num"), {}, {}),
        ("single", ("date", "id", "num"), {"layout": "single"}, {}),
        ("device", ("date", "id", "num"), {}, {}),  # with a GPU: each piece there and back
        ("transposed", ("id", "date", "num"), {}, {}),
        ("num_first", ("num", "date", "id"), {"dtype": "float32"}, {}),
        ("subrange", ("date", "id", "num"), {}, {"dates": [2, 9], "ids": [7, 29001]}),
    ]:
        d, yaml, src, out = make_job(ctx, name, axes=axes, output=output, inp=inp,
                                     compute={"space": "device"} if name == "device" else None)
        says = "multiplies each on the GPU" if name == "device" and gpu else UNSTAGED
        plan = E.expect_rc(E.app(ctx, "plan", "--no-measure", yaml, cwd=d), 0, f"{name}: plan").stdout
        E.check(says in plan, f"{name}: plan does not say which path runs:\n{plan}")
        r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, f"{name}: run")
        E.check(says in r.stdout, f"{name}: the run header does not say which path runs:\n{r.stdout}")
        E.check("page-cache writes of ~1 MiB pieces" in r.stdout, f"{name}: the output line:\n{r.stdout}")
        # The multiply ran on pieces in cache (or as per-piece launches): no limit to hold it against.
        kernel_row = [line for line in r.stdout.splitlines() if line.startswith("kernel ")]
        E.check(len(kernel_row) == 1 and kernel_row[0].split()[-2:] == ["-", "-"],
                f"{name}: the kernel's row should show no limit:\n{r.stdout}")
        if name == "split":  # measured rates: the prediction adds each thread's stages
            measured = E.expect_rc(E.app(ctx, "plan", yaml, cwd=d), 0, f"{name}: plan (measured)").stdout
            E.check("memory.staging: none: each I/O thread's read + kernel + write add up" in measured,
                    f"{name}: plan's prediction line:\n{measured}")
        expected = E.expected_cv(src, axes=axes, dates=inp.get("dates"), ids=inp.get("ids"))
        if output.get("dtype") == "float32":  # rounded once from the float64 product
            with h5py.File(out, "r") as f:
                E.check(f["cv"].dtype == np.dtype("<f4"), f"{name}: cv is {f['cv'].dtype}, expected float32")
                got, want = f["cv"][...], expected.astype(np.float32)
                E.check(np.array_equal(got.view(np.uint32), want.view(np.uint32)), f"{name}: float32 cv differs from NumPy's")
        else:
            E.check_output(out, expected, what=name)
        E.expect_rc(E.app(ctx, "verify", yaml, cwd=d), 0, f"{name}: verify")


def case_kill9_resume_other_cut(ctx):
    d, yaml, src, out = make_job(ctx, "kill", memory={"max_slab": DATE_BYTES}, output={"parts": 4})
    hold = E.Hold(ctx, 4)
    proc, _, _ = E.start([ctx.app, "run", "-q", yaml], d, os.path.join(ctx.work, "killed"), env=hold.env)
    hold.wait(4, proc=proc)
    E.check(not os.path.exists(out), "<out> exists mid-run")
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    # Two dates a slab now: the parts (3, 3, 3 and 2 one-date slabs) end inside slabs.
    again = E.write_job(os.path.join(d, "again.yaml"), "in.h5", "out.h5", input={"axes": ["date", "id", "num"]},
                        output={"layout": "split", "parts": 4, "checkpoint_seconds": 0},
                        memory={"staging": "none", "max_slab": 2 * DATE_BYTES, "chunk_axis": "date"},
                        compute={"space": "host"})
    r = E.expect_rc(E.app(ctx, "run", again, cwd=d), 0, "resume")
    E.check("resuming" in r.stdout, f"the rerun did not resume:\n{r.stdout}")
    E.check_output(out, E.expected_cv(src), what="resumed with another cut")
    E.expect_rc(E.app(ctx, "verify", again, cwd=d), 0, "verify after the resume")


def case_nan_same_place_as_ring(ctx):
    messages = {}
    for staging in ("none", "ring"):
        d, yaml, src, out = make_job(ctx, "nan_" + staging, memory={"staging": staging})
        with h5py.File(src, "r+") as f:
            f["discount"][7, 20011, 1] = np.nan
        r = E.app(ctx, "run", "-q", yaml, cwd=d)
        E.check(r.rc == E.EX_DATA, f"{staging}: a NaN gave exit {r.rc}, expected 65:\n{r}")
        messages[staging] = r.stderr.strip()
    E.check("NaN at [date 7, id 20011, num 1]" in messages["none"], f"none's message: {messages['none']}")
    E.check(messages["none"] == messages["ring"], f"the paths report the NaN differently:\n{messages}")


def case_refused_where_it_cannot_run(ctx):
    rows = [
        ("mdrange", {"compute": {"kernel": "mdrange"}}, "compute.kernel"),
        ("checksum", {"output": {"mode": "checksum", "layout": "single"}}, "output.mode: file"),
        ("id_slabs", {"memory": {"chunk_axis": "id"}}, "id slabs"),
        ("compressed", {"compressed": True}, "positional reads"),
    ]
    for name, change, says in rows:
        d, yaml, src, out = make_job(ctx, "refused_" + name, output=change.get("output"), memory=change.get("memory"),
                                     compute=change.get("compute"))
        if change.get("compressed"):
            rng = np.random.default_rng(3)
            E.write_input(src, E.random_nonzero(rng, (IDS, NUMS)), E.random_nonzero(rng, (DATES, IDS, NUMS)),
                          disc_kwargs={"chunks": (1, 1000, NUMS), "compression": "gzip"})
        r = E.app(ctx, "run", "-q", yaml, cwd=d)
        E.check(r.rc == E.EX_CONFIG and "memory.staging: none" in r.stderr and says in r.stderr,
                f"{name}: expected exit 78 naming '{says}':\n{r}")
        E.check(not os.path.exists(out) and not os.path.exists(out + ".partial"), f"{name}: output left behind")


def case_auto_on_a_disk(ctx):
    """auto on a disk: none for an output the page cache takes whole, in host memory
    (the ring for outputs over 1 GiB is resolve's unit test); with a GPU, the ring."""
    gpu = "CUDA yes" in E.app(ctx, "--version").stdout
    for name, compute in [("host", {"space": "host"}), ("device", {"space": "device"})]:
        d, yaml, src, out = make_job(ctx, "auto_" + name, memory={"staging": "auto"}, output={"layout": "single"},
                                     compute=compute)
        if E.app(ctx, "plan", "--no-measure", yaml, cwd=d).stdout.find("memory-backed") >= 0:
            raise E.Skip("the scratch folder is memory-backed here")
        r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, f"{name}: run")
        if name == "device" and gpu:
            E.check(UNSTAGED not in r.stdout and "multiplies each on the GPU" not in r.stdout,
                    f"auto took none for a GPU job on a disk:\n{r.stdout}")
        else:
            E.check(UNSTAGED in r.stdout and "page-cache writes of ~1 MiB pieces" in r.stdout,
                    f"{name}: auto kept the ring for a small output on a disk:\n{r.stdout}")
        E.check_output(out, E.expected_cv(src), what=f"auto on a disk, {name}")


CASES = [
    ("matches_numpy", case_matches_numpy),
    ("kill9_resume_other_cut", case_kill9_resume_other_cut),
    ("nan_same_place_as_ring", case_nan_same_place_as_ring),
    ("refused_where_it_cannot_run", case_refused_where_it_cannot_run),
    ("auto_on_a_disk", case_auto_on_a_disk),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
