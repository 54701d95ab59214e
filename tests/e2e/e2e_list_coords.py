#!/usr/bin/env python3
"""input.file as a list of netCDF files written by xarray (Dataset.to_netcdf,
engines netcdf4 and h5netcdf): the output's coordinates are each file's own,
concatenated along the split axis as xarray.open_mfdataset joins them.

- Split along date and along id, 3 files of odd sizes; datetime dates (xarray
  counts each file's dates from that file's first date, so the files' units
  differ), string ids, float nums with units; random non-zero data. The
  output read back by xarray (both engines) has the dates, ids and nums of
  open_mfdataset over the files, and cv equals NumPy's product bit for bit
  (h5py).
- Irregular dates whose files count in days and hours from different
  reference dates: joined in a unit common to all.
- Files of one shape: the coordinates tell the split axis (date, and id).
- Refused with exit 65 naming the files: other ids in a file split along
  date; a file without the date coordinate the others have; a multBy that
  differs from the first file's in a split along date.
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

ENGINES = {"netcdf4": "netCDF4", "h5netcdf": "h5netcdf"}


def need(engine):
    E.need_modules("xarray", "pandas", ENGINES[engine])


def dataset(seed, dates, ids, nums):
    """discount [date][id][num] and multBy [id][num], random non-zero, with coordinates and attributes."""
    import pandas as pd
    import xarray as xr
    rng = np.random.default_rng(seed)
    disc = E.random_nonzero(rng, (len(dates), ids, nums))
    mult = E.random_nonzero(rng, (ids, nums))
    coords = {"date": pd.DatetimeIndex(dates), "id": np.array([f"id-{k:03d}" for k in range(ids)]),
              "num": ("num", np.arange(nums) * 1.5 + 0.25, {"units": "years"})}
    return xr.Dataset({"discount": (("date", "id", "num"), disc, {"units": "1", "long_name": "discount factor"}),
                       "multBy": (("id", "num"), mult)}, coords=coords, attrs={"title": "curves"})


def daily(n, start="2023-12-29"):
    import pandas as pd
    return pd.date_range(start, periods=n, freq="D")


def write_parts(d, ds, along, cuts, engine, every_mult=True):
    """Files of consecutive ranges along `along`; split along date, later files drop multBy unless every_mult."""
    paths = []
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        part = ds.isel({along: slice(a, b)})
        if along == "date" and n > 0 and not every_mult:
            part = part.drop_vars("multBy")
        path = os.path.join(d, f"part{n}.nc")
        part.to_netcdf(path, engine=engine)
        paths.append(path)
    return paths


def joined(paths, along, engine):
    """The discount of the files as xarray joins them: open_mfdataset where dask is there, else concat."""
    import xarray as xr
    try:
        import dask  # noqa: F401
        with xr.open_mfdataset(paths, combine="nested", concat_dim=along, engine=engine, data_vars="minimal",
                               coords="minimal", compat="override", preprocess=lambda ds: ds[["discount"]]) as ds:
            return ds.load()
    except ImportError:
        parts = [xr.open_dataset(p, engine=engine)[["discount"]].load() for p in paths]
        return xr.concat(parts, dim=along)


def run_job(ctx, d, paths, rc=0):
    job = E.write_job(os.path.join(d, "job.yaml"), [os.path.basename(p) for p in paths], "out.h5")
    r = E.run(ctx, [ctx.app, "run", "-q", job], cwd=d)
    E.expect_rc(r, rc, "run")
    return job, r


def check_result(d, ds, paths, along, engine):
    """cv exact against NumPy; the coordinates, read back by xarray, those open_mfdataset gives."""
    import xarray as xr
    out = os.path.join(d, "out.h5")
    expected = ds["multBy"].values[None, :, :] * ds["discount"].values
    E.check_output(out, expected)
    want = joined(paths, along, engine)
    E.check(np.array_equal(want["discount"].values, ds["discount"].values), "open_mfdataset does not rebuild the data")
    for read_with in ENGINES:
        with xr.open_dataset(out, engine=read_with) as got:
            what = f"xarray ({read_with}) on the output"
            E.check(got["cv"].dims == ("date", "id", "num"), f"{what}: cv's dims {got['cv'].dims}")
            E.assert_bits_equal(got["cv"].values, expected, f"{what}: cv")
            for axis in ("date", "id", "num"):
                a, b = got[axis].values, want[axis].values
                E.check(a.dtype == b.dtype and a.shape == b.shape and (a == b).all(),
                        f"{what}: {axis} is {a!r}, open_mfdataset gives {b!r}")
            E.check(got["date"].dtype.kind == "M", f"{what}: dates are not decoded as datetimes")
            E.check(got["num"].attrs.get("units") == "years", f"{what}: num's attributes {got['num'].attrs}")
            E.check(got["cv"].attrs.get("discount_long_name") == "discount factor", f"{what}: cv's attributes {got['cv'].attrs}")


def units_of(paths, axis):
    import h5py
    out = []
    for p in paths:
        with h5py.File(p, "r") as f:
            u = f[axis].attrs.get("units")
            out.append(u.decode() if isinstance(u, bytes) else u)
    return out


def split_case(along, engine, every_mult=True, even=False, dates=None):
    def case(ctx):
        need(engine)
        d = ctx.dir("job")
        n_dates = len(dates) if dates is not None else (12 if even and along == "date" else 11)
        n_ids = 12 if even and along == "id" else 13
        ds = dataset(61, dates if dates is not None else daily(n_dates), n_ids, 3)
        total = n_dates if along == "date" else n_ids
        cuts = [0, 4, 8, 12] if even else [0, 4, 5, total]
        paths = write_parts(d, ds, along, cuts, engine, every_mult)
        if along == "date":  # the premise: each file counts its dates from a date of its own
            units = units_of(paths, "date")
            E.check(len(set(units)) == len(units), f"the files' date units do not differ: {units}")
            if dates is not None:  # irregular: some files count in days, others in hours
                E.check(len({u.split()[0] for u in units}) > 1, f"the files count in one unit: {units}")
        run_job(ctx, d, paths)
        check_result(d, ds, paths, along, engine)
    return case


def irregular_dates():
    import pandas as pd
    return pd.DatetimeIndex(["2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01", "2024-03-02 06:00",
                             "2024-03-04", "2024-03-05 12:00", "2024-03-07", "2024-03-08", "2024-03-09",
                             "2024-03-10 18:00"])


def refused(ctx, d, paths, needles):
    for cmd in ("run", "verify"):
        job = E.write_job(os.path.join(d, "job.yaml"), [os.path.basename(p) for p in paths], "out.h5")
        r = E.run(ctx, [ctx.app, cmd, job], cwd=d)
        E.check(r.rc == E.EX_DATA and all(n in r.stderr for n in needles), f"{cmd}: expected 65 with {needles}:\n{r}")
        E.check(len(r.stderr.strip().splitlines()) == 1, f"{cmd}: not one line:\n{r}")
    E.check(not os.path.exists(os.path.join(d, "out.h5")), "a refused job wrote an output")


def case_other_ids_refused(ctx):
    need("netcdf4")
    d = ctx.dir("job")
    ds = dataset(62, daily(11), 13, 3)
    paths = write_parts(d, ds, "date", [0, 4, 5, 11], "netcdf4")
    ds.isel(date=slice(5, 11)).assign_coords(id=[f"other-{k}" for k in range(13)]).to_netcdf(paths[2], engine="netcdf4")
    refused(ctx, d, paths, [f"input.file list along date: '{paths[2]}' has other id coordinates", f"than '{paths[0]}'"])


def case_date_coordinate_missing(ctx):
    need("netcdf4")
    d = ctx.dir("job")
    ds = dataset(63, daily(11), 13, 3)
    paths = write_parts(d, ds, "date", [0, 4, 5, 11], "netcdf4")
    ds.isel(date=slice(4, 5)).drop_vars("date").to_netcdf(paths[1], engine="netcdf4")
    refused(ctx, d, paths, [f"'{paths[1]}' has no date coordinate where '{paths[0]}' has '/date'"])


def case_different_multby_refused(ctx):
    """Files of one shape, every one holding multBy: the dates tell the split, and part2's multBy differs."""
    need("h5netcdf")
    d = ctx.dir("job")
    ds = dataset(64, daily(12), 13, 3)
    paths = write_parts(d, ds, "date", [0, 4, 8, 12], "h5netcdf")
    part = ds.isel(date=slice(8, 12)).copy(deep=True)
    part["multBy"][7, 2] = -part["multBy"][7, 2]
    part.to_netcdf(paths[2], engine="h5netcdf")
    refused(ctx, d, paths, [f"input.file list along date: '{paths[2]}' holds a 'multBy' that differs from the one in "
                            f"'{paths[0]}'", "[id 7, num 2]"])


CASES = [
    ("date_netcdf4", split_case("date", "netcdf4", every_mult=False)),
    ("date_h5netcdf", split_case("date", "h5netcdf")),
    ("id_netcdf4", split_case("id", "netcdf4")),
    ("id_h5netcdf", split_case("id", "h5netcdf")),
    ("date_irregular_units", split_case("date", "netcdf4", dates=irregular_dates())),
    ("even_shapes_date", split_case("date", "h5netcdf", even=True)),
    ("even_shapes_id", split_case("id", "netcdf4", even=True)),
    ("other_ids_refused", case_other_ids_refused),
    ("date_coordinate_missing", case_date_coordinate_missing),
    ("different_multby_refused", case_different_multby_refused),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
