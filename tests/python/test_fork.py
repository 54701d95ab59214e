"""discount_app in processes that fork: a child forked after the parent's engine started (its
first call the engine ran; small host calls run on the calling thread and start none) refuses
every call at once (ForkError, naming spawn and forkserver), never hangs; a child forked before
it, and spawn or forkserver workers, compute as the parent does. Every wait is on a process's
exit or a result's arrival; the timeouts are hang guards only."""
import multiprocessing
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

import discount_app
from conftest import assert_bit_exact, expected_cv, random_nonzero, wait_for_exit

HANG_GUARD = 300.0


def odd_case(rng, dates=7, ids=13, nums=5):
    return random_nonzero(rng, (ids, nums)), random_nonzero(rng, (dates, ids, nums))


def start_the_engine(rng):
    """A call through the engine (Kokkos, its threads), checked, so that the engine runs here.
    Small host calls run on the calling thread and start no engine: this one is sent past that path."""
    mult, disc = odd_case(rng)
    assert_bit_exact(discount_app.multiply(mult, disc, progress=lambda fields: None), expected_cv(mult, disc))
    assert discount_app.last_report()["space"] != "calling thread"


def fork_quietly():
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() beside threads: that is the point here
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def test_os_fork_child_refuses_at_once_and_the_parent_goes_on(rng):
    start_the_engine(rng)
    mult, disc = odd_case(rng, 9, 31, 3)
    r, w = os.pipe()
    pid = fork_quietly()
    if pid == 0:  # the child: what multiply did, through the pipe; os._exit skips pytest's teardown
        code = 1
        try:
            os.close(r)
            try:
                discount_app.multiply(mult, disc)
                said = "returned"
            except discount_app.ForkError as e:
                said = f"ForkError {e.exit_code} {e.message}"
                code = 0
            except BaseException as e:  # noqa: B036 - anything else is reported, not raised
                said = f"{type(e).__name__}: {e}"
            os.write(w, said.encode())
        finally:
            os._exit(code)
    os.close(w)
    status = wait_for_exit(pid, HANG_GUARD)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode()
    assert status == 0, said
    assert said.startswith("ForkError 69 "), said
    assert 'get_context("spawn")' in said and "forkserver" in said, said
    # The parent's engine is untouched by the child.
    assert_bit_exact(discount_app.multiply(mult, disc), expected_cv(mult, disc))


# Forks before and after the first call in a fresh interpreter; every child leaves through
# sys.exit, so the module's atexit handler runs in each.
SCRIPT = textwrap.dedent("""
    import os, select, sys
    import numpy as np
    import discount_app

    def wait(pid):
        fd = os.pidfd_open(pid)
        ready, _, _ = select.select([fd], [], [], {guard})
        if not ready:  # hang guard
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "hung"
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

    rng = np.random.default_rng({seed})
    def nonzero(shape):
        return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape) * np.exp2(rng.integers(-8, 9, shape))
    mult, disc = nonzero((13, 5)), nonzero((7, 13, 5))
    exact = lambda got: (got.view(np.uint64) == (mult[None] * disc).view(np.uint64)).all()
    results = []

    pid = os.fork()
    if pid == 0:  # before the parent's first call: an engine of its own
        sys.exit(0 if exact(discount_app.multiply(mult, disc, progress=lambda p: None)) else 1)
    results.append(("before", wait(pid)))

    # Small calls run on the calling thread (and its helper threads, for more than one
    # chunk) and start no engine: a child forked after them computes as the parent does,
    # with helpers of its own.
    big_mult, big_disc = nonzero((1003, 5)), nonzero((9, 1003, 5))
    assert exact(discount_app.multiply(mult, disc))
    got = discount_app.multiply(big_mult, big_disc)
    assert (got.view(np.uint64) == (big_mult[None] * big_disc).view(np.uint64)).all()
    assert discount_app.last_report()["space"] == "calling thread"
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        got = discount_app.multiply(big_mult, big_disc)
        ok = (got.view(np.uint64) == (big_mult[None] * big_disc).view(np.uint64)).all() and exact(
            discount_app.multiply(mult, disc, progress=lambda p: None))
        sys.exit(0 if ok else 1)
    results.append(("after small calls", wait(pid)))

    # The engine starts with a call it runs (a progress callable sends any call there).
    assert exact(discount_app.multiply(mult, disc, progress=lambda p: None))
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:  # after it: every call refuses at once
        refused = []
        for name, call in (("multiply", lambda: discount_app.multiply(mult, disc)),
                           ("run", lambda: discount_app.run({{"input": {{"file": "in.h5"}}, "output": {{"file": "cv.h5"}}}})),
                           ("release_buffers", discount_app.release_buffers),
                           ("kept_buffer_bytes", discount_app.kept_buffer_bytes),
                           ("pinned_bytes", discount_app.pinned_bytes)):
            try:
                call()
            except discount_app.ForkError as e:
                refused.append(name)
                message = e.message
        print("refused", " ".join(refused), "|", message, flush=True)
        sys.exit(0)
    results.append(("after", wait(pid)))

    pid = os.fork()
    if pid == 0:  # after it, calling nothing: leaving runs the atexit handler alone
        sys.exit(0)
    results.append(("quiet", wait(pid)))
    assert exact(discount_app.multiply(mult, disc, progress=lambda p: None))
    assert exact(discount_app.multiply(mult, disc))
    print("results", results, flush=True)
""")


def test_children_forked_before_and_after_the_first_call(tmp_path, rng):
    package_root = os.path.dirname(os.path.dirname(discount_app.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p))
    script = SCRIPT.format(guard=HANG_GUARD, seed=int(rng.integers(1 << 31)))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=4 * HANG_GUARD)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "results [('before', 0), ('after small calls', 0), ('after', 0), ('quiet', 0)]", \
        done.stdout + done.stderr
    refused = next(line for line in lines if line.startswith("refused "))
    assert refused.startswith("refused multiply run release_buffers kept_buffer_bytes pinned_bytes | "), refused
    assert 'get_context("spawn")' in refused and "forkserver" in refused, refused


def multiply_in_worker(args):
    """A worker's job (module level, so spawn and forkserver workers can import it)."""
    mult, disc = args
    return discount_app.multiply(mult, disc)


def test_multiprocessing_fork_workers_refuse_at_once(rng):
    start_the_engine(rng)
    ctx = multiprocessing.get_context("fork")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with ctx.Pool(2) as pool:
            pending = pool.map_async(multiply_in_worker, [odd_case(rng) for _ in range(3)])
            with pytest.raises(discount_app.ForkError) as info:
                pending.get(timeout=HANG_GUARD)  # hang guard: a lost engine once hung here for ever
    assert info.value.exit_code == 69
    assert 'multiprocessing.get_context("spawn")' in info.value.message and "forkserver" in info.value.message


@pytest.mark.parametrize("method", ("spawn", "forkserver"))
def test_multiprocessing_spawn_and_forkserver_workers_compute_exactly(rng, method):
    start_the_engine(rng)  # the parent's engine runs: the case where fork workers refuse
    cases = [odd_case(rng, d, i, n) for d, i, n in ((7, 13, 5), (11, 1001, 3), (3, 4099, 7), (1, 5, 1))]
    with multiprocessing.get_context(method).Pool(2) as pool:
        results = pool.map_async(multiply_in_worker, cases).get(timeout=HANG_GUARD)
    for (mult, disc), got in zip(cases, results):
        assert_bit_exact(got, expected_cv(mult, disc), f"{method} worker, disc {disc.shape}")
