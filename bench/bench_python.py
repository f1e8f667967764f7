#!/usr/bin/env python3
"""Python users' paths: whole reads into fresh NumPy arrays and whole writes, zarrpp against
NumPy, zarr-python 2.13 (Debian's python3-zarr), zarrita.js and zarrpp's own C++ API, measured in
the same run on the same data (docs/benchmarks.md, issue 22).

Data: a uint16 array (512 MiB by default; noisy: a smooth ramp plus 12 random low bits), chunks
64x256x256, uncompressed and zstd level 1, on the local file store (page cache warm). Arrays:
zarrpp's own (Zarr v3) and zarr-python's own (Zarr v2, compressor None / numcodecs Zstd(1)), which
zarrpp also reads. Each round runs every operation once, in a new random order per round; the
table shows medians.

  fresh floor   np.empty + 2 threads each np.copyto one half (first touch of fresh pages included)
  np.copyto     np.empty + np.copyto in one thread
  zarrpp        z[:] (a fresh array), z[:] = a
  zarr-python   z[:], z[:] = a on its own v2 array (single-threaded, as it is)
  C++           build/release/zarrpp-bench-fresh: Array::read() into a fresh NDArray, Array::write
  zarrita.js    node tests/interop/bench_with_zarrita.mjs, whole read (timed inside node)

  PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_python.py [--mib 512] [--rounds 5]
      [--bench-fresh build/release/zarrpp-bench-fresh] [--no-zarrita] [--dir DIR]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import zarrpp

import machine_facts  # bench/machine_facts.py: the script's folder is on sys.path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def fresh_floor(src, threads=2):
    out = np.empty_like(src)
    flat_o, flat_s = out.reshape(-1), src.reshape(-1)
    n = flat_o.size
    parts = [(n * i // threads, n * (i + 1) // threads) for i in range(threads)]
    ts = [threading.Thread(target=np.copyto, args=(flat_o[a:b], flat_s[a:b])) for a, b in parts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--bench-fresh", default=os.path.join(ROOT, "build", "release", "zarrpp-bench-fresh"))
    ap.add_argument("--no-zarrita", action="store_true")
    a = ap.parse_args()
    import numcodecs
    import zarr as zarr2
    if not zarr2.__version__.startswith("2."):
        sys.exit(f"bench_python: needs zarr-python 2 (Debian's python3-zarr), found {zarr2.__version__}")
    numcodecs.blosc.set_nthreads(1)
    work = tempfile.mkdtemp(prefix="zarrpp-bench-python-", dir=a.dir)
    machine_facts.print_facts(work)
    try:
        shape = (a.mib // 2, 1024, 1024)
        chunks = (64, 256, 256)
        rng = np.random.default_rng(0)
        src = (np.arange(shape[2], dtype=np.uint16)[None, None, :] * 16
               + rng.integers(0, 1 << 12, size=shape, dtype=np.uint16))
        nbytes = src.nbytes
        np.save(os.path.join(work, "data.npy"), src)
        arrays = {}
        for codec in ("none", "zstd-1"):
            p = os.path.join(work, f"zarrpp-{codec}.zarr")
            comp = None if codec == "none" else [zarrpp.codecs.Zstd(level=1)]
            z = zarrpp.create_array(zarrpp.storage.LocalStore(p), shape=shape, chunks=chunks, dtype="uint16",
                                    compressors=comp)
            z[:] = src
            p2 = os.path.join(work, f"zarr2-{codec}.zarr")
            z2 = zarr2.open(p2, mode="w", shape=shape, chunks=chunks, dtype="uint16",
                            compressor=None if codec == "none" else numcodecs.Zstd(level=1))
            z2[:] = src
            arrays[codec] = (p, z, z2, zarrpp.open_array(zarrpp.storage.LocalStore(p2)))

        ops = {}

        def add(name, fn, check=None):
            ops[name] = (fn, check)

        add("fresh floor", lambda: fresh_floor(src), True)
        add("np.copyto", lambda: np.copyto(np.empty_like(src), src) or None)
        for codec, (_, z, z2, zv2) in arrays.items():
            add(f"zarrpp read {codec}", lambda z=z: z[:], True)
            add(f"zarr-python read {codec}", lambda z2=z2: z2[:], True)
            add(f"zarrpp read zarr-python's v2 {codec}", lambda zv2=zv2: zv2[:], True)

            def zw(z=z):
                z[:] = src

            def z2w(z2=z2):
                z2[:] = src
            add(f"zarrpp write {codec}", zw)
            add(f"zarr-python write {codec}", z2w)
        times = {k: [] for k in ops}
        names = list(ops)
        for name in names:  # warm-up: page cache and first-touch costs outside the timings
            out = ops[name][0]()
            del out
        shuffle = random.Random(41)
        for _ in range(a.rounds):
            # A new order every round: an operation that always followed the same one would inherit
            # the memory that one left behind (freed pages the VM's host has taken back cost several
            # times more to touch again: docs/benchmarks.md, "Fresh memory").
            order = shuffle.sample(names, len(names))
            for name in order:
                fn, check = ops[name]
                t = time.perf_counter()
                out = fn()
                times[name].append(time.perf_counter() - t)
                if check and not np.array_equal(out, src):
                    sys.exit(f"bench_python: VALIDATION FAILED: {name} differs from the data written")
                del out
        med = {k: statistics.median(v) for k, v in times.items()}

        def gib(s):
            return nbytes / s / 2**30

        cxx = {}
        if os.path.exists(a.bench_fresh):
            for codec, (p, *_rest) in arrays.items():
                r = subprocess.run([a.bench_fresh, p, os.path.join(work, "data.npy"), str(a.rounds)],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"bench_python: {a.bench_fresh} failed: {r.stderr}")
                j = json.loads(r.stdout)
                cxx[codec] = {k: statistics.median(j[k]) for k in ("floor", "read", "write")}
        zarrita = {}
        if not a.no_zarrita and shutil.which("node"):
            script = os.path.join(ROOT, "tests", "interop", "bench_with_zarrita.mjs")
            for codec, (p, *_rest) in arrays.items():
                r = subprocess.run(["node", script, "--store", p, "--path", "", "--workloads", "whole",
                                    "--repeats", str(min(a.rounds, 3))],
                                   capture_output=True, text=True)
                try:
                    j = json.loads(r.stdout.strip().splitlines()[-1])
                    zarrita[codec] = j["whole"]["median"]
                except Exception:
                    print(f"(zarrita.js failed on {codec}: {r.stderr.strip()[:200]})")

        print(f"data: uint16 {'x'.join(map(str, shape))} ({nbytes / 2**20:.0f} MiB), "
              f"chunks {'x'.join(map(str, chunks))}, "
              f"{a.rounds} rounds (medians), zarrpp threads: {zarrpp.__name__} default; numpy {np.__version__}, "
              f"zarr-python {zarr2.__version__}, numcodecs {numcodecs.__version__}")
        print()
        print(f"fresh floor (2 threads) {gib(med['fresh floor']):.2f} GiB/s; "
              f"np.copyto (1 thread, fresh) {gib(med['np.copyto']):.2f} GiB/s")
        print()
        print("| read (fresh output) | codec | GiB/s | ÷ fresh floor | ÷ np.copyto | ÷ zarr-python | ÷ zarrita.js |")
        print("|---|---|---|---|---|---|---|")
        for codec in arrays:
            zp, z2 = med[f"zarrpp read {codec}"], med[f"zarr-python read {codec}"]
            zt = zarrita.get(codec)
            print(f"| zarrpp z[:] (v3) | {codec} | {gib(zp):.2f} | {med['fresh floor'] / zp:.2f} | "
                  f"{med['np.copyto'] / zp:.2f} | {z2 / zp:.2f} | {(f'{zt / zp:.1f}' if zt else '—')} |")
            zv = med[f"zarrpp read zarr-python's v2 {codec}"]
            print(f"| zarrpp z[:] of zarr-python's v2 array | {codec} | {gib(zv):.2f} | "
                  f"{med['fresh floor'] / zv:.2f} | {med['np.copyto'] / zv:.2f} | {z2 / zv:.2f} | — |")
            print(f"| zarr-python z[:] (v2) | {codec} | {gib(z2):.2f} | {med['fresh floor'] / z2:.2f} | "
                  f"{med['np.copyto'] / z2:.2f} | 1.00 | — |")
            if zt:
                print(f"| zarrita.js get (v3) | {codec} | {gib(zt):.2f} | {med['fresh floor'] / zt:.2f} | "
                      f"{med['np.copyto'] / zt:.2f} | {z2 / zt:.2f} | 1.0 |")
            if codec in cxx:
                c = cxx[codec]
                vs_zt = f"{zt / c['read']:.1f}" if zt else "—"
                print(f"| C++ Array::read() (same array) | {codec} | {gib(c['read']):.2f} | "
                      f"{c['floor'] / c['read']:.2f} (C++ floor {gib(c['floor']):.2f}) | — | "
                      f"{z2 / c['read']:.2f} | {vs_zt} |")
        print()
        print("| write (whole array) | codec | GiB/s | ÷ C++ write | ÷ zarr-python |")
        print("|---|---|---|---|---|")
        for codec in arrays:
            zp, z2 = med[f"zarrpp write {codec}"], med[f"zarr-python write {codec}"]
            c = cxx.get(codec, {}).get("write")
            print(f"| zarrpp z[:] = a | {codec} | {gib(zp):.2f} | {(f'{c / zp:.2f}' if c else '—')} | {z2 / zp:.2f} |")
            if c:
                print(f"| C++ Array::write | {codec} | {gib(c):.2f} | 1.00 | {z2 / c:.2f} |")
            print(f"| zarr-python z[:] = a | {codec} | {gib(z2):.2f} | {(f'{c / z2:.2f}' if c else '—')} | 1.00 |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
