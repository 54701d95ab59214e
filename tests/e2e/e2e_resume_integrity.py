#!/usr/bin/env python3
"""Resume integrity: a changed input or a damaged .partial never yields a
wrong "successful" result, and the progress record is sized by slabs.

The job is 61 dates x 20011 ids x 3 of random non-zero float64 with one date
per slab and a checkpoint after every slab. A run is stopped mid-way by
kill -9 once the .partial's done-range table (read raw, as the app writes it)
records a third of the dates: an event, not a time. Every result is checked
bit for bit against NumPy on the input as it is when the result is read.

Edits "outside the sampled blocks" keep the job's identity (the input's size
and the digest of 18 blocks of 64 KiB: the first, the last and 16 spread
between, io/input/input.cpp) and change values elsewhere, as a fix shipped by rsync
or `mv` would; the app must find them through the per-range input checksums.
"""

import os
import random
import shutil
import signal
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 61, 20011, 3
DATE_BYTES = IDS * NUMS * 8
SAMPLE_BLOCK, SAMPLES_BETWEEN = 64 * 1024, 16


class Job:
    """A job directory: random input written with h5py, the YAML, the output."""

    def __init__(self, ctx, seed=11, memory=None, dates=DATES, ids=IDS, nums=NUMS):
        self.ctx = ctx
        self.d = ctx.dir("job")
        rng = np.random.default_rng(seed)
        self.src = E.write_input(os.path.join(self.d, "in.h5"), E.random_nonzero(rng, (ids, nums)),
                                 E.random_nonzero(rng, (dates, ids, nums)))
        self.memory = dict({"max_slab": ids * nums * 8, "pipeline_depth": 2}, **(memory or {}))
        self.yaml = self.write_yaml("job.yaml")
        self.out = os.path.join(self.d, "out.h5")
        self.partial = E.partial_of(self.out)

    def write_yaml(self, name, input_file="in.h5", **output):
        return E.write_job(os.path.join(self.d, name), input_file, "out.h5", memory=self.memory,
                           output=dict({"checkpoint_seconds": 0}, **output))

    def run(self, *extra, yaml=None, env=None):
        return E.app(self.ctx, "run", "-q", *extra, yaml or self.yaml, cwd=self.d, env=env)

    def kill_mid_run(self):
        """kill -9 once a third of the dates are recorded done; returns the done units.
        The run is held after its slab DATES // 3 + 1 (one date per slab), so it
        cannot finish before the kill however fast the machine."""
        hold = E.Hold(self.ctx, DATES // 3 + 1)
        proc, _, _ = E.start([self.ctx.app, "run", "-q", self.yaml], self.d, os.path.join(self.ctx.work, "killed"),
                             env=hold.env)

        def third_done():
            E.check(E.reap(proc, timeout=0) is None, "the run finished before it could be killed")
            try:
                return len(done_units(self.partial)) >= DATES // 3
            except (OSError, KeyError):  # not created yet
                return False
        E.wait_for("a third of the dates recorded done", third_done)
        proc.send_signal(signal.SIGKILL)
        E.reap(proc)
        units = done_units(self.partial)
        E.check(0 < len(units) < DATES and not os.path.exists(self.out), f"the kill did not land mid-run: {units}")
        return units

    def expected(self):
        return E.expected_cv(self.src)


def done_units(path):
    """The units a .partial records as done. The previous release's per-unit
    progress bytes are read too, so that these cases can be run against it
    (where they fail: that is what they are for)."""
    with E.h5py.File(path, "r") as f:
        if E.RANGES not in f and "discount_app/progress" in f:
            return np.flatnonzero(f["discount_app/progress"][...])
    return np.flatnonzero(E.progress_of(path))


def sampled_blocks(size):
    """The byte ranges the input's content digest reads (io/input/input.cpp: sampled_content)."""
    offsets = [0] + [size // (SAMPLES_BETWEEN + 1) * j for j in range(1, SAMPLES_BETWEEN + 1)]
    offsets.append(max(size - SAMPLE_BLOCK, 0))
    return [(o, o + SAMPLE_BLOCK) for o in offsets]


def replace_input_edited(path, dates, count, seed=3):
    """A copy of `path` with `count` discount values of `dates` changed, none
    inside a sampled block, renamed over `path` (a new inode, as rsync or mv
    leave). Returns the number of distinct dates edited."""
    rng = random.Random(seed)
    size = os.path.getsize(path)
    blocks = sampled_blocks(size)
    with E.h5py.File(path, "r") as f:
        ds = f["discount"]
        offset, per_date = ds.id.get_offset(), ds.shape[1] * ds.shape[2]
    picks, touched = set(), set()
    while len(picks) < count:
        d, e = int(rng.choice(list(dates))), rng.randrange(per_date)
        at = offset + (d * per_date + e) * 8
        if not any(a < at + 8 and at < b for a, b in blocks):
            picks.add(at)
            touched.add(d)
    new = path + ".new"
    shutil.copyfile(path, new)
    with open(new, "r+b") as f:
        for at in sorted(picks):
            f.seek(at)
            value = np.frombuffer(f.read(8), "<f8")[0]
            f.seek(at)
            f.write(np.float64(value * 1.5 + 0.25).astype("<f8").tobytes())
    os.replace(new, path)
    return len(touched)


def flip_byte(path, at, mask=0x01):
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)[0]
        f.seek(at)
        f.write(bytes([b ^ mask]))


def replaced_input_mid_run(ctx):
    """Stopped mid-run; the input is replaced by rename with 100 values changed
    in three done dates, outside the sampled blocks: the resume finds those
    dates (one range each: a slab), recomputes them, and the result is exact
    on the NEW input."""
    job = Job(ctx)
    done = job.kill_mid_run()
    touched = replace_input_edited(job.src, done[1:4], 100)
    r = E.expect_rc(job.run(), 0, "resume against the replaced input")
    E.check_output(job.out, job.expected(), what="after resuming against the replaced input")
    E.check("another file" in r.stderr and f"the input of {touched} done range(s) ({touched} date(s)) differs" in
            r.stderr and "recomputed" in r.stderr, f"the resume should say what it redoes:\n{r}")
    print(f"{len(done)} dates done before the kill, {touched} of them edited; stderr: {r.stderr.strip()}")


def replaced_input_after_completion(ctx):
    """A finished output whose input is replaced with other bytes (outside the
    sampled blocks) is not "nothing to do": refused, naming the change and
    how to redo it; with overwrite: true the result is exact on the new input."""
    job = Job(ctx)
    E.expect_rc(job.run(), 0, "first run")
    replace_input_edited(job.src, range(DATES), 100)
    digest = E.file_digest(job.out)
    r = E.expect_rc(job.run(), E.EX_CANTCREAT, "rerun against the replaced input")
    E.check(len(r.stderr_lines) == 1 and "other input bytes" in r.stderr and "overwrite: true" in r.stderr, str(r))
    E.check(E.file_digest(job.out) == digest, "the refused rerun changed the output")
    E.expect_rc(job.run(yaml=job.write_yaml("overwrite.yaml", overwrite=True)), 0, "overwrite: true")
    E.check_output(job.out, job.expected(), what="after overwrite: true")


def partial_type_damaged(ctx):
    """One byte of the partial's dataset type (its HDF5 metadata) flipped: the
    resume refuses, naming the damage; never exit 0 with wrong values."""
    job = Job(ctx)
    job.kill_mid_run()
    with open(job.partial, "rb") as f:
        raw = f.read()
    # The float64 little-endian datatype message (class 1, version 1, 8 bytes,
    # precision 64, exponent 52+11, bias 1023); its second byte holds the byte order.
    f64le = bytes.fromhex("11203f00080000000000400034")
    # The master's object headers carry checksums (HDF5 1.8's format): a flip
    # there makes cv unreadable, which the resume refuses as damage too.
    found, checksummed = None, False
    start = raw.find(f64le)
    while start >= 0 and found is None:
        trial = os.path.join(job.d, "trial.h5")
        shutil.copyfile(job.partial, trial)
        flip_byte(trial, start + 1)
        try:
            with E.h5py.File(trial, "r") as f:
                if f["cv"].dtype != np.dtype("<f8"):
                    found = start + 1
        except (OSError, KeyError):
            found, checksummed = start + 1, True
        os.unlink(trial)
        start = raw.find(f64le, start + 1)
    E.check(found is not None, "test setup: cv's datatype message not found in the partial")
    flip_byte(job.partial, found)
    r = job.run(env=E.damaged_hdf5_env())
    if r.rc == 0:
        E.check_output(job.out, job.expected(), what="after resuming a damaged partial")
    else:
        E.expect_rc(r, E.EX_CANTCREAT, "resume of a partial whose dataset type is damaged")
        said = "is damaged: " if checksummed else "is damaged: dataset cv has type float64 big-endian, expected float64"
        E.check(len(r.stderr_lines) == 1 and said in r.stderr and "--restart" in r.stderr, str(r))
        E.expect_rc(job.run("--restart"), 0, "--restart")
        E.check_output(job.out, job.expected(), what="after --restart")


def partial_data_damaged(ctx):
    """One byte flipped inside a date recorded as done: its checksum fails,
    the range is recomputed, one line says so, the result is exact."""
    job = Job(ctx)
    done = job.kill_mid_run()
    with E.h5py.File(job.partial, "r") as f:
        offset = f["cv"].id.get_offset()
    date = int(done[len(done) // 2])
    flip_byte(job.partial, offset + (date * IDS * NUMS + 7777) * 8 + 5, 0x10)
    r = E.expect_rc(job.run(), 0, "resume of a partial with one damaged byte")
    E.check_output(job.out, job.expected(), what="after resuming a partial with a damaged byte")
    lines = [ln for ln in r.stderr_lines if "failed their checksum and are recomputed" in ln]
    E.check(len(lines) == 1 and "1 done range(s) of the partial (1 date(s))" in lines[0],
            f"one line should name the failed range:\n{r}")


def staged_copy_resumes(ctx):
    """A byte-identical copy of the input at another path (new inode, new time
    stamp): the input check reads the done ranges again, finds the same bytes
    and resumes every one of them."""
    job = Job(ctx)
    done = job.kill_mid_run()
    staged = ctx.dir("job/staged")
    shutil.copyfile(job.src, os.path.join(staged, "in.h5"))
    job.yaml = job.write_yaml("staged.yaml", input_file="staged/in.h5")
    r = E.expect_rc(E.app(ctx, "run", job.yaml, cwd=job.d), 0, "resume from the staged copy")
    E.check(f"resuming: {len(done)} of {DATES} dates" in r.stdout and "recomputed" not in r.stderr, str(r))
    E.check_output(job.out, job.expected(), what="after resuming from the staged copy")


def old_format_partial_refused(ctx):
    """A .partial of the previous release (one progress byte per unit) is
    refused with 73: from an older version, rerun with --restart."""
    job = Job(ctx)
    done = job.kill_mid_run()
    with E.h5py.File(job.partial, "r+") as f:  # the previous release's structure (which it writes itself)
        if "done_ranges" in f["discount_app"]:
            for name in ("done_ranges", "input_file"):
                del f["discount_app"][name]
            progress = np.zeros(DATES, dtype=np.uint8)
            progress[done] = 1
            f.create_dataset("discount_app/progress", data=progress)
            f.create_dataset("discount_app/unit_run", data=progress.astype(np.uint16))
    r = E.expect_rc(job.run(), E.EX_CANTCREAT, "resume of an old-format partial")
    E.check(len(r.stderr_lines) == 1 and "comes from an older version" in r.stderr and "--restart" in r.stderr, str(r))
    E.expect_rc(job.run("--restart"), 0, "--restart")
    E.check_output(job.out, job.expected(), what="after --restart")


def metadata_sized_by_slabs(ctx):
    """3,000,017 ids in id slabs: the record's datasets stay far under a MiB
    (the previous release kept three bytes per id: 9 MB here)."""
    ids = 3_000_017
    job = Job(ctx, dates=2, ids=ids, nums=1, memory={"chunk_axis": "id", "max_slab": 1 << 20})
    slabs, _ = E.plan_slabs(ctx, job.yaml)
    E.check(slabs > 40, f"test setup: expected many id slabs, got {slabs}")
    E.expect_rc(job.run(), 0, "run")
    E.check_output(job.out, job.expected(), what="3M ids")
    with E.h5py.File(job.out, "r") as f:
        group = f["discount_app"]
        sizes = {name: group[name].id.get_storage_size() for name in group}
    total = sum(sizes.values())
    print(f"record datasets: {sizes} ({total} bytes)")
    E.check(total < (1 << 20), f"the record takes {total} bytes for {ids} ids: {sizes}")
    E.check(E.progress_of(job.out).all(), "the record does not cover every id")


def verify_checks_recorded_sums(ctx):
    """verify (full) reads every done range against the checksum recorded when
    it was written, and says so; a flipped byte fails it (65)."""
    job = Job(ctx)
    E.expect_rc(job.run(), 0, "run")
    r = E.expect_rc(E.app(ctx, "verify", job.yaml, cwd=job.d), 0, "verify")
    E.check(f"the checksums recorded for its {DATES} done range(s) match its bytes" in r.stdout, str(r))
    with E.h5py.File(job.out, "r") as f:
        offset = f["cv"].id.get_offset()
    flip_byte(job.out, offset + (5 * IDS * NUMS + 11) * 8 + 2)
    r = E.expect_rc(E.app(ctx, "verify", job.yaml, cwd=job.d), E.EX_DATA, "verify of a damaged output")
    E.check(len(r.stderr_lines) == 1 and "differ" in r.stderr, str(r))


CASES = [
    ("replaced_input_mid_run", replaced_input_mid_run),
    ("replaced_input_after_completion", replaced_input_after_completion),
    ("partial_type_damaged", partial_type_damaged),
    ("partial_data_damaged", partial_data_damaged),
    ("staged_copy_resumes", staged_copy_resumes),
    ("old_format_partial_refused", old_format_partial_refused),
    ("metadata_sized_by_slabs", metadata_sized_by_slabs),
    ("verify_checks_recorded_sums", verify_checks_recorded_sums),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
