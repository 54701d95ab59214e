#!/usr/bin/env python3
"""The progress line on a terminal and in a log.

On a terminal (a tmux pane 60 columns wide) the line is redrawn in place: it
must fit the width, so it never wraps, and a redraw leaves no fragment of an
earlier line; when the job ends (or stops) what follows starts on a line of
its own. The pane is captured with `tmux capture-pane` and every byte the app
sent to it is logged with `tmux pipe-pane`, so each redraw is checked too.
In a log (stdout a file) every progress line and every `[discount_app]`
status line starts with an ISO 8601 UTC time; `plan` and `config` print none.

The tmux cases wait for events, never for time (they failed by timing on a
fast GPU node and on a loaded 2-core CI box): the run is held after its first
and second slabs (DISCOUNT_TEST_HOLD, lib/common/test_hooks.hpp), so it
cannot end before the test has seen the redraws it needs or pressed Ctrl-C;
the only waits on time are the half second the app leaves between redraws,
taken while the run is held.

tmux comes with scripts/deps.sh; without it the tmux cases skip, saying so,
except under CI (the CI variable set), where they fail.
"""

import calendar
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

COLUMNS = 60
DATES, IDS, NUMS = 100, 20011, 5
DATE_BYTES = IDS * NUMS * 8
PROGRESS = re.compile(r"\d+/\d+ slabs")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) ")


def need_tmux():
    if shutil.which("tmux"):
        return
    if os.environ.get("CI"):
        raise E.Failure("tmux is not installed, and CI runs every test (scripts/deps.sh installs it)")
    raise E.Skip("tmux is not installed (scripts/deps.sh installs it with the other Debian packages)")


REDRAW = 0.5  # seconds between two redraws on a terminal (the writer's rule in lib/pipeline/pipeline.cpp)


def slab_job(ctx, dates=DATES, checkpoint_seconds=0):
    """One date per slab, every slab made durable."""
    d = ctx.dir(f"job{dates}")
    src = E.generate(ctx, os.path.join(d, "in.h5"), dates, IDS, NUMS, seed=17)
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5",
                       memory={"max_slab": DATE_BYTES, "pipeline_depth": 2},
                       output={"checkpoint_seconds": checkpoint_seconds})
    return d, src, yaml, os.path.join(d, "out.h5")


DONE_TITLE = "discount-e2e-done"


class Pane:
    """A private tmux server (its own socket) with one detached session of
    COLUMNS x 30 running `command` once `go` exists, after pipe-pane logs
    the pane's output bytes to raw. After the command the shell writes its
    exit status to rc and sets the pane's title (an escape sequence that
    draws nothing): once raw holds that sequence and the pane shows that
    title, every byte the command wrote has been logged and drawn."""

    def __init__(self, ctx, cwd, command):
        # A socket's path must be short (about 100 bytes): not in the scratch tree.
        self.sock_dir = tempfile.mkdtemp(prefix="discount-tmux-")
        self.sock = os.path.join(self.sock_dir, "sock")
        self.raw = os.path.join(ctx.work, "pane.raw")
        self.rc_file = os.path.join(ctx.work, "rc")
        go = os.path.join(ctx.work, "go")
        # The shell survives a Ctrl-C meant for the app (a trap with a
        # command, unlike an ignored signal, is not inherited), and then
        # stays: a Ctrl-C that kills one sleep starts the next, so the pane
        # (and with it the tmux server) cannot go away before the test has
        # read it ("no server running" was that: a Ctrl-C after the job's
        # end killed the pane's last command). remain-on-exit keeps a dead
        # pane readable all the same.
        script = (f"trap : INT; while [ ! -e '{go}' ]; do sleep 0.02; done; cd '{cwd}'; {command}; "
                  f"rc=$?; echo $rc > '{self.rc_file}'; printf '\\033]2;{DONE_TITLE}\\033\\\\'; "
                  f"while :; do sleep 600; done")
        env = E.app_env({"OMP_PROC_BIND": "false"})
        env.pop("TMUX", None)
        self.tmux("new-session", "-d", "-x", str(COLUMNS), "-y", "30", "-s", "progress", "sh", "-c", script, env=env)
        try:
            self.tmux("set-option", "-t", "progress", "status", "off")
            self.tmux("set-option", "-w", "-t", "progress", "remain-on-exit", "on")
            self.tmux("pipe-pane", "-t", "progress", "-o", f"cat >> '{self.raw}'")
            width = self.tmux("display-message", "-p", "-t", "progress", "#{pane_width}").strip()
            E.check(width == str(COLUMNS), f"the pane is {width} columns wide, not {COLUMNS}")
        except BaseException:
            self.close()
            raise
        with open(go, "w"):
            pass

    def tmux(self, *args, env=None):
        r = subprocess.run(["tmux", "-S", self.sock] + list(args), capture_output=True, text=True, env=env,
                           timeout=E.HANG_GUARD)
        E.check(r.returncode == 0, f"tmux {' '.join(args)}: exit {r.returncode}: {r.stderr}")
        return r.stdout

    def ended(self):
        """The command's exit status once it has ended (a string), else None."""
        if os.path.exists(self.rc_file):
            with open(self.rc_file) as f:
                text = f.read().strip()
            if text:
                return f"exit {text}"
        return None

    def wait(self):
        """Waits for the command's end and for its last bytes to be logged and
        drawn; returns its exit status."""
        E.wait_for("the run's end", self.ended, step=0.05)
        E.wait_for("the pane's last bytes in the log", lambda: DONE_TITLE in self.raw_text(), step=0.01)
        E.wait_for("the pane's last bytes on the screen", lambda: self.tmux(
            "display-message", "-p", "-t", "progress", "#{pane_title}").strip() == DONE_TITLE, step=0.01)
        with open(self.rc_file) as f:
            return int(f.read().strip())

    def raw_text(self):
        if not os.path.exists(self.raw):
            return ""
        with open(self.raw, "rb") as f:
            return f.read().decode(errors="replace")

    def screen(self, joined=False):
        """The visible screen, one string per row (joined: rows a line wrapped onto, as one)."""
        args = ["capture-pane", "-p", "-t", "progress"] + (["-J"] if joined else [])
        return [row.rstrip() for row in self.tmux(*args).splitlines()]

    def close(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True, timeout=E.HANG_GUARD)
        shutil.rmtree(self.sock_dir, ignore_errors=True)


def check_redraws(raw):
    """Every progress line the app drew: at most COLUMNS - 1 columns, redrawn
    from the line's start and erased to its end. Returns how many."""
    draws = [piece for piece in raw.split("\r") if PROGRESS.search(piece)]
    for piece in draws:
        text = piece.split("\x1b[K")[0]
        E.check("\x1b[K" in piece, f"a redraw does not erase to the end of the line: {piece!r}")
        E.check(len(text) <= COLUMNS - 1, f"a progress line of {len(text)} columns on a {COLUMNS}-column "
                                          f"terminal: {text!r}")
    return len(draws)


def progress_rows(rows):
    return [i for i, row in enumerate(rows) if PROGRESS.search(row) or "ETA" in row or "GB out" in row
            or "slabs written" in row]


def run_in_pane(ctx, dates, stop=False):
    """Runs a job of `dates` one-date slabs in a pane, held after its first
    and second slabs. Each hold lasts longer than the redraw period, so the
    second and third slabs are certainly drawn (and the last one always is).
    With stop, Ctrl-C is pressed while the run is held after its second slab,
    once that slab's progress line is in the pane: the stop ends the hold.
    Returns (rc, raw bytes, screen rows, joined rows, job)."""
    job = slab_job(ctx, dates)
    d, _, yaml, _ = job
    hold = E.Hold(ctx, 1, 2)
    pane = Pane(ctx, d, f"DISCOUNT_TEST_HOLD='{hold.dir}' '{ctx.app}' run '{yaml}'")
    try:
        # Before: polled for a progress line for up to 60 s, then pressed
        # Ctrl-C, and retried with 4x and 16x longer jobs when the job had
        # already ended. Now: the run cannot pass slab 2 before the Ctrl-C.
        hold.wait(1, ended=pane.ended)
        time.sleep(REDRAW + 0.05)  # the run is held: the next slab is drawn (the app's own half-second rule)
        hold.release(1)
        hold.wait(2, ended=pane.ended)
        E.wait_for("slab 2's progress line in the pane", lambda: PROGRESS.search(pane.raw_text()))
        if stop:
            pane.tmux("send-keys", "-t", "progress", "C-c")
        else:
            time.sleep(REDRAW + 0.05)
            hold.release(2)
        rc = pane.wait()
        return rc, pane.raw_text(), pane.screen(), pane.screen(joined=True), job
    finally:
        hold.release(1, 2)
        pane.close()
        for name in ("pane.raw", "rc", "go"):
            if os.path.exists(os.path.join(ctx.work, name)):
                os.unlink(os.path.join(ctx.work, name))


def case_tmux_60_columns(ctx):
    need_tmux()
    # Before: redraws come every half second, so a job that ended sooner was
    # retried 4x and 16x longer. Now the run is held twice for longer than
    # the redraw period (run_in_pane): slabs 2, 3 and the last are drawn.
    dates = DATES
    rc, raw, screen, joined, (d, src, yaml, out) = run_in_pane(ctx, dates)
    E.check(rc == 0, f"run exit {rc}:\n" + "\n".join(screen))
    draws = check_redraws(raw)
    print("\n".join(screen))
    E.check(draws >= 2, f"the progress line was drawn {draws} time(s): the job was too quick to test redraws")
    # One progress line on the screen, the last one, whole, between the
    # limits line and the summary: no fragments of earlier lines, no wrap.
    rows = progress_rows(joined)
    E.check(len(rows) == 1, f"{len(rows)} progress rows on the screen (wrapped lines joined):\n" + "\n".join(joined))
    line = joined[rows[0]]
    E.check(len(line) <= COLUMNS - 1, f"the progress line has {len(line)} columns: {line!r}")
    E.check(line.startswith(f"[discount_app] {dates}/{dates} slabs"), f"not the final progress line: {line!r}")
    E.check("limits" in joined[rows[0] - 1] and joined[rows[0] + 1].startswith("stage "),
            "the progress line is not alone between the limits line and the summary:\n" + "\n".join(joined))
    E.check(len(progress_rows(screen)) == 1, "progress fragments on the screen:\n" + "\n".join(screen))
    E.check(not any(STAMP.match(row) for row in joined), "a terminal got time-stamped lines")
    E.check_output(out, E.expected_cv(src), what="the run under tmux")
    print(f"{draws} redraws, the last: {line!r}")


def case_tmux_stop_starts_a_clean_line(ctx):
    """SIGINT mid-run (Ctrl-C in the pane): the error line starts at the
    left edge, under the progress line as it was last drawn."""
    need_tmux()
    # Before: retried with longer jobs when the job ended before the Ctrl-C
    # (and then the Ctrl-C killed the pane's shell: "no server running").
    # Now the Ctrl-C lands while the run is held after its second slab.
    rc, raw, _, joined, (d, src, yaml, out) = run_in_pane(ctx, DATES, stop=True)
    print("\n".join(joined))
    E.check(rc == 75, f"exit {rc} after Ctrl-C, expected 75:\n" + "\n".join(joined))
    check_redraws(raw)
    rows = progress_rows(joined)
    E.check(len(rows) == 1 and len(joined[rows[0]].removesuffix("^C")) <= COLUMNS - 1,
            "progress rows:\n" + "\n".join(joined))
    after = joined[rows[0] + 1]
    # (The terminal echoes the Ctrl-C as "^C" after the progress line.)
    E.check(after.startswith("discount_app: ") and "interrupted by SIGINT" in after,
            f"the line after the progress line is {after!r}, not the stop's message at the left edge")
    E.expect_rc(E.app(ctx, "run", "-q", yaml, cwd=d), 0, "resume")
    E.check_output(out, E.expected_cv(src), what="after the resume")


def case_log_lines_timestamped(ctx):
    """stdout a file: each progress line and `[discount_app]` line starts with
    the time (UTC, ISO 8601, within the run); the summary table and the
    outputs of plan and config carry none."""
    d, src, yaml, out = slab_job(ctx)
    t0 = int(time.time())
    r = E.expect_rc(E.app(ctx, "run", yaml, cwd=d), 0, "run")
    t1 = int(time.time()) + 1
    lines = r.stdout.splitlines()
    stamped = [ln for ln in lines if STAMP.match(ln)]
    progress = [ln for ln in lines if PROGRESS.search(ln)]
    E.check(progress and all(STAMP.match(ln) for ln in progress), f"progress lines without a time:\n{r.stdout}")
    E.check(progress[-1].split(" ", 1)[1].startswith(f"[discount_app] {DATES}/{DATES} slabs written (100%)")
            and "\r" not in r.stdout and "\x1b" not in r.stdout, f"the log's progress lines:\n{r.stdout}")
    tagged = [ln for ln in lines if "[discount_app]" in ln]
    E.check(len(tagged) >= 6 and all(STAMP.match(ln) and ln.split(" ", 1)[1].startswith("[discount_app] ")
                                      for ln in tagged), f"status lines without a time:\n{r.stdout}")
    for ln in stamped:
        when = calendar.timegm(time.strptime(STAMP.match(ln).group(1), "%Y-%m-%dT%H:%M:%SZ"))
        E.check(t0 <= when <= t1, f"time {STAMP.match(ln).group(1)} is outside the run ({t0}..{t1}): {ln}")
    table = [ln for ln in lines if ln.startswith(("stage ", "read ", "kernel ", "write ", "wall ", "bottleneck:"))]
    E.check(len(table) >= 5, f"the summary table is not there unstamped:\n{r.stdout}")
    E.check_output(out, E.expected_cv(src), what="the logged run")
    for args in (("plan", yaml), ("config", yaml), ("run", "--dry-run", yaml)):
        p = E.expect_rc(E.app(ctx, *args, cwd=d), 0, " ".join(args[:-1]))
        E.check(not any(STAMP.match(ln) for ln in p.stdout.splitlines()), f"{args[0]} printed a time:\n{p}")
    print(f"{len(progress)} progress line(s), {len(stamped)} time-stamped lines; the last: {progress[-1]}")


CASES = [
    ("tmux_60_columns", case_tmux_60_columns),
    ("tmux_stop_starts_a_clean_line", case_tmux_stop_starts_a_clean_line),
    ("log_lines_timestamped", case_log_lines_timestamped),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
