#!/usr/bin/env python3
"""What pinning a NumPy array in place would cost (issue 23's device path).

multiply() on host arrays stages them through pinned buffers. The other way
is to page-lock the user's own arrays (cudaHostRegister) and copy straight
from them. This prints, on one GPU, for arrays of 1, 4 and 20 GiB: the
register rate, H2D from the registered array, the unregister time, and a
pageable cudaMemcpy of the same bytes for comparison. Needs CuPy.
    python3 scripts/bench/pin_cost.py
"""
import time, numpy as np, cupy as cp, os
rt = cp.cuda.runtime
for gb in (1, 4, 20):
    n = gb * 2**30 // 8
    a = np.empty(n); a[:] = 1.5          # touched, as a user's array is
    t0 = time.perf_counter(); rt.hostRegister(a.ctypes.data, a.nbytes, 0); t1 = time.perf_counter()
    d = cp.empty(min(n, 2**31 // 8 * 4))  # up to 4 GiB device buffer
    s = cp.cuda.Stream(non_blocking=True)
    t2 = time.perf_counter()
    off = 0
    while off < n:
        m = min(d.size, n - off)
        rt.memcpyAsync(d.data.ptr, a.ctypes.data + off * 8, m * 8, 1, s.ptr); off += m
    s.synchronize(); t3 = time.perf_counter()
    rt.hostUnregister(a.ctypes.data); t4 = time.perf_counter()
    print(f"{gb} GiB: register {t1-t0:.3f} s ({a.nbytes/(t1-t0)/1e9:.1f} GB/s), H2D from it {a.nbytes/(t3-t2)/1e9:.1f} GB/s, unregister {t4-t3:.3f} s", flush=True)
    # pageable copy for comparison
    t5 = time.perf_counter(); off = 0
    while off < n:
        m = min(d.size, n - off); rt.memcpy(d.data.ptr, a.ctypes.data + off * 8, m * 8, 1); off += m
    t6 = time.perf_counter(); print(f"   pageable H2D {a.nbytes/(t6-t5)/1e9:.1f} GB/s", flush=True)
    del a, d
