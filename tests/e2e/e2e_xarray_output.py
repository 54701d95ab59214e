#!/usr/bin/env python3
"""The output describes itself the way the netCDF-4/CF conventions that
xarray reads want it (io/output/output_coords.hpp): cv's axes are HDF5 dimension
scales named date/id/num in the file's order, holding the input's
coordinates for the selection (or, where the input has none, the integer
index into the input, which keeps the selection's offset); discount's
attributes move to cv; title/source/history sit at the root; provenance is
structured; every string attribute reads back as str.

Each case opens the output with h5py, xarray under both engines (h5netcdf,
netcdf4) and `ncdump -h`, and checks cv bit for bit against NumPy.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

ENGINES = ("h5netcdf", "netcdf4")


def need_xarray():
    try:
        import xarray  # noqa: F401
        import h5netcdf  # noqa: F401
        import netCDF4  # noqa: F401
    except ImportError as e:
        raise E.Skip(f"xarray with h5netcdf and netCDF4 is needed ({e})")
    if shutil.which("ncdump") is None:
        raise E.Skip("ncdump (netcdf-bin) is needed")


def run_job(ctx, input_name, selection=None, axes=None, output=None, memory=None, env=None, expect=0):
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), input_name, "out.h5",
                      input=dict(selection or {}, **({"axes": list(axes)} if axes else {})),
                      output=output, compute={"space": "host"}, memory=memory)
    r = E.expect_rc(E.app(ctx, "run", job, env=env), expect, "run")
    return job, os.path.join(ctx.work, "out.h5"), r


def check_str_attributes(path):
    """Every string attribute the output writes reads back as str in h5py."""
    import h5py
    bad = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            for key, value in obj.attrs.items():
                # HDF5's dimension-scale bookkeeping keeps the types its specification gives.
                if key in ("DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME"):
                    continue
                if isinstance(value, bytes) or (isinstance(value, np.ndarray) and value.dtype.kind == "S"):
                    bad.append(f"{name or '/'}:{key}")
        visit("", f)
        f.visititems(visit)
    E.check(not bad, f"{path}: attributes read back as bytes, not str: {bad}")


def check_scales(path, dims, dataset="cv"):
    """cv's axis j carries exactly one dimension scale, named dims[j]."""
    import h5py
    with h5py.File(path, "r") as f:
        ds = f[dataset]
        for j, name in enumerate(dims):
            scales = list(ds.dims[j].values())
            E.check(len(scales) == 1, f"{path}: axis {j} of cv has {len(scales)} dimension scales, expected 1")
            E.check(ds.dims[j].label in ("", name) and scales[0].name == "/" + name,
                    f"{path}: axis {j}'s scale is {scales[0].name}, expected /{name}")
            E.check(scales[0].attrs["CLASS"] in (b"DIMENSION_SCALE", "DIMENSION_SCALE"),
                    f"{path}: /{name} is not a dimension scale")
            refs = scales[0].attrs.get("REFERENCE_LIST")
            E.check(refs is not None and len(refs) == 1, f"{path}: /{name} is attached {len(refs or [])} times")


def open_both(path):
    import xarray as xr
    out = {}
    for engine in ENGINES:
        with xr.open_dataset(path, engine=engine) as ds:
            out[engine] = ds.load()
    return out


def ncdump_header(path):
    r = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True)
    E.check(r.returncode == 0, f"ncdump -h {path} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def write_netcdf_input(ctx, seed, shape, discount_attrs, coords, attrs=None, mult_attrs=None):
    """in.nc written by xarray (netCDF4): discount [date][id][num] with its
    attributes and multBy [id][num], random non-zero (discount drawn first),
    with the given coordinates and global attributes. Returns (disc, mult)."""
    import xarray as xr
    D, I, N = shape
    rng = np.random.default_rng(seed)
    disc = E.random_nonzero(rng, (D, I, N))
    mult = E.random_nonzero(rng, (I, N))
    xr.Dataset({"discount": (("date", "id", "num"), disc, discount_attrs),
                "multBy": (("id", "num"), mult, mult_attrs or {})},
               coords=coords, attrs=attrs or {}).to_netcdf(os.path.join(ctx.work, "in.nc"), engine="netcdf4")
    return disc, mult


def case_netcdf_roundtrip(ctx):
    """The user's own netCDF4 file written by xarray (datetime dates, string
    ids, scaled nums, units and long_name, title/source/history): a selection
    with offsets comes back with its coordinates and attributes. cv describes
    itself (its long_name and description; units as the product of multBy's
    and discount's); discount's attributes are kept with a discount_ prefix."""
    need_xarray()
    import pandas as pd
    D, I, N = 11, 7, 5
    dates = pd.date_range("2024-03-01", periods=D, freq="D")
    ids = np.array([f"station-{k:02d}" for k in range(I)])
    nums = (np.arange(N) * 2.5 + 1).astype(np.float64)
    disc, mult = write_netcdf_input(
        ctx, 24, (D, I, N), {"units": "1", "long_name": "discount factor", "model": "m7"},
        coords={"date": dates, "id": ids, "num": ("num", nums, {"units": "years"})},
        attrs={"title": "curves of 2024", "source": "pricing model X", "history": "written by the user"},
        mult_attrs={"units": "USD", "long_name": "notional"})
    sel = {"dates": [3, 9], "ids": [2, 6]}
    _, out, _ = run_job(ctx, "in.nc", sel)
    expected = mult[None, 2:6, :] * disc[3:9, 2:6, :]
    E.check_output(out, expected)
    check_scales(out, ("date", "id", "num"))
    check_str_attributes(out)
    for engine, ds in open_both(out).items():
        what = f"xarray ({engine})"
        E.check(ds["cv"].dims == ("date", "id", "num"), f"{what}: cv's dims are {ds['cv'].dims}")
        E.check(ds["cv"].dtype == np.float64, f"{what}: cv is {ds['cv'].dtype}")
        E.assert_bits_equal(ds["cv"].values, expected, f"{what}: cv")
        E.check((ds["date"].values == dates[3:9].values).all(), f"{what}: dates {ds['date'].values}")
        E.check(list(ds["id"].values) == list(ids[2:6]), f"{what}: ids {ds['id'].values}")
        E.check(np.array_equal(ds["num"].values, nums), f"{what}: nums {ds['num'].values}")
        E.check(ds["num"].attrs.get("units") == "years", f"{what}: num's units {ds['num'].attrs}")
        for key, value in (("units", "USD"), ("long_name", "multBy * discount"), ("discount_units", "1"),
                           ("discount_long_name", "discount factor"), ("discount_model", "m7")):
            E.check(ds["cv"].attrs.get(key) == value, f"{what}: cv's {key} is {ds['cv'].attrs.get(key)!r}")
        description = ds["cv"].attrs.get("description", "")
        E.check("notional" in description and "discount factor" in description and "model" not in ds["cv"].attrs,
                f"{what}: cv's description {description!r}, attributes {ds['cv'].attrs}")
        E.check(ds.attrs.get("title") == "curves of 2024", f"{what}: title {ds.attrs.get('title')!r}")
        E.check(ds.attrs.get("source", "").startswith("pricing model X; cv by discount_app"),
                f"{what}: source {ds.attrs.get('source')!r}")
        history = ds.attrs.get("history", "").split("\n")
        E.check(len(history) == 2 and "discount_app" in history[0] and history[1] == "written by the user",
                f"{what}: history {history}")
        # The selection by label works as on the input.
        picked = ds["cv"].sel(id="station-03", date="2024-03-05")
        E.assert_bits_equal(picked.values, expected[1, 1, :], f"{what}: cv.sel(id=..., date=...)")
    header = ncdump_header(out)
    for needle in ("double cv(date, id, num)", "date = 6 ;", "id = 4 ;", "num = 5 ;", 'cv:units = "USD"',
                   'cv:long_name = "multBy * discount"', 'cv:discount_long_name = "discount factor"', "string id(id)",
                   ':title = "curves of 2024"'):
        E.check(needle in header, f"ncdump -h has no '{needle}':\n{header}")
    print(f"xarray round trip of a [{D} x {I} x {N}] netCDF4 input, selection {sel}: coordinates and attributes kept")


def case_index_coordinates_keep_offset(ctx):
    """An h5py input without coordinates, stored [id][date][num]: the output's
    scales follow the file's order and hold the input's indices."""
    need_xarray()
    rng = np.random.default_rng(5)
    D, I, N = 9, 13, 3
    canon = E.random_nonzero(rng, (D, I, N))
    mult = E.random_nonzero(rng, (I, N))
    E.write_input(os.path.join(ctx.work, "in.h5"), mult, np.ascontiguousarray(canon.transpose(1, 0, 2)))
    axes = ("id", "date", "num")
    _, out, _ = run_job(ctx, "in.h5", {"dates": [4, 8], "ids": [5, 12]}, axes=axes)
    expected = np.ascontiguousarray((mult[None, 5:12, :] * canon[4:8, 5:12, :]).transpose(1, 0, 2))
    E.check_output(out, expected)
    check_scales(out, axes)
    check_str_attributes(out)
    import h5py
    with h5py.File(out, "r") as f:
        E.check(f["cv"].attrs["axes"] == "id,date,num", f"axes attribute {f['cv'].attrs['axes']!r}")
        g = f["discount_app"]
        E.check(list(g.attrs["input_dates"]) == [4, 8] and list(g.attrs["input_ids"]) == [5, 12],
                f"selection attributes {dict(g.attrs)}")
        for key in ("version", "config_path", "input_file", "host", "start_time", "end_time", "provenance"):
            E.check(isinstance(g.attrs.get(key), str) and g.attrs[key], f"provenance attribute {key}: {g.attrs.get(key)!r}")
        E.check(g.attrs["config_path"].endswith("job.yaml"), f"config_path {g.attrs['config_path']!r}")
    for engine, ds in open_both(out).items():
        what = f"xarray ({engine})"
        E.check(ds["cv"].dims == axes, f"{what}: cv's dims are {ds['cv'].dims}")
        E.check(list(ds["date"].values) == [4, 5, 6, 7], f"{what}: date {ds['date'].values}")
        E.check(list(ds["id"].values) == list(range(5, 12)), f"{what}: id {ds['id'].values}")
        E.check(list(ds["num"].values) == [0, 1, 2], f"{what}: num {ds['num'].values}")
        E.assert_bits_equal(ds["cv"].values, expected, f"{what}: cv")
        E.check(ds.attrs.get("title") and "discount_app" in ds.attrs.get("source", ""), f"{what}: root {ds.attrs}")
    header = ncdump_header(out)
    E.check("double cv(id, date, num)" in header and "int64 date(date)" in header, f"ncdump -h:\n{header}")
    print("index coordinates [4, 8) x [5, 12) in the file's order (id, date, num)")


def case_resume_adds_nothing(ctx):
    """A run killed after its first slab and resumed: one scale per axis, each
    attached once, one history line, the same attributes as a fresh run."""
    need_xarray()
    import h5py
    rng = np.random.default_rng(9)
    D, I, N = 8, 5, 7
    canon = E.random_nonzero(rng, (D, I, N))
    mult = E.random_nonzero(rng, (I, N))
    E.write_input(os.path.join(ctx.work, "in.h5"), mult, canon)
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), "in.h5", "out.h5", input={"dates": [1, 8]},
                      compute={"space": "host"}, memory={"max_slab": I * N * 8}, output={"checkpoint_seconds": 0})
    hold = E.Hold(ctx, 2)
    proc, _, _ = E.start([ctx.app, "run", job], ctx.work, os.path.join(ctx.work, "held"), hold.env)
    hold.wait(2, proc=proc)
    proc.kill()
    E.reap(proc)
    partial = os.path.join(ctx.work, "out.h5.partial")
    E.check(os.path.exists(partial), "no partial after the kill")
    with h5py.File(partial, "r") as f:
        before = {k: v for k, v in f.attrs.items()}, sorted(f["cv"].attrs.keys())
    r = E.expect_rc(E.app(ctx, "run", job), 0, "resume")
    E.check("resum" in (r.stdout + r.stderr).lower(), f"the second run did not resume:\n{r}")
    out = os.path.join(ctx.work, "out.h5")
    E.check_output(out, mult[None, :, :] * canon[1:8])
    check_scales(out, ("date", "id", "num"))
    check_str_attributes(out)
    with h5py.File(out, "r") as f:
        after = {k: v for k, v in f.attrs.items()}, sorted(f["cv"].attrs.keys())
        E.check(after == before, f"the resume changed the output's attributes: {before} -> {after}")
        E.check(len(f.attrs["history"].split("\n")) == 1, f"history {f.attrs['history']!r}")
        E.check(sorted(f.keys()) == ["cv", "date", "discount_app", "id", "num"], f"datasets {list(f.keys())}")
    for engine, ds in open_both(out).items():
        E.check(list(ds["date"].values) == list(range(1, 8)), f"xarray ({engine}): date {ds['date'].values}")
    print("killed after slab 2, resumed: scales and attributes as created, once")


def case_synthetic_input(ctx):
    """input.synthetic: index coordinates and a history naming the synthetic input."""
    need_xarray()
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), None, "out.h5",
                      input={"synthetic": {"dates": 5, "ids": 4, "nums": 3, "seed": 7}, "ids": [1, 3]},
                      compute={"space": "host"})
    E.expect_rc(E.app(ctx, "run", job), 0, "run")
    out = os.path.join(ctx.work, "out.h5")
    check_scales(out, ("date", "id", "num"))
    check_str_attributes(out)
    for engine, ds in open_both(out).items():
        E.check(ds["cv"].shape == (5, 2, 3) and list(ds["id"].values) == [1, 2], f"xarray ({engine}): {ds}")
        E.check("synthetic input" in ds.attrs["history"], f"xarray ({engine}): history {ds.attrs['history']!r}")
        E.check(np.all(ds["cv"].values != 0), f"xarray ({engine}): cv holds zeros")
    print("synthetic input: index coordinates, history names the synthetic input")


def case_split_layout(ctx):
    """output.layout: split: the master's virtual cv carries the same scales,
    coordinates and attributes, and xarray reads it whole under both engines,
    also after master and part folder are moved together."""
    need_xarray()
    import shutil
    D, I, N = 13, 9, 3
    disc, mult = write_netcdf_input(ctx, 31, (D, I, N), {"units": "1", "long_name": "discount factor"},
                                    coords={"date": np.arange(1000, 1000 + D), "id": np.arange(50, 50 + I) * 3})
    _, out, _ = run_job(ctx, "in.nc", {"dates": [2, 12]}, output={"layout": "split", "parts": 3},
                        memory={"max_slab": I * N * 8, "chunk_axis": "date"})
    expected = mult[None, :, :] * disc[2:12, :, :]
    import h5py
    with h5py.File(out, "r") as f:
        E.check(f["cv"].is_virtual, "cv of a split output should be a virtual dataset")
    check_scales(out, ("date", "id", "num"))
    check_str_attributes(out)
    moved = os.path.join(ctx.dir("moved"), "out.h5")
    shutil.move(out, moved)
    for entry in os.listdir(ctx.work):
        if entry.startswith("out.h5.parts-"):
            shutil.move(os.path.join(ctx.work, entry), os.path.join(os.path.dirname(moved), entry))
    for path in (moved,):
        for engine, ds in open_both(path).items():
            what = f"xarray ({engine}), split layout"
            E.check(ds["cv"].dims == ("date", "id", "num"), f"{what}: cv's dims are {ds['cv'].dims}")
            E.assert_bits_equal(ds["cv"].values, expected, f"{what}: cv")
            E.check(list(ds["date"].values) == list(range(1002, 1012)), f"{what}: dates {ds['date'].values}")
            E.check(list(ds["id"].values) == list(np.arange(50, 50 + I) * 3), f"{what}: ids {ds['id'].values}")
            E.check(ds["cv"].attrs.get("long_name") == "multBy * discount" and "units" not in ds["cv"].attrs and
                    ds["cv"].attrs.get("discount_long_name") == "discount factor", f"{what}: cv's attributes {ds['cv'].attrs}")
    header = ncdump_header(moved)
    for needle in ("double cv(date, id, num)", "date = 10 ;", "id = 9 ;", 'cv:discount_long_name = "discount factor"'):
        E.check(needle in header, f"ncdump -h of the split output has no '{needle}':\n{header}")
    print(f"split output of [{D} x {I} x {N}] (3 parts, moved with its folder): xarray and ncdump see cv whole")


CASES = [
    ("netcdf_roundtrip", case_netcdf_roundtrip),
    ("split_layout", case_split_layout),
    ("index_coordinates_keep_offset", case_index_coordinates_keep_offset),
    ("resume_adds_nothing", case_resume_adds_nothing),
    ("synthetic_input", case_synthetic_input),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
