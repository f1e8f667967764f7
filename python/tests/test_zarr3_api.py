"""zarr-python 3 API that issue 38 added, each checked against what zarr-python 3 does (its
documentation and tests, read; docs/zarr_python3_suite.md runs those tests themselves): from_array,
Group.array_values/group_values/get_array/get_group/require_groups/from_store/open, Array.open,
config/with_config/info_complete/compressor, consolidate_metadata/open_consolidated/
use_consolidated, tree, the legacy creation keywords, arguments refused on v3, modes."""
import json
import warnings

import numpy as np
import pytest

import zarrpp as zarr
from zarrpp.errors import (ArrayNotFoundError, ContainsArrayError, ContainsGroupError, GroupNotFoundError,
                           ZarrDeprecationWarning, ZarrRuntimeWarning, ZarrUserWarning)


def test_from_array_keeps_a_zarr_arrays_layout_and_values(tmp_path):
    src = zarr.create_array(tmp_path / "src", shape=(10, 7), chunks=(3, 4), shards=(6, 4), dtype="i4",
                            fill_value=-1, attributes={"units": "K"}, dimension_names=["t", "x"],
                            compressors=zarr.codecs.Zstd(level=5))
    src[:] = np.arange(70).reshape(10, 7)
    out = zarr.from_array(tmp_path / "out", data=src)
    assert (out.chunks, out.shards, out.fill_value, out.dimension_names) == ((3, 4), (6, 4), -1, ("t", "x"))
    assert out.attrs.asdict() == {"units": "K"}
    assert [c.to_dict() for c in out.compressors] == [c.to_dict() for c in src.compressors]
    np.testing.assert_array_equal(out[:], src[:])
    # Given values win; "auto" chooses anew; write_data=False copies the layout only.
    other = zarr.from_array({}, data=src, chunks=(5, 7), shards=None, compressors=None, write_data=False)
    assert (other.chunks, other.shards, other.compressors, other.nchunks_initialized) == ((5, 7), None, (), 0)
    # Across formats the codecs are chosen anew (a v3 codec is no v2 compressor).
    v2 = zarr.from_array({}, data=src, zarr_format=2, shards=None)
    assert v2.zarr_format == 2 and v2.chunks == (3, 4)
    np.testing.assert_array_equal(v2[:], src[:])


def test_from_array_takes_numpy_and_array_likes_and_refuses_overwrite(tmp_path):
    data = np.arange(1000, dtype="u1").reshape(10, 100)
    out = zarr.from_array(tmp_path / "a", data=data)
    assert out.dtype == np.dtype("u1") and out.shards is None
    np.testing.assert_array_equal(out[:], data)
    listed = zarr.from_array({}, data=[[1, 2], [3, 4]])
    np.testing.assert_array_equal(listed[:], [[1, 2], [3, 4]])
    with pytest.raises(ContainsArrayError):
        zarr.from_array(tmp_path / "a", data=data)
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a")[:], data)  # untouched
    src = zarr.create_array({}, data=np.ones((3, 3)), order="F", zarr_format=2)
    with pytest.warns(ZarrUserWarning, match="order"):
        zarr.from_array({}, data=src, zarr_format=3)


def test_group_member_accessors_and_constructors(tmp_path):
    g = zarr.Group.from_store(tmp_path / "g", attributes={"a": 1})
    assert g.attrs["a"] == 1 and g.zarr_format == 3
    g.create_array("x", shape=(2,), dtype="i1")
    sub = g.create_group("sub")
    sub.create_array("y", shape=(3,), dtype="f4")
    assert [a.path for a in g.array_values()] == ["x"]
    assert [s.path for s in g.group_values()] == ["sub"]
    assert g.get_array("sub/y").shape == (3,)
    assert g.get_group("sub").path == "sub"
    with pytest.raises(ArrayNotFoundError):
        g.get_array("nothing")
    with pytest.raises(GroupNotFoundError):
        g.get_group("nothing")
    with pytest.raises(ContainsGroupError):
        g.get_array("sub")
    with pytest.raises(ContainsArrayError):
        g.get_group("x")
    a, b = g.require_groups("sub", "new")
    assert (a.path, b.path) == ("sub", "new")
    assert zarr.Group.open(tmp_path / "g").attrs["a"] == 1
    assert zarr.Array.open(tmp_path / "g" / "x").shape == (2,)
    with pytest.raises(ArrayNotFoundError):
        zarr.Array.open(tmp_path / "none")
    with pytest.raises(ContainsGroupError):
        zarr.Group.from_store(tmp_path / "g")


def test_array_config_with_config_and_runtime_order():
    z = zarr.create_array({}, shape=(4, 5), dtype="i4", config={"order": "F", "write_empty_chunks": True})
    assert z.config.order == "F" and z.config.write_empty_chunks is True and z.order == "F"
    z[:] = np.arange(20).reshape(4, 5)
    assert z[:].flags.f_contiguous
    c = z.with_config({"order": "C"})
    assert c.config.order == "C" and c[:].flags.c_contiguous and c.config.write_empty_chunks is True
    np.testing.assert_array_equal(c[:], z[:])
    with pytest.raises(ValueError, match="read_missing_chunks"):
        z.with_config({"read_missing_chunks": False})
    with pytest.raises(ValueError, match="unknown"):
        zarr.create_array({}, shape=(2,), dtype="i1", config={"colour": "red"})
    with pytest.warns(ZarrRuntimeWarning, match="order"):
        v3 = zarr.create_array({}, shape=(2, 2), dtype="i1", order="F")
    assert v3.order == "C"  # no effect on a v3 array, as in zarr-python 3
    with zarr.config.set({"array.order": "F"}):
        assert zarr.create_array({}, shape=(2, 2), dtype="i1").config.order == "F"


def test_info_complete_and_compressor():
    z = zarr.create_array({}, shape=(8, 8), chunks=(4, 4), dtype="f8", compressors=None)
    z[:4, :4] = 1
    text = str(z.info_complete())
    assert "Chunks Initialized : 1/4" in text and "No. bytes stored" in text
    with pytest.raises(TypeError, match="compressors"):
        z.compressor
    v2 = zarr.create_array({}, shape=(2,), dtype="i1", zarr_format=2, compressors=None)
    assert v2.compressor is None


def test_consolidate_metadata_v3_and_v2(tmp_path):
    root = zarr.create_group(tmp_path / "v3")
    root.create_array("a", shape=(2,), dtype="i1")
    root.create_group("g").create_array("b", shape=(3,), dtype="f4")
    with pytest.raises(ValueError, match="consolidated"):
        zarr.open_consolidated(tmp_path / "v3")
    zarr.consolidate_metadata(tmp_path / "v3")
    doc = json.loads((tmp_path / "v3" / "zarr.json").read_text())
    listing = doc["consolidated_metadata"]
    assert listing["kind"] == "inline" and listing["must_understand"] is False
    assert sorted(listing["metadata"]) == ["a", "g", "g/b"]
    assert listing["metadata"]["g"]["consolidated_metadata"]["metadata"] == {}
    assert listing["metadata"]["g/b"]["shape"] == [3]
    g = zarr.open_consolidated(tmp_path / "v3")
    assert sorted(g.metadata.consolidated_metadata.metadata) == ["a", "g", "g/b"]
    # zarrpp keeps it current from then on.
    g["a"].resize((5,))
    doc = json.loads((tmp_path / "v3" / "zarr.json").read_text())
    assert doc["consolidated_metadata"]["metadata"]["a"]["shape"] == [5]
    v2 = zarr.create_group(tmp_path / "v2", zarr_format=2)
    v2.create_array("c", shape=(4,), dtype="i2", attributes={"k": 1})
    zarr.consolidate_metadata(tmp_path / "v2")
    md = json.loads((tmp_path / "v2" / ".zmetadata").read_text())
    assert md["zarr_consolidated_format"] == 1
    assert {".zgroup", "c/.zarray", "c/.zattrs"} <= set(md["metadata"])
    zarr_python_2 = pytest.importorskip("zarr")
    assert zarr_python_2.open_consolidated(str(tmp_path / "v2"))["c"].shape == (4,)
    with pytest.raises(FileNotFoundError):
        zarr.consolidate_metadata(tmp_path / "none")


def test_tree_function_is_deprecated():
    g = zarr.create_group({})
    g.create_array("x", shape=(1,), dtype="i1")
    with pytest.warns(ZarrDeprecationWarning):
        assert str(zarr.tree(g)) == str(g.tree())


def test_legacy_keywords_warn_and_v3_conflicts_are_refused():
    for name in ("synchronizer", "chunk_store", "cache_attrs", "cache_metadata", "meta_array", "object_codec"):
        with pytest.warns(ZarrRuntimeWarning, match=name):
            zarr.create(shape=(2,), dtype="i1", **{name: object()})
    with pytest.warns(ZarrRuntimeWarning, match="write_empty_chunks"):
        z = zarr.create(shape=(2,), dtype="i1", write_empty_chunks=True)
    assert z.config.write_empty_chunks is True
    with pytest.warns(ZarrRuntimeWarning, match="write_empty_chunks"):
        zarr.array(np.arange(3), write_empty_chunks=False)
    for kwargs in ({"chunk_shape": (1,), "chunks": (2,)}, {"dimension_separator": "/"}, {"filters": []},
                   {"compressor": "blosc"}):
        with pytest.raises(ValueError):
            zarr.create(shape=(4,), dtype="i1", zarr_format=3, **kwargs)
    a = zarr.create(shape=(4,), dtype="i1", chunk_key_encoding=("v2", "."))
    assert a.metadata.chunk_key_encoding["name"] == "v2"


def test_modes_open_w_minus_without_shape_and_load_of_nothing(tmp_path):
    g = zarr.open(store=tmp_path / "new", mode="w-")
    assert isinstance(g, zarr.Group)
    with pytest.raises(FileExistsError):
        zarr.open(store=tmp_path / "new", mode="w-")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "keep.txt").write_text("mine")
    with pytest.raises(NotImplementedError):
        zarr.load(zarr.storage.LocalStore(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError):
        zarr.load(zarr.storage.LocalStore(tmp_path / "empty"))
    assert sorted(p.name for p in (tmp_path / "empty").iterdir()) == ["keep.txt"]  # nothing created


def test_stores_open_asynchronously_and_zip_mode_r_reads(tmp_path):
    import asyncio
    store = asyncio.run(zarr.storage.LocalStore.open(str(tmp_path / "s")))
    assert isinstance(store, zarr.storage.LocalStore)
    with zarr.storage.ZipStore(tmp_path / "d.zip", mode="w") as zs:
        zarr.save(zs, np.arange(4))
    with zarr.storage.ZipStore(tmp_path / "d.zip", mode="r", read_only=False) as zs:
        np.testing.assert_array_equal(zarr.load(zs), np.arange(4))
        with pytest.raises(ValueError):
            zarr.save(zs, np.arange(2), path="other")
    with pytest.raises(ValueError):
        zarr.storage.ZipStore(tmp_path / "d.zip", mode="a", read_only=True)


def test_save_group_refuses_keywords_that_are_not_arrays():
    with pytest.raises(TypeError, match="mode"):
        zarr.save_group({}, np.arange(2), mode="w")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zarr.save_group({}, a=np.arange(2))


def test_block_slices_starting_outside_the_grid_raise_index_error():
    z = zarr.create_array({}, data=np.arange(60).reshape(12, 5), chunks=(5, 2))  # 3 x 3 blocks
    for sel in [(slice(15, 20), slice(None)), (slice(-4, None),), (Ellipsis, slice(4, 10)), (slice(3, None),)]:
        with pytest.raises(IndexError, match="block slice start"):
            z.blocks[sel]
        with pytest.raises(IndexError):
            z.blocks[sel] = 1
    np.testing.assert_array_equal(z[:], np.arange(60).reshape(12, 5))  # nothing written
    assert z.blocks[1:20].shape == (7, 5)  # the stop is clamped, as in zarr-python and NumPy
    with pytest.raises(IndexError):  # starting at the end is out of bounds too, as in zarr-python
        z.blocks[3:]
    with pytest.raises(IndexError):
        z.blocks[0:3:2]


def test_from_array_refuses_to_overwrite_its_source_and_undoes_a_failed_copy(tmp_path):
    src = zarr.create_array(tmp_path / "a", data=np.arange(20).reshape(4, 5), chunks=(2, 5))
    for target in (tmp_path / "a", tmp_path):  # the same node; a folder holding it
        with pytest.raises(ValueError, match="same node or one lies inside"):
            zarr.from_array(target, data=src, overwrite=True)
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a")[:], np.arange(20).reshape(4, 5))

    class Failing:
        shape, dtype = (6, 5), np.dtype("i8")

        def __getitem__(self, sel):
            raise OSError("source went away")
    with pytest.raises(OSError, match="went away"):
        zarr.from_array(tmp_path / "b", data=Failing(), chunks=(2, 5))
    assert not (tmp_path / "b" / "zarr.json").exists()  # the new array is removed again


def test_codec_names_as_strings_and_the_shape_setter():
    z = zarr.create_array({}, shape=(4,), dtype="i4", compressors="blosc")
    assert [c.name for c in z.compressors] == ["blosc"]
    z = zarr.create_array({}, shape=(4,), dtype="i4", compressors=["zstd", "crc32c"])
    assert [c.name for c in z.compressors] == ["zstd", "crc32c"]
    v2 = zarr.create(shape=(4,), dtype="i4", compressor="blosc", zarr_format=2)
    assert v2.metadata["compressor"]["id"] == "blosc"
    with pytest.raises(ValueError, match="unknown codec"):
        zarr.create_array({}, shape=(4,), dtype="i4", compressors="no-such-codec")
    with pytest.raises(ValueError):
        zarr.create(shape=(4,), dtype="i4", compressor="blosc", zarr_format=3)
    z.shape = (6,)
    assert z.shape == (6,) and z[4:].tolist() == [0, 0]


def test_auto_shards_follow_the_target_shard_size_setting():
    assert zarr.create_array({}, shape=(1000, 10), chunks=(100, 10), dtype="u1", shards="auto").shards == (200, 10)
    with zarr.config.set({"array.target_shard_size_bytes": 256}):
        z = zarr.create_array({}, shape=(100, 100, 100), chunks=(2, 2, 2), dtype="i4", shards="auto")
    assert z.shards == (4, 4, 4)


def test_create_hierarchy_and_array_from_dict(tmp_path):
    template = zarr.create_array({}, shape=(4, 3), chunks=(2, 3), dtype="i2", fill_value=7)
    nodes = {"": {"node_type": "group", "zarr_format": 3, "attributes": {"root": True}},
             "a/b/x": template.metadata, "a/c": {"node_type": "group", "zarr_format": 3}}
    made = dict(zarr.create_hierarchy(store=tmp_path / "h", nodes=nodes))
    assert sorted(made) == ["", "a", "a/b", "a/b/x", "a/c"]  # the groups between are made too
    g = zarr.open_group(tmp_path / "h")
    assert g.attrs["root"] is True and g["a/b/x"].shape == (4, 3) and g["a/b/x"][0, 0] == 7
    # An existing node: nothing is written.
    with pytest.raises(ContainsArrayError):
        zarr.create_hierarchy(store=tmp_path / "h",
                              nodes={"new": {"node_type": "group", "zarr_format": 3}, "a/b/x": template.metadata})
    assert "new" not in zarr.open_group(tmp_path / "h")
    with pytest.raises(ContainsArrayError):
        zarr.create_hierarchy(store=tmp_path / "h", nodes={"a/b/x/y": template.metadata})
    # Array.from_dict: the document, validated and written; refused where a node is.
    a = zarr.Array.from_dict(zarr.storage.StorePath(zarr.storage.MemoryStore()), dict(template.metadata))
    assert a.shape == (4, 3) and a.fill_value == 7
    with pytest.raises(ValueError):
        zarr.Array.from_dict({}, {**template.metadata, "storage_transformers": [{"name": "x"}]})
    with pytest.raises(ValueError, match="zarr_format"):
        zarr.Array.from_dict({}, {**template.metadata, "zarr_format": 4})
    v2 = zarr.Array.from_dict({}, {"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "<u1", "fill_value": 0,
                                   "order": "C", "compressor": None, "filters": None, "attributes": {"k": 1}})
    assert v2.zarr_format == 2 and v2.attrs["k"] == 1
    with pytest.raises(ContainsArrayError):
        zarr.Array.from_dict(tmp_path / "h" / "a" / "b" / "x", dict(template.metadata))


def test_group_create_create_hierarchy_and_codec_enums():
    g = zarr.create_group({}).create_group("g")
    a = g.create("x", shape=(2,), dtype="i1")
    assert a.path == "g/x" and g.synchronizer is None
    made = dict(g.create_hierarchy({"s/t": {"node_type": "group", "zarr_format": 3}}))
    assert sorted(made) == ["s", "s/t"] and made["s/t"].path == "g/s/t"
    big = zarr.create_array({}, shape=(2,), dtype=">i4", serializer=zarr.codecs.Bytes(endian=zarr.codecs.Endian.big))
    big[:] = [1, 2]
    assert big.serializer.to_dict()["configuration"]["endian"] == "big" and big[:].tolist() == [1, 2]
    assert zarr.codecs.ShardingCodecIndexLocation.end == "end"


def test_red_team_findings_from_array_and_consolidated(tmp_path):
    # A v2 array stored in order "F" copies (its order is no transpose filter to keep).
    f = zarr.create_array({}, data=np.arange(12.0).reshape(3, 4), order="F", zarr_format=2)
    copy = zarr.from_array({}, data=f)
    assert copy.order == "F" and copy.filters == f.filters and copy[:].tolist() == f[:].tolist()
    # zarr-python 2's object arrays have fill value 0: a copy takes the type's empty value.
    import numcodecs
    zarr_python_2 = pytest.importorskip("zarr")
    z2 = zarr_python_2.open(str(tmp_path / "s"), mode="w", shape=(3,), chunks=(3,), dtype=object,
                            object_codec=numcodecs.VLenUTF8())
    z2[:2] = ["a", "bb"]
    assert zarr.from_array({}, data=zarr.open_array(tmp_path / "s"))[:2].tolist() == ["a", "bb"]
    # A large band along the first dimension is copied a shard at a time (bounded memory).
    seen = []

    class Tracking:
        shape, dtype = (1, 64, 40000), np.dtype("f8")

        def __getitem__(self, sel):
            seen.append(sel)
            return np.ones(tuple(s.stop - s.start for s in sel))
    import zarrpp._from_array as fa
    old, fa._SLAB_BYTES = fa._SLAB_BYTES, 1 << 20
    try:
        out = zarr.from_array({}, data=Tracking(), chunks=(1, 64, 1000))
    finally:
        fa._SLAB_BYTES = old
    assert len(seen) == 40 and out[0, 0, -1] == 1
    # A group replaced under a consolidated parent takes its members out of the listing.
    for fmt in (2, 3):
        g = zarr.create_group(tmp_path / f"c{fmt}", zarr_format=fmt)
        g.create_group("sub").create_array("b", data=np.arange(3))
        zarr.consolidate_metadata(tmp_path / f"c{fmt}")
        g.create_group("sub", overwrite=True)
        assert "sub/b" not in zarr.open_group(tmp_path / f"c{fmt}")
        if fmt == 2:
            listed = json.loads((tmp_path / "c2" / ".zmetadata").read_text())["metadata"]
            assert not any(k.startswith("sub/b") for k in listed)
        else:
            listed = json.loads((tmp_path / "c3" / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
            assert sorted(listed) == ["sub"]
    # use_consolidated creates nothing, and a wrong zarr_format is refused.
    with pytest.raises(FileNotFoundError):
        zarr.open_consolidated(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()
    with pytest.raises(ValueError):
        zarr.open_consolidated(tmp_path / "c3", mode="w")
    assert "sub" in zarr.open_group(tmp_path / "c3")
    with pytest.raises(ValueError, match="Zarr v3 group, not Zarr v2"):
        zarr.open_group(tmp_path / "c3", mode="r", zarr_format=2)
    with pytest.warns(ZarrRuntimeWarning, match="synchronizer"):
        zarr.array(np.arange(3), synchronizer=object())
    with pytest.raises(TypeError):
        zarr.open(tmp_path / "w", mode="w-", dtype="i4")
    with pytest.raises(ValueError):
        zarr.create(shape=(2,), dtype="i1", zarr_format=3, compressor=None)
    assert zarr.ArrayConfig.from_dict({"order": "F"}).order == "F"


def test_error_classes_codec_aliases_and_the_remaining_names(tmp_path):
    e = zarr.errors
    for cls in (e.VindexInvalidSelectionError, e.NegativeStepError, e.BoundsCheckError, e.ArrayIndexError):
        assert issubclass(cls, IndexError)
    for cls in (e.BaseZarrError, e.ContainsArrayAndGroupError, e.MetadataValidationError, e.UnknownCodecError,
                e.NodeTypeValidationError, e.ChunkNotFoundError, e.DataTypeValidationError):
        assert issubclass(cls, ValueError)
    assert issubclass(e.UnstableSpecificationWarning, e.ZarrFutureWarning)
    assert issubclass(e.ZarrFutureWarning, FutureWarning)
    assert zarr.storage.StoreLike is not None
    z = zarr.create_array(tmp_path / "a", shape=(4, 4), chunks=(2, 2), dtype="f4",
                          filters=[zarr.codecs.TransposeCodec(order=(1, 0))],
                          compressors=[zarr.codecs.GzipCodec(), zarr.codecs.Crc32cCodec()])
    z.set_block_selection((1, 0), np.ones((2, 2)))
    assert z[2:, :2].tolist() == [[1, 1], [1, 1]] and z[:2].sum() == 0
    assert z.nbytes_stored() > 0
    like = zarr.open_like(z, tmp_path / "b")
    assert like.shape == (4, 4) and like.chunks == (2, 2)


def test_members_of_a_deep_hierarchy_without_recursion_limits():
    g = root = zarr.create_group({})
    for _ in range(1100):
        g = g.create_group("g")
    members = root.members(max_depth=None)
    assert len(members) == 1100 and members[-1][0] == "/".join(["g"] * 1100)
    assert root.nmembers(max_depth=2) == 3


def test_from_array_over_an_existing_array_says_how_far_a_failed_copy_got(tmp_path):
    zarr.create_array(tmp_path / "old", data=np.arange(4))

    class Failing:
        shape, dtype = (4,), np.dtype("i8")

        def __getitem__(self, sel):
            raise OSError("source went away")
    with pytest.raises(OSError) as e:
        zarr.from_array(tmp_path / "old", data=Failing(), overwrite=True)
    assert any("replaced the one there" in n for n in getattr(e.value, "__notes__", []))


@pytest.mark.parametrize("mode", ["r", "r+", "a", "w", "w-", "x"])
def test_open_modes_are_read_once_by_the_core(mode, tmp_path):
    """Issue 69: open_group and open_array read zarr-python's modes through the core's
    decide_open: for nothing at the path, the kind asked for, and the other kind, each mode opens,
    creates, replaces or raises zarr-python's error."""
    from zarrpp.errors import NodeTypeValidationError
    store = str(tmp_path / "s")
    zarr.open_group(store, mode="w").create_group("g")
    zarr.create_array(store, name="a", shape=(2,), dtype="i1", fill_value=3)
    expect = {  # (nothing there, a group there, an array there) for open_group
        "r": (GroupNotFoundError, "open", NodeTypeValidationError),
        "r+": (GroupNotFoundError, "open", NodeTypeValidationError),
        "a": ("create", "open", ContainsArrayError),
        "w": ("create", "create", "create"),
        "w-": ("create", ContainsGroupError, ContainsArrayError),
        "x": ("create", ContainsGroupError, ContainsArrayError),
    }[mode]
    for path, want in zip((f"new_{mode}", "g", "a"), expect):
        if isinstance(want, type):
            with pytest.raises(want):
                zarr.open_group(store, path=path, mode=mode)
        else:
            g = zarr.open_group(store, path=path, mode=mode)
            assert isinstance(g, zarr.Group) and g.read_only == (mode == "r")
    if mode in ("a", "w-", "x"):  # open_array with shape: the array's side of the table
        zarr.create_array(store, name="b", shape=(2,), dtype="i1", fill_value=3)
        zarr.open_group(store, path="h", mode="w")
        if mode == "a":
            assert zarr.open_array(store, path="b", mode=mode, shape=(5,), dtype="i1")[:].tolist() == [3, 3]
        else:
            with pytest.raises(ContainsArrayError):
                zarr.open_array(store, path="b", mode=mode, shape=(5,), dtype="i1")
        with pytest.raises(ContainsGroupError):
            zarr.open_array(store, path="h", mode=mode, shape=(5,), dtype="i1")
        assert zarr.open_array(store, path=f"c_{mode}", mode=mode, shape=(5,), dtype="i1").shape == (5,)
