#!/usr/bin/env python3
"""Input axes from netCDF dimension names, and a multBy stored [num][id].

- netCDF-4 files written by xarray (netcdf4 and h5netcdf engines), discount
  with dims (id, date, num) and no input.axes: the job reads them in that
  order and cv equals NumPy's product bit for bit; `verify --full` agrees.
  Names are matched case-insensitively (Time, IDS, nums).
- A given input.axes that the dimension names contradict: exit 65 naming both.
- Names of which only some are recognised and no input.axes: exit 65 listing
  the recognised names; with input.axes set the job runs. xarray's default
  names (dim_0, dim_1, dim_2) are ignored.
- multBy stored [num][id] (h5py, no names): detected from its shape, exact,
  date- and id-chunked with several slabs; input.multiplier_axes: [num, id]
  given explicitly; a square multBy (ids == nums) where only the key can
  tell, checked against the transposed product; a given [id, num] that only
  fits transposed is refused with a message that says so and suggests no
  input.axes that would call ids nums; verify agrees.
Sizes are odd and differ (dates 5, ids 7 or 9, nums 3); data random, non-zero;
every output is pre-filled with NaN and overwritten.
"""

import os
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 5, 7, 3


def data(seed, ids=IDS, nums=NUMS):
    rng = np.random.default_rng(seed)
    return E.random_nonzero(rng, (ids, nums)), E.random_nonzero(rng, (DATES, ids, nums))


def poisoned(path, shape):
    with h5py.File(path, "w") as f:
        f.create_dataset("cv", data=np.full(shape, np.nan))


def run_exact(ctx, d, expected, input_opts=None, memory=None, in_file="in.nc", verify=True):
    """Runs the job over a NaN-filled output and checks cv bit for bit, then verify --full."""
    out = os.path.join(d, "out.h5")
    poisoned(out, expected.shape)
    job = E.write_job(os.path.join(d, "job.yaml"), in_file, "out.h5", input=input_opts,
                      output={"overwrite": True}, memory=memory)
    r = E.expect_rc(E.run(ctx, [ctx.app, "run", job], cwd=d), 0, "run")
    E.check_output(out, expected)
    if verify:
        E.expect_rc(E.run(ctx, [ctx.app, "verify", "--full", job], cwd=d), 0, "verify --full")
    return r, job


def product(m, disc_canon):
    """cv [date][id][num] from multBy [id][num] and discount [date][id][num]."""
    return m[None, :, :] * disc_canon


def xarray_file(path, engine, m, disc_idn, dims=("id", "date", "num"), mult_dims=("id", "num"), coords=True):
    """netCDF-4 through xarray; the date dimension (the one of DATES entries) gets a coordinate variable."""
    E.need_modules("xarray", "netCDF4" if engine == "netcdf4" else "h5netcdf")
    import xarray as xr
    date_dim = dims[list(disc_idn.shape).index(DATES)]
    coord = {date_dim: np.arange(100, 100 + DATES)} if coords else {}
    ds = xr.Dataset({"discount": (dims, disc_idn), "multBy": (mult_dims, m)}, coords=coord)
    ds.to_netcdf(path, engine=engine)


def netcdf_case(engine, dims=("id", "date", "num")):
    def case(ctx):
        d = ctx.dir("job")
        m, disc = data(11)
        xarray_file(os.path.join(d, "in.nc"), engine, m, np.ascontiguousarray(disc.transpose(1, 0, 2)), dims=dims)
        expected = np.ascontiguousarray(product(m, disc).transpose(1, 0, 2))
        r, job = run_exact(ctx, d, expected)
        # The plan shows the axes it took, and their source.
        p = E.expect_rc(E.run(ctx, [ctx.app, "plan", job], cwd=d), 0, "plan")
        E.check("[id,date,num] from its dimension names" in p.stdout, f"plan does not say where the axes came from:\n{p}")
    return case


def case_dims_conflict(ctx):
    d = ctx.dir("job")
    m, disc = data(12)
    xarray_file(os.path.join(d, "in.nc"), "netcdf4", m, np.ascontiguousarray(disc.transpose(1, 0, 2)))
    job = E.write_job(os.path.join(d, "job.yaml"), "in.nc", "out.h5", input={"axes": ["date", "id", "num"]})
    r = E.run(ctx, [ctx.app, "run", job], cwd=d)
    E.check(r.rc == E.EX_DATA and "dimension names (id, date, num)" in r.stderr and "[id, date, num]" in r.stderr
            and "input.axes is [date, id, num]" in r.stderr, f"expected 65 naming both orders:\n{r}")
    E.check(not os.path.exists(os.path.join(d, "out.h5")), "a refused job wrote an output")


def case_dims_partly_recognised(ctx):
    d = ctx.dir("job")
    m, disc = data(13)
    xarray_file(os.path.join(d, "in.nc"), "netcdf4", m, disc, dims=("when", "id", "num"))
    job = E.write_job(os.path.join(d, "job.yaml"), "in.nc", "out.h5")
    r = E.run(ctx, [ctx.app, "run", job], cwd=d)
    E.check(r.rc == E.EX_DATA and "(when, id, num)" in r.stderr and "date|dates|time" in r.stderr
            and "set input.axes" in r.stderr, f"expected 65 listing the recognised names:\n{r}")
    run_exact(ctx, d, product(m, disc), input_opts={"axes": ["date", "id", "num"]})


def case_dims_unrecognised_ignored(ctx):
    d = ctx.dir("job")
    m, disc = data(14)
    xarray_file(os.path.join(d, "in.nc"), "h5netcdf", m, disc, dims=("dim_0", "dim_1", "dim_2"),
                mult_dims=("dim_1", "dim_2"), coords=False)
    run_exact(ctx, d, product(m, disc))


def multby_num_id(ctx, seed, input_opts=None, memory=None, ids=IDS):
    d = ctx.dir("job")
    m, disc = data(seed, ids=ids)
    E.write_input(os.path.join(d, "in.h5"), np.ascontiguousarray(m.T), disc)
    r, _ = run_exact(ctx, d, product(m, disc), input_opts=input_opts, memory=memory, in_file="in.h5")
    return r


def case_multby_num_id_detected(ctx):
    multby_num_id(ctx, 21)


def case_multby_num_id_detected_id_slabs(ctx):
    # One id per slab: multBy rows are read per slab, each transposed block separately.
    multby_num_id(ctx, 22, memory={"chunk_axis": "id", "max_slab": DATES * NUMS * 8})


def case_multby_num_id_detected_date_slabs(ctx):
    multby_num_id(ctx, 23, memory={"chunk_axis": "date", "max_slab": IDS * NUMS * 8})


def case_multby_num_id_key(ctx):
    multby_num_id(ctx, 24, input_opts={"multiplier_axes": ["num", "id"]})


def case_multby_square_key(ctx):
    # ids == nums: the shape cannot tell; the key does, and the transposed product is what comes out.
    multby_num_id(ctx, 25, input_opts={"multiplier_axes": ["num", "id"]}, ids=NUMS)


def case_multby_wrong_key(ctx):
    d = ctx.dir("job")
    m, disc = data(26)
    E.write_input(os.path.join(d, "in.h5"), np.ascontiguousarray(m.T), disc)
    job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", input={"multiplier_axes": ["id", "num"]})
    for cmd in ("run", "verify"):
        r = E.run(ctx, [ctx.app, cmd, job], cwd=d)
        E.check(r.rc == E.EX_DATA and "multBy fits only transposed: input.multiplier_axes: [num, id] would fit"
                in r.stderr and "input.axes:" not in r.stderr, f"{cmd}: expected 65 saying multBy is transposed:\n{r}")


def case_multby_dims_named(ctx):
    # netCDF dims on multBy say (num, id); the discount's (date, id, num).
    d = ctx.dir("job")
    m, disc = data(27)
    xarray_file(os.path.join(d, "in.nc"), "netcdf4", np.ascontiguousarray(m.T), disc, dims=("Time", "IDS", "nums"),
                mult_dims=("nums", "IDS"))
    run_exact(ctx, d, product(m, disc))


CASES = [
    ("netcdf4_dims_fill_axes", netcdf_case("netcdf4")),
    ("h5netcdf_dims_fill_axes", netcdf_case("h5netcdf")),
    ("dims_conflict_with_axes", case_dims_conflict),
    ("dims_partly_recognised", case_dims_partly_recognised),
    ("dims_unrecognised_ignored", case_dims_unrecognised_ignored),
    ("multby_num_id_detected", case_multby_num_id_detected),
    ("multby_num_id_detected_id_slabs", case_multby_num_id_detected_id_slabs),
    ("multby_num_id_detected_date_slabs", case_multby_num_id_detected_date_slabs),
    ("multby_num_id_key", case_multby_num_id_key),
    ("multby_square_key", case_multby_square_key),
    ("multby_wrong_key", case_multby_wrong_key),
    ("multby_dims_named", case_multby_dims_named),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
