"""NumPy's structured types in Zarr v2, against zarr-python 2.13 both ways: values, dtype, fill
value, field selection (``z["a"]``, ``fields=``) and field writes, the CLI, Dask and xarray; and
their Zarr v3 form (the struct extension), by conversion and by creation.

zarr-python 2.13 with this NumPy cannot create a structured array with a fill value other than
bytes or None (its ``fill_value == 0`` check raises), so the arrays it writes here take their fill
value as one element's bytes, as it documents for void types.
"""
import json
import os
import subprocess

import numcodecs
import numpy as np
import pytest
import zarr  # python3-zarr: zarr-python 2.13

import zarrpp

CLI = os.path.join(os.environ.get("ZARRPP_INSTALL_TEST_BUILD_DIR", ""), "zarrpp")

STRUCTS = [
    [("a", "<i4"), ("b", "<f8", (2,)), ("c", "S3")],
    [("a", ">i4"), ("n", [("x", ">u2"), ("y", "|u1")], (2,))],
    [("t", "<M8[ns]"), ("u", "<U2"), ("z", "<c8"), ("k", "|b1"), ("d", "<m8[s]")],
    [("only", ">f4", (2, 3))],
    [("x", "|u1"), ("y", "|i1")],
]
COMPRESSORS = [None, numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE), numcodecs.Zstd(3)]
SHAPE, CHUNKS = (5, 4), (2, 3)


def fill_fields(a, rng):
    """Every leaf field of the structured array ``a`` set to small random values of its type."""
    for name in a.dtype.names:
        f = a[name]
        base = a.dtype[name].base
        if base.names is not None:
            fill_fields(f, rng)
        elif base.kind in "US":
            f[...] = rng.integers(0, 100, f.shape).astype(str)
        elif base.kind == "b":
            f[...] = rng.integers(0, 2, f.shape).astype(bool)
        elif base.kind in "mM":
            f[...] = rng.integers(-10**6, 10**6, f.shape).astype(base.newbyteorder("=").str.replace("M8", "m8"))
        else:
            f[...] = rng.integers(-100 if base.kind != "u" else 0, 100, f.shape)


def records(dt, shape, seed):
    a = np.zeros(shape, dtype=dt)
    fill_fields(a, np.random.default_rng(seed))
    return a


def same_records(got, want):
    """The same shape, the same fields and the same values (NaT, NaN and byte order aside)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    native = want.dtype.newbyteorder("=")
    assert got.dtype.newbyteorder("=") == native, (got.dtype, want.dtype)
    return got.astype(native).tobytes() == want.astype(native).tobytes()


def cases():
    for k, descr in enumerate(STRUCTS):
        for j, comp in enumerate(COMPRESSORS):
            yield f"s{k}_{j}_{'CF'[(k + j) % 2]}", np.dtype(descr), comp, "CF"[(k + j) % 2]


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def test_zarrpp_reads_structured_arrays_zarr_python_2_writes(tmp_path):
    for n, (name, dt, comp, order) in enumerate(cases()):
        path = str(tmp_path / name)
        fill = records(dt, (), 1000 + n)
        z = zarr.create(store=path, shape=SHAPE, chunks=CHUNKS, dtype=dt, compressor=comp, order=order,
                        fill_value=fill.tobytes())
        z[:3] = records(dt, (3, 4), n)  # the last chunk row missing: the fill value
        want = z[:]
        a = zarrpp.open_array(path, mode="r")
        assert a.dtype == dt.newbyteorder("="), name  # native byte order, as for every zarrpp type
        assert same_records(a[:], want), name
        assert same_records(a[1:4, 2:], want[1:4, 2:]), name
        assert np.asarray(a.fill_value).tobytes() == np.asarray(z.fill_value).astype(a.dtype).tobytes(), name
        for field in dt.names:  # one field: its values (a subarray field adds its dimensions)
            assert np.array_equal(a[field], want[field]), (name, field)
            assert np.array_equal(a[1:3, field], z[1:3, field]), (name, field)
        if os.path.exists(CLI):
            out = str(tmp_path / (name + ".npy"))
            r = cli("get", path, "--out", out)
            assert r.returncode == 0, (name, r.stderr)
            assert same_records(np.load(out), want), name
            info = json.loads(cli("info", "--json", path).stdout)
            assert info["v2_dtype"] == json.loads(json.dumps(dt.descr)), name


def test_zarr_python_2_reads_structured_arrays_zarrpp_writes(tmp_path):
    for n, (name, dt, comp, order) in enumerate(cases()):
        path, ref = str(tmp_path / name), str(tmp_path / (name + "_ref"))
        fill = records(dt, (), 2000 + n)
        a = zarrpp.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dt, zarr_format=2, compressors=comp,
                                order=order, fill_value=fill[()])
        data = records(dt, (3, 4), n)
        a[:3] = data
        z = zarr.open(path, mode="r")
        assert z.dtype == dt, name  # the fields' byte order as given
        assert same_records(a[:], z[:]), name
        assert same_records(z[:3], data) and same_records(z[3:], np.full((2, 4), fill)), name
        zarr.create(store=ref, shape=SHAPE, chunks=CHUNKS, dtype=dt, order=order, fill_value=fill.tobytes())
        mine, theirs = (json.load(open(os.path.join(p, ".zarray"))) for p in (path, ref))
        assert mine["dtype"] == theirs["dtype"] and mine["fill_value"] == theirs["fill_value"], name


def test_fields_select_and_write_as_in_zarr_python_2(tmp_path):
    dt = np.dtype(STRUCTS[0])
    data = records(dt, (4, 3), 7)
    ours = zarrpp.create_array(str(tmp_path / "ours"), shape=(4, 3), chunks=(3, 2), dtype=dt, zarr_format=2)
    theirs = zarr.create(store=str(tmp_path / "theirs"), shape=(4, 3), chunks=(3, 2), dtype=dt, fill_value=None)
    ours[:], theirs[:] = data, data
    reads = [
        lambda z: z["a"], lambda z: z["b"], lambda z: z[1:3, "c"], lambda z: z["c", 2], lambda z: z[0, 1],
        lambda z: z.get_basic_selection((slice(1, 3), 0), fields="b"),
        lambda z: z.get_basic_selection(fields=["c", "a"]),
        lambda z: z.get_orthogonal_selection(([0, 3], [2, 0]), fields="a"),
        lambda z: z.oindex[[0, 3], :, "a"], lambda z: z.vindex[[0, 3], [1, 2], "c"],
        lambda z: z.get_coordinate_selection(([0, 3], [1, 2]), fields=["a", "c"]),
        lambda z: z.get_mask_selection(np.eye(4, 3, dtype=bool), fields="a"),
    ]
    for k, read in enumerate(reads):
        got, want = read(ours), read(theirs)
        assert type(got) is type(want), k
        assert np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want), (k, got, want)
    writes = [
        lambda z: z.__setitem__("a", 5), lambda z: z.__setitem__((1, "c"), b"zz"),
        lambda z: z.__setitem__((slice(0, 2), "a"), [[1, 2, 3], [4, 5, 6]]),
        lambda z: z.set_basic_selection((3, slice(None)), 9, fields="a"),
        lambda z: z.set_orthogonal_selection(([0, 2], [1]), b"q", fields="c"),
        lambda z: z.set_coordinate_selection(([0, 1], [2, 0]), -4, fields="a"),
        lambda z: z.set_mask_selection(np.eye(4, 3, dtype=bool), 11, fields="a"),
        lambda z: z.__setitem__((2, 2), (1, [2, 3], b"r")),
    ]
    for k, write in enumerate(writes):
        write(ours)
        write(theirs)
        assert same_records(ours[:], theirs[:]), k
    with pytest.raises(IndexError, match="'nope'"):
        ours["nope"]
    with pytest.raises(IndexError, match="no fields"):
        zarrpp.create_array(str(tmp_path / "plain"), shape=(2,), dtype="i4")["a"]
    # No field named (an empty list): whole elements, read and written, as zarr-python 2.
    assert same_records(ours.get_basic_selection(slice(0, 2), fields=[]), theirs.get_basic_selection(slice(0, 2)))
    ours.set_basic_selection(slice(0, 1), data[:1], fields=[])
    theirs.set_basic_selection(slice(0, 1), data[:1], fields=[])
    assert same_records(ours[:], theirs[:])
    out = np.zeros((4, 3), dtype="<i4")
    assert ours.get_basic_selection(fields="a", out=out) is out and np.array_equal(out, theirs["a"])


def test_structured_values_convert_as_numpy_assigns_them(tmp_path):
    dt = np.dtype([("a", "<i2"), ("b", "<f4")])
    z = zarrpp.create_array(str(tmp_path / "z"), shape=(3,), dtype=dt, zarr_format=2, fill_value=(1, 2.5))
    assert z.fill_value == np.array((1, 2.5), dt)[()]
    z[:] = np.array([(1, 2), (3, 4), (5, 6)], dtype=[("a", ">i8"), ("b", ">f8")])  # other field types
    assert z[:].tolist() == [(1, 2.0), (3, 4.0), (5, 6.0)]
    z[0] = (7, 8)
    z[1:] = 0
    assert z[:].tolist() == [(7, 8.0), (0, 0.0), (0, 0.0)]
    with pytest.raises(TypeError, match="fields differ"):
        z[:] = np.zeros(3, dtype=[("x", "<i2"), ("b", "<f4")])


def test_structured_types_zarrpp_cannot_hold_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="field 'b' holds an array of each element, which Zarr v3"):
        zarrpp.create_array(str(tmp_path / "v3"), shape=(2,), dtype=[("a", "<i4"), ("b", "<f8", (2,))])
    assert not os.path.exists(tmp_path / "v3" / "zarr.json")
    with pytest.raises(TypeError, match="padding"):
        zarrpp.create_array(str(tmp_path / "al"), shape=(2,), dtype=np.dtype([("a", "u1"), ("b", "<i4")], align=True),
                            zarr_format=2)
    with pytest.raises(TypeError, match="both byte orders"):
        zarrpp.create_array(str(tmp_path / "mix"), shape=(2,), dtype=[("a", "<i4"), ("b", ">i4")], zarr_format=2)
    with pytest.raises(TypeError, match="title"):
        zarrpp.create_array(str(tmp_path / "ti"), shape=(2,), dtype=[(("T", "a"), "<i4")], zarr_format=2)
    with pytest.raises(TypeError):
        zarrpp.create_array(str(tmp_path / "obj"), shape=(2,), dtype=[("a", "O")], zarr_format=2)
    # An array zarr-python 2 wrote with fields of both byte orders reads as an error naming them.
    mixed = str(tmp_path / "mixed")
    zarr.create(store=mixed, shape=(2,), dtype=[("a", "<i4"), ("b", ">i4")], fill_value=None)
    with pytest.raises(Exception, match="both byte orders"):
        zarrpp.open_array(mixed, mode="r")
    # A tree holding such an array is not converted at all: nothing changes, in place or not.
    tree = str(tmp_path / "tree")
    g = zarr.open_group(tree, mode="w")
    g.create("a", shape=(3,), dtype="<i4")
    g.create("b", shape=(3,), dtype=[("x", "<i4", (2,))], fill_value=None)
    g.create("c", shape=(3,), dtype="<f4")
    listing = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs)
    with pytest.raises(ValueError, match="cannot convert 'b'.*nothing was converted"):
        zarrpp.convert_to_v3(tree)
    assert sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs) == listing
    # Conversion to Zarr v3 is refused and changes nothing.
    path = str(tmp_path / "s")
    z = zarr.create(store=path, shape=(3,), chunks=(2,), dtype=STRUCTS[0], fill_value=None)
    z[:] = records(np.dtype(STRUCTS[0]), (3,), 1)
    before = sorted(os.listdir(path))
    if os.path.exists(CLI):
        r = cli("convert", path, "--zarr-format", "3")
        assert r.returncode != 0 and "field 'b'" in r.stderr
        assert sorted(os.listdir(path)) == before


@pytest.mark.skipif(not os.path.exists(CLI), reason="the CLI is not built")
def test_cli_creates_prints_and_grows_structured_arrays(tmp_path):
    path = str(tmp_path / "c")
    r = cli("create", path, "--shape", "2", "--chunks", "2", "--dtype", '[["a", "<i4"], ["b", "<f8", [2]]]',
            "--zarr-format", "2")
    assert r.returncode == 0, r.stderr
    z = zarrpp.open_array(path)
    z[:] = [(1, [2, 3]), (4, [5.5, 6])]
    assert "".join(cli("get", path).stdout.split()) == "[(1,[2.,3.])(4,[5.5,6.])]"
    r = cli("set", path, "1", "--value", '{"a": -5, "b": [0.5, 1]}')  # a value: the fields by name (or in order)
    assert r.returncode == 0, r.stderr
    assert z[1]["a"] == -5 and np.array_equal(z[1]["b"], [0.5, 1])
    r = cli("set", path, "1", "--value", "[4, [5.5, 6]]")
    assert r.returncode == 0 and cli("info", "--json", path).returncode == 0, r.stderr
    r = cli("set", path, "1", "--value", '{"a": 1}')
    assert r.returncode != 0 and "field 'b'" in r.stderr
    # An S field's value is its text, as a lone S value is (not base64); also for --fill-value.
    s_path = str(tmp_path / "s")
    r = cli("create", s_path, "--shape", "2", "--chunks", "2", "--dtype", '[["a", "<i4"], ["s", "|S4"]]',
            "--fill-value", '[7, "abcd"]', "--zarr-format", "2")
    assert r.returncode == 0, r.stderr
    assert cli("set", s_path, "0", "--value", '{"a": 1, "s": "text"}').returncode == 0
    assert zarr.open(s_path, mode="r")[:].tolist() == [(1, b"text"), (7, b"abcd")]
    r = cli("copy", s_path, str(tmp_path / "s_copy"), "--chunks", "1")  # re-chunked, still Zarr v2
    assert r.returncode == 0, r.stderr
    assert zarr.open(str(tmp_path / "s_copy"), mode="r")[:].tolist() == [(1, b"text"), (7, b"abcd")]
    z.append(np.array([(7, [8, 9])], dtype=z.dtype))
    want = np.array([(1, [2, 3]), (4, [5.5, 6]), (7, [8, 9])], dtype=z.dtype)
    assert same_records(zarr.open(path, mode="r")[:], want)
    r = cli("create", str(tmp_path / "bad"), "--shape", "2", "--chunks", "2", "--dtype", '[["a", ">i4"]]',
            "--zarr-format", "2")
    assert r.returncode != 0 and "big-endian" in r.stderr


def test_dask_and_xarray_read_structured_variables_as_zarr_does(tmp_path):
    xr = pytest.importorskip("xarray")
    import zarrpp.dask
    from zarrpp.xarray import ZarrppBackendEntrypoint, to_zarrpp

    path = str(tmp_path / "ds.zarr")
    g = zarr.open_group(path, mode="w")
    dt = np.dtype(STRUCTS[2])
    v = g.create("v", shape=(5,), chunks=(2,), dtype=dt, fill_value=None)
    v[:4] = records(dt, (4,), 3)
    v.attrs["_ARRAY_DIMENSIONS"] = ["x"]
    zarr.consolidate_metadata(path)
    d = zarrpp.dask.from_zarrpp(zarrpp.open_array(path + "/v", mode="r"))
    assert same_records(d.compute(), zarr.open(path + "/v", mode="r")[:])
    want = xr.open_dataset(path, engine="zarr")
    got = xr.open_dataset(path, engine=ZarrppBackendEntrypoint)
    xr.testing.assert_identical(got, want)
    # Lazily: xarray cannot compare structured dask arrays itself (isnull casts them to bool), so
    # the lazy variables are computed to compare them.
    lazy = xr.open_dataset(path, engine=ZarrppBackendEntrypoint, chunks={})
    assert lazy.v.chunks == xr.open_dataset(path, engine="zarr", chunks={}).v.chunks
    xr.testing.assert_identical(lazy.compute(), want)
    to_zarrpp(got, str(tmp_path / "out.zarr"), zarr_format=2)
    xr.testing.assert_identical(xr.open_dataset(str(tmp_path / "out.zarr"), engine="zarr"), want)


def test_zarr_v3_struct_form_by_conversion_and_creation(tmp_path):
    dt = np.dtype(STRUCTS[2] + [("n", [("x", ">u2"), ("y", "|u1")])]).newbyteorder(">")
    src = str(tmp_path / "v2")
    z = zarr.create(store=src, shape=(5,), chunks=(2,), dtype=dt, fill_value=records(dt, (), 9).tobytes())
    z[:3] = records(dt, (3,), 4)
    zarrpp.convert_to_v3(src, dst=str(tmp_path / "v3"))
    meta = json.load(open(tmp_path / "v3" / "zarr.json"))
    assert meta["data_type"]["name"] == "struct"
    assert [f["name"] for f in meta["data_type"]["configuration"]["fields"]] == list(dt.names)
    assert meta["codecs"][0] == {"name": "bytes", "configuration": {"endian": "big"}}
    assert set(meta["fill_value"]) == set(dt.names) and set(meta["fill_value"]["n"]) == {"x", "y"}
    v3 = zarrpp.open_array(str(tmp_path / "v3"), mode="r+")
    assert same_records(v3[:], z[:]) and v3.fill_value == np.asarray(z.fill_value).astype(v3.dtype)[()]
    assert np.array_equal(v3["n"]["x"], z["n"]["x"])
    v3.append(records(dt, (2,), 5))
    assert same_records(v3[5:], records(dt, (2,), 5))
    # Created as v3 (sharded too), every selection and a field write.
    c = zarrpp.create_array(str(tmp_path / "c"), shape=(6, 4), chunks=(2, 2), shards=(4, 4),
                            dtype=STRUCTS[2], fill_value=records(np.dtype(STRUCTS[2]), (), 1)[()])
    data = records(np.dtype(STRUCTS[2]), (6, 4), 2)
    c[:] = data
    c[1:3, "u"] = "zz"
    data["u"][1:3] = "zz"
    assert same_records(c[:], data) and same_records(c.oindex[[0, 5], [3, 1]], data[np.ix_([0, 5], [3, 1])])
    assert same_records(c.vindex[[0, 5], [3, 1]], data[[0, 5], [3, 1]])
    again = zarrpp.open_array(str(tmp_path / "c"), mode="r")
    assert same_records(again[:], data) and again.fill_value == c.fill_value


def test_raw_fields_of_either_name_take_numpy_void_data(tmp_path):
    """A v3 struct field of the core type r16 holds what NumPy's V2 holds (zarr-python 3 names it
    raw_bytes): writes of NumPy data are taken, as for a lone r16 array."""
    path = tmp_path / "r"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [2],
        "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "a", "data_type": "int32"}, {"name": "r", "data_type": "r16"}]}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": {"a": 0, "r": [0, 0]}, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}))
    z = zarrpp.open_array(str(path))
    data = np.array([(1, b"ab"), (2, b"cd")], dtype=[("a", "<i4"), ("r", "V2")])
    z[:] = data
    assert z[:].tobytes() == data.tobytes()
    v = zarrpp.create_array(str(tmp_path / "v"), shape=(2,), dtype="V3", fill_value=b"xyz")
    assert v.metadata["data_type"] == {"name": "raw_bytes", "configuration": {"length_bytes": 3}}
    assert v.metadata["fill_value"] == "eHl6" and v[0].tobytes() == b"xyz"
