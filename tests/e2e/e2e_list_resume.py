#!/usr/bin/env python3
"""An input.file list resumed after a kill: a change to any listed file, not
only the first, inside a range already done, is found and that range is
computed again; the same for a finished output's rerun.

Random non-zero odd-sized inputs split by date over three files; the result
is compared bit for bit with NumPy on the edited values through h5py.
"""

import os
import signal
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 13, 40009, 3
SPLIT = [0, 3, 6, DATES]  # dates of the three files


def make_list(ctx, d, seed):
    rng = np.random.default_rng(seed)
    mult = E.random_nonzero(rng, (IDS, NUMS))
    disc = E.random_nonzero(rng, (DATES, IDS, NUMS))
    names = []
    for f in range(3):
        name = f"part{f}.h5"
        with h5py.File(os.path.join(d, name), "w") as h:
            if f == 0:
                h["multBy"] = mult
            h["discount"] = disc[SPLIT[f]:SPLIT[f + 1]]
        names.append(name)
    yaml = E.write_job(os.path.join(d, "job.yaml"), names, "out.h5", output={"checkpoint_seconds": 0},
                       memory={"max_slab": IDS * NUMS * 8, "pipeline_depth": 2, "chunk_axis": "date"})
    return yaml, mult, disc


def sampled(size):
    """The byte ranges the app samples for an input's identity (lib/io/input/input_files.cpp: 18 blocks of 64 KiB)."""
    block = 64 * 1024
    starts = [0] + [size // 17 * j for j in range(1, 17)] + [max(0, size - block)]
    return [(o, o + block) for o in starts]


def edit(d, date, disc, rng):
    """One new value for `date`, written in place into the file that holds it, at a byte the app does not
    sample for the file's identity (so only the file's status and the done range's input checksum can tell)."""
    f = next(j for j in range(3) if SPLIT[j] <= date < SPLIT[j + 1])
    path = os.path.join(d, f"part{f}.h5")
    with h5py.File(path, "r") as h:
        base = h["discount"].id.get_offset()
    blocks = sampled(os.path.getsize(path))
    row = date - SPLIT[f]
    for flat in range(IDS * NUMS):
        at = base + 8 * (row * IDS * NUMS + flat)
        if not any(b <= at < e or b <= at + 7 < e for b, e in blocks):
            break
    else:
        raise E.Failure(f"every byte of date {date} is sampled")
    i, k = divmod(flat, NUMS)
    value = E.random_nonzero(rng, (1,))[0]
    with h5py.File(path, "r+") as h:
        h["discount"][row, i, k] = value
    disc[date, i, k] = value
    return f


def case_resume_finds_a_later_file_changed(ctx):
    d = ctx.dir("job")
    yaml, mult, disc = make_list(ctx, d, seed=5)
    hold = E.Hold(ctx, 9)
    # TMPDIR inside the job's folder: the list's private folder outlives a kill -9.
    proc, _, _ = E.start([ctx.app, "run", "-q", yaml], d, os.path.join(ctx.work, "killed"),
                         env={**hold.env, "TMPDIR": d})
    hold.wait(9, proc=proc)
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    done = E.done_ranges(os.path.join(d, "out.h5.partial"))
    date = next((u for b, e, _ in done for u in range(b, e) if u >= SPLIT[2]), None)
    E.check(date is not None, f"no date of a later file done before the kill: {done}")
    f = edit(d, date, disc, np.random.default_rng(77))
    E.check(f > 0, "the edit is in the first file")
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "resume")
    E.check("recomputed" in r.stderr, f"the resume did not say it recomputes:\n{r.stderr}")
    E.assert_bits_equal(E.read_output(os.path.join(d, "out.h5")), mult[None] * disc, "cv after the edit")


def case_finished_finds_a_later_file_changed(ctx):
    d = ctx.dir("job")
    yaml, mult, disc = make_list(ctx, d, seed=6)
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "run")
    edit(d, DATES - 2, disc, np.random.default_rng(78))
    r = E.app(ctx, "run", "-q", yaml, cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and "other input bytes" in r.stderr, f"a changed later file not found:\n{r}")


CASES = [
    ("resume_finds_a_later_file_changed", case_resume_finds_a_later_file_changed),
    ("finished_finds_a_later_file_changed", case_finished_finds_a_later_file_changed),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
