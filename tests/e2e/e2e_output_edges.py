#!/usr/bin/env python3
"""The output with the attributes and values real inputs bring.

  - an input attribute over 64 KiB is copied onto cv (as discount_<name>;
    dense attribute storage), exact;
  - a fixed-length text attribute that is not UTF-8 is copied as its bytes,
    not relabelled UTF-8;
  - input.nonfinite changed between a kill and the resume: the partial is
    resumed when its done ranges hold finite values (either way), and refused
    (73) when they hold NaN/Inf and the new setting is error;
  - output.dtype: float32 under input.nonfinite: error refuses a product that
    overflows float32 (65, naming the slab; no output left), and under
    propagate stores ±inf as NumPy's float32 cast does.

Random non-zero odd-sized inputs, read back with h5py.
"""

import os
import signal
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 7, 211, 3


def inputs(d, rng, scale=1.0):
    mult = E.random_nonzero(rng, (IDS, NUMS))
    disc = E.random_nonzero(rng, (DATES, IDS, NUMS)) * scale
    return mult, disc


def case_large_attribute(ctx):
    d = ctx.dir("job")
    rng = np.random.default_rng(3)
    mult, disc = inputs(d, rng)
    big = "".join(chr(0x41 + c % 26) for c in rng.integers(0, 26, 100_000))  # 100 kB of text
    table = rng.random(20_000)  # 160 kB of float64
    with h5py.File(os.path.join(d, "in.h5"), "w", libver="latest") as f:
        f["multBy"] = mult
        f["discount"] = disc
        f["discount"].attrs["history"] = big
        f["discount"].attrs["table"] = table
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5")
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "run with a 100 kB attribute")
    with h5py.File(os.path.join(d, "out.h5"), "r") as f:
        E.check(E.text(f["cv"].attrs["discount_history"]) == big, "the large text attribute differs")
        E.assert_bits_equal(f["cv"].attrs["discount_table"], table, "the large array attribute")
        E.assert_bits_equal(f["cv"][...], mult[None] * disc, "cv")


def case_non_utf8_attribute(ctx):
    d = ctx.dir("job")
    rng = np.random.default_rng(4)
    mult, disc = inputs(d, rng)
    latin1 = "café, 5 €".encode("latin-1", errors="replace")
    with h5py.File(os.path.join(d, "in.h5"), "w") as f:
        f["multBy"] = mult
        f["discount"] = disc
        f["discount"].attrs.create("note", np.bytes_(latin1))  # fixed-length, ASCII cset
        f["discount"].attrs.create("title", np.bytes_(b"plain ascii"))
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5")
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "run")
    with h5py.File(os.path.join(d, "out.h5"), "r") as f:
        attr = f["cv"].attrs.get_id("discount_note")
        E.check(attr.get_type().get_cset() != h5py.h5t.CSET_UTF8, "a Latin-1 attribute was marked UTF-8")
        raw = f["cv"].attrs["discount_note"]
        E.check(bytes(raw) == latin1, f"the Latin-1 attribute reads {raw!r}, expected {latin1!r}")
        E.check(E.text(f["cv"].attrs["discount_title"]) == "plain ascii", "a UTF-8-valid attribute changed")


def case_float32_overflow(ctx):
    d = ctx.dir("job")
    rng = np.random.default_rng(5)
    mult, disc = inputs(d, rng)
    disc[DATES - 2, IDS // 2, 1] = 3e37
    mult[IDS // 2, 1] = -40.0  # -1.2e39: finite in float64, -inf in float32
    E.write_input(os.path.join(d, "in.h5"), mult, disc)
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", output={"dtype": "float32"})
    r = E.app(ctx, "run", "-q", yaml, cwd=d)
    E.check(r.rc == E.EX_DATA and "overflows float32" in r.stderr and f"[{DATES - 2}][{IDS // 2}][1]" in r.stderr,
            f"a float32 overflow under input.nonfinite: error was not refused:\n{r}")
    E.check(not os.path.exists(os.path.join(d, "out.h5")), "an output was published")
    loose = E.write_job(os.path.join(d, "loose.yaml"), "in.h5", "out.h5",
                        input={"nonfinite": "propagate"}, output={"dtype": "float32"})
    E.expect_rc(E.app(ctx, "run", "-q", "--restart", loose, cwd=d), 0, "the same under propagate")
    with h5py.File(os.path.join(d, "out.h5"), "r") as f:
        with np.errstate(over="ignore"):
            expected = (mult[None] * disc).astype(np.float32)
        got = f["cv"][...]
        E.check(got.dtype == np.float32 and np.array_equal(got.view(np.uint32), expected.view(np.uint32)),
                "float32 cv with -inf differs from NumPy's cast")
        E.check(np.isneginf(f["cv"][DATES - 2, IDS // 2, 1]), "the overflow is not -inf")


def killed_partial(ctx, d, name, nonfinite, hold_at=3):
    """A run under `nonfinite`, one date per slab, killed after slab `hold_at`."""
    yaml = E.write_job(os.path.join(d, name), "in.h5", "out.h5", input={"nonfinite": nonfinite},
                       output={"checkpoint_seconds": 0},
                       memory={"max_slab": IDS * NUMS * 8, "pipeline_depth": 2, "chunk_axis": "date"})
    hold = E.Hold(ctx, hold_at)
    proc, _, _ = E.start([ctx.app, "run", "-q", yaml], d, os.path.join(ctx.work, name), env=hold.env)
    hold.wait(hold_at, proc=proc)
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    E.check(E.done_ranges(os.path.join(d, "out.h5.partial")), "nothing done before the kill")
    return yaml


def resume_with(ctx, d, nonfinite):
    yaml = E.write_job(os.path.join(d, f"now-{nonfinite}.yaml"), "in.h5", "out.h5", input={"nonfinite": nonfinite},
                       output={"checkpoint_seconds": 0},
                       memory={"max_slab": IDS * NUMS * 8, "pipeline_depth": 2, "chunk_axis": "date"})
    return E.app(ctx, "run", yaml, cwd=d)


def case_nonfinite_change_on_resume(ctx):
    rng = np.random.default_rng(6)
    for was, now in (("error", "propagate"), ("propagate", "error")):
        d = ctx.dir(f"finite-{was}")
        mult, disc = inputs(d, rng)
        E.write_input(os.path.join(d, "in.h5"), mult, disc)
        killed_partial(ctx, d, "first.yaml", was)
        r = resume_with(ctx, d, now)
        E.check(r.rc == 0 and "resuming" in r.stdout, f"finite data, {was} -> {now}: not resumed:\n{r}")
        E.assert_bits_equal(E.read_output(os.path.join(d, "out.h5")), mult[None] * disc, f"cv after {was} -> {now}")
    # a NaN in a done date under propagate: error refuses, propagate resumes
    d = ctx.dir("nan")
    mult, disc = inputs(d, rng)
    disc[0, 5, 1] = np.nan
    E.write_input(os.path.join(d, "in.h5"), mult, disc)
    killed_partial(ctx, d, "first.yaml", "propagate")
    r = resume_with(ctx, d, "error")
    E.check(r.rc == E.EX_CANTCREAT and "NaN/Inf" in r.stderr, f"done NaN resumed under error:\n{r}")
    r = resume_with(ctx, d, "propagate")
    E.check(r.rc == 0 and "resuming" in r.stdout, f"not resumed under propagate again:\n{r}")
    E.assert_bits_equal(E.read_output(os.path.join(d, "out.h5")), mult[None] * disc, "cv with NaN")


CASES = [
    ("large_attribute", case_large_attribute),
    ("non_utf8_attribute", case_non_utf8_attribute),
    ("float32_overflow", case_float32_overflow),
    ("nonfinite_change_on_resume", case_nonfinite_change_on_resume),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
