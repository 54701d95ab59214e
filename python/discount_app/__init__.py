"""discount_app from Python: cv[d][i][k] = multBy[i][k] * discount[d][i][k].

Two entry points, both running the C++ engine in this process:

* ``run(config)`` runs a job described by a YAML file (or a dict of the same
  structure) exactly as ``discount_app run`` does, and returns its report.
* ``multiply(mult, disc)`` multiplies arrays already in memory, streamed in
  slabs through the same pipeline (budgets, staging buffers, overlap, kernels).

Every failure raises a ``discount_app.Error`` subclass carrying the CLI's
message (``.message``) and exit code (``.exit_code``, docs/errors.md).
Calls are serialised: one job runs at a time in a process; a second thread's
call waits for the first. Kokkos starts at the first call and ends at exit.
A process forked after its parent's first call cannot use the engine and
raises ``ForkError`` at once: start workers with
``multiprocessing.get_context("spawn")`` or ``"forkserver"``.
See docs/python.md.
"""
from __future__ import annotations

import atexit
import functools
import itertools
import json
import os
import threading
import weakref
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core

__all__ = [
    "run", "multiply", "last_report", "release_buffers", "kept_buffer_bytes", "pinned_bytes", "version", "Error", "UsageError", "DataError", "InputMissingError",
    "InternalError", "CannotCreateError", "IOFailure", "Interrupted", "ConfigError", "ForkError",
]

ProgressCallback = Callable[[Dict[str, float]], Any]


class Error(Exception):
    """A discount_app failure: ``message`` is the CLI's error line, ``exit_code`` its exit code."""

    exit_code: int = 70

    def __init__(self, message: str, exit_code: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(Error):
    """Exit code 64: a wrong use (device arrays in a build without a GPU, a call that bypassed the lock, ...)."""
    exit_code = 64


class DataError(Error):
    """Exit code 65: input data invalid (shapes, dtype, NaN/Inf under nonfinite: error)."""
    exit_code = 65


class InputMissingError(Error):
    """Exit code 66: config, input file or dataset not found."""
    exit_code = 66


class InternalError(Error):
    """Exit code 70: a bug; please report it."""
    exit_code = 70


class CannotCreateError(Error):
    """Exit code 73: the output cannot be created."""
    exit_code = 73


class IOFailure(Error):
    """Exit code 74: an I/O error during the run; running again resumes."""
    exit_code = 74


class Interrupted(Error, KeyboardInterrupt):
    """Exit code 75: stopped (Ctrl-C) after the slabs in flight.

    For ``run()`` the finished slabs are kept in ``<out>.partial``: call
    ``run()`` again with the same config to resume. Also a KeyboardInterrupt,
    so ``except KeyboardInterrupt`` still sees it.
    """
    exit_code = 75


class ConfigError(Error):
    """Exit code 78: the configuration is invalid: a key or value of ``run``'s config, or a
    ``multiply`` keyword argument the YAML's rules refuse (the message starts with its name),
    or a budget too small for one slab."""
    exit_code = 78


class ForkError(Error):
    """Exit code 69: this process was forked after its parent had used the engine.

    Kokkos, its threads and a GPU context do not survive ``fork()`` and Kokkos
    cannot start twice in one process, so every call refuses at once instead
    of hanging. Start worker processes with ``multiprocessing.get_context("spawn")``
    or ``get_context("forkserver")`` (``ProcessPoolExecutor(mp_context=...)``),
    or fork them before the parent's first call.
    """
    exit_code = 69


_BY_CODE = {c.exit_code: c for c in (UsageError, DataError, InputMissingError, InternalError, CannotCreateError,
                                     IOFailure, Interrupted, ConfigError, ForkError)}

# One job at a time per process: a second thread waits here (the engine
# itself refuses a call that bypasses the lock).
_LOCK = threading.Lock()
_LAST_REPORT: Optional[Dict[str, Any]] = None


def _new_lock_in_child() -> None:
    # A thread that held the lock at fork() does not exist in the child.
    global _LOCK
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def _refuse_after_fork() -> None:
    """Raises ForkError in a child forked after the parent's engine had started."""
    lost = _core.engine_lost()
    if lost is not None:
        _raise_for(*lost)


def _raise_for(code: int, message: str) -> None:
    raise _BY_CODE.get(code, Error)(message, code)


def _finish(result: tuple) -> Dict[str, Any]:
    global _LAST_REPORT, _CALLER_CALL
    code, message, report, _keyboard = result
    if code != 0:
        _raise_for(code, message)
    _CALLER_CALL = None
    _LAST_REPORT = json.loads(report) if report else {}
    return _LAST_REPORT


def run(config: Union[str, os.PathLike, Mapping[str, Any]], *,
        progress: Optional[ProgressCallback] = None) -> Dict[str, Any]:
    """Run a job in this process exactly as ``discount_app run CONFIG`` does.

    config: the path of a YAML job file (its relative paths resolve against the
        file's folder, as for the CLI), or a dict with the YAML's structure,
        e.g. ``{"input": {"file": "in.h5"}, "output": {"file": "cv.h5"}}``; a
        dict's relative paths resolve against the current directory. A dict is
        never written out as YAML: its keys must be the YAML's names (str) and
        its values str, int, float, bool, None, lists or dicts, each taken as
        one value, checked by the YAML's rules (ConfigError otherwise).
    progress: called after every slab, on the calling thread, with a dict of
        the progress line's figures: ``written``, ``total`` (slabs of this
        run), ``gb_out``, ``gb_per_s``, ``eta_seconds``. An exception it
        raises stops the job after the slabs in flight and is re-raised.

    Returns the run report as a dict, the content of ``--report run.json``
    (``outcome`` is ``"already complete"`` and nothing else is filled when the
    output was already complete for this job).

    Ctrl-C (KeyboardInterrupt) finishes the slabs in flight, keeps
    ``<out>.partial`` and raises ``Interrupted`` (exit code 75): call ``run``
    again with the same config to resume. Every failure is an ``Error``
    subclass with the CLI's message and exit code.
    """
    if not isinstance(config, (Mapping, str, os.PathLike)):
        raise TypeError(f"config must be a path or a dict, not {type(config).__name__}")
    _refuse_after_fork()
    with _LOCK:
        if isinstance(config, Mapping):
            return _finish(_core.run_tree(config, progress))
        return _finish(_core.run_file(os.fspath(config), progress))


def _axes(axes: Sequence[str]) -> tuple:
    """axes as a tuple, each of date, id and num named once, else ValueError."""
    axes = tuple(axes)
    if sorted(axes) != ["date", "id", "num"]:
        raise ValueError(f"axes={axes!r}: name 'date', 'id' and 'num' once each, e.g. ('date', 'id', 'num')")
    return axes


def _device_desc(a: Any, name: str) -> Optional[tuple]:
    """(address, is_float32, shape, element strides) of a CUDA array, or None for a host array."""
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is None:
        return None
    typestr = cai["typestr"]
    if typestr[1:] not in ("f8", "f4") or typestr[0] == ">":
        raise TypeError(f"{name}: device array of type {typestr}; multiply takes float64 or float32 "
                        f"(out: float64); convert it with .astype('float64')")
    item = int(typestr[2:])
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    if strides is not None and any(s % item for s in strides):
        raise ValueError(f"{name}: strides {strides} are not whole elements; pass a contiguous copy")
    elem = [s // item for s in strides] if strides is not None else None
    contiguous = [int(np.prod(shape[j + 1:])) for j in range(len(shape))]
    if elem is not None and any(e != c for e, c, n in zip(elem, contiguous, shape) if n > 1):
        raise ValueError(f"{name}: a non-contiguous device array; device arrays must be C-contiguous "
                         f"(cupy.ascontiguousarray({name}) or {name}.contiguous())")
    return (int(cai["data"][0]), typestr[1:] == "f4", shape, contiguous)


def _host_desc(a: np.ndarray, name: str) -> tuple:
    if a.dtype == np.float64:
        f32 = False
    elif a.dtype == np.float32:
        f32 = True
    else:
        raise TypeError(f"{name}: dtype {a.dtype}; multiply takes float64 or float32 (float32 is widened "
                        f"exactly; out is float64): convert it with {name}.astype(np.float64)")
    if not a.dtype.isnative:
        raise ValueError(f"{name}: byte-swapped dtype {a.dtype}; pass {name}.astype(np.float64)")
    item = a.dtype.itemsize
    if any(s % item for s in a.strides) or a.__array_interface__["data"][0] % item:
        raise ValueError(f"{name}: unaligned strides {a.strides}; pass np.ascontiguousarray({name})")
    return (a.__array_interface__["data"][0], f32, a.shape, tuple(s // item for s in a.strides))


def multiply(mult: Any, disc: Any, out: Optional[Any] = None, *,
             axes: Sequence[str] = ("date", "id", "num"),
             space: str = "auto",
             device_budget: Union[str, int, None] = None,
             host_budget: Union[str, int, None] = None,
             parallel_dims: Sequence[str] = ("date", "id", "num"),
             chunk_axis: str = "auto",
             progress: Optional[ProgressCallback] = None,
             pin: Optional[bool] = None) -> Any:
    """Return ``out[d, i, k] = mult[i, k] * disc[d, i, k]`` (for the default axes).

    Host calls whose disc and out hold up to 128 MiB run on the calling
    thread, sharing chunks with helper threads only while cores are idle (no
    plan, no staging, no lock: see docs/python.md, "What a call costs").
    Larger calls, and calls with a progress callable, a percentage budget, a
    budget smaller than the arrays or the device space, stream through the
    engine's pipeline: slabs cut by the budgets, staging buffers, copies
    overlapped with the kernel, the CLI's kernels and slicings. The GIL is
    released while it computes. The result is bit-exact with
    ``np.multiply(mult[None], disc)`` in float64.

    mult: (ids, nums). disc: the three axes in the order ``axes`` names (the
        YAML's ``input.axes``), e.g. ``("id", "date", "num")`` for
        ``disc[i, d, k]``. Host arrays: NumPy arrays of float64 or float32
        (float32 is widened exactly to float64, slab by slab), any strides,
        ``np.memmap`` included (a disc larger than RAM streams from disk).
        Other dtypes raise TypeError naming the array and the fix.
    out: float64, disc's shape, writable; any strides; may be ``disc`` itself
        (in place) but must not otherwise overlap the inputs; None: a new array.
    space: ``"auto"`` (device arrays on the GPU, host arrays on the host
        cores), ``"device"`` (the GPU in a CUDA build; the host cores
        otherwise) or ``"host"`` (YAML ``compute.space``). Host arrays on the
        GPU cross PCIe both ways, through a host copy each way unless pinned
        in place (``pin``): on the H200 node 40 GB moved in 0.45 s pinned and
        0.68 s staged, where the host cores moved 94 GB/s, hence ``"auto"``
        (docs/python.md).
    device_budget, host_budget: bytes as an int (``67108864``), a size
        (``"16GiB"``, ``"512 MiB"``) or a percentage of what is free (``"80%"``)
        (YAML ``memory.*``; None: the defaults, 80% and 25% of what is free).
    parallel_dims: the axes the kernel's MDRange spans, each once (``compute.parallel_dims``).
    chunk_axis: ``"auto"``, ``"date"`` or ``"id"`` (``memory.chunk_axis``).
    progress: as for ``run()``.
    pin: host arrays on a GPU only. None: ``disc`` and ``out`` (float64,
        C-contiguous, 64 MiB or more, whole arrays NumPy allocated: not an
        ``np.memmap``) are page-locked in place by the second call that passes
        them, when the call before copied them piece by piece (not through
        the staging ring that small budgets or ``chunk_axis="id"`` take), so
        that this and later calls (views of them included) copy them
        across PCIe directly, with no host copy each way; True: by this call
        (a view: the whole array it views); False: not by this call. Pinning costs
        about what one call does (20 GB took 0.55 s on the H200 node). An array
        stays pinned until it is freed or ``release_buffers()``; at most 3/4 of
        the RAM is pinned (docs/python.md, "Arrays pinned in place").

    The keyword arguments follow their YAML keys' rules: a value the YAML
    refuses raises ConfigError (exit code 78) with the YAML's message after
    the argument's name, e.g. ``chunk_axis: 'memory.chunk_axis' must be one
    of auto | date | id, not 'num'``.

    In a CUDA build mult, disc and out may instead all be C-contiguous device
    arrays (``__cuda_array_interface__``: CuPy, PyTorch, Numba); the kernel
    then runs on them in place, with no host round trip.

    Raises ValueError (layout), TypeError (dtype), ``Error`` subclasses (the
    engine's checks, e.g. ConfigError for a budget too small for one slab),
    ``Interrupted`` on Ctrl-C (``out`` then holds the finished slabs only) and
    ForkError in a process forked after its parent's first call.
    """
    global _LAST_REPORT
    _refuse_after_fork()
    axes = _axes(axes)
    device = [_device_desc(a, n) for a, n in ((mult, "mult"), (disc, "disc"), (out, "out"))]
    if any(d is not None for d in device):
        if out is None:
            raise ValueError("out: give a float64 device array for the result when mult and disc are device arrays")
        if not all(d is not None for d in device):
            names = [n for n, d in zip(("mult", "disc", "out"), device) if d is None]
            raise ValueError(f"{', '.join(names)}: mix of device and host arrays; pass all three as device arrays "
                             f"or all three as host arrays")
        mdesc, ddesc, odesc = device
        if odesc[1]:
            raise TypeError("out: float32 device array; out must be float64")
        if mdesc[1] or ddesc[1]:
            raise TypeError("mult/disc: float32 device arrays are not widened on the device; pass float64")
        _check_shapes(mdesc[2], ddesc[2], odesc[2], axes)
        result = out
        is_device = True
    else:
        if not isinstance(mult, np.ndarray):
            mult = np.asarray(mult, dtype=np.float64)
        if not isinstance(disc, np.ndarray):
            disc = np.asarray(disc, dtype=np.float64)
        if mult.ndim != 2:
            raise ValueError(f"mult: {mult.ndim}-D array; mult must be 2-D (ids, nums)")
        if disc.ndim != 3:
            raise ValueError(f"disc: {disc.ndim}-D array; disc must be 3-D in the order axes={axes!r}")
        if out is None:
            out = np.empty(disc.shape, dtype=np.float64)
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out: {type(out).__name__}; out must be a NumPy float64 array (or None)")
        if out.dtype != np.float64:
            raise TypeError(f"out: dtype {out.dtype}; out must be float64 (np.empty(disc.shape))")
        if not out.flags.writeable:
            raise ValueError("out: read-only array; pass a writable array (or an np.memmap opened with mode 'r+' or 'w+')")
        if out.shape != disc.shape:
            raise ValueError(f"out: shape {out.shape}; it must be disc's shape {disc.shape}")
        if out.size and 0 in out.strides:
            raise ValueError("out: a broadcast view (a stride of 0) cannot hold the result; pass a fresh array")
        same_as_disc = (out.__array_interface__["data"][0] == disc.__array_interface__["data"][0]
                        and out.strides == disc.strides and disc.dtype == np.float64)
        if (not same_as_disc and np.may_share_memory(out, disc)) or np.may_share_memory(out, mult):
            raise ValueError("out: overlaps mult or disc; pass a separate array (or out=disc for in place)")
        _check_shapes(mult.shape, disc.shape, out.shape, axes)
        # Arrays whose memory is not aligned to their element size (NumPy arrays
        # rebuilt from pickle protocol 5 buffers, as dask.distributed's workers
        # receive them) are computed through aligned copies.
        if not mult.flags.aligned:
            mult = np.array(mult)
        if not disc.flags.aligned:
            disc = np.array(disc)
        result = out
        if not out.flags.aligned:
            out = np.empty(out.shape)
        mdesc, ddesc, odesc = _host_desc(mult, "mult"), _host_desc(disc, "disc"), _host_desc(out, "out")
        is_device = False
    if min(ddesc[2]) == 0:
        return result
    if not is_device and progress is None and space in ("auto", "host"):
        nbytes = disc.nbytes + out.nbytes
        if nbytes <= _CALLER_MAX_BYTES and _budgets_fit(nbytes + mult.nbytes, axes, "host", device_budget,
                                                        host_budget, parallel_dims, chunk_axis):
            seconds = _core.multiply_on_calling_thread(mdesc, ddesc, odesc, axes)
            _caller_report(mult, disc, axes, seconds)
            return _into(result, out)
    if space == "auto":
        space = "device" if is_device else "host"
    with _LOCK:
        seen = []
        if space == "device" and not is_device:
            seen = _pin_in_place((disc, out), pin)
            ddesc, odesc = ddesc + (_pinned_now(disc),), odesc + (_pinned_now(out),)
        report = _finish(_core.multiply(mdesc, ddesc, odesc, is_device, list(axes), space, device_budget,
                                        host_budget, parallel_dims, chunk_axis, progress))
        for record in seen:
            record.on_pieces = bool(report.get("kernel_on_pieces"))
    return _into(result, out)


def _into(result: Any, computed: Any) -> Any:
    """result, holding computed's values (an unaligned out was computed through an aligned copy)."""
    if computed is not result:
        np.copyto(result, computed)
    return result


# Arrays pinned in place (multiply's ``pin``): each array whose memory a call
# could pin, by id() of the array that owns the memory, for as long as it
# lives. A weakref's callback unpins it as it is freed: NumPy clears an
# array's weak references before it frees the array's memory.
_PIN_MIN_BYTES = 64 << 20
_PIN_RAM_SHARE = 0.75


class _Seen:
    # calls: device-space calls that passed it; on_pieces: whether the last one
    # copied it piece by piece (the report's kernel_on_pieces), the path that
    # copies straight from pinned arrays. The staging ring (small budgets,
    # chunk_axis="id", a slicing of one's own) gains nothing from a pin.
    __slots__ = ("ref", "address", "nbytes", "calls", "pinned", "on_pieces")

    def __init__(self, ref: Any, address: int, nbytes: int):
        self.ref, self.address, self.nbytes, self.calls, self.pinned = ref, address, nbytes, 0, False
        self.on_pieces = False


_SEEN: Dict[int, _Seen] = {}
_GPU: Optional[bool] = None  # whether device arrays are separate (a CUDA build), asked once


def _memory_owner(a: np.ndarray) -> Optional[np.ndarray]:
    """The array that owns a's memory, or None when NumPy does not (np.memmap, a foreign buffer)."""
    o = a
    while isinstance(o.base, np.ndarray):
        o = o.base
    if o.base is not None or not o.flags.owndata:
        return None
    return o


def _forget(key: int, _ref: Any) -> None:
    try:
        seen = _SEEN.pop(key, None)
        if seen is not None and seen.pinned:
            _core.unpin(seen.address)
    except Exception:  # the interpreter is shutting down: the engine has unpinned everything
        pass


def _pinnable_owner(a: np.ndarray, min_bytes: int = 0) -> Optional[np.ndarray]:
    if a.dtype == np.float64 and a.flags.c_contiguous and a.nbytes >= min_bytes:
        return _memory_owner(a)
    return None


def _pinned_now(a: np.ndarray) -> bool:
    """Whether a's memory (a view's: its owner's) is pinned as this module pinned it.
    The engine checks the range too."""
    o = _pinnable_owner(a)
    seen = _SEEN.get(id(o)) if o is not None else None
    return bool(seen is not None and seen.pinned and seen.address == o.__array_interface__["data"][0]
                and seen.nbytes == o.nbytes)


def _pin_in_place(arrays: Sequence[np.ndarray], pin: Optional[bool]) -> list:
    """Pins what this call should (see multiply's ``pin``); returns the records of the arrays it counted."""
    global _GPU
    if pin is False:
        return []
    owners, counted = {}, []
    for a in arrays:
        o = _pinnable_owner(a, _PIN_MIN_BYTES)  # calls on smaller arrays do not count
        # By default only calls on a whole array count: pinning faults in every
        # page of its memory, which a view of part of it may never touch.
        if o is not None and (pin or a.nbytes == o.nbytes):
            owners[id(o)] = o  # out=disc: one array, seen once a call
    for key, o in owners.items():
        address = o.__array_interface__["data"][0]
        seen = _SEEN.get(key)
        if seen is not None and (seen.address, seen.nbytes) != (address, o.nbytes):
            # Its memory moved: the old range is not its any more. (NumPy refuses to
            # resize an array with weak references, so this is a guard only.)
            _SEEN.pop(key, None)
            if seen.pinned:
                _core.unpin(seen.address)
            seen = None
        if seen is None:
            seen = _SEEN[key] = _Seen(weakref.ref(o, functools.partial(_forget, key)), address, o.nbytes)
        seen.calls += 1
        counted.append(seen)
        if seen.pinned or (pin is None and (seen.calls < 2 or not seen.on_pieces)):
            continue
        if _GPU is None:
            _GPU = bool(_core.device_memory_is_separate())
        if not _GPU:
            return counted
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if _core.pinned_bytes() + seen.nbytes <= _PIN_RAM_SHARE * ram:
            seen.pinned = bool(_core.pin(seen.address, seen.nbytes))
    return counted


# Host calls whose disc + out hold at most this many bytes run on the calling
# thread (embed/calling_thread.hpp says why and where the figure comes from):
# no engine thread, no thread team, no plan, no lock.
_CALLER_MAX_BYTES = int(_core.calling_thread_bytes())
# multiply()'s keyword arguments the engine accepted, as (host budget bytes or
# None, device budget bytes or None), by value: a call checks its own once.
_CHECKED: Dict[tuple, tuple] = {}
_CALLER_CALL: Optional[tuple] = None  # the last call's figures when it ran on the calling thread


def _budgets_fit(nbytes, axes, space, device_budget, host_budget, parallel_dims, chunk_axis) -> bool:
    """Whether the arguments pass the engine's checks and an in-RAM call of nbytes fits host_budget.

    Raises the engine's ConfigError for a value it refuses. A budget given as
    a percentage of what is free sends the call to the engine, which measures it.
    """
    key = (axes, space, device_budget, host_budget, parallel_dims, chunk_axis)
    try:
        checked = _CHECKED.get(key)
    except TypeError:  # an unhashable value (a list): the engine checks it
        return False
    if checked is None:
        code, message, host_bytes, device_bytes = _core.check_arguments(list(axes), space, device_budget, host_budget,
                                                                       parallel_dims, chunk_axis)
        if code != 0:
            _raise_for(code, message)
        if len(_CHECKED) >= 256:  # budgets computed per call: keep the memory bounded
            _CHECKED.clear()
        checked = _CHECKED[key] = (host_bytes, device_bytes)
    host_bytes = checked[0]
    if host_budget is None:
        return True
    return host_bytes is not None and nbytes <= host_bytes


def _caller_report(mult, disc, axes, seconds) -> None:
    global _LAST_REPORT, _CALLER_CALL
    _LAST_REPORT = None
    _CALLER_CALL = (mult.shape, str(mult.dtype), disc.shape, str(disc.dtype), tuple(axes), seconds,
                    disc.nbytes + 8 * disc.size + mult.nbytes)


def _check_shapes(mshape, dshape, oshape, axes) -> None:
    ids, nums = dshape[axes.index("id")], dshape[axes.index("num")]
    if tuple(mshape) != (ids, nums):
        # disc's axes in another order: say which axes= fits rather than blame mult
        fits = [order for order in itertools.permutations(("date", "id", "num"))
                if len(dshape) == 3 and (dshape[order.index("id")], dshape[order.index("num")]) == tuple(mshape)]
        if fits:
            raise ValueError(f"axes: disc {tuple(dshape)} read as {tuple(axes)} has (ids, nums) = ({ids}, {nums}), "
                             f"but mult is {tuple(mshape)}; disc looks stored in another axis order: pass "
                             + " or ".join(f"axes={order!r}" for order in fits))
        raise ValueError(f"mult: shape {tuple(mshape)}; with disc {tuple(dshape)} and axes={axes!r} it must be "
                         f"(ids, nums) = ({ids}, {nums})")
    if tuple(oshape) != tuple(dshape):
        raise ValueError(f"out: shape {tuple(oshape)}; it must be disc's shape {tuple(dshape)}")


def last_report() -> Optional[Dict[str, Any]]:
    """The report of this process's last successful run() or multiply() (slabs, stages, seconds), or None.

    A multiply() that ran on the calling thread (a small host call) reports
    ``"space": "calling thread"``, one slab and its loop's seconds.
    """
    call = _CALLER_CALL
    if call is None:
        return _LAST_REPORT
    mshape, mtype, dshape, dtype, axes, seconds, nbytes = call
    dims = "x".join(str(n) for n in dshape)
    stage = {"name": "kernel", "bytes": nbytes, "seconds": seconds, "slabs": 1,
             "gb_per_s": nbytes / seconds / 1e9 if seconds > 0 else None,
             "limit_gb_per_s": None, "fraction_of_limit": None}
    return {"schema_version": 2, "outcome": "complete", "space": "calling thread", "kernel": "loop",
            "slicing": "chunks on the calling thread and idle cores' helpers", "kernel_on_pieces": False,
            "input": {"text": f"arrays in memory: mult {'x'.join(str(n) for n in mshape)} {mtype}, "
                              f"disc {dims} {dtype} ({', '.join(axes)})"},
            "output": f"array in memory: out {dims} float64 (calling thread: no thread team, no staging)",
            "slabs": {"total": 1, "run": 1, "skipped_resumed": 0}, "stages": [stage],
            "wall_seconds": seconds, "any_stage_seconds": seconds}


def release_buffers() -> int:
    """Frees the staging buffers this process keeps between calls and unpins the
    arrays ``multiply`` pinned in place; returns the bytes of both.

    A call through the pipeline (``run()``, or ``multiply()`` of host arrays on a
    GPU, or of arrays it cannot take as they are) keeps its staging buffers
    (page-locked on a GPU) for the next call, which then skips making them
    ready: on the H200 node that was 0.75 s of a 1.2 s call. They are at most
    one call's buffers, inside that call's ``host_budget``; buffers under 16 MiB
    are not kept. The next call after this one makes and keeps new ones.
    """
    _refuse_after_fork()
    with _LOCK:
        for seen in list(_SEEN.values()):  # pinned again from their second call after this one
            seen.pinned, seen.calls = False, 0
        return int(_core.release_buffers())


def kept_buffer_bytes() -> int:
    """Bytes of staging buffers kept for the next call (see ``release_buffers``)."""
    _refuse_after_fork()
    return int(_core.kept_buffer_bytes())


def pinned_bytes() -> int:
    """Bytes of host arrays pinned in place for a GPU's copies (see ``multiply``'s ``pin``)."""
    _refuse_after_fork()
    return int(_core.pinned_bytes())


def version() -> str:
    """Versions of the engine, Kokkos (backends, GPU arch) and HDF5, as ``discount_app --version`` prints them."""
    return _core.version_text()


# Kokkos is started by the first call and ended once, at the interpreter's exit
# (not in a child forked after the first call, which has no Kokkos to end).
atexit.register(_core.finalize)
