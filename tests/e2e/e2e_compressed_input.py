#!/usr/bin/env python3
"""Compressed chunked inputs decoded by the app's own threads (lib/codec,
io/chunk_reader): every case writes its input with h5py (hdf5plugin for LZ4
and Blosc) and checks cv bit for bit against NumPy's product of what h5py
reads back from the same file.

- deflate levels 1 and 9, with and without shuffle, Fletcher32 (with deflate
  and alone); chunk shapes (1, 50000, 5), (3, 7001, 5) (edge chunks on every
  axis), (2, 40000, 1) and a file stored [id, date, num] (input.axes); float32
  stored; multBy compressed too; random non-zero data and realistic data
  (discount exp(-r t) rounded to 8 decimals, r 0.5-8 % to 4 decimals; multBy
  in cents) on odd sizes (7 dates x 123457 ids x 5 nums and smaller);
  input.dates / input.ids off the chunk grid; every chunk index HDF5 writes
  (version 1 B-tree, fixed and extensible array, version 2 B-tree, single
  chunk).
- LZ4 and Blosc (LZ4 and zstd inside, byte shuffle) through hdf5plugin, and
  Blosc chunks HDF5 stored unfiltered (the filter mask, with and without
  Fletcher32); zstd and bitshuffle plugins are skipped, with the reason,
  where h5py cannot write them.
- Slabs that cut chunks (memory.max_slab, memory.host_budget, chunk_axis id
  and date), several decoding threads; the reads of each chunk counted with
  strace: a chunk that date or id slabs cut is decoded once, kept for the
  next slab.
- Chunks never written: the dataset's fill value (2.5), float64 and float32,
  with edge chunks and with every chunk whole in its slab (the fused
  multiply visits each chunk as it lands).
- The read path the header's `input` line and the JSON report's
  datasets[].read_path name: parallel chunk reads for these; HDF5 reads for
  chunks under 64 KiB, big-endian data and bzip2 (exact; bzip2 65 when HDF5
  has no plugin for it); lzf with no plugin: 65 naming the filter and
  HDF5_PLUGIN_PATH.
- The decoding's figures: the JSON report's decompression object on a
  shuffle + deflate discount and multBy (chunks, stored bytes as h5py lists
  the chunks, raw bytes, ratio and rates exact; busy seconds positive) and
  the summary's decompression line; neither for a contiguous input nor for
  chunks HDF5 decodes; `plan`'s decompression line (one thread's rate on a
  sample of the input's chunks, the limit on the decoding threads) for a
  gzip input and none for a contiguous one.
- Damage: bytes flipped in one chunk (deflate, LZ4, Blosc), one byte flipped
  under Fletcher32, a chunk past the end of the file (the superblock's end
  moved with it, so HDF5 opens it; the input check's sample of chunks and
  the chunk reader's own check): 65 with one error line naming 'discount'
  and the chunk's coordinates; a file truncated inside its last chunk: 65
  naming the file, which HDF5 will not open.
- A bounded fuzz (fixed seeds; 40 runs each for shuffle + deflate and LZ4,
  20 for Blosc) of 1-4 bytes flipped in random chunks (a quarter of them in a
  chunk's first 16 bytes, its headers): every run ends 0, exact against h5py
  reading the same damaged file (a run that exits 0 where h5py cannot read
  the file fails), or 65 with one error line naming a damaged chunk; never a
  signal, never a hang (a 60 s guard).
"""

import collections
import concurrent.futures
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402
import e2e_hdf5_damage as D  # noqa: E402

h5py = E.h5py
try:
    import hdf5plugin  # noqa: F401 (registers LZ4, Blosc, bzip2 ... with h5py)
except ImportError:
    hdf5plugin = None

BIG = (7, 123457, 5)     # dates, ids, nums: odd sizes, 34.6 MB of float64 discount
SMALL = (5, 60013, 5)    # 12 MB
PARALLEL = "parallel chunk reads ("
UNSTAGED = "no staging ring (memory.staging: none)"
LZ4, BLOSC, ZSTD, BITSHUFFLE, BZIP2, LZF = 32004, 32001, 32015, 32008, 307, 32000
FUZZ_RUNS = 40


# --------------------------------------------------------------------------
# Data


def random_data(seed, shape, dtype=np.float64):
    rng = np.random.default_rng(seed)
    dates, ids, nums = shape
    return E.random_nonzero(rng, (ids, nums), dtype), E.random_nonzero(rng, shape, dtype)


def realistic_data(seed, shape, rate_steps=None):
    """multBy: amounts in cents; discount: exp(-r t) rounded to 8 decimals,
    r in 0.5-8 % rounded to 4 decimals (or, with rate_steps, from that many
    levels: more repetition, for LZ4), t quarterly."""
    rng = np.random.default_rng(seed)
    dates, ids, nums = shape
    if rate_steps:
        rate = np.round(0.005 + 0.075 * rng.integers(0, rate_steps, size=(ids, nums)) / (rate_steps - 1), 4)
    else:
        rate = np.round(rng.uniform(0.005, 0.08, size=(ids, nums)), 4)
    years = (np.arange(dates, dtype=np.float64) + 1.0)[:, None, None] * 0.25
    disc = np.round(np.exp(-rate[None, :, :] * years), 8)
    mult = np.round(rng.uniform(0.01, 250000.0, size=(ids, nums)), 2)
    return mult, disc


def need_filter(fid, name):
    """Skips the case when h5py cannot write filter `fid` here."""
    if hdf5plugin is None:
        raise E.Skip(f"the Python module hdf5plugin is needed to write {name}")
    if not h5py.h5z.filter_avail(fid):
        raise E.Skip(f"h5py cannot write {name} (filter {fid}) here: hdf5plugin {hdf5plugin.version} "
                     f"has no plugin for it")


def gzip(level, shuffle=False, fletcher32=False):
    return {"compression": "gzip", "compression_opts": level, "shuffle": shuffle, "fletcher32": fletcher32}


def lz4():
    need_filter(LZ4, "LZ4")
    return dict(hdf5plugin.LZ4())


def blosc(cname):
    need_filter(BLOSC, "Blosc")
    return dict(hdf5plugin.Blosc(cname=cname, clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))


def write(path, mult, disc, chunks, filters, mult_chunks=None, mult_filters=None, disc_dtype=None,
          mult_dtype=None):
    """The input, written by h5py; returns its path."""
    mkw = {"chunks": mult_chunks, **(mult_filters or {})} if mult_chunks else None
    return E.write_input(path, mult, disc, disc_kwargs={"chunks": chunks, **filters}, mult_kwargs=mkw,
                         disc_dtype=disc_dtype, mult_dtype=mult_dtype)


def chunk_table(path, name="discount"):
    """(coords, byte_offset, size) of every stored chunk of `name`, in file order."""
    with h5py.File(path, "r") as f:
        ds = f[name]
        infos = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]
    return sorted(((tuple(int(x) for x in i.chunk_offset), int(i.byte_offset), int(i.size)) for i in infos),
                  key=lambda c: c[1])


def chunk_at(path, coords, name="discount"):
    with h5py.File(path, "r") as f:
        info = f[name].id.get_chunk_info_by_coord(tuple(coords))
    E.check(info.byte_offset is not None and info.size > 0, f"{path}: no stored chunk at {coords}")
    return int(info.byte_offset), int(info.size)


def flip(path, positions, xor=0x5A):
    with open(path, "r+b") as f:
        for p in positions:
            f.seek(p)
            b = f.read(1)[0]
            f.seek(p)
            f.write(bytes([b ^ xor]))


def coords_re(coords):
    """The chunk's coordinates as the app writes them: [3, 50000, 0] or [3 x 50000 x 0]."""
    return re.compile(r"\[" + r"(?:, | x )".join(str(c) for c in coords) + r"\]")


# --------------------------------------------------------------------------
# Running


def run_job(ctx, src, rc=0, input=None, memory=None, env=None, output=None):
    """Runs the job on `src` (its folder); returns (Result, report or None)."""
    d = os.path.dirname(src)
    report = os.path.join(d, "report.json")
    if os.path.exists(report):
        os.unlink(report)
    job = E.write_job(os.path.join(d, "job.yaml"), os.path.basename(src), "out.h5", input=input,
                      output=dict({"overwrite": True}, **(output or {})), memory=memory)
    r = E.expect_rc(E.app(ctx, "run", job, "--report", report, cwd=d, env=env), rc, "run")
    doc = None
    if os.path.exists(report):
        with open(report) as f:
            doc = json.load(f)
    return r, doc


def header_input_line(result):
    lines = [ln for ln in (result.stdout + result.stderr).splitlines() if "[discount_app] input " in ln]
    E.check(len(lines) == 1, f"the run header has {len(lines)} `input` lines:\n{result}")
    return lines[0]


def read_path(report, role="discount"):
    return report["input"]["datasets"][role]["read_path"]


def expect_parallel(result, report, pipeline, role="discount"):
    """The report's read_path and the header's `input` line name the app's
    own chunk reads with this pipeline."""
    want = f"{PARALLEL}{pipeline}, "
    path = read_path(report, role)
    E.check(path.startswith(want) and path.endswith(" threads)"),
            f"{role}'s read_path is {path!r}, expected {want!r}...")
    line = header_input_line(result)
    E.check(want in line, f"the header's input line does not name {want!r}:\n{line}")
    return path


def expect_exact(src, axes=E.CANON):
    out = os.path.join(os.path.dirname(src), "out.h5")
    expected = E.expected_cv(src, axes)
    E.check_output(out, expected)
    return expected


def expect_damage_error(result, coords, *words):
    """Exit 65, one error line naming 'discount' and the chunk."""
    line = D.expect_one_error(result, 65, ("'discount'",) + words)
    E.check(coords_re(coords).search(line), f"the error does not name the chunk at {list(coords)}:\n{result}")
    return line


READER = r"""
import sys
import h5py
import numpy as np
try:
    import hdf5plugin  # noqa: F401
except ImportError:
    pass
with h5py.File(sys.argv[1], "r") as f:
    m = f["multBy"][...].astype(np.float64)
    d = f["discount"][...].astype(np.float64)
np.save(sys.argv[2], m[None, :, :] * d)
"""


def h5py_product(path):
    """NumPy's product of what h5py reads from a damaged file, or None when
    h5py cannot read it; in a process of its own, since the LZ4 plugin h5py
    loads decodes with LZ4_decompress_fast, which trusts its input."""
    npy = path + ".h5py.npy"
    try:
        p = subprocess.run([sys.executable, "-c", READER, path, npy], capture_output=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode != 0 or not os.path.exists(npy):
        return None
    product = np.load(npy)
    os.unlink(npy)
    return product


def h5py_cannot_read(path):
    E.check(h5py_product(path) is None, f"h5py reads {path} whole: the damage is not damage")


# --------------------------------------------------------------------------
# The decoding's figures: report, summary line, plan


DECOMPRESSION_LINE = re.compile(r"^decompression  (?P<pipeline>.+): (?P<stored>[\d.]+) GB -> (?P<raw>[\d.]+) GB, "
                                r"(?P<busy>[\d.]+) s busy on (?P<threads>\d+) threads \((?P<rate>\d+) MB/s per "
                                r"thread, limit (?P<limit>[\d.]+) GB/s\)$", re.M)
PLAN_LINE = re.compile(r"^decompression  (?P<pipeline>.+): (?P<rate>\d+) MB/s per thread on a sample of "
                       r"(?P<chunks>\d+) chunks, limit (?P<limit>[\d.]+) GB/s on (?P<threads>\d+) threads; "
                       r"(?P<together>[\d.]+) GB/s with all (?P<all>\d+) decoding at once$", re.M)


def stored_chunks(path, name):
    """(count, stored bytes, raw bytes) of every chunk of `name` as h5py reports them."""
    with h5py.File(path, "r") as f:
        ds = f[name]
        infos = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())]
        raw = int(np.prod(ds.chunks)) * ds.dtype.itemsize
    return len(infos), sum(int(i.size) for i in infos), len(infos) * raw


def near(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def decoding_threads(text):
    """N of the first 'parallel chunk reads (..., N threads)' in `text`."""
    m = re.search(r"parallel chunk reads \([^)]*, (\d+) threads\)", text)
    E.check(m, f"no parallel chunk reads named in:\n{text}")
    return int(m.group(1))


def case_decompression_report(ctx):
    """A whole-dataset run on shuffle + deflate discount and multBy, one date per slab: the report's
    decompression object counts every chunk of both datasets once, bytes as h5py sees them stored;
    the summary line says the same."""
    m, disc = realistic_data(40, SMALL)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(4, shuffle=True),
                mult_chunks=(50000, 5), mult_filters=gzip(4, shuffle=True))
    r, report = run_job(ctx, src, memory={"max_slab": SMALL[1] * SMALL[2] * 8, "chunk_axis": "date"})
    expect_exact(src)
    E.check(report["plan"]["slabs"] == SMALL[0] and not report["plan"]["multiplier_per_slab"],
            f"expected {SMALL[0]} date slabs with multBy read once: {report['plan']}")
    counts = [stored_chunks(src, name) for name in ("discount", "multBy")]
    chunks, stored, raw = (sum(c[k] for c in counts) for k in range(3))
    d = report.get("decompression")
    E.check(isinstance(d, dict), f"the report has no decompression object: {sorted(report)}")
    want = {"pipeline": "shuffle + deflate 4", "chunks": chunks, "stored_bytes": stored, "raw_bytes": raw}
    E.check({k: d.get(k) for k in want} == want, f"decompression {d}, expected {want}")
    E.check(raw >= disc.nbytes + m.nbytes, f"{raw} raw bytes decoded, the selection holds {disc.nbytes + m.nbytes}")
    threads = decoding_threads(read_path(report))
    E.check(d["busy_seconds"] > 0 and d["read_busy_seconds"] > 0 and 1 <= d["threads"] <= threads,
            f"decompression {d}: busy seconds or threads (1 to {threads}) wrong")
    E.check(near(d["ratio"], raw / stored) and near(d["thread_rate_bytes_per_s"], raw / d["busy_seconds"])
            and near(d["limit_bytes_per_s"], d["thread_rate_bytes_per_s"] * d["threads"]),
            f"decompression {d}: ratio or rates inconsistent")
    lines = list(DECOMPRESSION_LINE.finditer(r.stdout))
    E.check(len(lines) == 1, f"expected one decompression line in the summary:\n{r.stdout}")
    g = lines[0]
    E.check(g["pipeline"] == d["pipeline"] and g["stored"] == f"{stored / 1e9:.2f}" and g["raw"] == f"{raw / 1e9:.2f}"
            and g["busy"] == f"{d['busy_seconds']:.2f}" and int(g["threads"]) == d["threads"]
            and g["rate"] == f"{d['thread_rate_bytes_per_s'] / 1e6:.0f}"
            and g["limit"] == f"{d['limit_bytes_per_s'] / 1e9:.2f}",
            f"the summary line {g.group(0)!r} does not match the report's {d}")
    print(f"{chunks} chunks, {stored} -> {raw} bytes; {g.group(0)}")


def case_no_decompression_without_chunk_reads(ctx):
    """A contiguous input, and one whose small gzip chunks HDF5 decodes: no decompression object,
    no summary line."""
    m, disc = random_data(41, SMALL)
    inputs = {"contiguous": E.write_input(os.path.join(ctx.dir("contiguous"), "in.h5"), m, disc),
              "hdf5_chunks": write(os.path.join(ctx.dir("small"), "in.h5"), m, disc, (1, 1000, 5), gzip(4))}
    for what, src in inputs.items():
        r, report = run_job(ctx, src)
        expect_exact(src)
        E.check(not read_path(report).startswith(PARALLEL), f"{what}: read_path {read_path(report)!r}")
        E.check("decompression" not in report, f"{what}: decompression {report.get('decompression')}")
        E.check(not re.search(r"^decompression", r.stdout, re.M),
                f"{what}: the summary has a decompression line:\n{r.stdout}")
        print(f"{what} ({read_path(report)}): no decompression object or line")


def case_plan_decompression_line(ctx):
    """plan on a gzip input: one line with one thread's decoding rate on a sample of its chunks and the
    limit on the decoding threads; none for a contiguous input."""
    m, disc = random_data(42, SMALL)
    src = write(os.path.join(ctx.dir("gzip"), "in.h5"), m, disc, (1, 20000, 5), gzip(1, shuffle=True))
    plain = E.write_input(os.path.join(ctx.dir("plain"), "in.h5"), m, disc)
    for path in (src, plain):
        d = os.path.dirname(path)
        job = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", output={"overwrite": True})
        r = E.expect_rc(E.app(ctx, "plan", "--no-measure", job, cwd=d), 0, "plan")
        lines = list(PLAN_LINE.finditer(r.stdout))
        if path == plain:
            E.check(not re.search(r"^decompression", r.stdout, re.M), f"contiguous: a decompression line:\n{r.stdout}")
            continue
        E.check(len(lines) == 1, f"expected one decompression line:\n{r.stdout}")
        g = lines[0]
        threads, total = decoding_threads(r.stdout), stored_chunks(src, "discount")[0]
        rate, limit = int(g["rate"]), float(g["limit"])
        E.check(g["pipeline"] == "shuffle + deflate 1" and 1 <= int(g["chunks"]) <= min(8, total)
                and int(g["threads"]) == threads and rate > 0,
                f"plan line {g.group(0)!r}: pipeline, chunks (1 to {min(8, total)}), threads ({threads}) or rate")
        E.check(abs(limit - rate * threads / 1e3) <= 0.005 + threads * 0.5e-3 + 1e-9,
                f"plan line {g.group(0)!r}: limit is not the rate x {threads} threads")
        E.check(int(g["all"]) == threads and float(g["together"]) > 0,
                f"plan line {g.group(0)!r}: no rate of all {threads} threads decoding at once")
        print(f"plan: {g.group(0)}")


# --------------------------------------------------------------------------
# Exact cases


def exact(shape, data, chunks, filters, pipeline, seed=1, disc_dtype=None, mult=None, mult_pipeline=None,
          memory=None, env=None, verify=False):
    """A case: the input written by h5py, run, cv exact, discount (and, with
    mult = (chunks, filters), multBy) read by the app's chunk reads."""
    def case(ctx):
        flt = filters() if callable(filters) else filters
        mflt = (mult[1]() if callable(mult[1]) else mult[1]) if mult else None
        m, disc = (random_data if data == "random" else realistic_data)(seed, shape)
        src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, chunks, flt,
                    mult_chunks=mult[0] if mult else None, mult_filters=mflt,
                    disc_dtype=disc_dtype, mult_dtype=disc_dtype)
        r, report = run_job(ctx, src, memory=memory, env=env)
        expect_exact(src)
        path = expect_parallel(r, report, pipeline)
        if mult_pipeline:
            expect_parallel(r, report, mult_pipeline, role="multiplier")
        if verify:
            v = E.expect_rc(E.app(ctx, "verify", "--full", os.path.join(ctx.dir("data"), "job.yaml")), 0,
                            "verify --full")
            E.check("all equal" in v.stdout, f"verify did not pass:\n{v}")
        stored = sum(c[2] for c in chunk_table(src))
        print(f"{data} {shape} chunks {chunks}: {path}; stored {stored / disc.nbytes:.2f} of the raw bytes, "
              f"{report['plan']['slabs']} slab(s); exact")
    return case


def case_id_date_num_axes(ctx):
    """discount stored [id, date, num] (input.axes), chunks (20000, 3, 5), multBy compressed too."""
    m, disc = random_data(8, SMALL)
    disc_idn = np.ascontiguousarray(disc.transpose(1, 0, 2))
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc_idn, (20000, 3, 5), gzip(4, shuffle=True),
                mult_chunks=(20000, 5), mult_filters=gzip(4, shuffle=True))
    axes = ("id", "date", "num")
    r, report = run_job(ctx, src, input={"axes": list(axes)})
    expected = expect_exact(src, axes)
    # The file's product, transposed, is the canonical one (the check has teeth).
    E.assert_bits_equal(np.ascontiguousarray(expected.transpose(1, 0, 2)), m[None] * disc, "cv [date,id,num]")
    expect_parallel(r, report, "shuffle + deflate 4")
    expect_parallel(r, report, "shuffle + deflate 4", role="multiplier")
    E.check(report["input"]["axes"] == list(axes), f"report axes {report['input']['axes']}")
    print(f"[id, date, num] chunks (20000, 3, 5): exact, {report['plan']['slabs']} slab(s) along "
          f"{report['plan']['chunk_axis']}")


def case_float32_stored(ctx):
    """discount and multBy stored float32, both shuffle + deflate: widened exactly."""
    m, disc = random_data(9, SMALL, np.float32)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(4, shuffle=True),
                mult_chunks=(50000, 5), mult_filters=gzip(4, shuffle=True))
    r, report = run_job(ctx, src)
    expect_exact(src)
    E.check(report["input"]["datasets"]["discount"]["dtype"] == "float32", "the report's dtype is not float32")
    expect_parallel(r, report, "shuffle + deflate 4")
    expect_parallel(r, report, "shuffle + deflate 4", role="multiplier")
    print("float32 stored, shuffle + deflate 4, multBy too: exact")


def chunk_index_case(libver, maxshape, chunks, shape=SMALL, seed=18):
    """The chunk index HDF5 picks for the file format and maxshape: version 1
    B-tree (earliest), fixed array, extensible array, version 2 B-tree, single
    chunk (latest)."""
    def case(ctx):
        m, disc = realistic_data(seed, shape)
        src = os.path.join(ctx.dir("data"), "in.h5")
        # "latest" as the app's HDF5 1.10 reads it: h5py built on HDF5 1.12+
        # (the GPU node's) writes object headers 1.10 cannot open.
        bounds = ("v110", "v110") if libver == "latest" else libver
        with h5py.File(src, "w", libver=bounds) as f:
            f.create_dataset("multBy", data=m)
            f.create_dataset("discount", data=disc, chunks=chunks, maxshape=maxshape, **gzip(4, shuffle=True))
        r, report = run_job(ctx, src)
        expect_exact(src)
        expect_parallel(r, report, "shuffle + deflate 4")
        print(f"libver {libver}, maxshape {maxshape}, chunks {chunks}: exact")
    return case


def blosc_skipped(fletcher32):
    """Blosc without shuffle cannot shrink random doubles: HDF5 stores those
    chunks unfiltered (the optional filter's bit set in the chunk's filter
    mask), the edge chunks compressed."""
    def case(ctx):
        need_filter(BLOSC, "Blosc")
        m, disc = random_data(19, (2, 60013, 5))
        flt = dict(hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.NOSHUFFLE), fletcher32=fletcher32)
        src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 20000, 5), flt)
        with h5py.File(src, "r") as f:
            ds = f["discount"]
            masks = [ds.id.get_chunk_info(i).filter_mask for i in range(ds.id.get_num_chunks())]
        E.check(any(masks) and not all(masks), f"filter masks {masks}: not a mix of skipped and applied")
        r, report = run_job(ctx, src)
        expect_exact(src)
        expect_parallel(r, report, "blosc 5" + (" + fletcher32" if fletcher32 else ""))
        print(f"filter masks {masks}: exact")
    return case


def case_selection_cuts_chunks(ctx):
    """input.dates and input.ids off the chunk grid: the first and last chunks
    of the box are cut on both axes."""
    m, disc = random_data(26, SMALL)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (2, 7001, 5), gzip(4, shuffle=True))
    r, report = run_job(ctx, src, input={"dates": [1, 4], "ids": [12345, 50021]},
                        memory={"max_slab": 600000, "chunk_axis": "id"})
    out = os.path.join(ctx.dir("data"), "out.h5")
    E.check_output(out, E.expected_cv(src, dates=(1, 4), ids=(12345, 50021)))
    expect_parallel(r, report, "shuffle + deflate 4")
    print(f"dates [1, 4), ids [12345, 50021) over chunks (2, 7001, 5), {report['plan']['slabs']} slab(s): exact")


def case_big_endian_hdf5_path(ctx):
    """Big-endian float64 stored: HDF5 converts it, so HDF5 reads it; exact."""
    m, disc = random_data(27, SMALL)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(4, shuffle=True),
                disc_dtype=">f8")
    r, report = run_job(ctx, src)
    expect_exact(src)
    path = read_path(report)
    E.check(path.startswith("HDF5 reads (") and "converted" in path, f"read_path {path!r}")
    print(f"big-endian: {path}: exact")


# --------------------------------------------------------------------------
# Slabs that cut chunks


def slab_extent(report):
    return int(report["plan"]["slab_extent"])


def case_max_slab_cuts_chunks_id(ctx):
    """memory.max_slab 1MiB and chunk_axis id: slabs of a few thousand ids cut
    every (1, 50000, 5) chunk; four decoding threads on this machine."""
    m, disc = realistic_data(10, BIG)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(4, shuffle=True))
    r, report = run_job(ctx, src, memory={"max_slab": "1MiB", "chunk_axis": "id"},
                        env={"DISCOUNT_IO_THREADS": "4"})
    expect_exact(src)
    expect_parallel(r, report, "shuffle + deflate 4")
    ext = slab_extent(report)
    E.check(report["plan"]["chunk_axis"] == "id" and ext % 50000 != 0 and report["plan"]["slabs"] > 3,
            f"the slabs do not cut the chunks: {report['plan']['slabs']} slabs of {ext} ids")
    print(f"{report['plan']['slabs']} slabs of {ext} ids over chunks of 50000: exact")


def case_max_slab_cuts_chunks_date(ctx):
    """Chunks (3, 7001, 5), slabs of two dates (max_slab, chunk_axis date): every
    other slab starts inside a layer of chunks."""
    shape = (7, 30011, 5)
    m, disc = random_data(11, shape)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (3, 7001, 5), gzip(1, shuffle=True))
    two_dates = 2 * shape[1] * shape[2] * 8
    r, report = run_job(ctx, src, memory={"max_slab": two_dates, "chunk_axis": "date"},
                        env={"DISCOUNT_IO_THREADS": "3"})
    expect_exact(src)
    expect_parallel(r, report, "shuffle + deflate 1")
    ext = slab_extent(report)
    E.check(ext % 3 != 0, f"slabs of {ext} dates do not cut chunks of 3 dates")
    print(f"{report['plan']['slabs']} slabs of {ext} date(s) over chunks of 3 dates: exact")


def case_host_budget_cuts_chunks(ctx):
    """A host_budget under one date's slab: chunk_axis auto takes id, slabs cut the chunks."""
    m, disc = random_data(12, BIG)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(1, shuffle=True))
    r, report = run_job(ctx, src, memory={"host_budget": "40MiB"}, output={"direct_io": False},
                        env={"DISCOUNT_IO_THREADS": "2"})
    expect_exact(src)
    expect_parallel(r, report, "shuffle + deflate 1")
    ext = slab_extent(report)
    E.check(report["plan"]["chunk_axis"] == "id" and ext % 50000 != 0,
            f"expected id slabs that cut the chunks: {report['plan']['chunk_axis']}, {ext}")
    print(f"host_budget 40MiB: {report['plan']['slabs']} slabs of {ext} ids: exact")


def chunk_reads(ctx, src, memory, env=None):
    """Runs the job under strace and counts the positional reads of each of
    discount's stored chunks (its offset and stored size): how often the app
    decoded it. Checks the output exact."""
    if not shutil.which("strace"):
        raise E.Skip("strace is needed to count the chunk reads")
    d = os.path.dirname(src)
    job = E.write_job(os.path.join(d, "job.yaml"), os.path.basename(src), "out.h5", memory=memory,
                      output={"overwrite": True})
    trace = os.path.join(d, "trace")
    # LeakSanitizer cannot run under ptrace: a sanitizer build is traced
    # without it (its other checks stay on).
    asan = os.environ.get("ASAN_OPTIONS", "")
    traced = dict(env or {}, ASAN_OPTIONS=(asan + ":" if asan else "") + "detect_leaks=0")
    r = E.run(ctx, ["strace", "-ff", "-qq", "-e", "trace=pread64", "-s", "0", "-o", trace, ctx.app, "run", "-q", job],
              cwd=d, env=traced, timeout=180)
    if r.rc != 0 and not glob.glob(trace + ".*"):
        raise E.Skip(f"strace cannot trace here (exit {r.rc}): {r.stderr.strip()[:200]}")
    E.expect_rc(r, 0, "run under strace")
    expect_exact(src)
    chunks = {(at, size): coords for coords, at, size in chunk_table(src)}
    reads = collections.Counter()
    for path in glob.glob(trace + ".*"):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r"pread64\(\d+, .*, (\d+), (\d+)\)", line)
                if m and (int(m.group(2)), int(m.group(1))) in chunks:
                    reads[chunks[(int(m.group(2)), int(m.group(1)))]] += 1
    E.check(set(reads) == set(chunks.values()),
            f"the trace shows reads of {len(reads)} of {len(chunks)} chunks: the count does not work here")
    return reads, len(chunks)


def case_cut_chunks_decoded_once_date(ctx):
    """Slabs of two dates over chunks of three (and 18 chunks a layer): each
    chunk a slab cuts is kept for the next slab, so each is read and decoded
    about once (twice at most, for two slabs read at once)."""
    shape = (7, 60013, 5)
    m, disc = random_data(28, shape)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (3, 3541, 5), gzip(1, shuffle=True))
    reads, n = chunk_reads(ctx, src, {"max_slab": 2 * shape[1] * shape[2] * 8, "chunk_axis": "date"})
    total = sum(reads.values())
    print(f"{total} chunk reads for {n} chunks, at most {max(reads.values())} of one")
    E.check(total <= 2 * n, f"{total} chunk reads for {n} chunks: {sorted(reads.items())}")


def case_id_slabs_decode_each_chunk_once(ctx):
    """Slabs of 3744 ids (memory.max_slab 1MiB, chunk_axis id) over 21 chunks
    (1, 50000, 5) of 2 MB: every slab needs the 7 chunks of its column (one
    per date), but the cache of cut chunks holds one layer across the
    slowest axis (3 chunks), so chunks are read and inflated again slab after
    slab (150 reads of 21 chunks on the development VM), though the 7 fit in
    its 16 MiB."""
    m, disc = realistic_data(10, BIG)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(1, shuffle=True))
    reads, n = chunk_reads(ctx, src, {"max_slab": "1MiB", "chunk_axis": "id"})
    total = sum(reads.values())
    print(f"{total} chunk reads for {n} chunks, at most {max(reads.values())} of one")
    E.check(total <= 2 * n, f"{total} chunk reads for {n} chunks: {sorted(reads.items())}")


def case_unstaged_decodes_each_chunk_once(ctx):
    """memory.staging: none on chunks (1, 50000, 5) (edge chunks along ids):
    each I/O thread takes whole date slabs and reads them in ~1 MiB pieces,
    about two to a chunk; it keeps the chunk it decoded last, so every chunk
    is read and decoded exactly once (the trace counts the reads), and cv is
    exact."""
    m, disc = realistic_data(11, BIG)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), gzip(4, shuffle=True))
    memory = {"staging": "none", "chunk_axis": "date", "max_slab": BIG[1] * BIG[2] * 8}
    reads, n = chunk_reads(ctx, src, memory, env={"DISCOUNT_IO_THREADS": "3"})
    print(f"{sum(reads.values())} chunk reads for {n} chunks, at most {max(reads.values())} of one")
    E.check(max(reads.values()) == 1, f"chunks read more than once: {sorted(reads.items())}")
    r, report = run_job(ctx, src, memory=memory, env={"DISCOUNT_IO_THREADS": "3"})
    E.check(UNSTAGED in r.stdout, f"the job did not run without the staging ring:\n{r.stdout}")
    expect_exact(src)
    expect_parallel(r, report, "shuffle + deflate 4")
    want = stored_chunks(src, "discount")
    z = report.get("decompression") or {}
    E.check((z.get("chunks"), z.get("stored_bytes"), z.get("raw_bytes")) == want,
            f"the report's decompression object {z}: expected (chunks, stored, raw bytes) {want}")


def case_unstaged_refused_thick_chunks(ctx):
    """Chunks three dates thick meet a slab's pieces three times each: memory.staging: none
    refuses them (78, naming why); auto takes the ring and is exact."""
    m, disc = random_data(12, SMALL)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (3, 7001, 5), gzip(1, shuffle=True))
    r, _ = run_job(ctx, src, rc=E.EX_CONFIG, memory={"staging": "none"})
    E.check("memory.staging: none" in r.stderr and "one element thick" in r.stderr
            and "this input's chunks are not" in r.stderr, f"the refusal does not say why:\n{r}")
    r, report = run_job(ctx, src, memory={"staging": "auto"})
    E.check(UNSTAGED not in r.stdout, f"auto took none for chunks three dates thick:\n{r.stdout}")
    expect_exact(src)


# --------------------------------------------------------------------------
# Chunks never written


def partly_written(dtype, chunks, seed, shape=(7, 60013, 5), memory=None):
    """shape (7, 60000, 5) with chunks (1, 20000, 5): every chunk lands whole in its slab, so the fused
    multiply visits each as it lands, the never-written ones too. memory: {"staging": "none"}: the
    I/O threads' ~1 MiB pieces read each chunk (or its fill value) on their own."""
    def case(ctx):
        m, disc = random_data(seed, shape, dtype)
        src = os.path.join(ctx.dir("data"), "in.h5")
        with h5py.File(src, "w") as f:
            f.create_dataset("multBy", data=m)
            ds = f.create_dataset("discount", shape=shape, dtype=dtype, chunks=chunks, fillvalue=2.5,
                                  **gzip(4, shuffle=True))
            for d in (0, 2, 5):
                ds[d] = disc[d]
            ds[3, :20000] = disc[3, :20000]
            ds[6, 30000:30001, 2] = disc[6, 30000:30001, 2]  # one element: its chunk holds the fill value else
        with h5py.File(src, "r") as f:
            stored, total = f["discount"].id.get_num_chunks(), int(np.prod([-(-n // c) for n, c in zip(shape, chunks)]))
        E.check(0 < stored < total, f"{stored} of {total} chunks stored: not a partly written dataset")
        r, report = run_job(ctx, src, memory=memory)
        if memory:
            E.check(UNSTAGED in r.stdout, f"the job did not run without the staging ring:\n{r.stdout}")
        expected = expect_exact(src)
        want = m.astype(np.float64) * 2.5
        E.assert_bits_equal(expected[1], want, "h5py's fill value (date 1)")
        E.assert_bits_equal(expected[4], want, "h5py's fill value (date 4)")
        expect_parallel(r, report, "shuffle + deflate 4")
        print(f"{np.dtype(dtype).name}, chunks {chunks}: {stored} of {total} chunks written, the rest 2.5: exact")
    return case


# --------------------------------------------------------------------------
# Read paths other than the app's


def case_small_chunks_hdf5_path(ctx):
    """Chunks (1, 1000, 5) = 40 KB, under 64 KiB: HDF5 reads them, exact."""
    m, disc = random_data(13, SMALL)
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 1000, 5), gzip(4, shuffle=True))
    r, report = run_job(ctx, src)
    expect_exact(src)
    path = read_path(report)
    E.check(path.startswith("HDF5 reads (") and "64 KiB" in path, f"read_path {path!r}")
    E.check(PARALLEL not in header_input_line(r), f"the header names parallel chunk reads:\n{r}")
    print(f"chunks of 40 KB: {path}: exact")


def case_lzf_refused(ctx):
    """lzf with no plugin for it (HDF5_PLUGIN_PATH an empty folder): 65 naming the filter."""
    m, disc = random_data(14, (3, 60013, 5))
    d = ctx.dir("data")
    src = write(os.path.join(d, "in.h5"), m, disc, (1, 50000, 5), {"compression": "lzf"})
    r, _ = run_job(ctx, src, rc=65, env=dict({"HDF5_PLUGIN_PATH": ctx.dir("no-plugins")},
                                             **(E.damaged_hdf5_env() or {})))
    line = D.expect_one_error(r, 65, ["lzf", "32000", "HDF5_PLUGIN_PATH", "'discount'"])
    E.check(not E.leftovers(os.path.join(d, "out.h5")) and not os.path.exists(os.path.join(d, "out.h5")),
            "an output was created")
    print(line)


def bzip2_run(ctx, seed):
    need_filter(BZIP2, "bzip2")
    m, disc = random_data(seed, (2, 20011, 5))
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 20011, 5), dict(hdf5plugin.BZip2()))
    r = E.app(ctx, "run", E.write_job(os.path.join(ctx.dir("data"), "job.yaml"), "in.h5", "out.h5"),
              "--report", os.path.join(ctx.dir("data"), "report.json"), cwd=ctx.dir("data"), env=E.damaged_hdf5_env())
    return src, r


def case_bzip2_hdf5_path(ctx):
    """bzip2 (307), not decoded by the app: HDF5 reads it through its plugin
    (exact), or, with no plugin loadable, 65 naming HDF5_PLUGIN_PATH."""
    src, r = bzip2_run(ctx, 15)
    if r.rc == 65:
        line = D.expect_one_error(r, 65, ["HDF5_PLUGIN_PATH", "307"])
        print(f"no bzip2 plugin for the app's HDF5: {line}")
        return
    E.expect_rc(r, 0, "run")
    expect_exact(src)
    with open(os.path.join(ctx.dir("data"), "report.json")) as f:
        path = read_path(json.load(f))
    E.check(path.startswith("HDF5 reads (chunked") and "307" in path and "is not one this build decodes" in path,
            f"read_path {path!r}")
    E.check(PARALLEL not in header_input_line(r), f"the header names parallel chunk reads:\n{r}")
    print(f"bzip2: {path}: exact")


def case_read_path_names_unknown_filter_once(ctx):
    """The read path of a filter lib/codec has no name for says "filter filter
    307 (307) is not one this build decodes": codec::unimplemented() puts
    "filter " before codec::filter_name(), which is "filter <id>" already."""
    src, r = bzip2_run(ctx, 16)
    if r.rc != 0:
        raise E.Skip(f"the app's HDF5 has no bzip2 plugin here (exit {r.rc})")
    with open(os.path.join(ctx.dir("data"), "report.json")) as f:
        path = read_path(json.load(f))
    E.check("filter filter" not in path, f"read_path {path!r}")


def case_bitshuffle_plugin(ctx):
    """Bitshuffle (32008) is not one the app decodes: HDF5's path or 65."""
    need_filter(BITSHUFFLE, "bitshuffle")
    m, disc = random_data(17, (3, 60013, 5))
    src = write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, (1, 50000, 5), dict(hdf5plugin.Bitshuffle()))
    r = E.app(ctx, "run", E.write_job(os.path.join(ctx.dir("data"), "job.yaml"), "in.h5", "out.h5"),
              cwd=ctx.dir("data"), env=E.damaged_hdf5_env())
    if r.rc == 65:
        print(D.expect_one_error(r, 65, ["HDF5_PLUGIN_PATH"]))
        return
    E.expect_rc(r, 0, "run")
    expect_exact(src)
    E.check(PARALLEL not in header_input_line(r), f"the header names parallel chunk reads:\n{r}")


# --------------------------------------------------------------------------
# Damage


def damaged_input(ctx, filters, chunks=(1, 20000, 5), shape=SMALL, data="random", seed=20):
    m, disc = (random_data if data == "random" else realistic_data)(seed, shape)
    return write(os.path.join(ctx.dir("data"), "in.h5"), m, disc, chunks, filters)


def case_damaged_deflate_chunk(ctx):
    src = damaged_input(ctx, gzip(4, shuffle=True))
    at, size = chunk_at(src, (3, 20000, 0))
    flip(src, range(at + size // 2, at + size // 2 + 40))
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, (3, 20000, 0), "damaged", "deflate", "running again cannot help"))


def case_damaged_fletcher32_deflate(ctx):
    """One byte flipped under shuffle + deflate + Fletcher32."""
    src = damaged_input(ctx, gzip(4, shuffle=True, fletcher32=True), data="realistic")
    at, size = chunk_at(src, (2, 40000, 0))
    flip(src, [at + size // 3], 0x01)
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, (2, 40000, 0), "damaged"))


def case_damaged_fletcher32_alone(ctx):
    """One byte flipped in a chunk stored with Fletcher32 only (no compression)."""
    src = damaged_input(ctx, {"fletcher32": True})
    at, size = chunk_at(src, (4, 60000, 0))
    flip(src, [at + 7], 0x80)
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, (4, 60000, 0), "damaged", "Fletcher32"))


def case_damaged_lz4_chunk(ctx):
    """LZ4: the first block's stored size made larger than the chunk."""
    src = damaged_input(ctx, lz4(), data="realistic")
    at, _ = chunk_at(src, (1, 0, 0))
    flip(src, [at + 12], 0x40)  # the top byte of the first block's size (big-endian)
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, (1, 0, 0), "damaged", "lz4"))


def case_damaged_blosc_chunk(ctx):
    """Blosc: its header's uncompressed size changed."""
    src = damaged_input(ctx, blosc("lz4"), data="realistic")
    at, _ = chunk_at(src, (0, 40000, 0))
    flip(src, [at + 6], 0x10)  # nbytes, little-endian, at byte 4 of the header
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, (0, 40000, 0), "damaged", "blosc"))


def cut_inside_last_chunk(src, fix_superblock):
    """Truncates the file inside its last chunk (of 'discount', the last thing
    in the file); with fix_superblock the superblock's end of file moves with
    it, so HDF5 opens the file and the chunk lies past its end."""
    coords, at, size = chunk_table(src)[-1]
    E.check(at + size == os.path.getsize(src), f"{src}: the last chunk is not the end of the file")
    os.truncate(src, at + size // 2)
    if fix_superblock:
        with open(src, "r+b") as f:
            head = f.read(48)
            E.check(head[:8] == b"\x89HDF\r\n\x1a\n" and head[8] == 0 and head[13] == 8,
                    "not a version 0 superblock with 8-byte addresses")
            E.check(struct.unpack("<Q", head[40:48])[0] == at + size, "the superblock's end of file is not the file's")
            f.seek(40)
            f.write(struct.pack("<Q", at + size // 2))
    return coords


def case_truncated_in_last_chunk(ctx):
    """Truncated inside the last chunk: HDF5 will not open the file (its
    superblock records the longer file): 65, one line naming the file."""
    src = damaged_input(ctx, gzip(4, shuffle=True))
    cut_inside_last_chunk(src, fix_superblock=False)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(D.expect_one_error(r, 65, ["in.h5", "truncated"]))


def case_chunk_past_end_sampled(ctx):
    """The last chunk past the end of the file (superblock matching): the
    input check's sample of the index (<= 64 chunks here) names it."""
    src = damaged_input(ctx, gzip(4, shuffle=True))
    coords = cut_inside_last_chunk(src, fix_superblock=True)
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, coords, "outside the file"))


def case_chunk_past_end_unsampled(ctx):
    """As above with 140 chunks, the last beyond the input check's sample of
    64: the chunk reader's own check names it."""
    src = damaged_input(ctx, gzip(1, shuffle=True), chunks=(1, 2222, 5), shape=(5, 60013, 5))
    coords = cut_inside_last_chunk(src, fix_superblock=True)
    E.check(len(chunk_table(src)) > 64, "64 chunks or fewer")
    h5py_cannot_read(src)
    r, _ = run_job(ctx, src, rc=65, env=E.damaged_hdf5_env())
    print(expect_damage_error(r, coords, "outside the file"))


# --------------------------------------------------------------------------
# Fuzz


def fuzz_one(app, base, directory, positions, xors):
    os.makedirs(directory, exist_ok=True)
    data = bytearray(base)
    for p, x in zip(positions, xors):
        data[p] ^= x
    path = os.path.join(directory, "in.h5")
    with open(path, "wb") as f:
        f.write(data)
    yaml = E.write_job(os.path.join(directory, "job.yaml"), "in.h5", "out.h5", output={"overwrite": True})
    rc, _, err = D.run_app(app, ["run", "-q", yaml], directory, timeout=60,
                           env=dict({"DISCOUNT_IO_THREADS": "3"}, **(E.damaged_hdf5_env() or {})))
    return rc, err, h5py_product(path) if rc == 0 else None


def fuzz(kind, seed, runs=FUZZ_RUNS):
    def case(ctx):
        d = ctx.dir("fuzz")
        if kind in ("lz4", "blosc"):
            m, disc = realistic_data(seed, (2, 60013, 5), rate_steps=31)
            filters = lz4() if kind == "lz4" else blosc("lz4")
        else:
            m, disc = random_data(seed, (2, 60013, 5))
            filters = gzip(4, shuffle=True)
        src = write(os.path.join(d, "base.h5"), m, disc, (1, 20000, 5), filters)
        undamaged = m[None, :, :] * disc
        chunks = chunk_table(src)
        with open(src, "rb") as f:
            base = f.read()
        rng = np.random.default_rng(seed)
        jobs = []
        for i in range(runs):
            flips = {}
            for _ in range(int(rng.integers(1, 5))):
                coords, at, size = chunks[int(rng.integers(len(chunks)))]
                # One flip in four lands in the chunk's first 16 bytes: the
                # zlib header, LZ4's sizes.
                span = min(size, 16) if rng.random() < 0.25 else size
                flips[int(rng.integers(at, at + span))] = (coords, int(rng.integers(1, 256)))
            positions = sorted(flips)
            jobs.append(({flips[p][0] for p in positions}, os.path.join(d, f"run{i:02d}"), positions,
                         [flips[p][1] for p in positions]))
        failures, outcomes, silent = [], {}, 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futures = {pool.submit(fuzz_one, ctx.app, base, where, positions, xors): (coords, where, positions, xors)
                       for coords, where, positions, xors in jobs}
            for future in concurrent.futures.as_completed(futures):
                coords, where, positions, xors = futures[future]
                rc, err, expected = future.result()
                outcomes[rc] = outcomes.get(rc, 0) + 1
                what = (f"{kind} chunk(s) {sorted(coords)} bytes {positions} ^ {[hex(x) for x in xors]} "
                        f"({os.path.basename(where)}): rc {rc}")
                lines = err.strip().split("\n")
                before = len(failures)
                if rc is None:
                    failures.append(f"{what}: hung (over 60 s)")
                elif rc < 0:
                    failures.append(f"{what}: killed by signal {-rc}:\n{err}")
                elif rc not in (0, 65):
                    failures.append(f"{what}: exit {rc}, expected 0 or 65:\n{err}")
                elif rc == 65:
                    if len(lines) != 1 or not lines[0].startswith("discount_app: error: "):
                        failures.append(f"{what}: not one error line:\n{err}")
                    elif "'discount'" not in lines[0] or not any(coords_re(c).search(lines[0]) for c in coords):
                        failures.append(f"{what}: the error does not name a damaged chunk:\n{err}")
                else:
                    if expected is None:
                        failures.append(f"{what}: exit 0 where h5py cannot read the damaged file")
                    else:
                        try:
                            E.check_output(os.path.join(where, "out.h5"), expected, what=what)
                            silent += not np.array_equal(expected.view(np.uint64), undamaged.view(np.uint64))
                        except E.Failure as e:
                            failures.append(str(e))
                if len(failures) == before:
                    E.wipe(where)
        print(f"{runs} runs over {len(chunks)} chunks: outcomes "
              f"{ {str(k): v for k, v in sorted(outcomes.items(), key=lambda kv: str(kv[0]))} }; "
              f"{silent} exit-0 run(s) with damage no decoder can see, exact against h5py")
        E.check(not failures, f"{len(failures)} of {runs} runs went wrong:\n" + "\n".join(failures[:10]))
    return case


CASES = [
    # deflate levels, shuffle, Fletcher32, chunk shapes, data
    ("deflate1_shuffle_random_big", exact(BIG, "random", (1, 50000, 5), gzip(1, shuffle=True), "shuffle + deflate 1")),
    ("deflate1_realistic", exact(SMALL, "realistic", (1, 50000, 5), gzip(1), "deflate 1", seed=2)),
    ("deflate9_shuffle_realistic_multby_too",
     exact((7, 60013, 5), "realistic", (1, 50000, 5), gzip(9, shuffle=True), "shuffle + deflate 9", seed=3,
           mult=((50000, 5), gzip(9, shuffle=True)), mult_pipeline="shuffle + deflate 9")),
    ("deflate9_random", exact(SMALL, "random", (1, 50000, 5), gzip(9), "deflate 9", seed=4)),
    ("fletcher32_shuffle_deflate", exact(SMALL, "random", (1, 50000, 5), gzip(4, shuffle=True, fletcher32=True),
                                         "shuffle + deflate 4 + fletcher32", seed=5, verify=True)),
    ("fletcher32_alone", exact(SMALL, "realistic", (1, 50000, 5), {"fletcher32": True}, "fletcher32", seed=6)),
    ("edge_chunks_3x7001x5", exact(SMALL, "realistic", (3, 7001, 5), gzip(4, shuffle=True), "shuffle + deflate 4",
                                   seed=7, env={"DISCOUNT_IO_THREADS": "4"})),
    ("chunks_2x40000x1", exact(SMALL, "random", (2, 40000, 1), gzip(4, shuffle=True), "shuffle + deflate 4", seed=8)),
    ("id_date_num_axes", case_id_date_num_axes),
    ("float32_stored", case_float32_stored),
    ("selection_cuts_chunks", case_selection_cuts_chunks),
    ("big_endian_hdf5_path", case_big_endian_hdf5_path),
    # chunk indexes
    ("index_fixed_array", chunk_index_case("latest", None, (1, 20000, 5))),
    ("index_extensible_array", chunk_index_case("latest", (None, SMALL[1], SMALL[2]), (1, 20000, 5))),
    ("index_v2_btree", chunk_index_case("latest", (None, None, None), (2, 7001, 5))),
    ("index_single_chunk", chunk_index_case("latest", None, (2, 20011, 5), shape=(2, 20011, 5))),
    ("index_btree_one_chunk", chunk_index_case("earliest", None, (2, 20011, 5), shape=(2, 20011, 5))),
    # hdf5plugin filters
    ("lz4_realistic", exact(SMALL, "realistic", (1, 50000, 5), lz4, "lz4", seed=21, verify=True)),
    ("lz4_random_edge_chunks", exact(SMALL, "random", (3, 7001, 5), lz4, "lz4", seed=22)),
    ("blosc_lz4_shuffle", exact(SMALL, "realistic", (1, 50000, 5), lambda: blosc("lz4"), "blosc 5", seed=23,
                                verify=True)),
    ("blosc_zstd_shuffle", exact(SMALL, "random", (3, 7001, 5), lambda: blosc("zstd"), "blosc 5", seed=24)),
    ("blosc_skipped_chunks", blosc_skipped(False)),
    ("blosc_skipped_chunks_fletcher32", blosc_skipped(True)),
    ("zstd_plugin", exact(SMALL, "realistic", (1, 50000, 5),
                          lambda: (need_filter(ZSTD, "zstd"), dict(hdf5plugin.Zstd(clevel=3)))[1], "zstd 3",
                          seed=25)),
    ("bitshuffle_plugin", case_bitshuffle_plugin),
    # slabs that cut chunks
    ("max_slab_cuts_chunks_id", case_max_slab_cuts_chunks_id),
    ("max_slab_cuts_chunks_date", case_max_slab_cuts_chunks_date),
    ("host_budget_cuts_chunks", case_host_budget_cuts_chunks),
    ("cut_chunks_decoded_once_date", case_cut_chunks_decoded_once_date),
    ("id_slabs_decode_each_chunk_once", case_id_slabs_decode_each_chunk_once),
    # memory.staging: none's pieces
    ("unstaged_decodes_each_chunk_once", case_unstaged_decodes_each_chunk_once),
    ("unstaged_refused_thick_chunks", case_unstaged_refused_thick_chunks),
    ("unstaged_fill_value_float32", partly_written(np.float32, (1, 20000, 5), 33, memory={"staging": "none"})),
    # the decoding's figures
    ("decompression_report", case_decompression_report),
    ("no_decompression_without_chunk_reads", case_no_decompression_without_chunk_reads),
    ("plan_decompression_line", case_plan_decompression_line),
    # chunks never written
    ("partly_written_fill_value", partly_written(np.float64, (1, 20000, 5), 30)),
    ("partly_written_fill_value_float32_edge", partly_written(np.float32, (3, 7001, 5), 31)),
    ("partly_written_fill_value_whole_chunks", partly_written(np.float64, (1, 20000, 5), 32, shape=(7, 60000, 5))),
    # read paths
    ("small_chunks_hdf5_path", case_small_chunks_hdf5_path),
    ("lzf_refused", case_lzf_refused),
    ("bzip2_hdf5_path", case_bzip2_hdf5_path),
    ("read_path_names_unknown_filter_once", case_read_path_names_unknown_filter_once),
    # damage
    ("damaged_deflate_chunk", case_damaged_deflate_chunk),
    ("damaged_fletcher32_deflate", case_damaged_fletcher32_deflate),
    ("damaged_fletcher32_alone", case_damaged_fletcher32_alone),
    ("damaged_lz4_chunk", case_damaged_lz4_chunk),
    ("damaged_blosc_chunk", case_damaged_blosc_chunk),
    ("truncated_in_last_chunk", case_truncated_in_last_chunk),
    ("chunk_past_end_sampled", case_chunk_past_end_sampled),
    ("chunk_past_end_unsampled", case_chunk_past_end_unsampled),
    ("fuzz_deflate_shuffle", fuzz("deflate", 40)),
    ("fuzz_lz4", fuzz("lz4", 41)),
    ("fuzz_blosc_lz4", fuzz("blosc", 42, runs=20)),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
