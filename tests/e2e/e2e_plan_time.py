#!/usr/bin/env python3
"""`discount_app plan`'s predicted time: functional, not timing.

  - plan measures the input's read rate and the output folder's write rate
    now, says so per stage, prints a predicted wall time, and leaves neither a
    scratch file nor an output behind;
  - an output folder that does not exist yet is measured in its nearest
    existing parent, plan says so, and creates nothing;
  - `plan --no-measure` with no report and no limits says plainly that it
    cannot predict the time (no number);
  - a report of an earlier run of the job is picked up (its path and date are
    named), and one of another input is not;
  - limits: in the config are used as such with --no-measure;
  - by default plan prints a short summary (shape, chunk axis, slabs,
    buffers, the predicted wall time and its bottleneck); --verbose adds each
    rate's source, the prediction stage by stage and the resolved config.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

SHAPE = (8, 20011, 3)  # 3.8 MB of discount: several slabs under max_slab 1MiB
# The staging ring's model (fill, drain, the slowest stage's pace); on a disk
# memory.staging: auto would take none for a job this small (e2e_unstaged checks its model).
MEMORY = {"max_slab": "1MiB", "host_budget": "256MiB", "staging": "ring"}
WALL = re.compile(r"^predicted wall (\d+\.\d+) s", re.M)


def stage_rows(stdout):
    """{stage: row text} of the prediction table."""
    rows, inside = {}, False
    for line in stdout.splitlines():
        if line.startswith("predicted      stage"):
            inside = True
            continue
        if inside and line.startswith("               ") and line.split():
            rows[line.split()[0]] = line
        elif inside:
            break
    return rows


def listing(directory):
    """The folder's names, less the harness's own command logs (cmdNNN.*)."""
    if not os.path.isdir(directory):
        return None
    return sorted(n for n in os.listdir(directory) if not re.match(r"cmd\d+\.std(out|err)$", n))


def job(ctx, out="out/cv.h5", name="job.yaml", input_file="in.h5", **top):
    # The host kernel in every build: its stages (read, kernel, write) are
    # what the cases check; a GPU build's device space adds h2d and d2h.
    return E.write_job(os.path.join(ctx.work, name), input_file, out, memory=MEMORY, compute={"space": "host"},
                       **top)


def measured_now(ctx):
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=71)
    os.makedirs(os.path.join(ctx.work, "out"))
    yaml = job(ctx)
    before = listing(ctx.work), listing(os.path.join(ctx.work, "out"))
    r = E.expect_rc(E.app(ctx, "plan", "--verbose", yaml), 0, "plan")
    m = WALL.search(r.stdout)
    E.check(m and float(m.group(1)) > 0, f"no predicted wall time:\n{r}")
    rows = stage_rows(r.stdout)
    E.check(set(rows) == {"read", "kernel", "write"}, f"prediction rows {sorted(rows)}:\n{r}")
    for stage, row in rows.items():
        E.check(row.rstrip().endswith("measured now"), f"{stage} is not 'measured now':\n{row}")
    for needle in ("read measured now:", "write measured now:", "scratch file in", "removed",
                   "start-up and finish measured now:", "more slab(s) at"):
        E.check(needle in r.stdout, f"plan output lacks {needle!r}:\n{r}")
    E.check("cannot predict" not in r.stdout and "lower bound" not in r.stdout, f"{r}")
    after = listing(ctx.work), listing(os.path.join(ctx.work, "out"))
    E.check(after == before, f"plan left files behind: {before} -> {after}")


def output_folder_missing(ctx):
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=72)
    yaml = job(ctx, out="not/yet/cv.h5")
    before = listing(ctx.work)
    r = E.expect_rc(E.app(ctx, "plan", "--verbose", yaml), 0, "plan")
    E.check(WALL.search(r.stdout), f"no predicted wall time:\n{r}")
    E.check("does not exist yet" in r.stdout and "nearest existing parent" in r.stdout, f"{r}")
    E.check(stage_rows(r.stdout)["write"].rstrip().endswith("measured now"), f"{r}")
    E.check(listing(ctx.work) == before, f"plan created or left something: {before} -> {listing(ctx.work)}")
    E.check(not os.path.exists(os.path.join(ctx.work, "not")), "plan created the output folder")


def no_measure_no_report(ctx):
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=73)
    os.makedirs(os.path.join(ctx.work, "out"))
    yaml = job(ctx, report="out/run.json")
    r = E.expect_rc(E.app(ctx, "plan", "--verbose", "--no-measure", yaml), 0, "plan --no-measure")
    E.check("cannot predict the time: no rate known for read, kernel, write" in r.stdout, f"{r}")
    E.check(not WALL.search(r.stdout), f"a number without any rate:\n{r}")
    E.check("--no-measure" in r.stdout, f"the reason is not named:\n{r}")
    E.check(listing(os.path.join(ctx.work, "out")) == [], "plan --no-measure wrote something")


def report_picked_up(ctx):
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=74)
    os.makedirs(os.path.join(ctx.work, "out"))
    yaml = job(ctx, report="out/run.json")
    E.expect_rc(E.app(ctx, "run", "-q", yaml), 0, "run")
    E.check_output(os.path.join(ctx.work, "out", "cv.h5"), E.expected_cv(src))
    with open(os.path.join(ctx.work, "out", "run.json")) as f:
        report = E.json.load(f)
    r = E.expect_rc(E.app(ctx, "plan", "--verbose", "--no-measure", yaml), 0, "plan --no-measure after a run")
    m = WALL.search(r.stdout)
    E.check(m and float(m.group(1)) > 0, f"no predicted wall time from the report:\n{r}")
    rows = stage_rows(r.stdout)
    E.check(set(rows) == {"read", "kernel", "write"}, f"{r}")
    date = re.compile(r"report \S*out/run\.json of \d{4}-\d\d-\d\d \d\d:\d\d UTC \(\d+ s ago\)")
    for stage, row in rows.items():
        E.check(date.search(row), f"{stage} does not name the report and its date:\n{row}")
        got = next(s for s in report["stages"] if s["name"] == stage)
        rate = float(row.split()[3])
        E.check(abs(rate - got["gb_per_s"]) <= 0.006 + 0.01 * got["gb_per_s"],
                f"{stage}: plan's rate {rate} is not the report's {got['gb_per_s']}")
    E.check("its time in no stage" in r.stdout, f"{r}")
    # The same report for a job on another input is not used.
    E.generate(ctx, os.path.join(ctx.work, "other.h5"), SHAPE[0], SHAPE[1] + 2, SHAPE[2], seed=75)
    other = job(ctx, name="other.yaml", input_file="other.h5", report="out/run.json")
    r = E.expect_rc(E.app(ctx, "plan", "--verbose", "--no-measure", other), 0, "plan of another input")
    E.check("not used: its input differs" in r.stdout and "cannot predict" in r.stdout, f"{r}")


def configured_limits(ctx):
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=76)
    os.makedirs(os.path.join(ctx.work, "out"))
    yaml = job(ctx, limits={"read": "0.5GB/s", "write": 0.25, "kernel": "2GB/s"})
    r = E.expect_rc(E.app(ctx, "plan", "--verbose", "--no-measure", yaml), 0, "plan with limits")
    E.check(WALL.search(r.stdout), f"no predicted wall time:\n{r}")
    rows = stage_rows(r.stdout)
    out_bytes = 8 * SHAPE[0] * SHAPE[1] * SHAPE[2]
    E.check(rows["write"].rstrip().endswith("config limits:"), f"{r}")
    E.check(abs(float(rows["write"].split()[4]) - out_bytes / 0.25e9) < 1e-3, f"write seconds:\n{r}")
    E.check("plus start-up and finish (not known" in r.stdout, f"{r}")


def summary_and_verbose(ctx):
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=77)
    os.makedirs(os.path.join(ctx.work, "out"))
    yaml = job(ctx, limits={"read": "0.5GB/s", "write": 0.25, "kernel": "2GB/s"})
    short = E.expect_rc(E.app(ctx, "plan", "--no-measure", yaml), 0, "plan").stdout
    lines = short.splitlines()
    E.check(8 <= len(lines) <= 16, f"the summary has {len(lines)} lines:\n{short}")
    for head in ("input ", "shape ", "chunk axis ", "slab ", "host buffers ", "output ", "layout ", "predicted wall "):
        E.check(any(line.startswith(head) for line in lines), f"the summary lacks {head.strip()!r}:\n{short}")
    # write is the slowest link here: 0.25 GB/s against 0.5 and 2.
    m = re.search(r"^predicted wall (\d+\.\d+) s plus start-up and finish; bottleneck write: \S+ \S+ at 0\.25 GB/s"
                  r" \(config limits:\)$", short, re.M)
    E.check(m, f"no predicted wall time with its bottleneck:\n{short}")
    out_bytes = 8 * SHAPE[0] * SHAPE[1] * SHAPE[2]
    E.check(abs(float(m.group(1)) - out_bytes / 0.25e9) < 0.2 * out_bytes / 0.25e9 + 0.01, f"wall:\n{short}")
    # output.layout: auto keeps one file for this small output, says why, and
    # since the write sets the pace, names split and the wall it would give.
    E.check(re.search(r"^layout +single \(auto: ", short, re.M), f"no layout line:\n{short}")
    hint = re.search(r"^hint .*output\.layout: split.* (\d+\.\d+)x faster.* about (\d+\.\d+) s$", short, re.M)
    E.check(hint and float(hint.group(1)) > 1 and float(hint.group(2)) <= float(m.group(1)), f"no split hint:\n{short}")
    for needle in ("resolved configuration (every default", "predicted      stage", "limits ", "pipeline_depth:"):
        E.check(needle not in short, f"the summary shows {needle!r}:\n{short}")
    full = E.expect_rc(E.app(ctx, "plan", "--verbose", "--no-measure", yaml), 0, "plan --verbose").stdout
    for needle in ("resolved configuration", "predicted      stage", "limits ", "pipeline_depth: 3"):
        E.check(needle in full, f"plan --verbose lacks {needle!r}:\n{full}")
    # The same plan above the output line (its free space may change between the two).
    E.check(full.startswith(short.split("\noutput ", 1)[0] + "\noutput "), "--verbose does not start with the summary's plan")


def fused_pace(ctx):
    """kernel: fused (host space, default slicing): the reading threads also multiply, so read + kernel set the pace."""
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), *SHAPE, seed=78)
    os.makedirs(os.path.join(ctx.work, "out"))
    # Per slab: read 4.3 ms, kernel 2.4 ms, write 5.5 ms: the write is the
    # slowest stage alone, the read and the multiply after it are slower still.
    limits = {"read": "1GB/s", "write": "0.7GB/s", "kernel": "4GB/s"}
    yaml = job(ctx, limits=limits)
    r = E.expect_rc(E.app(ctx, "plan", "--no-measure", yaml), 0, "plan")
    E.check(re.search(r"^kernel +\S+, fused: ", r.stdout, re.M), f"no fused kernel line:\n{r.stdout}")
    E.check(re.search(r"; bottleneck read \+ fused kernel: \S+ \S+ read at 1\.00 GB/s and multiplied by the same "
                      r"threads at 4\.00 GB/s \(config limits:\)$", r.stdout, re.M), f"{r.stdout}")
    # The Kokkos kernel beside the reader: the write, the slowest stage alone, sets the pace.
    yaml = E.write_job(os.path.join(ctx.work, "mdrange.yaml"), "in.h5", "out/cv.h5", memory=MEMORY,
                       compute={"space": "host", "kernel": "mdrange"}, limits=limits)
    r = E.expect_rc(E.app(ctx, "plan", "--no-measure", yaml), 0, "plan, kernel: mdrange")
    E.check(re.search(r"; bottleneck write: ", r.stdout, re.M), f"{r.stdout}")


CASES = [
    ("measured_now", measured_now),
    ("output_folder_missing", output_folder_missing),
    ("no_measure_no_report", no_measure_no_report),
    ("report_picked_up", report_picked_up),
    ("configured_limits", configured_limits),
    ("summary_and_verbose", summary_and_verbose),
    ("fused_pace", fused_pace),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
