"""Fixtures shared by the Python tests: an S3 server (moto, as the C++ remote tests use), Azurite
(the Azure Storage emulator, from tests/interop's npm packages), a Dask
cluster of worker processes, and the independent readers (the C++ command-line tool, zarrita.js)."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import MutableMapping

import numpy as np
import pytest

SOURCE = os.environ.get("ZARRPP_SOURCE_DIR") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


class PlainMapping(MutableMapping):
    """A mapping that is not a dict (as fsspec's FSMap, zarr-python 2's stores): zarrpp cannot
    condition writes to it."""

    def __init__(self):
        self.d = {}

    def __getitem__(self, k):
        return self.d[k]

    def __setitem__(self, k, v):
        self.d[k] = v

    def __delitem__(self, k):
        del self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@pytest.fixture(scope="module")
def azurite():
    """Azurite's blob service on a free loopback port, with the container "zarr"; yields the
    connection string that names it."""
    exe = os.path.join(SOURCE, "tests", "interop", "node_modules", ".bin", "azurite-blob")
    assert os.path.exists(exe), f"{exe} not found: run `npm ci` in tests/interop (scripts/setup.sh does)"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([exe, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
                             "--disableProductStyleUrl", "--skipApiVersionCheck"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}/devstoreaccount1"
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "azurite-blob exited at start-up"
                time.sleep(0.05)
        cs = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
              f"BlobEndpoint={endpoint};")
        import zarrpp.storage
        assert zarrpp.storage.AzureStore("az://zarr", {"connection_string": cs}).create_container()
        yield cs
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


@pytest.fixture
def moto_s3():
    exe = shutil.which("moto_server")
    assert exe, "moto_server not found: the S3 tests use moto (pip's moto[server]), as the C++ remote tests do"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(400):
            try:
                urllib.request.urlopen(url, timeout=1)
                break
            except Exception:
                time.sleep(0.05)
        urllib.request.urlopen(urllib.request.Request(url + "/bucket", method="PUT"), timeout=5)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="session")
def dask_client():
    """A distributed.LocalCluster with two worker processes (two threads each), as on a cluster:
    tasks and their arguments are pickled to other processes."""
    distributed = pytest.importorskip("distributed")
    space = tempfile.mkdtemp(prefix="zarrpp-dask-")  # the workers' scratch space, removed after
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                       silence_logs=40, local_directory=space)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
        shutil.rmtree(space, ignore_errors=True)


def cli_path():
    """The C++ command-line tool of this build (an independent reader from Python's view)."""
    exe = os.environ.get("ZARRPP_CLI") or os.path.join(SOURCE, "build", "release", "zarrpp")
    assert os.path.exists(exe), f"the zarrpp CLI is not built at {exe} (set ZARRPP_CLI)"
    return exe


def read_with_cli(url, tmp_path, env=None):
    out = os.path.join(str(tmp_path), f"cli-{time.monotonic_ns()}.npy")
    r = subprocess.run([cli_path(), "get", url, "--out", out], capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    assert r.returncode == 0, r.stderr
    return np.load(out)


def read_with_zarrita(store_dir, path=""):
    """What zarrita.js (tests/interop, pinned by package-lock.json) reads: (shape, flat data)."""
    script = os.path.join(SOURCE, "tests", "interop", "read_with_zarrita.mjs")
    assert os.path.isdir(os.path.join(SOURCE, "tests", "interop", "node_modules", "zarrita")), \
        "zarrita is not installed: run npm ci in tests/interop (scripts/setup.sh does)"
    r = subprocess.run(["node", script, str(store_dir), path], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    j = json.loads(r.stdout.splitlines()[0])
    return tuple(j["shape"]), j["data"]
