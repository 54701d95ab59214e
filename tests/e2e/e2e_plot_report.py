#!/usr/bin/env python3
"""scripts/plot_report.py on real run reports.

The app runs a small job in the question's transposed layout with --report;
the chart script then plots that report. Asserted: the PNG exists, starts
with the PNG signature, has an IHDR of a plausible size and an IEND, is larger
than a few KB, and the script's stdout names the bottleneck stage the JSON
names. A copy of the report with limits added by the test (per-stage
limit_gb_per_s / fraction_of_limit, a top-level `limits` table, `ranks`)
plots too and its stdout shows the percentages; two reports go into one PNG;
a missing file, a non-JSON file and a JSON file that is not a run report each
exit 2 with one stderr line. The time panel's figures (--json) account for the
wall time: each stage's busy + idle seconds, and the time in a stage (the
report's any_stage_seconds) plus the time in no stage, are the wall time; a
report without any_stage_seconds gets bounds that hold the measured split.
Cases that draw skip (77) when this Python cannot import matplotlib
(scripts/deps.sh installs python3-matplotlib).
"""

import json
import os
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

SCRIPT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                                       "plot_report.py"))
DATES, IDS, NUMS = 12, 3001, 5
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_PNG_BYTES = 5 * 1024


def need_matplotlib():
    probe = subprocess.run([sys.executable, "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        raise E.Skip(f"matplotlib is not importable by {sys.executable} (install python3-matplotlib: scripts/deps.sh)")


def plot(ctx, *args):
    """Run the chart script with this Python; matplotlib's cache stays in the case directory."""
    env = {"MPLCONFIGDIR": ctx.dir("mplconfig")}
    return E.run(ctx, [sys.executable, SCRIPT] + [str(a) for a in args], env=env)


def run_with_report(ctx, seed=3):
    """A small job (transposed layout, several slabs) run with --report; returns (report path, its JSON)."""
    d = ctx.dir("job")
    E.generate(ctx, os.path.join(d, "in.h5"), DATES, IDS, NUMS, seed=seed, axes=("id", "date", "num"))
    job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", input={"axes": ["id", "date", "num"]},
                      output={"overwrite": True}, memory={"max_slab": 3 * IDS * NUMS * 8})
    report = os.path.join(d, "run.json")
    E.expect_rc(E.app(ctx, "run", "-q", job, "--report", report, cwd=d), 0, "run --report")
    E.check(os.path.exists(report), f"run --report wrote no {report}")
    with open(report) as f:
        doc = json.load(f)
    E.check(doc.get("stages"), f"{report} has no stages:\n{json.dumps(doc, indent=1)[:2000]}")
    E.check(isinstance(doc.get("bottleneck"), str), f"{report} names no bottleneck")
    return report, doc


def check_png(path):
    E.check(os.path.exists(path), f"no chart at {path}")
    size = os.path.getsize(path)
    E.check(size > MIN_PNG_BYTES, f"{path} is only {size} bytes (expected > {MIN_PNG_BYTES})")
    with open(path, "rb") as f:
        data = f.read()
    E.check(data[:8] == PNG_SIGNATURE, f"{path} does not start with the PNG signature: {data[:8]!r}")
    length, kind = struct.unpack(">I4s", data[8:16])
    E.check(kind == b"IHDR" and length == 13, f"{path}: first chunk is {kind!r} ({length} bytes), expected IHDR")
    width, height = struct.unpack(">II", data[16:24])
    E.check(300 <= width <= 4000 and 150 <= height <= 4000, f"{path}: implausible size {width} x {height}")
    E.check(data[-12:] == b"\x00\x00\x00\x00IEND\xaeB`\x82", f"{path} does not end with an IEND chunk")
    return width, height, size


def expect_plotted(r, what):
    E.expect_rc(r, 0, what)
    E.check(r.stderr.strip() == "", f"{what}: unexpected stderr\n{r}")


def case_plot_run_report(ctx):
    need_matplotlib()
    report, doc = run_with_report(ctx)
    bottleneck = doc["bottleneck"]
    E.check(bottleneck in [s["name"] for s in doc["stages"]], f"bottleneck '{bottleneck}' is not a stage")

    # Default output: next to the report, same stem.
    r = plot(ctx, report)
    expect_plotted(r, "plot_report.py run.json")
    default_png = os.path.splitext(report)[0] + ".png"
    w, h, size = check_png(default_png)
    E.check(f"bottleneck: {bottleneck}" in r.stdout, f"stdout does not name the bottleneck '{bottleneck}':\n{r}")
    for s in doc["stages"]:
        E.check(s["name"] in r.stdout, f"stdout does not list stage '{s['name']}':\n{r}")
    E.check("limit not measured" in r.stdout, f"a report without limits should say 'limit not measured':\n{r}")
    E.check(f"wrote {default_png}" in r.stdout, f"stdout does not name the PNG:\n{r}")

    # -o elsewhere.
    out = os.path.join(ctx.dir("charts"), "chart.png")
    expect_plotted(plot(ctx, report, "-o", out), "plot_report.py -o")
    check_png(out)
    print(f"report: {len(doc['stages'])} stages, bottleneck {bottleneck}; chart {w} x {h}, {size} bytes")


def case_plot_report_with_limits(ctx):
    need_matplotlib()
    report, doc = run_with_report(ctx, seed=4)
    names = [s["name"] for s in doc["stages"]]
    limited = "kernel" if "kernel" in names else names[0]
    # As the report will carry them: every stage gets the keys, null where unknown;
    # the limited stage's limit is also in the top-level table (with its source).
    for s in doc["stages"]:
        if s["name"] == limited:
            s["limit_gb_per_s"] = max(s["gb_per_s"], 1e-9) * 1.25
            s["fraction_of_limit"] = 0.8
        else:
            s["limit_gb_per_s"] = None
            s["fraction_of_limit"] = None
    others = [n for n in names if n != limited]
    doc["limits"] = {limited: {"gb_per_s": max(doc["stages"][names.index(limited)]["gb_per_s"], 1e-9) * 1.25,
                               "source": "measured"}}
    if others:
        # A limit only in the top-level table (configured): the script derives the fraction.
        doc["limits"][others[0]] = {"gb_per_s": 1000.0, "source": "configured"}
    doc["ranks"] = 2
    edited = os.path.join(os.path.dirname(report), "run_limits.json")
    E.write_text(edited, json.dumps(doc, indent=2) + "\n")

    out = os.path.join(ctx.dir("charts"), "limits.png")
    r = plot(ctx, edited, "-o", out)
    expect_plotted(r, "plot_report.py with limits")
    check_png(out)
    E.check(f"bottleneck: {doc['bottleneck']}" in r.stdout, f"stdout does not name the bottleneck:\n{r}")
    line = next((l for l in r.stdout.splitlines() if l.strip().startswith(limited + " ")), "")
    E.check("80% of" in line and "measured limit" in line,
            f"stage '{limited}' should show 80% of a measured limit:\n{r}")
    if others:
        line = next((l for l in r.stdout.splitlines() if l.strip().startswith(others[0] + " ")), "")
        E.check("configured limit" in line and "% of 1,000 GB/s" in line,
                f"stage '{others[0]}' should show its configured limit from the top-level table:\n{r}")
    E.check("2 ranks" in r.stdout, f"stdout does not show the ranks:\n{r}")


def case_plot_two_reports(ctx):
    need_matplotlib()
    report, doc = run_with_report(ctx, seed=5)
    second = os.path.join(os.path.dirname(report), "again.json")
    E.write_text(second, json.dumps(doc))
    r = plot(ctx, report, second)
    expect_plotted(r, "plot_report.py two reports")
    out = os.path.splitext(report)[0] + "-compare.png"
    _, h2, _ = check_png(out)
    E.check(r.stdout.count(f"bottleneck: {doc['bottleneck']}") == 2, f"stdout should summarise both reports:\n{r}")
    single = os.path.join(ctx.dir("charts"), "one.png")
    expect_plotted(plot(ctx, report, "-o", single), "plot_report.py one report")
    _, h1, _ = check_png(single)
    E.check(h2 > h1, f"two panels ({h2} px high) should be taller than one ({h1} px)")


def case_bad_report_exit_2(ctx):
    d = ctx.dir("bad")
    not_report = E.write_text(os.path.join(d, "config.json"), json.dumps({"input": {"file": "x.h5"}}) + "\n")
    not_json = E.write_text(os.path.join(d, "notes.json"), "stage bytes seconds\n")
    no_stages = E.write_text(os.path.join(d, "empty.json"), json.dumps({"stages": [], "wall_seconds": 0}) + "\n")
    missing = os.path.join(d, "missing.json")
    for path, words in ((missing, "cannot read"), (not_report, "not a discount_app run report"),
                        (not_json, "not JSON"), (no_stages, "no stages"), (d, "cannot read")):
        r = plot(ctx, path, "-o", os.path.join(d, "never.png"))
        E.expect_rc(r, 2, f"plot_report.py {os.path.basename(path)}")
        lines = r.stderr_lines
        E.check(len(lines) == 1, f"{path}: expected one stderr line, got {len(lines)}\n{r}")
        E.check(lines[0].startswith("plot_report.py: error: ") and words in lines[0] and path in lines[0],
                f"{path}: stderr should say '{words}' and name the file\n{r}")
        E.check(r.stdout == "", f"{path}: nothing should go to stdout\n{r}")
        E.check(not os.path.exists(os.path.join(d, "never.png")), f"{path}: a PNG was written anyway")
    # A good report next to a bad one: still exit 2, nothing written (the
    # reports are checked before matplotlib is imported: no skip needed).
    report, _ = run_with_report(ctx, seed=6)
    r = plot(ctx, report, not_report, "-o", os.path.join(d, "never.png"))
    E.expect_rc(r, 2, "plot_report.py good.json bad.json")
    E.check(len(r.stderr_lines) == 1 and not_report in r.stderr, f"expected one line naming {not_report}\n{r}")
    E.check(not os.path.exists(os.path.join(d, "never.png")), "a PNG was written despite a bad report")


def near(a, b, what):
    E.check(abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)), f"{what}: {a!r} != {b!r}")


def case_time_accounting(ctx):
    """The time panel's figures (--json): busy + idle = wall for every stage, and the wall time
    split into time in a stage (the report's union of busy intervals) and in no stage."""
    need_matplotlib()
    report, doc = run_with_report(ctx, seed=7)
    wall, union = doc["wall_seconds"], doc.get("any_stage_seconds")
    busy = {s["name"]: s["seconds"] for s in doc["stages"]}
    E.check(isinstance(union, float) and union > 0, f"{report}: any_stage_seconds missing or not positive: {union!r}")
    # A union of intervals: at least the longest, at most their sum, within the wall time.
    E.check(max(busy.values()) - 1e-9 <= union <= min(sum(busy.values()), wall) + 1e-9,
            f"any_stage_seconds {union} is not a union of the stages' busy times {busy} within wall {wall}")

    drawn_path = os.path.join(ctx.dir("charts"), "drawn.json")
    r = plot(ctx, report, "-o", os.path.join(ctx.dir("charts"), "time.png"), "--json", drawn_path)
    expect_plotted(r, "plot_report.py --json")
    with open(drawn_path) as f:
        drawn = json.load(f)
    E.check(len(drawn) == 1 and drawn[0]["bottleneck"] == doc["bottleneck"], f"--json: {drawn}")
    t = drawn[0]["time"]
    E.check(t["exact"] is True, f"a report with any_stage_seconds should give an exact split: {t}")
    near(t["wall_s"], wall, "wall")
    near(t["in_stage_s"], union, "time in a stage")
    near(t["in_stage_s"] + t["no_stage_s"], wall, "in a stage + in no stage")
    E.check(t["no_stage_s"] >= 0, f"negative time in no stage: {t}")
    near(t["busy_sum_s"] - t["overlap_s"], t["in_stage_s"], "sum of busy - overlap")
    E.check([s["name"] for s in t["stages"]] == [s["name"] for s in doc["stages"]], f"stages drawn: {t['stages']}")
    for s in t["stages"]:
        near(s["busy_s"], busy[s["name"]], f"{s['name']} busy")
        near(s["busy_s"] + s["idle_s"], wall, f"{s['name']} busy + idle")
        near(s["busy_fraction"], busy[s["name"]] / wall, f"{s['name']} busy fraction")
    rates = {x["name"]: x for x in drawn[0]["rates"]}
    for s in doc["stages"]:
        near(rates[s["name"]]["gb_per_s"], s["gb_per_s"], f"{s['name']} GB/s")
    pct = f"{100 * (wall - union) / wall:.0f}%"
    E.check(f"in no stage {wall - union:.3f} s ({pct} of wall)" in r.stdout,
            f"stdout lacks the time in no stage:\n{r}")

    # An older report (no any_stage_seconds): bounds from the busy seconds alone.
    del doc["any_stage_seconds"]
    old = E.write_text(os.path.join(os.path.dirname(report), "old.json"), json.dumps(doc))
    r = plot(ctx, old, "-o", os.path.join(ctx.dir("charts"), "old.png"), "--json", drawn_path)
    expect_plotted(r, "plot_report.py --json, old report")
    check_png(os.path.join(ctx.dir("charts"), "old.png"))
    with open(drawn_path) as f:
        t = json.load(f)[0]["time"]
    E.check(t["exact"] is False, f"an old report should give bounds: {t}")
    near(t["no_stage_min_s"], max(0.0, wall - sum(busy.values())), "no stage, at least")
    near(t["no_stage_max_s"], wall - max(busy.values()), "no stage, at most")
    near(t["in_stage_min_s"] + t["no_stage_max_s"], wall, "bounds: least in a stage + most in none")
    near(t["in_stage_max_s"] + t["no_stage_min_s"], wall, "bounds: most in a stage + least in none")
    E.check(t["no_stage_min_s"] <= wall - union + 1e-9 <= t["no_stage_max_s"] + 2e-9,
            f"the measured time in no stage {wall - union} lies outside the bounds {t}")
    E.check("the report has no any_stage_seconds" in r.stdout, f"stdout should say the split is bounds:\n{r}")


CASES = [
    ("plot_run_report", case_plot_run_report),
    ("time_accounting", case_time_accounting),
    ("plot_report_with_limits", case_plot_report_with_limits),
    ("plot_two_reports", case_plot_two_reports),
    ("bad_report_exit_2", case_bad_report_exit_2),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
