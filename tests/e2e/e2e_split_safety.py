#!/usr/bin/env python3
"""output.layout: split, with the folders, names and files real users bring.

  - cleanup removes only what this output made: a folder named like a part
    folder that holds a user's notes, a symlink so named to a folder
    elsewhere, another split output's parts (its name begins with this
    output's), a part folder with a damaged record, and a stale set holding a
    user's file are left alone (the stale set loses only its listed parts),
    each with a warning line;
  - names of any character: the output's folder and file names made of every
    printable ASCII character and some UTF-8, and a dataset name with `%`;
    the result read with h5py is exact and verify passes;
  - a finished output checks its parts before "nothing to do": a part
    deleted, swapped with another or changed is refused (73) naming the part;
    a set copied whole elsewhere is still found complete;
  - a master copied away from its parts reads as NaN, not zeros, and verify
    does not find parts through the working directory.

Random non-zero odd-sized inputs, compared bit for bit with NumPy through h5py.
"""

import glob
import os
import shutil
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 13, 517, 3
SLAB = IDS * NUMS * 8  # one date per slab


def make_job(d, out="out.h5", seed=7, parts=3, name="job.yaml", **output):
    rng = np.random.default_rng(seed)
    src = os.path.join(d, "in.h5")
    if not os.path.exists(src):
        E.write_input(src, E.random_nonzero(rng, (IDS, NUMS)), E.random_nonzero(rng, (DATES, IDS, NUMS)))
    spec = dict({"layout": "split", "parts": parts, "checkpoint_seconds": 0}, **output)
    yaml = E.write_job(os.path.join(d, name), "in.h5", out, output=spec,
                       memory={"max_slab": SLAB, "pipeline_depth": 2, "chunk_axis": "date"})
    return yaml, E.expected_cv(src)


def folders_of(d, out="out.h5"):
    """This output's part folders (real folders, not links), by the app's naming."""
    return sorted(p for p in glob.glob(os.path.join(glob.escape(d), glob.escape(out) + ".parts-*"))
                  if os.path.isdir(p) and not os.path.islink(p) and ".h5.parts-" not in os.path.basename(p)[len(out):])


def read_cv(path, dataset="cv"):
    with h5py.File(path, "r") as f:
        return f[dataset][...]


def case_cleanup_leaves_what_it_did_not_make(ctx):
    d = ctx.dir("job")
    # another split output whose name begins with this one's: its parts folder is "out.h5.parts-x.h5.parts-<id>"
    other_yaml, expected = make_job(d, out="out.h5.parts-x.h5", name="other.yaml")
    E.expect_rc(E.app(ctx, "run", "-q", other_yaml, cwd=d), 0, "the other output")
    other_parts = glob.glob(os.path.join(d, "out.h5.parts-x.h5.parts-*"))
    E.check(len(other_parts) == 1, f"the other output's parts: {other_parts}")
    notes = os.path.join(d, "out.h5.parts-notes")
    os.makedirs(notes)
    E.write_text(os.path.join(notes, "part-00000.h5"), "my notes, named like a part\n")
    elsewhere = ctx.dir("elsewhere")
    E.write_text(os.path.join(elsewhere, "part-00000.h5"), "data elsewhere\n")
    os.symlink(elsewhere, os.path.join(d, "out.h5.parts-link"))
    E.write_part_record(elsewhere, "out.h5", ["part-00000.h5"])  # even a matching record is not followed
    damaged = os.path.join(d, "out.h5.parts-0badc0de-00000001")
    os.makedirs(damaged)
    E.write_text(os.path.join(damaged, "part-00000.h5"), "x")
    E.write_text(os.path.join(damaged, "discount_app-parts.txt"), "discount_app part set 1\noutput out.h5\n")
    stale = os.path.join(d, "out.h5.parts-0badc0de-00000002")
    os.makedirs(stale)
    E.write_text(os.path.join(stale, "part-00000.h5"), "x")
    E.write_text(os.path.join(stale, "mine.txt"), "a user's file in a stale set\n")
    E.write_part_record(stale, "out.h5", ["part-00000.h5", "part-00001.h5"])
    before = {p: E.tree_digest(p) for p in (other_parts[0], notes, elsewhere, damaged)}
    yaml, expected = make_job(d)
    r = E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "run")
    for p, digest in before.items():
        E.check(E.tree_digest(p) == digest, f"'{p}' was changed by the run's cleanup")
    E.check(os.path.islink(os.path.join(d, "out.h5.parts-link")), "the symlink was removed")
    E.check(sorted(os.listdir(stale)) == ["mine.txt"], f"the stale set's parts: {os.listdir(stale)}")
    for name in ("out.h5.parts-notes", "out.h5.parts-link", "out.h5.parts-0badc0de-00000001",
                 "out.h5.parts-0badc0de-00000002", "out.h5.parts-x.h5.parts-"):
        E.check(name in r.stderr, f"no warning names '{name}':\n{r.stderr}")
    E.check("is damaged" in r.stderr and "symbolic link" in r.stderr and "another output" in r.stderr,
            f"the warnings do not say why:\n{r.stderr}")
    E.assert_bits_equal(read_cv(os.path.join(d, "out.h5")), expected, "cv")
    E.assert_bits_equal(read_cv(os.path.join(d, "out.h5.parts-x.h5")), expected, "the other output's cv")
    E.expect_rc(E.app(ctx, "verify", other_yaml, cwd=d), 0, "verify of the other output")
    # an overwrite removes the set it replaced (its record names it) and still nothing else
    yaml2, _ = make_job(d, name="over.yaml", overwrite=True)
    with h5py.File(os.path.join(d, "out.h5"), "r") as f:
        old = [os.path.join(d, E.text(f["discount_app"].attrs["parts_folder"]))]
    E.check(os.path.isdir(old[0]), f"the output's part folder {old} is not there")
    E.expect_rc(E.app(ctx, "run", "-q", yaml2, cwd=d), 0, "overwrite")
    E.check(not any(os.path.exists(p) for p in old), f"the replaced set {old} is still there")
    for p, digest in before.items():
        E.check(E.tree_digest(p) == digest, f"'{p}' was changed by the overwrite's cleanup")


def case_any_name(ctx):
    """Folder and output names of every printable ASCII character but '/', and UTF-8; a dataset name with %."""
    printable = "".join(chr(c) for c in range(32, 127) if chr(c) != "/")
    d = ctx.dir("job")
    folder = os.path.join(d, "dir " + printable + " é日本")
    os.makedirs(folder)
    for out, dataset in (("cv_50%.h5", "cv"), ("a%b%%b%s" + printable + "é日本.h5", "res%b/cv 100%%")):
        yaml, expected = make_job(d, out=os.path.join(folder, out), name="job.yaml", dataset=dataset)
        E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, f"run to {out!r}")
        path = os.path.join(folder, out)
        with h5py.File(path, "r") as f:
            E.check(f[dataset].is_virtual, f"{dataset!r} is not virtual")
            E.assert_bits_equal(f[dataset][...], expected, f"cv in {out!r}")
        E.expect_rc(E.app(ctx, "verify", yaml, cwd=d), 0, f"verify of {out!r}")
        E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, f"rerun of {out!r}")


def part_files(d):
    (folder,) = folders_of(d)
    return sorted(glob.glob(os.path.join(folder, "part-*.h5")))


def case_finished_checks_parts(ctx):
    d = ctx.dir("job")
    yaml, expected = make_job(d, parts=3)
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "run")
    parts = part_files(d)
    keep = ctx.dir("keep")
    for p in parts:
        shutil.copy2(p, keep)
    # a part deleted
    os.unlink(parts[1])
    r = E.app(ctx, "run", "-q", yaml, cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and os.path.basename(parts[1]) in r.stderr, f"a deleted part not refused:\n{r}")
    # parts 0 and 1 swapped (13 dates over 3 parts: 4, 4, 5; the two first have one shape)
    shutil.copy2(os.path.join(keep, os.path.basename(parts[0])), parts[1])
    shutil.copy2(os.path.join(keep, os.path.basename(parts[1])), parts[0])
    r = E.app(ctx, "run", "-q", yaml, cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and "part-0000" in r.stderr and "other values" in r.stderr,
            f"swapped parts not refused:\n{r}")
    # restored from copies (new inodes, same bytes): complete again, found by the checksums
    for p in parts:
        shutil.copy2(os.path.join(keep, os.path.basename(p)), p)
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "rerun on copied parts")
    E.check("already complete" in r.stdout or "nothing to do" in r.stdout, f"not found complete:\n{r.stdout}")
    # one value changed in a part
    with h5py.File(parts[2], "r") as f:
        offset = f["cv"].id.get_offset()
    with open(parts[2], "r+b") as f:
        f.seek(offset + 8 * 7)
        b = f.read(1)
        f.seek(offset + 8 * 7)
        f.write(bytes([b[0] ^ 0x20]))
    r = E.app(ctx, "run", "-q", yaml, cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and os.path.basename(parts[2]) in r.stderr, f"a changed part not refused:\n{r}")
    # overwrite computes it again
    yaml2, _ = make_job(d, name="over.yaml", overwrite=True)
    E.expect_rc(E.app(ctx, "run", "-q", yaml2, cwd=d), 0, "overwrite")
    E.assert_bits_equal(read_cv(os.path.join(d, "out.h5")), expected, "cv after the overwrite")


def case_master_without_parts(ctx):
    d = ctx.dir("job")
    yaml, expected = make_job(d, parts=2)
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "run")
    away = ctx.dir("away")
    shutil.copy2(os.path.join(d, "out.h5"), away)
    values = read_cv(os.path.join(away, "out.h5"))
    E.check(np.isnan(values).all(), f"a master without its parts reads {np.unique(values)[:5]}, not NaN")
    # verify of the lone master, run from the folder that does hold the parts: refused
    lone = E.write_job(os.path.join(away, "job.yaml"), os.path.join(d, "in.h5"), "out.h5",
                       output={"layout": "split", "parts": 2, "checkpoint_seconds": 0},
                       memory={"max_slab": SLAB, "pipeline_depth": 2, "chunk_axis": "date"})
    r = E.app(ctx, "verify", lone, cwd=d)
    E.check(r.rc == E.EX_DATA and "missing" in r.stderr, f"verify found the parts through the working directory:\n{r}")
    E.expect_rc(E.app(ctx, "verify", yaml, cwd=away), 0, "verify of the real output from elsewhere")


CASES = [
    ("cleanup_leaves_what_it_did_not_make", case_cleanup_leaves_what_it_did_not_make),
    ("any_name", case_any_name),
    ("finished_checks_parts", case_finished_checks_parts),
    ("master_without_parts", case_master_without_parts),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
