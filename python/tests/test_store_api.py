"""Stores as zarr-python 3 has them: its method names (sync), byte requests, read-only views,
equality, context managers and ``StorePath``, checked for every kind of store against a plain
dict of what was written."""
import asyncio
import os
import pickle

import numpy as np
import pytest
import zarr as zarr2

import zarrpp
from zarrpp.storage import (Buffer, LocalStore, MemoryStore, OffsetByteRequest, RangeByteRequest, StorePath,
                            SuffixByteRequest)


def _kinds(tmp_path):
    """One store of each kind zarrpp makes from zarr-python's ways of naming one."""
    return {
        "memory": MemoryStore(),
        "local": LocalStore(tmp_path / "local"),
        "dict": zarrpp.storage.make_store({}),
        "memory-url": zarrpp.storage.make_store(f"memory://api-{tmp_path.name}/sub/dir"),
        "store-path": zarrpp.storage.make_store(StorePath(MemoryStore(), "x/y")),
    }


KINDS = ["memory", "local", "dict", "memory-url", "store-path"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_store_answers_zarr_pythons_methods_as_a_dict_would(tmp_path, kind):
    store = _kinds(tmp_path)[kind]
    model = {}
    rng = np.random.default_rng(7)
    for i in range(60):
        key = rng.choice(["a", "b/c", "b/d/e", "f.g", "b/d/h"])
        op = rng.integers(0, 4)
        if op < 2:
            value = bytes(rng.integers(0, 256, rng.integers(0, 9), dtype=np.uint8))
            (store.set if op == 0 else store.set_sync)(key, value)
            model[key] = value
        elif op == 2:
            store.delete(key) if i % 2 else store.delete_sync(key)
            model.pop(key, None)
        else:
            value = b"first"
            store.set_if_not_exists(key, value)
            model.setdefault(key, value)
        assert sorted(store.list()) == sorted(model)
        for k in ("a", "b/c", "b/d/e", "f.g", "b/d/h"):
            assert store.exists(k) == (k in model)
            got = store.get(k)
            assert got == model.get(k) and (got is None or isinstance(got, Buffer))
    assert store.list_prefix("b/") == sorted(k for k in model if k.startswith("b/"))
    names = {k.split("/")[0] for k in model}
    assert sorted(store.list_dir("")) == sorted(names)
    assert sorted(store.list_dir("b")) == sorted(store.list_dir("b/")) == sorted(
        {k[2:].split("/")[0] for k in model if k.startswith("b/")})
    assert store.is_empty("") == (not model) and store.is_empty("nothing")
    assert store.getsize_prefix("b") == sum(len(v) for k, v in model.items() if k.startswith("b/"))


@pytest.mark.parametrize("kind", KINDS)
def test_byte_requests_sizes_and_folder_deletes(tmp_path, kind):
    store = _kinds(tmp_path)[kind]
    store.set("v", b"0123456789")
    assert store.get("v", byte_range=RangeByteRequest(2, 5)) == b"234"
    assert store.get_sync("v", byte_range=OffsetByteRequest(7)) == b"789"
    assert store.get("v", prototype=None, byte_range=SuffixByteRequest(4)) == b"6789"
    assert store.get("v", byte_range=SuffixByteRequest(40)) == b"0123456789"
    assert store.get("v").to_bytes() == b"0123456789" and list(store.get("v").as_numpy_array()[:2]) == [48, 49]
    assert store.get("missing", byte_range=RangeByteRequest(0, 1)) is None
    with pytest.raises(ValueError, match="before start"):
        store.get("v", byte_range=RangeByteRequest(5, 2))
    with pytest.raises(TypeError, match="byte_range"):
        store.get("v", byte_range=(0, 2))
    assert store.getsize("v") == 10
    with pytest.raises(FileNotFoundError):
        store.getsize("missing")
    for k in ("d/1", "d/e/2", "dd/3"):
        store.set(k, b"x")
    store.delete_dir("d")
    assert sorted(store.list()) == ["dd/3", "v"]  # "dd/" is not inside "d/"
    store.clear()
    assert store.list() == [] and store.is_empty("")


def test_values_may_be_buffers_arrays_or_bytes_like_and_nothing_else():
    store = MemoryStore()

    class ZarrPythonBuffer:  # zarr-python's Buffer: its bytes by to_bytes()
        def to_bytes(self):
            return b"buf"

    store.set("a", ZarrPythonBuffer())
    store.set("b", np.arange(3, dtype="<u2"))
    store.set("c", bytearray(b"ba"))
    store.set("d", Buffer.from_bytes(b"again"))
    assert [store.get(k) for k in "abcd"] == [b"buf", b"\x00\x00\x01\x00\x02\x00", b"ba", b"again"]
    for bad in (3, "text", None):
        with pytest.raises(TypeError, match="cannot store"):
            store.set("e", bad)
    assert not store.exists("e")


def test_listings_iterate_with_for_and_async_for():
    store = MemoryStore({"a/b": b"1", "a/c": b"2", "z": b"3"})

    async def listed():
        return ([k async for k in store.list()], [k async for k in store.list_prefix("a/")],
                [k async for k in store.list_dir("")])

    assert asyncio.run(listed()) == (["a/b", "a/c", "z"], ["a/b", "a/c"], ["a", "z"])
    assert list(store.list()) == ["a/b", "a/c", "z"]


def test_read_only_views_share_the_data_and_refuse_every_write(tmp_path):
    for store in (MemoryStore(), LocalStore(tmp_path / "l"), zarrpp.storage.make_store({}),
                  zarrpp.storage.make_store(f"memory://ro-{tmp_path.name}/p")):
        store.set("k", b"1")
        view = store.with_read_only(True)
        assert view.read_only and not store.read_only and type(view) is type(store)
        store.set("k", b"2")  # seen through the view: the same data
        assert view.get("k") == b"2"
        for write in (lambda: view.set("k", b"3"), lambda: view.delete("k"), lambda: view.clear(),
                      lambda: view.set_if_not_exists("n", b"1"), lambda: view.delete_dir("")):
            with pytest.raises(ValueError, match="read-only"):
                write()
        assert store.get("k") == b"2" and not store.exists("n")
        again = view.with_read_only(False)
        again.set("k", b"4")
        assert store.get("k") == b"4" and not again.read_only
        with pytest.raises(ValueError, match="read-only"):
            zarrpp.create_array(store=view, shape=(2,), dtype="i1", name="arr")
        assert not store.exists("arr/zarr.json")


def test_a_read_only_memory_store_is_read_only_in_cpp_too():
    store = MemoryStore({"zarr.json": b"{}"}, read_only=True)
    assert store.read_only and store.get("zarr.json") == b"{}"
    with pytest.raises(ValueError, match="read-only"):
        store.set("x", b"1")
    z = zarrpp.create_array(store=MemoryStore(), shape=(4,), chunks=(2,), dtype="i2")
    z[:] = 3
    ro = z.store.with_read_only(True)
    a = zarrpp.open_array(store=ro, mode="r+")  # the store itself refuses, whatever the mode says
    with pytest.raises(ValueError, match="read-only"):
        a[:] = 1
    assert list(z[:]) == [3, 3, 3, 3]


def test_a_read_only_mapping_cannot_be_made_writable():
    from types import MappingProxyType
    store = zarrpp.storage.make_store(MappingProxyType({"k": b"1"}))
    assert store.read_only and store.get("k") == b"1"
    with pytest.raises(ValueError, match="writable"):
        store.with_read_only(False)


def test_equality_follows_the_data_and_the_mode(tmp_path):
    a = MemoryStore()
    assert a == a.with_read_only(False) and hash(a) == hash(a.with_read_only(False))
    assert a != a.with_read_only(True) and a != MemoryStore()
    (tmp_path / "d").mkdir()
    os.symlink(tmp_path / "d", tmp_path / "alias")
    assert LocalStore(tmp_path / "d") == LocalStore(tmp_path / "alias")
    assert hash(LocalStore(tmp_path / "d")) == hash(LocalStore(str(tmp_path / "alias")))
    assert LocalStore(tmp_path / "d") != LocalStore(tmp_path / "e")
    d = {}
    assert zarrpp.storage.make_store(d) == zarrpp.storage.make_store(d) != zarrpp.storage.make_store({})
    name = f"memory://eq-{os.getpid()}"
    assert zarrpp.storage.make_store(name + "/p") == zarrpp.storage.make_store(name + "/p/")
    assert zarrpp.storage.make_store(name + "/p") != zarrpp.storage.make_store(name + "/q")
    assert StorePath(a, "x/y") == StorePath(a, "x") / "y" != StorePath(a, "x")
    assert {StorePath(a, "x"), StorePath(a.with_read_only(False), "x/")} == {StorePath(a, "x")}


def test_stores_are_context_managers_and_stay_usable_after_close(tmp_path):
    with LocalStore(tmp_path / "c") as store:
        z = zarrpp.create_array(store=store, shape=(3,), dtype="i1", fill_value=1)
    store.close()
    assert list(z[:]) == [1, 1, 1] and (tmp_path / "c" / "zarr.json").exists()
    with MemoryStore() as m:
        m.set("k", b"v")
    assert m.get("k") == b"v"


def test_store_paths_open_nodes_inside_a_store_and_zarr_python_2_reads_them():
    d = {}
    root = StorePath(zarrpp.storage.make_store(d), "outer")
    z = zarrpp.create_array(store=root / "inner/arr", shape=(5,), chunks=(2,), dtype="f8", zarr_format=2)
    z[:] = np.arange(5.0)
    assert sorted(d) == ["outer/inner/arr/.zarray", "outer/inner/arr/0", "outer/inner/arr/1", "outer/inner/arr/2"]
    assert list(zarr2.open(store=d, path="outer/inner/arr", mode="r")[:]) == [0, 1, 2, 3, 4]
    again = zarrpp.open_array(store=StorePath(root.store, "outer/inner"), path="arr", mode="r")
    assert list(again[:]) == [0, 1, 2, 3, 4]
    assert str(z.store_path).endswith("outer/inner/arr") and z.store_path.store == z.store
    sp = root / "inner/arr/.zarray"
    assert sp.exists() and b'"zarr_format": 2' in sp.get()
    assert sp.get(byte_range=RangeByteRequest(0, 1)) == b"{"
    note = root / "note"
    note.set(b"hello")
    note.set_if_not_exists(b"ignored")
    assert d["outer/note"] == b"hello" and note.get_sync() == b"hello"
    note.delete()
    assert not note.exists() and "outer/note" not in d
    with pytest.raises(TypeError, match="zarrpp store"):
        StorePath("not a store", "p")


def test_stores_that_live_in_a_process_still_pickle_by_where_they_are(tmp_path):
    store = LocalStore(tmp_path / "p", read_only=False)
    back = pickle.loads(pickle.dumps(store.with_read_only(False)))
    assert back == store and not back.read_only
    (tmp_path / "p").mkdir()
    assert pickle.loads(pickle.dumps(store.with_read_only(True))).read_only
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(MemoryStore().with_read_only(True))


def test_a_read_only_s3_store_refuses_writes_before_any_request(moto_s3):
    opts = {"endpoint_url": moto_s3, "key": "k", "secret": "s", "region": "us-east-1"}
    rw = zarrpp.storage.open_url("s3://bucket/ro", opts)
    zarrpp.create_array(store=rw, shape=(2,), dtype="i4", fill_value=5)
    ro = rw.with_read_only(True)
    assert ro.read_only and not rw.read_only and ro != rw and ro == rw.with_read_only(True)
    with pytest.raises(ValueError, match="read-only"):
        ro.set("x", b"1")
    assert list(zarrpp.open_array(store=ro, mode="r")[:]) == [5, 5]
    assert zarrpp.open_array("s3://bucket/ro", mode="r", storage_options=opts).store.read_only
    assert pickle.loads(pickle.dumps(ro)).read_only


def test_store_methods_live_in_the_store_class_body(tmp_path):
    """Issue 68: zarr-python's store methods are defined in ``zarrpp.storage.Store``'s class body,
    which every store class a user meets derives from; nothing is attached to the binding's classes."""
    import inspect

    from zarrpp import _zarrpp
    from zarrpp.storage import HttpStore, S3Store, Store, ZipStore
    for name in ("get", "set", "delete", "exists", "list", "list_dir", "getsize", "close", "supports_writes"):
        assert name in vars(Store), name
        assert not hasattr(_zarrpp.Store, name), name
    assert "def get(" in inspect.getsource(Store.get)
    s3 = S3Store("s3://bucket/prefix", {"endpoint_url": "http://127.0.0.1:9", "anon": True})  # opening asks nothing
    http = HttpStore("http://127.0.0.1:9/data.zarr")
    stores = [*_kinds(tmp_path).values(), ZipStore(tmp_path / "z.zip", mode="w"), s3, http,
              zarrpp.storage.make_store(f"{tmp_path}/z.zip/inner")]
    for store in stores:
        assert isinstance(store, Store), type(store)
        assert type(store).get is Store.get, type(store)
    assert not http.supports_writes and s3.supports_writes
    assert str(s3) == "s3://bucket/prefix" and pickle.loads(pickle.dumps(s3)) == s3
    with pytest.raises(ValueError, match="is not a s3:// URL"):
        S3Store("https://example.org/data.zarr")
    with pytest.raises(ValueError, match=r"is not a http\(s\):// URL"):
        HttpStore("s3://bucket/prefix")
