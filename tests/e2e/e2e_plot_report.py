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
The report's structured objects (schema_version 2) match the input file as
h5py reads it, the plan's slab count and the YAML config; two real runs that
differ in chunk axis, slab count, space and layout get panel titles that name
each (--panels), their time panels share one time axis, and a schema 1 copy
(text input/plan/config) still plots with the same facts taken from its text.
A run on a compressed input into a compressed output gets a decompression and
a compression row in both panels, with the report's figures (--json).
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


def structured_run(ctx, name, seed, axes, chunk_axis, slab_units, space):
    """A real run with --report; returns (report path, its JSON, input path)."""
    d = ctx.dir(name)
    src = E.generate(ctx, os.path.join(d, "in.h5"), DATES, IDS, NUMS, seed=seed, axes=axes)
    unit = NUMS * 8 * (IDS if chunk_axis == "date" else DATES)  # discount bytes of one date / one id
    job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", input={"axes": list(axes), "dates": [1, DATES]},
                      output={"overwrite": True}, compute={"space": space},
                      memory={"chunk_axis": chunk_axis, "max_slab": slab_units * unit})
    report = os.path.join(d, "run.json")
    E.expect_rc(E.app(ctx, "run", "-q", job, "--report", report, cwd=d), 0, f"run --report ({name})")
    with open(report) as f:
        return report, json.load(f), src


def case_structured_report(ctx):
    """input, plan and config are objects that say what h5py, the plan and the YAML say."""
    import h5py
    import yaml
    report, doc, src = structured_run(ctx, "structured", 8, ("id", "date", "num"), "date", 3, "host")
    E.check(doc.get("schema_version") == 2, f"schema_version {doc.get('schema_version')!r}")
    inp, plan, cfg = doc["input"], doc["plan"], doc["config"]
    for key, value in (("input", inp), ("plan", plan), ("config", cfg)):
        E.check(isinstance(value, dict), f"report's {key} is not an object: {value!r}")
    E.check(inp["source"] == "hdf5" and inp["files"] in ([src], [os.path.realpath(src)]),
            f"input files {inp.get('files')} (expected [{src}])")
    with h5py.File(src, "r") as f:
        for role, name in (("multiplier", "multBy"), ("discount", "discount")):
            got = inp["datasets"][role]
            E.check(got["name"] == name and got["shape"] == list(f[name].shape) and got["dtype"] == str(f[name].dtype),
                    f"input.datasets.{role} {got} against h5py {name} {f[name].shape} {f[name].dtype}")
    E.check(inp["axes"] == ["id", "date", "num"] and inp["layout"] == "id,date,num", f"input axes {inp}")
    E.check(inp["datasets"]["discount"]["axes"] == ["id", "date", "num"], f"discount axes {inp['datasets']}")
    E.check(inp["extents"] == {"dates": DATES, "ids": IDS, "nums": NUMS}, f"extents {inp['extents']}")
    E.check(inp["selection"] == {"dates": [1, DATES], "ids": [0, IDS]}, f"selection {inp['selection']}")
    E.check(isinstance(inp["text"], str) and os.path.basename(src) in inp["text"], f"input text {inp['text']!r}")
    dates = DATES - 1
    E.check(plan["chunk_axis"] == "date" and plan["chunk_axis_auto"] is False, f"plan chunk axis {plan}")
    E.check(plan["slabs"] == -(-dates // 3) == doc["slabs"]["total"], f"plan slabs {plan['slabs']}, {doc['slabs']}")
    E.check(plan["slab_extent"] == 3 and plan["slab_bytes"] == 3 * IDS * NUMS * 8, f"slab {plan}")
    E.check(plan["selection"] == {"dates": dates, "ids": IDS, "nums": NUMS}, f"plan selection {plan['selection']}")
    E.check(plan["device_copies"] is False and plan["buffers"]["device"] == 0 and plan["buffers"]["host"] >= 1,
            f"host space plan buffers {plan['buffers']}")
    E.check(plan["output_bytes"] == dates * IDS * NUMS * 8 == doc["output_bytes"], f"plan output bytes {plan}")
    E.check(f"{plan['slabs']} slab(s)" in plan["text"], f"plan text {plan['text']!r}")
    # config: the YAML copy and the object hold the same settings.
    E.check(yaml.safe_load(doc["config_yaml"]) == cfg, f"config object differs from config_yaml:\n{cfg}\n"
                                                        f"{doc['config_yaml']}")
    E.check(cfg["input"]["axes"] == ["id", "date", "num"] and cfg["input"]["dates"] == [1, DATES]
            and cfg["memory"]["chunk_axis"] == "date" and cfg["compute"]["space"] == "host"
            and cfg["output"]["overwrite"] is True, f"config object {cfg}")


def case_compare_titles_and_time_axis(ctx):
    """Two runs that differ in chunk axis, slab count, space and layout: each panel's title names
    them, and the time panels share one time axis."""
    need_matplotlib()
    spaces = ("host", "device")
    a = structured_run(ctx, "by_date", 9, ("id", "date", "num"), "date", 2, spaces[0])
    b = structured_run(ctx, "by_id", 10, ("date", "id", "num"), "id", 700, spaces[1])
    panels_path = os.path.join(ctx.dir("charts"), "panels.json")
    r = plot(ctx, a[0], b[0], "-o", os.path.join(ctx.dir("charts"), "compare.png"), "--panels", panels_path)
    expect_plotted(r, "plot_report.py two reports --panels")
    with open(panels_path) as f:
        panels = json.load(f)
    E.check([(p["report"], p["kind"]) for p in panels] ==
            [(a[0], "time"), (a[0], "rates"), (b[0], "time"), (b[0], "rates")], f"panels {panels}")
    for report, doc, _ in (a, b):
        plan = doc["plan"]
        slabs = plan["slabs"]
        words = (f"chunk axis {plan['chunk_axis']}, {slabs} slab{'' if slabs == 1 else 's'}, "
                 f"space {doc['space']}, layout {doc['input']['layout']}")
        for p in panels:
            if p["report"] == report:
                E.check(words in p["title"], f"{p['kind']} panel of {report}: title lacks '{words}':\n{p['title']}")
    E.check(a[1]["plan"]["chunk_axis"] == "date" and b[1]["plan"]["chunk_axis"] == "id"
            and a[1]["plan"]["slabs"] != b[1]["plan"]["slabs"], f"the runs should differ: {a[1]['plan']} {b[1]['plan']}")
    titles = [p["title"] for p in panels if p["kind"] == "time"]
    E.check(titles[0].split("\n")[0] != titles[1].split("\n")[0], f"identical titles: {titles}")
    times = [p for p in panels if p["kind"] == "time"]
    longest = max(a[1]["wall_seconds"], b[1]["wall_seconds"])
    E.check(times[0]["xlim"] == times[1]["xlim"], f"time panels use different scales: {times}")
    E.check(times[0]["xlim"][0] == 0 and times[0]["xlim"][1] >= longest, f"time axis {times[0]['xlim']} < {longest}")

    # A schema 1 report (input, plan and config as text): the same facts, from the text.
    old = dict(a[1])
    old.pop("schema_version")
    old["input"], old["plan"], old["config"] = a[1]["input"]["text"], a[1]["plan"]["text"], a[1]["config_yaml"]
    old.pop("config_yaml")
    old_path = E.write_text(os.path.join(ctx.dir("charts"), "v1.json"), json.dumps(old))
    r = plot(ctx, old_path, "-o", os.path.join(ctx.dir("charts"), "v1.png"), "--panels", panels_path)
    expect_plotted(r, "plot_report.py schema 1 report")
    with open(panels_path) as f:
        old_panels = json.load(f)
    for key in ("chunk_axis", "slabs", "layout", "space"):
        E.check(old_panels[0][key] == panels[0][key], f"schema 1 {key}: {old_panels[0][key]!r} != {panels[0][key]!r}")


def case_codec_rows(ctx):
    """A real run on a shuffle + deflate input into a deflate-compressed split output: its report's
    decompression and compression objects become a row each in both panels (--json: busy / threads
    against the wall, raw GB over the read stage's or the compression's seconds, the limit the
    report gives), the summary names them, and copies without the limits or without the objects
    derive the limits or draw no such rows."""
    need_matplotlib()
    import numpy as np
    d = ctx.dir("codecs")
    rng = np.random.default_rng(11)
    mult, disc = rng.uniform(1, 2, (IDS, NUMS)), np.round(rng.uniform(0.5, 1, (DATES, IDS, NUMS)), 4)
    E.write_input(os.path.join(d, "in.h5"), mult, disc,
                  disc_kwargs={"chunks": (1, IDS, NUMS), "compression": "gzip", "compression_opts": 4, "shuffle": True})
    job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", memory={"max_slab": 3 * IDS * NUMS * 8},
                      output={"overwrite": True, "parts": 2, "compression": {"codec": "deflate"}})
    report = os.path.join(d, "run.json")
    E.expect_rc(E.app(ctx, "run", "-q", job, "--report", report, cwd=d), 0, "run --report (compressed)")
    with open(report) as f:
        doc = json.load(f)
    dec, com = doc.get("decompression"), doc.get("compression")
    E.check(isinstance(dec, dict) and isinstance(com, dict), f"report lacks decompression or compression: {sorted(doc)}")
    read = next(s["seconds"] for s in doc["stages"] if s["name"] == "read")

    drawn_path, panels_path = os.path.join(d, "drawn.json"), os.path.join(d, "panels.json")
    r = plot(ctx, report, "-o", os.path.join(d, "run.png"), "--json", drawn_path, "--panels", panels_path)
    expect_plotted(r, "plot_report.py with codec rows")
    check_png(os.path.join(d, "run.png"))
    with open(drawn_path) as f:
        codecs = json.load(f)[0]["codecs"]
    E.check([c["name"] for c in codecs] == ["decompress", "compress"], f"codec rows {codecs}")
    for c, obj, over in ((codecs[0], dec, read), (codecs[1], com, com["seconds"])):
        E.check(c["raw_bytes"] == obj["raw_bytes"] and c["threads"] == obj["threads"] and c["over_s"] == over,
                f"{c['name']}: {c} against the report's {obj}")
        near(c["seconds"], obj["busy_seconds"] / obj["threads"], f"{c['name']} busy / threads")
        near(c["gb_per_s"], obj["raw_bytes"] / over / 1e9, f"{c['name']} GB/s")
        near(c["limit"], obj["limit_bytes_per_s"] / 1e9, f"{c['name']} limit")
        near(c["fraction"], c["gb_per_s"] / c["limit"], f"{c['name']} fraction of the limit")
    for name, what in (("decompress", dec["pipeline"]), ("compress", com["codec"])):
        E.check(f"  {name} {what}: " in r.stdout, f"stdout lacks the {name} row:\n{r}")
    with open(panels_path) as f:
        panels = {p["kind"]: p for p in json.load(f)}
    rows = len(doc["stages"]) + 2
    E.check(panels["time"]["ylim"] == [-0.6, rows + 2 - 0.4] and panels["rates"]["ylim"] == [-0.6, rows - 0.4],
            f"the panels do not hold the two codec rows: {panels}")

    # Limits derived where a report lacks them; no objects, no rows.
    limit = com["limit_bytes_per_s"]
    for key in ("thread_rate_bytes_per_s", "limit_bytes_per_s"):
        del doc["compression"][key]
    older = E.write_text(os.path.join(d, "older.json"), json.dumps(doc))
    expect_plotted(plot(ctx, older, "-o", os.path.join(d, "older.png"), "--json", drawn_path), "older report")
    with open(drawn_path) as f:
        near(json.load(f)[0]["codecs"][1]["limit"], limit / 1e9, "derived compression limit")
    del doc["compression"], doc["decompression"]
    plain = E.write_text(os.path.join(d, "plain.json"), json.dumps(doc))
    r = plot(ctx, plain, "-o", os.path.join(d, "plain.png"), "--json", drawn_path)
    expect_plotted(r, "report without codec objects")
    with open(drawn_path) as f:
        E.check(json.load(f)[0]["codecs"] == [] and "compress" not in r.stdout, f"codec rows without objects:\n{r}")
    print(f"decompress {codecs[0]['gb_per_s']:.3f} GB/s of {codecs[0]['limit']:.3f}; "
          f"compress {codecs[1]['gb_per_s']:.3f} GB/s of {codecs[1]['limit']:.3f}")


CASES = [
    ("plot_run_report", case_plot_run_report),
    ("time_accounting", case_time_accounting),
    ("plot_report_with_limits", case_plot_report_with_limits),
    ("plot_two_reports", case_plot_two_reports),
    ("bad_report_exit_2", case_bad_report_exit_2),
    ("structured_report", case_structured_report),
    ("compare_titles_and_time_axis", case_compare_titles_and_time_axis),
    ("codec_rows", case_codec_rows),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
