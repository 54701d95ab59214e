#!/usr/bin/env python3
"""generate -> run -> verify -> independent h5py/NumPy check, over shapes,
slicings, budgets, layouts, sub-ranges, kernels and input encodings.

Every case checks: `plan` slab count (where a case forces one), exit 0, no
.partial left, `discount_app verify` passes, and the output dataset is
float64 and bit-identical (uint64 views) to NumPy's multBy[None] * discount
computed from the input file (converted to float64 by NumPy).
Jobs are run from a different working directory with relative paths in the
YAML, so relative paths must resolve against the YAML's directory.
"""

import os
import sys
import zlib

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DEPTH_DEFAULT = 3


def unit_bytes(shape, chunk):
    """(bytes one step of the chunk axis adds to a buffer, resident multBy) as the plan counts them."""
    dates, ids, nums = shape
    if chunk == "date":
        return ids * nums * 8, ids * nums * 8
    return dates * nums * 8 + nums * 8, 0


# Cases that pin the slab count through host_budget write through the page
# cache: the O_DIRECT staging (an eighth of the budget, sized by the machine's
# I/O threads) would shift the count. The plan's staging arithmetic is a unit
# test (Plan.StagingComesOutOfTheHostBudget); every other case here writes
# with O_DIRECT.
PAGE_CACHE = {"direct_io": False}


def host_budget_for(shape, chunk, per_slab, depth=DEPTH_DEFAULT):
    """A host budget whose plan holds exactly per_slab units of the chunk axis per slab
    (with output.direct_io false: no staging)."""
    unit, resident = unit_bytes(shape, chunk)
    return resident + depth * unit * per_slab + depth * unit - 1


def max_slab_for(shape, chunk, per_slab):
    dates, ids, nums = shape
    return per_slab * (ids * nums * 8 if chunk == "date" else dates * nums * 8)


def ceil_div(a, b):
    return -(-a // b)


def run_and_check(ctx, input_path, expected, axes=E.CANON, input_extra=None, output_extra=None,
                  compute=None, memory=None, expect_slabs=None, dataset="cv", **top):
    out = os.path.join(ctx.work, "out.h5")
    # These cases check the staging ring's slicing, budgets and O_DIRECT writes; on a
    # disk memory.staging: auto would take none for outputs this small (e2e_unstaged).
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), os.path.relpath(input_path, ctx.work), "out.h5",
                      input=dict({"axes": list(axes)} if tuple(axes) != E.CANON else {}, **(input_extra or {})),
                      output=output_extra, compute=compute, memory=dict({"staging": "ring"}, **(memory or {})),
                      **top)
    elsewhere = ctx.dir("cwd")  # relative paths must resolve against the YAML, not the cwd
    input_digest = E.file_digest(input_path)
    if expect_slabs is not None:
        slabs, text = E.plan_slabs(ctx, job)
        E.check(slabs == expect_slabs, f"plan: {slabs} slab(s), expected {expect_slabs}\n{text}")
    r = E.expect_rc(E.app(ctx, job, cwd=elsewhere), 0, "run")
    if (output_extra or {}).get("direct_io", True) and E.takes_o_direct(ctx.work):
        E.check("O_DIRECT writes" in r.stdout, f"the output was not written with O_DIRECT:\n{r}")
    E.check(not E.leftovers(out), f"leftover partial files after success: {E.leftovers(out)}")
    E.check(not os.listdir(elsewhere), f"the run wrote into its cwd: {os.listdir(elsewhere)}")
    v = E.expect_rc(E.app(ctx, "verify", job, cwd=elsewhere), 0, "verify")
    E.check("all equal" in v.stdout + v.stderr, f"verify did not report success:\n{v}")
    E.check_output(out, expected, dataset=dataset)
    E.check(E.file_digest(input_path) == input_digest, "the run or verify changed the input file")
    return r


def generated_case(shape, seed, axes=E.CANON, dates=None, ids=None, **kw):
    def case(ctx):
        if kw.get("compute", {}).get("kernel") == "blas" and not E.has_kokkos_kernels(ctx):
            raise E.Skip("built without Kokkos Kernels: compute.kernel: blas is refused (e2e_bad_input checks that)")
        d, i, n = shape
        src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), d, i, n, seed=seed, axes=axes)
        # The generator must honour --axes and write random non-zero float64.
        with E.h5py.File(src, "r") as f:
            file_shape = tuple(shape[E.CANON.index(a)] for a in axes)
            E.check(f["discount"].shape == file_shape, f"generate wrote {f['discount'].shape}, wanted {file_shape}")
            E.check(f["multBy"].shape == (i, n), f"generate wrote multBy {f['multBy'].shape}")
            for name in ("discount", "multBy"):
                a = f[name][...]
                E.check(a.dtype == np.float64 and np.all(a != 0) and np.all(np.isfinite(a)),
                        f"generate: {name} is not finite non-zero float64")
                if a.size > 4:
                    E.check(len(np.unique(a)) > a.size // 2, f"generate: {name} is not random")
        input_extra = dict(kw.pop("input_extra", {}))
        if dates:
            input_extra["dates"] = list(dates)
        if ids:
            input_extra["ids"] = list(ids)
        expected = E.expected_cv(src, axes=axes, dates=dates, ids=ids)
        run_and_check(ctx, src, expected, axes=axes, input_extra=input_extra, **kw)
    return case


def h5py_case(make, axes=E.CANON, **kw):
    """An input written by h5py (make(rng) -> dict of write_input kwargs)."""
    def case(ctx):
        src = os.path.join(ctx.work, "in.h5")
        spec = make(np.random.default_rng(zlib.crc32(make.__name__.encode())))
        names = {k: spec[k] for k in ("mult_name", "disc_name") if k in spec}
        E.write_input(src, **spec)
        expected = E.expected_cv(src, axes=axes, mult=names.get("mult_name", "multBy"),
                                 disc=names.get("disc_name", "discount"))
        input_extra = dict(kw.pop("input_extra", {}))
        if "mult_name" in names:
            input_extra["multiplier"] = names["mult_name"]
        if "disc_name" in names:
            input_extra["discount"] = names["disc_name"]
        run_and_check(ctx, src, expected, axes=axes, input_extra=input_extra, **kw)
    return case


# ---- inputs written with h5py ---------------------------------------------


def gzip_chunked(rng):
    m = E.random_nonzero(rng, (1013, 3))
    d = E.random_nonzero(rng, (5, 1013, 3))
    return dict(mult=m, disc=d, disc_kwargs=dict(chunks=(2, 101, 2), compression="gzip", shuffle=True),
                mult_kwargs=dict(chunks=(97, 3), compression="gzip"))


def float32(rng):
    return dict(mult=E.random_nonzero(rng, (509, 4), np.float32), disc=E.random_nonzero(rng, (6, 509, 4), np.float32))


def float16(rng):
    return dict(mult=E.random_nonzero(rng, (131, 2)).clip(-6e4, 6e4).astype(np.float16),
                disc=(rng.uniform(-2, 2, (3, 131, 2)) + 3).astype(np.float16))


def int32(rng):
    m = rng.integers(-2**31, 2**31 - 1, size=(257, 3), dtype=np.int32)
    d = rng.integers(-2**31, 2**31 - 1, size=(4, 257, 3), dtype=np.int32)
    m[0, 0], d[0, 0, 0], d[-1, -1, -1] = 2**31 - 1, -2**31, 1
    return dict(mult=m, disc=d)


def uint32_int8(rng):
    return dict(mult=rng.integers(1, 2**32 - 1, size=(211, 5), dtype=np.uint32),
                disc=rng.integers(-128, 127, size=(3, 211, 5), dtype=np.int8))


def big_endian_f64(rng):
    return dict(mult=E.random_nonzero(rng, (307, 3)), disc=E.random_nonzero(rng, (5, 307, 3)),
                mult_dtype=">f8", disc_dtype=">f8")


def big_endian_f32_transposed(rng):
    # [id, date, num] layout, big-endian float32, chunked.
    return dict(mult=E.random_nonzero(rng, (401, 3)), disc=E.random_nonzero(rng, (401, 4, 3)),
                mult_dtype="<f4", disc_dtype=">f4", disc_kwargs=dict(chunks=(50, 3, 3)))


def mixed_types(rng):
    return dict(mult=rng.integers(-1000, 1000, size=(97, 2), dtype=np.int32),
                disc=E.random_nonzero(rng, (3, 97, 2), np.float32))


def named_in_groups(rng):
    return dict(mult=E.random_nonzero(rng, (89, 3)), disc=E.random_nonzero(rng, (4, 89, 3)),
                mult_name="portfolio/weights", disc_name="curves/discount_factors")


def verify_detects_corruption(ctx):
    """`verify` must be able to fail: flip one element of a finished output."""
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), 3, 211, 4, seed=9)
    expected = E.expected_cv(src)
    run_and_check(ctx, src, expected)
    out = os.path.join(ctx.work, "out.h5")
    with E.h5py.File(out, "r+") as f:
        f["cv"][2, 210, 3] = np.nextafter(f["cv"][2, 210, 3], np.inf)
    r = E.app(ctx, "verify", os.path.join(ctx.work, "job.yaml"))
    E.check(r.rc != 0, f"verify accepted an output with one element off by 1 ulp:\n{r}")


def output_dataset_name(ctx):
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), 2, 101, 3, seed=21)
    run_and_check(ctx, src, E.expected_cv(src), output_extra={"dataset": "results"}, dataset="results")


def nan_outside_subrange(rng):
    m, d = E.random_nonzero(rng, (211, 3)), E.random_nonzero(rng, (6, 211, 3))
    d[0, 5, 1] = np.nan      # date 0 is outside dates [1, 6)
    d[3, 210, 2] = np.inf    # id 210 is outside ids [0, 200)
    m[205, 0] = -np.inf
    return dict(mult=m, disc=d)


def nonfinite_outside_subrange_ignored(ctx):
    """NaN/Inf outside input.dates / input.ids are not read, so not an error."""
    src = os.path.join(ctx.work, "in.h5")
    E.write_input(src, **nan_outside_subrange(np.random.default_rng(60)))
    expected = E.expected_cv(src, dates=(1, 6), ids=(0, 200))
    E.check(np.isfinite(expected).all(), "test setup: NaN inside the sub-range")
    run_and_check(ctx, src, expected, input_extra={"dates": [1, 6], "ids": [0, 200]},
                  memory={"chunk_axis": "id", "max_slab": max_slab_for((5, 200, 3), "id", 30)}, expect_slabs=7)


def paths_with_spaces(ctx):
    sub = ctx.dir("in put dir")
    src = E.generate(ctx, os.path.join(sub, "in file.h5"), 3, 101, 2, seed=61)
    os.makedirs(os.path.join(ctx.work, "out dir: results"))
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), "in put dir/in file.h5", "out dir: results/cv #1.h5")
    E.expect_rc(E.app(ctx, "run", "-q", job), 0, "run")
    E.expect_rc(E.app(ctx, "verify", job), 0, "verify")
    E.check_output(os.path.join(ctx.work, "out dir: results", "cv #1.h5"), E.expected_cv(src))


def dry_run_writes_nothing(ctx):
    E.generate(ctx, os.path.join(ctx.work, "in.h5"), 5, 307, 3, seed=50)
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), "in.h5", "out.h5",
                      memory={"max_slab": max_slab_for((5, 307, 3), "date", 2)})
    before = E.tree_digest(ctx.work)
    r = E.expect_rc(E.app(ctx, "run", "--dry-run", job), 0, "dry run")
    E.check("3 slab(s)" in r.stdout, f"dry run did not print the plan:\n{r}")
    after = {k: v for k, v in E.tree_digest(ctx.work).items() if not k.startswith("cmd")}
    E.check(after == {k: v for k, v in before.items() if not k.startswith("cmd")},
            f"--dry-run wrote or changed files: {sorted(set(after) ^ set(before))}")
    # The plan also shows the output against free disk, a predicted time per
    # stage (configured disk speeds here), and the config with every default.
    E.write_job(job, "in.h5", "out.h5", memory={"max_slab": max_slab_for((5, 307, 3), "date", 2)},
                limits={"read": "0.5GB/s", "write": 0.25})
    r = E.expect_rc(E.app(ctx, "run", "--dry-run", job), 0, "dry run with limits")
    out_bytes = 5 * 307 * 3 * 8
    for needle in ("free there", "predicted", "resolved configuration", "pipeline_depth: 3", "nonfinite: error"):
        E.check(needle in r.stdout, f"dry run output lacks {needle!r}:\n{r}")
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()
            if line.strip().startswith(("read ", "write ")) and line.rstrip().endswith("config limits:")}
    E.check(set(rows) == {"read", "write"}, f"no predicted rows for the configured disk speeds:\n{r}")
    # write: cv bytes at 0.25 GB/s (row: stage, bytes, GB, GB/s, seconds, source)
    E.check(abs(float(rows["write"][4]) - out_bytes / 0.25e9) < 1e-3,
            f"predicted write seconds {rows['write'][4]}, expected {out_bytes / 0.25e9:.6f}:\n{r}")


def report_json(ctx):
    """report: relative to the YAML; the JSON parses and its counts match the job."""
    shape = (6, 1009, 3)
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), *shape, seed=51)
    run_and_check(ctx, src, E.expected_cv(src), memory={"max_slab": max_slab_for(shape, "date", 2)},
                  expect_slabs=3)
    job = E.write_job(os.path.join(ctx.work, "job2.yaml"), "in.h5", "out2.h5",
                      memory={"max_slab": max_slab_for(shape, "date", 2)}, report="reports/run.json")
    os.makedirs(os.path.join(ctx.work, "reports"))
    E.expect_rc(E.app(ctx, "run", "-q", job, cwd=ctx.dir("cwd2")), 0, "run with report")
    path = os.path.join(ctx.work, "reports", "run.json")
    E.check(os.path.exists(path), "report not written next to the YAML")
    with open(path) as f:
        report = E.json.load(f)
    print(E.json.dumps({k: v for k, v in report.items() if k not in ("config", "plan")}, indent=1)[:1500])
    E.check(report.get("outcome") == "complete", f"outcome {report.get('outcome')!r}")
    E.check(report.get("slabs", {}).get("total") == 3, f"slabs {report.get('slabs')}")
    E.check(report.get("output_bytes") == 8 * shape[0] * shape[1] * shape[2], f"output_bytes {report.get('output_bytes')}")


def config_round_trip(ctx):
    """`discount_app config` prints a complete config that runs the same job."""
    shape = (5, 503, 3)
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), *shape, seed=52)
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), "in.h5", "out.h5", input={"dates": [1, 4]},
                      compute={"parallel_dims": ["id"]},
                      # Fixed budgets: a percentage of free memory moves between two plans on a shared GPU.
                      memory={"max_slab": max_slab_for(shape, "date", 1), "host_budget": "64MiB",
                              "device_budget": "64MiB"})
    r = E.expect_rc(E.app(ctx, "config", job), 0, "config")
    sub = ctx.dir("printed")
    printed = E.write_text(os.path.join(sub, "job.yaml"), r.stdout.replace(os.path.join(ctx.work, "out.h5"),
                                                                           os.path.join(sub, "out.h5")))
    def layout(job_yaml):
        """The plan up to the measured link speeds or the prediction (those vary run to run),
        without the output line (it names the output's directory)."""
        text = E.plan_slabs(ctx, job_yaml)[1].split("\n", 1)[1].split("\nlimits ", 1)[0].split("\npredicted", 1)[0]
        return [line for line in text.splitlines() if not line.startswith("output ")]
    E.check(layout(printed) == layout(job), "the printed config plans differently")
    E.expect_rc(E.app(ctx, "run", "-q", printed), 0, "run the printed config")
    E.check_output(os.path.join(sub, "out.h5"), E.expected_cv(src, dates=(1, 4)))


def synthetic_matches_generate(ctx):
    """input.synthetic computes on the values `generate` writes for the same seed."""
    shape = (4, 1009, 3)
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), *shape, seed=53)
    job = E.write_job(os.path.join(ctx.work, "job.yaml"), None, "out.h5",
                      input={"synthetic": {"dates": shape[0], "ids": shape[1], "nums": shape[2], "seed": 53}},
                      memory={"max_slab": max_slab_for(shape, "date", 1)})
    E.expect_rc(E.app(ctx, "run", "-q", job), 0, "synthetic run")
    E.check_output(os.path.join(ctx.work, "out.h5"), E.expected_cv(src))
    E.expect_rc(E.app(ctx, "verify", job), 0, "verify synthetic")


def chunk_axis_auto(ctx):
    """memory.chunk_axis: auto (the default) takes id slabs when one date's
    slab does not fit host_budget, says why in `plan`, the run's header and
    the JSON report, and the result is exact; with room for a date, date."""
    shape = (3, 4099, 5)
    src = E.generate(ctx, os.path.join(ctx.work, "in.h5"), *shape, seed=55)
    unit, resident = unit_bytes(shape, "date")
    budget = 400 * 1024  # under the 3 date buffers and multBy: 4 x 160 KB
    E.check(budget < resident + DEPTH_DEFAULT * unit, "test setup: one date must not fit")
    id_unit, _ = unit_bytes(shape, "id")
    slabs = ceil_div(shape[1], budget // (DEPTH_DEFAULT * id_unit))
    r = run_and_check(ctx, src, E.expected_cv(src), output_extra=PAGE_CACHE, memory={"host_budget": "400KiB"},
                      expect_slabs=slabs, report="run.json")
    # Not a terminal: status lines start with the UTC time (drop it).
    lines = [line.split(" ", 1)[1] if line[:4].isdigit() else line for line in r.stdout.splitlines()]
    header = next((line for line in lines if line.startswith("[discount_app] chunk ")), "")
    E.check(header.startswith("[discount_app] chunk  id (auto: one date needs 3 buffer(s) x ")
            and header.endswith(", over memory.host_budget 400 KiB)"), f"run header: {header!r}\n{r}")
    # Planned again once the output exists: its axis is kept (a rerun finds it complete).
    plan = E.plan_slabs(ctx, os.path.join(ctx.work, "job.yaml"))[1]
    E.check("chunk axis     id, " in plan and "(auto: kept from the finished output)" in plan, f"plan:\n{plan}")
    with open(os.path.join(ctx.work, "run.json")) as f:
        plan = E.json.load(f)["plan"]
        E.check(plan["chunk_axis"] == "id" and plan["chunk_axis_reason"].startswith("auto: one date needs "),
                f"the report's plan lacks the chunk axis and its reason: {plan}")
    cfg = E.expect_rc(E.app(ctx, "config", os.path.join(ctx.work, "job.yaml")), 0, "config").stdout
    E.check("chunk_axis: auto" in cfg, f"config does not print chunk_axis: auto:\n{cfg}")
    # Room for a date: date slabs, and the plan says so.
    wide = E.write_job(os.path.join(ctx.dir("wide"), "job.yaml"), src, "out.h5", memory={"host_budget": "64MiB"})
    plan = E.plan_slabs(ctx, wide)[1]
    E.check("chunk axis     date, " in plan and "(auto: a one-date slab fits the budgets)" in plan, f"plan:\n{plan}")


def generate_values(ctx, path, shape, seed, values, env=None, axes=E.CANON):
    """`generate --values VALUES` of shape (dates, ids, nums); returns (multBy, discount [date, id, num])."""
    d, i, n = shape
    E.expect_rc(E.app(ctx, "generate", "--dates", d, "--ids", i, "--nums", n, "--out", path, "--seed", seed,
                      "--axes", ",".join(axes), "--values", values, env=env), 0, f"generate --values {values}")
    with E.h5py.File(path, "r") as f:
        disc = f["discount"][...]
        named = f["discount"].attrs["axes"]
        named = named.decode() if isinstance(named, bytes) else named
        E.check(named == ",".join(axes), f"discount's axes attribute: {named!r}")
        return f["multBy"][...], np.transpose(disc, [list(axes).index(a) for a in E.CANON])


def realistic_values(ctx):
    """--values realistic: discount factors in (0, 1] that fall along dates for
    every (id, num), at a 4-decimal rate shared by many ids; multBy amounts in
    cents within [1, 1e6]; the same numbers on 1 or 3 threads and in any axes
    order; run and verify take the file like any other."""
    shape = (14, 3001, 5)
    src = os.path.join(ctx.work, "in.h5")
    mult, disc = generate_values(ctx, src, shape, 3, "realistic", env={"DISCOUNT_IO_THREADS": "1"})
    E.check(mult.shape == shape[1:] and disc.shape == shape and disc.dtype == np.float64 == mult.dtype,
            f"shapes {mult.shape} {disc.shape}, dtypes {mult.dtype} {disc.dtype}")
    E.check(np.all(disc > 0) and np.all(disc <= 1), f"discount outside (0, 1]: {disc.min()} .. {disc.max()}")
    E.check(np.all(np.diff(disc, axis=0) < 0), "discount does not fall along dates for every (id, num)")
    rate_units = -np.log(disc[0]) * 12 * 1e4  # the rate in units of 0.0001, from the first date (t = 1/12)
    E.check(np.all(np.abs(rate_units - np.round(rate_units)) < 1e-2), "rates are not of 4 decimals")
    rates = np.round(rate_units).astype(np.int64)
    E.check(rates.min() >= 50 and rates.max() <= 800, f"rates {rates.min()} .. {rates.max()} (x 0.0001)")
    E.check(len(np.unique(rates)) <= 751 < rates.size, f"{len(np.unique(rates))} distinct rates")
    t = (np.arange(shape[0]) + 1) / 12
    expected = np.round(np.exp(-(rates / 1e4)[None] * t[:, None, None]) * 1e8) / 1e8
    E.check(np.abs(disc - expected).max() <= 1.01e-8, "discount is not exp(-r t) to 8 decimals")
    cents = mult * 100
    E.check(np.all(np.abs(cents - np.round(cents)) <= 1e-9 * cents), "multBy is not in whole cents")
    E.check(mult.min() >= 1 and mult.max() <= 1e6, f"multBy {mult.min()} .. {mult.max()}")
    for threads, axes in (("3", E.CANON), ("2", ("id", "date", "num"))):
        m2, d2 = generate_values(ctx, os.path.join(ctx.work, f"again_{threads}.h5"), shape, 3, "realistic",
                                 env={"DISCOUNT_IO_THREADS": threads}, axes=axes)
        E.check(np.array_equal(m2, mult) and np.array_equal(d2, disc),
                f"{threads} threads, axes {axes}: other values than 1 thread")
    run_and_check(ctx, src, E.expected_cv(src), memory={"max_slab": max_slab_for(shape, "date", 4)}, expect_slabs=4)


def realistic_compresses(ctx):
    """gzip (level 4, one date per chunk) stores realistic discount factors in
    well under half the bytes it takes for random ones; with the shuffle
    filter in front, which splits each double's bytes apart and so hides the
    repeated values from gzip, realistic is still no larger than random."""
    shape = (12, 20011, 5)
    sizes = {}
    for values in ("random", "realistic"):
        _, disc = generate_values(ctx, os.path.join(ctx.work, f"{values}.h5"), shape, 4, values)
        for shuffle in (False, True):
            path = os.path.join(ctx.work, f"{values}_{shuffle}_gzip.h5")
            with E.h5py.File(path, "w") as f:
                f.create_dataset("discount", data=disc, chunks=(1,) + shape[1:], compression="gzip",
                                 compression_opts=4, shuffle=shuffle)
            with E.h5py.File(path, "r") as f:
                sizes[values, shuffle] = f["discount"].id.get_storage_size()
    ratios = {k: disc.nbytes / v for k, v in sizes.items()}
    print("compression ratios (raw / stored):", {f"{k[0]}{' shuffle' if k[1] else ''}": round(v, 2)
                                                 for k, v in ratios.items()})
    E.check(ratios["realistic", False] >= 2 * ratios["random", False],
            f"gzip: realistic {ratios['realistic', False]:.2f} vs random {ratios['random', False]:.2f}")
    E.check(sizes["realistic", True] <= sizes["random", True],
            f"shuffle + gzip: realistic {sizes['realistic', True]} B vs random {sizes['random', True]} B")


# ---- the table --------------------------------------------------------------

S = (14, 1009, 3)  # multi-slab workhorse: 14 dates, prime ids

CASES = [
    # shapes
    ("shape_1x1x1", generated_case((1, 1, 1), seed=1)),
    ("shape_7x1009x3", generated_case((7, 1009, 3), seed=2)),
    ("shape_one_date_1x4099x5", generated_case((1, 4099, 5), seed=3)),
    ("shape_one_id_11x1x7", generated_case((11, 1, 7), seed=4)),
    ("shape_one_num_5x1021x1", generated_case((5, 1021, 1), seed=5)),
    ("shape_1x1x1_chunk_id", generated_case((1, 1, 1), seed=6, memory={"chunk_axis": "id"})),
    # chunk axis
    ("chunk_date_many", generated_case(S, seed=7, memory={"chunk_axis": "date", "max_slab": max_slab_for(S, "date", 1)},
                                       expect_slabs=14)),
    ("chunk_id_7_slabs", generated_case(S, seed=8, memory={"chunk_axis": "id",
                                                           "max_slab": max_slab_for(S, "id", 145)},
                                        expect_slabs=7)),
    # parallel dims (with several slabs so every slab is computed by the kernel under test)
    *[(f"parallel_{'_'.join(p)}", generated_case((5, 1009, 3), seed=10 + k,
                                                 compute={"parallel_dims": list(p)},
                                                 memory={"max_slab": max_slab_for((5, 1009, 3), "date", 2)},
                                                 expect_slabs=3))
      for k, p in enumerate([("date", "id", "num"), ("date",), ("id",), ("num",), ("id", "num"), ("date", "num")])],
    ("parallel_id_date_num_order", generated_case((3, 307, 5), seed=17,
                                                  compute={"parallel_dims": ["num", "date", "id"]})),
    ("parallel_date_chunk_id", generated_case((6, 1009, 3), seed=18, compute={"parallel_dims": ["date"]},
                                              memory={"chunk_axis": "id",
                                                      "max_slab": max_slab_for((6, 1009, 3), "id", 100)},
                                              expect_slabs=11)),
    # tiles
    ("tile_2_32_3", generated_case((5, 1009, 3), seed=19, compute={"parallel_dims": ["date", "id", "num"],
                                                                   "tile": [2, 32, 3]})),
    ("tile_odd_3_7_1", generated_case((5, 1009, 3), seed=20, compute={"parallel_dims": ["date", "id", "num"],
                                                                      "tile": [3, 7, 1]})),
    ("tile_id_num_64_2", generated_case((4, 1009, 3), seed=21, compute={"parallel_dims": ["id", "num"],
                                                                        "tile": [64, 2]})),
    ("tile_single_dim_1", generated_case((3, 101, 3), seed=22, compute={"parallel_dims": ["id"], "tile": [1]})),
    ("tile_larger_than_extent", generated_case((2, 3, 1), seed=62, compute={"parallel_dims": ["date", "id", "num"],
                                                                           "tile": [8, 64, 2]})),
    ("tile_auto", generated_case((3, 101, 3), seed=23, compute={"tile": "auto"})),
    # budgets: 1, 2, 7 and many slabs, by host_budget and by max_slab
    ("budget_1_slab", generated_case(S, seed=24, expect_slabs=1)),
    ("budget_2_slabs_host", generated_case(S, seed=25, memory={"host_budget": host_budget_for(S, "date", 7)},
                                           expect_slabs=2, output_extra=PAGE_CACHE)),
    ("budget_7_slabs_host", generated_case(S, seed=26, memory={"host_budget": host_budget_for(S, "date", 2)},
                                           expect_slabs=7, output_extra=PAGE_CACHE)),
    ("budget_many_slabs_host", generated_case(S, seed=27, memory={"host_budget": host_budget_for(S, "date", 1)},
                                              expect_slabs=14, output_extra=PAGE_CACHE)),
    ("budget_2_slabs_max_slab", generated_case(S, seed=28, memory={"max_slab": max_slab_for(S, "date", 7)},
                                               expect_slabs=2)),
    ("budget_7_slabs_max_slab", generated_case(S, seed=29, memory={"max_slab": max_slab_for(S, "date", 2)},
                                               expect_slabs=7)),
    ("budget_uneven_last_slab", generated_case(S, seed=30, memory={"max_slab": max_slab_for(S, "date", 4)},
                                               expect_slabs=4)),
    ("budget_many_slabs_chunk_id", generated_case((3, 1009, 3), seed=31,
                                                  memory={"chunk_axis": "id",
                                                          "host_budget": host_budget_for((3, 1009, 3), "id", 16)},
                                                  expect_slabs=ceil_div(1009, 16), output_extra=PAGE_CACHE)),
    ("budget_units_kib", generated_case((7, 1003, 5), seed=3, memory={"host_budget": "200KiB"}, expect_slabs=7,
                                        output_extra=PAGE_CACHE)),
    # output.layout: split (e2e_split_layout covers its protocol): the same checks over part files
    ("split_7_slabs_3_parts", generated_case(S, seed=126, memory={"max_slab": max_slab_for(S, "date", 2)},
                                             expect_slabs=7, output_extra={"layout": "split", "parts": 3})),
    ("split_chunk_id_axes_id_date_num", generated_case((6, 1009, 3), seed=135, axes=("id", "date", "num"),
                                                       memory={"chunk_axis": "id",
                                                               "max_slab": max_slab_for((6, 1009, 3), "id", 300)},
                                                       expect_slabs=4,
                                                       output_extra={"layout": "split", "parts": 2})),
    ("split_subrange_page_cache", generated_case((9, 1013, 3), seed=136, dates=(2, 8), ids=(5, 1000),
                                                 memory={"max_slab": max_slab_for((6, 995, 3), "date", 1)},
                                                 expect_slabs=6,
                                                 output_extra=dict(PAGE_CACHE, layout="split", parts=4))),
    # pipeline depth
    ("depth_1", generated_case(S, seed=32, memory={"pipeline_depth": 1,
                                                   "host_budget": host_budget_for(S, "date", 2, depth=1)},
                               expect_slabs=7, output_extra=PAGE_CACHE)),
    ("depth_4", generated_case(S, seed=33, memory={"pipeline_depth": 4,
                                                   "host_budget": host_budget_for(S, "date", 3, depth=4)},
                               expect_slabs=5, output_extra=PAGE_CACHE)),
    # axes order of the file; the output keeps it
    # date slabs of a transposed file: one strided run per id (auto would take id, below)
    ("axes_id_date_num", generated_case((6, 1009, 3), seed=34, axes=("id", "date", "num"),
                                        memory={"chunk_axis": "date",
                                                "max_slab": max_slab_for((6, 1009, 3), "date", 2)}, expect_slabs=3)),
    # chunk_axis: auto weighs the layout: 48 B runs per id for date slabs, one run for id slabs
    ("axes_id_date_num_auto_takes_id", generated_case((6, 1009, 3), seed=134, axes=("id", "date", "num"),
                                                      memory={"max_slab": max_slab_for((6, 1009, 3), "date", 2)},
                                                      expect_slabs=4)),
    ("axes_id_date_num_chunk_id", generated_case((6, 1009, 3), seed=35, axes=("id", "date", "num"),
                                                 memory={"chunk_axis": "id",
                                                         "max_slab": max_slab_for((6, 1009, 3), "id", 300)},
                                                 expect_slabs=4)),
    ("axes_num_date_id", generated_case((4, 211, 3), seed=36, axes=("num", "date", "id"),
                                        compute={"parallel_dims": ["id"]},
                                        memory={"max_slab": max_slab_for((4, 211, 3), "date", 1)}, expect_slabs=4)),
    ("axes_date_num_id", generated_case((4, 211, 3), seed=37, axes=("date", "num", "id"))),
    # sub-ranges (the output has the sub-range's shape)
    ("subrange_dates", generated_case((9, 503, 3), seed=38, dates=(2, 7))),
    ("subrange_ids", generated_case((4, 1009, 3), seed=39, ids=(101, 1000))),
    ("subrange_both_chunk_id", generated_case((9, 1009, 3), seed=40, dates=(1, 8), ids=(3, 1004),
                                              memory={"chunk_axis": "id",
                                                      "max_slab": max_slab_for((7, 1001, 3), "id", 100)},
                                              expect_slabs=11)),
    ("subrange_both_multislab_date", generated_case((9, 1009, 3), seed=41, dates=(3, 9), ids=(0, 17),
                                                    memory={"max_slab": max_slab_for((6, 17, 3), "date", 1)},
                                                    expect_slabs=6)),
    ("subrange_single_element", generated_case((5, 211, 3), seed=42, dates=(4, 5), ids=(210, 211))),
    ("subrange_axes_id_date_num", generated_case((8, 307, 3), seed=43, axes=("id", "date", "num"), dates=(2, 6),
                                                 ids=(5, 300), memory={"chunk_axis": "date",
                                                                                "max_slab": max_slab_for((4, 295, 3), "date", 1)},
                                                 expect_slabs=4)),
    # kernels and spaces
    ("kernel_blas", generated_case((5, 1009, 3), seed=44, compute={"kernel": "blas"})),
    ("kernel_blas_multislab_chunk_id", generated_case((5, 1009, 3), seed=45, compute={"kernel": "blas"},
                                                      memory={"chunk_axis": "id",
                                                              "max_slab": max_slab_for((5, 1009, 3), "id", 250)},
                                                      expect_slabs=5)),
    ("kernel_blas_subrange", generated_case((5, 1009, 3), seed=46, compute={"kernel": "blas"}, dates=(1, 4),
                                            ids=(7, 1001))),
    ("space_host", generated_case((5, 1009, 3), seed=47, compute={"space": "host"},
                                  memory={"max_slab": max_slab_for((5, 1009, 3), "date", 2)}, expect_slabs=3)),
    # inputs written with h5py
    ("h5py_gzip_chunked", h5py_case(gzip_chunked)),
    ("h5py_gzip_chunked_chunk_id", h5py_case(gzip_chunked, memory={"chunk_axis": "id",
                                                                   "max_slab": max_slab_for((5, 1013, 3), "id", 100)},
                                             expect_slabs=11)),
    ("h5py_float32", h5py_case(float32)),
    ("h5py_float16", h5py_case(float16)),
    ("h5py_int32", h5py_case(int32)),
    ("h5py_uint32_int8", h5py_case(uint32_int8)),
    ("h5py_big_endian_f64", h5py_case(big_endian_f64, memory={"max_slab": max_slab_for((5, 307, 3), "date", 2)},
                                      expect_slabs=3)),
    ("h5py_big_endian_f32_axes_id_date_num", h5py_case(big_endian_f32_transposed, axes=("id", "date", "num"))),
    ("h5py_mixed_int32_float32", h5py_case(mixed_types)),
    ("h5py_datasets_in_groups", h5py_case(named_in_groups)),
    # output naming, and verify's own ability to fail
    ("output_dataset_name", output_dataset_name),
    ("verify_full_after_run", generated_case((4, 503, 3), seed=54, verify="full")),
    ("dry_run_writes_nothing", dry_run_writes_nothing),
    ("nonfinite_outside_subrange_ignored", nonfinite_outside_subrange_ignored),
    ("paths_with_spaces", paths_with_spaces),
    ("report_json", report_json),
    ("config_round_trip", config_round_trip),
    ("synthetic_matches_generate", synthetic_matches_generate),
    ("realistic_values", realistic_values),
    ("realistic_compresses", realistic_compresses),
    ("chunk_axis_auto", chunk_axis_auto),
    ("verify_detects_corruption", verify_detects_corruption),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
