#!/usr/bin/env python3
"""Bad input, table-driven: one row per failure mode.

Each row sets up a job directory and names the expected exit code and a
substring (and, where the contract asks for it, a regex such as the
file:line:col of a YAML error) of the error. For every row the test asserts:
  - the exit code;
  - stderr is exactly one line (nothing is ignored: progress or banner lines
    printed before the error are counted) and contains the substring;
  - no <out> file and no <out>.partial / .partial.tmp left behind
    (74 rows may keep a .partial: the contract keeps it for resume);
  - every file that existed before the run (the input above all) is
    byte-identical afterwards, and no other file appeared.
Rows that expect success (nonfinite: propagate, overwrite: true, --restart)
check the output against NumPy instead.

Rows whose name starts with BUG_ fail today because of an app bug; the
name says what is wrong. They stay enabled so the fix shows up as a pass.
"""

import os
import re
import shlex
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

SHAPE = (6, 1009, 3)  # dates, ids, nums


class Row:
    def __init__(self, name, setup, rc, substr, regex=None, one_line=True, post=None, argv=None):
        self.name, self.setup, self.rc, self.substr, self.regex = name, setup, rc, substr, regex
        self.one_line, self.post, self.argv = one_line, post, argv


def good_input(d, seed=1, shape=SHAPE, name="in.h5"):
    rng = np.random.default_rng(seed)
    dates, ids, nums = shape
    return E.write_input(os.path.join(d, name), E.random_nonzero(rng, (ids, nums)),
                         E.random_nonzero(rng, (dates, ids, nums)))


def job(d, input=None, output=None, compute=None, memory=None, in_file="in.h5", out_file="out.h5", **top):
    return E.write_job(os.path.join(d, "job.yaml"), in_file, out_file, input=input, output=output,
                       compute=compute, memory=memory, **top)


def yaml_text(text):
    """A row whose job.yaml is the given text, next to a good input."""
    def setup(ctx, d):
        good_input(d)
        return [E.write_text(os.path.join(d, "job.yaml"), text)]
    return setup


def with_input(write, **job_kw):
    """A row whose input is written by write(path) with h5py."""
    def setup(ctx, d):
        write(os.path.join(d, "in.h5"))
        return [job(d, **job_kw)]
    return setup


def blas_without_kokkos_kernels(ctx, d):
    if E.has_kokkos_kernels(ctx):
        raise E.Skip("built with Kokkos Kernels: compute.kernel: blas runs")
    good_input(d)
    return [job(d, compute={"kernel": "blas"})]


def with_job(**job_kw):
    def setup(ctx, d):
        good_input(d)
        return [job(d, **job_kw)]
    return setup


def h5(path, **datasets):
    with E.h5py.File(path, "w") as f:
        for name, spec in datasets.items():
            if isinstance(spec, tuple) and spec and spec[0] == "empty":
                f.create_dataset(name, shape=spec[1], dtype=spec[2], chunks=spec[3] if len(spec) > 3 else None)
            elif isinstance(spec, str) and spec == "group":
                f.create_group(name)
            else:
                f.create_dataset(name, data=spec)


RNG = np.random.default_rng(7)
M = E.random_nonzero(RNG, (SHAPE[1], SHAPE[2]))
D = E.random_nonzero(RNG, SHAPE)


def nonfinite_input(where, index, value):
    def write(path):
        m, d = M.copy(), D.copy()
        (m if where == "multBy" else d)[index] = value
        h5(path, multBy=m, discount=d)
    return write


def nan_first_of_two(ctx, d):
    """Two NaNs in one slab of 1.8M elements, in different 1 MiB pieces that
    four reader threads scan at once: the message names the first in the file."""
    rng = np.random.default_rng(5)
    m, disc = E.random_nonzero(rng, (120007, 5)), E.random_nonzero(rng, (3, 120007, 5))
    disc[2, 10, 1] = np.nan
    disc[0, 110000, 3] = np.nan
    h5(os.path.join(d, "in.h5"), multBy=m, discount=disc)
    return ["bash", "-c", f"DISCOUNT_IO_THREADS=4 exec {shlex.quote(ctx.app)} run -q {shlex.quote(job(d))}"]


MULTI_SLAB = {"max_slab": SHAPE[1] * SHAPE[2] * 8}  # one date per slab: the NaN is found after slabs were written

# ---- rows with their own setup ------------------------------------------------


def config_missing(ctx, d):
    good_input(d)
    return [os.path.join(d, "no_such_job.yaml")]


def not_hdf5(ctx, d):
    E.write_text(os.path.join(d, "in.h5"), "multBy,discount\n1,2\n" * 100)
    return [job(d)]


def input_is_dir(ctx, d):
    os.makedirs(os.path.join(d, "in.h5"))
    return [job(d)]


def outdir_missing(ctx, d):
    good_input(d)
    return [job(d, out_file="no_such_dir/deeper/out.h5")]


def check_outdir_created(ctx, d, result):
    """The missing folders were made (mode 0777 less the umask) and hold the right output."""
    E.check_output(os.path.join(d, "no_such_dir", "deeper", "out.h5"), E.expected_cv(os.path.join(d, "in.h5")))
    umask = os.umask(0)
    os.umask(umask)
    for sub in ("no_such_dir", os.path.join("no_such_dir", "deeper")):
        mode = os.stat(os.path.join(d, sub)).st_mode & 0o777
        E.check(mode == 0o777 & ~umask, f"folder {sub} has mode {mode:o}, expected {0o777 & ~umask:o}")


def outdir_under_a_file(ctx, d):
    good_input(d)
    E.write_text(os.path.join(d, "blocker"), "a file where a folder would go\n")
    return [job(d, out_file="blocker/sub/out.h5")]


class _ReadOnlyRow:
    """The output directory is read-only; made so as root with chattr +i or a read-only mount."""

    def __call__(self, ctx, d):
        good_input(d)
        self.ro = E.ReadOnlyDir(os.path.join(d, "ro"))
        self.ro.__enter__()
        ctx.cleanup.append(lambda: self.ro.__exit__(None, None, None))
        print(f"read-only directory made with {self.ro.how}")
        return [job(d, out_file="ro/out.h5")]


class _ReadOnlyParentRow(_ReadOnlyRow):
    """The output's missing folder would go inside a read-only one: it cannot be created."""

    def __call__(self, ctx, d):
        super().__call__(ctx, d)
        return [job(d, out_file="ro/sub/out.h5")]


def out_exists(overwrite):
    def setup(ctx, d):
        good_input(d)
        E.poison(os.path.join(d, "out.h5"))
        return [job(d, output={"overwrite": True} if overwrite else None)]
    return setup


def check_replaced(ctx, d, result):
    E.check_output(os.path.join(d, "out.h5"), E.expected_cv(os.path.join(d, "in.h5")))


def budget_too_small(ctx, d):
    good_input(d)
    # multBy alone (1009 x 3 x 8 bytes = 24 KiB) exceeds it; date slabs set
    # explicitly (chunk_axis: auto would take id slabs, which fit)
    return [job(d, memory={"host_budget": "16KiB", "chunk_axis": "date"})]


def budget_too_small_auto(ctx, d):
    good_input(d)
    # Neither one date (24 KiB and multBy) nor three ids (3 x 168 B) and the
    # O_DIRECT staging fit 1 KiB.
    return [job(d, memory={"host_budget": "1KiB"})]


# ---- errors that name the fix: candidates for a missing dataset, the axes that fit


def grouped_input(path):
    """Datasets in groups, none at the names the job asks for."""
    h5(path, **{"rates/mult": M, "rates/disc": D, "rates/curve": np.ones(5), "notes": np.ones((2, 2))})


def transposed_input(path):
    """discount stored [id][date][num]: a job without input.axes reads it as [date][id][num]."""
    h5(path, multBy=M, discount=np.ascontiguousarray(D.transpose(1, 0, 2)))


def no_candidates_input(path):
    h5(path, multBy=M, **{"rates/curve": np.ones(5)})


AXES_HINT = "input.axes: [id, date, num] would fit"


def transposed_with_suggested_axes(ctx, d):
    """Runs the job without input.axes, takes the axes its error suggests,
    and returns the job with them: it must then run and be exact."""
    transposed_input(os.path.join(d, "in.h5"))
    r = E.run(ctx, [ctx.app, "run", job(d)], cwd=ctx.dir("cwd"))
    E.check(r.rc == 65 and AXES_HINT in r.stderr, f"expected exit 65 naming {AXES_HINT!r}:\n{r}")
    suggested = re.search(r"input\.axes: \[(\w+), (\w+), (\w+)\] would fit", r.stderr)
    return [job(d, input={"axes": list(suggested.groups())})]


def check_transposed(ctx, d, result):
    E.check_output(os.path.join(d, "out.h5"), E.expected_cv(os.path.join(d, "in.h5"), axes=("id", "date", "num")))


def verify_output_dataset_missing(ctx, d):
    """verify against an output whose dataset has another name: the output's candidates are listed."""
    good_input(d)
    E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job(d)], cwd=ctx.dir("cwd")), 0, "run")
    return ["verify", job(d, output={"dataset": "result"})]


def empty_dim(shape_m, shape_d):
    def write(path):
        h5(path, multBy=np.ones(shape_m), discount=np.ones(shape_d))
    return write


def foreign_partial(ctx, d):
    """A .partial written (with h5py) by some other job: other fingerprint."""
    good_input(d)
    with E.h5py.File(os.path.join(d, "out.h5.partial"), "w") as f:
        f.create_dataset("cv", data=np.full(SHAPE, 42.0))
        f.create_dataset("discount_app/progress", data=np.array([1, 1, 0, 0, 0, 0], dtype=np.uint8))
        f["discount_app"].attrs["fingerprint"] = "0123456789abcdef"
    return [job(d, memory=MULTI_SLAB)]


def garbage_partial(ctx, d):
    good_input(d)
    E.poison(os.path.join(d, "out.h5.partial"))
    return [job(d)]


def foreign_partial_restart(ctx, d):
    argv = foreign_partial(ctx, d)
    return ["run", "--restart"] + argv


def file_size_limit(ctx, d):
    # Open MPI's runtime cannot start under `ulimit -f 64` (its shared-memory
    # segments are files), so an MPI build never reaches our check.
    if "MPI build" in E.app(ctx, "--version").stdout:
        raise E.Skip("an MPI runtime does not start under a 64 KiB file-size limit")
    good_input(d)
    j = job(d)
    # 64 KiB: room for the YAML and HDF5 metadata, not for the 142 KiB of cv.
    return ["bash", "-c", 'ulimit -f 64; exec "$0" "$@"', ctx.app, j]


def disk_full(ctx, d):
    good_input(d)
    full = os.path.join(d, "full")
    os.makedirs(full)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full],
                      stderr=subprocess.DEVNULL).returncode != 0:
        raise E.Skip("cannot mount a small tmpfs to fill up (needs root / CAP_SYS_ADMIN)")
    ctx.cleanup.append(lambda: subprocess.run(["umount", full]))
    return [job(d, out_file="full/out.h5")]


def output_is_input(ctx, d):
    good_input(d)
    return [job(d, out_file="in.h5", output={"overwrite": True})]


def output_is_directory(overwrite):
    def setup(ctx, d):
        good_input(d)
        os.makedirs(os.path.join(d, "out.h5"))
        return [job(d, output={"overwrite": True} if overwrite else None)]
    return setup


def data_file_as_job(shape):
    """The data file itself given where the job goes (`discount_app data.h5`): small or over 1 MiB."""
    def setup(ctx, d):
        return [good_input(d, shape=shape, name="data.h5")]
    return setup


def netcdf_classic_as_job(ctx, d):
    path = os.path.join(d, "data.nc")
    with open(path, "wb") as f:
        f.write(b"CDF\x02" + bytes(60))
    return [path]


def verify_without_output(ctx, d):
    good_input(d)
    return ["verify", job(d)]


def check_propagated(ctx, d, result):
    src = os.path.join(d, "in.h5")
    expected = E.expected_cv(src)
    actual = E.read_output(os.path.join(d, "out.h5"))
    nan_e, nan_a = np.isnan(expected), np.isnan(actual)
    E.check(nan_e.any(), "test setup: expected result has no NaN")
    E.check(np.array_equal(nan_e, nan_a), f"NaN positions differ: expected {np.argwhere(nan_e)[:5].tolist()}, "
                                          f"got {np.argwhere(nan_a)[:5].tolist()}")
    E.assert_bits_equal(np.where(nan_a, 0.0, actual), np.where(nan_e, 0.0, expected), "non-NaN elements")


def check_restarted(ctx, d, result):
    check_replaced(ctx, d, result)
    E.check(not E.leftovers(os.path.join(d, "out.h5")), "partial left after --restart run")


# ---- the table ------------------------------------------------------------------

ROWS = [
    # the data file where the job goes: named as such, with the two lines of a job that reads it
    Row("job_is_hdf5_data_file", data_file_as_job(SHAPE), 78, "is an HDF5 data file, not a job"),
    Row("job_is_large_hdf5_data_file", data_file_as_job((11, 20011, 3)), 78,
        "'input: {file: data.h5}' and 'output: {file: cv.h5}'"),
    Row("job_is_netcdf_classic_file", netcdf_classic_as_job, 78, "is a netCDF data file, not a job"),
    # configuration (78): file:line:col in the message
    Row("yaml_malformed", yaml_text("input:\n  file: in.h5\noutput: [unclosed\n  file: out.h5\n"), 78,
        "YAML syntax error", regex=r"job\.yaml:[34]:\d+: "),
    Row("yaml_tab_indent", yaml_text("input:\n\tfile: in.h5\noutput:\n  file: out.h5\n"), 78,
        "a tab character; YAML indents with spaces", regex=r"job\.yaml:2:1: "),
    Row("yaml_tab_after_spaces", yaml_text("input:\n  file: in.h5\noutput:\n  \tfile: out.h5\n"), 78,
        "a tab character", regex=r"job\.yaml:4:3: "),
    Row("yaml_unknown_key", yaml_text("input:\n  file: in.h5\n  multiplyer: m\noutput:\n  file: out.h5\n"), 78,
        "did you mean 'multiplier'", regex=r"job\.yaml:3:3: "),
    Row("yaml_unknown_section", yaml_text("input:\n  file: in.h5\noutput:\n  file: out.h5\nmemroy:\n  "
                                          "host_budget: 1GiB\n"), 78, "did you mean 'memory'", regex=r"job\.yaml:5:1: "),
    Row("yaml_wrong_type_bool", yaml_text("input:\n  file: in.h5\noutput:\n  file: out.h5\n  overwrite: maybe\n"),
        78, "true or false", regex=r"job\.yaml:5:14: "),
    Row("yaml_wrong_type_int", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\nmemory:\n  "
                                         "pipeline_depth: three\n"), 78, "integer", regex=r"job\.yaml:4:19: "),
    Row("yaml_wrong_type_list", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\ncompute:\n  "
                                          "parallel_dims: date\n"), 78, "list", regex=r"job\.yaml:4:\d+: "),
    Row("yaml_wrong_type_section", yaml_text("input: in.h5\noutput: {file: out.h5}\n"), 78, "input",
        regex=r"job\.yaml:1:\d+: "),
    Row("yaml_wrong_value_chunk_axis", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\nmemory:\n  "
                                                 "chunk_axis: num\n"), 78, "chunk_axis", regex=r"job\.yaml:4:\d+: "),
    Row("yaml_wrong_value_kernel", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\ncompute: "
                                             "{kernel: fast}\n"), 78, "must be one of", regex=r"job\.yaml:3:\d+: "),
    Row("yaml_wrong_value_depth_0", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\nmemory: "
                                              "{pipeline_depth: 0}\n"), 78, "out of range", regex=r"job\.yaml:3:\d+: "),
    Row("yaml_wrong_value_percent", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\nmemory: "
                                              "{host_budget: 150%}\n"), 78, "host_budget", regex=r"job\.yaml:3:\d+: "),
    Row("yaml_wrong_value_size_unit", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\nmemory: "
                                                "{host_budget: 12 parsecs}\n"), 78, "host_budget",
        regex=r"job\.yaml:3:\d+: "),
    Row("yaml_tile_count_mismatch", yaml_text("input: {file: in.h5}\noutput: {file: out.h5}\ncompute: "
                                              "{parallel_dims: [date, id], tile: [4]}\n"), 78, "tile",
        regex=r"job\.yaml:3:\d+: "),
    Row("yaml_duplicate_axis", yaml_text("input: {file: in.h5, axes: [date, id, date]}\noutput: {file: out.h5}\n"),
        78, "twice", regex=r"job\.yaml:1:\d+: "),
    Row("yaml_empty_file", yaml_text(""), 78, "empty", regex=r"job\.yaml"),
    Row("yaml_missing_output", yaml_text("input: {file: in.h5}\n"), 78, "output", regex=r"job\.yaml"),
    Row("blas_needs_date_id_num", with_job(input={"axes": ["id", "date", "num"]}, compute={"kernel": "blas"}),
        78, "blas"),
    Row("blas_without_kokkos_kernels", blas_without_kokkos_kernels, 78, "compute.kernel: blas needs Kokkos Kernels"),
    Row("budget_too_small", budget_too_small, 78, "too small"),
    Row("budget_too_small_auto", budget_too_small_auto, 78, "memory.chunk_axis: auto found that one date does not "
                                                            "fit either"),
    Row("subrange_dates_out_of_bounds", with_job(input={"dates": [2, 7]}), 78, "input.dates"),
    Row("subrange_ids_out_of_bounds", with_job(input={"ids": [0, SHAPE[1] + 1]}), 78, "input.ids"),
    Row("subrange_empty", with_job(input={"dates": [3, 3]}), 78, "input.dates"),
    # missing (66)
    Row("config_missing", config_missing, 66, "no_such_job.yaml"),
    Row("input_missing", with_job(in_file="no_such_input.h5"), 66, "no_such_input.h5"),
    Row("input_not_hdf5", not_hdf5, 66, "HDF5"),
    Row("input_is_directory", input_is_dir, 66, "in.h5"),
    Row("dataset_missing", with_job(input={"discount": "no_such_dataset"}), 66, "no_such_dataset"),
    Row("dataset_missing_lists_candidates", with_input(grouped_input, input={"multiplier": "rates/mult",
                                                                             "discount": "rates/discount"}), 66,
        "; datasets of rank 3 there: /rates/disc [6 x 1009 x 3]",
        regex=r"input\.discount: dataset 'rates/discount' not found in '[^']*in\.h5'; datasets of rank 3 there: "
              r"/rates/disc \[6 x 1009 x 3\]$"),
    Row("multiplier_missing_lists_by_size", with_input(grouped_input, input={"multiplier": "rates/mul",
                                                                             "discount": "rates/disc"}), 66,
        "input.multiplier: dataset 'rates/mul' not found",
        regex=r"datasets of rank 2 or 3027 elements there: /rates/mult \[1009 x 3\], /notes \[2 x 2\]$"),
    Row("dataset_missing_none_fits", with_input(no_candidates_input), 66,
        "the file holds no dataset of rank 3 (it holds /multBy [1009 x 3], /rates/curve [5])"),
    Row("verify_output_dataset_missing", verify_output_dataset_missing, 66,
        "output.dataset: dataset 'result' not found", regex=r"datasets of rank 3 or 18162 elements there: /cv "
                                                             r"\[6 x 1009 x 3\]$"),
    Row("dataset_is_group", with_input(lambda p: h5(p, multBy=M, discount="group")), 66, "discount"),
    Row("verify_without_output", verify_without_output, 66, "out.h5"),
    # data (65)
    Row("wrong_rank_discount", with_input(lambda p: h5(p, multBy=M, discount=D[0])), 65, "rank"),
    Row("wrong_rank_multby", with_input(lambda p: h5(p, multBy=D, discount=D)), 65, "rank"),
    Row("no_broadcast_ids", with_input(lambda p: h5(p, multBy=("empty", (4000, 5), "f8", (100, 5)),
                                                    discount=("empty", (100, 3999, 5), "f8", (1, 100, 5)))),
        65, "broadcast"),
    Row("transposed_without_axes", with_input(transposed_input), 65, AXES_HINT,
        regex=r"shapes do not broadcast: .*ids 1009 != 6; input\.axes: \[id, date, num\] would fit$"),
    Row("transposed_without_axes_verify", with_input(transposed_input), 65, AXES_HINT, argv=["verify"]),
    Row("transposed_with_suggested_axes", transposed_with_suggested_axes, 0, None, post=check_transposed),
    Row("no_broadcast_nums", with_input(lambda p: h5(p, multBy=M[:, :2], discount=D)), 65, "broadcast"),
    Row("dtype_int64", with_input(lambda p: h5(p, multBy=M, discount=D.astype(np.int64))), 65, "int"),
    Row("dtype_uint64_multby", with_input(lambda p: h5(p, multBy=M.astype(np.uint64), discount=D)), 65, "multBy"),
    Row("dtype_string", with_input(lambda p: h5(p, multBy=np.array([[b"a", b"b"]] * SHAPE[1]),
                                                discount=D)), 65, "string"),
    Row("dtype_compound", with_input(lambda p: h5(p, multBy=M, discount=np.zeros(
        SHAPE, dtype=[("re", "f8"), ("im", "f8")]))), 65, "discount"),
    Row("empty_dimension_dates", with_input(empty_dim((SHAPE[1], 3), (0, SHAPE[1], 3))), 65, "empty"),
    Row("empty_dimension_ids", with_input(empty_dim((0, 3), (4, 0, 3))), 65, "empty"),
    # NaN / Inf under nonfinite: error. The message names the element.
    Row("nan_in_discount", with_input(nonfinite_input("discount", (3, 17, 2), np.nan),
                                                                  memory=MULTI_SLAB), 65, "NaN at [date 3, id 17, num 2]"),
    Row("inf_in_multby", with_input(nonfinite_input("multBy", (5, 1), np.inf)),
        65, "+Inf at [id 5, num 1]"),
    Row("nan_first_of_two_pieces", nan_first_of_two, 65, "NaN at [date 0, id 110000, num 3]"),
    Row("nan_in_discount_quiet", with_input(nonfinite_input("discount", (3, 17, 2), np.nan), memory=MULTI_SLAB),
        65, "NaN at [date 3, id 17, num 2]", argv=["run", "-q"]),
    Row("inf_in_multby_quiet", with_input(nonfinite_input("multBy", (5, 1), np.inf)), 65, "id 5, num 1",
        argv=["run", "-q"]),
    Row("neg_inf_in_discount_last_element_quiet", with_input(nonfinite_input("discount", (5, 1008, 2), -np.inf),
                                                             memory=MULTI_SLAB),
        65, "-Inf at [date 5, id 1008, num 2]", argv=["run", "-q"]),
    Row("nan_propagate", with_input(nonfinite_input("discount", (3, 17, 2), np.nan), input={"nonfinite": "propagate"},
                                    memory=MULTI_SLAB), 0, None, post=check_propagated),
    Row("nan_in_multby_propagate", with_input(nonfinite_input("multBy", (500, 0), np.nan),
                                              input={"nonfinite": "propagate"}), 0, None, post=check_propagated),
    # output (73)
    Row("output_dir_missing_is_created", outdir_missing, 0, None, post=check_outdir_created),
    Row("output_dir_under_a_file", outdir_under_a_file, 73, "its folder cannot be created ('"),
    Row("output_dir_read_only_parent", _ReadOnlyParentRow(), 73, "its folder cannot be created"),
    Row("output_dir_read_only", _ReadOnlyRow(), 73, "not writable"),
    Row("output_exists", out_exists(False), 73, "overwrite"),
    Row("output_exists_overwrite", out_exists(True), 0, None, post=check_replaced),
    Row("partial_foreign_fingerprint", foreign_partial, 73, "--restart"),
    Row("partial_not_hdf5", garbage_partial, 73, "--restart"),
    Row("partial_foreign_fingerprint_restart", foreign_partial_restart, 0, None, post=check_restarted),
    Row("output_is_input", output_is_input, 73, "in.h5"),
    Row("output_is_directory", output_is_directory(False), 73, "out.h5"),
    Row("output_is_directory_overwrite", output_is_directory(True), 73, "out.h5"),
    # I/O during the run (74)
    Row("file_size_limit", file_size_limit, 74, "file size limit"),
    Row("disk_full", disk_full, 74, "no space left"),
    # command line (64): CLI11 prints the error and a "Run with --help" hint, two lines
    Row("usage_unknown_option", with_job(), 64, "--bogus", one_line=False, argv=["run", "--bogus"]),
    Row("usage_generate_bad_axes", lambda ctx, d: ["generate", "--dates", "2", "--ids", "3", "--nums", "1",
                                                   "--out", os.path.join(d, "out.h5"), "--axes", "date,id,id"],
        64, "--axes"),
    Row("usage_generate_bad_values", lambda ctx, d: ["generate", "--dates", "2", "--ids", "3", "--nums", "1",
                                                     "--out", os.path.join(d, "out.h5"), "--values", "real"],
        64, "--values: unknown kind 'real' (use random, realistic)"),
]


def run_row(row):
    def case(ctx):
        ctx.cleanup = []
        d = ctx.dir("job")
        try:
            argv = row.setup(ctx, d)
            argv = [str(a) for a in argv]
            before = E.tree_digest(d)
            out_existed = os.path.lexists(os.path.join(d, "out.h5"))
            if argv[0] in ("bash",):
                full = argv
            else:
                full = [ctx.app] + (row.argv or []) + argv
            r = E.run(ctx, full, cwd=ctx.dir("cwd"))
            print(r)
            after = E.tree_digest(d)
        finally:
            for undo in reversed(ctx.cleanup):
                undo()
        out = os.path.join(d, "out.h5")
        codes = row.rc if isinstance(row.rc, tuple) else (row.rc,)
        E.check(r.rc in codes, f"exit code {r.rc}, expected {' or '.join(map(str, codes))}")
        E.check(not os.listdir(ctx.dir("cwd")), f"files written into the cwd: {os.listdir(ctx.dir('cwd'))}")
        if codes == (0,):
            src = os.path.join(d, "in.h5")
            E.check(not os.path.exists(src) or after.get("in.h5") == before.get("in.h5"), "the run changed the input")
            row.post(ctx, d, r)
            return
        lines = r.stderr_lines
        if row.one_line:
            E.check(len(lines) == 1 and r.stderr.endswith("\n"),
                    f"stderr has {len(lines)} line(s), expected exactly one:\n{r.stderr}")
        E.check(any(row.substr in line for line in lines), f"stderr lacks {row.substr!r}:\n{r.stderr}")
        if row.regex:
            E.check(re.search(row.regex, r.stderr), f"stderr does not match {row.regex!r}:\n{r.stderr}")
        # nothing created, nothing changed
        allowed_new = {"out.h5.partial"} if 74 in codes else set()
        new = set(after) - set(before) - allowed_new
        E.check(not new, f"files created by a failed run: {sorted(new)}")
        E.check(not os.path.lexists(out) or out_existed, "the failed run created out.h5")
        changed = [p for p in before if after.get(p) != before[p]]
        E.check(not changed, f"files changed or removed by a failed run: {changed}")
    return case


CASES = [(row.name, run_row(row)) for row in ROWS]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
