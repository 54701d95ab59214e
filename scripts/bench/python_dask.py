#!/usr/bin/env python3
"""discount_app under Dask against Dask's own product, same arrays, chunks and scheduler.

Contenders: own (mult[None] * disc), map_blocks(discount_app.multiply),
discount_app.dask.multiply, and disc.map_blocks(np.copy) (the limit); under
threads into memory, to_hdf5 and into one NumPy array, and on a LocalCluster
(--workers). Interleaved rounds, medians; results checked against NumPy once.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def _same(block, run):
    return block


# out= in blocks: the destination is found by key, and the functions are taken from this file
# imported as a module, not from __main__: dask names a task by hashing its function, and a
# function of __main__ is hashed by value, with the globals it reads (the whole destination).
_DEST = {}


def _slot(key, block_info):
    return _DEST[key][tuple(slice(a, b) for a, b in block_info[1]["array-location"])]


def _into_numpy(mb, db, key, block_info=None):
    import numpy as np
    np.multiply(mb[None], db, out=_slot(key, block_info))
    return np.empty((1, 1, 1))


def _into_multiply(mb, db, key, block_info=None):
    import numpy as np
    import discount_app
    discount_app.multiply(mb, db, out=_slot(key, block_info))
    return np.empty((1, 1, 1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dates", type=int, default=40)
    p.add_argument("--ids", type=int, default=1_000_000)
    p.add_argument("--nums", type=int, default=5)
    p.add_argument("--chunk-dates", type=int, default=2, help="dates per chunk (default 2: 80 MB chunks at 1M ids)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="LocalCluster worker processes")
    p.add_argument("--no-cluster", action="store_true")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()
    B.need_python_modules("numpy", "dask")
    import numpy as np
    import dask
    import dask.array as da
    import discount_app
    import discount_app.dask as ddask

    import python_dask as this  # the block functions by reference (see _DEST)
    info = B.machine_info()
    rs = da.random.RandomState(3)
    chunks = (args.chunk_dates, args.ids, args.nums)
    m = rs.uniform(0.5, 1.5, (args.ids, args.nums), chunks=(args.ids, args.nums))
    d = rs.uniform(0.5, 1.5, (args.dates, args.ids, args.nums), chunks=chunks)
    nbytes = args.dates * args.ids * args.nums * 8
    print(f"arrays: {args.dates}x{args.ids}x{args.nums} ({B.fmt_bytes(nbytes)} each way), chunks of "
          f"{args.chunk_dates} dates ({B.fmt_bytes(nbytes * args.chunk_dates / args.dates)}); dask {dask.__version__}")
    graphs = {
        "own": lambda m, d: m[None] * d,
        "map_blocks": lambda m, d: da.map_blocks(discount_app.multiply, m, d, dtype=np.float64),
        "graph": lambda m, d: ddask.multiply(m, d),
    }
    limit = {"copy": lambda m, d: d.map_blocks(np.copy, dtype=np.float64)}

    def interleaved(runs):
        """Medians of --repeat interleaved rounds."""
        return {name: B.median(t) for name, t in B.interleaved(runs, args.repeat).items()}

    results = {"machine": info}
    rows = []
    # Threads: the inputs computed once into memory; each contender's result computed into memory.
    mm, dd = dask.compute(m, d, scheduler="threads")
    want = (mm[None] * dd).view(np.uint64)
    m_t, d_t = da.from_array(mm, chunks=(args.ids, args.nums)), da.from_array(dd, chunks=chunks)
    for name, make in graphs.items():
        assert (make(m_t, d_t).compute(scheduler="threads").view(np.uint64) == want).all(), name
    t = interleaved({name: (lambda make=make: make(m_t, d_t).compute(scheduler="threads"))
                     for name, make in dict(graphs, **limit).items()})
    for name in ("map_blocks", "graph", "copy"):
        rows.append(["threads", name + (" (limit)" if name in limit else ""), t["own"], t[name],
                     B.ratio(t["own"], t[name])])
    with tempfile.TemporaryDirectory(prefix="discount_dask.") as tmp:
        path = os.path.join(tmp, "cv.h5")
        t = interleaved({name: (lambda name=name: graphs[name](m_t, d_t).to_hdf5(path, "/cv"))
                         for name in ("own", "graph")})
        rows.append(["threads, to_hdf5", "graph", t["own"], t["graph"], B.ratio(t["own"], t["graph"])])
    dest = this._DEST["cv"] = np.empty(dd.shape)
    into = {
        "own": lambda: da.store(graphs["own"](m_t, d_t), dest, lock=False, scheduler="threads"),
        "graph": lambda: da.store(graphs["graph"](m_t, d_t), dest, lock=False, scheduler="threads"),
        "own out=": lambda: da.map_blocks(this._into_numpy, m_t, d_t, key="cv", chunks=(1, 1, 1),
                                          dtype=np.float64).compute(scheduler="threads"),
        "multiply out=": lambda: da.map_blocks(this._into_multiply, m_t, d_t, key="cv", chunks=(1, 1, 1),
                                               dtype=np.float64).compute(scheduler="threads"),
    }
    for name, run in into.items():
        dest.fill(np.nan)
        run()
        assert (dest.view(np.uint64) == want).all(), name
    t = interleaved(into)
    rows.append(["threads, da.store into an array", "graph", t["own"], t["graph"], B.ratio(t["own"], t["graph"])])
    rows.append(["threads, out= in blocks, one array", "multiply out=", t["own out="], t["multiply out="],
                 B.ratio(t["own out="], t["multiply out="])])
    this._DEST.clear()
    del mm, dd, m_t, d_t, dest, want
    # A LocalCluster: the inputs persisted on the workers; each contender's result persisted there
    # (kept in the workers' memory, as before a store), then released.
    client = cluster = None
    if not args.no_cluster:
        import distributed
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        m_c, d_c = client.persist([m, d])
        distributed.wait([m_c, d_c])
        check = slice(0, args.chunk_dates)  # one chunk of each result gathered and checked
        m_local, d_local = client.compute([m_c, d_c[check]], sync=True)
        want = (m_local[None] * d_local).view(np.uint64)
        for name, make in graphs.items():
            assert (client.compute(make(m_c, d_c)[check], sync=True).view(np.uint64) == want).all(), name

        runs = iter(range(1 << 30))

        def persisted(name):
            # A new key for every run: an identity task per chunk tagged with the run, else the
            # scheduler may still hold the last run's result (released asynchronously) and reuse it.
            tagged = d_c.map_blocks(_same, run=next(runs), dtype=d_c.dtype)
            r = client.persist(graphs[name](m_c, tagged))
            distributed.wait(r)
            assert all(f.status == "finished" for f in distributed.futures_of(r)), name
            del r

        label = f"LocalCluster, {args.workers} processes"
        graphs.update(limit)
        t = interleaved({name: (lambda name=name: persisted(name)) for name in graphs})
        for name in ("map_blocks", "graph", "copy"):
            rows.append([label, name + (" (limit)" if name in limit else ""), t["own"], t[name],
                         B.ratio(t["own"], t[name])])
    if client:
        client.close()
        cluster.close()
    B.print_machine(info)
    B.print_table(["scheduler", "discount_app", "own s", "discount_app s", "own / discount_app"], rows,
                  f"Dask's own mult[None] * disc against discount_app (median of {args.repeat}; target >= 1.3)")
    results["rows"] = rows
    if args.json:
        B.write_json(args.json, results)


if __name__ == "__main__":
    main()
