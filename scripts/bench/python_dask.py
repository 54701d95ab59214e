#!/usr/bin/env python3
"""discount_app under Dask against Dask's own product, same arrays, chunks and scheduler.

Contenders: own (mult[None] * disc), map_blocks(discount_app.multiply),
discount_app.dask.multiply, and disc.map_blocks(np.copy) (the limit); under
threads into memory and to_hdf5, and on a LocalCluster (--workers).
Interleaved rounds, medians; results checked against NumPy once.
"""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def _same(block, run):
    return block


def main():
    p = B.parser(__doc__, repeat=5, app=False)
    p.add_argument("--dates", type=int, default=40)
    p.add_argument("--ids", type=int, default=1_000_000)
    p.add_argument("--chunk-dates", type=int, default=2, help="dates per chunk (80 MB chunks at 1M ids)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="LocalCluster worker processes")
    args = p.parse_args()
    B.need_python_modules("numpy", "dask")
    import numpy as np
    import dask
    import dask.array as da
    import distributed
    import discount_app
    import discount_app.dask as ddask

    info = B.machine_info()
    nums = 5
    rs = da.random.RandomState(3)
    chunks = (args.chunk_dates, args.ids, nums)
    m = rs.uniform(0.5, 1.5, (args.ids, nums), chunks=(args.ids, nums))
    d = rs.uniform(0.5, 1.5, (args.dates, args.ids, nums), chunks=chunks)
    nbytes = args.dates * args.ids * nums * 8
    print(f"arrays: {args.dates}x{args.ids}x{nums} ({B.fmt_bytes(nbytes)} each way), chunks of "
          f"{args.chunk_dates} dates ({B.fmt_bytes(nbytes * args.chunk_dates / args.dates)}); dask {dask.__version__}")
    graphs = {
        "own": lambda m, d: m[None] * d,
        "map_blocks": lambda m, d: da.map_blocks(discount_app.multiply, m, d, dtype=np.float64),
        "graph": lambda m, d: ddask.multiply(m, d),
        "copy": lambda m, d: d.map_blocks(np.copy, dtype=np.float64),  # the limit
    }

    def medians(runs):
        return {name: B.median(t) for name, t in B.interleaved(runs, args.repeat).items()}

    def against_own(label, t, names=("map_blocks", "graph", "copy")):
        rows.extend([label, name + (" (limit)" if name == "copy" else ""), t["own"], t[name],
                     B.ratio(t["own"], t[name])] for name in names)

    rows = []
    # Threads: the inputs computed once into memory; each contender's result computed into memory.
    mm, dd = dask.compute(m, d, scheduler="threads")
    want = (mm[None] * dd).view(np.uint64)
    m_t, d_t = da.from_array(mm, chunks=(args.ids, nums)), da.from_array(dd, chunks=chunks)
    for name in ("own", "map_blocks", "graph"):
        assert (graphs[name](m_t, d_t).compute(scheduler="threads").view(np.uint64) == want).all(), name
    against_own("threads", medians({name: (lambda make=make: make(m_t, d_t).compute(scheduler="threads"))
                                    for name, make in graphs.items()}))
    with tempfile.TemporaryDirectory(prefix="discount_dask.") as tmp:
        path = os.path.join(tmp, "cv.h5")
        against_own("threads, to_hdf5", medians({name: (lambda name=name: graphs[name](m_t, d_t).to_hdf5(path, "/cv"))
                                                 for name in ("own", "graph")}), ("graph",))
    del mm, dd, m_t, d_t, want
    # A LocalCluster: the inputs persisted on the workers; each contender's result persisted there
    # (kept in the workers' memory, as before a store), then released.
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    m_c, d_c = client.persist([m, d])
    distributed.wait([m_c, d_c])
    check = slice(0, args.chunk_dates)  # one chunk of each result gathered and checked
    m_local, d_local = client.compute([m_c, d_c[check]], sync=True)
    want = (m_local[None] * d_local).view(np.uint64)
    for name in ("own", "map_blocks", "graph"):
        assert (client.compute(graphs[name](m_c, d_c)[check], sync=True).view(np.uint64) == want).all(), name
    runs = iter(range(1 << 30))

    def persisted(name):
        # A new key for every run: an identity task per chunk tagged with the run, else the
        # scheduler may still hold the last run's result (released asynchronously) and reuse it.
        r = client.persist(graphs[name](m_c, d_c.map_blocks(_same, run=next(runs), dtype=d_c.dtype)))
        distributed.wait(r)
        assert all(f.status == "finished" for f in distributed.futures_of(r)), name

    against_own(f"LocalCluster, {args.workers} processes", medians({name: (lambda name=name: persisted(name))
                                                                    for name in graphs}))
    client.close()
    cluster.close()
    B.print_machine(info)
    B.print_table(["scheduler", "discount_app", "own s", "discount_app s", "own / discount_app"], rows,
                  f"Dask's own mult[None] * disc against discount_app (median of {args.repeat}; target >= 1.3)")
    if args.json:
        B.write_json(args.json, {"machine": info, "rows": rows})


if __name__ == "__main__":
    main()
