#!/usr/bin/env python3
"""input.file as a list of files holding consecutive ranges along date or id.

- Split along date (multBy in the first file only) and along id (each file
  holds its ids' multBy rows), 3 files of odd, unequal sizes, random non-zero
  data, discount stored [date][id][num] and [id][date][num]: cv over a
  NaN-filled output equals NumPy's product over the concatenation, bit for bit;
  `verify --full` agrees; several slabs, so ranges cross file boundaries.
- Refused with exit 65 naming the file, the axis and the sizes: a file whose
  other axis differs; a later file without multBy among ones that hold it.
- A glob in input.file: exit 78 pointing at the list form.
- Every listed file is in the read set: an output.file that is the second or
  third listed file is refused (73) and the file is untouched.
- The job's identity covers every file: rerunning a finished list job is a
  no-op; once the third file holds other bytes, the output is another job's
  (73, untouched).
- No temporary virtual file is left behind.
"""

import glob
import os
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 11, 13, 3
CUTS = {"date": [0, 4, 5, DATES], "id": [0, 6, 7, IDS]}


def data(seed):
    rng = np.random.default_rng(seed)
    return E.random_nonzero(rng, (IDS, NUMS)), E.random_nonzero(rng, (DATES, IDS, NUMS))


def split(d, m, disc, along, axes=("date", "id", "num"), names=None):
    """Three files holding consecutive ranges of `disc` (given [date][id][num]) along `along`, stored in `axes` order."""
    stored = np.transpose(disc, [E.CANON.index(a) for a in axes])
    at = axes.index(along)
    cuts = CUTS[along]
    files = []
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        path = os.path.join(d, (names or "part{}.h5").format(n))
        part = np.ascontiguousarray(np.take(stored, range(a, b), axis=at))
        with h5py.File(path, "w") as f:
            f.create_dataset("discount", data=part)
            if along == "id":
                f.create_dataset("multBy", data=m[a:b])
            elif n == 0:
                f.create_dataset("multBy", data=m)
        files.append(os.path.basename(path))
    return files


def tmp_env(ctx):
    tmp = ctx.dir("tmp")
    return tmp, {"TMPDIR": tmp}


def run_list_case(along, axes=("date", "id", "num"), memory=None):
    def case(ctx):
        d = ctx.dir("job")
        m, disc = data(41 if along == "date" else 42)
        files = split(d, m, disc, along, axes)
        expected = np.ascontiguousarray(np.transpose(m[None, :, :] * disc, [E.CANON.index(a) for a in axes]))
        out = os.path.join(d, "out.h5")
        with h5py.File(out, "w") as f:
            f.create_dataset("cv", data=np.full(expected.shape, np.nan))
        job = E.write_job(os.path.join(d, "job.yaml"), files, "out.h5", input={"axes": list(axes)},
                          output={"overwrite": True}, memory=memory)
        tmp, env = tmp_env(ctx)
        E.expect_rc(E.run(ctx, [ctx.app, "run", job], cwd=d, env=env), 0, "run")
        E.check_output(out, expected)
        E.expect_rc(E.run(ctx, [ctx.app, "verify", "--full", job], cwd=d, env=env), 0, "verify --full")
        p = E.expect_rc(E.run(ctx, [ctx.app, "plan", job], cwd=d, env=env), 0, "plan")
        E.check(f"3 files along {along}" in p.stdout, f"plan does not describe the list:\n{p}")
        # Ours only: an MPI build's OpenMPI keeps its session folder (ompi.*) there too.
        left = [e for e in os.listdir(tmp) if not e.startswith("ompi.")]
        E.check(left == [], f"temporary files left behind: {left}")
    return case


# A slab of one date (or id) at most: every file boundary falls between slabs and inside none.
ONE_DATE = {"chunk_axis": "date", "max_slab": IDS * NUMS * 8 * 2}
ONE_ID = {"chunk_axis": "id", "max_slab": DATES * NUMS * 8 * 2}


def refused(ctx, d, files, rc, needles, env=None):
    job = E.write_job(os.path.join(d, "job.yaml"), files, "out.h5")
    for cmd in ("run", "verify"):
        r = E.run(ctx, [ctx.app, cmd, job], cwd=d, env=env)
        E.check(r.rc == rc and all(n in r.stderr for n in needles), f"{cmd}: expected {rc} with {needles}:\n{r}")
        E.check(len(r.stderr.strip().splitlines()) == 1, f"{cmd}: not one line:\n{r}")
    E.check(not os.path.exists(os.path.join(d, "out.h5")), "a refused job wrote an output")


def case_other_axis_differs(ctx):
    d = ctx.dir("job")
    m, disc = data(43)
    files = split(d, m, disc, "date")
    with h5py.File(os.path.join(d, files[2]), "a") as f:
        del f["discount"]
        f.create_dataset("discount", data=disc[5:, :IDS - 2])
    refused(ctx, d, files, E.EX_DATA, ["'" + os.path.join(d, "part2.h5") + "' has 11 ids", "input.file list along date",
                                       "has 13"])


def case_multby_missing_in_one(ctx):
    d = ctx.dir("job")
    m, disc = data(44)
    files = split(d, m, disc, "id")
    with h5py.File(os.path.join(d, files[1]), "a") as f:
        del f["multBy"]
    refused(ctx, d, files, E.EX_DATA, ["part1.h5' holds no 'multBy'", "along id"])


def case_glob_refused(ctx):
    d = ctx.dir("job")
    m, disc = data(45)
    split(d, m, disc, "date")
    job = E.write_job(os.path.join(d, "job.yaml"), "part*.h5", "out.h5")
    r = E.run(ctx, [ctx.app, "run", job], cwd=d)
    E.check(r.rc == E.EX_CONFIG and "glob" in r.stderr and "input.file: [part1.h5, part2.h5" in r.stderr,
            f"expected 78 pointing at the list form:\n{r}")


def case_output_is_listed_file(ctx):
    d = ctx.dir("job")
    m, disc = data(46)
    files = split(d, m, disc, "id")
    for victim in files[1:]:
        before = E.file_digest(os.path.join(d, victim))
        job = E.write_job(os.path.join(d, "job.yaml"), files, victim, output={"overwrite": True})
        r = E.run(ctx, [ctx.app, "run", job], cwd=d)
        E.check(r.rc == E.EX_CANTCREAT and victim in r.stderr, f"output {victim}: expected 73 naming it:\n{r}")
        E.check(E.file_digest(os.path.join(d, victim)) == before, f"{victim} was changed")


def case_identity_covers_every_file(ctx):
    d = ctx.dir("job")
    m, disc = data(47)
    files = split(d, m, disc, "date")
    job = E.write_job(os.path.join(d, "job.yaml"), files, "out.h5")
    E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job], cwd=d), 0, "run")
    before = E.file_digest(os.path.join(d, "out.h5"))
    # The same job again: its finished output is this job's (the same identity), nothing to redo.
    E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job], cwd=d), 0, "rerun with the same files")
    with h5py.File(os.path.join(d, files[2]), "a") as f:
        f["discount"][0, 0, 0] = -f["discount"][0, 0, 0]
    # Now the output belongs to another job: it is not taken as done, and not overwritten.
    r = E.run(ctx, [ctx.app, "run", job], cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and "already exists" in r.stderr, f"expected 73 (another job's output):\n{r}")
    E.check(E.file_digest(os.path.join(d, "out.h5")) == before, "the refused run changed the output")


CASES = [
    ("split_along_date", run_list_case("date", memory=ONE_DATE)),
    ("split_along_id", run_list_case("id", memory=ONE_ID)),
    ("split_along_date_transposed", run_list_case("date", axes=("id", "date", "num"), memory=ONE_ID)),
    ("split_along_id_transposed", run_list_case("id", axes=("id", "date", "num"), memory=ONE_DATE)),
    ("other_axis_differs", case_other_axis_differs),
    ("multby_missing_in_one", case_multby_missing_in_one),
    ("glob_refused", case_glob_refused),
    ("output_is_listed_file", case_output_is_listed_file),
    ("identity_covers_every_file", case_identity_covers_every_file),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
