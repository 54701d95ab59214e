#!/usr/bin/env python3
"""`discount_app verify`: exact figures for a difference, and the same input checks as `run`.

- A finished output with one element moved by whole ulps (written with h5py):
  verify fails (65), and its line gives cv and the expected value with 17
  significant digits (Python's float() reads both back to the exact doubles
  NumPy holds) and their distance in ulps, counted here independently from the
  bit patterns. Cases: +1 ulp on a positive value, -3 ulps on a negative one,
  and a value whose sign was flipped (ulps across zero).
- A transposed input (stored [id][date][num]) checked with a config lacking
  `input.axes`: verify stops with exactly the stderr line and exit code `run`
  gives for that config, not with "elements differ".
- A sub-range past the input's end (`input.dates`): verify and run give the
  same line and exit code (78).
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 7, 113, 3  # odd sizes; dates != ids so a wrong axis order cannot broadcast


def ordered(x):
    """A double's bits as an integer in the order of the values (negatives mirrored below zero)."""
    bits = int(np.array([x], dtype=np.float64).view(np.int64)[0])
    return -(bits & 0x7FFFFFFFFFFFFFFF) if bits < 0 else bits


def finished_job(ctx, seed):
    """A transposed input written with h5py, run with the right axes; returns (job yaml, output path)."""
    rng = np.random.default_rng(seed)
    d = ctx.dir("job")
    E.write_input(os.path.join(d, "in.h5"), E.random_nonzero(rng, (IDS, NUMS)),
                  E.random_nonzero(rng, (IDS, DATES, NUMS)))
    job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", input={"axes": ["id", "date", "num"]})
    E.expect_rc(E.app(ctx, "run", "-q", job, cwd=d), 0, "run")
    out = os.path.join(d, "out.h5")
    E.check_output(out, E.expected_cv(os.path.join(d, "in.h5"), axes=("id", "date", "num")))
    E.expect_rc(E.app(ctx, "verify", job, cwd=d), 0, "verify of an untouched output")
    return job, out


def perturbed_case(seed, negative, change, ulps_text):
    """On an element of the given sign, change(value) -> the value stored instead; ulps_text: what verify says."""

    def case(ctx):
        job, out = finished_job(ctx, seed)
        rng = np.random.default_rng(seed + 100)
        with E.h5py.File(out, "r+") as f:
            cv = f["cv"][...]
            candidates = np.argwhere((cv < 0) == negative)
            idx = tuple(int(x) for x in candidates[rng.integers(len(candidates))])
            expected = float(cv[idx])
            changed = float(change(cv[idx]))
            f["cv"][idx] = changed
        r = E.expect_rc(E.app(ctx, "verify", job), E.EX_DATA, "verify of a perturbed output")
        line = r.stderr.strip()
        E.check(len(r.stderr_lines) == 1, f"expected one stderr line:\n{r}")
        E.check("1 of 2373 elements differ" in line, f"verify should find exactly one element:\n{r}")
        i, dte, k = idx  # file order [id][date][num]
        E.check(f"[date {dte}, id {i}, num {k}]" in line, f"verify should name element {idx}:\n{r}")
        got = f"cv={changed:.17g}, expected {expected:.17g}"
        E.check(got in line, f"verify should print '{got}' (17 significant digits):\n{r}")
        # The printed figures are the exact doubles.
        E.check(float(line.split("cv=")[1].split(",")[0]) == changed, f"cv does not read back exactly:\n{r}")
        distance = abs(ordered(changed) - ordered(expected))
        E.check(f"({distance} ulp" in line and ulps_text in line,
                f"verify should say '{ulps_text}' ({distance} by the bit patterns):\n{r}")

    return case


def same_error_as_run(ctx, job, cwd, code, words):
    run = E.expect_rc(E.app(ctx, "run", "-q", job, cwd=cwd), code, "run")
    verify = E.expect_rc(E.app(ctx, "verify", job, cwd=cwd), code, "verify")
    E.check(len(run.stderr_lines) == 1 and words in run.stderr, f"run should fail with '{words}':\n{run}")
    E.check(verify.stderr == run.stderr,
            f"verify's error should be run's:\n--- run ---\n{run}\n--- verify ---\n{verify}")
    E.check("differ" not in verify.stderr, f"verify compared elements instead of checking the input:\n{verify}")


def case_transposed_without_axes(ctx):
    job, out = finished_job(ctx, seed=31)
    d = os.path.dirname(job)
    # The same job without input.axes: the file is read as [date][id][num].
    wrong = E.write_job(os.path.join(d, "no_axes.yaml"), "in.h5", "out.h5", output={"overwrite": True})
    before = E.file_digest(out)
    same_error_as_run(ctx, wrong, d, E.EX_DATA, "shapes do not broadcast")
    E.check(E.file_digest(out) == before, "the refused run or verify changed the output")


def case_dates_past_end(ctx):
    job, _ = finished_job(ctx, seed=32)
    d = os.path.dirname(job)
    wrong = E.write_job(os.path.join(d, "past_end.yaml"), "in.h5", "out.h5",
                        input={"axes": ["id", "date", "num"], "dates": [2, DATES + 4]}, output={"overwrite": True})
    same_error_as_run(ctx, wrong, d, E.EX_CONFIG, "exceeds")


CASES = [
    ("one_ulp_up", perturbed_case(21, False, lambda x: np.nextafter(x, np.inf), "(1 ulp)")),
    ("three_ulps_down_negative",
     perturbed_case(22, True, lambda x: np.nextafter(np.nextafter(np.nextafter(x, -np.inf), -np.inf), -np.inf),
                    "(3 ulps)")),
    # Across zero: the distance exceeds int64 for values above about 2 (verify counts in uint64).
    ("sign_flipped", perturbed_case(23, False, lambda x: -x, " ulps)")),
    ("transposed_without_axes", case_transposed_without_axes),
    ("dates_past_end", case_dates_past_end),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
