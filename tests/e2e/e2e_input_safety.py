#!/usr/bin/env python3
"""Nothing the job reads is ever written, renamed, truncated or deleted.

A job reads more files than input.file: the targets of HDF5 external links,
the source files of a virtual dataset, the flat files of external raw
storage, and the config file itself. Each case points something the run
writes or deletes (the output with output.overwrite: true, `<out>.partial`
with --restart, the lock file, the JSON report from `report:` or --report)
at one of those files, by name, hard link or symlink, and checks that the run
is refused with one line naming both paths (73 for the output's files, 78 for
a report path, before any output file exists), and that every file the job
reads keeps its bytes (sha256 before and after).

Fixtures are built with h5py from random non-zero NumPy arrays; runs start
from a directory other than the data's. The layout cases first run the same
job to a harmless output and compare it bit for bit with NumPy, so a refusal
is never a broken fixture.
"""

import fcntl
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

h5py = E.h5py
DATES, IDS, NUMS = 7, 1013, 5  # odd sizes


def arrays(seed):
    rng = np.random.default_rng(seed)
    return E.random_nonzero(rng, (IDS, NUMS)), E.random_nonzero(rng, (DATES, IDS, NUMS))


def product(mult, disc):
    return mult[None, :, :] * disc


class Data:
    """A data folder with the fixture and a job YAML, and a folder to run from."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.dir = ctx.dir("data")
        self.elsewhere = ctx.dir("elsewhere")
        self.yaml = os.path.join(self.dir, "job.yaml")

    def path(self, name):
        return os.path.join(self.dir, name)

    def job(self, input_file, output_file, output=None, **top):
        return E.write_job(self.yaml, input_file, output_file, output=output, **top)

    def run(self, *args):
        return E.app(self.ctx, "run", *args, cwd=self.elsewhere)

    def digests(self):
        """sha256 of every file in the data folder (every file a job here reads)."""
        return {name: E.file_digest(self.path(name)) for name in sorted(os.listdir(self.dir))
                if os.path.isfile(self.path(name)) and not os.path.islink(self.path(name))}

    def exact(self, input_file, expected):
        """The layout works: the same job to a harmless output is exact."""
        self.job(input_file, "safe.h5")
        E.expect_rc(self.run(self.yaml), 0, "the layout's own run")
        E.check_output(self.path("safe.h5"), expected)
        os.unlink(self.path("safe.h5"))


def refused(data, rc, argv, written, read, why, before):
    """The run is refused with `rc` and one stderr line that names the path
    written (`written`) and the file read (`read`) and why it is read; every
    file the job reads is unchanged; no output file was left."""
    r = E.expect_rc(data.run(*argv), rc, "refusal")
    lines = r.stderr_lines
    E.check(len(lines) == 1, f"expected one stderr line:\n{r}")
    line = lines[0]
    for word in (f"'{written}'", f"'{read}'", why):
        E.check(word in line, f"{word!r} not in the refusal: {line}")
    E.check(all(32 <= ord(c) < 127 for c in line), f"unprintable characters in the refusal: {line!r}")
    after = data.digests()
    for name, digest in before.items():
        E.check(after.get(name) == digest, f"{name} changed or vanished ({digest} -> {after.get(name)})")
    left = sorted(n for n in os.listdir(data.dir) if n not in before)
    E.check(left == [], f"files left by a refused run: {left}")
    return line


# --------------------------------------------------------------------------
# Fixtures


def external_links(data, seed=7):
    """master.h5 whose multBy and discount are external links into data.h5."""
    mult, disc = arrays(seed)
    E.write_input(data.path("data.h5"), mult, disc)
    with h5py.File(data.path("master.h5"), "w") as f:
        f["multBy"] = h5py.ExternalLink("data.h5", "/multBy")
        f["discount"] = h5py.ExternalLink("data.h5", "/discount")
    return product(mult, disc)


def virtual(data, source1="src1.h5", seed=5):
    """vds.h5: discount a virtual dataset over src0.h5 and `source1`."""
    mult, disc = arrays(seed)
    cut = 3
    for name, part in (("src0.h5", disc[:cut]), (source1, disc[cut:])):
        with h5py.File(data.path(name), "w") as f:
            f["d"] = part
    with h5py.File(data.path("vds.h5"), "w") as f:
        f["multBy"] = mult
        layout = h5py.VirtualLayout(shape=disc.shape, dtype="f8")
        layout[:cut] = h5py.VirtualSource("src0.h5", "d", shape=(cut, IDS, NUMS))
        layout[cut:] = h5py.VirtualSource(source1, "d", shape=(DATES - cut, IDS, NUMS))
        f.create_virtual_dataset("discount", layout, fillvalue=np.nan)
    return product(mult, disc)


def external_raw(data, raw="d.raw", seed=11):
    """raw.h5: discount's bytes in the flat file `raw` beside it."""
    mult, disc = arrays(seed)
    with open(data.path(raw), "wb") as f:
        f.write(disc.astype("<f8").tobytes())
    with h5py.File(data.path("raw.h5"), "w") as f:
        f["multBy"] = mult
        f.create_dataset("discount", shape=disc.shape, dtype="<f8", external=[(raw, 0, disc.nbytes)])
    return product(mult, disc)


def plain(data, name="in.h5", seed=3):
    mult, disc = arrays(seed)
    E.write_input(data.path(name), mult, disc)
    return product(mult, disc)


# --------------------------------------------------------------------------
# The output (73)


def case_overwrite_external_link_target(ctx):
    data = Data(ctx)
    data.exact("master.h5", external_links(data))
    data.job("master.h5", "data.h5", output={"overwrite": True})
    target = data.path("data.h5")
    refused(data, E.EX_CANTCREAT, [data.yaml], target, target, "external-link target of input.", data.digests())


def case_overwrite_virtual_source(ctx):
    data = Data(ctx)
    data.exact("vds.h5", virtual(data))
    data.job("vds.h5", "src1.h5", output={"overwrite": True})
    source = data.path("src1.h5")
    refused(data, E.EX_CANTCREAT, [data.yaml], source, source, "virtual-dataset source of input.discount",
            data.digests())


def case_overwrite_external_raw(ctx):
    data = Data(ctx)
    data.exact("raw.h5", external_raw(data))
    data.job("raw.h5", "d.raw", output={"overwrite": True})
    raw = data.path("d.raw")
    refused(data, E.EX_CANTCREAT, [data.yaml], raw, raw, "external raw storage of input.discount", data.digests())


def case_overwrite_hard_link_to_raw(ctx):
    """The output is another name (a hard link) for the external raw file."""
    data = Data(ctx)
    data.exact("raw.h5", external_raw(data))
    os.link(data.path("d.raw"), data.path("other.h5"))
    data.job("raw.h5", "other.h5", output={"overwrite": True})
    refused(data, E.EX_CANTCREAT, [data.yaml], data.path("other.h5"), data.path("d.raw"),
            "external raw storage of input.discount", data.digests())


def case_overwrite_files_behind_links(ctx):
    """The read set is followed through several files: master.h5's discount
    is an external link to a dataset kept in external raw storage; multBy is
    a soft link into an external link to a virtual dataset that maps another
    dataset of its own file ("."). The output is the raw file, then the
    virtual dataset's file."""
    data = Data(ctx)
    mult, disc = arrays(13)
    with open(data.path("deep.raw"), "wb") as f:
        f.write(disc.astype("<f8").tobytes())
    with h5py.File(data.path("rawsrc.h5"), "w") as f:
        f.create_dataset("d", shape=disc.shape, dtype="<f8", external=[("deep.raw", 0, disc.nbytes)])
    with h5py.File(data.path("vds.h5"), "w") as f:
        f["m"] = mult
        layout = h5py.VirtualLayout(shape=mult.shape, dtype="f8")
        layout[:] = h5py.VirtualSource(".", "m", shape=mult.shape)
        f.create_virtual_dataset("mv", layout, fillvalue=np.nan)
    with h5py.File(data.path("master.h5"), "w") as f:
        f["linked"] = h5py.ExternalLink("vds.h5", "/")
        f["multBy"] = h5py.SoftLink("/linked/mv")
        f["discount"] = h5py.ExternalLink("rawsrc.h5", "/d")
    data.exact("master.h5", product(mult, disc))
    data.job("master.h5", "deep.raw", output={"overwrite": True})
    raw = data.path("deep.raw")
    refused(data, E.EX_CANTCREAT, [data.yaml], raw, raw, "external raw storage of input.discount", data.digests())
    data.job("master.h5", "vds.h5", output={"overwrite": True})
    vds = data.path("vds.h5")
    refused(data, E.EX_CANTCREAT, [data.yaml], vds, vds, "external-link target of input.multiplier", data.digests())


def case_restart_virtual_source_is_partial(ctx):
    """A virtual source that happens to be named `<out>.partial`: --restart
    would delete it."""
    data = Data(ctx)
    expected = virtual(data, source1="out.h5.partial")
    data.exact("vds.h5", expected)
    data.job("vds.h5", "out.h5")
    partial = data.path("out.h5.partial")
    line = refused(data, E.EX_CANTCREAT, [data.yaml, "--restart"], partial, partial,
                   "virtual-dataset source of input.discount", data.digests())
    E.check("--restart would delete" in line, line)


def case_input_named_partial_restart(ctx):
    data = Data(ctx)
    plain(data, "out.h5.partial")
    data.job("out.h5.partial", "out.h5")
    partial = data.path("out.h5.partial")
    refused(data, E.EX_CANTCREAT, [data.yaml, "--restart"], partial, partial, "(input.file)", data.digests())


def case_input_named_partial(ctx):
    data = Data(ctx)
    plain(data, "out.h5.partial")
    data.job("out.h5.partial", "out.h5")
    partial = data.path("out.h5.partial")
    refused(data, E.EX_CANTCREAT, [data.yaml], partial, partial, "(input.file); inputs are never written",
            data.digests())


def case_input_named_lock(ctx):
    """The input is named `<out>.partial.lock`: refused before the lock is
    opened, so its (binary) bytes are neither truncated nor printed."""
    data = Data(ctx)
    plain(data, "out.h5.partial.lock")
    data.job("out.h5.partial.lock", "out.h5")
    lock = data.path("out.h5.partial.lock")
    line = refused(data, E.EX_CANTCREAT, [data.yaml], lock, lock, "(input.file)", data.digests())
    E.check("HDF" not in line, f"the input's bytes in the message: {line!r}")


def case_lock_holder_text_printable(ctx):
    """Another process holds `<out>.partial.lock`, which holds binary bytes:
    the refusal shows a short printable excerpt of them."""
    data = Data(ctx)
    plain(data)
    data.job("in.h5", "out.h5")
    before = data.digests()
    lock = data.path("out.h5.partial.lock")
    with open(lock, "wb+") as holder:
        holder.write(b"\x89HDF\r\n\x1a\n\x00\x1b[31m" + bytes(range(256)) * 4)
        holder.flush()
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = E.expect_rc(data.run(data.yaml), E.EX_CANTCREAT, "lock held")
    lines = r.stderr_lines
    E.check(len(lines) == 1, f"expected one stderr line:\n{r}")
    line = lines[0]
    E.check("another job is writing" in line and f"'{lock}'" in line, line)
    E.check(all(32 <= ord(c) < 127 for c in line), f"unprintable characters in the refusal: {line!r}")
    E.check("\\x89HDF\\r\\n\\x1A\\n\\x00\\x1B[31m" in line, f"the holder's bytes, escaped: {line}")
    holder_text = line.split(f"'{data.path('out.h5.partial')}' (", 1)[-1].split(f", lock '{lock}'", 1)[0]
    E.check(len(holder_text) <= 103 and holder_text.endswith("..."), f"the holder's text is not cut: {line}")
    os.unlink(lock)
    E.check(data.digests() == before, "the input changed")


# --------------------------------------------------------------------------
# The report (78)


def case_report_is_input(ctx):
    data = Data(ctx)
    plain(data)
    data.job("in.h5", "out.h5", report="in.h5")
    refused(data, E.EX_CONFIG, [data.yaml], data.path("in.h5"), data.path("in.h5"), "(input.file)", data.digests())


def case_report_is_output(ctx):
    data = Data(ctx)
    plain(data)
    data.job("in.h5", "out.h5", report="out.h5")
    line = refused(data, E.EX_CONFIG, [data.yaml], data.path("out.h5"), data.path("out.h5"),
                   "which this job writes (output.file)", data.digests())
    E.check(line.startswith("discount_app: error: report '"), line)


def case_report_is_partial(ctx):
    data = Data(ctx)
    plain(data)
    data.job("in.h5", "out.h5", report="out.h5.partial")
    refused(data, E.EX_CONFIG, [data.yaml], data.path("out.h5.partial"), data.path("out.h5.partial"),
            "which this job writes (output.file)", data.digests())


def case_report_is_config(ctx):
    data = Data(ctx)
    plain(data)
    data.job("in.h5", "out.h5", report="job.yaml")
    refused(data, E.EX_CONFIG, [data.yaml], data.yaml, data.yaml, "(the config file)", data.digests())


def case_cli_report_is_input(ctx):
    data = Data(ctx)
    plain(data)
    data.job("in.h5", "out.h5")
    line = refused(data, E.EX_CONFIG, [data.yaml, "--report", data.path("in.h5")], data.path("in.h5"),
                   data.path("in.h5"), "(input.file)", data.digests())
    E.check("--report '" in line, line)


def case_cli_report_symlink_to_link_target(ctx):
    """--report names a symlink (relative, from the run's folder) to the
    external-link target."""
    data = Data(ctx)
    data.exact("master.h5", external_links(data))
    data.job("master.h5", "out.h5")
    before = data.digests()
    os.symlink(data.path("data.h5"), os.path.join(data.elsewhere, "run.json"))
    refused(data, E.EX_CONFIG, [data.yaml, "--report", "run.json"], "run.json", data.path("data.h5"),
            "external-link target of input.", before)


CASES = [
    ("overwrite_external_link_target", case_overwrite_external_link_target),
    ("overwrite_virtual_source", case_overwrite_virtual_source),
    ("overwrite_external_raw", case_overwrite_external_raw),
    ("overwrite_hard_link_to_raw", case_overwrite_hard_link_to_raw),
    ("overwrite_files_behind_links", case_overwrite_files_behind_links),
    ("restart_virtual_source_is_partial", case_restart_virtual_source_is_partial),
    ("input_named_partial_restart", case_input_named_partial_restart),
    ("input_named_partial", case_input_named_partial),
    ("input_named_lock", case_input_named_lock),
    ("lock_holder_text_printable", case_lock_holder_text_printable),
    ("report_is_input", case_report_is_input),
    ("report_is_output", case_report_is_output),
    ("report_is_partial", case_report_is_partial),
    ("report_is_config", case_report_is_config),
    ("cli_report_is_input", case_cli_report_is_input),
    ("cli_report_symlink_to_link_target", case_cli_report_symlink_to_link_target),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
