"""zarr-python 3 compatibility (issue: the pip package): behaviour a zarr-python 3 user relies on,
and the bugs such a user found, each pinned down. docs/guide/python.md's compatibility table points
at these tests row by row."""
import json
import multiprocessing
import os
import threading

import numpy as np
import pytest

import zarrpp
import zarrpp as zarr


# ---- values that do not fit the dtype -----------------------------------------------------------
@pytest.mark.parametrize("dtype,value", [("u1", 300), ("u1", -1), ("i4", 2**40), ("i1", [1, 128]), ("i8", 2**70),
                                         ("u8", -5), ("i4", [1, 2**70, 3])])
def test_python_ints_that_do_not_fit_raise_overflow_error(dtype, value):
    z = zarr.create_array(None, shape=(3,), chunks=(3,), dtype=dtype)
    with pytest.raises(OverflowError, match="out of bounds"):
        z[0:1 if not isinstance(value, list) else len(value)] = value
    with pytest.raises(OverflowError):
        z[0] = value if not isinstance(value, list) else value[-1] if dtype != "i4" else 2**70
    assert z[:].tolist() == [0, 0, 0]  # nothing written


def test_arrays_are_cast_as_numpy_casts_them():
    z = zarr.create_array(None, shape=(3,), chunks=(3,), dtype="u1")
    z[:] = np.array([300, 1, -1], dtype=np.int64)  # np.asarray(value, dtype) semantics: wraps
    assert z[:].tolist() == np.array([300, 1, -1], dtype=np.int64).astype("u1").tolist()
    f = zarr.create_array(None, shape=(2,), chunks=(2,), dtype="f8")
    f[:] = [2**70, 1]
    assert f[:].tolist() == [float(2**70), 1.0]


# ---- NumPy's advanced indexing ------------------------------------------------------------------
SELECTIONS = [([0, 2], [1, 3], Ellipsis), (Ellipsis, [0, 2], [1, 3]), (0, slice(None), [1, 2]),
              (slice(None), 0, [1, 2]), ([0, 1], slice(1, 3), [2, 3]), ([[0, 1], [2, 3]], 1),
              (np.array([True, False, True, True]), [0, 1, 2], 3),
              (-1, [-1, 0]), ([1], [2], [3]), (0, Ellipsis, [1, 2]), ([2, 0, 2], slice(None, None, -2)),
              (slice(1, 3), [[1], [0]], [0, 5]), ([], slice(None), 0)]


@pytest.mark.parametrize("sel", SELECTIONS, ids=[str(i) for i in range(len(SELECTIONS))])
def test_getitem_with_index_arrays_follows_numpy(sel):
    ref = np.arange(120, dtype="i4").reshape(4, 5, 6)
    z = zarr.create_array(None, shape=ref.shape, chunks=(3, 2, 4), dtype="i4")
    z[:] = ref
    got, exp = z[sel], ref[sel]
    assert got.shape == exp.shape and np.array_equal(got, exp)


def test_assignment_where_numpy_and_orthogonal_differ_is_refused():
    z = zarr.create_array(None, shape=(4, 5, 6), chunks=(2, 2, 2), dtype="i4")
    for sel in [([0, 2], [1, 3]), (0, slice(None), [1, 2]), ([[0, 1]], 0)]:
        with pytest.raises(IndexError, match="oindex"):
            z[sel] = 1
    z[0, [1, 2]] = 7  # adjacent: NumPy's result is the orthogonal one, so it is allowed
    assert z[0, [1, 2]].tolist() == [[7] * 6] * 2


@pytest.mark.parametrize("sel", [slice(0, 2**70), slice(-2**70, 2), slice(None, None, 2**70), slice(2**64, None)])
def test_huge_slice_bounds_are_clamped_as_numpy_does(sel):
    ref = np.arange(10)
    z = zarr.create_array(None, shape=(10,), chunks=(4,), dtype="i8")
    z[:] = ref
    assert z[sel].tolist() == ref[sel].tolist()


@pytest.mark.parametrize("idx", [2**70, -2**70, np.uint64(2**63), np.array([2**63], dtype=np.uint64), 10, -11])
def test_huge_or_out_of_range_indices_raise_index_error(idx):
    z = zarr.create_array(None, shape=(10,), chunks=(4,), dtype="i8")
    with pytest.raises(IndexError):
        z[idx]
    with pytest.raises(IndexError):
        z[idx] = 1


# ---- attributes from threads and stale handles --------------------------------------------------
def test_attribute_updates_from_threads_all_land(tmp_path):
    z = zarr.create_array(str(tmp_path / "a"), shape=(2,), chunks=(2,), dtype="i4")

    def work(i):
        h = zarr.open_array(str(tmp_path / "a"), mode="r+")
        for k in range(25):
            h.attrs[f"t{i}_{k}"] = k

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(zarr.open_array(str(tmp_path / "a")).attrs) == 200
    del z


def _proc_attrs(path, i):
    h = zarrpp.open_array(path, mode="r+")
    for k in range(10):
        h.attrs[f"p{i}_{k}"] = k


def test_attribute_updates_from_processes_all_land(tmp_path):
    path = str(tmp_path / "a")
    zarr.create_array(path, shape=(2,), chunks=(2,), dtype="i4")
    ctx = multiprocessing.get_context("spawn")
    ps = [ctx.Process(target=_proc_attrs, args=(path, i)) for i in range(4)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    assert all(p.exitcode == 0 for p in ps)
    assert len(zarr.open_array(path).attrs) == 40


@pytest.mark.parametrize("kind", ["array", "group"])
def test_deleting_through_a_stale_handle_keeps_keys_others_added(tmp_path, kind):
    path = str(tmp_path / "n")
    if kind == "array":
        zarr.create_array(path, shape=(2,), chunks=(2,), dtype="i4", attributes={"a": 1, "b": 2})
        h1, h2 = zarr.open_array(path, mode="r+"), zarr.open_array(path, mode="r+")
    else:
        zarr.create_group(path, attributes={"a": 1, "b": 2})
        h1, h2 = zarr.open_group(path, mode="r+"), zarr.open_group(path, mode="r+")
    h2.attrs["added"] = 3
    del h1.attrs["a"]
    with pytest.raises(KeyError):
        del h1.attrs["never-there"]
    fresh = zarr.open_array(path) if kind == "array" else zarr.open_group(path)
    assert dict(fresh.attrs) == {"b": 2, "added": 3}


# ---- read-only stores ---------------------------------------------------------------------------
def test_a_read_only_local_store_refuses_low_level_writes(tmp_path):
    zarr.create_array(str(tmp_path), shape=(2,), chunks=(2,), dtype="i4")
    before = sorted(os.listdir(tmp_path))
    ro = zarr.storage.LocalStore(str(tmp_path), read_only=True)
    with pytest.raises(ValueError, match="read-only"):
        ro.set("x", b"1")
    with pytest.raises(ValueError, match="read-only"):
        ro.delete("zarr.json")
    assert sorted(os.listdir(tmp_path)) == before
    m = zarr.storage.MemoryStore(read_only=True)
    with pytest.raises(ValueError, match="read-only"):
        m.set("x", b"1")


# ---- groups written by zarr-python 3.0-3.1 ------------------------------------------------------
def test_groups_with_null_consolidated_metadata_open(tmp_path):
    (tmp_path / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {"x": 1},
                                                    "consolidated_metadata": None}))
    g = zarr.open_group(str(tmp_path))
    assert g.attrs["x"] == 1 and list(g.members()) == []


# ---- creation functions and modes -----------------------------------------------------------------
def test_create_zeros_ones_full_empty_and_like(tmp_path):
    z = zarr.create((10, 6), chunks=(4, 3), dtype="i4", store=str(tmp_path / "c"))
    assert z.shape == (10, 6) and z.chunks == (4, 3) and z[:].sum() == 0
    assert zarr.zeros((3,), dtype="f4")[:].tolist() == [0, 0, 0]
    assert zarr.ones((2, 2), dtype="u2")[:].tolist() == [[1, 1], [1, 1]]
    assert zarr.full((2,), 7.5)[:].tolist() == [7.5, 7.5]
    assert zarr.empty((2,), dtype="i8").shape == (2,)
    assert zarr.create((2,)).dtype == np.dtype("float64")  # zarr-python's default dtype
    src = zarr.full((6, 4), 3, chunks=(2, 2), shards=(4, 4), dtype="i2", store=str(tmp_path / "s"))
    for f, want in [(zarr.zeros_like, 0), (zarr.ones_like, 1), (zarr.full_like, 3)]:
        like = f(src)
        assert (like.shape, like.dtype, like.chunks, like.shards) == ((6, 4), np.dtype("i2"), (2, 2), (4, 4))
        assert (like[:] == want).all()
    assert zarr.zeros_like(np.ones((3, 2), dtype="u1"), dtype="f8").dtype == np.dtype("f8")  # caller's kwargs win
    with pytest.raises(zarr.errors.ContainsArrayError):
        zarr.create((2,), store=str(tmp_path / "c"))
    zarr.create((2,), store=str(tmp_path / "c"), overwrite=True)


def test_modes_of_open_and_open_array(tmp_path):
    p = str(tmp_path / "a")
    with pytest.raises(zarr.errors.ArrayNotFoundError):
        zarr.open_array(p, mode="r")
    with pytest.raises(FileNotFoundError):  # the zarr errors are the built-in ones too
        zarr.open_array(str(tmp_path), path="nothing", mode="r+")
    a = zarr.open_array(p, mode="a", shape=(4,), dtype="i4", chunks=(2,))  # created
    a[:] = [1, 2, 3, 4]
    assert zarr.open_array(p, mode="a")[:].tolist() == [1, 2, 3, 4]  # opened, not replaced
    with pytest.raises(zarr.errors.ContainsArrayError):
        zarr.open_array(p, mode="w-", shape=(4,), dtype="i4")
    w = zarr.open_array(p, mode="w", shape=(3,), dtype="f4")  # replaced
    assert w.shape == (3,) and w[:].tolist() == [0, 0, 0]
    r = zarr.open(p, mode="r")
    assert isinstance(r, zarr.Array) and r.read_only
    with pytest.raises(ValueError):
        r[0] = 1
    z = zarr.open(str(tmp_path / "b"), mode="w", shape=(5,), dtype="u1")  # zarr.open with shape: an array
    assert isinstance(z, zarr.Array) and z.shape == (5,)
    g = zarr.open(str(tmp_path / "g"))  # nothing there, no shape: a new group
    assert isinstance(g, zarr.Group)
    with pytest.raises(zarr.errors.NodeNotFoundError):
        zarr.open(str(tmp_path / "missing"), mode="r")
    with pytest.raises(ValueError, match="mode"):
        zarr.open(p, mode="q")
    with pytest.raises(zarr.errors.GroupNotFoundError):
        zarr.open_group(str(tmp_path), path="nothing", mode="r+")
    with pytest.raises(zarr.errors.ContainsGroupError):
        zarr.create_group(str(tmp_path / "g"))


def test_save_and_load(tmp_path):
    a = np.arange(12, dtype="i2").reshape(3, 4)
    zarr.save(str(tmp_path / "one"), a)
    assert np.array_equal(zarr.load(str(tmp_path / "one")), a)
    zarr.save(str(tmp_path / "many"), a, a * 2, named=a + 1)
    g = zarr.open_group(str(tmp_path / "many"), mode="r")
    assert sorted(g.keys()) == ["arr_0", "arr_1", "named"]
    assert np.array_equal(zarr.load(str(tmp_path / "many"), path="named"), a + 1)
    with pytest.raises(NotImplementedError):
        zarr.load(str(tmp_path / "many"))
    with pytest.raises(zarr.errors.ContainsArrayError):
        zarr.save_array(str(tmp_path / "one"), a)
    zarr.save_array(str(tmp_path / "one"), a * 3, mode="w")
    assert np.array_equal(zarr.load(str(tmp_path / "one")), a * 3)
    with pytest.raises(ValueError, match="at least one"):
        zarr.save_group(str(tmp_path / "none"))


# ---- arrays ---------------------------------------------------------------------------------------
def test_array_extras(tmp_path):
    z = zarr.create_array(str(tmp_path / "a"), shape=(10, 7), chunks=(2, 3), shards=(4, 6), dtype="i4",
                          dimension_names=["t", "x"])
    assert z.cdata_shape == (5, 3) and z.nchunks == 15  # inner chunks, as zarr-python
    assert z.nchunks_initialized == 0
    z[0:4, 0:6] = 1  # one whole shard
    assert z.nchunks_initialized == 4  # stored shards x chunks per shard
    assert z.dimension_names == ("t", "x")
    assert z.update_attributes({"u": 1}) is z and zarr.open_array(str(tmp_path / "a")).attrs["u"] == 1
    assert z == zarr.open_array(str(tmp_path / "a")) and z != zarr.create_array(None, shape=(1,), dtype="i4")
    info = z.info
    assert "Shard shape : (4, 6)" in str(info) and repr(info) == str(info)
    assert z.metadata["dimension_names"] == ["t", "x"]
    assert z.metadata.dimension_names == ("t", "x") and z.metadata.shape == (10, 7) and \
        isinstance(z.metadata.to_dict(), dict)
    out = np.empty((2, 3), dtype="i4")
    assert z.get_basic_selection((slice(0, 2), slice(0, 3)), out=out) is out and (out == 1).all()
    out2 = np.zeros((2,), dtype="i4")
    z.get_coordinate_selection(([0, 5], [0, 0]), out=out2)
    assert out2.tolist() == [1, 0]
    with pytest.raises(ValueError, match="out"):
        z.get_basic_selection((slice(0, 2), slice(0, 3)), out=np.empty((3, 3), dtype="i4"))
    with pytest.raises(ValueError, match="copy=False"):
        z.__array__(copy=False)
    assert np.asarray(z).shape == (10, 7)


def test_groups_extras(tmp_path):
    g = zarr.open_group(str(tmp_path / "g"), mode="w")
    g["data"] = np.arange(6)
    assert g["data"][:].tolist() == list(range(6))
    g["data"] = np.ones(3)  # replaces
    assert g["data"].shape == (3,)
    sub = g.create_group("sub")
    sub.zeros(name="z", shape=(2, 2))
    sub.full(name="f", shape=(2,), fill_value=4, dtype="i2")
    assert sub["f"][:].tolist() == [4, 4]
    sub.ones_like(name="o", data=g["data"])
    assert sub["o"][:].tolist() == [1, 1, 1]
    assert [k for k, _ in g.members()] == ["data", "sub"]
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["data", "sub", "sub/f", "sub/o", "sub/z"]
    assert g.nmembers() == 2 and g.nmembers(max_depth=1) == 5
    with pytest.raises(ValueError):
        g.members(max_depth=-1)
    t = str(g.tree())
    assert "sub" in t and "z (2, 2) float64" in t
    a = g.require_array("req", shape=(3,), dtype="i4")
    assert g.require_array("req", shape=(3,), dtype="i8") == a  # i4 can be cast to i8
    with pytest.raises(TypeError):
        g.require_array("req", shape=(4,), dtype="i4")
    with pytest.raises(TypeError):
        g.require_array("req", shape=(3,), dtype="i8", exact=True)
    assert g.update_attributes({"k": "v"}) is g and zarr.open_group(str(tmp_path / "g")).attrs["k"] == "v"


# ---- pickling -------------------------------------------------------------------------------------
def _sum_in_child(a):
    return int(a[:].sum())


def test_arrays_groups_and_stores_pickle_by_location(tmp_path):
    import pickle
    z = zarr.create_array(str(tmp_path / "a"), shape=(100,), chunks=(10,), dtype="i8")
    z[:] = np.arange(100)
    blob = pickle.dumps(z)
    assert len(blob) < 1000  # by location, never by data
    assert pickle.loads(blob) == z and pickle.loads(blob)[:].sum() == 4950
    g = zarr.open_group(str(tmp_path))
    assert pickle.loads(pickle.dumps(g)) == g
    st = zarr.storage.LocalStore(str(tmp_path), read_only=True)
    st2 = pickle.loads(pickle.dumps(st))
    assert st2 == st and st2.read_only
    ro = zarr.open_array(str(tmp_path / "a"), mode="r")
    assert pickle.loads(pickle.dumps(ro)).read_only
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_sum_in_child, [z, z]) == [4950, 4950]
    with pytest.raises(TypeError, match="MemoryStore"):
        pickle.dumps(zarr.zeros((2,)))
    with pytest.raises(TypeError, match="MemoryStore"):
        pickle.dumps(zarr.storage.MemoryStore())


# ---- remote stores --------------------------------------------------------------------------------
def test_unknown_url_schemes_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for url in ["gs://bucket/x", "abfs://c/x", "memory://"]:  # memory://NAME names a memory store
        with pytest.raises(ValueError):
            zarr.create_array(url, shape=(2,), dtype="i4")
    assert os.listdir(tmp_path) == []  # no local folder named "gs:" made
    with pytest.raises(TypeError, match="storage_options"):
        zarr.create_array(str(tmp_path / "x"), shape=(2,), dtype="i4", storage_options={"anon": True})


def test_s3_urls_and_storage_options(moto_s3, monkeypatch):
    import pickle
    opts = {"endpoint_url": moto_s3, "region": "us-east-1", "key": "test", "secret": "test-secret"}
    z = zarr.create_array("s3://bucket/arr", shape=(6, 4), chunks=(4, 4), dtype="i4", storage_options=opts)
    z[:] = 1
    z.prepend(np.full((3, 4), 2, dtype="i4"))
    r = zarr.open_array("s3://bucket/arr", mode="r", storage_options=opts)
    assert r.domain == ((-3, 6), (0, 4)) and r[:3].tolist() == [[2] * 4] * 3
    assert isinstance(r.store, zarr.storage.S3Store) and r.store.bucket == "bucket"
    # Explicit credentials travel in the pickle (the user gave them); environment ones do not.
    assert b"test-secret" in pickle.dumps(r) and pickle.loads(pickle.dumps(r))[:].sum() == 24 + 24
    for k, v in {"AWS_ENDPOINT_URL": moto_s3, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test",
                 "AWS_SECRET_ACCESS_KEY": "env-secret"}.items():
        monkeypatch.setenv(k, v)
    e = zarr.open_array("s3://bucket/arr", mode="r")
    blob = pickle.dumps(e)
    assert b"env-secret" not in blob and pickle.loads(blob)[:].shape == (9, 4)
    with pytest.raises(ValueError, match="storage_options"):
        zarr.open_array("s3://bucket/arr", storage_options={"bogus": 1})


def test_memory_store_takes_a_dict_first():
    src = zarr.storage.MemoryStore()
    zarr.create_array(src, shape=(3,), chunks=(3,), dtype="i4")[:] = [4, 5, 6]
    d = {k: src.get(k) for k in src.list_prefix("")}
    m = zarr.storage.MemoryStore(d)
    assert not m.read_only and zarr.open_array(m)[:].tolist() == [4, 5, 6]
    ro = zarr.storage.MemoryStore(d, read_only=True)
    with pytest.raises(ValueError):
        zarr.open_array(ro)[0] = 1
    with pytest.raises(TypeError):
        zarr.storage.MemoryStore(True)  # once taken as read_only


def test_blocks_of_a_sharded_array_are_shards_as_in_zarr_python():
    ref = np.arange(70, dtype="i4").reshape(10, 7)
    z = zarr.create_array(None, shape=(10, 7), chunks=(2, 3), shards=(4, 6), dtype="i4")
    z[:] = ref
    assert np.array_equal(z.blocks[0, 0], ref[0:4, 0:6]) and np.array_equal(z.blocks[-1, -1], ref[8:10, 6:7])
    assert np.array_equal(z.blocks[1:, 0], ref[4:10, 0:6])
    z.prepend(ref[:3])  # the first shard is now partly filled: block 0 holds 3 rows
    full = np.concatenate([ref[:3], ref])
    assert np.array_equal(z.blocks[0], full[0:3]) and np.array_equal(z.blocks[1], full[3:7])
    z.blocks[1, 1] = -1
    full[3:7, 6:7] = -1
    assert np.array_equal(z[:], full)
    with pytest.raises(IndexError):
        z.blocks[4]
    plain = zarr.create_array(None, shape=(10, 7), chunks=(2, 3), dtype="i4")
    plain[:] = ref
    assert np.array_equal(plain.blocks[1, 1], ref[2:4, 3:6])  # unsharded: blocks are chunks


def test_zarr_python_codec_classes():
    from zarrpp.codecs import BloscCname, BloscCodec, BloscShuffle, BytesCodec, ShardingCodec, VLenUTF8Codec, ZstdCodec
    z = zarr.create((16, 8), chunks=(8, 8), dtype="u2",
                    codecs=[ShardingCodec(chunk_shape=(4, 4),
                                          codecs=[BytesCodec(), BloscCodec(shuffle=BloscShuffle.bitshuffle)])])
    assert (z.chunks, z.shards) == ((4, 4), (8, 8))
    blosc = z.metadata["codecs"][0]["configuration"]["codecs"][1]
    assert blosc["name"] == "blosc" and blosc["configuration"]["cname"] == "zstd" and \
        blosc["configuration"]["shuffle"] == "bitshuffle"
    assert BloscCodec().to_dict()["configuration"]["cname"] == "zstd"  # zarr-python's default compressor
    assert BloscCodec(cname=BloscCname.lz4).to_dict()["configuration"]["cname"] == "lz4"
    assert BloscShuffle.from_int(1) is BloscShuffle.shuffle
    assert zarr.create_array(None, shape=(100, 10), chunks=(5, 5), shards="auto", dtype="i4").shards == (10, 5)
    assert zarr.create_array(None, shape=(8,), chunks=(2,), shards={"shape": (4,)}, dtype="i4").shards == (4,)
    s = zarr.create_array(None, shape=(2,), dtype=str, serializer=VLenUTF8Codec(), compressors=ZstdCodec(level=1))
    s[:] = ["a", "é"]
    assert s[:].tolist() == ["a", "é"]
    with pytest.raises(ValueError, match="index"):
        ShardingCodec(chunk_shape=(2,), index_location="start")
    with pytest.raises(ValueError, match="vlen-utf8"):
        zarr.create_array(None, shape=(2,), dtype="i4", serializer=VLenUTF8Codec())
    numcodecs = pytest.importorskip("numcodecs")
    n = zarr.create_array(None, shape=(10,), dtype="i4", compressors=numcodecs.Zlib(level=2))
    n[:] = np.arange(10)
    assert n[:].tolist() == list(range(10)) and n.metadata["codecs"][-1]["name"] == "numcodecs.zlib"


def test_http_urls_read_only(tmp_path):
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    z = zarr.create_array(str(tmp_path / "arr"), shape=(6, 4), chunks=(4, 4), dtype="i4")
    z[:] = np.arange(24).reshape(6, 4)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    srv = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/arr"
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/zarr.json", timeout=1)
                break
            except Exception:
                time.sleep(0.05)
        r = zarr.open_array(url, mode="r")
        assert isinstance(r.store, zarr.storage.HttpStore) and r.read_only
        assert r[:].tolist() == np.arange(24).reshape(6, 4).tolist()
        with pytest.raises(ValueError):
            r[0, 0] = 1
    finally:
        srv.terminate()
        srv.wait(10)


@pytest.mark.parametrize("url,opts", [("s3://", None), ("s3:///x", None), ("http://", None),
                                      ("s3://b/x", {"anon": "yes"}), ("s3://b/x", {"headers": 5}),
                                      ("s3://b/x", {"endpoint_url": 3}), ("s3://b/x", {"bogus": 1})])
def test_bad_urls_and_options_are_value_errors(url, opts):
    with pytest.raises(ValueError):
        zarr.open_array(url, storage_options=opts)


# ---- found by red-teaming the above ---------------------------------------------------------------
def test_lists_mixing_small_and_huge_ints_are_exact_or_overflow():
    u = zarr.zeros((2,), dtype="uint64", chunks=(2,))
    u[:] = [2**64 - 1, 1]  # NumPy would make this list float64; the values must stay exact
    assert u[:].tolist() == [2**64 - 1, 1]
    u[:] = [2**63 + 1, 1]
    assert u[:].tolist() == [2**63 + 1, 1]
    assert zarr.array([2**64 - 1, 1], dtype="u8")[:].tolist() == [2**64 - 1, 1]
    i = zarr.zeros((2,), dtype="int64", chunks=(2,))
    with pytest.raises(OverflowError):
        i[:] = [1, 2**63]
    assert i[:].tolist() == [0, 0]
    store = zarr.storage.MemoryStore()
    with pytest.raises(OverflowError):
        zarr.array([1, 300], dtype="u1", store=store)
    assert store.list_prefix("") == []  # nothing created


def test_a_bad_config_changes_nothing():
    m = zarr.storage.MemoryStore()
    a = zarr.create((4,), store=m, chunks=(2,), dtype="i4")
    a[:] = 7
    for cfg in [{"write_empty_chunk": False}, {"concurrency": "x"}, {"concurrency": -1}]:
        with pytest.raises(ValueError, match="config"):
            zarr.create((4,), store=m, overwrite=True, config=cfg)
    assert zarr.open_array(m)[:].tolist() == [7, 7, 7, 7]
    with pytest.raises(ValueError, match="config"):
        zarr.create((4,), store=m, path="new", config={"bogus": 1})
    assert m.list_prefix("new") == []


def test_read_only_memory_store_refuses_conversion():
    src = zarr.storage.MemoryStore()
    zarr.create_array(src, shape=(2,), dtype="i4", zarr_format=2)
    ro = zarr.storage.MemoryStore({k: src.get(k) for k in src.list_prefix("")}, read_only=True)
    with pytest.raises(ValueError, match="read-only"):
        zarr.convert_to_v3(ro)
    assert ro.get(".zarray") is not None and ro.get("zarr.json") is None


def test_require_array_and_like_functions_on_text_arrays():
    g = zarr.group()
    g.require_array("s", shape=(3,), dtype=str)
    assert g.require_array("s", shape=(3,), dtype=str).dtype == np.dtype("O")
    s = zarr.create_array(None, shape=(2,), dtype=str, fill_value="x")
    assert s.fill_value == "x" and "string" in str(s.info) and "'x'" in str(s.info)
    assert zarr.zeros_like(s)[:].tolist() == ["", ""] and zarr.full_like(s)[:].tolist() == ["x", "x"]
    assert zarr.empty_like(s).dtype == np.dtype("O")
    assert isinstance(s.serializer, zarr.codecs.VLenUTF8Codec) and s.filters == ()


@pytest.mark.parametrize("k", range(7))
def test_advanced_indexing_with_ellipsis_and_boolean_arrays(k):
    n = np.arange(24).reshape(2, 3, 4)
    z = zarr.array(n, chunks=(1, 2, 2))
    sel = [(slice(None), [0, 2, 1], Ellipsis, [1, 3, 0]), ([0, 1], Ellipsis, [1, 2]), (Ellipsis, [0, 1], [1, 2]),
           (n[:, :, 0] > 5, 1), (n[:, :, 0] > 5, [1]), (0, n[0] > 3), ([0, 1], n[0, :, 0] > 3, 2)][k]
    assert z[sel].shape == n[sel].shape and np.array_equal(z[sel], n[sel])


def test_chunks_true_false_and_0d_index_arrays():
    assert zarr.create((10,), chunks=True).chunks == (10,) and zarr.create((10,), chunks=False).chunks == (10,)
    z0 = zarr.array(np.float64(3.0))
    with pytest.raises(IndexError):
        z0[np.array([0, 0])]
