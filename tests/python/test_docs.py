"""docs/python.md runs as written: its Python blocks, in order, in one namespace,
in a scratch folder. A block is left out only when the line before it says
`<!-- not run: why -->` (the page's Numba/CUDA original), or when the line before
it says `<!-- needs: module ... -->` and one of those modules is not installed
(Dask on a GPU node; CI installs them all and runs every block); `sh` blocks are
the install commands (.ci/run runs the pip one) and are not run here."""
import importlib.util
import contextlib
import io
import os
import re

import numpy as np

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
FENCE = re.compile(r"^```(\S*)\s*$")


def blocks():
    lines = open(PAGE).read().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        skipped = i > 0 and lines[i - 1].startswith("<!-- not run:")
        needs = lines[i - 1][len("<!-- needs:"):].split("-->")[0].split() if i > 0 and lines[i - 1].startswith(
            "<!-- needs:") else []
        missing = [n for n in needs if importlib.util.find_spec(n) is None]
        found.append((i + 1, m.group(1), skipped, missing, "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return found


def test_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = blocks()
    assert {kind for _, kind, _, _, _ in found} <= {"python", "sh"}, "a block of another kind"
    assert sum(1 for _, kind, skipped, _, _ in found if skipped) == 1, "only the Numba original is left out"
    namespace = {"__name__": "docs_python"}
    ran = 0
    for line, kind, skipped, missing, text in found:
        if kind != "python" or skipped:
            continue
        if missing:
            assert not os.environ.get("CI"), f"{PAGE}:{line} needs {missing}, which CI installs"
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(text, f"{PAGE}:{line}", "exec"), namespace)
        ran += 1
    assert ran >= 5
    # The page's results, checked here once more with NumPy alone.
    mult, disc, cv = namespace["multBy"], namespace["discount"], namespace["cv"]
    expected = mult[None] * disc
    assert np.array_equal(cv.view(np.uint64), expected.view(np.uint64))
    assert namespace["report"]["outcome"] == "complete"
