"""Dask on zarrpp: the cost of tasks and scheduling on a distributed.LocalCluster.

Writes a float64 array (default 1 GiB, chunks 256x1024 inside shards 2048x1024, 16 MiB each) to a
temporary directory, then, with the same array and the same 2 cores, times:

- reduce: ``zarrpp.dask.from_zarrpp(path).sum().compute()`` on a LocalCluster of 2 worker
  processes (1 thread each; only the sum comes back to the client) against one process reading the
  whole array with zarrpp (``z[...]``, 2 threads) and summing it with NumPy;
- store: ``da.store(from_zarrpp(src), new_array, lock=False)`` on the cluster (read and write on the
  workers) against one process copying it (``dst[...] = src[...]``);
- the same two through Dask's threaded scheduler in one process (2 threads), for reference.

The ratio is one-process time / Dask time (1.0: no overhead; > 1: Dask's parallelism won). Rounds
are interleaved; the median is shown. ``--codec zstd`` compresses with zstd level 1 (default: none).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_dask.py [--mib 1024] [--rounds 3] [--codec none|zstd]
"""
import argparse
import warnings
import os
import shutil
import statistics
import tempfile
import time

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import zarrpp

import machine_facts  # bench/machine_facts.py: the script's folder is on sys.path
import zarrpp.dask as zd


def timed(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def main():
    warnings.filterwarnings("ignore", message="Running on a single-machine scheduler")
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--codec", choices=("none", "zstd"), default="none")
    args = ap.parse_args()
    cols = 1024
    rows = max(2048, args.mib * (1 << 20) // (8 * cols) // 2048 * 2048)
    shape, chunks, shards = (rows, cols), (256, cols), (2048, cols)
    comp = zarrpp.codecs.ZstdCodec(level=1) if args.codec == "zstd" else None
    root = tempfile.mkdtemp(prefix="bench_dask_", dir=os.environ.get("TMPDIR", "/tmp"))
    machine_facts.print_facts(root)
    src_path = os.path.join(root, "src.zarr")
    src = zarrpp.create_array(src_path, shape=shape, chunks=chunks, shards=shards, dtype="f8", compressors=comp)
    step = 2048
    for r0 in range(0, rows, step):  # written in slabs, so the benchmark itself needs little memory
        src[r0:r0 + step] = np.random.default_rng(r0).random((min(step, rows - r0), cols))
    want = float(np.sum([src[r0:r0 + step].sum() for r0 in range(0, rows, step)]))
    nbytes = rows * cols * 8
    print(f"{shape} float64 ({nbytes >> 20} MiB), chunks {chunks}, shards {shards} ({args.codec}), "
          f"{args.rounds} rounds; LocalCluster: 2 worker processes x 1 thread; one process: 2 threads; "
          f"dask {dask.__version__}, zarrpp {zarrpp.__version__}")
    res = {k: [] for k in ("one_sum", "cl_sum", "th_sum", "one_store", "cl_store", "th_store")}
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=40, local_directory=os.path.join(root, "dask")) as cluster, \
                Client(cluster) as client:
            def new_dst(tag):
                p = os.path.join(root, f"dst-{tag}.zarr")
                shutil.rmtree(p, ignore_errors=True)
                return zarrpp.create_array(p, shape=shape, chunks=chunks, shards=shards, dtype="f8", compressors=comp)

            for _ in range(args.rounds):
                z = zarrpp.open_array(src_path, mode="r")
                t, s = timed(lambda: float(z[...].sum()))
                assert np.isclose(s, want)
                res["one_sum"].append(t)
                t, s = timed(lambda: float(zd.from_zarrpp(src_path).sum().compute()))
                assert np.isclose(s, want)
                res["cl_sum"].append(t)
                t, s = timed(lambda: float(zd.from_zarrpp(src_path).sum().compute(scheduler="threads", num_workers=2)))
                assert np.isclose(s, want)
                res["th_sum"].append(t)

                d = new_dst("one")
                res["one_store"].append(timed(lambda: d.__setitem__(Ellipsis, z[...]))[0])
                d = new_dst("cl")
                res["cl_store"].append(timed(lambda: da.store(zd.from_zarrpp(src_path), d, lock=False))[0])
                d = new_dst("th")
                res["th_store"].append(timed(lambda: da.store(zd.from_zarrpp(src_path), d, lock=False,
                                                              scheduler="threads", num_workers=2))[0])
            check = zarrpp.open_array(os.path.join(root, "dst-cl.zarr"), mode="r")
            assert all(np.array_equal(check[r0:r0 + step], src[r0:r0 + step]) for r0 in range(0, rows, step))
            del client
    finally:
        shutil.rmtree(root, ignore_errors=True)

    gib = nbytes / (1 << 30)
    med = {k: statistics.median(v) for k, v in res.items()}
    print("| workload | one process s | cluster s | threads s | one ÷ cluster | one ÷ threads | cluster GiB/s |")
    print("|---|---|---|---|---|---|---|")
    for w in ("sum", "store"):
        one, cl, th = med[f"one_{w}"], med[f"cl_{w}"], med[f"th_{w}"]
        print(f"| {w} | {one:.3f} | {cl:.3f} | {th:.3f} | {one / cl:.2f} | {one / th:.2f} | {gib / cl:.2f} |")


if __name__ == "__main__":
    main()
