#!/usr/bin/env python3
"""Chart a discount_app run report: per-stage throughput against each stage's limit.

Reads one or more JSON run reports (`discount_app run job.yaml --report run.json`,
or the `report:` key) and writes one PNG: a panel per report, one horizontal bar
per pipeline stage (read, h2d, kernel, d2h, write) at its GB/s, drawn over the
stage's limit when the report carries one (`limit_gb_per_s` in the stage, or the
top-level `limits` table), annotated with the GB/s and the percentage of the
limit. The bottleneck stage (busy longest) is drawn in red. A summary naming the
bottleneck of each report is printed on stdout.

  scripts/plot_report.py out/run.json                 writes out/run.png
  scripts/plot_report.py a.json b.json -o compare.png  one panel per report

Exit status: 0 written; 1 matplotlib missing or the PNG cannot be written;
2 a report is missing, unreadable, not JSON or not a run report (one line on
stderr).
"""

import argparse
import json
import math
import os
import re
import sys

PROG = "plot_report.py"
STAGE_ORDER = ("read", "h2d", "kernel", "d2h", "write")
BAR_COLOR = "#4c72b0"
BOTTLENECK_COLOR = "#c44e52"
LIMIT_COLOR = "#8c8c8c"


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
    value = float(value)
    return value if math.isfinite(value) else None


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
    limits = doc.get("limits") if isinstance(doc.get("limits"), dict) else {}
    stages = []
    for s in doc["stages"]:
        name = s["name"]
        seconds = _number(s.get("seconds")) or 0.0
        nbytes = _number(s.get("bytes")) or 0.0
        rate = _number(s.get("gb_per_s"))
        if rate is None:
            rate = nbytes / seconds / 1e9 if seconds > 0 else 0.0
        entry = limits.get(name) if isinstance(limits.get(name), dict) else {}
        limit = _number(s.get("limit_gb_per_s"))
        if limit is None:
            limit = _number(entry.get("gb_per_s"))
        if limit is not None and limit <= 0:
            limit = None
        source = entry.get("source") if isinstance(entry.get("source"), str) else None
        fraction = _number(s.get("fraction_of_limit"))
        if fraction is None and limit is not None:
            fraction = rate / limit
        stages.append({"name": name, "bytes": nbytes, "seconds": seconds, "gb_per_s": rate,
                       "slabs": s.get("slabs"), "limit": limit, "source": source, "fraction": fraction})
    # Pipeline order; stages the app adds later keep their place after these.
    known = {n: i for i, n in enumerate(STAGE_ORDER)}
    stages.sort(key=lambda st: known.get(st["name"], len(STAGE_ORDER)))

    bottleneck = doc.get("bottleneck") if isinstance(doc.get("bottleneck"), str) else None
    if bottleneck is None:  # older or partial reports: the stage busy longest, as the app defines it
        busy = [st for st in stages if st["seconds"] > 0]
        if busy:
            bottleneck = max(busy, key=lambda st: st["seconds"])["name"]
    ranks = doc.get("ranks")
    ranks = ranks if isinstance(ranks, int) and not isinstance(ranks, bool) and ranks > 1 else None
    return {
        "path": path,
        "space": str(doc.get("space", "?")),
        "kernel": str(doc.get("kernel", "?")),
        "slicing": str(doc.get("slicing", "")),
        "outcome": str(doc.get("outcome", "complete")),
        "shape": input_shape(doc),
        "wall": _number(doc.get("wall_seconds")) or 0.0,
        "effective": _number(doc.get("effective_gb_per_s")),
        "bottleneck": bottleneck,
        "ranks": ranks,
        "stages": stages,
    }


def input_shape(doc):
    """'100 x 4000 x 5 (dates x ids x nums)' from the plan, else the input's discount shape."""
    plan = doc.get("plan") if isinstance(doc.get("plan"), str) else ""
    m = re.search(r"dates=(\d+)\s+ids=(\d+)\s+nums=(\d+)", plan)
    if m:
        return f"{int(m.group(1)):,} x {int(m.group(2)):,} x {int(m.group(3)):,} (dates x ids x nums)"
    text = doc.get("input") if isinstance(doc.get("input"), str) else ""
    shapes = re.findall(r"\[(\d+(?: x \d+){2})\]", text)
    return shapes[0] if shapes else "shape unknown"


# --------------------------------------------------------------------------
# Text summary (stdout)


def fmt_rate(x):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def ran(st):
    return st["gb_per_s"] > 0 or st["seconds"] > 0


def limit_text(st):
    if st["limit"] is None:
        return "limit not measured"
    source = f" {st['source']}" if st["source"] else ""
    pct = f"{100 * st['fraction']:.0f}% of " if st["fraction"] is not None else ""
    return f"{pct}{fmt_rate(st['limit'])} GB/s{source} limit"


def summary(r):
    ranks = f", {r['ranks']} ranks" if r["ranks"] else ""
    lines = [f"{r['path']}: {r['space']}, {r['kernel']}, {r['shape']}, wall {r['wall']:.3f} s{ranks}, "
             f"outcome {r['outcome']}",
             f"  bottleneck: {r['bottleneck'] or 'none (no stage ran)'}"]
    for st in r["stages"]:
        mark = "  <- bottleneck" if st["name"] == r["bottleneck"] else ""
        status = limit_text(st) if ran(st) else "did not run"
        lines.append(f"  {st['name']:<7} {st['bytes'] / 1e9:10.3f} GB {st['seconds']:9.3f} s "
                     f"{fmt_rate(st['gb_per_s']):>9} GB/s   {status}{mark}")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Drawing


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        # A pyenv/venv python3 ahead of Debian's on PATH lacks the Debian
        # package: use /usr/bin/python3 when it has matplotlib.
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


def title_of(r, label_path):
    ranks = f" | {r['ranks']} ranks" if r["ranks"] else ""
    outcome = "" if r["outcome"] == "complete" else f" | {r['outcome'].upper()}"
    head = f"{os.path.basename(r['path'])}: " if label_path else ""
    slicing = f" ({r['slicing']})" if r["slicing"] else ""
    busy = ""
    for st in r["stages"]:
        if st["name"] == r["bottleneck"] and r["wall"] > 0:
            busy = f" (busy {100 * st['seconds'] / r['wall']:.0f}% of the wall time)"
    effective = f" ({fmt_rate(r['effective'])} GB/s end to end)" if r["effective"] is not None else ""
    return (f"{head}{r['space']}, {r['kernel']}{slicing} | {r['shape']}\n"
            f"wall {r['wall']:.3f} s{effective} | bottleneck: {r['bottleneck'] or 'none'}{busy}{ranks}{outcome}")


def rate_range(reports):
    """Smallest and largest positive GB/s (rates and limits) over the reports: one scale for all panels."""
    positive = [v for r in reports for st in r["stages"] for v in (st["gb_per_s"], st["limit"]) if v]
    return (min(positive), max(positive)) if positive else (1.0, 1.0)


def draw_panel(ax, r, scale, label_path, lo, hi):
    stages = r["stages"]
    y = list(range(len(stages)))[::-1]  # first stage on top
    use_log = scale == "log" or (scale == "auto" and lo > 0 and hi / lo > 50)

    any_limit = False
    for yi, st in zip(y, stages):
        if st["limit"] is not None:
            any_limit = True
            ax.barh(yi, st["limit"], height=0.72, color="none", edgecolor=LIMIT_COLOR, hatch="///",
                    linewidth=1.0, zorder=1)
        color = BOTTLENECK_COLOR if st["name"] == r["bottleneck"] else BAR_COLOR
        if st["gb_per_s"] > 0:
            ax.barh(yi, st["gb_per_s"], height=0.5, color=color, zorder=2)

    if use_log:
        ax.set_xscale("log")
        left = 10 ** math.floor(math.log10(lo)) if lo > 0 else 1e-3
        ax.set_xlim(left, hi * 40)  # room for the labels on the right
    else:
        ax.set_xlim(0, hi * 1.9)

    for yi, st in zip(y, stages):
        end = max(st["gb_per_s"], st["limit"] or 0)
        if not ran(st):
            text = "did not run"
        else:
            text = f"{fmt_rate(st['gb_per_s'])} GB/s, {limit_text(st)}"
        weight = "normal"
        if st["name"] == r["bottleneck"]:
            text += "  [BOTTLENECK]"
            weight = "bold"
        x = end * 1.08 if use_log else end + hi * 0.02
        if end <= 0:
            x = ax.get_xlim()[0] * (1.2 if use_log else 1) + (0 if use_log else hi * 0.02)
        ax.text(x, yi, text, va="center", ha="left", fontsize=8.5, fontweight=weight, zorder=3)

    labels = []
    for st in stages:
        extra = f"\n{st['bytes'] / 1e9:.3g} GB, {st['seconds']:.3g} s"
        labels.append(st["name"] + extra)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=9)
    for tick, st in zip(ax.get_yticklabels(), stages):
        if st["name"] == r["bottleneck"]:
            tick.set_color(BOTTLENECK_COLOR)
            tick.set_fontweight("bold")
    ax.set_ylim(-0.6, len(stages) - 0.4)
    ax.set_xlabel("GB/s (bytes moved by the stage / its busy seconds)" + (", log scale" if use_log else ""))
    ax.grid(axis="x", which="major", linestyle=":", color="#bbbbbb", zorder=0)
    ax.set_axisbelow(True)
    ax.set_title(title_of(r, label_path), fontsize=10, loc="left")
    return any_limit


def plot(plt, reports, out, scale, dpi):
    from matplotlib.patches import Patch

    heights = [1.3 + 0.62 * len(r["stages"]) for r in reports]
    fig, axes = plt.subplots(len(reports), 1, figsize=(10, sum(heights) + 0.5),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    any_limit = False
    lo, hi = rate_range(reports)
    for ax, r in zip(axes[:, 0], reports):
        any_limit |= draw_panel(ax, r, scale, len(reports) > 1, lo, hi)
    handles = [Patch(color=BAR_COLOR, label="stage GB/s"), Patch(color=BOTTLENECK_COLOR, label="bottleneck")]
    if any_limit:
        handles.append(Patch(facecolor="none", edgecolor=LIMIT_COLOR, hatch="///", label="limit"))
    fig.legend(handles=handles, loc="lower right", fontsize=8, ncol=len(handles), frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    try:
        fig.savefig(out, dpi=dpi)
    except OSError as e:
        fail(f"cannot write '{out}': {e.strerror or e}", 1)
    finally:
        plt.close(fig)


# --------------------------------------------------------------------------


def default_output(paths):
    stem = os.path.splitext(paths[0])[0]
    return stem + (".png" if len(paths) == 1 else "-compare.png")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.split("\n\n")[1].replace("\n", " "),
        epilog="Default output: run.json -> run.png next to it; with several reports, "
               "<first>-compare.png next to the first. Exit status: 0 written, 1 matplotlib missing or the PNG "
               "cannot be written, 2 a report is missing, unreadable or not a discount_app run report.")
    parser.add_argument("reports", nargs="+", metavar="report.json", help="run report(s) written by discount_app")
    parser.add_argument("-o", "--output", metavar="chart.png", help="PNG to write (default: next to the report)")
    parser.add_argument("--scale", choices=("auto", "log", "linear"), default="auto",
                        help="GB/s axis: log when the rates span more than 50x (auto, the default), or forced")
    parser.add_argument("--dpi", type=int, default=90, help="resolution of the PNG (default 90)")
    args = parser.parse_args(argv)

    reports = []
    for path in args.reports:
        try:
            reports.append(load_report(path))
        except ReportError as e:
            fail(str(e), 2)
    out = args.output or default_output(args.reports)
    if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        fail(f"cannot write '{out}': its directory does not exist", 1)
    plt = import_pyplot()  # before any output: it may re-run this script under /usr/bin/python3
    for r in reports:
        print(summary(r))
    plot(plt, reports, out, args.scale, args.dpi)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
