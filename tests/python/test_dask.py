"""discount_app under Dask: multiply as map_blocks' function and discount_app.dask's graph, under
the threaded scheduler and a distributed LocalCluster of worker processes, stored with to_hdf5,
to_zarr and xarray's to_netcdf, each read back by an independent reader and compared with NumPy
bit for bit. Every wait is on a result; the cluster's timeouts are hang guards only."""
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="python3-dask is not installed")

import discount_app  # noqa: E402
import discount_app.dask as ddask  # noqa: E402
from conftest import assert_bit_exact, expected_cv, random_nonzero  # noqa: E402

HANG_GUARD = 300
ENVIRON_AT_IMPORT = dict(os.environ)


def case(rng, dates=7, ids=1003, nums=5, dtype=np.float64):
    return random_nonzero(rng, (ids, nums), dtype), random_nonzero(rng, (dates, ids, nums), dtype)


def test_map_blocks_with_multiply_itself(rng):
    mult, disc = case(rng)
    m, d = da.from_array(mult, chunks=(400, 5)), da.from_array(disc, chunks=(3, 400, 5))  # uneven chunks
    cv = da.map_blocks(discount_app.multiply, m, d, dtype=np.float64)
    assert_bit_exact(cv.compute(scheduler="threads"), expected_cv(mult, disc))

    def into_out(mb, db):  # out= inside each block, poisoned first
        out = np.full(db.shape, np.nan)
        discount_app.multiply(mb, db, out=out)
        return out

    cv = da.map_blocks(into_out, m, d, dtype=np.float64)
    assert_bit_exact(cv.compute(scheduler="threads"), expected_cv(mult, disc))


@pytest.mark.parametrize("axes", [("date", "id", "num"), ("id", "date", "num"), ("num", "id", "date")])
def test_graph_in_any_axis_order_and_chunking(rng, axes):
    mult, disc = case(rng, 9, 1003, 3)
    disc = np.ascontiguousarray(np.transpose(disc, [("date", "id", "num").index(a) for a in axes]))
    chunks = tuple({"date": 4, "id": 250, "num": 2}[a] for a in axes)   # dates and ids and nums cut
    cv = ddask.multiply(da.from_array(mult, chunks=(1003, 3)), da.from_array(disc, chunks=chunks), axes=axes)
    assert cv.dtype == np.float64 and cv.shape == disc.shape and cv.chunks == da.from_array(disc, chunks=chunks).chunks
    assert_bit_exact(cv.compute(scheduler="threads"), expected_cv(mult, disc, axes))


def test_float32_numpy_inputs_and_options(rng):
    mult, disc = case(rng, 5, 301, 5, np.float32)
    cv = ddask.multiply(mult, da.from_array(disc, chunks=(2, 301, 5)), host_budget="64MiB", space="host")
    assert_bit_exact(cv.compute(scheduler="sync"), expected_cv(mult, disc))


def test_mistakes_name_the_argument(rng):
    mult, disc = case(rng)
    d = da.from_array(disc, chunks=(3, 500, 5))
    with pytest.raises(ValueError, match="mult: shape"):
        ddask.multiply(mult[:10], d)
    with pytest.raises(ValueError, match="axes="):
        ddask.multiply(mult, d, axes=("date", "date", "num"))
    with pytest.raises(TypeError, match="out: not taken"):
        ddask.multiply(mult, d, out=np.empty(disc.shape))
    with pytest.raises(TypeError, match="disc: dtype int64"):
        ddask.multiply(mult, d.astype(np.int64))
    with pytest.raises(discount_app.ConfigError, match="chunk_axis"):  # the engine's rules, at compute
        ddask.multiply(mult, d, chunk_axis="num").compute(scheduler="sync")


def test_stored_with_to_hdf5_to_zarr_and_to_netcdf(rng, tmp_path):
    h5py = pytest.importorskip("h5py")
    mult, disc = case(rng, 6, 777, 5)
    want = expected_cv(mult, disc)
    cv = ddask.multiply(mult, da.from_array(disc, chunks=(2, 300, 5)))
    cv.to_hdf5(str(tmp_path / "cv.h5"), "/cv")
    with h5py.File(tmp_path / "cv.h5") as f:
        assert_bit_exact(f["cv"][...], want, "to_hdf5")
    zarr = pytest.importorskip("zarr")
    cv.to_zarr(str(tmp_path / "cv.zarr"))
    assert_bit_exact(zarr.open(str(tmp_path / "cv.zarr"), mode="r")[...], want, "to_zarr")
    xr = pytest.importorskip("xarray")
    xr.DataArray(cv, dims=("date", "id", "num"), name="cv").to_netcdf(tmp_path / "cv.nc")
    with xr.open_dataset(tmp_path / "cv.nc") as ds:
        assert_bit_exact(ds["cv"].values, want, "to_netcdf")


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed", reason="python3-distributed is not installed")
    # A Nanny sets its pre-spawn variables (OMP_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_, ...) in this
    # process too: put the environment back, or the tests after these ones would start the engine
    # (and every child they start) on one thread.
    environ = dict(os.environ)
    try:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                           worker_dashboard_address=None)
    finally:
        _restore(environ)
    client = distributed.Client(cluster, timeout=HANG_GUARD)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
        _restore(environ)


def _restore(environ):
    for key in set(os.environ) - set(environ):
        del os.environ[key]
    os.environ.update(environ)


def test_local_cluster_of_worker_processes(rng, cluster_client):
    mult, disc = case(rng, 8, 2001, 5)
    d = da.from_array(disc, chunks=(2, 1000, 5))
    got = cluster_client.compute(ddask.multiply(mult, d)).result(timeout=HANG_GUARD)
    assert_bit_exact(got, expected_cv(mult, disc), "discount_app.dask")
    got = cluster_client.compute(da.map_blocks(discount_app.multiply, da.from_array(mult, chunks=(1000, 5)), d,
                                               dtype=np.float64)).result(timeout=HANG_GUARD)
    assert_bit_exact(got, expected_cv(mult, disc), "map_blocks")
    # The workers are processes of their own, each with its own engine.
    pids = cluster_client.run(lambda: __import__("os").getpid())
    assert len(set(pids.values())) == 2 and __import__("os").getpid() not in pids.values()


def test_local_cluster_out_in_blocks_ids_chunked_and_zarr(rng, cluster_client, tmp_path):
    zarr = pytest.importorskip("zarr", reason="python3-zarr is not installed")
    mult, disc = case(rng, 7, 1003, 5)
    want = expected_cv(mult, disc)
    m, d = da.from_array(mult, chunks=(500, 5)), da.from_array(disc, chunks=(3, 500, 5))  # dates and ids cut

    def into_out(mb, db):  # out= inside each block on a worker, poisoned first
        out = np.full(db.shape, np.nan)
        discount_app.multiply(mb, db, out=out)
        return out

    got = cluster_client.compute(da.map_blocks(into_out, m, d, dtype=np.float64)).result(timeout=HANG_GUARD)
    assert_bit_exact(got, want, "out= in blocks on the workers")
    # Written by the workers, read back by zarr alone.
    cluster_client.compute(ddask.multiply(m, d).to_zarr(str(tmp_path / "cv.zarr"), compute=False)).result(
        timeout=HANG_GUARD)
    assert_bit_exact(zarr.open(str(tmp_path / "cv.zarr"), mode="r")[...], want, "to_zarr from the workers")


def test_cluster_leaves_this_process_environment_alone(cluster_client):
    for key in ("OMP_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        assert os.environ.get(key) == ENVIRON_AT_IMPORT.get(key), key


def test_map_blocks_needs_mult_chunked_as_disc_along_ids(rng):
    mult, disc = case(rng)
    d = da.from_array(disc, chunks=(3, 500, 5))
    whole = da.map_blocks(discount_app.multiply, da.from_array(mult, chunks=(1003, 5)), d, dtype=np.float64)
    with pytest.raises(ValueError, match="mult: shape"):  # one mult block handed to every ids block
        whole.compute(scheduler="sync")
    cv = ddask.multiply(da.from_array(mult, chunks=(1003, 5)), d)  # rechunked to disc's ids
    assert cv.chunks == d.chunks
    assert_bit_exact(cv.compute(scheduler="threads"), expected_cv(mult, disc))


def test_unknown_chunk_sizes(rng):
    mult, disc = case(rng)
    d = da.from_array(disc, chunks=(3, 500, 5))
    keep = da.from_array(np.arange(disc.shape[0]) != 2, chunks=3)
    cv = ddask.multiply(mult, d[keep])  # unknown along dates: fine
    assert_bit_exact(cv.compute(scheduler="threads"), expected_cv(mult, disc[np.arange(disc.shape[0]) != 2]))
    with pytest.raises(ValueError, match="disc: unknown chunk sizes"):
        ddask.multiply(mult, d[:, da.from_array(np.ones(disc.shape[1], bool), chunks=500)])
