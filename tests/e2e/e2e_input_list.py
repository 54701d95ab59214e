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
- Split along date with a multBy in every file: the first file's values are
  accepted (exact); other values or another shape are refused with 65,
  naming the file (and the first element that differs).
- Files of one shape: a multBy in the first file only reads as dates, one of
  each file's own as ids (both exact); the same multBy in every file, with
  nothing else to tell, is refused with 65.
- Coordinates written with h5py (id scales of fixed-length strings of
  different lengths, a 'dates' dataset beside the discount): joined along the
  split axis in the output.
- Each listed file is checked as it is alone: a virtual source, an external
  raw file or a link target that is missing (66), external raw storage too
  short (65); the list gives the same exit code, naming the file.
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


def split(d, m, disc, along, axes=("date", "id", "num"), names=None, cuts=None, every_mult=False):
    """Files holding consecutive ranges of `disc` (given [date][id][num]) along `along`, stored in `axes` order,
    cut at `cuts` (default CUTS[along]). Along date multBy is in the first file only, or in every one
    (`every_mult`); along id each file holds its ids' rows."""
    stored = np.transpose(disc, [E.CANON.index(a) for a in axes])
    at = axes.index(along)
    cuts = cuts or CUTS[along]
    files = []
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        path = os.path.join(d, (names or "part{}.h5").format(n))
        part = np.ascontiguousarray(np.take(stored, range(a, b), axis=at))
        with h5py.File(path, "w") as f:
            f.create_dataset("discount", data=part)
            if along == "id":
                f.create_dataset("multBy", data=m[a:b])
            elif n == 0 or every_mult:
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


def exact_run(ctx, d, files, expected, axes=None):
    """The list job runs (with verify --full) and cv equals `expected` bit for bit."""
    job = E.write_job(os.path.join(d, "job.yaml"), files, "out.h5", input={"axes": list(axes)} if axes else None)
    E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job], cwd=d), 0, "run")
    E.check_output(os.path.join(d, "out.h5"), expected)
    E.expect_rc(E.run(ctx, [ctx.app, "verify", "--full", job], cwd=d), 0, "verify --full")


def case_date_split_equal_multby(ctx):
    d = ctx.dir("job")
    m, disc = data(48)
    files = split(d, m, disc, "date", every_mult=True)
    exact_run(ctx, d, files, m[None, :, :] * disc)


def case_date_split_different_multby(ctx):
    d = ctx.dir("job")
    m, disc = data(49)
    files = split(d, m, disc, "date", every_mult=True)
    with h5py.File(os.path.join(d, files[2]), "a") as f:
        f["multBy"][5, 1] = -f["multBy"][5, 1]
    refused(ctx, d, files, E.EX_DATA, ["input.file list along date: '" + os.path.join(d, "part2.h5") +
                                       "' holds a 'multBy' that differs", "[id 5, num 1]"])


def case_date_split_multby_other_shape(ctx):
    d = ctx.dir("job")
    m, disc = data(50)
    files = split(d, m, disc, "date", every_mult=True)
    with h5py.File(os.path.join(d, files[1]), "a") as f:
        del f["multBy"]
        f.create_dataset("multBy", data=m[:IDS - 1])
    refused(ctx, d, files, E.EX_DATA, ["part1.h5' holds 'multBy' [12 x 3] where", "[13 x 3]", "along date"])


# Three files of one shape: nothing but multBy tells date from id.
EVEN = 9


def even_split(d, along, mult):
    """Three files of 3 x 9 x 3 along `along`; mult: 'first', 'same' (every file the first's) or 'own'."""
    rng = np.random.default_rng(51)
    disc = E.random_nonzero(rng, (EVEN, EVEN, NUMS))
    rows = E.random_nonzero(rng, (EVEN, NUMS))
    files = []
    for n in range(3):
        path = os.path.join(d, f"even{n}.h5")
        cut = slice(3 * n, 3 * n + 3)
        with h5py.File(path, "w") as f:
            f.create_dataset("discount", data=disc[cut] if along == "date" else disc[:, cut])
            if mult == "own":
                f.create_dataset("multBy", data=rows[cut])
            elif mult == "same" or n == 0:
                f.create_dataset("multBy", data=rows)
        files.append(os.path.basename(path))
    whole_mult = rows if along == "date" else rows[:3]
    return files, disc, rows, whole_mult


def case_even_multby_first_only_is_date(ctx):
    d = ctx.dir("job")
    files, disc, rows, _ = even_split(d, "date", "first")
    exact_run(ctx, d, files, rows[None, :, :] * disc)


def case_even_own_multby_is_id(ctx):
    d = ctx.dir("job")
    files, disc, rows, _ = even_split(d, "id", "own")
    # Read along id: the three [9][3][3] blocks side by side are the whole [9][9][3] discount.
    exact_run(ctx, d, files, rows[None, :, :] * disc)


def case_even_same_multby_refused(ctx):
    d = ctx.dir("job")
    files, _, _, _ = even_split(d, "date", "same")
    refused(ctx, d, files, E.EX_DATA, ["cannot tell whether the files are split along date or along id",
                                       "even0.h5' only"])


def case_h5py_coordinates_joined(ctx):
    """Coordinates written with h5py: ids as dimension scales of fixed-length strings whose length differs
    from file to file, joined along id; dates as a 1-D 'dates' dataset beside the discount, the same in
    every file; no num coordinate (the index)."""
    d = ctx.dir("job")
    m, disc = data(53)
    files = split(d, m, disc, "id")
    ids = [f"i{'x' * (k % 5)}{k}".encode() for k in range(IDS)]
    dates = 2024.0 + np.arange(DATES) / 12
    for n, (a, b) in enumerate(zip(CUTS["id"], CUTS["id"][1:])):
        with h5py.File(os.path.join(d, files[n]), "a") as f:
            f["id"] = np.array(ids[a:b])  # h5py: fixed-length, as long as this file's longest id
            f["id"].make_scale("id")
            f["discount"].dims[1].attach_scale(f["id"])
            f["dates"] = dates
            f["dates"].attrs["units"] = "years"
    exact_run(ctx, d, files, m[None, :, :] * disc, axes=E.CANON)  # only id is named: input.axes says the rest
    with h5py.File(os.path.join(d, "out.h5"), "r") as f:
        got_ids = [bytes(v).rstrip(b"\0") for v in f["id"][...]]
        E.check(got_ids == ids, f"ids {got_ids}, expected {ids}")
        E.check(np.array_equal(f["date"][...], dates) and f["date"].attrs["units"] == "years",
                f"dates {f['date'][...]} {dict(f['date'].attrs)}")
        E.check(np.array_equal(f["num"][...], np.arange(NUMS)), f"nums {f['num'][...]}")


def break_second(d, kind):
    """Damage part1.h5's discount of an id split (its multBy stays, so the file alone is a whole input)."""
    path = os.path.join(d, "part1.h5")
    with h5py.File(path, "a") as f:
        part = f["discount"][...]
        del f["discount"]
        if kind == "virtual_source_missing":
            with h5py.File(os.path.join(d, "gone.h5"), "w") as g:
                g.create_dataset("discount", data=part)
            layout = h5py.VirtualLayout(shape=part.shape, dtype="f8")
            layout[...] = h5py.VirtualSource("gone.h5", "discount", shape=part.shape)
            f.create_virtual_dataset("discount", layout, fillvalue=0.0)
        elif kind in ("external_raw_missing", "external_raw_short"):
            raw = os.path.join(d, "part1.raw")
            f.create_dataset("discount", data=part, external=[(raw, 0, h5py.h5f.UNLIMITED)])
        elif kind == "dangling_soft_link":
            f["discount"] = h5py.SoftLink("/nowhere")
        elif kind == "external_link_missing":
            f["discount"] = h5py.ExternalLink("gone.h5", "/discount")
    if kind == "virtual_source_missing":
        os.remove(os.path.join(d, "gone.h5"))
    elif kind == "external_raw_missing":
        os.remove(os.path.join(d, "part1.raw"))
    elif kind == "external_raw_short":
        os.truncate(os.path.join(d, "part1.raw"), part.nbytes // 2)


def listed_file_checked(kind, rc, needle):
    """A listed file is refused as it is when alone: the same exit code, naming the file."""
    def case(ctx):
        d = ctx.dir("job")
        m, disc = data(52)
        files = split(d, m, disc, "id")
        break_second(d, kind)
        alone = E.write_job(os.path.join(d, "alone.yaml"), "part1.h5", "alone.h5")
        r = E.run(ctx, [ctx.app, "run", alone], cwd=d)
        E.check(r.rc == rc and needle in r.stderr, f"part1.h5 alone: expected {rc} with {needle!r}:\n{r}")
        refused(ctx, d, files, rc, ["'" + os.path.join(d, "part1.h5") + "'", needle])
    return case


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
    ("date_split_equal_multby", case_date_split_equal_multby),
    ("date_split_different_multby", case_date_split_different_multby),
    ("date_split_multby_other_shape", case_date_split_multby_other_shape),
    ("even_multby_first_only_is_date", case_even_multby_first_only_is_date),
    ("even_own_multby_is_id", case_even_own_multby_is_id),
    ("even_same_multby_refused", case_even_same_multby_refused),
    ("h5py_coordinates_joined", case_h5py_coordinates_joined),
    ("listed_virtual_source_missing", listed_file_checked("virtual_source_missing", E.EX_NOINPUT,
                                                         "its source file 'gone.h5' is missing")),
    ("listed_external_raw_missing", listed_file_checked("external_raw_missing", E.EX_NOINPUT, "part1.raw")),
    ("listed_external_raw_short", listed_file_checked("external_raw_short", E.EX_DATA, "part1.raw")),
    ("listed_dangling_soft_link", listed_file_checked("dangling_soft_link", E.EX_NOINPUT, "/nowhere")),
    ("listed_external_link_missing", listed_file_checked("external_link_missing", E.EX_NOINPUT, "gone.h5")),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
