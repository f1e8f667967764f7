#!/usr/bin/env python3
"""Remote reads over a delayed link: zarrpp against zarr-python 2 + fsspec and against the floor.

nginx on loopback serves arrays of 256 chunks of 64 KiB (float32, uncompressed): `v2` (written
by zarr-python 2.13, no dimension_separator stated), `v3` and `v3 sharded` (4 shards; written by
zarrpp). bench/latency_proxy.cpp (zarrpp-latency-proxy) sits in front and delays every byte by
half the round trip each way. Rows, each as users run them, repeated and interleaved:

  cli       zarrpp get URL --out x.npy            (a whole process)
  python    zarrpp.open_array(URL)[...]            (the read itself, after imports)
  c++       Array::open(URL).read(SEL)             (zarrpp-bench-net-read: timed inside, from open
            to data, after the process started)
  fsspec    zarr.open(fsspec.get_mapper(URL))[...] (zarr-python 2.13 + fsspec's HTTP filesystem,
            aiohttp; v2 only; timed like `python`)

for a whole read and a partial one (rows 0:1024, columns 0:256: 16 chunks); and whole writes to S3
(moto_server behind the same proxy; zarr-python 2 has no S3 filesystem here, so no fsspec row):

  cli       zarrpp set s3://bucket/ARRAY --from x.npy   (a whole process)
  python    zarrpp.open_array(URL, mode="r+")[...] = x  (after imports)

and the same reads and writes of the v3 arrays on Azure Blob Storage (Azurite, the emulator, from
tests/interop's npm packages, behind the same proxy; rows "az v3", "az v3 sharded"; left out
without it).

Beside each median:
the spread (min–max), the ratio to fsspec, and the floor = (round trips that must follow one
another + ⌈requests ÷ 128⌉) × round trip, or the same read with no added delay if that is longer.

  /usr/bin/python3 bench/bench_network.py --zarrpp build/release/zarrpp \\
      --proxy build/release/zarrpp-latency-proxy [--rtt 10,50,100] [--rounds 5] [--rows reads,writes]
      [--net-read build/release/zarrpp-bench-net-read] [--rows reads,writes,azure]

Needs nginx and python3-aiohttp (scripts/setup.sh installs both); the write rows need moto_server
on PATH (as the remote tests do) and are left out without it.
"""
import argparse
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import machine_facts  # bench/machine_facts.py: the script's folder is on sys.path

SHAPE, CHUNKS = (4096, 1024), (256, 64)
PARTIAL = (slice(0, 1024), slice(0, 256))
IN_FLIGHT = 128  # RemoteOptions::max_in_flight's default


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_data(root, zarrpp):
    import zarr
    data = np.random.default_rng(0).random(SHAPE, dtype="f4")
    z = zarr.open(os.path.join(root, "v2.zarr"), mode="w", shape=SHAPE, chunks=CHUNKS, dtype="f4", compressor=None)
    z[:] = data
    a = zarrpp.create_array(os.path.join(root, "v3.zarr"), shape=SHAPE, chunks=CHUNKS, dtype="f4", compressors=None)
    a[:] = data
    s = zarrpp.create_array(os.path.join(root, "v3s.zarr"), shape=SHAPE, chunks=CHUNKS, shards=(2048, 512),
                            dtype="f4", compressors=None)
    s[:] = data
    return data


def start_nginx(root, work):
    port = free_port()
    conf = os.path.join(work, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; worker_processes 2; pid {work}/nginx.pid; error_log {work}/error.log;
events {{ worker_connections 2048; }}
http {{ access_log off; keepalive_requests 100000;
  server {{ listen 127.0.0.1:{port}; root {root}; location / {{ }} }} }}
""")
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc, port


def start_proxy(program, target, delay_ms):
    port = free_port()
    proc = subprocess.Popen([program, str(port), str(target), str(delay_ms), "3600"], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    return proc, port


def cli_row(zarrpp_cli, url, out, partial, env=None):
    cmd = [zarrpp_cli, "get", url, "--out", out]
    if partial:
        cmd[3:3] = ["0:1024, 0:256"]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - t


def cpp_row(net_read, url, partial):
    cmd = [net_read, url] + (["0:1024, 0:256"] if partial else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    return float(out[0])


def python_row(url, partial, storage_options=None):
    import zarrpp
    t = time.perf_counter()
    a = zarrpp.open_array(url, mode="r", storage_options=storage_options)
    a[PARTIAL] if partial else a[...]
    return time.perf_counter() - t


def fsspec_row(url, partial):
    import fsspec
    import zarr
    t = time.perf_counter()
    z = zarr.open(fsspec.get_mapper(url), mode="r")
    z[PARTIAL] if partial else z[...]
    return time.perf_counter() - t


def floor(kind, partial, rtt, zero_latency):
    chunks = 16 if partial else 256
    if kind == "v2":  # zarr.json (absent), the v2 documents, the separator probe, then the chunks
        trips, requests = 3, chunks
    elif kind == "v3":  # zarr.json, then the chunks
        trips, requests = 1, chunks
    else:  # zarr.json, the shard indexes, then the data ranges
        shards = 1 if partial else 4
        trips, requests = 2, shards
    return max((trips + math.ceil(requests / IN_FLIGHT)) * rtt, zero_latency)


def start_moto(work):
    exe = shutil.which("moto_server")
    if not exe:
        return None, None
    port = free_port()
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    import urllib.request
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}", timeout=1)
            break
        except Exception:
            time.sleep(0.05)
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/bench", method="PUT"), timeout=5)
    return proc, port


S3_ENV = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1"}


def s3_options(port):
    return {"endpoint_url": f"http://127.0.0.1:{port}", "key": "bench", "secret": "bench", "region": "us-east-1"}


def make_s3_arrays(moto_port):
    import warnings

    import zarrpp
    warnings.simplefilter("ignore", zarrpp.ZarrppWarning)  # no consolidated group above the bucket's root
    for name, shards in (("w3.zarr", None), ("w3s.zarr", (2048, 512))):
        zarrpp.create_array(f"s3://bench/{name}", shape=SHAPE, chunks=CHUNKS, shards=shards, dtype="f4",
                            compressors=None, overwrite=True, storage_options=s3_options(moto_port))


def cli_write_row(zarrpp_cli, name, port, npy):
    env = dict(os.environ, **S3_ENV, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
    t = time.perf_counter()
    subprocess.run([zarrpp_cli, "set", f"s3://bench/{name}", "--from", npy], check=True, env=env)
    return time.perf_counter() - t


def python_write_row(name, port, data):
    import zarrpp
    t = time.perf_counter()
    a = zarrpp.open_array(f"s3://bench/{name}", mode="r+", storage_options=s3_options(port))
    a[...] = data
    return time.perf_counter() - t


def write_floor(kind, rtt, zero_latency):
    # zarr.json, then the chunks (or shards), as many at once as the in-flight limit allows
    requests = 256 if kind == "v3" else 4
    return max((1 + math.ceil(requests / IN_FLIGHT)) * rtt, zero_latency)


def summary(times):
    return statistics.median(times), min(times), max(times)


def write_rows(args, moto_port, work):
    make_s3_arrays(moto_port)
    data = np.random.default_rng(1).random(SHAPE, dtype="f4")
    npy = os.path.join(work, "w.npy")
    np.save(npy, data)
    for rtt in [int(x) for x in args.rtt.split(",")]:
        proxy, pport = start_proxy(args.proxy, moto_port, rtt // 2)
        try:
            for kind, name in (("v3", "w3.zarr"), ("v3 sharded", "w3s.zarr")):
                zero = statistics.median(cli_write_row(args.zarrpp, name, moto_port, npy) for _ in range(3))
                rows = {"cli": lambda: cli_write_row(args.zarrpp, name, pport, npy),
                        "python": lambda: python_write_row(name, pport, data)}
                times = {r: [] for r in rows}
                for _ in range(args.rounds):
                    for r, fn in rows.items():
                        times[r].append(fn())
                f = write_floor(kind, rtt / 1000, zero)
                for r, ts in times.items():
                    med, lo, hi = summary(ts)
                    print(f"{rtt:>4} {kind:<13} {'write':<8} {r:<7} {med:9.3f} {lo:6.3f}–{hi:6.3f} {'':>9} "
                          f"{f:8.3f} {med / f:8.2f}", flush=True)
        finally:
            proxy.kill()


AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def start_azurite():
    exe = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "interop",
                       "node_modules", ".bin", "azurite-blob")
    if not os.path.exists(exe):
        return None, None
    port = free_port()
    proc = subprocess.Popen([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
                             "--disableProductStyleUrl", "--skipApiVersionCheck"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc, port


def az_options(port):
    return {"connection_string": f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
                                 f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"}


def az_write_row(zarrpp_cli, url, port, npy, data):
    if zarrpp_cli is None:  # the Python row
        import zarrpp
        t = time.perf_counter()
        zarrpp.open_array(url, mode="r+", storage_options=az_options(port))[...] = data
        return time.perf_counter() - t
    env = dict(os.environ, AZURE_STORAGE_CONNECTION_STRING=az_options(port)["connection_string"])
    t = time.perf_counter()
    subprocess.run([zarrpp_cli, "set", url, "--from", npy], check=True, env=env)
    return time.perf_counter() - t


def azure_rows(args, az_port, data, work):
    """Reads and writes of the v3 arrays on Azurite through the latency proxy."""
    import warnings

    import zarrpp
    import zarrpp.storage
    warnings.simplefilter("ignore", zarrpp.ZarrppWarning)  # no consolidated group above the container's root
    zarrpp.storage.AzureStore("az://bench", az_options(az_port)).create_container()
    kinds = {"v3": ("az://bench/v3.zarr", None), "v3 sharded": ("az://bench/v3s.zarr", (2048, 512))}
    for url, shards in kinds.values():
        zarrpp.create_array(url, shape=SHAPE, chunks=CHUNKS, shards=shards, dtype="f4", compressors=None,
                            overwrite=True, storage_options=az_options(az_port))[...] = data
    npy, out = os.path.join(work, "az.npy"), os.path.join(work, "az-out.npy")
    np.save(npy, data)
    direct = dict(os.environ, AZURE_STORAGE_CONNECTION_STRING=az_options(az_port)["connection_string"])
    for rtt in [int(x) for x in args.rtt.split(",")]:
        proxy, pport = start_proxy(args.proxy, az_port, rtt // 2)
        env = dict(os.environ, AZURE_STORAGE_CONNECTION_STRING=az_options(pport)["connection_string"])
        try:
            for kind, (url, _) in kinds.items():
                for op in ("whole", "part", "write"):
                    if op == "write":
                        zero = statistics.median(az_write_row(args.zarrpp, url, az_port, npy, data) for _ in range(3))
                        rows = {"cli": lambda: az_write_row(args.zarrpp, url, pport, npy, data),
                                "python": lambda: az_write_row(None, url, pport, npy, data)}
                        f = write_floor(kind, rtt / 1000, zero)
                    else:
                        part = op == "part"
                        zero = statistics.median(cli_row(args.zarrpp, url, out, part, direct) for _ in range(3))
                        rows = {"cli": lambda: cli_row(args.zarrpp, url, out, part, env),
                                "python": lambda: python_row(url, part, az_options(pport))}
                        f = floor(kind, part, rtt / 1000, zero)
                    times = {r: [] for r in rows}
                    for _ in range(args.rounds):
                        for r, fn in rows.items():
                            times[r].append(fn())
                    for r, ts in times.items():
                        med, lo, hi = summary(ts)
                        print(f"{rtt:>4} {'az ' + kind:<13} {op:<8} {r:<7} {med:9.3f} {lo:6.3f}–{hi:6.3f} {'':>9} "
                              f"{f:8.3f} {med / f:8.2f}", flush=True)
        finally:
            proxy.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zarrpp", required=True, help="the CLI")
    ap.add_argument("--proxy", required=True, help="zarrpp-latency-proxy")
    ap.add_argument("--rtt", default="50", help="round trips in ms, comma-separated (default 50)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--net-read", help="zarrpp-bench-net-read, for the C++ rows (default: beside --zarrpp)")
    ap.add_argument("--rows", default="reads,writes,azure",
                    help="which rows: reads, writes, azure, comma-separated (default: all)")
    args = ap.parse_args()
    import zarrpp
    net_read = args.net_read or os.path.join(os.path.dirname(args.zarrpp), "zarrpp-bench-net-read")
    work = tempfile.mkdtemp(prefix="zarrpp-bench-net-")
    os.chmod(work, 0o755)  # nginx's workers run as another user
    root = os.path.join(work, "www")
    os.makedirs(root)
    nginx = moto = azurite = None
    try:
        make_data(root, zarrpp)
        nginx, nport = start_nginx(root, work)
        moto, moto_port = start_moto(work)
        azurite, az_port = start_azurite() if "azure" in args.rows else (None, None)
        machine_facts.print_facts(work)
        out = os.path.join(work, "x.npy")
        kinds = {"v2": "v2.zarr", "v3": "v3.zarr", "v3 sharded": "v3s.zarr"}
        print(f"{'rtt':>4} {'array':<13} {'read':<8} {'reader':<7} {'median s':>9} {'spread':>13} "
              f"{'÷ fsspec':>9} {'floor s':>8} {'÷ floor':>8}")
        for rtt in [int(x) for x in args.rtt.split(",")] if "reads" in args.rows else []:
            proxy, pport = start_proxy(args.proxy, nport, rtt // 2)
            try:
                for kind, name in kinds.items():
                    for partial in (False, True):
                        direct = f"http://127.0.0.1:{nport}/{name}"
                        url = f"http://127.0.0.1:{pport}/{name}"
                        zero = statistics.median(cli_row(args.zarrpp, direct, out, partial) for _ in range(3))
                        rows = {"cli": lambda: cli_row(args.zarrpp, url, out, partial),
                                "c++": lambda: cpp_row(net_read, url, partial),
                                "python": lambda: python_row(url, partial)}
                        if kind == "v2":
                            rows["fsspec"] = lambda: fsspec_row(url, partial)
                        times = {r: [] for r in rows}
                        for _ in range(args.rounds):
                            for r, fn in rows.items():
                                times[r].append(fn())
                        f = floor(kind, partial, rtt / 1000, zero)
                        ref = statistics.median(times["fsspec"]) if "fsspec" in times else None
                        for r, ts in times.items():
                            med, lo, hi = summary(ts)
                            vs = f"{med / ref:9.2f}" if ref and r != "fsspec" else f"{'':>9}"
                            print(f"{rtt:>4} {kind:<13} {'part' if partial else 'whole':<8} {r:<7} {med:9.3f} "
                                  f"{lo:6.3f}–{hi:6.3f} {vs} {f:8.3f} {med / f:8.2f}", flush=True)
            finally:
                proxy.kill()
        if moto and "writes" in args.rows:
            write_rows(args, moto_port, work)
        if azurite:
            azure_rows(args, az_port, np.random.default_rng(2).random(SHAPE, dtype="f4"), work)
    finally:
        if azurite:
            os.killpg(azurite.pid, 9)
        if moto:
            moto.terminate()
        if nginx:
            nginx.terminate()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
