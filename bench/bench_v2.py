"""Zarr v2 arrays: zarrpp against zarr-python 2.13 (the peer) on the same files, same process.

Writes a uint16 array (default 256 MiB, chunks 64x256x256 -> 8 MiB each) as Zarr v2 with
zarr-python 2 for each compressor, then times whole-array reads into fresh NumPy arrays and
whole-array writes by both libraries, and reports each as a ratio to NumPy's copy of the same
bytes (memory speed here) and zarrpp / zarr-python. Rounds are interleaved; the median is shown.
Also times in-place conversion to v3 (no chunk rewritten) against copying the files.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/bench_v2.py [--mib 256] [--rounds 3]
"""
import argparse
import os
import shutil
import statistics
import tempfile
import time

import numcodecs
import numpy as np
import zarr

import zarrpp

import machine_facts  # bench/machine_facts.py: the script's folder is on sys.path

numcodecs.blosc.set_nthreads(1)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n0 = max(1, args.mib * (1 << 20) // (2 * 256 * 256))
    shape, chunks = (n0, 256, 256), (64, 256, 256)
    rng = np.random.default_rng(0)
    data = (np.arange(np.prod(shape), dtype=np.uint32) % 4096).astype(np.uint16).reshape(shape)
    data[::7] += rng.integers(0, 64, size=data[::7].shape, dtype=np.uint16)
    gib = data.nbytes / (1 << 30)
    root = tempfile.mkdtemp(prefix="bench_v2_", dir=os.environ.get("TMPDIR", "/tmp"))
    machine_facts.print_facts(root)
    compressors = {"none": None, "blosc-lz4": numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
                   "zstd-1": numcodecs.Zstd(1), "zlib-1": numcodecs.Zlib(1)}
    print(f"Zarr v2, {shape} uint16 ({data.nbytes >> 20} MiB), chunks {chunks}, {args.rounds} rounds, "
          f"zarr-python {zarr.__version__}, numcodecs {numcodecs.__version__}, zarrpp {zarrpp.__version__}")
    print(f"{'compressor':<11} {'op':<6} {'np.copy GiB/s':>13} {'zarrpp GiB/s':>12} {'zarr-python GiB/s':>17} "
          f"{'zarrpp/np':>9} {'zarrpp÷zarr':>11}")
    try:
        for name, comp in compressors.items():
            path = os.path.join(root, name)
            zarr.open(path, mode="w", shape=shape, chunks=chunks, dtype="<u2", compressor=comp)[:] = data
            zp = zarrpp.open_array(path)
            zp.concurrency = 1  # one thread each: zarr-python 2 reads chunk by chunk
            zz = zarr.open(path, mode="r")
            assert np.array_equal(zp[:], data) and np.array_equal(zz[:], data)
            res = {k: [] for k in ("np_r", "zp_r", "zz_r", "np_w", "zp_w", "zz_w")}
            for _ in range(args.rounds):
                res["np_r"].append(timed(lambda: data.copy()))
                res["zp_r"].append(timed(lambda: zp[:]))
                res["zz_r"].append(timed(lambda: zz[:]))
                res["np_w"].append(timed(lambda: data.copy()))
                res["zp_w"].append(timed(lambda: zp.__setitem__(slice(None), data)))
                zw = zarr.open(path, mode="r+")
                res["zz_w"].append(timed(lambda: zw.__setitem__(slice(None), data)))
            for op in ("read", "write"):
                k = op[0]
                npv, zpv, zzv = (gib / statistics.median(res[f"{x}_{k}"]) for x in ("np", "zp", "zz"))
                print(f"{name:<11} {op:<6} {npv:>13.2f} {zpv:>12.2f} {zzv:>17.2f} {zpv / npv:>9.2f} {zpv / zzv:>11.2f}")
        # Conversion in place: metadata only, against copying the array's files.
        src = os.path.join(root, "zstd-1")
        t_copy = timed(lambda: shutil.copytree(src, src + ".copy"))
        t_conv = timed(lambda: zarrpp.convert_to_v3(src + ".copy"))
        print(f"convert in place (zstd-1): {t_conv * 1000:.1f} ms; copying the files: {t_copy * 1000:.1f} ms "
              f"(ratio {t_conv / t_copy:.4f})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
