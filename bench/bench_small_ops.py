"""Small Python operations against zarr-python 2.13 in the same run: opening a local array
(``open_array``), an element read and write, ``z[:]`` of a small array and ``z[sel] = x``.

Each operation runs in rounds that alternate zarrpp and zarr-python, so a disturbance of the VM
falls on both; printed: the median time per call and the spread (the middle half of the rounds)
for each, and the ratio of the medians (zarrpp / zarr-python: below 1 is faster).

Usage: /usr/bin/python3 bench/bench_small_ops.py [--rounds N] [--calls N]
(with the package on PYTHONPATH, e.g. build/release/python)."""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import zarr

import zarrpp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine_facts  # noqa: E402  (bench/machine_facts.py)


def _per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _spread(times):
    q = statistics.quantiles(times, n=4)
    return q[0], q[2]


def _row(name, ours, theirs):
    m1, m2 = statistics.median(ours), statistics.median(theirs)
    (a1, b1), (a2, b2) = _spread(ours), _spread(theirs)
    print(f"{name:<28} zarrpp {m1 * 1e6:8.1f} us [{a1 * 1e6:.1f}, {b1 * 1e6:.1f}]   "
          f"zarr 2.13 {m2 * 1e6:8.1f} us [{a2 * 1e6:.1f}, {b2 * 1e6:.1f}]   ratio {m1 / m2:5.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        machine_facts.print_facts(work)
        path = os.path.join(work, "a.zarr")
        data = np.arange(100 * 100, dtype="f8").reshape(100, 100)
        zarr.open_array(path, mode="w", shape=data.shape, chunks=(50, 50), dtype="f8")[:] = data
        ours, theirs = zarrpp.open_array(path, mode="r+"), zarr.open_array(path, mode="r+")
        small = np.ones((10, 10))
        ops = {
            "open_array (local, v2)": (lambda: zarrpp.open_array(path, mode="r"),
                                       lambda: zarr.open_array(path, mode="r")),
            "element read z[3, 4]": (lambda: ours[3, 4], lambda: theirs[3, 4]),
            "element write z[3, 4] = 1": (lambda: ours.__setitem__((3, 4), 1.0),
                                          lambda: theirs.__setitem__((3, 4), 1.0)),
            "z[:] (100 x 100 f8)": (lambda: ours[:], lambda: theirs[:]),
            "z[20:30, 40:50] = x": (lambda: ours.__setitem__((slice(20, 30), slice(40, 50)), small),
                                    lambda: theirs.__setitem__((slice(20, 30), slice(40, 50)), small)),
        }
        print(f"rounds {args.rounds} x {args.calls} calls; median per call [middle half of the rounds]")
        for name, (mine, peer) in ops.items():
            a, b = [], []
            for _ in range(args.rounds):
                a.append(_per_call(mine, args.calls))
                b.append(_per_call(peer, args.calls))
            _row(name, a, b)


if __name__ == "__main__":
    main()
