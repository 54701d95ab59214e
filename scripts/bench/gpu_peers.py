#!/usr/bin/env python3
"""CuPy beside discount_app on the GPU node: the broadcast multiply on
resident data, the device copy (the limit) and end to end from NumPy, checked
against NumPy."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def main():
    ap = bl.parser(__doc__, app=False)
    ap.add_argument("--sizes", default="100x4000x5,200x1000000x5", help="comma-separated DxMxO shapes")
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    import cupy as cp
    import numpy as np

    sync = cp.cuda.Device().synchronize
    rows = []
    for size in args.sizes.split(","):
        d, m, o = (int(x) for x in size.split("x"))
        h_mult, h_disc, h_out = bl.uniform_arrays((d, m, o))
        g_mult, g_disc = cp.asarray(h_mult), cp.asarray(h_disc)
        g_out = cp.empty_like(g_disc)
        elem_bytes = 16.0 * d * m * o + 8.0 * m * o
        t_copy = bl.median_time(lambda: cp.copyto(g_out, g_disc), args.reps, sync)
        rows.append((size, "cupy device copy", t_copy, 16.0 * d * m * o))
        g_out.fill(cp.nan)
        t_mul = bl.median_time(lambda: cp.multiply(g_mult[None], g_disc, out=g_out), args.reps, sync)
        ok = np.array_equal(cp.asnumpy(g_out), h_mult[None] * h_disc)
        rows.append((size, "cupy broadcast multiply (resident)" + ("" if ok else " WRONG"), t_mul, elem_bytes))
        t_e2e = bl.median_time(lambda: cp.asnumpy(cp.asarray(h_mult)[None] * cp.asarray(h_disc)),
                               max(3, args.reps // 3), sync)
        rows.append((size, "cupy end to end from NumPy", t_e2e, elem_bytes))
        t_np = bl.median_time(lambda: np.multiply(h_mult[None], h_disc, out=h_out), max(3, args.reps // 3))
        rows.append((size, "numpy multiply (out=)", t_np, elem_bytes))
        del g_mult, g_disc, g_out
        cp.get_default_memory_pool().free_all_blocks()

    print(f"\nGPU peers on {socket.gethostname()}, {time.strftime('%Y-%m-%d %H:%M')}, cupy {cp.__version__}, "
          f"numpy {np.__version__}")
    print(f"{'shape':>16} {'peer':<40} {'median ms':>10} {'GB/s':>9}")
    for size, name, t, nbytes in rows:
        print(f"{size:>16} {name:<40} {t * 1e3:10.3f} {nbytes / t / 1e9:9.1f}")
    if args.json:
        bl.write_json(args.json, [{"shape": s, "peer": n, "seconds": t, "bytes": b, "gb_per_s": b / t / 1e9}
                                  for s, n, t, b in rows])


if __name__ == "__main__":
    main()
