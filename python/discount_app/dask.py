"""cv = multBy * discount on Dask arrays, block by block with discount_app.multiply.

``discount_app.multiply`` is itself a block function: ``dask.array.map_blocks``
aligns the 2-D ``mult`` with the trailing axes of a ``(dates, ids, nums)``
``disc``::

    cv = da.map_blocks(discount_app.multiply, mult, disc, dtype="float64")

``multiply`` below builds the same graph for any axis order, rechunks ``mult``
to ``disc``'s chunks along ids and nums, and passes multiply's keyword
arguments on. Blocks of up to 128 MiB (disc + out) run on the worker's own
thread, with helper threads only on idle cores, so dask's threads and
processes do not oversubscribe the machine; larger blocks go to the engine's
thread team, one block at a time per process.

Writing the result (each writes block by block, never the whole array)::

    cv.to_hdf5("cv.h5", "/cv")                               # dask.array.to_hdf5
    cv.to_zarr("cv.zarr")                                    # needs zarr
    xarray.DataArray(cv, dims=("date", "id", "num"), name="cv").to_netcdf("cv.nc")

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
    axes = tuple(axes)
    if sorted(axes) != ["date", "id", "num"]:
        raise ValueError(f"axes={axes!r}: name 'date', 'id' and 'num' once each, e.g. ('date', 'id', 'num')")
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
    ids, nums = disc.shape[axes.index("id")], disc.shape[axes.index("num")]
    if mult.shape != (ids, nums):
        raise ValueError(f"mult: shape {mult.shape}; with disc {disc.shape} in the order axes={axes!r} it must be "
                         f"(ids, nums) = ({ids}, {nums})")
    # mult's blocks must meet disc's along ids and nums.
    mult = mult.rechunk((disc.chunks[axes.index("id")], disc.chunks[axes.index("num")]))
    index = "".join(_LETTERS[a] for a in axes)
    return da.blockwise(_block, index, mult, "ik", disc, index, dtype=np.float64, axes=axes, options=dict(options),
                        meta=np.empty((0, 0, 0), dtype=np.float64))
