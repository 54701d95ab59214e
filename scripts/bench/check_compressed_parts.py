#!/usr/bin/env python3
"""Every element of a compressed split output against NumPy, bit for bit,
decoding the chunks here (libzstd by ctypes, zlib, NumPy shuffle) for an h5py
without the codec's filter. Exit 0 when all match, 1 otherwise.

  scripts/bench/check_compressed_parts.py in.h5 out.h5 [--processes 16]
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


def decode(raw, filters, mask, nbytes, itemsize, zstd):
    """One chunk's bytes through its filters in reverse order; `mask` bit i set: filter i was skipped."""
    data = raw
    for i in reversed(range(len(filters))):
        if mask & (1 << i):
            continue
        fid = filters[i]
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
            data = np.frombuffer(data, np.uint8).reshape(itemsize, -1).T.tobytes()
        else:
            raise ValueError(f"filter {fid} is not decoded by this checker")
    if len(data) != nbytes:
        raise ValueError(f"a chunk decodes to {len(data)} bytes, not {nbytes}")
    return data


def check_part(job):
    """(input, part path, its box in cv as (start, stop) per axis) -> (elements, differing, chunks)."""
    inp, path, box = job
    zstd = zstd_library()
    with h5py.File(inp, "r") as f, h5py.File(path, "r") as p:
        ds = p["cv"]
        plist = ds.id.get_create_plist()
        filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        if ZSTD in filters and zstd is None:
            raise SystemExit("no libzstd on this machine to decode zstd chunks")
        (d0, d1), (i0, i1), _ = box
        m = f["multBy"][i0:i1]
        disc = f["discount"]
        chunk = ds.chunks
        bad = n = 0
        for c in range(ds.id.get_num_chunks()):
            info = ds.id.get_chunk_info(c)
            off = info.chunk_offset
            count = [min(chunk[a], ds.shape[a] - off[a]) for a in range(3)]
            mask, raw = ds.id.read_direct_chunk(off)
            full = np.frombuffer(decode(raw, filters, mask, int(np.prod(chunk)) * 8, 8, zstd),
                                 np.float64).reshape(chunk)
            got = full[:count[0], :count[1], :count[2]]
            sel = tuple(slice(o, o + k) for o, k in zip(off, count))
            want = m[sel[1], sel[2]][None] * disc[d0 + off[0]:d0 + off[0] + count[0], i0 + off[1]:i0 + off[1] + count[1],
                                                sel[2]]
            bad += int((got.view(np.uint64) != want.view(np.uint64)).sum())
            n += got.size
        return n, bad, ds.id.get_num_chunks()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    with h5py.File(args.output, "r") as o:
        cv = o["cv"]
        total = int(np.prod(cv.shape))
        jobs = []
        for v in cv.virtual_sources():
            lo, hi = v.vspace.get_select_bounds()
            box = tuple((a, b + 1) for a, b in zip(lo, hi))
            path = v.file_name if os.path.isabs(v.file_name) else os.path.join(os.path.dirname(args.output),
                                                                                 v.file_name)
            jobs.append((args.input, path, box))
    with multiprocessing.Pool(min(args.processes, len(jobs))) as pool:
        results = pool.map(check_part, jobs, chunksize=1)
    n = sum(r[0] for r in results)
    bad = sum(r[1] for r in results)
    chunks = sum(r[2] for r in results)
    print(f"chunk-by-chunk check of {n} elements in {len(jobs)} parts ({chunks} chunks): {bad} differ"
          + ("" if n == total else f"; the parts cover {n} of {total} elements"))
    return 1 if bad or n != total else 0


if __name__ == "__main__":
    sys.exit(main())
