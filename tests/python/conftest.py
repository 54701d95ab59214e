"""Shared fixtures for the discount_app Python tests (pytest).

The package under test is whatever `import discount_app` finds: the build
tree's (ctest puts build/<preset>/python first on PYTHONPATH) or the one
installed in a virtual environment (.ci/run). Expected results are computed
here with NumPy alone and compared bit for bit through uint64 views.
"""
import contextlib
import os
import select
import signal
import sys
import threading
import time

import numpy as np
import pytest

sys.dont_write_bytecode = True  # keep the source tree clean


def bits(a):
    """The float64 bit patterns of `a` (a copy, C order)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def assert_bit_exact(got, expected, what="result"):
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    diff = bits(got) != bits(expected)
    assert not diff.any(), f"{what}: {int(diff.sum())} of {diff.size} elements differ, first at " \
                           f"{np.unravel_index(int(np.argmax(diff)), diff.shape)}"


def random_nonzero(rng, shape, dtype=np.float64):
    """Values in [0.5, 1.5) scaled by random signs and powers of two: never 0, never rounded to 0."""
    v = rng.uniform(0.5, 1.5, size=shape) * np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    v *= np.exp2(rng.integers(-8, 9, size=shape))
    return v.astype(dtype)


def expected_cv(mult, disc, axes=("date", "id", "num")):
    """cv in disc's axis order, from NumPy only."""
    perm = [axes.index(a) for a in ("date", "id", "num")]
    canon = np.transpose(np.asarray(disc, dtype=np.float64), perm)        # [d][i][k]
    cv = np.asarray(mult, dtype=np.float64)[None, :, :] * canon
    return np.transpose(cv, np.argsort(perm))


def wait_for(what, predicate, timeout=300.0):
    """Polls predicate() until true (an event: a file appears); `timeout` is a hang guard only."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s (hang guard)")
        time.sleep(delay)
        delay = min(delay * 2, 0.002)


def wait_for_exit(pid, timeout=300.0):
    """Waits for child `pid` to exit (its pidfd turns readable: an event, not a delay) and returns
    its exit code (os.waitstatus_to_exitcode). `timeout` is a hang guard only: past it the child
    is killed and the test fails."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise AssertionError(f"child {pid} still running after {timeout} s (hang guard): killed")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


class Hold:
    """The engine's test-only pause points (DISCOUNT_TEST_HOLD, lib/common/test_hooks.hpp):
    after writing its w-th slab a run creates held-<w> and waits while hold-<w> exists or
    until it is asked to stop."""

    def __init__(self, directory, *slabs):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        for w in slabs:
            open(os.path.join(self.dir, f"hold-{w}"), "w").close()

    def reached(self, w):
        return os.path.exists(os.path.join(self.dir, f"held-{w}"))

    def release(self, w):
        try:
            os.unlink(os.path.join(self.dir, f"hold-{w}"))
        except FileNotFoundError:
            pass


@pytest.fixture
def hold(tmp_path, monkeypatch):
    """Hold(slabs...) with DISCOUNT_TEST_HOLD set for this test only."""
    made = []

    def make(*slabs):
        h = Hold(tmp_path / f"hold{len(made)}", *slabs)
        monkeypatch.setenv("DISCOUNT_TEST_HOLD", h.dir)
        made.append(h)
        return h
    yield make
    for h in made:
        for name in os.listdir(h.dir):
            if name.startswith("hold-"):
                h.release(int(name[5:]))


@contextlib.contextmanager
def sigint_when(what, predicate, release, timeout=300.0):
    """While the `with` body runs, a thread sends this process SIGINT once predicate() holds
    (an event, not a delay). Hang guard: should the predicate not hold, or the body not end,
    within `timeout` s (an interrupt lost), release() lets the held job go on, so the test
    fails (its call returns uninterrupted) instead of hanging the suite."""
    finished = threading.Event()

    def body():
        try:
            wait_for(what, predicate, timeout)
        except AssertionError:
            release()
            return
        os.kill(os.getpid(), signal.SIGINT)
        if not finished.wait(timeout):
            release()
    t = threading.Thread(target=body, daemon=True)
    t.start()
    try:
        yield t
    finally:
        finished.set()


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.nodeid)) % (2 ** 32))


@pytest.fixture(scope="session")
def app_binary():
    """The CLI under test (ctest sets DISCOUNT_APP); tests that compare with it skip without it."""
    path = os.environ.get("DISCOUNT_APP")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("DISCOUNT_APP (the discount_app binary) is not set")
    return path
