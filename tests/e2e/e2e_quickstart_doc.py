#!/usr/bin/env python3
"""docs/quickstart.md runs as written, and the docs' links hold.

The page's blocks follow docs/your-data.md's rules (e2e_your_data_doc.py):
python and sh blocks run in order in one scratch directory with the binary
under test as `discount_app` on PATH, a yaml block is saved under the name in
`<!-- file: NAME -->`, a text block is output the block before it must print.
One more kind: the sh block after `<!-- install: checked, not run -->` is not
run (it needs root and builds the dependencies); each of its scripts/ commands
must be one the README gives, and the directory it puts on PATH must be where
scripts/demo.sh builds discount_app.

After the last block the test reads the page's output itself: h5py equals
float64(multBy) * discount bit for bit, and xarray (h5netcdf engine) gives cv
the dimensions date, id, num with the same values. That needs an output with
dimension scales.

doc_links: every relative link in README.md and docs/*.md names a file that
exists and, with #anchor, a heading of that file (GitHub's anchor rules).
"""

import os
import re
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402
from e2e_your_data_doc import FILE_COMMENT, app_on_path, blocks, run_block  # noqa: E402,F401

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PAGE = os.environ.get("QUICKSTART_PAGE", os.path.join(ROOT, "docs", "quickstart.md"))
INSTALL = re.compile(r"^<!--\s*install: checked, not run\s*-->\s*$")
KINDS = ("python", "sh", "yaml", "text")
JOB, INPUT, OUTPUT, MAX_LINES = "job.yaml", "mine.h5", "cv.h5", 60


def install_blocks(path):
    """Line numbers of the blocks marked as the install block."""
    with open(path) as f:
        lines = f.read().splitlines()
    return {i + 2 for i, line in enumerate(lines[:-1]) if INSTALL.match(line) and lines[i + 1].startswith("```")}


def readme_commands():
    """Every command line of the README's sh blocks, comments stripped."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    found = set()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.split("#", 1)[0].strip():
                found.add(line.split("#", 1)[0].strip())
    return found


def check_install(where, text):
    commands = readme_commands()
    with open(os.path.join(ROOT, "scripts", "demo.sh")) as f:
        demo = f.read()
    built = re.search(r"^app=(\S+)/discount_app$", demo, re.M)
    E.check(built, "scripts/demo.sh no longer names its discount_app as app=DIR/discount_app")
    for line in text.splitlines():
        command = line.split("#", 1)[0].strip()
        if not command:
            continue
        if command.startswith("scripts/"):
            E.check(command in commands, f"{where}: '{command}' is not one of the README's commands {commands}")
            script = os.path.join(ROOT, command.split()[0])
            E.check(os.access(script, os.X_OK), f"{where}: {script} is not an executable script")
        elif command.startswith("export PATH="):
            E.check(f'$PWD/{built.group(1)}:' in command,
                    f"{where}: PATH should get $PWD/{built.group(1)} (where scripts/demo.sh builds discount_app)")
        else:
            E.check(False, f"{where}: '{command}' is neither a README command nor the PATH line")


def case_page_runs(ctx):
    page = blocks(PAGE)
    with open(PAGE) as f:
        E.check(len(f.read().splitlines()) <= MAX_LINES, f"{PAGE} is over {MAX_LINES} lines: a quickstart fits a screen")
    E.need_modules("h5py", "xarray", "h5netcdf")  # the page reads the result back with xarray
    install = install_blocks(PAGE)
    E.check(len(install) == 1, f"{PAGE}: expected one install block, found {len(install)}")
    for line, kind, name, _ in page:
        E.check(kind in KINDS, f"{PAGE}:{line}: block '```{kind}' is not one of {KINDS}: mark it so the test runs it")
        E.check((kind == "yaml") == (name is not None),
                f"{PAGE}:{line}: a yaml block needs '<!-- file: NAME -->' on the line before it (and only yaml does)")
    work = ctx.dir("page")
    env = app_on_path(ctx)
    last, ran = None, 0
    for line, kind, name, text in page:
        where = f"{os.path.basename(PAGE)}:{line} ({kind})"
        if line in install:
            E.check(kind == "sh", f"{where}: the install block should be sh")
            check_install(where, text)
            continue
        result = run_block(ctx, work, env, where, line, kind, name, text, last)
        if result is not last:
            last, ran = result, ran + 1
            print(f"ran {where}: {text.strip().splitlines()[0][:80]}")

    # The page's result, read by this test: h5py against NumPy, then xarray's view of it.
    import h5py
    with h5py.File(os.path.join(work, INPUT), "r") as f:
        mult, disc = f["multBy"][...], f["discount"][...]
    E.check(mult.size and np.count_nonzero(mult) == mult.size and np.count_nonzero(disc) == disc.size,
            f"{INPUT}: the page's data should be non-zero")
    expected = mult.astype(np.float64)[None, :, :] * disc.astype(np.float64)
    E.check_output(os.path.join(work, OUTPUT), expected)
    import xarray as xr
    with xr.open_dataset(os.path.join(work, OUTPUT), engine="h5netcdf") as ds:
        cv = ds["cv"]
        E.check(cv.dims == ("date", "id", "num"), f"xarray: cv's dims are {cv.dims}, expected (date, id, num)")
        E.check(dict(cv.sizes) == {"date": disc.shape[0], "id": disc.shape[1], "num": disc.shape[2]},
                f"xarray: cv's sizes {dict(cv.sizes)} against the input {disc.shape}")
        values = cv.values
    E.check(values.dtype == np.float64 and np.array_equal(values.view(np.uint64), expected.view(np.uint64)),
            "xarray: cv's values differ from float64(multBy) * discount")
    E.check(os.path.exists(os.path.join(work, "run.json")), "the page's report: run.json was not written")
    print(f"{len(page)} blocks ({ran} run); {OUTPUT} {expected.shape} read back by h5py and xarray")


def github_anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    seen, out, fence = {}, set(), False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                base = github_anchor(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(root):
    """(links checked, the broken ones) of README.md and docs/*.md under `root`."""
    pages = [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", p) for p in os.listdir(os.path.join(root, "docs")) if p.endswith(".md"))
    link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
    bad, checked = [], 0
    for page in pages:
        with open(page) as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for target in link.findall(text):
            if re.match(r"^[a-z]+:", target):
                continue  # http:, mailto:
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            checked += 1
            if not os.path.exists(full):
                bad.append(f"{os.path.relpath(page, root)}: {target} (no such file)")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                bad.append(f"{os.path.relpath(page, root)}: {target} (no such heading)")
    return checked, bad


def case_doc_links(ctx):
    checked, bad = broken_links(ROOT)
    E.check(checked > 20, f"only {checked} links found: the link pattern is broken")
    E.check(not bad, "broken links:\n  " + "\n  ".join(bad))
    print(f"{checked} links hold")
    # The check has teeth: a copy with a heading renamed and a page removed fails it.
    copy = ctx.dir("copy")
    os.makedirs(os.path.join(copy, "docs"))
    with open(os.path.join(ROOT, "README.md")) as f:
        E.write_text(os.path.join(copy, "README.md"), f.read())
    for name in os.listdir(os.path.join(ROOT, "docs")):
        if name.endswith(".md") and name != "prediction.md":
            with open(os.path.join(ROOT, "docs", name)) as f:
                text = f.read()
            if name == "user-guide.md":
                text = text.replace("### 3.6 Chart it", "### 3.6 Charting")
            E.write_text(os.path.join(copy, "docs", name), text)
    _, bad = broken_links(copy)
    E.check(any("user-guide.md#36-chart-it (no such heading)" in b for b in bad)
            and any("prediction.md (no such file)" in b for b in bad), f"the broken copy passed: {bad}")


def case_broken_page_fails(ctx):
    """page_runs has teeth: the page with its shown verify output changed must fail it."""
    E.need_modules("h5py", "xarray", "h5netcdf")  # page_runs skips without them
    with open(PAGE) as f:
        text = f.read()
    broken = text.replace("verify: 120120 elements", "verify: 120121 elements", 1)
    E.check(broken != text, f"{PAGE} shows no 'verify: 120120 elements' line to break")
    copy = E.write_text(os.path.join(ctx.dir("docs"), "quickstart.md"), broken)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--app", ctx.app, "--work", ctx.dir("inner"),
                        "--case", "page_runs"], env=dict(os.environ, QUICKSTART_PAGE=copy),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    E.check(r.returncode == 1 and "FAIL page_runs" in r.stdout and "120121" in r.stdout,
            f"a wrong output line on the page did not fail the test (exit {r.returncode}):\n{r.stdout[-3000:]}")


CASES = [
    ("page_runs", case_page_runs),
    ("doc_links", case_doc_links),
    ("broken_page_fails", case_broken_page_fails),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
