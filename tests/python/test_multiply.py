"""discount_app.multiply on arrays in memory: every result bit-exact against NumPy."""
import gc
import itertools
import json
import os
import re
import subprocess
import threading

import numpy as np
import pytest

import discount_app
from conftest import assert_bit_exact, expected_cv, random_nonzero, sigint_when, wait_for

PERMS = list(itertools.permutations(("date", "id", "num")))
SPACES = ("device", "host")


def case(rng, dates=7, ids=13, nums=5, axes=("date", "id", "num"), dtype=np.float64):
    extent = {"date": dates, "id": ids, "num": nums}
    mult = random_nonzero(rng, (ids, nums), dtype)
    disc = random_nonzero(rng, tuple(extent[a] for a in axes), dtype)
    return mult, disc


def poisoned(shape):
    return np.full(shape, np.nan)


@pytest.mark.parametrize("space", SPACES)
def test_default_call_returns_a_new_array(rng, space):
    mult, disc = case(rng)
    got = discount_app.multiply(mult, disc, space=space)
    assert got.dtype == np.float64 and got.shape == disc.shape
    assert_bit_exact(got, expected_cv(mult, disc))


@pytest.mark.parametrize("space", SPACES)
def test_out_is_filled_and_returned(rng, space):
    mult, disc = case(rng, 9, 31, 3)
    out = poisoned(disc.shape)
    assert discount_app.multiply(mult, disc, out, space=space) is out
    assert_bit_exact(out, expected_cv(mult, disc))


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("chunk_axis", ("date", "id"))
def test_memmap_larger_than_the_budgets_streams_in_many_slabs(rng, tmp_path, space, chunk_axis):
    dates, ids, nums = 23, 1201, 5  # 1.1 MB of disc against 256 KiB budgets
    mult = random_nonzero(rng, (ids, nums))
    disc = np.lib.format.open_memmap(tmp_path / "disc.npy", mode="w+", dtype=np.float64, shape=(dates, ids, nums))
    disc[:] = random_nonzero(rng, disc.shape)
    disc.flush()
    disc = np.load(tmp_path / "disc.npy", mmap_mode="r")
    out = np.lib.format.open_memmap(tmp_path / "out.npy", mode="w+", dtype=np.float64, shape=disc.shape)
    out[:] = np.nan
    discount_app.multiply(mult, disc, out, space=space, host_budget="256KiB", device_budget="256KiB",
                          chunk_axis=chunk_axis)
    report = discount_app.last_report()
    assert report["slabs"]["total"] >= 8, report["plan"]
    assert report["slabs"]["run"] == report["slabs"]["total"]
    out.flush()
    assert_bit_exact(np.load(tmp_path / "out.npy"), expected_cv(mult, np.asarray(disc)))


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("dims", [d for n in (1, 2, 3) for d in itertools.combinations(("date", "id", "num"), n)])
def test_each_slicing(rng, space, dims):
    mult, disc = case(rng, 5, 301, 3)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, space=space, parallel_dims=dims, host_budget="32KiB",
                          device_budget="32KiB")
    assert discount_app.last_report()["slabs"]["total"] > 1
    assert_bit_exact(out, expected_cv(mult, disc))


@pytest.mark.parametrize("axes", PERMS)
def test_each_axis_order(rng, axes):
    mult, disc = case(rng, 6, 11, 3, axes=axes)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, axes=axes, host_budget="32KiB", device_budget="32KiB")
    assert_bit_exact(out, expected_cv(mult, disc, axes))


@pytest.mark.parametrize("space", SPACES)
def test_non_contiguous_views_in_and_out(rng, space):
    mult_base = random_nonzero(rng, (2 * 19, 7))
    disc_base = random_nonzero(rng, (9, 19, 2 * 7))
    mult = mult_base[::2, ::-1]                   # a stride of 2 rows, reversed columns
    disc = disc_base[::-1, :, ::2]                # reversed dates, every other num
    out_base = np.full((9, 19, 3 * 7), np.nan)
    out = out_base[:, :, ::3]
    discount_app.multiply(mult, disc, out, space=space, host_budget="16KiB", device_budget="16KiB")
    assert_bit_exact(out, expected_cv(mult, disc))
    untouched = np.delete(out_base, np.s_[::3], axis=2)
    assert np.isnan(untouched).all(), "elements of out's base outside the view were written"


def test_transposed_view_with_matching_axes(rng):
    mult, disc_canon = case(rng, 8, 15, 3)
    disc = disc_canon.transpose(1, 0, 2)          # [i][d][k], a view
    got = discount_app.multiply(mult, disc, axes=("id", "date", "num"))
    assert_bit_exact(got, expected_cv(mult, disc, ("id", "date", "num")))


@pytest.mark.parametrize("axes", [("date", "id", "num"), ("id", "date", "num"), ("date", "num", "id")])
def test_host_space_runs_the_kernel_on_the_arrays(rng, axes):
    # Contiguous float64 arrays in host space take the one-pass path: the
    # kernel reads disc and writes out, slab by slab along the outermost axis
    # (ids outermost: each slab reads its own multBy rows).
    mult, disc = case(rng, 9, 37, 5, axes=axes)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, axes=axes, space="host", host_budget="16KiB")
    report = discount_app.last_report()
    assert "direct" in report["output"], report["output"]
    assert report["kernel"] == "mdrange", report["kernel"]  # no read for kernel: fused to ride on
    assert report["slabs"]["run"] == report["slabs"]["total"] > 1
    assert [s["name"] for s in report["stages"]] == ["kernel"]
    assert_bit_exact(out, expected_cv(mult, disc, axes))


def test_auto_space_computes_numpy_arrays_on_the_host(rng):
    # space="auto" (the default): NumPy arrays take host space and its one-pass
    # path, on a CUDA build too (the report names the execution space).
    mult, disc = case(rng, 9, 37, 5)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, space="host", host_budget="16KiB")
    host_space = discount_app.last_report()["space"]
    out[...] = np.nan
    discount_app.multiply(mult, disc, out, host_budget="16KiB")
    report = discount_app.last_report()
    assert report["space"] == host_space and "direct" in report["output"], report
    assert_bit_exact(out, expected_cv(mult, disc))


def test_host_space_with_another_chunk_axis_keeps_the_pipeline(rng):
    mult, disc = case(rng, 9, 37, 5)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, space="host", chunk_axis="id", host_budget="16KiB")
    report = discount_app.last_report()
    assert "direct" not in report["output"] and report["slabs"]["total"] > 1
    # The pipeline in host memory with the default slicing: the reader's
    # threads multiply each piece as they copy it (compute.kernel: auto).
    assert report["kernel"] == "fused" and report["slicing"].startswith("fused:"), report
    assert_bit_exact(out, expected_cv(mult, disc))


def test_in_place_out_is_disc(rng):
    mult, disc = case(rng, 7, 29, 5)
    expected = expected_cv(mult, disc)
    discount_app.multiply(mult, disc, disc, host_budget="16KiB", device_budget="16KiB")
    assert_bit_exact(disc, expected)


@pytest.mark.parametrize("mult_type,disc_type", [(np.float32, np.float32), (np.float32, np.float64),
                                                 (np.float64, np.float32)])
def test_float32_inputs_are_widened_exactly(rng, mult_type, disc_type):
    mult, _ = case(rng, 5, 13, 5, dtype=mult_type)
    _, disc = case(rng, 5, 13, 5, dtype=disc_type)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out)
    assert_bit_exact(out, mult.astype(np.float64)[None] * disc.astype(np.float64))


def test_nan_and_inf_propagate_as_in_numpy(rng):
    mult, disc = case(rng)
    disc[1, 2, 3] = np.nan
    mult[4, 0] = np.inf
    got = discount_app.multiply(mult, disc)
    exp = expected_cv(mult, disc)
    assert np.array_equal(np.isnan(got), np.isnan(exp))
    ok = ~np.isnan(exp)
    assert_bit_exact(got[ok], exp[ok])


@pytest.mark.parametrize("bad,exc,words", [
    (dict(mult=np.ones((13, 5), np.int64)), TypeError, ["mult", "astype(np.float64)"]),
    (dict(disc=np.ones((7, 13, 5), np.float16)), TypeError, ["disc", "float16"]),
    (dict(out=np.empty((7, 13, 5), np.float32)), TypeError, ["out", "float64"]),
    (dict(out=np.empty((7, 13, 4))), ValueError, ["out", "shape"]),
    (dict(mult=np.ones((12, 5))), ValueError, ["mult", "(ids, nums)"]),
    (dict(disc=np.ones((13, 5))), ValueError, ["disc", "3-D"]),
    (dict(axes=("date", "id", "id")), ValueError, ["axes"]),
    (dict(out="readonly"), ValueError, ["out", "read-only"]),
    (dict(out="broadcast"), ValueError, ["out", "broadcast"]),
    (dict(out="overlap"), ValueError, ["out", "overlaps"]),
])
def test_argument_errors_name_the_array_and_the_fix(rng, bad, exc, words):
    mult, disc = case(rng)
    args = dict(mult=mult, disc=disc, out=None)
    args.update(bad)
    special = args["out"] if isinstance(args["out"], str) else None
    if special == "readonly":
        args["out"] = np.empty(disc.shape)
        args["out"].setflags(write=False)
    elif special == "broadcast":
        args["out"] = np.lib.stride_tricks.as_strided(np.empty((1, 13, 5)), disc.shape, (0, 40, 8))
    elif special == "overlap":
        args["out"] = disc[::-1]
    axes = args.pop("axes", ("date", "id", "num"))
    with pytest.raises(exc) as info:
        discount_app.multiply(args["mult"], args["disc"], args["out"], axes=axes)
    for w in words:
        assert w in str(info.value), str(info.value)


def test_engine_errors_carry_the_cli_message_and_exit_code(rng):
    mult, disc = case(rng, 5, 400, 5)
    with pytest.raises(discount_app.ConfigError) as info:
        discount_app.multiply(mult, disc, host_budget="64", space="host")
    assert info.value.exit_code == 78 and "memory.host_budget" in info.value.message
    with pytest.raises(discount_app.ConfigError) as info:
        discount_app.multiply(mult, disc, host_budget=64, space="host")  # an int: bytes, as "64" is
    assert info.value.exit_code == 78 and "memory.host_budget" in info.value.message


@pytest.mark.parametrize("budget", [65536, "64KiB", "65536", "64 KiB"], ids=["int", "64KiB", "str", "64 KiB"])
def test_an_int_budget_is_bytes(rng, budget):
    mult, disc = case(rng, 9, 301, 5)  # a date is 11.8 KiB: 64 KiB cuts several slabs
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, host_budget=65536, device_budget=65536, chunk_axis="date")
    by_int = discount_app.last_report()
    out2 = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out2, host_budget=budget, device_budget=budget, chunk_axis="date")
    assert by_int["slabs"]["total"] > 1 and by_int["plan"] == discount_app.last_report()["plan"]
    assert_bit_exact(out, expected_cv(mult, disc))
    assert_bit_exact(out2, expected_cv(mult, disc))


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("budget", [67108864, "256MiB", "2 GiB", "80%", 10 ** 9])
def test_budgets_take_bytes_sizes_and_percentages(rng, space, budget):
    mult, disc = case(rng, 7, 1001, 3)
    out = poisoned(disc.shape)
    assert discount_app.multiply(mult, disc, out, space=space, host_budget=budget, device_budget=budget) is out
    assert_bit_exact(out, expected_cv(mult, disc))


# A keyword argument with a value the job file refuses, and that value as the job file writes it.
REFUSED_ARGUMENTS = [
    ("chunk_axis", "num", "memory:\n  chunk_axis: num"),
    ("chunk_axis", 1, "memory:\n  chunk_axis: 1"),
    ("parallel_dims", ("date", "date"), "compute:\n  parallel_dims: [date, date]"),
    ("parallel_dims", ["id", "num", "id"], "compute:\n  parallel_dims: [id, num, id]"),
    ("parallel_dims", ("date", "when"), "compute:\n  parallel_dims: [date, when]"),
    ("parallel_dims", (), "compute:\n  parallel_dims: []"),
    ("parallel_dims", "date", "compute:\n  parallel_dims: date"),
    ("host_budget", "lots", "memory:\n  host_budget: lots"),
    ("host_budget", "120%", "memory:\n  host_budget: 120%"),
    ("host_budget", -5, "memory:\n  host_budget: -5"),
    ("device_budget", "5 parsecs", "memory:\n  device_budget: 5 parsecs"),
    ("device_budget", 0, "memory:\n  device_budget: 0"),
    ("space", "gpu", "compute:\n  space: gpu"),
]


@pytest.mark.parametrize("name,value,yaml", REFUSED_ARGUMENTS,
                         ids=[f"{n}={v!r}" for n, v, _ in REFUSED_ARGUMENTS])
def test_keyword_arguments_follow_the_yaml_rules_and_messages(rng, tmp_path, name, value, yaml):
    mult, disc = case(rng)
    out = poisoned(disc.shape)
    with pytest.raises(discount_app.ConfigError) as info:
        discount_app.multiply(mult, disc, out, **{name: value})
    message = info.value.message
    assert info.value.exit_code == 78
    key = yaml.split(":")[0] + "." + name
    assert message.startswith(f"{name}: '{key}'"), message  # the argument, then the YAML's message
    assert np.isnan(out).all()  # refused before any work
    # The job file's own message for the same value (the CLI's, after its file:line:col).
    app = os.environ.get("DISCOUNT_APP")
    if app and os.access(app, os.X_OK):
        job = tmp_path / "job.yaml"
        job.write_text(f"input: {{file: in.h5}}\noutput: {{file: cv.h5}}\n{yaml}\n")
        done = subprocess.run([app, "config", str(job)], capture_output=True, text=True)
        assert done.returncode == 78, done.stderr
        cli = re.sub(r"^discount_app: error: .*?:\d+:\d+: ", "", done.stderr.strip())
        assert message.startswith(f"{name}: {cli}"), (message, done.stderr)


def test_keyboard_interrupt_from_progress_stops_after_the_slabs_in_flight(rng):
    mult, disc = case(rng, 31, 257, 5)
    out = poisoned(disc.shape)
    seen = []

    def progress(p):
        seen.append(p)
        if p["written"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(discount_app.Interrupted) as info:
        discount_app.multiply(mult, disc, out, host_budget="64KiB", chunk_axis="date", progress=progress)
    assert isinstance(info.value, KeyboardInterrupt) and info.value.exit_code == 75
    assert "interrupted" in info.value.message
    done = ~np.isnan(out).all(axis=(1, 2))          # dates whose slab was written
    assert 2 <= done.sum() < out.shape[0], done
    assert_bit_exact(out[done], expected_cv(mult, disc)[done])
    assert np.isnan(out[~done]).all()
    assert {"written", "total", "gb_out", "gb_per_s", "eta_seconds"} <= set(seen[0])


def test_sigint_while_held_stops_the_call(rng, hold):
    mult, disc = case(rng, 29, 201, 5)
    out = poisoned(disc.shape)
    h = hold(2)
    with sigint_when("slab 2 held", lambda: h.reached(2), lambda: h.release(2)):
        with pytest.raises(discount_app.Interrupted):
            discount_app.multiply(mult, disc, out, host_budget="64KiB", chunk_axis="date")
    done = ~np.isnan(out).all(axis=(1, 2))
    assert 2 <= done.sum() < out.shape[0]
    assert_bit_exact(out[done], expected_cv(mult, disc)[done])
    # The module works on after an interrupt.
    h.release(2)
    discount_app.multiply(mult, disc, out, host_budget="64KiB")
    assert_bit_exact(out, expected_cv(mult, disc))


def test_calls_from_several_threads_are_serialised(rng):
    cases = [case(rng, 9, 101 + 2 * n, 5) for n in range(4)]
    outs = [poisoned(c[1].shape) for c in cases]
    errors = []

    def work(n):
        try:
            for _ in range(3):
                discount_app.multiply(cases[n][0], cases[n][1], outs[n], host_budget="64KiB")
        except BaseException as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for (mult, disc), out in zip(cases, outs):
        assert_bit_exact(out, expected_cv(mult, disc))


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_twenty_calls_keep_resident_memory_flat(rng):
    mult, disc = case(rng, 40, 2001, 5)   # 3.2 MB in, 3.2 MB out
    out = poisoned(disc.shape)
    for _ in range(3):                    # warm: Kokkos, allocator pools
        discount_app.multiply(mult, disc, out, host_budget="1MiB")
    before = rss_bytes()
    for _ in range(20):
        out[:] = np.nan
        discount_app.multiply(mult, disc, out, host_budget="1MiB")
    grown = rss_bytes() - before
    assert_bit_exact(out, expected_cv(mult, disc))
    # A leak of one slab ring per call would be 20 x 1 MiB; allow noise well below that.
    assert grown < 16 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB over 20 calls"


@pytest.mark.parametrize("space", SPACES)
def test_a_second_call_takes_the_staging_buffers_the_first_kept(rng, space, monkeypatch):
    # float32 disc goes through the pipeline in either space: a staging ring
    # of 20 MB slab buffers in host memory, or, on a GPU, 1 MiB pieces whose
    # pinned buffers are one block of every thread's; both are large enough
    # to keep (16 MiB and up). Small host calls run on the calling thread,
    # with no staging: these go to the engine.
    monkeypatch.setattr(discount_app, "_CALLER_MAX_BYTES", 0)
    mult, disc = case(rng, 3, 500_001, 5, dtype=np.float32)
    discount_app.release_buffers()
    reports = []
    for _ in range(2):
        out = poisoned(disc.shape)
        discount_app.multiply(mult, disc, out, space=space)
        assert_bit_exact(out, expected_cv(mult, disc))
        reports.append(discount_app.last_report())
    first, second = reports
    assert first["staging_reused_bytes"] == 0, first["plan"]["text"]
    assert second["staging_reused_bytes"] > 0, second["plan"]["text"]
    if second["staging_bytes"] > 0:  # a ring: all of it taken again
        assert second["staging_reused_bytes"] == second["staging_bytes"]
    kept = discount_app.kept_buffer_bytes()
    assert kept >= second["staging_reused_bytes"]
    assert discount_app.release_buffers() == kept
    assert discount_app.kept_buffer_bytes() == 0
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out, space=space)
    assert_bit_exact(out, expected_cv(mult, disc))
    assert discount_app.last_report()["staging_reused_bytes"] == 0


def test_arrays_pinned_in_place_from_their_second_call(rng):
    # On a GPU build, disc and out (float64, C-contiguous, 64 MiB or more,
    # their own memory) are page-locked in place by the second call that
    # passes them; the GPU then copies their pieces where they lie. A freed
    # array is unpinned. Elsewhere nothing is pinned. Every result bit-exact.
    gpu = discount_app._core.device_memory_is_separate()
    discount_app.release_buffers()
    mult, disc = case(rng, 7, 240_007, 5)  # 67.2 MB: just over 64 MiB
    expected = expected_cv(mult, disc)
    out = poisoned(disc.shape)

    def call(o, m=mult, d=disc, **kw):
        discount_app.multiply(m, d, o, space="device", **kw)
        return discount_app.last_report()["input"]["text"]

    assert "pinned" not in call(out)
    assert_bit_exact(out, expected, "first call")
    assert discount_app.pinned_bytes() == 0
    out[:] = np.nan
    text = call(out)
    assert_bit_exact(out, expected, "second call")
    assert discount_app.pinned_bytes() == (disc.nbytes + out.nbytes if gpu else 0)
    assert ("pinned in place: disc, out" in text) == gpu, text
    # Views of pinned arrays: their contiguous pieces still go in place.
    out[:] = np.nan
    text = call(out[2:5], d=disc[2:5])
    assert_bit_exact(out[2:5], expected[2:5], "views")
    assert np.isnan(out[:2]).all() and np.isnan(out[5:]).all(), "wrote outside the view"
    assert ("pinned in place: disc, out" in text) == gpu, text
    # A transposed view cannot go in place: staged, and still exact.
    out_t = poisoned(disc.shape[::-1]).T
    call(out_t)
    assert_bit_exact(out_t, expected, "transposed out")
    del out, out_t
    gc.collect()
    assert discount_app.pinned_bytes() == (disc.nbytes if gpu else 0), "a freed array stays pinned"
    # pin=False pins nothing more; pin=True pins by the first call.
    other = poisoned(disc.shape)
    call(other, pin=False)
    call(other, pin=False)
    assert discount_app.pinned_bytes() == (disc.nbytes if gpu else 0)
    fresh = poisoned(disc.shape)
    text = call(fresh, pin=True)
    assert_bit_exact(fresh, expected, "pin=True")
    assert ("pinned in place: disc, out" in text) == gpu, text
    pinned = discount_app.pinned_bytes()
    assert pinned == (disc.nbytes + fresh.nbytes if gpu else 0)
    assert discount_app.release_buffers() >= pinned
    assert discount_app.pinned_bytes() == 0
    fresh[:] = np.nan
    assert "pinned" not in call(fresh), "release_buffers: pinned again only from the second call"
    assert_bit_exact(fresh, expected, "after release_buffers")
    # Calls through the staging ring (chunk_axis="id" cuts id slabs) gain
    # nothing from a pin: the arrays they pass stay as they are.
    ring_disc, ring_out = disc.copy(), poisoned(disc.shape)
    for k in range(3):
        ring_out[:] = np.nan
        assert "pinned" not in call(ring_out, d=ring_disc, chunk_axis="id")
        if gpu:  # a host build multiplies on its I/O threads' pieces (fused), not on a GPU
            assert discount_app.last_report()["kernel_on_pieces"] is False
        assert_bit_exact(ring_out, expected, f"through the ring, call {k + 1}")
    assert discount_app.pinned_bytes() == 0


class _StandInPins:
    """The engine's pin calls as a stand-in records them, around the real engine:
    the package's pinning rules checked on any build (a build without a GPU pins nothing)."""

    def __init__(self, core):
        self.core, self.pinned, self.unpinned, self.flags = core, {}, [], []
        self.on_pieces = True  # what the stand-in's reports say of the GPU path taken

    def pin(self, address, nbytes):
        self.pinned[address] = nbytes
        return True

    def unpin(self, address):
        self.unpinned.append(address)
        return self.pinned.pop(address, 0)

    def pinned_bytes(self):
        return sum(self.pinned.values())

    def multiply(self, mdesc, ddesc, odesc, *rest):
        # What the package tells the engine it pinned (nothing said: not a host array on a GPU).
        self.flags.append((ddesc[4], odesc[4]) if len(ddesc) > 4 else (None, None))
        code, message, report, keyboard = self.core.multiply(mdesc, ddesc[:4], odesc[:4], *rest)
        if report:  # a build without a GPU ran it on the host: say the GPU's path as the case needs
            report = json.loads(report)
            report["kernel_on_pieces"] = self.on_pieces
            report = json.dumps(report)
        return code, message, report, keyboard

    def __getattr__(self, name):
        return getattr(self.core, name)


def test_pinning_rules_with_a_stand_in_engine(rng, monkeypatch):
    stand_in = _StandInPins(discount_app._core)
    monkeypatch.setattr(discount_app, "_core", stand_in)
    monkeypatch.setattr(discount_app, "_GPU", True)
    monkeypatch.setattr(discount_app, "_SEEN", {})
    mult, disc = case(rng, 7, 240_007, 5)
    expected = expected_cv(mult, disc)
    out = poisoned(disc.shape)
    small_m, small_d = case(rng)
    for k in range(3):
        out[:] = np.nan
        discount_app.multiply(mult, disc, out, space="device")
        assert_bit_exact(out, expected, f"call {k + 1}")
        discount_app.multiply(small_m, small_d, space="device")  # under 64 MiB: never pinned
    assert stand_in.flags[0::2] == [(False, False), (True, True), (True, True)], "pinned from the second call"
    assert all(f == (False, False) for f in stand_in.flags[1::2])
    assert stand_in.pinned == {disc.__array_interface__["data"][0]: disc.nbytes,
                               out.__array_interface__["data"][0]: out.nbytes}
    # A view of a pinned array is pinned (its owner is); a host-space call pins nothing.
    discount_app.multiply(mult, disc[1:3], out[1:3], space="device")
    assert stand_in.flags[-1] == (True, True)
    discount_app.multiply(mult, disc, out, space="host")
    assert stand_in.flags[-1] == (None, None) and len(stand_in.pinned) == 2
    # Freed: unpinned before NumPy frees the memory.
    address = out.__array_interface__["data"][0]
    del out
    gc.collect()
    assert stand_in.unpinned == [address] and stand_in.pinned_bytes() == disc.nbytes
    # A memmap, float32 and a transposed view are not pinned; pin=False pins nothing.
    fresh = poisoned(disc.shape)
    discount_app.multiply(mult, disc, fresh, space="device", pin=False)
    discount_app.multiply(mult, disc, fresh, space="device", pin=False)
    assert stand_in.flags[-1] == (True, False)
    discount_app.multiply(mult, disc.astype(np.float32), fresh.T.copy().T, space="device", pin=True)
    discount_app.multiply(mult, disc.astype(np.float32), fresh.T.copy().T, space="device", pin=True)
    assert stand_in.flags[-1] == (False, False)
    assert stand_in.pinned_bytes() == disc.nbytes
    # pin=True pins by the first call. Its memory cannot move under the pin:
    # NumPy refuses to resize an array that has weak references.
    discount_app.multiply(mult, disc, fresh, space="device", pin=True)
    assert stand_in.flags[-1] == (True, True)
    with pytest.raises(ValueError):
        fresh.resize((8,) + disc.shape[1:], refcheck=False)
    # Calls on a view of part of an array do not pin it by default (pinning
    # would fault in pages the view never touches); pin=True pins its whole array.
    big_disc = random_nonzero(rng, (9,) + disc.shape[1:])
    big_out = poisoned(big_disc.shape)
    for _ in range(2):
        discount_app.multiply(mult, big_disc[:8], big_out[:8], space="device")
    assert stand_in.flags[-1] == (False, False)
    assert_bit_exact(big_out[:8], expected_cv(mult, big_disc[:8]), "a view")
    discount_app.multiply(mult, big_disc[:8], big_out[:8], space="device", pin=True)
    assert stand_in.flags[-1] == (True, True)
    assert stand_in.pinned[big_out.__array_interface__["data"][0]] == big_out.nbytes
    # Calls through the staging ring (small budgets, chunk_axis="id") gain
    # nothing from a pin: arrays they pass are not pinned by default.
    stand_in.on_pieces = False
    ring_disc, ring_out = random_nonzero(rng, disc.shape), poisoned(disc.shape)
    for _ in range(3):
        discount_app.multiply(mult, ring_disc, ring_out, space="device")
        assert stand_in.flags[-1] == (False, False)
    assert_bit_exact(ring_out, expected_cv(mult, ring_disc), "through the ring")
    stand_in.on_pieces = True  # the next call runs on pieces: the one after pins
    discount_app.multiply(mult, ring_disc, ring_out, space="device")
    assert stand_in.flags[-1] == (False, False)
    discount_app.multiply(mult, ring_disc, ring_out, space="device")
    assert stand_in.flags[-1] == (True, True)
    # The pinning cap: nothing past 3/4 of the RAM.
    monkeypatch.setattr(discount_app, "_PIN_RAM_SHARE", 0.0)
    other = poisoned(disc.shape)
    discount_app.multiply(mult, disc, other, space="device", pin=True)
    assert stand_in.flags[-1] == (True, False)


def test_empty_arrays(rng):
    mult = np.empty((0, 5))
    disc = np.empty((3, 0, 5))
    assert discount_app.multiply(mult, disc).shape == (3, 0, 5)


def device_library():
    for name in ("cupy", "torch"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        try:
            if name == "cupy" and module.cuda.runtime.getDeviceCount() > 0:
                return name, module
            if name == "torch" and module.cuda.is_available():
                return name, module
        except Exception:
            continue
    return None, None


def test_device_arrays_without_a_host_round_trip(rng):
    name, lib = device_library()
    if name is None:
        pytest.skip("no CuPy or PyTorch with a GPU here")
    if not discount_app._core.device_memory_is_separate():
        pytest.skip("this build has no separate device memory (not a CUDA build)")
    mult, disc = case(rng, 11, 1001, 5)
    if name == "cupy":
        m, d = lib.asarray(mult), lib.asarray(disc)
        o = lib.full(disc.shape, lib.nan)
        discount_app.multiply(m, d, o)
        got = lib.asnumpy(o)
    else:
        m, d = lib.as_tensor(mult, device="cuda"), lib.as_tensor(disc, device="cuda")
        o = lib.full(disc.shape, float("nan"), dtype=lib.float64, device="cuda")
        discount_app.multiply(m, d, o)
        got = o.cpu().numpy()
    assert_bit_exact(got, expected_cv(mult, disc))
    with pytest.raises(ValueError):
        discount_app.multiply(mult, d, o)  # host and device mixed


def test_a_permuted_discount_names_the_axes_that_fit():
    """disc stored as (ids, dates, nums): the error suggests the axes= that fits instead of blaming mult."""
    rng = np.random.default_rng(41)
    mult = random_nonzero(rng, (37, 3))
    disc = random_nonzero(rng, (37, 11, 3))  # (ids, dates, nums)
    with pytest.raises(ValueError) as caught:
        discount_app.multiply(mult, disc)
    message = str(caught.value)
    assert message.startswith("axes:") and "axes=('id', 'date', 'num')" in message, message
    out = discount_app.multiply(mult, disc, axes=("id", "date", "num"))
    assert_bit_exact(out, expected_cv(mult, disc, axes=("id", "date", "num")))
    # a mult that fits no order is still mult's own error
    with pytest.raises(ValueError, match=r"^mult: shape \(36, 3\)"):
        discount_app.multiply(random_nonzero(rng, (36, 3)), disc)
