"""Rectilinear chunk grids from Python, Dask and xarray: chunks=[[...]] and shards=[[...]] as
zarr-python 3.3 takes them (behind ``array.rectilinear_chunks``), every selection against NumPy,
resize/append as zarr-python, ``.chunks`` refusing, Dask's irregular blocks written as they are."""
import json

import numpy as np
import pytest

import dask.array as da
import xarray as xr

import zarrpp
import zarrpp.dask as zd
import zarrpp.xarray as zx
from zarrpp.xarray import ZarrppBackendEntrypoint


@pytest.fixture
def rect_on():
    with zarrpp.config.set({"array.rectilinear_chunks": True}):
        yield


def _grid(z):
    return z.metadata["chunk_grid"]


def test_chunk_sizes_per_dimension_make_a_rectilinear_grid(rect_on):
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(60, 100), chunks=[[10, 20, 30], [50, 50]],
                            dtype="int32")
    assert _grid(z) == {"name": "rectilinear",
                        "configuration": {"kind": "inline", "chunk_shapes": [[10, 20, 30], [[50, 2]]]}}
    assert z.write_chunk_sizes == z.read_chunk_sizes == ((10, 20, 30), (50, 50))
    assert z.nchunks == 6
    with pytest.raises(NotImplementedError, match="read_chunk_sizes"):
        z.chunks
    assert z.shards is None
    assert "Chunk shape : <variable>" in repr(z.info)


def test_every_selection_matches_numpy(rect_on):
    rng = np.random.default_rng(1)
    a = rng.integers(-100, 100, (30, 17)).astype("i4")
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=a.shape, chunks=[[1, 7, 2, 20], [5, 5, 7]],
                            dtype="i4", fill_value=-1)
    z[...] = a
    np.testing.assert_array_equal(z[...], a)
    for sel in [np.s_[3:25:3, 4:16], np.s_[-1], np.s_[::-2, 2], np.s_[7:9, ::4]]:
        np.testing.assert_array_equal(z[sel], a[sel])
    rows, cols = [0, 8, 9, 29, 8], [16, 0, 5, 10, 9]
    np.testing.assert_array_equal(z.vindex[rows, cols], a[rows, cols])
    np.testing.assert_array_equal(z.oindex[[1, 9, 10], [4, 5, 11]], a[np.ix_([1, 9, 10], [4, 5, 11])])
    mask = a > 50
    np.testing.assert_array_equal(z.vindex[mask], a[mask])
    np.testing.assert_array_equal(z.blocks[1, 2], a[1:8, 10:17])
    np.testing.assert_array_equal(z.blocks[-1], a[10:30])
    z.blocks[2, 0] = 7
    a[8:10, 0:5] = 7
    z.vindex[rows, cols] = -5
    a[rows, cols] = -5
    np.testing.assert_array_equal(zarrpp.open_array(z.store)[...], a)


def test_shards_per_dimension_with_regular_inner_chunks(rect_on):
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(120, 100), chunks=(10, 10),
                            shards=[[60, 40, 20], [50, 50]], dtype="int32")
    a = np.arange(12000, dtype="int32").reshape(120, 100)
    z[:] = a
    np.testing.assert_array_equal(z[50:70, 40:60], a[50:70, 40:60])
    assert z.write_chunk_sizes == ((60, 40, 20), (50, 50))
    assert z.read_chunk_sizes == ((10,) * 12, (10,) * 10)
    with pytest.raises(NotImplementedError, match="read_chunk_sizes"):
        z.chunks  # zarr-python raises for any rectilinear grid
    with pytest.raises(NotImplementedError, match="write_chunk_sizes"):
        z.shards
    assert "Chunk shape : (10, 10)" in repr(z.info) and "Shard shape : <variable>" in repr(z.info)
    assert sorted(z.store.list_prefix("c/")) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1", "c/2/0", "c/2/1"]
    with pytest.raises(ValueError, match="not divisible"):
        zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(60,), chunks=(10,), shards=[[20, 35, 5]],
                            dtype="i4")


def test_resize_and_append_as_zarr_python(rect_on):
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(30,), chunks=[[10, 20]], dtype="float64")
    z[:] = np.arange(30.0)
    z.resize((50,))
    assert z.write_chunk_sizes == ((10, 20, 20),)
    z.append(np.arange(10.0))
    assert z.shape == (60,) and z.write_chunk_sizes == ((10, 20, 20, 10),)
    np.testing.assert_array_equal(z[28:32], [28, 29, 0, 0])
    z.resize((15,))  # the sizes stay; chunks past the end go
    assert z.write_chunk_sizes == ((10, 5),)
    assert sorted(z.store.list_prefix("c/")) == ["c/0", "c/1"]
    assert _grid(z)["configuration"]["chunk_shapes"] == [[10, [20, 2], 10]]


def test_the_setting_is_needed_for_irregular_sizes_only():
    with pytest.raises(ValueError, match="experimental and disabled by default"):
        zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(30,), chunks=[[10, 20]], dtype="i4")
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(25,), chunks=[[10, 10, 5]], dtype="i4")
    assert _grid(z) == {"name": "regular", "configuration": {"chunk_shape": [10]}} and z.chunks == (10,)


def test_bad_sizes_are_refused_and_nothing_is_created(rect_on):
    store = zarrpp.storage.MemoryStore()
    cases = [(dict(chunks=[[10, 20]]), ValueError, "add up to 30"),
             (dict(chunks=[[10, 50, 5]]), ValueError, "the last passing its end by less than its size"),
             (dict(chunks=[[0, 60]]), ValueError, ">= 1"),
             (dict(chunks=[[[10, 6]]]), TypeError, "integer"),
             (dict(chunks=[[10, 50], [5]]), ValueError, "dimensions"),
             (dict(chunks=[[10, 50]], shards=(60,)), ValueError, "Use rectilinear shards"),
             (dict(chunks=[[10, 50]], zarr_format=2), Exception, "Zarr format 2"),
             (dict(chunks=[[10, 50]], lower_bound=(-3,)), Exception, "lower bound")]
    for kwargs, error, says in cases:
        with pytest.raises(error, match=says):
            zarrpp.create_array(store=store, shape=(60,), dtype="i4", **kwargs)
    assert list(store.list_prefix("")) == []


def test_a_foreign_document_is_read_as_its_sizes(tmp_path):
    """zarr-python's packages/zarr-metadata fixture: run-length pairs, sizes past nothing."""
    (tmp_path / "a").mkdir()
    doc = {"zarr_format": 3, "node_type": "array", "shape": [60, 30], "data_type": "int16",
           "chunk_grid": {"name": "rectilinear",
                          "configuration": {"kind": "inline", "chunk_shapes": [[[10, 5], 5, 5], [15, 15]]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": {}}
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    z = zarrpp.open_array(str(tmp_path / "a"))
    assert z.write_chunk_sizes == ((10, 10, 10, 10, 10, 5, 5), (15, 15))
    z[...] = np.arange(1800, dtype="i2").reshape(60, 30)
    assert (tmp_path / "a" / "c" / "6" / "1").stat().st_size == 5 * 15 * 2
    raw = np.frombuffer((tmp_path / "a" / "c" / "5" / "0").read_bytes(), "<i2").reshape(5, 15)
    np.testing.assert_array_equal(raw, np.arange(1800, dtype="i2").reshape(60, 30)[50:55, :15])


def test_from_array_keeps_the_grid():
    with zarrpp.config.set({"array.rectilinear_chunks": True}):
        src = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(30, 4), chunks=[[3, 27], [4]],
                                  dtype="f8")
    src[...] = np.arange(120.0).reshape(30, 4)
    out = zarrpp.from_array(zarrpp.storage.MemoryStore(), data=src)  # "keep": no setting needed
    assert out.write_chunk_sizes == ((3, 27), (4,))
    np.testing.assert_array_equal(out[...], src[...])


def _graph_has_rechunk(obj):
    return any("rechunk" in str(k) for k in dict(obj.__dask_graph__()))


def test_dask_irregular_chunks_round_trip_without_a_rechunk(tmp_path):
    x = da.from_array(np.arange(80).reshape(10, 8), chunks=((3, 5, 2), (4, 4)))
    path = [str(tmp_path / f"a{i}") for i in range(3)]
    stored = zd.to_zarrpp(x, path[0], rectilinear_chunks=True, compute=False)
    assert not _graph_has_rechunk(stored)
    stored.compute()
    z = zarrpp.open_array(path[0])
    assert z.write_chunk_sizes == ((3, 5, 2), (4, 4))
    y = zd.from_zarrpp(z)
    assert y.chunks == ((3, 5, 2), (4, 4))
    np.testing.assert_array_equal(y.compute(), x.compute())
    # the setting does it too; without either, the blocks are rechunked onto a regular grid
    with zarrpp.config.set({"array.rectilinear_chunks": True}):
        assert zd.to_zarrpp(x, path[1]).write_chunk_sizes == ((3, 5, 2), (4, 4))
    # empty blocks are left out of the sizes
    e = da.from_array(np.arange(30), chunks=((10, 0, 20),))
    assert zd.to_zarrpp(e, str(tmp_path / "e"), rectilinear_chunks=True).write_chunk_sizes == ((10, 20),)
    stored = zd.to_zarrpp(x, path[2], compute=False)
    assert _graph_has_rechunk(stored)
    stored.compute()
    assert zarrpp.open_array(path[2]).chunks == (5, 4)


def test_xarray_writes_and_opens_irregular_chunks(tmp_path, rect_on):
    x = da.from_array(np.arange(80.0).reshape(10, 8), chunks=((3, 5, 2), (4, 4)))
    zx.to_zarrpp(xr.Dataset({"v": (("t", "y"), x)}), str(tmp_path / "d.zarr"), mode="w")
    assert zarrpp.open_group(str(tmp_path / "d.zarr"))["v"].write_chunk_sizes == ((3, 5, 2), (4, 4))
    back = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrppBackendEntrypoint, chunks={})
    assert back.v.chunks == ((3, 5, 2), (4, 4))
    np.testing.assert_array_equal(back.v.values, x.compute())


def test_copies_and_likes_repeat_the_grid_even_after_shrinking(rect_on):
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(12, 4), chunks=(3, 2), shards=[[6, 3, 3], [4]],
                            dtype="i4")
    z[...] = np.arange(48, dtype="i4").reshape(12, 4)
    z.append(np.ones((1, 4), "i4"))  # a new shard rounded up to whole inner chunks
    assert _grid(z)["configuration"]["chunk_shapes"] == [[6, [3, 3]], [4]]
    z.resize((10, 4))  # the last shard now passes the end
    assert z.cdata_shape == (4, 2)
    with zarrpp.config.set({"array.rectilinear_chunks": False}):  # the source's grid needs no setting
        c = zarrpp.from_array(zarrpp.storage.MemoryStore(), data=z)
        like = zarrpp.zeros_like(z, store=zarrpp.storage.MemoryStore())
    assert c.write_chunk_sizes == like.write_chunk_sizes == ((6, 3, 1), (4,))
    np.testing.assert_array_equal(c[...], z[...])


def test_from_array_copies_a_rectilinear_array_in_bounded_pieces(monkeypatch, rect_on):
    import zarrpp._from_array as fa
    monkeypatch.setattr(fa, "_SLAB_BYTES", 1000)  # a row of chunks is larger than a slab
    src = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(7, 50), chunks=[[2, 5], [10, 20, 20]],
                              dtype="f8")
    a = np.random.default_rng(0).normal(size=(7, 50))
    src[...] = a
    writes = []
    original = zarrpp.Array.__setitem__
    monkeypatch.setattr(zarrpp.Array, "__setitem__", lambda self, k, v: (writes.append(k), original(self, k, v)))
    out = zarrpp.from_array(zarrpp.storage.MemoryStore(), data=src)
    np.testing.assert_array_equal(out[...], a)
    # the first row of chunks (800 bytes) fits a slab; the second (2000) goes one chunk at a time
    assert writes == [slice(0, 2), (slice(2, 7), slice(0, 10)), (slice(2, 7), slice(10, 30)),
                      (slice(2, 7), slice(30, 50))]


def test_user_input_errors_are_plain(rect_on):
    store = zarrpp.storage.MemoryStore()
    with pytest.raises(ValueError, match="beyond"):
        zarrpp.create_array(store=store, shape=(60, 4), chunks=[[10**20], [4]], dtype="i4")
    z = zarrpp.create_array(store=store, shape=(30,), chunks=[(n for n in (10, 20))], dtype="i4")
    assert z.write_chunk_sizes == ((10, 20),)
    with pytest.raises(ValueError, match="chunk_size -2 must be >= 1"):
        z.append(np.zeros(3, "i4"), chunk_size=-2)


def test_indices_outside_raise_zarr_pythons_bounds_check_error(rect_on):
    z = zarrpp.create_array(store=zarrpp.storage.MemoryStore(), shape=(30,), chunks=[[10, 20]], dtype="i4")
    with pytest.raises(zarrpp.errors.BoundsCheckError):  # an IndexError, as zarr-python's
        z.get_block_selection((2,))
    with pytest.raises(IndexError):
        z[30]
