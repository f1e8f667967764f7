"""zarr-python 3 compatibility (issue: the pip package): behaviour a zarr-python 3 user relies on,
and the bugs such a user found, each pinned down. python/README.md's compatibility table points
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
SELECTIONS = [([0, 2], [1, 3], Ellipsis), (Ellipsis, [0, 2], [1, 3]), (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]),
              ([0, 1], slice(1, 3), [2, 3]), ([[0, 1], [2, 3]], 1), (np.array([True, False, True, True]), [0, 1, 2], 3),
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
