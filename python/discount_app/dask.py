"""cv = multBy * discount on Dask arrays, block by block with discount_app.multiply.

``discount_app.multiply`` is itself a block function: ``dask.array.map_blocks``
aligns the 2-D ``mult`` with the trailing axes of a ``(dates, ids, nums)``
``disc``::

    cv = da.map_blocks(discount_app.multiply, mult, disc, dtype="float64")

That holds while ``mult`` is chunked along ids (and nums) exactly as ``disc``
is: map_blocks hands a ``mult`` of one chunk whole to every block of a
``disc`` chunked along ids (the call then raises "mult: shape ..." when
computed), and rechunks chunks that differ to their common refinement, so
the result's chunks are not ``disc``'s. In another axis order it pairs the
wrong axes. ``multiply`` below builds the graph for any axis order, rechunks
``mult`` to ``disc``'s chunks along ids and nums, and passes multiply's
keyword arguments on.

Threads and processes. Blocks of up to 128 MiB (disc + out) run on the
calling thread, with helper threads only on idle cores, so dask's threads
and processes do not oversubscribe the machine; larger blocks go to the
engine's thread team, one block at a time per process, on OMP_NUM_THREADS
threads. A ``dask.distributed`` Nanny sets OMP_NUM_THREADS=1 in each worker
it starts, and in the process that starts it, unless the variable is set
already (Dask's ``distributed.nanny.pre-spawn-environ``): there a larger
block runs on one core whatever ``threads_per_worker`` is (one worker of two
threads on the 2-core VM took 1.6x as long as with OMP_NUM_THREADS=2, blocks
of 160 MB). Give each worker process its share of the cores::

    LocalCluster(n_workers=w, threads_per_worker=t, env={"OMP_NUM_THREADS": str(os.cpu_count() // w)})

(or export OMP_NUM_THREADS before ``dask worker`` starts), and make the
client process's first engine call before it starts a LocalCluster, or set
OMP_NUM_THREADS there first. Worker processes are spawned, so a client that
has used the engine is fine; each worker imports discount_app itself.

Writing the result (each writes block by block, never the whole array)::

    cv.to_hdf5("cv.h5", "/cv")                               # dask.array.to_hdf5
    cv.to_zarr("cv.zarr")                                    # needs zarr
    xarray.DataArray(cv, dims=("date", "id", "num"), name="cv").to_netcdf("cv.nc")

``to_hdf5`` passes h5py's dataset to the tasks, which a ``dask.distributed``
worker cannot receive ("Could not serialize object of type Dataset"): under
a Client use ``to_zarr`` or xarray's ``to_netcdf`` (both work there).

Each block is a new array, and a new array's pages are faulted in by its
first write: on the 2-core VM that cost more than the product itself (a
160 MB block: 48 ms new, 20 ms into memory written before, one thread), and
it is the same for Dask's own ``mult[None] * disc``. Where blocks come and
go (a store, a persisted result released), glibc can keep freed memory for
the next block instead of returning it: ``MALLOC_MMAP_MAX_=0
MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=<bytes to keep>`` in the process's
environment before it starts (for workers: set before the Nanny starts
them; it sets ``MALLOC_TRIM_THRESHOLD_=65536`` otherwise), at the price of
the memory staying with the process.

Importing this module imports dask; ``import discount_app`` alone does not.
"""
from __future__ import annotations

from typing import Any, Sequence

import dask.array as da
import numpy as np

import discount_app

__all__ = ["multiply"]

_LETTERS = {"date": "d", "id": "i", "num": "k"}


def _block(mult: np.ndarray, disc: np.ndarray, axes: tuple, options: dict) -> np.ndarray:
    return discount_app.multiply(mult, disc, axes=axes, **options)


def multiply(mult: Any, disc: Any, *, axes: Sequence[str] = ("date", "id", "num"), **options: Any) -> da.Array:
    """The lazy cv of Dask (or NumPy) arrays ``mult`` (ids, nums) and ``disc`` (axes in the order ``axes`` names).

    The result is a float64 Dask array with ``disc``'s shape and chunks; nothing
    runs until it is computed or stored. ``options`` are ``discount_app.multiply``'s
    keyword arguments (``host_budget``, ``space``, ``parallel_dims``, ...), used
    for every block; ``out`` and ``progress`` are per call and not taken here.
    float32 inputs are widened exactly, as by ``discount_app.multiply``.
    """
    axes = discount_app._axes(axes)
    for name in ("out", "progress"):
        if name in options:
            raise TypeError(f"{name}: not taken by discount_app.dask.multiply (each block gets its own); "
                            f"store the result with cv.to_hdf5, cv.to_zarr or xarray's to_netcdf")
    mult, disc = da.asarray(mult), da.asarray(disc)
    if mult.ndim != 2:
        raise ValueError(f"mult: {mult.ndim}-D array; mult must be 2-D (ids, nums)")
    if disc.ndim != 3:
        raise ValueError(f"disc: {disc.ndim}-D array; disc must be 3-D in the order axes={axes!r}")
    for name, a in (("mult", mult), ("disc", disc)):
        if a.dtype not in (np.float64, np.float32):
            raise TypeError(f"{name}: dtype {a.dtype}; discount_app.dask.multiply takes float64 or float32 "
                            f"(convert with {name}.astype('float64'))")
    # Unknown chunk sizes (NaN, after boolean indexing) are fine along dates only.
    for name, a, along in (("disc", disc, (axes.index("id"), axes.index("num"))), ("mult", mult, (0, 1))):
        if any(c != c for axis in along for c in a.chunks[axis]):
            raise ValueError(f"{name}: unknown chunk sizes along ids or nums; call {name}.compute_chunk_sizes() "
                             f"first" + (" (along dates they may stay unknown)" if name == "disc" else ""))
    ids, nums = disc.shape[axes.index("id")], disc.shape[axes.index("num")]
    if mult.shape != (ids, nums):
        raise ValueError(f"mult: shape {mult.shape}; with disc {disc.shape} in the order axes={axes!r} it must be "
                         f"(ids, nums) = ({ids}, {nums})")
    # mult's blocks must meet disc's along ids and nums.
    mult = mult.rechunk((disc.chunks[axes.index("id")], disc.chunks[axes.index("num")]))
    index = "".join(_LETTERS[a] for a in axes)
    return da.blockwise(_block, index, mult, "ik", disc, index, dtype=np.float64, axes=axes, options=dict(options),
                        meta=np.empty((0, 0, 0), dtype=np.float64))
