#!/usr/bin/env python3
"""Chart a discount_app run report: where the wall time went, and each stage's rate against its limit.

Reads one or more JSON run reports (`--report run.json` or the `report:` key)
and writes one PNG with two panels per report. Time: the wall time split into
time in at least one stage and in none (exact with `any_stage_seconds`, else
hatched bounds), each stage's busy seconds against the wall time. Rates: each
stage's GB/s over its limit (hatched) with the percentage. A `decompression`
or `compression` object adds a row to both (busy thread-seconds over the
threads; raw GB over the seconds they took against one thread's rate times the
threads). Titles name chunk axis, slabs, space and input layout; several
reports share one time axis; the bottleneck is red. --json writes the figures
drawn, --panels each panel's title and axis limits.

  scripts/plot_report.py out/run.json                 writes out/run.png
  scripts/plot_report.py a.json b.json -o compare.png  two panels per report
  scripts/plot_report.py run.json --json drawn.json   also the figures drawn, as JSON
  scripts/plot_report.py a.json b.json --panels p.json  also each panel's title and limits
"""

import argparse
import json
import math
import os
import re
import sys

PROG = "plot_report.py"
STAGE_ORDER = ("read", "h2d", "kernel", "d2h", "write")
BAR_COLOR, BOTTLENECK_COLOR, LIMIT_COLOR = "#4c72b0", "#c44e52", "#8c8c8c"
NO_STAGE_COLOR, IN_STAGE_COLOR, CODEC_COLOR = "#dd8452", "#55a868", "#8172b3"


class ReportError(Exception):
    """A report that cannot be read or is not a run report: exit 2."""


def fail(message, code):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    sys.exit(code)


# --------------------------------------------------------------------------
# Reading and normalising a report


def _number(value):
    """A finite float, or None (absent, null, non-numeric, NaN or Inf)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _dict(value):
    return value if isinstance(value, dict) else {}


def load_report(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ReportError(f"cannot read '{path}': {e.strerror or e}")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ReportError(f"'{path}' is not JSON ({str(e).splitlines()[0]})")
    if not isinstance(doc, dict):
        raise ReportError(f"'{path}' is not a discount_app run report (top level is not an object)")
    missing = [k for k in ("stages", "wall_seconds") if k not in doc]
    if missing:
        raise ReportError(f"'{path}' is not a discount_app run report (no {' or '.join(repr(k) for k in missing)})")
    stages = doc["stages"]
    if not isinstance(stages, list) or not all(isinstance(s, dict) and isinstance(s.get("name"), str)
                                                 for s in stages):
        raise ReportError(f"'{path}' is not a discount_app run report ('stages' is not a list of named stages)")
    if not stages:
        raise ReportError(f"'{path}' has no stages (the run did no work: nothing to plot)")
    return normalise(doc, path)


def normalise(doc, path):
    """The report's figures as plain Python values, limits resolved per stage."""
    limits = _dict(doc.get("limits"))
    stages = []
    for s in doc["stages"]:
        seconds, nbytes = _number(s.get("seconds")) or 0.0, _number(s.get("bytes")) or 0.0
        rate = _number(s.get("gb_per_s"))
        if rate is None:
            rate = nbytes / seconds / 1e9 if seconds > 0 else 0.0
        entry = _dict(limits.get(s["name"]))
        limit = _number(s.get("limit_gb_per_s"))
        limit = _number(entry.get("gb_per_s")) if limit is None else limit
        limit = limit if limit is not None and limit > 0 else None
        fraction = _number(s.get("fraction_of_limit"))
        if fraction is None and limit is not None:
            fraction = rate / limit
        stages.append({"name": s["name"], "bytes": nbytes, "seconds": seconds, "gb_per_s": rate,
                       "slabs": s.get("slabs"), "limit": limit, "fraction": fraction,
                       "source": entry.get("source") if isinstance(entry.get("source"), str) else None})
    # Pipeline order; stages the app adds later keep their place after these.
    stages.sort(key=lambda st: STAGE_ORDER.index(st["name"]) if st["name"] in STAGE_ORDER else len(STAGE_ORDER))
    bottleneck = doc.get("bottleneck") if isinstance(doc.get("bottleneck"), str) else None
    busy = [st for st in stages if st["seconds"] > 0]
    if bottleneck is None and busy:  # older or partial reports: the stage busy longest, as the app defines it
        bottleneck = max(busy, key=lambda st: st["seconds"])["name"]
    ranks = doc.get("ranks")
    wall = _number(doc.get("wall_seconds")) or 0.0
    return dict(plan_facts(doc), path=path, space=str(doc.get("space", "?")), kernel=str(doc.get("kernel", "?")),
                slicing=str(doc.get("slicing", "")), outcome=str(doc.get("outcome", "complete")), wall=wall,
                effective=_number(doc.get("effective_gb_per_s")), bottleneck=bottleneck, stages=stages,
                ranks=ranks if _count(ranks) and ranks > 1 else None,
                time=time_accounting(wall, stages, _number(doc.get("any_stage_seconds"))),
                codecs=codec_stages(doc, stages))


def codec_stages(doc, stages):
    """The decompression and compression objects as rows like the stages': busy / threads as `seconds`,
    raw bytes over the read stage's (decoding) or their own (encoding) seconds, one thread's rate x threads."""
    read = next((st["seconds"] for st in stages if st["name"] == "read"), 0.0)
    rows = []
    for key, name, what, over in (("decompression", "decompress", "pipeline", read),
                                  ("compression", "compress", "codec", None)):
        obj = doc.get(key)
        if not isinstance(obj, dict) or not (_number(obj.get("raw_bytes")) or 0.0) > 0:
            continue
        raw, busy = _number(obj["raw_bytes"]), _number(obj.get("busy_seconds")) or 0.0
        threads = _count(obj.get("threads")) or 0
        thread_rate = _number(obj.get("thread_rate_bytes_per_s"))
        if thread_rate is None:
            thread_rate = raw / busy if busy > 0 else 0.0
        limit = _number(obj.get("limit_bytes_per_s"))
        limit = thread_rate * threads if limit is None else limit
        over = (_number(obj.get("seconds")) or 0.0) if over is None else over
        rate = raw / over / 1e9 if over > 0 else 0.0
        limit = limit / 1e9 if limit > 0 else None
        rows.append({"name": name, "codec": True, "what": str(obj.get(what, "?")), "raw_bytes": raw,
                     "stored_bytes": _number(obj.get("stored_bytes")) or 0.0, "busy_s": busy, "threads": threads,
                     "seconds": busy / threads if threads else busy, "over_s": over,
                     "over": "read stage" if name == "decompress" else "compression",
                     "thread_gb_per_s": thread_rate / 1e9, "gb_per_s": rate, "limit": limit,
                     "fraction": rate / limit if limit else None})
    return rows


def time_accounting(wall, stages, any_stage):
    """Per stage busy and idle seconds, and the wall time split into in a stage / in none: exact from
    any_stage_seconds (the union of busy intervals), else bounds (longest busy time .. their sum)."""
    busy = [st["seconds"] for st in stages]
    total, longest = sum(busy), max(busy, default=0.0)
    acc = {"wall_s": wall, "busy_sum_s": total,
           "stages": [{"name": st["name"], "busy_s": st["seconds"], "idle_s": wall - st["seconds"],
                       "busy_fraction": st["seconds"] / wall if wall > 0 else None} for st in stages]}
    if any_stage is not None and any_stage > 0:
        in_stage = min(any_stage, wall)
        acc.update(exact=True, in_stage_s=in_stage, no_stage_s=wall - in_stage,
                   overlap_s=total - in_stage)  # seconds counted by two or more stages at once
    else:
        acc.update(exact=False, in_stage_min_s=min(longest, wall), in_stage_max_s=min(total, wall),
                   no_stage_min_s=max(0.0, wall - total), no_stage_max_s=max(0.0, wall - longest))
    return acc


def plan_facts(doc):
    """Shape, chunk axis, slab count and input layout: from the report's `plan` and `input` objects
    (schema_version 2), else from their text (version 1 wrote the text alone)."""
    sections = {}
    for key in ("plan", "input"):
        value = doc.get(key)
        text = value.get("text") if isinstance(value, dict) else value
        sections[key] = (_dict(value), text if isinstance(text, str) else "")
    (plan, plan_text), (facts, input_text) = sections["plan"], sections["input"]
    dims = [_count(_dict(plan.get("selection")).get(k)) for k in ("dates", "ids", "nums")]
    m = re.search(r"dates=(\d+)\s+ids=(\d+)\s+nums=(\d+)", plan_text)
    if all(d is not None for d in dims) or m:
        dims = dims if all(d is not None for d in dims) else [int(g) for g in m.groups()]
        shape = f"{dims[0]:,} x {dims[1]:,} x {dims[2]:,} (dates x ids x nums)"
    else:
        shapes = re.findall(r"\[(\d+(?: x \d+){2})\]", input_text)
        shape = shapes[0] if shapes else "shape unknown"
    axis = plan.get("chunk_axis") if isinstance(plan.get("chunk_axis"), str) else None
    m = re.search(r"chunk axis\s+(\w+),", plan_text)
    slabs = _count(plan.get("slabs"))
    if slabs is None:
        slabs = _count(_dict(doc.get("slabs")).get("total"))
    n = re.search(r"(\d+) slab\(s\)", plan_text)
    axes = facts.get("axes")
    layout = re.search(r"\[((?:date|id|num)(?:,(?:date|id|num)){2})\]", input_text)
    return {"shape": shape, "chunk_axis": axis or (m.group(1) if m else None),
            "slab_count": slabs if slabs is not None else (int(n.group(1)) if n else None),
            "layout": ",".join(axes) if isinstance(axes, list) and axes and all(isinstance(a, str) for a in axes)
            else (layout.group(1) if layout else None)}


def run_label(r):
    """'chunk axis date, 3 slabs, space host, layout date,id,num': what tells compared runs apart."""
    slabs = r["slab_count"]
    slabs = "? slabs" if slabs is None else f"{slabs} slab" + ("" if slabs == 1 else "s")
    return f"chunk axis {r['chunk_axis'] or '?'}, {slabs}, space {r['space']}, layout {r['layout'] or '?'}"


# --------------------------------------------------------------------------
# Text (stdout and the charts' labels)


def fmt_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def ran(st):
    return st["gb_per_s"] > 0 or st["seconds"] > 0


def pct_of_wall(seconds, wall):
    return f"{100 * seconds / wall:.0f}%" if wall > 0 else "-"


def limit_text(st):
    if st["limit"] is None:
        return "limit not measured"
    source = f" {st['source']}" if st["source"] else ""
    pct = f"{100 * st['fraction']:.0f}% of " if st["fraction"] is not None else ""
    return f"{pct}{fmt_rate(st['limit'])} GB/s{source} limit"


def codec_time_text(c, wall):
    """'busy 0.412 thread-s on 2 threads = 0.206 s, 9% of wall'"""
    return (f"busy {c['busy_s']:.3f} thread-s on {c['threads']} threads = {c['seconds']:.3f} s, "
            f"{pct_of_wall(c['seconds'], wall)} of wall")


def codec_limit_text(c):
    """'52% of the 1.31 GB/s limit (655 MB/s per thread x 2)'"""
    if c["limit"] is None:
        return "limit unknown"
    pct = f"{100 * c['fraction']:.0f}% of the " if c["fraction"] is not None else "the "
    return (f"{pct}{fmt_rate(c['limit'])} GB/s limit ({c['thread_gb_per_s'] * 1e3:.0f} MB/s per thread x "
            f"{c['threads']})")


def summary(r):
    t, wall = r["time"], r["wall"]
    ranks = f", {r['ranks']} ranks" if r["ranks"] else ""
    lines = [f"{r['path']}: {r['space']}, {r['kernel']}, {r['shape']}, wall {wall:.3f} s{ranks}, "
             f"outcome {r['outcome']}",
             f"  bottleneck: {r['bottleneck'] or 'none (no stage ran)'}"]
    for st in r["stages"]:
        mark = "  <- bottleneck" if st["name"] == r["bottleneck"] else ""
        lines.append(f"  {st['name']:<7} {st['bytes'] / 1e9:10.3f} GB {st['seconds']:9.3f} s "
                     f"{pct_of_wall(st['seconds'], wall):>4} of wall {fmt_rate(st['gb_per_s']):>9} GB/s   "
                     f"{limit_text(st) if ran(st) else 'did not run'}{mark}")
    if t["exact"]:
        lines.append(f"  in no stage {t['no_stage_s']:.3f} s ({pct_of_wall(t['no_stage_s'], wall)} of wall); "
                     f"in a stage {t['in_stage_s']:.3f} s")
    else:
        lines.append(f"  in no stage between {t['no_stage_min_s']:.3f} and {t['no_stage_max_s']:.3f} s "
                     f"({pct_of_wall(t['no_stage_min_s'], wall)}-{pct_of_wall(t['no_stage_max_s'], wall)} of wall; "
                     "the report has no any_stage_seconds)")
    for c in r["codecs"]:
        lines.append(f"  {c['name']} {c['what']}: {c['stored_bytes'] / 1e9:.3f} GB stored, "
                     f"{c['raw_bytes'] / 1e9:.3f} GB raw; {codec_time_text(c, wall)}; "
                     f"{fmt_rate(c['gb_per_s'])} GB/s over the {c['over']}'s {c['over_s']:.3f} s, "
                     f"{codec_limit_text(c)}")
    return "\n".join(lines)


def title_of(r, label_path):
    ranks = f" | {r['ranks']} ranks" if r["ranks"] else ""
    outcome = "" if r["outcome"] == "complete" else f" | {r['outcome'].upper()}"
    head = f"{os.path.basename(r['path'])}: " if label_path else ""
    slicing = f" ({r['slicing']})" if r["slicing"] else ""
    busy = "".join(f" (busy {100 * st['seconds'] / r['wall']:.0f}% of the wall time)" for st in r["stages"]
                   if st["name"] == r["bottleneck"] and r["wall"] > 0)
    effective = f" ({fmt_rate(r['effective'])} GB/s end to end)" if r["effective"] is not None else ""
    return (f"{head}{run_label(r)}\n{r['kernel']}{slicing} | {r['shape']}\n"
            f"wall {r['wall']:.3f} s{effective} | bottleneck: {r['bottleneck'] or 'none'}{busy}{ranks}{outcome}")


# --------------------------------------------------------------------------
# Drawing


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        # A pyenv/venv python3 ahead of Debian's on PATH: re-run under /usr/bin/python3.
        system = "/usr/bin/python3"
        if (os.environ.get("PLOT_REPORT_REEXEC") is None and os.path.exists(system)
                and os.path.realpath(sys.executable) != os.path.realpath(system)):
            os.environ["PLOT_REPORT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        fail(f"matplotlib is not importable by {sys.executable} (install python3-matplotlib, "
             "e.g. with scripts/deps.sh)", 1)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def finish_axis(ax, r, labels, codec_ys, top, xlabel):
    """Y tick labels ({y: text}), the bottleneck's in red and the codecs' in their colour; grid, limits."""
    ys = sorted(labels)
    ax.set_yticks(ys)
    ax.set_yticklabels([labels[y] for y in ys], fontsize=9)
    for tick, y in zip(ax.get_yticklabels(), ys):
        if labels[y].split("\n")[0] == r["bottleneck"]:
            tick.set_color(BOTTLENECK_COLOR)
            tick.set_fontweight("bold")
        elif y in codec_ys:
            tick.set_color(CODEC_COLOR)
    ax.set_ylim(-0.6, top - 0.4)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", which="major", linestyle=":", color="#bbbbbb", zorder=0)
    ax.set_axisbelow(True)


def draw_panel(ax, r, scale, lo, hi):
    stages, codecs = r["stages"], r["codecs"]
    rows = stages + codecs  # the codec rows below the stages
    y = list(range(len(rows)))[::-1]  # first stage on top
    use_log = scale == "log" or (scale == "auto" and lo > 0 and hi / lo > 50)
    if use_log:
        ax.set_xscale("log")
        ax.set_xlim(10 ** math.floor(math.log10(lo)) if lo > 0 else 1e-3, hi * 100)  # room for the labels
    else:
        ax.set_xlim(0, hi * 1.9)
    for yi, st in zip(y, rows):
        if st["limit"] is not None:
            ax.barh(yi, st["limit"], height=0.72, color="none", edgecolor=LIMIT_COLOR, hatch="///",
                    linewidth=1.0, zorder=1)
        bottleneck = st["name"] == r["bottleneck"]
        if st["gb_per_s"] > 0:
            color = CODEC_COLOR if st.get("codec") else BOTTLENECK_COLOR if bottleneck else BAR_COLOR
            ax.barh(yi, st["gb_per_s"], height=0.5, color=color, zorder=2)
        if st.get("codec"):
            text = f"{fmt_rate(st['gb_per_s'])} GB/s over the {st['over']}, {codec_limit_text(st)}"
        else:
            text = f"{fmt_rate(st['gb_per_s'])} GB/s, {limit_text(st)}" if ran(st) else "did not run"
        end = max(st["gb_per_s"], st["limit"] or 0)
        x = end * 1.08 if use_log else end + hi * 0.02
        if end <= 0:
            x = ax.get_xlim()[0] * 1.2 if use_log else hi * 0.02
        ax.text(x, yi, text + ("  [BOTTLENECK]" if bottleneck else ""), va="center", ha="left", fontsize=8.5,
                fontweight="bold" if bottleneck else "normal", zorder=3)
    labels = [f"{st['name']}\n{st['bytes'] / 1e9:.3g} GB, {st['seconds']:.3g} s" for st in stages]
    labels += [f"{c['name']}\n{c['raw_bytes'] / 1e9:.3g} GB raw, {c['over_s']:.3g} s" for c in codecs]
    finish_axis(ax, r, dict(zip(y, labels)), y[len(stages):], len(rows),
                "GB/s (bytes moved by the stage / its busy seconds)" + (", log scale" if use_log else ""))
    ax.set_title(f"Rates against their limits | {run_label(r)}", fontsize=9, loc="left")
    return any(st["limit"] is not None for st in rows)


def draw_time_panel(ax, r, label_path, longest_wall):
    """The wall time split into in a stage / in none, each stage's busy time against it;
    `longest_wall` (of all reports drawn) gives every time panel one scale."""
    t, wall, stages, codecs = r["time"], r["wall"], r["stages"], r["codecs"]
    rows = len(stages) + len(codecs) + 2
    y_wall, y_none = rows - 1, 0
    ys = list(range(rows - 2, len(codecs), -1))  # stages, first on top, below the wall
    y_codecs = list(range(len(codecs), 0, -1))  # then the codecs, above the time in no stage
    right = longest_wall if longest_wall > 0 else 1.0

    def text(y, words, **kw):
        ax.text(right * 1.02, y, words, va="center", ha="left", fontsize=8.5, zorder=3, **kw)

    def box(y, busy, color):
        """A bar of busy seconds inside the outline of the wall time."""
        ax.barh(y, wall, height=0.72, color="none", edgecolor=LIMIT_COLOR, linewidth=0.8, zorder=1)
        ax.barh(y, busy, height=0.5, color=color, zorder=2)

    def hatched(y, left, width, color, height):
        ax.barh(y, width, left=left, height=height, color="none", edgecolor=color, hatch="xx", linewidth=0.8,
                zorder=2)

    # Wall: in at least one stage, then in no stage (certain parts solid, the unknown part hatched).
    low, high = (t["in_stage_s"], t["in_stage_s"]) if t["exact"] else (t["in_stage_min_s"], t["in_stage_max_s"])
    ax.barh(y_wall, low, height=0.6, color=IN_STAGE_COLOR, zorder=2)
    if t["exact"]:
        ax.barh(y_wall, t["no_stage_s"], left=low, height=0.6, color=NO_STAGE_COLOR, zorder=2)
        text(y_wall, f"wall {wall:.3g} s = {low:.3g} s in a stage + {t['no_stage_s']:.3g} s in none "
             f"({pct_of_wall(t['no_stage_s'], wall)})", fontweight="bold")
    else:
        hatched(y_wall, low, high - low, IN_STAGE_COLOR, 0.6)
        ax.barh(y_wall, wall - high, left=high, height=0.6, color=NO_STAGE_COLOR, zorder=2)
        text(y_wall, f"wall {wall:.3g} s; in no stage {t['no_stage_min_s']:.3g}-{t['no_stage_max_s']:.3g} s",
             fontweight="bold")
    for y, st in zip(ys, stages):
        bottleneck = st["name"] == r["bottleneck"]
        box(y, st["seconds"], BOTTLENECK_COLOR if bottleneck else BAR_COLOR)
        text(y, f"busy {st['seconds']:.3g} s, {pct_of_wall(st['seconds'], wall)} of wall",
             fontweight="bold" if bottleneck else "normal")
    for y, c in zip(y_codecs, codecs):
        box(y, c["seconds"], CODEC_COLOR)
        text(y, codec_time_text(c, wall))
    if t["exact"]:
        box(y_none, t["no_stage_s"], NO_STAGE_COLOR)
        text(y_none, f"{t['no_stage_s']:.3g} s, {pct_of_wall(t['no_stage_s'], wall)} of wall")
    else:
        lo, hi = t["no_stage_min_s"], t["no_stage_max_s"]
        box(y_none, lo, NO_STAGE_COLOR)
        hatched(y_none, lo, hi - lo, NO_STAGE_COLOR, 0.5)
        text(y_none, f"{lo:.3g}-{hi:.3g} s, {pct_of_wall(lo, wall)}-{pct_of_wall(hi, wall)} of wall\n"
             "(bounds: the report has no any_stage_seconds)")
    labels = {y_wall: "wall", y_none: "in no stage\n(start-up, end, gaps)"}
    labels.update({y: st["name"] for y, st in zip(ys, stages)})
    labels.update({y: f"{c['name']}\n(busy / {c['threads']} threads)" for y, c in zip(y_codecs, codecs)})
    finish_axis(ax, r, labels, y_codecs, rows,
                "seconds (busy: the stage's thread working on a slab; the box is the wall time)")
    ax.set_xlim(0, right * 1.9)  # one scale for every report; room for the labels on the right
    ax.set_title(title_of(r, label_path) + "\nWhere the wall time went", fontsize=10, loc="left")


def plot(plt, reports, out, scale, dpi):
    from matplotlib.patches import Patch

    heights = []
    for r in reports:
        rows = len(r["stages"]) + len(r["codecs"])
        heights += [1.7 + 0.5 * (rows + 2), 1.0 + 0.62 * rows]
    fig, axes = plt.subplots(len(heights), 1, figsize=(10, sum(heights) + 0.5),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    # One GB/s scale for every rates panel: the smallest and largest positive rate or limit.
    positive = [v for r in reports for st in r["stages"] + r["codecs"] for v in (st["gb_per_s"], st["limit"]) if v]
    lo, hi = (min(positive), max(positive)) if positive else (1.0, 1.0)
    longest_wall = max(r["wall"] for r in reports)
    any_limit = False
    for i, r in enumerate(reports):
        draw_time_panel(axes[2 * i, 0], r, len(reports) > 1, longest_wall)
        any_limit |= draw_panel(axes[2 * i + 1, 0], r, scale, lo, hi)
    handles = [Patch(color=BAR_COLOR, label="stage busy s / GB/s"), Patch(color=BOTTLENECK_COLOR, label="bottleneck"),
               Patch(color=IN_STAGE_COLOR, label="in a stage"), Patch(color=NO_STAGE_COLOR, label="in no stage")]
    if any(r["codecs"] for r in reports):
        handles.append(Patch(color=CODEC_COLOR, label="(de)compression"))
    if not all(r["time"]["exact"] for r in reports):
        handles.append(Patch(facecolor="none", edgecolor=LIMIT_COLOR, hatch="xx", label="unknown (bounds)"))
    if any_limit:
        handles.append(Patch(facecolor="none", edgecolor=LIMIT_COLOR, hatch="///", label="limit"))
    fig.legend(handles=handles, loc="lower right", fontsize=8, ncol=len(handles), frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    panels = [{"report": r["path"], "kind": kind, "title": ax.get_title(loc="left"), "xlim": list(ax.get_xlim()),
               "ylim": list(ax.get_ylim()), "xscale": ax.get_xscale(), "chunk_axis": r["chunk_axis"],
               "slabs": r["slab_count"], "space": r["space"], "layout": r["layout"]}
              for i, r in enumerate(reports) for kind, ax in (("time", axes[2 * i, 0]), ("rates", axes[2 * i + 1, 0]))]
    try:
        fig.savefig(out, dpi=dpi)
    except OSError as e:
        fail(f"cannot write '{out}': {e.strerror or e}", 1)
    finally:
        plt.close(fig)
    return panels


# --------------------------------------------------------------------------


def write_json(path, value):
    try:
        with open(path, "w") as f:
            json.dump(value, f, indent=1)
            f.write("\n")
    except OSError as e:
        fail(f"cannot write '{path}': {e.strerror or e}", 1)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.split("\n\n  scripts/")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n" + "\n".join(line for line in __doc__.splitlines() if line.startswith("  scripts/"))
               + "\n\nDefault output: run.json -> run.png next to it; with several reports,\n"
               "<first>-compare.png next to the first.\n\nExit status: 0 written; 1 matplotlib missing or the "
               "PNG cannot be written;\n2 a report is missing, unreadable, not JSON or not a run report "
               "(one line on stderr).")
    parser.add_argument("reports", nargs="+", metavar="report.json", help="run report(s) written by discount_app")
    parser.add_argument("-o", "--output", metavar="chart.png", help="PNG to write (default: next to the report)")
    parser.add_argument("--scale", choices=("auto", "log", "linear"), default="auto",
                        help="GB/s axis: log when the rates span more than 50x (auto, the default), or forced")
    parser.add_argument("--dpi", type=int, default=90, help="resolution of the PNG (default 90)")
    parser.add_argument("--json", metavar="drawn.json",
                        help="also write the figures drawn (per report: wall, busy and idle seconds per stage, "
                             "time in a stage and in no stage, rates and limits, and the (de)compression rows) "
                             "as JSON")
    parser.add_argument("--panels", metavar="panels.json",
                        help="also write each panel's title, axis limits and scale, and the run facts in its "
                             "title (chunk axis, slabs, space, layout), as JSON")
    args = parser.parse_args(argv)

    reports = []
    for path in args.reports:
        try:
            reports.append(load_report(path))
        except ReportError as e:
            fail(str(e), 2)
    stem = os.path.splitext(args.reports[0])[0]
    out = args.output or stem + (".png" if len(args.reports) == 1 else "-compare.png")
    if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        fail(f"cannot write '{out}': its directory does not exist", 1)
    plt = import_pyplot()  # before any output: it may re-run this script under /usr/bin/python3
    for r in reports:
        print(summary(r))
    panels = plot(plt, reports, out, args.scale, args.dpi)
    print(f"wrote {out}")
    if args.panels:
        write_json(args.panels, panels)
    if args.json:
        write_json(args.json, [{"report": r["path"], "bottleneck": r["bottleneck"], "time": r["time"],
                                "rates": [{k: st[k] for k in ("name", "gb_per_s", "limit", "fraction")}
                                          for st in r["stages"]],
                                "codecs": [{k: v for k, v in c.items() if k != "codec"} for c in r["codecs"]]}
                               for r in reports])
    return 0


if __name__ == "__main__":
    sys.exit(main())
