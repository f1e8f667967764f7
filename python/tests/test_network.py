"""Remote stores under a misbehaving network, from Python and Dask: every request is bounded by
storage_options (the C++ RemoteOptions, checked by the same rules the CLI uses), and the bounds
travel with a pickled store to Dask's workers."""
import pickle
import subprocess
import sys
import time

import numpy as np
import pytest

import zarrpp
import zarrpp.dask

QUICK = {"stall_timeout": 1, "max_attempts": 5, "retry_window": 1.5, "retry_initial_delay": 0.01}


_SERVER = """
import http.server, sys, threading
root = sys.argv[1]
class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def do_GET(self):
        if "/c/" in self.path and sys.argv[2:] == ["stall"]:
            threading.Event().wait(120)  # stalls: the headers never come
            return
        super().do_GET()
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
print(srv.server_address[1], flush=True)
srv.serve_forever()
"""


@pytest.fixture
def stalling_server(tmp_path):
    """An HTTP server (another process: a request must not wait for this one's GIL) for tmp_path
    whose chunk requests (under /c/) never get an answer."""
    z = zarrpp.create_array(str(tmp_path / "arr"), shape=(8, 8), chunks=(4, 4), dtype="i4")
    z[:] = np.arange(64).reshape(8, 8)
    srv = subprocess.Popen([sys.executable, "-c", _SERVER, str(tmp_path), "stall"], stdout=subprocess.PIPE,
                           text=True)
    try:
        port = int(srv.stdout.readline())
        yield f"http://127.0.0.1:{port}/arr"
    finally:
        srv.kill()
        srv.wait(10)


def _fails_within(seconds, fn):
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="retry_window") as info:
        fn()
    took = time.monotonic() - t0
    assert took < seconds, f"took {took:.1f} s: {info.value}"
    assert "/c/" in str(info.value)
    return took


def test_storage_options_bound_a_stalled_read(stalling_server):
    z = zarrpp.open_array(stalling_server, mode="r", storage_options=QUICK)
    assert z.shape == (8, 8)  # the metadata is served
    _fails_within(8, lambda: z[:2, :2])


def test_dask_reads_are_bounded_on_the_workers_too(stalling_server):
    x = zarrpp.dask.from_zarrpp(stalling_server, storage_options=QUICK)
    _fails_within(10, lambda: x[:2, :2].compute(scheduler="threads"))
    # A store pickled (as Dask sends it to worker processes) keeps its bounds.
    z = zarrpp.open_array(stalling_server, mode="r", storage_options=QUICK)
    again = pickle.loads(pickle.dumps(z))
    _fails_within(8, lambda: again[:2, :2])


@pytest.mark.parametrize("opts,words", [
    ({"stall_timeout": -1}, "stall_timeout must be a number of seconds"),
    ({"connect_timeout": 0}, "connect_timeout must be a number of seconds (more than 0"),
    ({"max_attempts": 0}, "max_attempts must be a whole number"),
    ({"max_attempts": 2.5}, "max_attempts must be a whole number"),
    ({"timeout": "5"}, "'timeout' must be a number"),
    ({"retry_window": True}, "'retry_window' must be a number"),
    ({"stall_timeout": float("nan")}, "stall_timeout must be a number of seconds"),
    ({"retries": 3}, "unknown option 'retries'"),
])
def test_bad_network_options_are_value_errors(opts, words):
    for url in ("s3://bucket/x", "http://127.0.0.1:9/x"):
        with pytest.raises(ValueError, match="storage_options") as info:
            zarrpp.open_array(url, storage_options=opts)
        assert words in str(info.value)


def test_unknown_option_lists_the_network_options():
    with pytest.raises(ValueError) as info:
        zarrpp.open_array("s3://bucket/x", storage_options={"bogus": 1})
    for name in ("stall_timeout", "retry_window", "max_attempts", "connect_timeout"):
        assert name in str(info.value)


_FORKED = {}


def _read_in_child(i):
    return int(_FORKED["array"][i * 4:(i + 1) * 4].sum())


def test_an_array_read_before_a_fork_reads_in_the_forked_children(tmp_path):
    """A remote store's requests run on a thread of the store (its transport), which a forked child
    (multiprocessing's fork, a DataLoader's workers) does not inherit: the child starts its own."""
    import multiprocessing
    z = zarrpp.create_array(str(tmp_path / "arr"), shape=(16, 8), chunks=(4, 4), dtype="i4")
    z[:] = np.arange(128).reshape(16, 8)
    srv = subprocess.Popen([sys.executable, "-c", _SERVER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(srv.stdout.readline())
        a = zarrpp.open_array(f"http://127.0.0.1:{port}/arr", mode="r")
        assert int(a[:].sum()) == sum(range(128))  # the transport's thread runs now
        _FORKED["array"] = a
        with multiprocessing.get_context("fork").Pool(2) as pool:
            sums = pool.map_async(_read_in_child, range(4), chunksize=1).get(timeout=60)
        assert sums == [int(np.arange(128).reshape(16, 8)[i * 4:(i + 1) * 4].sum()) for i in range(4)]
        assert int(a[:].sum()) == sum(range(128))  # and the parent's still works
    finally:
        _FORKED.clear()
        srv.kill()
        srv.wait(10)


def test_a_local_array_read_before_a_fork_reads_in_the_forked_children(tmp_path):
    """The thread pool's workers are not inherited by a forked child either: the child starts its
    own at its first read (it hung there before)."""
    import multiprocessing
    z = zarrpp.create_array(str(tmp_path / "arr"), shape=(16, 8), chunks=(4, 4), dtype="i4")
    z[:] = np.arange(128).reshape(16, 8)
    assert int(z[:].sum()) == sum(range(128))  # the pool's workers run now
    _FORKED["array"] = z
    try:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            sums = pool.map_async(_read_in_child, range(4), chunksize=1).get(timeout=60)
        assert sums == [int(np.arange(128).reshape(16, 8)[i * 4:(i + 1) * 4].sum()) for i in range(4)]
    finally:
        _FORKED.clear()
