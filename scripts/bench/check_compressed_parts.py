#!/usr/bin/env python3
"""Every element of a compressed split output against NumPy, bit for bit,
decoding the chunks here (libzstd by ctypes, zlib, NumPy shuffle) for an h5py
without the codec's filter. Exit 0 when all match, 1 otherwise.

  scripts/bench/check_compressed_parts.py in.h5 out.h5
"""
import argparse
import ctypes
import ctypes.util
import multiprocessing
import os
import sys
import zlib

import h5py
import numpy as np

DEFLATE, SHUFFLE, FLETCHER32, ZSTD = 1, 2, 3, 32015


def zstd_library():
    name = ctypes.util.find_library("zstd")
    if not name:
        return None
    lib = ctypes.CDLL(name)
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
    lib.ZSTD_isError.restype = ctypes.c_uint
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    return lib


def decode(data, filters, mask, nbytes, zstd):
    """One chunk's bytes through its filters in reverse order; `mask` bit i set: filter i was skipped."""
    for i in reversed(range(len(filters))):
        fid = filters[i]
        if mask & (1 << i):
            continue
        if fid == FLETCHER32:
            data = data[:-4]
        elif fid == DEFLATE:
            data = zlib.decompress(data)
        elif fid == ZSTD:
            out = ctypes.create_string_buffer(nbytes)
            n = zstd.ZSTD_decompress(out, nbytes, data, len(data))
            if zstd.ZSTD_isError(n) or n != nbytes:
                raise ValueError("zstd frame does not decode to the chunk's size")
            data = out.raw
        elif fid == SHUFFLE:
            data = np.frombuffer(data, np.uint8).reshape(8, -1).T.tobytes()
        else:
            raise ValueError(f"filter {fid} is not decoded by this checker")
    if len(data) != nbytes:
        raise ValueError(f"a chunk decodes to {len(data)} bytes, not {nbytes}")
    return data


def check_part(job):
    """(input, part path, its box in cv as (start, stop) per axis) -> (elements, differing, chunks)."""
    inp, path, ((d0, _), (i0, i1), _) = job
    zstd = zstd_library()
    with h5py.File(inp, "r") as f, h5py.File(path, "r") as p:
        ds = p["cv"]
        plist = ds.id.get_create_plist()
        filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        if ZSTD in filters and zstd is None:
            raise SystemExit("no libzstd on this machine to decode zstd chunks")
        m, disc, chunk = f["multBy"][i0:i1], f["discount"], ds.chunks
        bad = n = 0
        for c in range(ds.id.get_num_chunks()):
            off = ds.id.get_chunk_info(c).chunk_offset
            count = [min(chunk[a], ds.shape[a] - off[a]) for a in range(3)]
            mask, raw = ds.id.read_direct_chunk(off)
            full = np.frombuffer(decode(raw, filters, mask, int(np.prod(chunk)) * 8, zstd), np.float64)
            got = full.reshape(chunk)[:count[0], :count[1], :count[2]]
            d, i, k = (slice(o, o + c) for o, c in zip(off, count))
            want = m[i, k][None] * disc[d0 + d.start:d0 + d.stop, i0 + i.start:i0 + i.stop, k]
            bad += int((got.view(np.uint64) != want.view(np.uint64)).sum())
            n += got.size
        return n, bad, ds.id.get_num_chunks()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    args = p.parse_args()
    with h5py.File(args.output, "r") as o:
        cv = o["cv"]
        total = int(np.prod(cv.shape))
        jobs = []
        for v in cv.virtual_sources():
            lo, hi = v.vspace.get_select_bounds()
            path = os.path.join(os.path.dirname(args.output), v.file_name)  # an absolute file_name stays as is
            jobs.append((args.input, path, tuple((a, b + 1) for a, b in zip(lo, hi))))
    with multiprocessing.Pool(min(os.cpu_count() or 1, len(jobs))) as pool:
        n, bad, chunks = (sum(r) for r in zip(*pool.map(check_part, jobs, chunksize=1)))
    print(f"chunk-by-chunk check of {n} elements in {len(jobs)} parts ({chunks} chunks): {bad} differ"
          + ("" if n == total else f"; the parts cover {n} of {total} elements"))
    return 1 if bad or n != total else 0


if __name__ == "__main__":
    sys.exit(main())
