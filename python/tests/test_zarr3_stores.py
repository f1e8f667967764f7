"""zarr-python 3's ways of naming stores and chunk keys, as zarrpp takes them: the ``v2`` chunk key
encoding on Zarr v3 arrays, ``memory://`` URLs, a dict or any mapping as a store."""
import json
import os

import numpy as np
import pytest

import zarrpp
from conftest import PlainMapping


@pytest.mark.parametrize("cke,keys", [
    ({"name": "v2", "separator": "."}, ["-1.0", "-1.1", "0.0", "0.1", "1.0", "1.1"]),
    ({"name": "v2", "configuration": {"separator": "/"}}, ["-1/0", "-1/1", "0/0", "0/1", "1/0", "1/1"]),
    ("v2", ["-1.0", "-1.1", "0.0", "0.1", "1.0", "1.1"]),
    ({"name": "default", "separator": "."}, ["c.-1.0", "c.-1.1", "c.0.0", "c.0.1", "c.1.0", "c.1.1"]),
], ids=["v2-dot", "v2-slash-configuration", "v2-name", "default-dot"])
def test_v3_arrays_take_either_chunk_key_encoding_and_grow_with_it(tmp_path, cke, keys):
    path = tmp_path / "a"
    z = zarrpp.create_array(str(path), shape=(4, 4), chunks=(2, 2), dtype="i4", chunk_key_encoding=cke,
                            fill_value=-9)
    data = np.arange(16, dtype="i4").reshape(4, 4)
    z[:] = data
    z.prepend(np.full((2, 4), 7, dtype="i4"))
    doc = json.loads((path / "zarr.json").read_text())
    name = cke if isinstance(cke, str) else cke["name"]
    assert doc["chunk_key_encoding"]["name"] == name
    stored = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
    assert stored == sorted(keys + ["zarr.json"])
    again = zarrpp.open_array(str(path), mode="r")
    assert np.array_equal(again[:], np.vstack([np.full((2, 4), 7, dtype="i4"), data]))


def test_bad_chunk_key_encodings_are_refused_before_anything_is_written(tmp_path):
    for bad, word in [({"name": "v3"}, "unknown chunk key encoding"), ({"name": "v2", "separator": "|"}, "separator"),
                      ({"name": "default", "configuration": {"sep": "/"}}, "sep")]:
        with pytest.raises(ValueError, match=word):
            zarrpp.create_array(str(tmp_path / "x"), shape=(2,), dtype="i1", chunk_key_encoding=bad)
        assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="a Zarr v2 array's chunk keys are v2 keys"):
        zarrpp.create_array(str(tmp_path / "y"), shape=(2,), dtype="i1", zarr_format=2,
                            chunk_key_encoding={"name": "default"})
    with pytest.raises(TypeError, match="chunk_key_encoding"):
        zarrpp.create_array(str(tmp_path / "z"), shape=(2,), dtype="i1", chunk_key_encoding=5)


def test_memory_urls_name_a_process_wide_store():
    from zarrpp.storage import forget_memory_store
    zarrpp.create_group("memory://t-urls/sub")
    z = zarrpp.create_array("memory://t-urls/sub/a", shape=(4,), chunks=(2,), dtype="i2")
    z[:] = [1, 2, 3, 4]
    del z
    assert zarrpp.open_array("memory://t-urls/sub/a", mode="r")[:].tolist() == [1, 2, 3, 4]
    assert zarrpp.open_array("memory://t-urls", path="sub/a", mode="r")[:].tolist() == [1, 2, 3, 4]
    g = zarrpp.open_group("memory://t-urls/sub", mode="r")
    assert [name for name, _ in g.members()] == ["a"]
    assert str(zarrpp.storage.make_store("memory://t-urls")) == "memory://t-urls"
    # Another name is another store; a forgotten one starts empty.
    with pytest.raises(Exception):
        zarrpp.open_array("memory://t-urls-other/sub/a", mode="r")
    assert forget_memory_store("t-urls") and not forget_memory_store("t-urls")
    with pytest.raises(Exception):
        zarrpp.open_array("memory://t-urls/sub/a", mode="r")
    forget_memory_store("t-urls-other")
    with pytest.raises(ValueError, match="memory://NAME"):
        zarrpp.open_group("memory://", mode="a")


def test_a_group_created_below_a_consolidated_memory_root_keeps_it_current():
    from zarrpp.storage import forget_memory_store
    root = zarrpp.create_group("memory://t-consolidated", zarr_format=2)
    st = zarrpp.storage.make_store("memory://t-consolidated")
    st.set(".zmetadata", json.dumps({"metadata": {".zgroup": {"zarr_format": 2}},
                                     "zarr_consolidated_format": 1}).encode())
    zarrpp.create_array("memory://t-consolidated/v", shape=(2,), dtype="i1", zarr_format=2)
    assert "v/.zarray" in json.loads(bytes(st.get(".zmetadata")))["metadata"]
    del root
    forget_memory_store("t-consolidated")


def test_a_dict_is_a_store_both_ways_with_zarr_python_2():
    zarr = pytest.importorskip("zarr")  # zarr-python 2.13
    d = {}
    z = zarrpp.create_array(d, shape=(6, 4), chunks=(2, 2), dtype="i4", zarr_format=2, fill_value=0)
    z[:] = np.arange(24).reshape(6, 4)
    z.append(np.full((2, 4), 9, dtype="i4"))
    z.attrs["k"] = 1
    assert all(isinstance(v, bytes) for v in d.values())
    theirs = zarr.open(store=d, mode="r")
    assert theirs.shape == (8, 4) and np.array_equal(theirs[:], z[:]) and dict(theirs.attrs) == {"k": 1}
    # zarr-python 2 writes into a dict; zarrpp reads and changes it; zarr-python 2 reads that.
    d2 = {}
    g = zarr.group(store=d2)
    g.create_dataset("x", data=np.arange(5.0), chunks=(2,))
    mine = zarrpp.open_group(d2, mode="a")["x"]
    assert mine[:].tolist() == [0, 1, 2, 3, 4]
    mine[1:3] = -1
    assert zarr.open_group(store=d2, mode="r")["x"][:].tolist() == [0, -1, -1, 3, 4]


def test_a_dict_holds_v3_hierarchies_that_grow_from_many_threads():
    import threading
    d = {}
    g = zarrpp.create_group(d)
    a = g.create_array("x", shape=(4,), chunks=(2,), dtype="u1")
    a[:] = [1, 2, 3, 4]
    a.prepend(np.array([7, 7], dtype="u1"))
    assert sorted(d) == ["x/c/-1", "x/c/0", "x/c/1", "x/zarr.json", "zarr.json"]
    assert zarrpp.open_group(d, mode="r")["x"][:].tolist() == [7, 7, 1, 2, 3, 4]
    grown = {}
    zarrpp.create_array(grown, shape=(0,), chunks=(4,), dtype="i8")

    def append(i):
        for _ in range(3):
            zarrpp.open_array(grown, mode="a").append(np.full(2, i))
    threads = [threading.Thread(target=append, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    values = zarrpp.open_array(grown, mode="r")[:]
    assert values.shape == (36,) and sorted(np.bincount(values).tolist()) == [6] * 6  # no append lost


def test_other_mappings_are_stores_without_locks_so_growth_is_refused():
    m = PlainMapping()
    z = zarrpp.create_array(m, shape=(4,), chunks=(2,), dtype="i2")
    z[:] = 5
    assert z[:].tolist() == [5] * 4 and isinstance(m.d["c/0"], bytes)
    before = dict(m.d)
    with pytest.raises(RuntimeError, match="cannot lock.*a Python dict"):
        z.append(np.ones(2, dtype="i2"))
    assert m.d == before
    # Read-only mappings, values of other bytes-like types (or with to_bytes()), and values that
    # are no bytes at all.
    import types

    class Buffer:
        def __init__(self, b):
            self.b = b

        def to_bytes(self):
            return self.b
    ro = types.MappingProxyType({k: (Buffer(v) if k.startswith("c/0") else bytearray(v)) for k, v in m.d.items()})
    assert zarrpp.open_array(ro, mode="r")[:].tolist() == [5] * 4
    with pytest.raises(ValueError):
        zarrpp.open_array(ro, mode="r+")[:] = 1
    m.d["c/1"] = 12
    with pytest.raises(Exception, match="value for 'c/1' is not bytes"):
        zarrpp.open_array(m, mode="r")[:]


def test_dict_stores_name_odd_keys_and_let_interrupts_through():
    d = {"junk/\udcff": b"x"}  # a key from an undecodable file name, as zarr-python 2 lists them
    z = zarrpp.create_array(d, path="a", shape=(2,), chunks=(2,), dtype="i1")
    z[:] = 3
    assert sorted(name for name, _ in zarrpp.open_group(d, mode="r").members()) == ["a"]

    class Interrupting(dict):
        def __getitem__(self, k):
            if k.startswith("c/"):
                raise KeyboardInterrupt
            return dict.__getitem__(self, k)

    plain = {"zarr.json": d["a/zarr.json"], "c/0": d["a/c/0"]}
    with pytest.raises(KeyboardInterrupt):
        zarrpp.open_array(Interrupting(plain), mode="r")[:]

    class Failing(dict):
        def __getitem__(self, k):
            if k.startswith("c/"):
                raise OSError("disk on fire")
            return dict.__getitem__(self, k)
    with pytest.raises(RuntimeError, match="reading 'c/0' from mapping \\(Failing\\): OSError: disk on fire"):
        zarrpp.open_array(Failing(plain), mode="r")[:]


def test_conflicting_separators_are_refused():
    for cke, sep in [({"name": "v2", "separator": ".", "configuration": {"separator": "/"}}, None),
                     ({"name": "v2", "separator": "."}, "/")]:
        with pytest.raises(ValueError, match="different separators"):
            zarrpp.create_array({}, shape=(2,), dtype="i1", chunk_key_encoding=cke, dimension_separator=sep)


# ---- store strings, resolved by the core as the CLI resolves them (issue 68) -----------------------
def test_a_zarr_python_2_zip_file_opens_by_path_as_the_cli_opens_it(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "data.zip")
    st = zarr.ZipStore(path, mode="w")
    g = zarr.group(store=st)
    g.create_dataset("a", data=np.arange(6, dtype="i2"), chunks=(4,))
    st.close()
    before = open(path, "rb").read()
    assert zarrpp.open_array(path + "/a", mode="r")[:].tolist() == list(range(6))
    assert zarrpp.open_array(path, path="a", mode="r")[:].tolist() == list(range(6))
    assert [n for n, _ in zarrpp.open_group(path, mode="r").members()] == ["a"]
    assert open(path, "rb").read() == before  # reading changed nothing


def test_dot_dot_after_a_symlink_and_file_urls_mean_what_the_os_says(tmp_path):
    (tmp_path / "real" / "deep").mkdir(parents=True)
    os.symlink("real/deep", tmp_path / "link")
    zarrpp.create_array(str(tmp_path / "b.zarr"), shape=(2,), dtype="i1", fill_value=5)
    zarrpp.create_array(str(tmp_path / "real" / "b.zarr"), shape=(2,), dtype="i1", fill_value=3)
    assert zarrpp.open_array(str(tmp_path / "link" / ".." / "b.zarr"), mode="r")[:].tolist() == [3, 3]
    zarrpp.create_array(str(tmp_path / "link" / ".." / "c.zarr"), shape=(1,), dtype="i1")
    assert (tmp_path / "real" / "c.zarr" / "zarr.json").exists() and not (tmp_path / "c.zarr").exists()
    # file:// URLs are percent-decoded, as the CLI and C++ decode them
    zarrpp.create_array(f"file://{tmp_path}/sp%20ace.zarr", shape=(1,), dtype="i1", fill_value=7)
    assert (tmp_path / "sp ace.zarr" / "zarr.json").exists() and not (tmp_path / "sp%20ace.zarr").exists()
    assert zarrpp.open_array(f"file://{tmp_path}/sp%20ace.zarr", mode="r")[:].tolist() == [7]


def test_a_store_path_of_a_store_path_is_one_folder(tmp_path):
    from zarrpp.storage import MemoryStore, StorePath
    store = MemoryStore()
    g = zarrpp.Group.from_store(StorePath(StorePath(store, "a"), "b"), zarr_format=3)
    g.create_array("x", shape=(1,), dtype="i1")
    assert store.exists("a/b/x/zarr.json")
    assert zarrpp.Group.from_store(StorePath(store), zarr_format=3).store == store
