"""Dask on zarrpp: dask.array.from_array, zarrpp.dask.from_zarrpp / to_zarrpp, da.store, on the
threaded scheduler and on a distributed.LocalCluster of worker processes; file store and S3 (moto);
results read back by the C++ tool and zarrita.js; and a dataset grown in front on the cluster."""
import os
import pickle
import threading
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import zarrpp  # noqa: E402
import zarrpp.dask as zd  # noqa: E402
from conftest import read_with_cli, read_with_zarrita  # noqa: E402

# This module's functions run on the workers, which cannot import it: send them by value.
cloudpickle = pytest.importorskip("cloudpickle")
cloudpickle.register_pickle_by_value(__import__(__name__))


def _sharded(path, shape=(60, 50), lower=None):
    z = zarrpp.create_array(str(path), shape=shape, chunks=(5, 10), shards=(20, 20), dtype="f8",
                            compressors=zarrpp.codecs.BloscCodec(cname="zstd", clevel=1), lower_bound=lower)
    ref = np.random.default_rng(1).random(shape)
    z[...] = ref
    return z, ref


# ---- reading ----------------------------------------------------------------------------------------

def test_from_array_reads_block_by_block(tmp_path, monkeypatch):
    z, ref = _sharded(tmp_path / "a.zarr")
    seen = []
    orig = zarrpp.Array.__getitem__

    def spy(self, sel):
        seen.append(sel)
        return orig(self, sel)

    monkeypatch.setattr(zarrpp.Array, "__getitem__", spy)
    x = da.from_array(z, chunks=(20, 25))
    assert x.dtype == z.dtype and x.shape == z.shape
    assert np.array_equal(x.compute(scheduler="threads"), ref)
    assert np.array_equal(x[7:31, ::3].compute(scheduler="threads"), ref[7:31, ::3])
    # one read per block, never the whole array
    assert seen and all(isinstance(s, tuple) and any(p.stop - (p.start or 0) < n for p, n in zip(s, z.shape))
                        for s in seen)


def test_reads_release_the_gil(tmp_path):
    z = zarrpp.create_array(str(tmp_path / "g.zarr"), shape=(2048, 2048), chunks=(256, 256), dtype="f8",
                            compressors=zarrpp.codecs.ZstdCodec(level=19), config={"concurrency": 1})
    z[...] = np.random.default_rng(2).random((2048, 2048))
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        t0, c0 = time.perf_counter(), count[0]
        z[...]
        elapsed, during = time.perf_counter() - t0, count[0] - c0
        t1, c1 = time.perf_counter(), count[0]
        time.sleep(0.2)
        rate = (count[0] - c1) / (time.perf_counter() - t1)  # spins per second with the GIL free
    finally:
        stop.set()
        t.join()
    # Holding the GIL, the read would let the spinning thread run for at most a switch interval.
    assert during > 0.1 * rate * elapsed, (during, rate, elapsed)


def test_from_zarrpp_is_one_task_per_shard_aligned_with_the_grid(tmp_path):
    z, ref = _sharded(tmp_path / "a.zarr")
    z.prepend(np.full((7, 50), 2.0))  # the grid's first boundary now lies inside the domain
    ref = np.concatenate([np.full((7, 50), 2.0), ref])
    x = zd.from_zarrpp(z)
    assert x.chunks == ((7, 20, 20, 20), (20, 20, 10))
    assert x.npartitions == len(z.store.list_prefix("c/"))  # every shard is stored: one task each
    assert np.array_equal(x.compute(scheduler="threads"), ref)
    # several shards per block
    y = zd.from_zarrpp(str(tmp_path / "a.zarr"), chunks=(2, 3))
    assert y.chunks == ((7, 40, 20), (50,))
    assert np.array_equal(y.compute(scheduler="sync"), ref)
    # Tasks carry the location and a box of coordinates, no data.
    for task in dict(x.dask).values():
        blob = pickle.dumps(task)
        assert len(blob) < 1024 and b"a.zarr" in blob
    with pytest.raises(ValueError, match="per_block"):
        zd.from_zarrpp(z, chunks=(0, 1))


def test_from_zarrpp_boxes_mean_the_same_elements_after_growth(tmp_path):
    z, ref = _sharded(tmp_path / "a.zarr")
    x = zd.from_zarrpp(str(tmp_path / "a.zarr"))
    zarrpp.open_array(str(tmp_path / "a.zarr")).prepend(np.zeros((20, 50)))  # another handle grows it
    assert np.array_equal(x.compute(scheduler="threads"), ref)  # the graph still reads its elements


def test_from_zarrpp_small_cases(tmp_path):
    z = zarrpp.create_array(str(tmp_path / "s.zarr"), shape=(), dtype="i2", fill_value=3)
    assert zd.from_zarrpp(z).compute() == 3
    e = zarrpp.create_array(str(tmp_path / "e.zarr"), shape=(0, 4), chunks=(2, 2), dtype="i2")
    assert zd.from_zarrpp(e).compute().shape == (0, 4)
    t = zarrpp.create_array(str(tmp_path / "t.zarr"), shape=(5,), chunks=(2,), dtype=str)
    t[...] = np.array(list("abcde"), dtype=object)
    assert zd.from_zarrpp(t).compute().tolist() == list("abcde")
    with pytest.raises(TypeError, match="path or a URL"):
        zd.from_zarrpp(42)
    with pytest.raises(FileNotFoundError):
        zd.from_zarrpp(str(tmp_path / "missing.zarr"))


# ---- writing ----------------------------------------------------------------------------------------

def test_to_zarrpp_aligns_blocks_with_stored_objects(tmp_path):
    a = np.arange(97 * 31, dtype="i4").reshape(97, 31)
    x = da.from_array(a, chunks=(13, 17))
    z = zd.to_zarrpp(x, str(tmp_path / "w.zarr"), chunks=(5, 5), shards=(20, 10))
    assert np.array_equal(z[...], a) and z.shards == (20, 10)
    # into a region (coordinates) of an existing, prepended array
    t = zarrpp.create_array(str(tmp_path / "r.zarr"), shape=(40, 31), chunks=(10, 31), dtype="i4", fill_value=-1)
    t.prepend(np.zeros((15, 31), "i4"))
    zd.to_zarrpp(x[:30], t, region=(slice(-12, 18), slice(None)))
    assert np.array_equal(t.coords[-12:18], a[:30])
    assert (t.coords[-15:-12] == 0).all() and (t.coords[18:] == -1).all()
    d = zd.to_zarrpp(x[:10], t, region=(slice(20, 30), slice(None)), compute=False)
    assert (t.coords[20:30] == -1).all()
    d.compute()
    assert np.array_equal(t.coords[20:30], a[:10])


def test_to_zarrpp_refuses_clearly_and_writes_nothing(tmp_path):
    x = da.ones((10, 4), chunks=5)
    t = zarrpp.create_array(str(tmp_path / "t.zarr"), shape=(8, 4), chunks=(4, 4), dtype="f8")
    with pytest.raises(ValueError, match="differs from the array's shape"):
        zd.to_zarrpp(x, t)
    with pytest.raises(IndexError, match="outside the array's domain"):
        zd.to_zarrpp(x, t, region=(slice(0, 10), slice(None)))
    with pytest.raises(ValueError, match="holds 2 elements"):
        zd.to_zarrpp(x, t, region=(slice(0, 2), slice(None)))
    with pytest.raises(ValueError, match="existing array"):
        zd.to_zarrpp(x, str(tmp_path / "new.zarr"), region=(slice(0, 10),))
    with pytest.raises(TypeError, match="dask.array"):
        zd.to_zarrpp(np.ones(3), t)
    with pytest.raises(ValueError, match="read-only"):
        zd.to_zarrpp(x[:8], zarrpp.open_array(str(tmp_path / "t.zarr"), mode="r"))
    assert t.nchunks_initialized == 0 and not os.path.exists(tmp_path / "new.zarr")
    zd.to_zarrpp(x, str(tmp_path / "u.zarr"))
    with pytest.raises(zarrpp.errors.ContainsArrayError):
        zd.to_zarrpp(x, str(tmp_path / "u.zarr"))


def test_da_store_with_blocks_splitting_chunks_loses_nothing(tmp_path):
    z = zarrpp.create_array(str(tmp_path / "s.zarr"), shape=(90, 90), chunks=(30, 30), dtype="i8")
    a = np.arange(90 * 90).reshape(90, 90)
    # blocks of 7 x 11 split every chunk between many tasks, run by 8 threads at once
    with dask.config.set(num_workers=8):
        da.store(da.from_array(a, chunks=(7, 11)), z, lock=False, scheduler="threads")
    assert np.array_equal(z[...], a)


# ---- on a cluster of worker processes -------------------------------------------------------------

def test_cluster_reads_a_sharded_compressed_array(tmp_path, dask_client):
    z, ref = _sharded(tmp_path / "a.zarr", shape=(120, 90), lower=(-30, 0))
    x = zd.from_zarrpp(str(tmp_path / "a.zarr"))
    assert np.isclose(float(x.sum().compute()), ref.sum())
    assert np.array_equal(x.compute(), ref)
    assert np.array_equal(da.from_array(z, chunks=(40, 45)).compute(), ref)  # z travels as its location
    assert np.array_equal((x[::7] * 2).compute(), ref[::7] * 2)


def test_cluster_writes_to_the_file_store_and_others_read_it(tmp_path, dask_client):
    x = da.random.RandomState(3).random_sample((150, 70), chunks=(25, 35))
    want = x.compute()
    z = zd.to_zarrpp(x, str(tmp_path / "w.zarr"), chunks=(10, 10), shards=(50, 70),
                     compressors=zarrpp.codecs.ZstdCodec(level=1))
    assert np.array_equal(z[...], want)
    assert np.array_equal(read_with_cli(str(tmp_path / "w.zarr"), tmp_path), want)  # the C++ tool
    shape, data = read_with_zarrita(tmp_path / "w.zarr")  # zarrita.js
    assert shape == (150, 70) and np.array_equal(np.array(data, dtype="f8").reshape(shape), want)
    # da.store into an existing array, blocks splitting its chunks, from two processes
    v = zarrpp.create_array(str(tmp_path / "v.zarr"), shape=(150, 70), chunks=(20, 20), dtype="f8")
    da.store(x.rechunk((9, 13)), v, lock=False)
    assert np.array_equal(v[...], want)
    shape, data = read_with_zarrita(tmp_path / "v.zarr")
    assert np.array_equal(np.array(data, dtype="f8").reshape(shape), want)


def test_cluster_writes_to_s3(tmp_path, dask_client, moto_s3):
    opts = {"endpoint_url": moto_s3, "region": "us-east-1", "key": "test", "secret": "test"}
    x = da.arange(200 * 30, dtype="i4", chunks=700).reshape(200, 30).rechunk((50, 30))
    z = zd.to_zarrpp(x, "s3://bucket/w", chunks=(25, 30), compressors=zarrpp.codecs.ZstdCodec(level=1),
                     storage_options=opts)
    want = np.arange(200 * 30, dtype="i4").reshape(200, 30)
    assert np.array_equal(zarrpp.open_array("s3://bucket/w", mode="r", storage_options=opts)[...], want)
    env = {"AWS_ENDPOINT_URL": moto_s3, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test"}
    assert np.array_equal(read_with_cli("s3://bucket/w", tmp_path, env), want)  # the C++ tool, over S3
    # and back from S3 on the cluster
    assert int(zd.from_zarrpp("s3://bucket/w", storage_options=opts).sum().compute()) == int(want.sum())
    assert z.nchunks_initialized == 8


def test_cluster_writes_into_a_zip_file(tmp_path, dask_client):
    # One writer at a time: the graph's process commits what it staged (the array's metadata) and
    # lets the file go; each task on a worker writes through its own writer, committed at its end.
    st = zarrpp.storage.ZipStore(tmp_path / "w.zip", mode="w", lock_timeout=5)
    z = zarrpp.create_array(st, shape=(60, 4), chunks=(10, 4), dtype="i4")
    zd.to_zarrpp(da.arange(240, dtype="i4", chunks=40).reshape(60, 4).rechunk((20, 4)), z)
    z[0, 0] = -1  # the store takes the file again
    st.close()
    want = np.arange(240, dtype="i4").reshape(60, 4)
    want[0, 0] = -1
    assert np.array_equal(zarrpp.open_array(zarrpp.storage.ZipStore(tmp_path / "w.zip"), mode="r")[...], want)


def test_memory_store_arrays_are_refused_on_a_cluster(dask_client):
    z = zarrpp.create_array(zarrpp.MemoryStore(), shape=(4,), chunks=(2,), dtype="i4")
    with pytest.raises(TypeError, match="MemoryStore"):
        zd.from_zarrpp(z).compute()
    assert zd.from_zarrpp(z).compute(scheduler="threads").tolist() == [0] * 4  # in one process: fine


# ---- growth on a cluster ----------------------------------------------------------------------------

def _value(t, col):
    return t * 100 + col


def _append_steps(url, rows, steps):
    z = zarrpp.open_array(url)
    for _ in range(steps):
        lo, hi = z.domain[0]
        start = hi
        t = np.arange(start, start + rows)[:, None]
        z.append(_value(t, np.arange(z.shape[1])[None, :]).astype("i8"))
        time.sleep(0.01)
    return z.domain[0]


def _watch(url, lo, hi, done_path, fill):
    """Reads the back-filled region until the writers are done; returns values that are neither
    the fill value nor the final value (stale or torn data)."""
    z = zarrpp.open_array(url, mode="r")
    open(done_path + ".watching", "w").close()
    bad, rounds = [], 0
    while True:
        finished = os.path.exists(done_path)
        got = z.coords[lo:hi]
        t = np.arange(lo, hi)[:, None]
        want = _value(t, np.arange(got.shape[1])[None, :])
        wrong = (got != fill) & (got != want)
        if wrong.any():
            bad.append(int(got[wrong][0]))
        rounds += 1
        if finished:
            return bad, rounds
        time.sleep(0.005)


def test_growth_on_a_cluster_back_fills_in_front_while_appending(tmp_path, dask_client):
    url = str(tmp_path / "series.zarr")
    fill = -7
    cols = 16
    # Rows [-45, 100) once held stale values; the front was cut back to row 0 (chunks start at the
    # origin, -45 + 10 k, so chunk [-5, 5) keeps stale values outside the domain, as the store
    # allows), then the real series written.
    z = zarrpp.create_array(url, shape=(145, cols), chunks=(10, cols), dtype="i8", fill_value=fill,
                            lower_bound=(-45, 0))
    z[...] = -999
    z.resize_domain([(0, 100), (0, cols)])
    t = np.arange(0, 100)[:, None]
    z[...] = _value(t, np.arange(cols)[None, :])
    chunk_dir = os.path.join(url, "c")
    before = {k: os.stat(os.path.join(chunk_dir, k, "0")).st_ino for k in os.listdir(chunk_dir)
              if 5 <= int(k) <= 13}  # wholly inside the old domain [0, 100), away from the appends
    assert len(before) == 9

    # One metadata step extends the domain in front: 45 earlier rows, read as the fill value.
    assert z.expand_domain(0, before=45) == ((-45, 100), (0, cols))
    assert (z.coords[-45:0] == fill).all()

    # Workers compute and write the back-fill by coordinates while another appends at the end and
    # a reader watches the new region.
    done = str(tmp_path / "done")
    watcher = dask_client.submit(_watch, url, -45, 0, done, fill, pure=False)
    deadline = time.monotonic() + 60
    while not os.path.exists(done + ".watching"):  # the watcher runs before the writers start
        assert time.monotonic() < deadline, "the watcher task did not start"
        time.sleep(0.01)
    appender = dask_client.submit(_append_steps, url, 3, 8, pure=False)
    back = da.arange(-45, 0, chunks=10, dtype="i8")[:, None] * 100 + da.arange(cols, dtype="i8")[None, :]
    zd.to_zarrpp(back.rechunk((5, cols)), zarrpp.open_array(url), region=(slice(-45, 0), slice(None)))
    final_hi = appender.result()[1]
    open(done, "w").close()
    bad, rounds = watcher.result()
    assert bad == [] and rounds >= 1

    r = zarrpp.open_array(url, mode="r")
    assert r.domain == ((-45, final_hi), (0, cols)) and final_hi == 100 + 8 * 3
    t = np.arange(-45, final_hi)[:, None]
    assert np.array_equal(r[...], _value(t, np.arange(cols)[None, :]))  # every value landed, once
    after = {k: os.stat(os.path.join(chunk_dir, k, "0")).st_ino for k in before}
    assert after == before  # the existing chunks were neither copied nor moved


def test_fixed_width_text_and_times_go_through_dask(tmp_path):
    text = np.array(["a", "bb", "ccc", "dddd", "é", ""], dtype="U4")
    z = zarrpp.create_array(str(tmp_path / "u.zarr"), shape=(8,), chunks=(3,), dtype="U4", fill_value="-")
    z[:6] = text
    x = zd.from_zarrpp(str(tmp_path / "u.zarr"))
    assert x.dtype == np.dtype("U4") and x.compute().tolist() == text.tolist() + ["-", "-"]
    times = np.array(["2020-01-01T00:00", "NaT", "1969-12-31T23:59"], dtype="M8[m]")
    zd.to_zarrpp(da.from_array(times, chunks=2), str(tmp_path / "t.zarr"))
    back = zarrpp.open_array(str(tmp_path / "t.zarr"))
    assert back.dtype == np.dtype("M8[m]") and np.array_equal(back[:], times, equal_nan=True)
