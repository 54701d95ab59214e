"""Small host calls on the calling thread (lib/embed/calling_thread): exact in every layout the
engine takes, sent to the engine only when they ask for it, and checked by the same rules.

Each case computes into an output poisoned with NaN and compares with NumPy bit for bit; the
report says which path ran, so a case cannot pass on the other path unnoticed."""
import threading

import numpy as np
import pytest

import discount_app
from conftest import assert_bit_exact, expected_cv, random_nonzero

ORDERS = [("date", "id", "num"), ("id", "date", "num"), ("num", "id", "date")]


def disc_in(rng, axes, dates, ids, nums, dtype=np.float64):
    sizes = {"date": dates, "id": ids, "num": nums}
    return random_nonzero(rng, tuple(sizes[a] for a in axes), dtype)


def poisoned(shape):
    return np.full(shape, np.nan)


def ran_on_calling_thread():
    return discount_app.last_report()["space"] == "calling thread"


@pytest.mark.parametrize("axes", ORDERS)
@pytest.mark.parametrize("dates,ids,nums", [(1, 1, 1), (7, 13, 5), (9, 20011, 5)])
def test_exact_in_every_order_and_size(rng, axes, dates, ids, nums):
    mult, disc = random_nonzero(rng, (ids, nums)), disc_in(rng, axes, dates, ids, nums)
    out = poisoned(disc.shape)
    assert discount_app.multiply(mult, disc, out=out, axes=axes) is out
    assert ran_on_calling_thread()
    assert_bit_exact(out, expected_cv(mult, disc, axes))


def test_float32_strided_fortran_and_in_place(rng):
    mult32 = random_nonzero(rng, (3001, 5), np.float32)
    disc32 = random_nonzero(rng, (6, 3001, 5), np.float32)
    assert_bit_exact(discount_app.multiply(mult32, disc32), expected_cv(mult32, disc32))
    assert ran_on_calling_thread()

    big = random_nonzero(rng, (6, 6002, 5))
    view = big[:, ::2]                                   # every other id
    mult = random_nonzero(rng, (3001, 10))[:, ::2]       # strided mult
    out = np.asfortranarray(poisoned(view.shape))
    discount_app.multiply(mult, view, out=out)
    assert ran_on_calling_thread()
    assert_bit_exact(out, expected_cv(mult, view))

    disc = random_nonzero(rng, (4, 3001, 5))
    want = expected_cv(mult, disc)
    discount_app.multiply(mult, disc, out=disc)          # in place
    assert ran_on_calling_thread()
    assert_bit_exact(disc, want)


def test_calls_that_ask_for_the_engine_get_it(rng, monkeypatch):
    mult, disc = random_nonzero(rng, (13, 5)), random_nonzero(rng, (7, 13, 5))
    want = expected_cv(mult, disc)
    cases = {
        "a progress callable": dict(progress=lambda fields: None),
        "a budget as a percentage": dict(host_budget="50%"),
        "a budget smaller than the arrays": dict(host_budget=1024),
    }
    for what, kwargs in cases.items():
        out = poisoned(disc.shape)
        discount_app.multiply(mult, disc, out=out, **kwargs)
        assert not ran_on_calling_thread(), what
        assert_bit_exact(out, want, what)
    # A budget the arrays fit in changes nothing: the same path as none.
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out=out, host_budget="64MiB")
    assert ran_on_calling_thread()
    assert_bit_exact(out, want)
    # Arrays over the threshold go to the engine's thread team.
    monkeypatch.setattr(discount_app, "_CALLER_MAX_BYTES", disc.nbytes)
    out = poisoned(disc.shape)
    discount_app.multiply(mult, disc, out=out)
    assert not ran_on_calling_thread()
    assert_bit_exact(out, want)


def test_arguments_are_checked_on_the_calling_thread_path(rng):
    mult, disc = random_nonzero(rng, (13, 5)), random_nonzero(rng, (7, 13, 5))
    bad = {"chunk_axis": "num", "parallel_dims": ("date", "date"), "host_budget": "lots", "space": "gpu"}
    for name, value in bad.items():
        with pytest.raises(discount_app.ConfigError) as caught:
            discount_app.multiply(mult, disc, **{name: value})
        assert caught.value.exit_code == 78 and caught.value.message.startswith(name + ":"), caught.value.message
    # Accepted values are remembered; a value refused once is refused again.
    with pytest.raises(discount_app.ConfigError):
        discount_app.multiply(mult, disc, chunk_axis="num")
    assert_bit_exact(discount_app.multiply(mult, disc, chunk_axis="id", parallel_dims=["id", "num"]),
                     expected_cv(mult, disc))


def test_threads_call_at_once(rng):
    """Four threads, small calls of one chunk and of many, none waiting for the others' lock."""
    cases = [(random_nonzero(rng, (ids, 5)), random_nonzero(rng, (3, ids, 5))) for ids in (13, 20011, 7, 30011)]
    failures = []
    start = threading.Barrier(len(cases))

    def work(mult, disc):
        start.wait()
        for _ in range(20):
            out = poisoned(disc.shape)
            discount_app.multiply(mult, disc, out=out)
            if not (out.view(np.uint64) == expected_cv(mult, disc).view(np.uint64)).all():
                failures.append(disc.shape)

    threads = [threading.Thread(target=work, args=case) for case in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def unaligned(values):
    """A copy of values whose memory starts one byte past an 8-byte boundary (as NumPy arrays rebuilt
    from pickle protocol 5 buffers may), writable."""
    buf = bytearray(values.nbytes + 1)
    a = np.frombuffer(buf, dtype=values.dtype, offset=1, count=values.size).reshape(values.shape)
    a[...] = values
    assert not a.flags.aligned
    return a


@pytest.mark.parametrize("ids", [13, 20011])  # the calling thread; many chunks
def test_unaligned_arrays_computed_through_aligned_copies(rng, ids):
    mult, disc = random_nonzero(rng, (ids, 5)), random_nonzero(rng, (3, ids, 5))
    want = expected_cv(mult, disc)
    out = unaligned(np.full(disc.shape, np.nan))
    assert discount_app.multiply(unaligned(mult), unaligned(disc), out=out) is out
    assert_bit_exact(out, want)
    in_place = unaligned(disc)
    discount_app.multiply(mult, in_place, out=in_place)
    assert_bit_exact(in_place, want)
    out = unaligned(np.full(disc.shape, np.nan))
    discount_app.multiply(mult, unaligned(disc), out=out, progress=lambda fields: None)  # the engine's path
    assert_bit_exact(out, want)
