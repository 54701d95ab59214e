#!/usr/bin/env python3
"""output.compression: a split output's finished parts stored as compressed
chunks (io/records/part_compress.hpp), read back by readers that share no code with
the app.

Inputs are written with h5py: realistic data (discount exp(-r t) rounded to
8 decimals, multBy in cents) or random non-zero values of every sign and
exponent, in odd shapes (9 x 54321 x 5: chunks end inside the ids). The
expected cv is NumPy's float64 product (float32: that product rounded once),
and every comparison is of the full arrays, bit for bit. Nothing is
pre-filled: a chunk that was never written reads as NaN (the decoders below
start from NaN) or fails to decode.

Two readers check each part, where this machine has them:
  - HDF5 through h5py: deflate and shuffle built in, LZ4 and Blosc through
    `import hdf5plugin` (Debian's 4.0.1 has no zstd filter);
  - this script's own chunk decoder: each chunk's stored bytes (h5py's
    read_direct_chunk), its filter mask honoured, decoded with zlib,
    numcodecs' Zstd and Blosc, python-lz4 (in HDF5's LZ4 framing) and a NumPy
    unshuffle.
A codec neither reader can decode here is checked through `discount_app
verify` alone, and the case says why.

Cases: each codec and shuffle round-trips, with the declared filters and
their parameters; float32; explicit chunks, also not dividing the part and
in a transposed axis order; stored sizes below raw and as the stderr line
and the report's compression object give them (its per-thread rate and
limit consistent with its bytes, busy seconds and threads); xarray
(h5netcdf, netcdf4) and ncdump read the output; kill -9 mid-run and before
the compression, a part left contiguous beside compressed ones, and an
uncompressed partial resumed with compression; overwrite of a compressed
set; verify passes and fails on one flipped byte in a chunk; configuration
errors exit 78 with one line.
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import zlib

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

try:
    import hdf5plugin  # noqa: F401 (registers LZ4, Blosc ... with h5py)
    HDF5PLUGIN = None
except ImportError as e:
    HDF5PLUGIN = f"hdf5plugin is not installed ({e})"

DATES, IDS, NUMS = 9, 54321, 5
DEFLATE, SHUFFLE, ZSTD, LZ4, BLOSC = 1, 2, 32015, 32004, 32001
FILTER_NAMES = {DEFLATE: "deflate", SHUFFLE: "shuffle", ZSTD: "zstd", LZ4: "lz4", BLOSC: "blosc"}
DEFAULT_LEVEL = {"deflate": 4, "gzip": 4, "zstd": 3, "blosc": 5}
LINE = re.compile(r"^discount_app: compression: (?P<what>[^,]+), (?P<parts>\d+) part\(s\), (?P<raw>[\d.]+) GB -> "
                  r"(?P<stored>[\d.]+) GB \(ratio (?P<ratio>[\d.]+)\) in [\d.]+ s on (?P<threads>\d+) threads: ", re.M)


# --------------------------------------------------------------------------
# Inputs


def realistic(seed, dates, ids, nums):
    """discount exp(-r t) for monthly dates, rounded to 8 decimals; multBy amounts in cents."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, dates + 1, dtype=np.float64) / 12.0
    r = rng.uniform(0.005, 0.08, size=(ids, nums))
    disc = np.round(np.exp(-r[None, :, :] * t[:, None, None]), 8)
    mult = rng.integers(1, 10 ** 9, size=(ids, nums)).astype(np.float64) / 100.0
    return mult, disc


def random_data(seed, dates, ids, nums):
    rng = np.random.default_rng(seed)
    return E.random_nonzero(rng, (ids, nums)), E.random_nonzero(rng, (dates, ids, nums))


class Job:
    """An input, a job file and the expected cv. compression: the output.compression map (None: none);
    output/memory: more keys; axes: the input's (and output's) axis order."""

    def __init__(self, ctx, compression, data=realistic, seed=1, shape=(DATES, IDS, NUMS), axes=E.CANON,
                 output=None, memory=None, name="job"):
        self.ctx = ctx
        self.d = ctx.dir(name)
        self.shape = shape
        self.axes = tuple(axes)
        dates, ids, nums = shape
        mult, disc = data(seed, dates, ids, nums)
        disc = np.ascontiguousarray(np.transpose(disc, [E.CANON.index(a) for a in self.axes]))
        self.src = E.write_input(os.path.join(self.d, "in.h5"), mult, disc)
        self.out = os.path.join(self.d, "out.h5")
        self.expected = E.expected_cv(self.src, axes=self.axes)
        self.output = dict({"parts": 3, "checkpoint_seconds": 0}, **(output or {}))
        self.memory = dict({"max_slab": ids * nums * 8, "chunk_axis": "date"}, **(memory or {}))
        self.yaml = self.write("job.yaml", compression)

    def write(self, name, compression, **output):
        out = dict(self.output, **output)
        if compression is not None:
            out["compression"] = dict(compression)
        return E.write_job(os.path.join(self.d, name), "in.h5", "out.h5", input={"axes": list(self.axes)},
                           output=out, memory=self.memory)

    def run(self, *args, yaml=None, rc=0, env=None, what="run"):
        return E.expect_rc(E.app(self.ctx, "run", *args, yaml or self.yaml, cwd=self.d, env=env), rc, what)

    def start(self, hold, yaml=None):
        proc, _, err = E.start([self.ctx.app, "run", "-q", yaml or self.yaml], self.d,
                               os.path.join(self.ctx.work, "held"), env=hold.env)
        proc.err_path = err
        return proc

    def verify(self, *args):
        return E.expect_rc(E.app(self.ctx, "verify", *args, self.yaml, cwd=self.d), 0, "verify")

    def folder(self):
        folders = sorted(p for p in glob.glob(os.path.join(self.d, "out.h5.parts-*")) if os.path.isdir(p))
        E.check(len(folders) == 1, f"part folders: {folders}")
        return folders[0]

    def parts(self):
        return sorted(glob.glob(os.path.join(self.folder(), "part-*.h5")))

    def expected_stored(self, dtype):
        return self.expected if dtype == np.float64 else self.expected.astype(np.float32)


# --------------------------------------------------------------------------
# What the parts hold


def same_bits(actual, expected, what):
    """Exact equality of two float arrays of one dtype (float64 or float32), through integer views."""
    E.check(actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}")
    E.check(actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, expected {expected.dtype}")
    if expected.dtype == np.float64:
        E.assert_bits_equal(actual, expected, what)
        return
    a, e = np.ascontiguousarray(actual).view(np.uint32), np.ascontiguousarray(expected).view(np.uint32)
    bad = np.argwhere(a != e)
    if len(bad):
        i = tuple(int(x) for x in bad[0])
        raise E.Failure(f"{what}: {len(bad)} of {a.size} float32 elements differ; first at {i}: "
                        f"got {actual[i]!r}, expected {expected[i]!r}")


def part_facts(part):
    """(layout, dtype, shape, chunks, filters [(id, values)], chunk infos) of a part's cv, read with h5py."""
    with h5py.File(part, "r") as f:
        E.check(list(f.keys()) == ["cv"], f"{part}: holds {list(f.keys())}, expected only cv")
        ds = f["cv"]
        dcpl = ds.id.get_create_plist()
        filters = []
        for i in range(dcpl.get_nfilters()):
            fid, _flags, values, _name = dcpl.get_filter(i)
            filters.append((fid, tuple(int(v) for v in values)))
        layout = dcpl.get_layout()
        infos = [ds.id.get_chunk_info(i) for i in range(ds.id.get_num_chunks())] if layout == h5py.h5d.CHUNKED else []
        return layout, ds.dtype, ds.shape, ds.chunks, filters, infos


def is_compressed(part):
    return part_facts(part)[0] == h5py.h5d.CHUNKED


def expected_filters(z, element, chunk_bytes):
    """The pipeline a part declares for the compression map z (io/records/part_compress.cpp, hdf5-blosc's client data)."""
    codec = {"gzip": "deflate"}.get(z["codec"], z["codec"])
    level = z.get("level", DEFAULT_LEVEL.get(codec))
    shuffle = z.get("shuffle", "byte")
    if codec == "blosc":
        return [(BLOSC, (2, 2, element, chunk_bytes, level, {"none": 0, "byte": 1, "bit": 2}[shuffle], 1))]
    pipeline = [(SHUFFLE, (element,))] if shuffle == "byte" else []
    pipeline.append({"deflate": (DEFLATE, (level,)), "zstd": (ZSTD, (level,)), "lz4": (LZ4, (0,))}[codec])
    return pipeline


def part_bounds(out):
    """Per part file (relative name), its (start, stop) box in the master's cv, from the virtual mapping."""
    boxes = {}
    with h5py.File(out, "r") as f:
        ds = f["cv"]
        E.check(ds.is_virtual, f"{out}: cv is not a virtual dataset")
        for s in ds.virtual_sources():
            lo, hi = s.vspace.get_select_bounds()
            boxes[s.file_name] = (tuple(lo), tuple(h + 1 for h in hi))
    return boxes


def check_parts(job, z, dtype=np.float64, chunks=None, masks_zero=True):
    """Every part is chunked with the declared filters (and chunk shape, when given: the configured one cut to
    the part) and holds, read by h5py where it can and by this script's decoder where it can, exactly its box
    of the expected cv; returns the parts' facts."""
    element = np.dtype(dtype).itemsize
    expected = job.expected_stored(dtype)
    boxes = part_bounds(job.out if os.path.exists(job.out) else E.partial_of(job.out))
    parts = job.parts()
    E.check(len(parts) == len(boxes), f"{len(parts)} part files, the master maps {len(boxes)}")
    cover = np.zeros(expected.shape, dtype=np.uint8)
    for lo, hi in boxes.values():
        cover[tuple(slice(a, b) for a, b in zip(lo, hi))] += 1
    E.check((cover == 1).all(), "the master's parts do not map every element of cv exactly once")
    facts = {}
    readers = set()
    for part in parts:
        name = os.path.relpath(part, job.d)
        E.check(name in boxes, f"{name} is not mapped by the master ({sorted(boxes)})")
        lo, hi = boxes[name]
        want = expected[tuple(slice(a, b) for a, b in zip(lo, hi))]
        layout, ptype, shape, pchunks, filters, infos = part_facts(part)
        E.check(layout == h5py.h5d.CHUNKED, f"{name}: not chunked (layout {layout})")
        E.check(ptype == np.dtype(dtype).newbyteorder("<"), f"{name}: dtype {ptype}, expected {np.dtype(dtype)}")
        E.check(shape == want.shape, f"{name}: shape {shape}, expected {want.shape}")
        if chunks is not None:
            cut = tuple(min(c, s) for c, s in zip(chunks, shape))
            E.check(pchunks == cut, f"{name}: chunks {pchunks}, expected {cut} (configured {chunks})")
        chunk_bytes = int(np.prod(pchunks)) * element
        E.check(filters == expected_filters(z, element, chunk_bytes),
                f"{name}: filters {filters}, expected {expected_filters(z, element, chunk_bytes)}")
        grid = int(np.prod([-(-s // c) for s, c in zip(shape, pchunks)]))
        E.check(len(infos) == grid, f"{name}: {len(infos)} chunks stored, the grid has {grid}")
        if masks_zero:
            skipped = [i.chunk_offset for i in infos if i.filter_mask != 0]
            E.check(not skipped, f"{name}: chunks stored with filters skipped: {skipped[:5]}")
        for read, label, reader in ((read_with_h5py, "read by h5py", "h5py"),
                                    (decode_part, "decoded chunk by chunk", "the own decoder")):
            got, how = read(part, dtype)
            if got is not None:
                same_bits(got, want, f"{name} {label}")
                readers.add(reader)
            else:
                readers.add(f"not {reader} ({how})")
        facts[name] = (shape, pchunks, infos, os.path.getsize(part))
    print(f"{len(parts)} parts, filters {filters}, chunks {pchunks}: read by {', '.join(sorted(readers))}")
    return facts, readers


def read_with_h5py(part, dtype):
    """The part's cv through HDF5's filters, or (None, why) when this HDF5 lacks one of them (then the read
    must fail, never return something)."""
    with h5py.File(part, "r") as f:
        ds = f["cv"]
        dcpl = ds.id.get_create_plist()
        missing = [dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters())
                   if not h5py.h5z.filter_avail(dcpl.get_filter(i)[0])]
        out = np.empty(ds.shape, dtype=dtype)
        try:
            ds.read_direct(out)
        except OSError as e:
            if not missing:
                raise
            why = f"HDF5 has no filter {', '.join(FILTER_NAMES.get(m, str(m)) for m in missing)} here"
            return None, why + (f"; {HDF5PLUGIN}" if HDF5PLUGIN else "") + f" ({str(e).splitlines()[0][:60]}...)"
        return out, None


def lz4_hdf5_decode(raw, lz4block):
    """HDF5's LZ4 filter framing (H5Zlz4.c): u64 BE total size, u32 BE block size, then per block u32 BE
    compressed size and the block (stored as is when that size equals the block's)."""
    total = int.from_bytes(raw[0:8], "big")
    block = int.from_bytes(raw[8:12], "big")
    pos, out = 12, bytearray()
    while len(out) < total:
        n = int.from_bytes(raw[pos:pos + 4], "big")
        pos += 4
        size = min(block, total - len(out))
        piece = raw[pos:pos + n]
        out += piece if n == size else lz4block.decompress(piece, uncompressed_size=size)
        pos += n
    return bytes(out)


def decoders():
    """Filter id -> (decode(bytes, values) -> bytes, or None with the reason it is missing)."""
    dec = {DEFLATE: (lambda b, v: zlib.decompress(b)),
           SHUFFLE: (lambda b, v: np.frombuffer(b, np.uint8).reshape(v[0], -1).T.tobytes())}
    try:
        from numcodecs import Zstd, Blosc
        dec[ZSTD] = lambda b, v: bytes(Zstd().decode(b))
        dec[BLOSC] = lambda b, v: bytes(Blosc().decode(b))
    except ImportError as e:
        dec[ZSTD] = dec[BLOSC] = f"numcodecs is not installed ({e})"
    try:
        import lz4.block as lz4block
        dec[LZ4] = lambda b, v: lz4_hdf5_decode(b, lz4block)
    except ImportError as e:
        dec[LZ4] = f"python3-lz4 is not installed ({e})"
    return dec


def decode_part(part, dtype):
    """The part's cv from its chunks' stored bytes, decoded here (never through HDF5's filters), or
    (None, why). Starts from NaN: a chunk the grid misses fails the comparison."""
    dec = decoders()
    with h5py.File(part, "r") as f:
        ds = f["cv"]
        dcpl = ds.id.get_create_plist()
        pipeline = []
        for i in range(dcpl.get_nfilters()):
            fid, _, values, _ = dcpl.get_filter(i)
            if not callable(dec.get(fid)):
                return None, dec.get(fid) or f"no decoder for filter {fid}"
            pipeline.append((fid, tuple(values)))
        shape, chunks = ds.shape, ds.chunks
        out = np.full(shape, np.nan, dtype=dtype)
        for i in range(ds.id.get_num_chunks()):
            info = ds.id.get_chunk_info(i)
            mask, raw = ds.id.read_direct_chunk(info.chunk_offset)
            data = bytes(raw)
            for j in reversed(range(len(pipeline))):
                if not mask & (1 << j):
                    fid, values = pipeline[j]
                    data = dec[fid](data, values)
            E.check(len(data) == int(np.prod(chunks)) * np.dtype(dtype).itemsize,
                    f"{part}: chunk {info.chunk_offset} decodes to {len(data)} bytes")
            block = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<")).reshape(chunks)
            at = info.chunk_offset
            box = tuple(slice(a, min(a + c, s)) for a, c, s in zip(at, chunks, shape))
            out[box] = block[tuple(slice(0, b.stop - b.start) for b in box)]
        return out, None


def check_master(job, dtype=np.float64, what="master cv"):
    """The master's cv, read by h5py as one dataset, equals the expected values; where this HDF5 lacks a
    part's filter, the read must fail and the case says so."""
    with h5py.File(job.out, "r") as f:
        ds = f["cv"]
        E.check(ds.is_virtual and ds.dtype == np.dtype(dtype).newbyteorder("<"), f"master cv: {ds.dtype}")
        try:
            got = ds[...]
        except OSError as e:
            _, why = read_with_h5py(job.parts()[0], dtype)
            E.check(why is not None, f"h5py cannot read the master's cv, yet reads its part: {e}")
            print(f"the master's cv is not read by h5py here: {why}")
            return
    same_bits(got, job.expected_stored(dtype), what + " read by h5py")


def describe(z):
    """The codec as the run's compression line names it."""
    codec = {"gzip": "deflate"}.get(z["codec"], z["codec"])
    text = codec if codec == "lz4" else f"{codec} {z.get('level', DEFAULT_LEVEL[codec])}"
    return text + {"byte": " + shuffle", "bit": " + bitshuffle", "none": ""}[z.get("shuffle", "byte")]


def compression_line(result, describe, parts):
    """The stderr line, checked to name the codec as `describe` and `parts` parts; its match."""
    m = list(LINE.finditer(result.stderr))
    E.check(len(m) == 1, f"expected one compression line on stderr, found {len(m)}:\n{result}")
    m = m[0]
    E.check(m.group("what") == describe and int(m.group("parts")) == parts,
            f"compression line says {m.group('what')!r}, {m.group('parts')} part(s); expected {describe!r}, {parts}:"
            f"\n{result.stderr}")
    return m


def no_leftovers(job):
    left = E.leftovers(job.out) + glob.glob(os.path.join(job.folder(), "*.z.tmp"))
    E.check(not left, f"left behind: {left}")


def app_codecs(ctx):
    """The codecs this build of the app writes, from `--version`'s "compiled in" line."""
    r = E.app(ctx, "--version")
    m = re.search(r"codecs((?: \w+)*)", r.stdout + r.stderr)
    return set(m.group(1).split()) if m else set()


def need_codec(ctx, codec):
    if codec not in app_codecs(ctx):
        raise E.Skip(f"this build of the app does not write {codec} (its library was not found, or cannot go "
                     "into the Python module)")


def roundtrip(z, data=realistic, dtype=np.float64, shape=(DATES, IDS, NUMS), chunks=None, axes=E.CANON,
              line=None, masks_zero=True, seed=1, parts=3, memory=None):
    """A case: run with compression z, check the stderr line, the parts (filters, chunks, both readers), the
    master read by h5py, verify and a finished rerun."""
    def case(ctx):
        need_codec(ctx, z["codec"] if z["codec"] != "gzip" else "deflate")
        output = dict({"dtype": "float32"} if dtype == np.float32 else {}, parts=parts)
        job = Job(ctx, z, data=data, shape=shape, axes=axes, output=output, seed=seed, memory=memory)
        r = job.run()
        compression_line(r, line or describe(z), parts)
        no_leftovers(job)
        if HDF5PLUGIN and z["codec"] in ("lz4", "blosc"):
            print(f"h5py reads no {z['codec']} chunks here: {HDF5PLUGIN}")
        _, readers = check_parts(job, z, dtype=dtype, chunks=chunks, masks_zero=masks_zero)
        if readers.isdisjoint({"h5py", "own decoder"}):
            print(f"NOTE: no reader here decodes {z['codec']} ({sorted(readers)}); checked through "
                  f"`discount_app verify` only")
        check_master(job, dtype)
        job.verify()
        digests = E.tree_digest(job.folder())
        again = job.run(what="finished rerun")
        E.check("already complete" in again.stdout and not LINE.search(again.stderr), f"rerun:\n{again}")
        E.check(E.tree_digest(job.folder()) == digests, "a finished rerun changed the parts")
    return case


# --------------------------------------------------------------------------
# Sizes


def case_sizes_and_stderr_line(ctx):
    """Realistic data: every codec stores each part in fewer bytes than its raw values; the stderr line
    and the JSON report's compression object give the parts' raw bytes and the stored bytes and ratio of
    the chunks in the files (the report exactly, the line to its rounding), and each file exceeds its
    chunks by HDF5's overhead only. The object's thread_rate_bytes_per_s is raw_bytes / busy_seconds and
    its limit_bytes_per_s that times threads."""
    for z in ({"codec": "deflate"}, {"codec": "zstd"}, {"codec": "lz4"}, {"codec": "blosc"},
              {"codec": "blosc", "shuffle": "bit"}):
        if z["codec"] not in app_codecs(ctx):
            print(f"{z['codec']}: not in this build, skipped")
            continue
        job = Job(ctx, z, name=z["codec"] + z.get("shuffle", ""))
        report = os.path.join(job.d, "report.json")
        r = job.run("--report", report)
        facts, _ = check_parts(job, z)
        raw = stored = 0
        for name, (shape, _, infos, size) in facts.items():
            part_raw = int(np.prod(shape)) * 8
            chunk_sum = sum(i.size for i in infos)
            E.check(size < part_raw, f"{z}: {name} is {size} bytes, its raw values {part_raw}")
            # superblock, object header, chunk index: a few KiB, and 32 bytes or so per chunk
            E.check(chunk_sum <= size <= chunk_sum + 64 * E.KiB + 64 * len(infos),
                    f"{z}: {name} is {size} bytes, its chunks {chunk_sum}: more than HDF5's overhead")
            raw += part_raw
            stored += chunk_sum
        E.check(raw == DATES * IDS * NUMS * 8 and stored < raw, f"{z}: {stored} bytes stored for {raw} raw")
        m = compression_line(r, describe(z), 3)
        E.check(abs(float(m.group("raw")) - raw / 1e9) <= 0.0005 + 1e-9,
                f"{z}: the line says {m.group('raw')} GB raw, the parts hold {raw} bytes")
        E.check(abs(float(m.group("stored")) - stored / 1e9) <= 0.0005 + 1e-9,
                f"{z}: the line says {m.group('stored')} GB stored, the chunks hold {stored} bytes")
        E.check(abs(float(m.group("ratio")) - raw / stored) <= 0.005 + 1e-9,
                f"{z}: the line says ratio {m.group('ratio')}, the chunks give {raw / stored:.4f}")
        with open(report) as f:
            doc = json.load(f).get("compression")
        E.check(isinstance(doc, dict) and doc.get("codec") == describe(z) and doc.get("raw_bytes") == raw
                and doc.get("stored_bytes") == stored and abs(doc.get("ratio", 0) - raw / stored) < 1e-9
                and doc.get("threads") == int(m.group("threads")),
                f"{z}: the report's compression object {doc}, the parts: {raw} raw, {stored} stored in chunks")
        rate, limit = doc.get("thread_rate_bytes_per_s", 0), doc.get("limit_bytes_per_s", 0)
        E.check(doc["busy_seconds"] > 0 and rate > 0 and limit > 0
                and abs(rate - raw / doc["busy_seconds"]) <= 1e-9 * rate
                and abs(limit - rate * doc["threads"]) <= 1e-9 * limit,
                f"{z}: the report's compression object {doc}: thread_rate_bytes_per_s is not raw_bytes / "
                f"busy_seconds, or limit_bytes_per_s not that x threads")
        # One HDF5 thread, within the compression's wall time, and a writer per part storing the chunks
        # (each at least 64 KiB here); the line says the same.
        line = m.string[m.start():].splitlines()[0]
        E.check(0 < doc.get("writer_busy_seconds", 0) <= doc["seconds"]
                and 0 < doc.get("store_busy_seconds", 0) <= doc["seconds"] * int(m.group("parts"))
                and 0 <= doc.get("after_slabs_seconds", -1) <= doc["seconds"]
                and re.search(r"; HDF5's chunk writes busy [\d.]+ s, the parts' writers [\d.]+ thread-s; "
                              r"[\d.]+ s after the last slab; the encoders waited [\d.]+ thread-s for slabs "
                              r"\(all of them [\d.]+ s\) and [\d.]+ thread-s for HDF5's thread; closing the "
                              r"parts took [\d.]+ s$", line),
                f"{z}: the writers' busy times: {doc}, line {line!r}")
        # The encoders' waits fit in their thread-time; starving and closing fit in the stage's wall time,
        # and its encoding rate is the raw bytes over the rest.
        threads, wall = doc["threads"], doc["seconds"]
        starved, closing = doc.get("starved_seconds", -1), doc.get("closing_seconds", -1)
        encoding = wall - starved - closing
        E.check(0 <= doc.get("slab_wait_seconds", -1) and 0 <= doc.get("queue_wait_seconds", -1)
                and doc["busy_seconds"] + doc["slab_wait_seconds"] + doc["queue_wait_seconds"]
                <= threads * wall * 1.05 + 0.01
                and starved >= 0 and closing > 0 and encoding > 0
                and abs(doc.get("encoding_rate_bytes_per_s", 0) - raw / encoding) <= 1e-6 * raw / encoding,
                f"{z}: the encoders' waits in {doc} do not add up within {threads} threads x {wall} s")
        print(f"{z}: {raw} -> {stored} bytes (ratio {raw / stored:.3f}); line: {m.group(0)}")


def case_level0_not_twice_raw(ctx):
    """deflate level 0 stores each chunk as is: the parts hold about the raw bytes. The auto chunks split
    each axis evenly (54321 ids: 2 x 27161), so no edge chunk is stored padded to a whole chunk of mostly
    nothing (an uneven (1, 52428, 5) grid stored 1.93x the raw bytes)."""
    z = {"codec": "deflate", "level": 0}
    job = Job(ctx, z)
    r = job.run()
    facts, _ = check_parts(job, z, masks_zero=False)
    raw = sum(int(np.prod(shape)) * 8 for shape, _, _, _ in facts.values())
    stored = sum(sum(i.size for i in infos) for _, _, infos, _ in facts.values())
    chunks = sorted({c for _, c, _, _ in facts.values()})
    print(f"deflate 0, auto chunks {chunks}: {raw} raw -> {stored} stored ({stored / raw:.2f}x); "
          f"{LINE.search(r.stderr).group(0)}")
    E.check(stored <= raw * 1.02, f"deflate level 0 with auto chunks {chunks} stores {stored} bytes for {raw} raw "
                                  f"({stored / raw:.2f}x): the edge chunks along ids are padded to full chunks")


# --------------------------------------------------------------------------
# Other readers


def case_xarray_reads_deflate(ctx):
    try:
        import xarray
        import h5netcdf  # noqa: F401
        import netCDF4  # noqa: F401
    except ImportError as e:
        raise E.Skip(f"xarray with h5netcdf and netCDF4 is needed ({e})")
    z = {"codec": "deflate"}
    job = Job(ctx, z)
    job.run()
    for engine in ("h5netcdf", "netcdf4"):
        with xarray.open_dataset(job.out, engine=engine) as ds:
            cv = ds["cv"]
            E.check(cv.dims == E.CANON, f"{engine}: dims {cv.dims}")
            E.assert_bits_equal(np.asarray(cv.values), job.expected, f"xarray ({engine}) reading cv")
            # a selection crossing a part edge and a chunk edge
            E.assert_bits_equal(np.asarray(cv.isel(date=slice(2, 7), id=slice(52000, 53000)).values),
                                job.expected[2:7, 52000:53000], f"xarray ({engine}) reading a box")


def case_ncdump_shows_filters(ctx):
    """ncdump -hs on a part names its chunks and filters."""
    if shutil.which("ncdump") is None:
        raise E.Skip("ncdump (netcdf-bin) is needed")
    shape = (6, 20011, 5)
    chunk_bytes = 2 * 20011 * 5 * 8  # auto: whole along ids, 2 dates (~1.5 MiB)
    wants = [({"codec": "deflate"}, ['cv:_Storage = "chunked"', "cv:_ChunkSizes = 2, 20011, 5",
                                     'cv:_Shuffle = "true"', "cv:_DeflateLevel = 4"]),
             ({"codec": "gzip", "level": 7, "shuffle": "none"}, ["cv:_DeflateLevel = 7"]),
             ({"codec": "zstd"}, ['cv:_Shuffle = "true"', 'cv:_Filter = "32015,3"']),
             ({"codec": "lz4"}, ['cv:_Shuffle = "true"', 'cv:_Filter = "32004,0"']),
             ({"codec": "blosc", "shuffle": "bit"}, [f'cv:_Filter = "32001,2,2,8,{chunk_bytes},5,2,1"'])]
    for z, lines in wants:
        job = Job(ctx, z, shape=shape, output={"parts": 2}, name=z["codec"] + str(z.get("level", "")))
        job.run()
        part = job.parts()[0]
        r = subprocess.run(["ncdump", "-hs", part], capture_output=True, text=True)
        E.check(r.returncode == 0, f"ncdump -hs {part} failed: {r.stderr}")
        got = [ln.strip() for ln in r.stdout.splitlines()]
        for want in lines:
            E.check(want + " ;" in got, f"{z}: ncdump -hs does not show {want!r}:\n{r.stdout}")
        if z.get("shuffle") == "none" or z["codec"] == "blosc":
            E.check(not any(ln.startswith("cv:_Shuffle") for ln in got), f"{z}: ncdump shows a shuffle:\n{r.stdout}")


# --------------------------------------------------------------------------
# Resume


def kill_at(job, w, yaml=None):
    """Runs the job, held after its w-th slab, then kill -9; returns the units the partial records."""
    hold = E.Hold(job.ctx, w)
    proc = job.start(hold, yaml=yaml)
    hold.wait(w, proc=proc)
    proc.send_signal(signal.SIGKILL)
    rc, _ = E.reap(proc, timeout=60)
    E.check(rc == -signal.SIGKILL, f"expected death by SIGKILL, got {rc}")
    E.check(not os.path.exists(job.out), "<out> exists after kill -9")
    E.check(os.path.exists(E.partial_of(job.out)), "no .partial after kill -9")
    return int(E.progress_of(E.partial_of(job.out)).sum())


def case_kill9_mid_run_resumes(ctx):
    """kill -9 after 2 of 9 slabs: a part is compressed only once all its dates are recorded; the rerun
    resumes, compresses every part left, exact."""
    z = {"codec": "deflate", "level": 1}
    job = Job(ctx, z)
    done = kill_at(job, 2)
    E.check(2 <= done < DATES, f"{done} dates recorded after the 2nd slab")
    progress = E.progress_of(E.partial_of(job.out))
    state = [is_compressed(p) for p in job.parts()]
    for k, c in enumerate(state):  # part k: dates [3k, 3k + 3)
        E.check(not c or progress[3 * k:3 * k + 3].all(), f"part {k} compressed with dates undone: {progress}")
    r = job.run()
    E.check(f"resuming: {done} of {DATES} dates already done" in r.stdout, f"the rerun did not resume:\n{r.stdout}")
    compression_line(r, "deflate 1 + shuffle", state.count(False))
    check_parts(job, z)
    check_master(job, what="master cv after the resume")
    no_leftovers(job)
    job.verify()


def case_parts_compressed_while_running(ctx):
    """Parts are compressed while the run goes on: held after its last slab (every date recorded, nothing
    published), the run renames each part into its compressed self; kill -9 then leaves a partial of
    compressed parts, exact through h5py; the rerun has nothing to write or compress, and publishes."""
    z = {"codec": "deflate", "level": 1}  # h5py reads it without a plugin
    job = Job(ctx, z)
    hold = E.Hold(ctx, DATES)
    proc = job.start(hold)
    hold.wait(DATES, proc=proc)
    parts = job.parts()
    E.wait_for("every part compressed while the run is held", lambda: all(is_compressed(p) for p in parts))
    proc.send_signal(signal.SIGKILL)
    rc, _ = E.reap(proc, timeout=60)
    E.check(rc == -signal.SIGKILL and not os.path.exists(job.out), f"expected death by SIGKILL, got {rc}")
    E.check(int(E.progress_of(E.partial_of(job.out)).sum()) == DATES, "every date should be recorded")
    check_parts(job, z)
    with h5py.File(E.partial_of(job.out), "r") as f:
        E.assert_bits_equal(f["cv"][...], job.expected, "the partial's cv over its compressed parts")
    r = job.run()
    E.check(f"resuming: {DATES} of {DATES} dates already done" in r.stdout, f"the rerun did not resume:\n{r.stdout}")
    E.check(not LINE.search(r.stderr), f"the rerun compressed again:\n{r.stderr}")
    check_parts(job, z)
    check_master(job)
    no_leftovers(job)
    job.verify()


def case_unwritable_part_file_refused_at_start(ctx):
    """A resume whose second part's <part>.z.tmp cannot be made (a directory stands there) stops at once
    with 74, one line naming it; every part stays contiguous, no other <part>.z.tmp is left. Once the
    directory goes, the rerun finishes and compresses the three parts, exact."""
    z = {"codec": "deflate"}
    job = Job(ctx, z)
    done = kill_at(job, 2)
    parts = job.parts()
    blocker = parts[1] + ".z.tmp"
    shutil.rmtree(blocker, ignore_errors=True)
    if os.path.exists(blocker):
        os.remove(blocker)
    os.makedirs(os.path.join(blocker, "in-the-way"))
    r = job.run(rc=E.EX_IOERR, what="resume with a part's temporary file blocked")
    lines = r.stderr.splitlines()
    E.check(len(lines) == 1 and os.path.basename(parts[1]) in lines[0] and ".z.tmp" in lines[0],
            f"expected one line naming the part and its temporary file:\n{r.stderr}")
    E.check([is_compressed(p) for p in parts] == [False, False, False], "a part was compressed")
    left = [p for p in glob.glob(os.path.join(job.folder(), "*.z.tmp")) if p != blocker]
    E.check(not left, f"temporary files left: {left}")
    E.check(int(E.progress_of(E.partial_of(job.out)).sum()) == done, "the failed start changed the record")
    shutil.rmtree(blocker)
    compression_line(job.run(), describe(z), 3)
    check_parts(job, z)
    no_leftovers(job)
    job.verify()


def case_contiguous_part_beside_compressed(ctx):
    """A part whose rename fails (its <part>.z.tmp replaced by a directory while the run is held after its
    last slab; the parts are renamed only once durable, at the end with checkpoint_seconds: 3600):
    exit 74 naming it in one line; that part contiguous, each other part whole in one form or the other,
    the mixed partial exact. The rerun compresses the parts left contiguous and leaves the others
    untouched; exact."""
    z = {"codec": "blosc", "shuffle": "bit"} if "blosc" in app_codecs(ctx) else {"codec": "deflate"}
    job = Job(ctx, z, output={"checkpoint_seconds": 3600})
    hold = E.Hold(ctx, DATES)
    proc = job.start(hold)
    hold.wait(DATES, proc=proc)
    parts = job.parts()
    blocker = parts[1] + ".z.tmp"
    E.check(os.path.isfile(blocker), f"{blocker} should exist while the run writes")
    os.remove(blocker)
    os.makedirs(os.path.join(blocker, "in-the-way"))
    hold.release(DATES)
    rc, _ = E.reap(proc, timeout=E.HANG_GUARD)
    with open(proc.err_path) as f:
        err = f.read()
    E.check(rc == E.EX_IOERR, f"exit {rc} with the part's temporary file blocked, expected 74:\n{err}")
    lines = err.splitlines()
    E.check(len(lines) == 1 and os.path.basename(parts[1]) in lines[0] and ".z.tmp" in lines[0],
            f"expected one line naming the part and its temporary file:\n{err}")
    state = [is_compressed(p) for p in parts]
    E.check(not state[1], f"compressed parts: {state}; the second cannot be")
    E.check(not os.path.exists(job.out) and os.path.exists(E.partial_of(job.out)), "the partial should stay")
    if h5py.h5z.filter_avail(32001) or z["codec"] == "deflate":  # h5py reads Blosc through hdf5plugin
        with h5py.File(E.partial_of(job.out), "r") as f:  # the mixed set reads as one dataset
            E.assert_bits_equal(f["cv"][...], job.expected, f"the partial's cv over parts compressed {state}")
    else:
        print("h5py here has no Blosc filter: the mixed partial is checked after the resume")
    kept = {p: E.file_digest(p) for p, c in zip(parts, state) if c}
    shutil.rmtree(blocker)
    E.poison(blocker, 100_000)  # what a kill while writing it leaves
    report = os.path.join(job.d, "report.json")
    r = job.run("--report", report)
    compression_line(r, describe(z), state.count(False))
    E.check(all(E.file_digest(p) == d for p, d in kept.items()), "a part compressed before was compressed again")
    facts, _ = check_parts(job, z)
    with open(report) as f:
        doc = json.load(f).get("compression") or {}
    later = [facts[os.path.relpath(p, job.d)] for p, c in zip(parts, state) if not c]
    raw = sum(int(np.prod(shape)) * 8 for shape, _, _, _ in later)
    stored = sum(sum(i.size for i in infos) for _, _, infos, _ in later)
    E.check(doc.get("raw_bytes") == raw and doc.get("stored_bytes") == stored,
            f"the report's compression object {doc}, the parts this run compressed: {raw} raw, {stored} stored")
    digests = E.tree_digest(job.folder())
    again = job.run(what="finished rerun")
    E.check("already complete" in again.stdout and E.tree_digest(job.folder()) == digests, f"rerun:\n{again}")
    check_master(job)
    no_leftovers(job)
    job.verify()


def case_uncompressed_partial_resumed_compressed(ctx):
    """A split partial written without compression, killed mid-run, resumed by a job that asks for lz4:
    the resume finishes it and compresses every part."""
    z = {"codec": "lz4"}
    job = Job(ctx, z)
    plain = job.write("plain.yaml", None, layout="split")
    done = kill_at(job, 2, yaml=plain)
    E.check(2 <= done < DATES, f"{done} dates recorded after the 2nd slab")
    r = job.run()
    E.check(f"resuming: {done} of {DATES} dates" in r.stdout, f"the rerun did not resume:\n{r.stdout}")
    compression_line(r, "lz4 + shuffle", 3)
    check_parts(job, z)
    job.verify()


def case_overwrite_compressed_set(ctx):
    """overwrite: true over a deflate set with other data and zstd: the new set is zstd, exact, the old
    folder gone."""
    job = Job(ctx, {"codec": "deflate"}, shape=(7, 20011, 5))
    job.run()
    old = job.folder()
    mult, disc = random_data(5, 7, 20011, 5)
    E.write_input(job.src, mult, disc)
    job.expected = E.expected_cv(job.src)
    z = {"codec": "zstd", "shuffle": "none"}
    over = job.write("over.yaml", z, overwrite=True)
    r = job.run(yaml=over)
    compression_line(r, "zstd 3", 3)
    E.check(not os.path.exists(old) and job.folder() != old, f"the old set {old} was not replaced")
    check_parts(job, z, masks_zero=False)
    check_master(job, what="master cv after the overwrite")


# --------------------------------------------------------------------------
# verify


def case_verify_flipped_chunk_byte(ctx):
    """verify passes on each codec's output, and fails with one line after one byte in the middle of a
    full chunk of the second part is flipped (found with h5py's get_chunk_info)."""
    for z in ({"codec": "deflate"}, {"codec": "zstd"}, {"codec": "lz4"}, {"codec": "blosc"}):
        if z["codec"] not in app_codecs(ctx):
            print(f"{z['codec']}: not in this build, skipped")
            continue
        job = Job(ctx, z, shape=(9, 20011, 5), name=z["codec"])
        job.run()
        r = job.verify()
        E.check("all equal" in r.stdout, f"verify:\n{r}")
        E.expect_rc(E.app(ctx, "verify", "--sample", job.yaml, cwd=job.d), 0, "verify --sample")
        part = job.parts()[1]
        with h5py.File(part, "r") as f:
            info = f["cv"].id.get_chunk_info_by_coord((0, 0, 0))
        at = info.byte_offset + info.size // 2
        with open(part, "r+b") as f:
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ 0x10]))
        bad = E.app(ctx, "verify", job.yaml, cwd=job.d)
        E.check(bad.rc not in (0, 64, 78) and len(bad.stderr_lines) == 1
                and bad.stderr.startswith("discount_app: error: verify"),
                f"{z}: verify after a flipped byte at {at} of {os.path.basename(part)}: expected a failure "
                f"in one line:\n{bad}")
        print(f"{z['codec']}: exit {bad.rc}: {bad.stderr.strip()}")


# --------------------------------------------------------------------------
# Configuration


def case_config_errors_exit_78(ctx):
    """Each refused configuration exits 78 with one line naming the key, before any output exists."""
    job = Job(ctx, None, shape=(3, 1001, 5))
    c = "output.compression"
    bad = [({"compression": {"codec": "lz4", "level": 3}}, f"'{c}.level' does not apply to lz4"),
           ({"compression": {"codec": "deflate", "shuffle": "bit"}}, f"'{c}.shuffle: bit' needs codec: blosc"),
           ({"compression": {"codec": "deflate"}, "layout": "single"},
            f"{c} stores the split layout's finished parts compressed, but this output is single "
            "(set by output.layout)"),
           ({"compression": {"codec": "deflate", "chunks": [2, 1000]}}, f"'{c}.chunks' must be auto or a list of 3"),
           ({"compression": {"codec": "brotli"}}, f"'{c}.codec' must be one of"),
           ({"compression": {"codec": "deflate", "level": 10}}, f"'{c}.level' = 10 is out of range"),
           ({"compression": {"codec": "zstd", "level": 0}}, f"'{c}.level' = 0 is out of range"),
           ({"compression": {"codec": "deflate", "chunks": [0, 10, 5]}}, f"'{c}.chunks[0]' = 0"),
           ({"compression": {"codec": "deflate", "shuffle": "nibble"}}, f"'{c}.shuffle' must be one of"),
           ({"compression": {"codec": "deflate", "block": 4}}, f"unknown key 'block' in '{c}'")]
    for n, (output, words) in enumerate(bad):
        yaml = E.write_job(os.path.join(job.d, f"bad{n}.yaml"), "in.h5", "out.h5", output=output)
        r = E.app(ctx, "run", yaml, cwd=job.d)
        E.check(r.rc == E.EX_CONFIG and len(r.stderr_lines) == 1 and words in r.stderr,
                f"{output}: expected exit 78 and one line with {words!r}:\n{r}")
        E.check(sorted(os.listdir(job.d)) == sorted(["in.h5", "job.yaml"] + [f"bad{k}.yaml" for k in range(n + 1)]),
                f"{output}: the refused run left {sorted(os.listdir(job.d))}")
    # the effective configuration names every default
    yaml = job.write("gzip.yaml", {"codec": "gzip"})
    r = E.expect_rc(E.app(ctx, "config", yaml, cwd=job.d), 0, "config")
    E.check(re.search(r"^  compression:\n    codec: deflate\n    level: 4\n    shuffle: byte\n    chunks: auto$",
                      r.stdout, re.M), f"config does not show the compression defaults:\n{r.stdout}")


def case_settings_without_codec(ctx):
    """compression settings with no codec (it defaults to none): the run writes an uncompressed output
    without a word, though the same kind of setting that does nothing (a level for lz4) is refused.
    Expected: exit 78, one line naming output.compression.codec, nothing written."""
    job = Job(ctx, None, shape=(3, 1001, 5))
    for n, z in enumerate(({"level": 9}, {"shuffle": "bit"}, {"chunks": [1, 100, 5]})):
        yaml = E.write_job(os.path.join(job.d, f"nocodec{n}.yaml"), "in.h5", f"out{n}.h5", output={"compression": z})
        r = E.app(ctx, "run", yaml, cwd=job.d)
        made = sorted(p for p in os.listdir(job.d) if p.startswith(f"out{n}.h5"))
        E.check(r.rc == E.EX_CONFIG and len(r.stderr_lines) == 1 and "output.compression.codec" in r.stderr
                and not made, f"compression: {z} without a codec: exit {r.rc}, wrote {made}, stderr "
                              f"{r.stderr.strip()!r}; expected exit 78 naming output.compression.codec")


def case_plan_estimates_the_stored_size(ctx):
    """`plan` compresses a sample of the job's own values: its predicted stored size is within 10% of what
    the run then stores (realistic data; the report's compression object)."""
    for z in ({"codec": "deflate"}, {"codec": "zstd", "level": 5}):
        if z["codec"] not in app_codecs(ctx):
            print(f"{z['codec']}: not in this build, skipped")
            continue
        job = Job(ctx, z, name=z["codec"])
        p = E.expect_rc(E.app(ctx, "plan", job.yaml, cwd=job.d), 0, "plan")
        m = re.search(r"^compression +(.+?): about ([\d.]+) (B|KiB|MiB|GiB) stored \(ratio ([\d.]+) on a sample", p.stdout,
                      re.M)
        E.check(m is not None, f"plan prints no compression line:\n{p.stdout}")
        line = p.stdout.splitlines()[p.stdout[:m.start()].count("\n")]
        E.check("while the slabs are written" in line,
                f"plan's compression line does not say it overlaps the slabs:\n{p.stdout}")
        together = re.search(r"; ([\d.]+) GB/s with all (\d+) encoding at once$", line)
        E.check(together is not None and float(together.group(1)) > 0 and int(together.group(2)) >= 1,
                f"plan's compression line gives no rate of every thread encoding at once: {line!r}")
        predicted = float(m.group(2)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(3)]
        report = os.path.join(job.d, "report.json")
        job.run("--report", report)
        with open(report) as f:
            stored = json.load(f)["compression"]["stored_bytes"]
        E.check(abs(predicted - stored) <= 0.10 * stored,
                f"{z}: plan predicted {predicted:.0f} bytes stored, the run stored {stored}")
        print(f"{m.group(1)}: plan predicted {predicted / 1e6:.2f} MB, the run stored {stored / 1e6:.2f} MB")


CASES = [
    ("deflate_default", roundtrip({"codec": "deflate"}, line="deflate 4 + shuffle", chunks=(1, 27161, 5))),
    ("gzip_level9_no_shuffle_random", roundtrip({"codec": "gzip", "level": 9, "shuffle": "none"}, data=random_data,
                                                line="deflate 9", masks_zero=False, seed=2)),
    ("zstd_default", roundtrip({"codec": "zstd"}, line="zstd 3 + shuffle")),
    ("zstd_level1_no_shuffle_random", roundtrip({"codec": "zstd", "level": 1, "shuffle": "none"},
                                                data=random_data, line="zstd 1", masks_zero=False, seed=3)),
    ("lz4_byte_shuffle", roundtrip({"codec": "lz4"}, line="lz4 + shuffle")),
    ("lz4_no_shuffle_random", roundtrip({"codec": "lz4", "shuffle": "none"}, data=random_data, line="lz4",
                                        masks_zero=False, seed=4)),
    ("blosc_byte_shuffle", roundtrip({"codec": "blosc"}, line="blosc 5 + shuffle")),
    ("blosc_bit_shuffle", roundtrip({"codec": "blosc", "shuffle": "bit", "level": 9}, line="blosc 9 + bitshuffle")),
    ("blosc_no_shuffle_random", roundtrip({"codec": "blosc", "shuffle": "none", "level": 1}, data=random_data,
                                          line="blosc 1", masks_zero=False, seed=5)),
    ("float32_deflate", roundtrip({"codec": "deflate"}, dtype=np.float32, line="deflate 4 + shuffle",
                                  chunks=(1, 54321, 5))),
    ("float32_blosc_bit_random", roundtrip({"codec": "blosc", "shuffle": "bit"}, dtype=np.float32, data=random_data,
                                           line="blosc 5 + bitshuffle", masks_zero=False, seed=6)),
    ("chunks_2_1000_5", roundtrip({"codec": "deflate", "chunks": [2, 1000, 5]}, line="deflate 4 + shuffle",
                                  chunks=(2, 1000, 5))),
    ("chunks_not_dividing_transposed", roundtrip({"codec": "zstd", "chunks": [7777, 4, 3]}, axes=("id", "date", "num"),
                                                 line="zstd 3 + shuffle", chunks=(7777, 4, 3))),
    ("chunk_axis_id_4_parts", roundtrip({"codec": "deflate", "level": 6}, parts=4,
                                        memory={"chunk_axis": "id", "max_slab": 1000000})),
    ("one_part_chunks_1_1_1", roundtrip({"codec": "lz4", "chunks": [1, 1, 1]}, data=random_data, shape=(3, 101, 7),
                                        parts=1, chunks=(1, 1, 1), masks_zero=False, seed=7)),
    ("sizes_and_stderr_line", case_sizes_and_stderr_line),
    ("level0_auto_chunks_even", case_level0_not_twice_raw),
    ("xarray_reads_deflate", case_xarray_reads_deflate),
    ("ncdump_shows_filters", case_ncdump_shows_filters),
    ("kill9_mid_run_resumes", case_kill9_mid_run_resumes),
    ("parts_compressed_while_running", case_parts_compressed_while_running),
    ("contiguous_part_beside_compressed", case_contiguous_part_beside_compressed),
    ("unwritable_part_file_refused_at_start", case_unwritable_part_file_refused_at_start),
    ("uncompressed_partial_resumed_compressed", case_uncompressed_partial_resumed_compressed),
    ("overwrite_compressed_set", case_overwrite_compressed_set),
    ("verify_flipped_chunk_byte", case_verify_flipped_chunk_byte),
    ("config_errors_exit_78", case_config_errors_exit_78),
    ("settings_without_codec_refused", case_settings_without_codec),
    ("plan_estimates_the_stored_size", case_plan_estimates_the_stored_size),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
