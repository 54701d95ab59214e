#!/usr/bin/env python3
"""Reliability as a new user meets it: duplicate YAML keys, HDF5 layouts found
in real data, output datasets inside groups, one job per output, a lost
stdout, and budgets beyond the machine.

Every input fixture is built here with h5py from random non-zero NumPy
arrays; results are compared bit for bit with NumPy's product of those same
arrays (never with what the app read). Each layout either runs exactly, with
the read path the app names (positional reads only where they are exactly
right), or is refused with one line before any output file exists. Runs
start from a directory other than the data's, so nothing resolves by luck
against the working directory.
"""

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

h5py = E.h5py
DATES, IDS, NUMS = 7, 1013, 5  # odd sizes


def arrays(seed=3, dates=DATES, ids=IDS, nums=NUMS):
    rng = np.random.default_rng(seed)
    return E.random_nonzero(rng, (ids, nums)), E.random_nonzero(rng, (dates, ids, nums))


def product(mult, disc):
    return mult[None, :, :] * disc


def output_files(directory):
    """Anything a run may leave for its output: the result, the partial, its
    temporary and its lock file."""
    return sorted(n for n in os.listdir(directory) if n.startswith("out.h5"))


class Layout:
    """A data directory holding the fixture, a YAML beside it, and another
    directory to run from."""

    def __init__(self, ctx, name="in.h5"):
        self.ctx = ctx
        self.data = ctx.dir("data")
        self.elsewhere = ctx.dir("elsewhere")
        self.h5 = os.path.join(self.data, name)
        self.out = os.path.join(self.data, "out.h5")

    def job(self, input=None, output=None, memory=None, **top):
        return E.write_job(os.path.join(self.data, "job.yaml"), os.path.basename(self.h5), "out.h5",
                           input=input, output=output, memory=memory, **top)

    def run(self, *args, **kw):
        return E.app(self.ctx, "run", *args, cwd=self.elsewhere, **kw)


def expect_exact(layout, expected, read_path, input=None, dataset="cv"):
    """Runs the job from elsewhere; checks the result bit for bit and the read
    path the app names in its input line."""
    job = layout.job(input=input, output={"dataset": dataset} if dataset != "cv" else None)
    r = E.expect_rc(layout.run(job), 0, "run")
    line = next((ln for ln in r.stdout.splitlines() if "[discount_app] input" in ln), "")
    E.check(read_path in line, f"expected read path '{read_path}' in the input line:\n{line}\n{r}")
    E.check_output(layout.out, expected, dataset=dataset)
    E.check(output_files(layout.data) == ["out.h5"], f"leftovers: {output_files(layout.data)}")
    v = E.expect_rc(E.app(layout.ctx, "verify", job, cwd=layout.elsewhere), 0, "verify from elsewhere")
    E.check("all equal" in v.stdout, str(v))
    return r


def expect_refused(layout, rc, words, input=None):
    """Refused with one line naming `words`, before any output file exists."""
    job = layout.job(input=input)
    r = E.expect_rc(layout.run(job), rc, "refusal")
    lines = r.stderr_lines
    E.check(len(lines) == 1, f"expected one stderr line:\n{r}")
    for w in words:
        E.check(w in lines[0], f"'{w}' not in the refusal: {lines[0]}")
    E.check(output_files(layout.data) == [], f"output files exist after a refusal: {output_files(layout.data)}")
    return r


# --------------------------------------------------------------------------
# 1. duplicate keys


def case_duplicate_key_top(ctx):
    d = ctx.dir("job")
    mult, disc = arrays()
    E.write_input(os.path.join(d, "in.h5"), mult, disc)
    yaml = E.write_text(os.path.join(d, "job.yaml"),
                        "input: {file: in.h5}\noutput: {file: out.h5}\nmemory:\n  host_budget: 1GiB\n"
                        "memory:\n  host_budget: 2GiB\n")
    r = E.expect_rc(E.app(ctx, "run", yaml), E.EX_CONFIG, "duplicate top-level key")
    E.check(len(r.stderr_lines) == 1, f"one line expected:\n{r}")
    E.check(f"{yaml}:5:1: duplicate key 'memory' (first given at {yaml}:3:1)" in r.stderr, str(r))
    E.check(output_files(d) == [], f"output files after a refusal: {output_files(d)}")


def case_duplicate_key_nested(ctx):
    d = ctx.dir("job")
    mult, disc = arrays()
    E.write_input(os.path.join(d, "in.h5"), mult, disc)
    E.write_input(os.path.join(d, "other.h5"), mult, disc)
    yaml = E.write_text(os.path.join(d, "job.yaml"),
                        "input:\n  file: in.h5\n  multiplier: multBy\n  file: other.h5\noutput: {file: out.h5}\n")
    for command in ("run", "plan", "config"):
        r = E.expect_rc(E.app(ctx, command, yaml), E.EX_CONFIG, f"{command}: duplicate nested key")
        E.check(len(r.stderr_lines) == 1, f"one line expected:\n{r}")
        E.check(f"{yaml}:4:3: duplicate key 'input.file' (first given at {yaml}:2:3)" in r.stderr, str(r))
    E.check(output_files(d) == [], f"output files after a refusal: {output_files(d)}")


# --------------------------------------------------------------------------
# 2. input layouts


def case_layout_virtual(ctx):
    lay = Layout(ctx, "master.h5")
    mult, disc = arrays(5)
    # discount split by dates over two source files; multBy a VDS of one source.
    cut = 3
    for name, part in (("src0.h5", disc[:cut]), ("src1.h5", disc[cut:])):
        with h5py.File(os.path.join(lay.data, name), "w") as f:
            f["d"] = part
    with h5py.File(os.path.join(lay.data, "msrc.h5"), "w") as f:
        f["m"] = mult
    with h5py.File(lay.h5, "w") as f:
        layout = h5py.VirtualLayout(shape=disc.shape, dtype="f8")
        layout[:cut] = h5py.VirtualSource("src0.h5", "d", shape=(cut, IDS, NUMS))
        layout[cut:] = h5py.VirtualSource("src1.h5", "d", shape=(DATES - cut, IDS, NUMS))
        f.create_virtual_dataset("discount", layout, fillvalue=np.nan)
        mlayout = h5py.VirtualLayout(shape=mult.shape, dtype="f8")
        mlayout[:] = h5py.VirtualSource("msrc.h5", "m", shape=mult.shape)
        f.create_virtual_dataset("multBy", mlayout, fillvalue=np.nan)
    expect_exact(lay, product(mult, disc), "HDF5 reads (virtual)")
    # A missing source would read as fill values: refused instead.
    os.unlink(lay.out)
    os.rename(os.path.join(lay.data, "src1.h5"), os.path.join(lay.data, "gone.h5"))
    expect_refused(lay, E.EX_NOINPUT, ["'discount'", "virtual", "'src1.h5'", "missing"])


def case_layout_external_link(ctx):
    lay = Layout(ctx, "master.h5")
    mult, disc = arrays(7)
    E.write_input(os.path.join(lay.data, "data.h5"), mult, disc)
    with h5py.File(lay.h5, "w") as f:
        f["multBy"] = h5py.ExternalLink("data.h5", "/multBy")
        f["discount"] = h5py.ExternalLink("data.h5", "/discount")
    # The master file is tiny: a positional read at the target's offset in
    # the master (the old bug) would hit its end.
    E.check(os.path.getsize(lay.h5) < disc.nbytes, "master file unexpectedly large")
    expect_exact(lay, product(mult, disc), "positional reads from")
    # A link whose target file is gone: one line naming the link.
    os.unlink(lay.out)
    os.unlink(os.path.join(lay.data, "data.h5"))
    expect_refused(lay, E.EX_NOINPUT, ["'multBy'", "external link to 'data.h5:/multBy'", "cannot be opened"])


def case_layout_soft_link(ctx):
    lay = Layout(ctx)
    mult, disc = arrays(9)
    with h5py.File(lay.h5, "w") as f:
        f["store/m"] = mult
        f["store/d"] = disc
        f["multBy"] = h5py.SoftLink("/store/m")
        f["discount"] = h5py.SoftLink("/store/d")
        f["dangling"] = h5py.SoftLink("/store/nothing")
    expect_exact(lay, product(mult, disc), ", positional reads)")
    os.unlink(lay.out)
    expect_refused(lay, E.EX_NOINPUT, ["'dangling'", "soft link to '/store/nothing'"],
                   input={"discount": "dangling"})


def case_layout_external_raw(ctx):
    lay = Layout(ctx)
    mult, disc = arrays(11)
    # discount's bytes in two flat files beside the .h5 (the second at an offset).
    half = disc.nbytes // 2
    raw = disc.astype("<f8").tobytes()
    with open(os.path.join(lay.data, "d0.raw"), "wb") as f:
        f.write(raw[:half])
    with open(os.path.join(lay.data, "d1.raw"), "wb") as f:
        f.write(b"\x00" * 100 + raw[half:])
    with h5py.File(lay.h5, "w") as f:
        f["multBy"] = mult
        f.create_dataset("discount", shape=disc.shape, dtype="<f8",
                         external=[("d0.raw", 0, half), ("d1.raw", 100, disc.nbytes - half)])
    expect_exact(lay, product(mult, disc), "HDF5 reads (external raw storage)")
    # A short external file would read as zeros: refused instead.
    os.unlink(lay.out)
    with open(os.path.join(lay.data, "d1.raw"), "r+b") as f:
        f.truncate(100 + disc.nbytes - half - 8)
    expect_refused(lay, E.EX_DATA, ["'discount'", "d1.raw", "bytes where"])
    os.unlink(os.path.join(lay.data, "d1.raw"))
    expect_refused(lay, E.EX_NOINPUT, ["'discount'", "d1.raw"])


def case_layout_userblock(ctx):
    lay = Layout(ctx)
    mult, disc = arrays(13)
    with h5py.File(lay.h5, "w", userblock_size=4096) as f:
        f["multBy"] = mult
        f["discount"] = disc
    with open(lay.h5, "r+b") as f:  # a userblock holds the user's own bytes
        f.write(b"#!user block " * 100)
    expect_exact(lay, product(mult, disc), ", positional reads)")


def case_layout_groups(ctx):
    lay = Layout(ctx)
    mult, disc = arrays(15)
    with h5py.File(lay.h5, "w") as f:
        f["portfolio/a/multBy"] = mult
        f["portfolio/b/discount"] = disc
    expect_exact(lay, product(mult, disc), ", positional reads)",
                 input={"multiplier": "portfolio/a/multBy", "discount": "/portfolio/b/discount"})


def case_layout_chunked_filters(ctx):
    lay = Layout(ctx)
    mult, disc = arrays(17)
    with h5py.File(lay.h5, "w") as f:
        f.create_dataset("multBy", data=mult, chunks=(100, NUMS), compression="gzip", shuffle=True,
                         fletcher32=True)
        f.create_dataset("discount", data=disc, chunks=(2, 300, NUMS), compression="gzip", compression_opts=9,
                         shuffle=True, fletcher32=True)
    expect_exact(lay, product(mult, disc), "HDF5 reads (chunked, shuffle, gzip, fletcher32; chunks under 64 KiB)")


def case_layout_lzf(ctx):
    """lzf is h5py's own filter: the HDF5 C library decodes it only with a
    plugin. Either exact, or refused naming the filter."""
    lay = Layout(ctx)
    mult, disc = arrays(19)
    with h5py.File(lay.h5, "w") as f:
        f["multBy"] = mult
        f.create_dataset("discount", data=disc, chunks=(1, 500, NUMS), compression="lzf")
    job = lay.job()
    r = lay.run(job)
    if r.rc == 0:
        E.check_output(lay.out, product(mult, disc))
        print("this HDF5 library decodes lzf (a plugin is installed): exact")
        return
    E.expect_rc(r, E.EX_DATA, "lzf without a plugin")
    E.check(len(r.stderr_lines) == 1, str(r))
    E.check("'discount'" in r.stderr and "lzf" in r.stderr and "cannot decode" in r.stderr, str(r))
    E.check(output_files(lay.data) == [], f"output files after a refusal: {output_files(lay.data)}")


def case_layout_fill_value(ctx):
    """Contiguous datasets never written read as their fill value, with and
    without a userblock (where the dataset's offset is not to be trusted)."""
    mult, _ = arrays(21)
    for userblock in (0, 512):
        lay = Layout(ctx)
        sub = f"ub{userblock}"
        lay.data = ctx.dir(sub)
        lay.h5 = os.path.join(lay.data, "in.h5")
        lay.out = os.path.join(lay.data, "out.h5")
        with h5py.File(lay.h5, "w", userblock_size=userblock) as f:
            f["multBy"] = mult
            f.create_dataset("discount", shape=(DATES, IDS, NUMS), dtype="<f8", fillvalue=-1.75)
            E.check(f["discount"].id.get_offset() is None or userblock, "fixture: discount is allocated")
        expected = product(mult, np.full((DATES, IDS, NUMS), -1.75))
        expect_exact(lay, expected, "discount: HDF5 reads (never written: fill value)")


# --------------------------------------------------------------------------
# 3. output dataset inside groups, killed and resumed


def progress_done(partial):
    try:
        with h5py.File(partial, "r"):
            return int(E.progress_of(partial).sum())
    except (OSError, KeyError):
        return None


def case_output_in_groups_kill_resume(ctx):
    d = ctx.dir("job")
    dates, ids = 40, 20011
    src = E.generate(ctx, os.path.join(d, "in.h5"), dates, ids, NUMS, seed=23)
    expected = E.expected_cv(src)
    dataset = "results/run1/cv"
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5",
                       output={"dataset": dataset, "checkpoint_seconds": 0},
                       memory={"max_slab": ids * NUMS * 8, "pipeline_depth": 2})
    out = os.path.join(d, "out.h5")
    # Before: polled for 5 recorded dates and killed, and when the run had
    # already finished (fast storage) checked the result only. Now the run is
    # held after its 39th of 40 slabs, so the kill always lands mid-run.
    hold = E.Hold(ctx, dates - 1)
    proc, _, err = E.start([ctx.app, "run", "-q", yaml], d, os.path.join(ctx.work, "first"), env=hold.env)

    def five_done():
        E.check(E.reap(proc, timeout=0) is None, "the first run ended before the kill")
        done = progress_done(E.partial_of(out))
        return done is not None and done >= 5
    E.wait_for("5 dates recorded by the first run", five_done)
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    E.check(not os.path.exists(out), "<out> exists after a kill -9 mid-run")
    done = E.progress_of(E.partial_of(out))
    with h5py.File(E.partial_of(out), "r") as f:
        E.check(0 < done.sum() < dates, f"progress after the kill: {done.sum()} of {dates}")
        units = np.flatnonzero(done)
        E.assert_bits_equal(f[dataset][...][units], expected[units], "dates recorded done in the partial")
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "resume")
    E.check("resuming" in r.stdout, f"the rerun did not resume:\n{r}")
    E.check_output(out, expected, dataset=dataset)
    E.check(not E.leftovers(out), f"leftovers: {E.leftovers(out)}")
    E.check(E.progress_of(out).all(), "progress record incomplete")
    r = E.expect_rc(E.app(ctx, "verify", yaml, cwd=d), 0, "verify")
    E.check("all equal" in r.stdout, str(r))
    # A second run of the same job finds it complete.
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "rerun")
    E.check("already complete" in r.stdout, str(r))


# --------------------------------------------------------------------------
# 4. one job per output


class LockJob:
    def __init__(self, ctx, dates=24, ids=30011):
        self.ctx = ctx
        self.d = ctx.dir("job")
        src = E.generate(ctx, os.path.join(self.d, "in.h5"), dates, ids, NUMS, seed=29)
        self.expected = E.expected_cv(src)
        self.yaml = E.write_job(os.path.join(self.d, "job.yaml"), "in.h5", "out.h5",
                                output={"checkpoint_seconds": 0},
                                memory={"max_slab": ids * NUMS * 8, "pipeline_depth": 2})
        self.out = os.path.join(self.d, "out.h5")
        self.lock = self.out + ".partial.lock"
        self.n = 0

    def start(self, hold=None):
        self.n += 1
        return E.start([self.ctx.app, "run", "-q", self.yaml], self.d, os.path.join(self.ctx.work, f"run{self.n}"),
                       env=hold.env if hold else None)

    def wait_for_lock(self, proc):
        """Before: polled for 60 s, racing the run's end; now the callers hold
        the run after its first slab, so it cannot end before it is seen."""
        def named():
            E.check(E.reap(proc, timeout=0) is None, "the first run ended before it was seen holding the lock")
            try:
                with open(self.lock) as f:
                    return f"pid {proc.pid}" in f.read() and os.path.exists(E.partial_of(self.out))
            except FileNotFoundError:
                return False
        E.wait_for("the lock file naming the first run", named)


def case_lock_second_job_refused(ctx):
    job = LockJob(ctx)
    hold = E.Hold(ctx, 1)  # the first run waits after its first slab until released
    first, _, first_err = job.start(hold)
    try:
        job.wait_for_lock(first)
        hold.wait(1, proc=first)
        # Stopped, the first job certainly still holds the output.
        first.send_signal(signal.SIGSTOP)
        r = E.app(ctx, "run", "-q", job.yaml, cwd=job.d)
        first.send_signal(signal.SIGCONT)
        hold.release(1)
    except BaseException:
        first.send_signal(signal.SIGCONT)
        first.kill()
        E.reap(first)
        raise
    E.expect_rc(r, E.EX_CANTCREAT, "second job on the same output")
    E.check(len(r.stderr_lines) == 1, str(r))
    E.check(f"pid {first.pid} on host {os.uname().nodename}" in r.stderr, f"holder not named:\n{r}")
    # It returned while the holder was stopped: it refused at once instead of
    # waiting for the lock (a wait would last until the hang guard).
    print(f"second job refused in {r.wall:.3f} s: {r.stderr.strip()}")
    rc, _ = E.reap(first, timeout=E.HANG_GUARD) or (None, None)
    with open(first_err) as f:
        E.check(rc == 0, f"first run: rc {rc}\n{f.read()}")
    E.check_output(job.out, job.expected, what="first run, after the refused second one")
    E.check(output_files(job.d) == ["out.h5"], f"leftovers: {output_files(job.d)}")


def case_lock_stale_after_kill9(ctx):
    job = LockJob(ctx)
    hold = E.Hold(ctx, 1)  # never released: the kill -9 ends the run while it holds the lock
    first, _, _ = job.start(hold)
    job.wait_for_lock(first)
    first.send_signal(signal.SIGKILL)
    E.reap(first)
    with open(job.lock) as f:
        E.check(f"pid {first.pid}" in f.read(), "the stale lock file does not name the killed run")
    t0 = time.monotonic()
    r = E.expect_rc(E.app(ctx, "run", job.yaml, cwd=job.d), 0, "rerun after kill -9")
    print(f"rerun after kill -9: {time.monotonic() - t0:.2f} s, {'resumed' if 'resuming' in r.stdout else 'fresh'}")
    E.check_output(job.out, job.expected, what="after kill -9 and rerun")
    E.check(output_files(job.d) == ["out.h5"], f"leftovers (lock file?): {output_files(job.d)}")


def case_lock_held_by_another_process(ctx):
    """The lock is the flock, not the text: a holder that is not the app
    (this test) blocks a run; the same file, unlocked, blocks nothing."""
    import fcntl
    d = ctx.dir("job")
    mult, disc = arrays(33)
    E.write_input(os.path.join(d, "in.h5"), mult, disc)
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5")
    lock = os.path.join(d, "out.h5.partial.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, b"pid 4242 on host batch07\n")
        r = E.expect_rc(E.app(ctx, "run", "-q", yaml), E.EX_CANTCREAT, "run on a locked output")
        E.check(len(r.stderr_lines) == 1 and "pid 4242 on host batch07" in r.stderr, str(r))
        E.check(output_files(d) == ["out.h5.partial.lock"], f"files after the refusal: {output_files(d)}")
    finally:
        os.close(fd)
    E.expect_rc(E.app(ctx, "run", "-q", yaml), 0, "run once the lock is free")
    E.check_output(os.path.join(d, "out.h5"), product(mult, disc))
    E.check(output_files(d) == ["out.h5"], f"leftovers: {output_files(d)}")


# --------------------------------------------------------------------------
# 5. lost stdout


def case_stdout_closed_head(ctx):
    """`discount_app job.yaml | head -1` (and with 2>&1): exit 0, the
    output complete and exact, nothing left behind."""
    d = ctx.dir("job")
    dates, ids = 30, 20011
    src = E.generate(ctx, os.path.join(d, "in.h5"), dates, ids, NUMS, seed=31)
    expected = E.expected_cv(src)
    out = os.path.join(d, "out.h5")
    for n, redirect in enumerate(("", "2>&1")):
        if os.path.exists(out):
            os.unlink(out)
        yaml = E.write_job(os.path.join(d, f"job{n}.yaml"), "in.h5", "out.h5",
                           output={"checkpoint_seconds": 0},
                           memory={"max_slab": ids * NUMS * 8, "pipeline_depth": 2})
        # head exits after its line; the app writes its limits, progress and
        # summary lines after that, into a pipe nobody reads.
        script = f"'{ctx.app}' '{yaml}' {redirect} | head -1; exit ${{PIPESTATUS[0]}}"
        r = E.run(ctx, ["bash", "-c", script], cwd=d, timeout=120)
        E.check(r.rc == 0, f"app exit {r.rc} with its stdout closed ({redirect or 'stdout only'}):\n{r}")
        # (stdout is a pipe, not a terminal: the line starts with the time)
        E.check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \[discount_app\]", r.stdout) is not None
                and len(r.stdout.splitlines()) == 1, str(r))
        E.check_output(out, expected, what=f"stdout closed {redirect}")
        E.check(output_files(d) == ["out.h5"], f"leftovers: {output_files(d)}")


# --------------------------------------------------------------------------
# 6. budgets beyond the machine


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise E.Skip("no MemAvailable in /proc/meminfo")


def case_budget_beyond_machine_refused(ctx):
    d = ctx.dir("job")
    avail = mem_available()
    # A synthetic source four times the available memory, budget and slab
    # cap far above it: the plan would allocate more than the machine has.
    ids = 1_000_003
    dates = max(8, (4 * avail) // (ids * NUMS * 8) + 1)
    yaml = E.write_text(os.path.join(d, "job.yaml"), E.to_yaml({
        "input": {"synthetic": {"dates": dates, "ids": ids, "nums": NUMS, "seed": 1}},
        "output": {"mode": "checksum"},
        # Host space: in a GPU build the device budget would cap the slabs first.
        "compute": {"space": "host"},
        "memory": {"host_budget": "64TiB", "max_slab": "64TiB", "pipeline_depth": 2}}))
    for command in ("run", "plan"):
        r = E.expect_rc(E.app(ctx, command, yaml, rss=True), E.EX_CONFIG, f"{command}: budget beyond the machine")
        E.check(len(r.stderr_lines) == 1, str(r))
        E.check("memory.host_budget" in r.stderr and "the plan needs" in r.stderr and "available" in r.stderr,
                str(r))
        # Refused before allocating: the process never held a slab buffer.
        E.check(r.maxrss_kib is not None and r.maxrss_kib < 256 * 1024,
                f"{command} reached {r.maxrss_kib} KiB before refusing")


def case_budget_beyond_machine_warned(ctx):
    d = ctx.dir("job")
    mult, disc = arrays(37)
    E.write_input(os.path.join(d, "in.h5"), mult, disc)
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", memory={"host_budget": "64TiB"})
    r = E.expect_rc(E.app(ctx, "run", "-q", yaml), 0, "small job, huge budget")
    warnings = [ln for ln in r.stderr_lines if "warning" in ln]
    E.check(len(warnings) == 1 and "memory.host_budget" in warnings[0] and "so it runs" in warnings[0], str(r))
    E.check(r.stderr_lines.index(warnings[0]) == 0, f"the warning is not the first line:\n{r}")
    E.check_output(os.path.join(d, "out.h5"), product(mult, disc))


CASES = [
    ("duplicate_key_top", case_duplicate_key_top),
    ("duplicate_key_nested", case_duplicate_key_nested),
    ("layout_virtual", case_layout_virtual),
    ("layout_external_link", case_layout_external_link),
    ("layout_soft_link", case_layout_soft_link),
    ("layout_external_raw", case_layout_external_raw),
    ("layout_userblock", case_layout_userblock),
    ("layout_groups", case_layout_groups),
    ("layout_chunked_filters", case_layout_chunked_filters),
    ("layout_lzf", case_layout_lzf),
    ("layout_fill_value", case_layout_fill_value),
    ("output_in_groups_kill_resume", case_output_in_groups_kill_resume),
    ("lock_second_job_refused", case_lock_second_job_refused),
    ("lock_stale_after_kill9", case_lock_stale_after_kill9),
    ("lock_held_by_another_process", case_lock_held_by_another_process),
    ("stdout_closed_head", case_stdout_closed_head),
    ("budget_beyond_machine_refused", case_budget_beyond_machine_refused),
    ("budget_beyond_machine_warned", case_budget_beyond_machine_warned),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
