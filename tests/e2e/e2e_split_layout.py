#!/usr/bin/env python3
"""output.layout: split. cv is an HDF5 virtual dataset in <out> mapped onto
part files in <out name>.parts-<id>/ beside it (io/records/output_parts.hpp).

Every case writes random non-zero odd-sized inputs with h5py and compares the
result, read back with h5py as one dataset, bit for bit with NumPy. The parts
are never filled at creation (HDF5 fill time never), so a slab that was not
written reads as whatever the pages hold, never the NumPy values.
  - the master names its parts relatively: h5dump reads cv from another
    working directory, and after master and folder move elsewhere together;
    netCDF4 reads it as one variable too;
  - kill -9 mid-run (held by DISCOUNT_TEST_HOLD), then a rerun resumes and
    gives the exact result; no <out> exists before it is complete;
  - overwrite: the old master and its parts stay readable, with the old
    values, until the new set is complete; then the old folder is gone;
  - the lock refuses a second job; a finished rerun has nothing to do;
    verify passes, and fails on a changed byte in a part;
  - a folder left by a kill before its master was renamed (its record names
    this output) is removed by the next run;
  - output.layout: auto (the default) splits 267 MiB on /dev/shm, and says so.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 13, 1031, 3
SLAB = IDS * NUMS * 8  # one date per slab: 13 slabs


def make_job(ctx, seed=7, parts=4, axes=("date", "id", "num"), name="job", **output):
    d = ctx.dir(name)
    rng = np.random.default_rng(seed)
    mult = E.random_nonzero(rng, (IDS, NUMS))
    shape = {"date": DATES, "id": IDS, "num": NUMS}
    disc = E.random_nonzero(rng, tuple(shape[a] for a in axes))
    src = E.write_input(os.path.join(d, "in.h5"), mult, disc)
    out = dict({"layout": "split", "parts": parts, "checkpoint_seconds": 0}, **output)
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", input={"axes": list(axes)}, output=out,
                       memory={"max_slab": SLAB, "pipeline_depth": 3, "chunk_axis": "date"})
    return d, yaml, os.path.join(d, "out.h5"), E.expected_cv(src, axes=axes)


def part_folders(d):
    return sorted(p for p in glob.glob(os.path.join(d, "out.h5.parts-*")) if os.path.isdir(p))


def check_master(out, expected, parts):
    """cv read as one dataset equals NumPy; it is virtual, over `parts` files named relatively."""
    with h5py.File(out, "r") as f:
        ds = f["cv"]
        E.check(ds.is_virtual, "cv is not a virtual dataset")
        sources = ds.virtual_sources()
        E.check(len(sources) == parts, f"{len(sources)} parts mapped, expected {parts}")
        for s in sources:
            E.check(not os.path.isabs(s.file_name) and s.file_name.startswith("out.h5.parts-"),
                    f"part named {s.file_name!r}, expected a path relative to the master")
        E.assert_bits_equal(ds[...], expected, "split cv")


def h5dump_cv(path, cwd):
    """cv as h5dump writes it (raw little-endian binary), run in `cwd`."""
    raw = os.path.join(cwd, "cv.bin")
    r = subprocess.run(["h5dump", "-d", "cv", "-b", "LE", "-o", raw, path], cwd=cwd, capture_output=True, text=True)
    E.check(r.returncode == 0, f"h5dump failed: {r.stderr}")
    values = np.fromfile(raw, dtype="<f8")
    os.unlink(raw)
    return values


def case_matches_numpy_and_moves(ctx):
    if shutil.which("h5dump") is None:
        raise E.Skip("no h5dump")
    d, yaml, out, expected = make_job(ctx, axes=("id", "date", "num"))
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "split run")
    E.check("split over 4 part file(s)" in r.stdout, f"the run header does not name the layout:\n{r.stdout}")
    folders = part_folders(d)
    E.check(len(folders) == 1 and len(glob.glob(os.path.join(folders[0], "part-*.h5"))) == 4,
            f"part folders: {folders}")
    check_master(out, expected, 4)
    E.check(not os.path.exists(out + ".partial"), "the partial is left behind")
    try:  # netCDF4 reads the virtual dataset as one variable too (where installed)
        import netCDF4
    except ImportError:
        netCDF4 = None
    if netCDF4 is not None:
        with netCDF4.Dataset(out) as nc:
            E.assert_bits_equal(np.asarray(nc["cv"][:]), expected, "netCDF4 reading the split cv")
    # h5dump from another working directory, then after moving master and folder together
    elsewhere = ctx.dir("elsewhere")
    E.assert_bits_equal(h5dump_cv(out, elsewhere), expected.ravel(), "h5dump from another directory")
    moved = ctx.dir("moved")
    shutil.move(out, os.path.join(moved, "out.h5"))
    shutil.move(folders[0], os.path.join(moved, os.path.basename(folders[0])))
    E.assert_bits_equal(h5dump_cv(os.path.join(moved, "out.h5"), elsewhere), expected.ravel(), "h5dump after a move")
    check_master(os.path.join(moved, "out.h5"), expected, 4)


def case_verify_and_rerun(ctx):
    d, yaml, out, expected = make_job(ctx, parts=3)
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "split run")
    check_master(out, expected, 3)
    folder = part_folders(d)[0]
    before = E.tree_digest(folder)
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "rerun of a finished job")
    E.check(E.tree_digest(folder) == before and part_folders(d) == [folder], "a finished rerun changed the parts")
    E.expect_rc(E.app(ctx, "verify", yaml, cwd=d), 0, "verify")
    # one changed byte in a part: verify reports it
    part = sorted(glob.glob(os.path.join(folder, "part-*.h5")))[1]
    with h5py.File(part, "r") as f:
        offset = f["cv"].id.get_offset()
    with open(part, "r+b") as f:
        f.seek(offset + 8 * 5)
        b = f.read(1)
        f.seek(offset + 8 * 5)
        f.write(bytes([b[0] ^ 0x40]))
    r = E.app(ctx, "verify", yaml, cwd=d)
    E.check(r.rc != 0, f"verify passed a changed part:\n{r}")


def case_kill9_resume(ctx):
    d, yaml, out, expected = make_job(ctx, parts=4)
    hold = E.Hold(ctx, 6)
    proc, _, _ = E.start([ctx.app, "run", "-q", yaml], d, os.path.join(ctx.work, "killed"), env=hold.env)
    hold.wait(6, proc=proc)
    E.check(not os.path.exists(out), "<out> exists mid-run")
    E.check(os.path.exists(out + ".partial") and len(part_folders(d)) == 1, "no partial and part folder mid-run")
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    E.check(not os.path.exists(out), "<out> exists after kill -9")
    folder = part_folders(d)
    # a stale folder, as a kill between part creation and the master's rename leaves: its record names it
    stale = os.path.join(d, "out.h5.parts-deadbeef-00000000")
    os.makedirs(stale)
    open(os.path.join(stale, "part-00000.h5"), "w").close()
    E.write_part_record(stale, "out.h5", ["part-00000.h5"])
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "resume")
    E.check("resuming" in r.stdout, f"the rerun did not resume:\n{r.stdout}")
    E.check(part_folders(d) == folder, f"part folders after the resume: {part_folders(d)}, expected {folder}")
    check_master(out, expected, 4)
    E.expect_rc(E.app(ctx, "verify", yaml, cwd=d), 0, "verify after resume")


def case_overwrite_keeps_old_set(ctx):
    d, yaml, out, old = make_job(ctx, seed=3, parts=3)
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "first run")
    old_folder = part_folders(d)
    # new input values, same shape; overwrite
    rng = np.random.default_rng(99)
    E.write_input(os.path.join(d, "in.h5"), E.random_nonzero(rng, (IDS, NUMS)), E.random_nonzero(rng, (DATES, IDS, NUMS)))
    new = E.expected_cv(os.path.join(d, "in.h5"))
    yaml2 = E.write_job(os.path.join(d, "over.yaml"), "in.h5", "out.h5",
                        output={"layout": "split", "parts": 3, "overwrite": True, "checkpoint_seconds": 0},
                        memory={"max_slab": SLAB, "pipeline_depth": 3, "chunk_axis": "date"})
    hold = E.Hold(ctx, 5)
    proc, _, _ = E.start([ctx.app, "run", "-q", yaml2], d, os.path.join(ctx.work, "over"), env=hold.env)
    hold.wait(5, proc=proc)
    check_master(out, old, 3)  # the old set, whole, while the new one is written
    # the lock: a second job on this output is refused
    r = E.app(ctx, "run", "-q", yaml2, cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and "another job" in r.stderr, f"second job not refused:\n{r}")
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    check_master(out, old, 3)  # still the old set after kill -9
    E.check(old_folder[0] in part_folders(d), "the old part folder went before the new set was complete")
    E.expect_rc(E.app(ctx, "run", "-q", yaml2, cwd=d), 0, "overwrite resumed")
    check_master(out, new, 3)
    E.check(len(part_folders(d)) == 1 and part_folders(d) != old_folder,
            f"part folders after the overwrite: {part_folders(d)} (old {old_folder})")


def case_single_to_split_restart(ctx):
    """A partial of the single layout is not resumed as split (the identity says the layout)."""
    d, yaml, out, expected = make_job(ctx, parts=2)
    single = E.write_job(os.path.join(d, "single.yaml"), "in.h5", "out.h5", output={"checkpoint_seconds": 0},
                         memory={"max_slab": SLAB, "pipeline_depth": 3, "chunk_axis": "date"})
    hold = E.Hold(ctx, 3)
    proc, _, _ = E.start([ctx.app, "run", "-q", single], d, os.path.join(ctx.work, "single"), env=hold.env)
    hold.wait(3, proc=proc)
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    r = E.app(ctx, "run", "-q", yaml, cwd=d)
    E.check(r.rc == E.EX_CANTCREAT and "output.layout" in r.stderr, f"a single partial resumed as split:\n{r}")
    E.expect_rc(E.app(ctx, "run", "-q", "--restart", yaml, cwd=d), 0, "restart")
    check_master(out, expected, 2)


def case_parts_auto_small(ctx):
    """auto on a small output: one part, still a virtual dataset."""
    d, yaml, out, expected = make_job(ctx, parts="auto")
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "split auto")
    check_master(out, expected, 1)


def case_auto_splits_memory_backed(ctx):
    """output.layout: auto (the default) on /dev/shm splits an output of 256 MiB and more, says so in plan
    and the run's header, and a rerun finds the split set complete."""
    if subprocess.run(["stat", "-f", "-c", "%T", "/dev/shm"], capture_output=True, text=True).stdout.strip() != "tmpfs":
        raise E.Skip("/dev/shm is not a tmpfs here")
    d = tempfile.mkdtemp(prefix="discount_e2e_auto_", dir="/dev/shm")
    try:
        dates, ids, nums = 35, 200003, 5  # 267 MiB of cv: two parts by auto_parts (256 MiB and up)
        rng = np.random.default_rng(11)
        src = E.write_input(os.path.join(d, "in.h5"), E.random_nonzero(rng, (ids, nums)),
                            E.random_nonzero(rng, (dates, ids, nums)))
        yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out/cv.h5")  # every other key at its default
        plan = E.expect_rc(E.app(ctx, "plan", "--no-measure", yaml, cwd=d), 0, "plan").stdout
        # Two parts by auto_parts (256 MiB and up), or one per core where
        # memory.staging: auto takes none (each thread writes its own part).
        m = re.search(r"^layout +split, (\d+) parts, \d+ writer\(s\) \(auto: memory-backed", plan, re.M)
        E.check(m and int(m.group(1)) >= 2, f"plan does not say split and why:\n{plan}")
        parts = int(m.group(1))
        E.check(parts == 2 or "memory.staging: none" in plan, f"{parts} parts without memory.staging: none:\n{plan}")
        r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "run")
        E.check(re.search(rf"layout split, {parts} parts", r.stdout), f"the run's header does not say split:\n{r.stdout}")
        out = os.path.join(d, "out", "cv.h5")
        with h5py.File(out, "r") as f:
            E.check(f["cv"].is_virtual and len(f["cv"].virtual_sources()) == parts, f"cv is not split over {parts} parts")
            E.assert_bits_equal(f["cv"][...], E.expected_cv(src), "auto-split cv")
        again = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "rerun")
        E.check("already complete" in again.stdout, f"the rerun did not find the split set complete:\n{again}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


CASES = [
    ("matches_numpy_and_moves", case_matches_numpy_and_moves),
    ("verify_and_rerun", case_verify_and_rerun),
    ("kill9_resume", case_kill9_resume),
    ("overwrite_keeps_old_set", case_overwrite_keeps_old_set),
    ("single_to_split_restart", case_single_to_split_restart),
    ("parts_auto_small", case_parts_auto_small),
    ("auto_splits_memory_backed", case_auto_splits_memory_backed),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
