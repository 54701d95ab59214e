#!/usr/bin/env python3
"""Input and output types (docs/your-data.md "Types"): float32 and integer
inputs are converted to float64 exactly before the product; output.dtype:
float32 stores each value rounded once from its float64 product, which
NumPy recomputes as np.float32(np.float64(m) * np.float64(d)); the report
counts bytes as stored on disk; int64 inputs are refused with the way to
convert them. Every case checks bits against NumPy, on odd shapes with
random non-zero data, and runs `verify --full`.
"""

import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

SHAPE = (7, 13, 5)  # dates, ids, nums: odd sizes
SLAB = {"max_slab": 2 * SHAPE[1] * SHAPE[2] * 8}  # several slabs (two dates each)


def job(ctx, dtype=None, sel=None):
    output = {"dtype": dtype} if dtype else None
    return E.write_job(os.path.join(ctx.work, "job.yaml"), "in.h5", "out.h5", input=sel,
                       output=output, compute={"space": "host"}, memory=SLAB,
                       report=os.path.join(ctx.work, "report.json"))


def run_and_verify(ctx, job_path):
    r = E.expect_rc(E.app(ctx, "run", job_path), 0, "run")
    v = E.expect_rc(E.app(ctx, "verify", "--full", job_path), 0, "verify --full")
    E.check("all equal" in v.stdout, f"verify did not pass:\n{v}")
    with open(os.path.join(ctx.work, "report.json")) as f:
        return r, json.load(f)


def read_cv(ctx, dtype):
    with E.h5py.File(os.path.join(ctx.work, "out.h5"), "r") as f:
        ds = f["cv"]
        E.check(ds.dtype == np.dtype(dtype), f"cv is stored as {ds.dtype}, expected {dtype}")
        return ds[...]


def bits_equal(actual, expected, what):
    E.check(actual.dtype == expected.dtype and actual.shape == expected.shape,
            f"{what}: {actual.dtype}{actual.shape} against {expected.dtype}{expected.shape}")
    view = np.uint32 if actual.dtype == np.float32 else np.uint64
    bad = np.argwhere(actual.view(view) != expected.view(view))
    E.check(len(bad) == 0, f"{what}: {len(bad)} element(s) differ, first at {bad[:1].tolist()}")


def inputs(ctx, mult_dtype, disc_dtype, seed):
    rng = np.random.default_rng(seed)
    D, I, N = SHAPE
    if np.dtype(disc_dtype).kind in "iu":
        info = np.iinfo(disc_dtype)
        disc = rng.integers(max(info.min, -(2 ** 31)), min(info.max, 2 ** 31 - 1), size=SHAPE, dtype=np.int64)
        disc[disc == 0] = 1
        disc = disc.astype(disc_dtype)
    else:
        disc = E.random_nonzero(rng, SHAPE).astype(disc_dtype)
    mult = E.random_nonzero(rng, (I, N)).astype(mult_dtype)
    E.write_input(os.path.join(ctx.work, "in.h5"), mult, disc)
    return mult, disc


def check_bytes(report, disc, mult, out_itemsize):
    want_in = disc.size * disc.itemsize + mult.size * mult.itemsize
    want_out = disc.size * out_itemsize
    E.check(report["input_bytes"] == want_in and report["output_bytes"] == want_out,
            f"report: {report['input_bytes']} B read, {report['output_bytes']} B written; "
            f"as stored: {want_in} and {want_out}")


def case_float32_in_float64_out(ctx):
    """float32 inputs widen exactly; the report reads half a float64 input's bytes."""
    mult, disc = inputs(ctx, np.float32, np.float32, 1)
    _, report = run_and_verify(ctx, job(ctx))
    expected = mult.astype(np.float64)[None] * disc.astype(np.float64)
    bits_equal(read_cv(ctx, "<f8"), expected, "cv")
    check_bytes(report, disc, mult, 8)
    print(f"float32 in, float64 out: exact; report read {report['input_bytes']} B")


def case_float64_in_float32_out(ctx):
    """output.dtype float32: each value rounded once from the float64 product."""
    mult, disc = inputs(ctx, np.float64, np.float64, 2)
    _, report = run_and_verify(ctx, job(ctx, "float32"))
    product = np.float64(mult)[None] * np.float64(disc)
    expected = product.astype(np.float32)
    cv = read_cv(ctx, "<f4")
    bits_equal(cv, expected, "cv")
    # Rounding twice (through a float32 multBy) would differ somewhere: the check has teeth.
    twice = (mult.astype(np.float32)[None] * disc.astype(np.float32)).astype(np.float32)
    E.check(np.any(twice.view(np.uint32) != expected.view(np.uint32)), "the data cannot tell once from twice")
    check_bytes(report, disc, mult, 4)
    with E.h5py.File(os.path.join(ctx.work, "out.h5"), "r") as f:
        stored = f["cv"].id.get_storage_size()
    E.check(stored == disc.size * 4, f"cv takes {stored} B on disk, expected {disc.size * 4}")
    print(f"float64 in, float32 out: rounded once; report wrote {report['output_bytes']} B")


def case_float32_resumes(ctx):
    """A float32 output killed mid-run resumes: the recorded checksums read the float32 bytes back."""
    mult, disc = inputs(ctx, np.float64, np.float64, 3)
    path = job(ctx, "float32")
    hold = E.Hold(ctx, 2)
    proc, _, _ = E.start([ctx.app, "run", path], ctx.work, os.path.join(ctx.work, "held"), hold.env)
    hold.wait(2, proc=proc)
    proc.kill()
    E.reap(proc)
    E.check(os.path.exists(os.path.join(ctx.work, "out.h5.partial")), "no partial after the kill")
    r, _ = run_and_verify(ctx, path)
    E.check("resum" in (r.stdout + r.stderr).lower(), f"the second run did not resume:\n{r}")
    bits_equal(read_cv(ctx, "<f4"), (np.float64(mult)[None] * np.float64(disc)).astype(np.float32), "cv")
    print("float32 output killed after slab 2 and resumed: exact")


def case_int32_in(ctx):
    """int32 discount, uint16 multBy: exact in float64."""
    mult = np.random.default_rng(4).integers(1, 60000, size=SHAPE[1:]).astype(np.uint16)
    _, disc = inputs(ctx, np.float64, np.int32, 4)
    E.write_input(os.path.join(ctx.work, "in.h5"), mult, disc)
    _, report = run_and_verify(ctx, job(ctx))
    bits_equal(read_cv(ctx, "<f8"), mult.astype(np.float64)[None] * disc.astype(np.float64), "cv")
    check_bytes(report, disc, mult, 8)
    print("int32 x uint16 in, float64 out: exact")


def case_int64_refused(ctx):
    """int64 cannot always be float64 exactly: refused with the way to convert."""
    inputs(ctx, np.float64, np.int64, 5)
    r = E.expect_rc(E.app(ctx, "run", job(ctx)), 65, "run")
    err = r.stderr
    E.check("int64" in err or "64-bit integer" in err, f"the message does not name the type:\n{r}")
    E.check("astype" in err and "discount" in err, f"the message does not say how to convert:\n{r}")
    E.check(not os.path.exists(os.path.join(ctx.work, "out.h5")), "an output was written")
    print(err.strip().splitlines()[-1])


def case_verify_wrong_dtype(ctx):
    """verify with another output.dtype than the run's: refused, naming the key."""
    inputs(ctx, np.float64, np.float64, 6)
    run_and_verify(ctx, job(ctx, "float32"))
    v = E.expect_rc(E.app(ctx, "verify", job(ctx, "float64")), 65, "verify with float64")
    E.check("output.dtype" in v.stderr and "float64" in v.stderr, f"verify's message:\n{v}")


CASES = [
    ("float32_in_float64_out", case_float32_in_float64_out),
    ("float64_in_float32_out", case_float64_in_float32_out),
    ("float32_resumes", case_float32_resumes),
    ("int32_in", case_int32_in),
    ("int64_refused", case_int64_refused),
    ("verify_wrong_dtype", case_verify_wrong_dtype),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
