#!/usr/bin/env python3
"""docs/your-data.md runs as written.

Every fenced block of the page is taken in order and run in one scratch
directory, with a `discount_app` on PATH that is the binary under test:

  ```python   run with this Python (h5py, NumPy)
  ```sh       run with `bash -e -o pipefail`
  ```yaml     saved to the file named by the HTML comment `<!-- file: NAME -->`
              on the line before the block (the page refers to it by that name)
  ```text     output of the block before it: each non-empty line must appear
              in that block's stdout or stderr (so shown output cannot drift)

A block with another info string (or none) fails the test: nothing on the page
escapes it. After the last block the test checks, with its own h5py/NumPy
reads, that `discount_app verify` passes on the page's job and that the
page's output equals float64(multiplier) * discount bit for bit, in the
file's axis order.
"""

import os
import shutil
import re
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

PAGE = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "your-data.md"))
FENCE = re.compile(r"^```(\S*)\s*$")
FILE_COMMENT = re.compile(r"^<!--\s*file:\s*(\S+)\s*-->\s*$")
KINDS = ("python", "sh", "yaml", "text")
# The job the page builds up to, and what it reads and writes (checked independently at the end).
JOB, INPUT, MULT, DISC, AXES, OUTPUT = "port.yaml", "port.h5", "rates/mult", "curves/discount", \
    ("id", "date", "num"), "port_cv.h5"


def blocks(path):
    """[(line, kind, file name or None, text)] for every fenced block, in order."""
    with open(path) as f:
        lines = f.read().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        kind, start = m.group(1), i + 1
        prev = lines[i - 1] if i > 0 else ""
        name = FILE_COMMENT.match(prev).group(1) if FILE_COMMENT.match(prev) else None
        end = next((j for j in range(start, len(lines)) if lines[j].strip() == "```"), None)
        E.check(end is not None, f"{path}:{i + 1}: the block is never closed")
        found.append((i + 1, kind, name, "\n".join(lines[start:end]) + "\n"))
        i = end + 1
    return found


def app_on_path(ctx):
    """A bin directory whose discount_app is the binary under test."""
    bin_dir = ctx.dir("bin")
    os.symlink(ctx.app, os.path.join(bin_dir, "discount_app"))
    return {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "MPLCONFIGDIR": ctx.dir("mplconfig"), "OMP_PROC_BIND": "false"}


def need_hdf5_tools():
    """The page's sh blocks use HDF5's command-line tools (Debian: hdf5-tools,
    installed by scripts/deps.sh); a node without them cannot run the page."""
    missing = [tool for tool in ("h5repack", "h5ls") if shutil.which(tool) is None]
    if missing:
        raise E.Skip(f"{', '.join(missing)} not on PATH (HDF5's tools, Debian package hdf5-tools)")


def run_block(ctx, work, env, where, line, kind, name, text, last):
    """One block of a doc page, in `work`: a yaml block is written as file
    `name`; a text block must appear in `last`'s output (the previous command
    block's Result); python and sh blocks run and must exit 0. Returns the
    Result of a command block, else `last` unchanged."""
    if kind == "yaml":
        E.write_text(os.path.join(work, name), text)
        return last
    if kind == "text":
        E.check(last is not None, f"{where}: output shown before any command")
        seen = last.stdout + last.stderr
        for shown in text.splitlines():
            E.check(shown.strip() == "" or shown.strip() in seen,
                    f"{where}: the page shows\n  {shown.strip()}\nbut the block before it printed:\n{last}")
        return last
    script = os.path.join(ctx.work, f"block_{line}.{'py' if kind == 'python' else 'sh'}")
    E.write_text(script, text)
    argv = [sys.executable, script] if kind == "python" else ["bash", "-e", "-o", "pipefail", script]
    last = E.run(ctx, argv, cwd=work, env=env, timeout=120)
    E.check(last.rc == 0, f"{where} failed:\n{text}\n{last}")
    return last


def case_page_runs(ctx):
    page = blocks(PAGE)
    kinds = [k for _, k, _, _ in page]
    for line, kind, name, _ in page:
        E.check(kind in KINDS, f"{PAGE}:{line}: block '```{kind}' is not one of {KINDS}: mark it so the test runs it")
        E.check((kind == "yaml") == (name is not None),
                f"{PAGE}:{line}: a yaml block needs '<!-- file: NAME -->' on the line before it (and only yaml does)")
    for kind in ("python", "sh", "yaml", "text"):
        E.check(kind in kinds, f"{PAGE} has no {kind} block: the page changed shape, update this test")

    need_hdf5_tools()
    work = ctx.dir("page")
    env = app_on_path(ctx)
    last = None  # the previous runnable block's Result
    for line, kind, name, text in page:
        where = f"{os.path.basename(PAGE)}:{line} ({kind})"
        result = run_block(ctx, work, env, where, line, kind, name, text, last)
        if result is not last:
            last = result
            print(f"ran {where}: {text.strip().splitlines()[0][:80]}")

    # The job the page ends with: verify passes and the output is the NumPy product.
    E.expect_rc(E.app(ctx, "verify", os.path.join(work, JOB), cwd=work), 0, f"verify {JOB}")
    import h5py
    with h5py.File(os.path.join(work, INPUT), "r") as f:
        mult, disc = f[MULT][...], f[DISC][...]
    canon = np.transpose(disc.astype(np.float64), [AXES.index(a) for a in E.CANON])
    cv = mult.astype(np.float64)[None, :, :] * canon
    expected = np.ascontiguousarray(np.transpose(cv, [E.CANON.index(a) for a in AXES]))
    E.check_output(os.path.join(work, OUTPUT), expected)
    with h5py.File(os.path.join(work, OUTPUT), "r") as f:
        E.check(f["cv"].attrs["axes"] == ",".join(AXES), f"{OUTPUT}: cv's axes attribute is not {AXES}")
        E.check(E.progress_of(os.path.join(work, OUTPUT)).all(), f"{OUTPUT}: a unit is not recorded as done")
    print(f"{len(page)} blocks ran; {OUTPUT} {expected.shape} equals float64({MULT}) * {DISC}")


def case_broken_snippet_fails(ctx):
    """The check has teeth: the page with one shell command misspelt must fail the case above."""
    need_hdf5_tools()
    with open(PAGE) as f:
        text = f.read()
    broken = text.replace("discount_app verify", "discount_app verifyy", 1)
    E.check(broken != text, f"{PAGE} has no 'discount_app verify' to break")
    copy = os.path.join(ctx.dir("docs"), "your-data.md")
    E.write_text(copy, broken)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--app", ctx.app, "--work", ctx.dir("inner"),
                        "--case", "page_runs"], env=dict(os.environ, YOUR_DATA_PAGE=copy),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    E.check(r.returncode == 1 and "FAIL page_runs" in r.stdout and "verifyy" in r.stdout,
            f"a misspelt command on the page did not fail the test (exit {r.returncode}):\n{r.stdout[-3000:]}")


PAGE = os.environ.get("YOUR_DATA_PAGE", PAGE)

CASES = [
    ("page_runs", case_page_runs),
    ("broken_snippet_fails", case_broken_snippet_fails),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
