#!/usr/bin/env python3
"""The CLI's .npy data paths against `cp` of the same file, in the same run.

Writes a uint16 .npy file (512 MiB by default) and an uncompressed array of the same shape
(chunks 64x256x256, fewer rows when the data has fewer) on one file system, then, round by round and interleaved, times:

  cp        cp data.npy copy.npy                       (the limit: the same bytes, file to file)
  set       zarrpp set ARRAY --from data.npy           (every chunk written)
  get       zarrpp get ARRAY --out out.npy             (checked byte for byte against data.npy)
  floor     zarrpp-bench-get-floor ARRAY out.npy scatter|preadv  (get's floor: only the reads into
            one reused buffer and the writes get must do; bench/get_floor.cpp; uncompressed only)

each as its own process (what a user runs), with its peak RSS (ru_maxrss, as /usr/bin/time -f %M). Prints the
medians, each ÷ cp, and peak RSS ÷ data size. Page cache warm (one untimed round first).

  /usr/bin/python3 bench/bench_cli.py --zarrpp build/release/zarrpp [--mib 512] [--rounds 5]
      [--dir DIR] [--compressor none|zstd:1|blosc:lz4:5:shuffle] [--get-floor PROGRAM]

The order of the commands is shuffled in every round (this VM's cost of fresh memory depends on
what ran before).
"""
import argparse
import filecmp
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import machine_facts  # bench/machine_facts.py: the script's folder is on sys.path


def timed(cmd):
    """Seconds and peak RSS (KiB, what `/usr/bin/time -f %M` reports: the child's ru_maxrss) of one process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    s = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"bench_cli: {' '.join(cmd)} failed:\n{err}")
    return s, usage.ru_maxrss


def make_data(path, shape):
    rng = np.random.default_rng(0)
    x = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint16, shape=shape)
    for i in range(0, shape[0], 16):
        x[i:i + 16] = rng.integers(0, 1 << 12, size=(min(16, shape[0] - i),) + shape[1:], dtype=np.uint16)
    x.flush()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--make-data":
        make_data(sys.argv[2], tuple(int(n) for n in sys.argv[3].split(",")))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zarrpp", default="build/release/zarrpp")
    ap.add_argument("--mib", type=int, default=512, help="data size (a multiple of 8)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where to work (default: a fresh folder in /tmp)")
    ap.add_argument("--compressor", default="none")
    ap.add_argument("--get-floor", default=None,
                    help="zarrpp-bench-get-floor (default: next to --zarrpp; the floor rows need it)")
    a = ap.parse_args()
    if a.mib % 8 or a.mib <= 0:
        sys.exit("bench_cli: --mib must be a positive multiple of 8")
    zarrpp = os.path.abspath(a.zarrpp)
    work = tempfile.mkdtemp(prefix="zarrpp-bench-cli-", dir=a.dir)
    machine_facts.print_facts(work)
    try:
        shape = (a.mib // 2, 1024, 1024)  # uint16: 2 MiB per row of dimension 0
        data = os.path.join(work, "data.npy")
        # Written by a child process: a child's peak RSS (wait4's ru_maxrss) starts from this
        # process's high-water mark, which writing 512 MiB here would raise to the data's size.
        subprocess.run([sys.executable, os.path.abspath(__file__), "--make-data", data, ",".join(map(str, shape))],
                       check=True)
        nbytes = os.path.getsize(data)
        arr = os.path.join(work, "array.zarr")
        chunks = f"{min(64, shape[0])},256,256"  # a whole number of chunks: the floor program needs it
        subprocess.run([zarrpp, "create", arr, "--shape", ",".join(map(str, shape)), "--chunks", chunks,
                        "--dtype", "uint16", "--compressor", a.compressor], check=True)
        out = os.path.join(work, "out.npy")
        cmds = {
            "cp": ["cp", data, os.path.join(work, "copy.npy")],
            "set": [zarrpp, "set", arr, "--from", data],
            "get": [zarrpp, "get", arr, "--out", out],
        }
        floor = a.get_floor or os.path.join(os.path.dirname(zarrpp), "zarrpp-bench-get-floor")
        if a.compressor == "none" and os.path.exists(floor):
            for how in ("scatter", "preadv"):
                cmds[f"get floor ({how})"] = [os.path.abspath(floor), arr, out, how]
        res = {k: [] for k in cmds}
        rng = random.Random(41)
        subprocess.run(cmds["set"], check=True)  # the array's chunks exist before any read
        for r in range(a.rounds + 1):
            order = list(cmds)
            rng.shuffle(order)
            for k in order:
                for f in ("copy.npy", "out.npy"):
                    if os.path.exists(os.path.join(work, f)):
                        os.unlink(os.path.join(work, f))
                s, rss = timed(cmds[k])
                if r > 0:
                    res[k].append((s, rss))
                if k.startswith("get") and not filecmp.cmp(data, out, shallow=False):
                    sys.exit(f"bench_cli: VALIDATION FAILED: {k} wrote a .npy that differs from the one written")
        cp = statistics.median(s for s, _ in res["cp"])
        print(f"data: uint16 {shape[0]}x{shape[1]}x{shape[2]} ({nbytes / 2**20:.0f} MiB .npy), "
              f"chunks {chunks.replace(',', 'x')}, "
              f"compressor {a.compressor}, {a.rounds} rounds, medians; file system of {work}")
        print()
        print("| command | seconds (median) | min | max | ÷ cp (median) | peak RSS MiB | peak RSS ÷ data |")
        print("|---|---|---|---|---|---|---|")
        for k, v in res.items():
            secs = [s for s, _ in v]
            rss = max(m for _, m in v) * 1024
            label = k if k.startswith("get floor") else " ".join(
                os.path.basename(c) if "/" in c else c for c in cmds[k][:2])
            print(f"| {label} | "
                  f"{statistics.median(secs):.3f} | {min(secs):.3f} | {max(secs):.3f} | "
                  f"{statistics.median(secs) / cp:.2f} | {rss / 2**20:.0f} | {rss / nbytes:.2f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
