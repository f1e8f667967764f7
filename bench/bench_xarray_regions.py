"""xarray's two-step cluster write, zarrpp against xarray's own to_zarr (zarr-python 2.13) in one
run: ``to_zarr(compute=False)`` writes the metadata, then every task of a
``distributed.LocalCluster`` (worker processes) writes its region of one Dataset. Rounds alternate
the two writers (each into a fresh folder), so a disturbance of the VM falls on both; printed: the
median time and the spread (the middle half of the rounds) of each, and the ratio of the medians
(zarrpp / xarray: below 1 is faster).

Usage: /usr/bin/python3 bench/bench_xarray_regions.py [--rounds N] [--mib M] [--workers W]
(with the package on PYTHONPATH, e.g. build/release/python)."""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import xarray as xr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine_facts  # noqa: E402  (bench/machine_facts.py)


def _write_region_xarray(part, path, a, b):
    part.to_zarr(path, region={"time": slice(a, b)})
    return b - a


def _write_region_zarrpp(part, path, a, b):
    import zarrpp.xarray  # noqa: F401  (registers the accessor on the worker)
    part.zarrpp.to_zarr(path, region={"time": slice(a, b)})
    return b - a


def _one(client, ds, path, rows_per_task, ours):
    start = time.perf_counter()
    enc = {"temp": {"chunks": (rows_per_task, ds.sizes["x"])}}
    if ours:
        import zarrpp.xarray  # noqa: F401
        ds.chunk({"time": rows_per_task}).zarrpp.to_zarr(path, compute=False, zarr_format=2, encoding=enc)
        write = _write_region_zarrpp
    else:
        ds.chunk({"time": rows_per_task}).to_zarr(path, compute=False, encoding=enc)
        write = _write_region_xarray
    n = ds.sizes["time"]
    edges = list(range(0, n, rows_per_task)) + [n]
    futures = [client.submit(write, ds.isel(time=slice(a, b)).drop_vars("x"), path, a, b, pure=False)
               for a, b in zip(edges, edges[1:])]
    assert sum(client.gather(futures)) == n
    return time.perf_counter() - start


def _spread(times):
    q = statistics.quantiles(times, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    import distributed
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
        machine_facts.print_facts(work)
        cols = 512
        rows = args.mib * (1 << 20) // (8 * cols)
        rng = np.random.default_rng(0)
        data = np.cumsum(rng.normal(size=(rows, cols)), axis=0)  # compressible, not trivial
        ds = xr.Dataset({"temp": (("time", "x"), data)}, coords={"time": np.arange(rows), "x": np.arange(cols)})
        rows_per_task = max(rows // 32, 1)
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=40, local_directory=work)
        client = distributed.Client(cluster)
        times = {True: [], False: []}
        try:
            for r in range(args.rounds):
                for ours in ((True, False) if r % 2 == 0 else (False, True)):
                    path = os.path.join(work, f"r{r}-{'zarrpp' if ours else 'xarray'}.zarr")
                    times[ours].append(_one(client, ds, path, rows_per_task, ours))
                    if ours:
                        import zarrpp.xarray as zx
                        back = xr.open_dataset(path, engine=zx.ZarrppBackendEntrypoint)["temp"].values
                        assert np.array_equal(back, data), "zarrpp's regions differ from the data"
                    shutil.rmtree(path)
        finally:
            client.close()
            cluster.close()
    m1, m2 = statistics.median(times[True]), statistics.median(times[False])
    (a1, b1), (a2, b2) = _spread(times[True]), _spread(times[False])
    print(f"{args.mib} MiB float64 ({rows} x {cols}), {len(range(0, rows, rows_per_task))} region tasks, "
          f"{args.workers} worker processes, {args.rounds} rounds; median [middle half]")
    print(f"compute=False + regions (v2)  zarrpp {m1:6.2f} s [{a1:.2f}, {b1:.2f}]   "
          f"xarray to_zarr {m2:6.2f} s [{a2:.2f}, {b2:.2f}]   ratio {m1 / m2:5.2f}")


if __name__ == "__main__":
    main()
