"""The Zarr v3 data types zarr-python 3 writes for NumPy's dates, durations, fixed-length text and
bytes, raw bytes and structured types, in one fixture set.

zarr-python 3 cannot run here, so each fixture is built by hand from the zarr-extensions documents
(``data-types/``) and zarr-python 3.3's ``src/zarr/core/dtype/``, as ``docs/data_types.md``
records them: a literal ``zarr.json`` and chunks of NumPy's bytes (the ``bytes`` codec's little
endian), one chunk left missing so it reads as the fill value. Every fixture is read by zarrpp,
Dask and xarray; written again by zarrpp byte for byte; grown, sharded and selected; converted to
Zarr v2 (read there by zarr-python 2.13) and back.
"""
import json
import os
import re
import subprocess

import numpy as np
import pytest
import zarr  # python3-zarr: zarr-python 2.13

import zarrpp

CLI = os.path.join(os.environ.get("ZARRPP_INSTALL_TEST_BUILD_DIR", ""), "zarrpp")
NAT = -(2**63)
STRUCT = np.dtype([("a", "<i4"), ("b", "<f8")])

# (id, data_type, fill_value as zarr.json states it, the NumPy dtype, five values, the fill as NumPy)
FORMS = [
    ("datetime64", {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}, NAT,
     "<M8[s]", np.array(["2020-01-01T00:00:00", "NaT", "1969-12-31T23:59:59", "2262-04-11", "1677-09-22"],
                        dtype="M8[s]"), np.datetime64("NaT", "s")),
    ("datetime64-scaled", {"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 10}}, 5,
     "<M8[10ms]", np.array([0, 1, -1, 2**36, -(2**36)]).astype("M8[10ms]"), np.array(5).astype("M8[10ms]")),
    ("timedelta64", {"name": "numpy.timedelta64", "configuration": {"unit": "us", "scale_factor": 1}}, 7,
     "<m8[us]", np.array([1, -2, 3, NAT, 2**50]).astype("m8[us]"), np.timedelta64(7, "us")),
    ("fixed_length_utf32", {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}}, "é",
     "<U3", np.array(["abc", "", "ü€", "x", "\U0001f600"], dtype="<U3"), np.str_("é")),
    ("null_terminated_bytes", {"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}}, "YWI=",
     "|S4", np.array([b"abcd", b"", b"\x00\x01", b"z", b"\xff"], dtype="S4"), np.bytes_(b"ab")),
    ("raw_bytes", {"name": "raw_bytes", "configuration": {"length_bytes": 3}}, "AAEC",
     "|V3", np.array([b"abc", b"\x00\x00\x00", b"\xff\xfe\xfd", b"xyz", b"\x01\x02\x03"], dtype="V3"),
     np.void(b"\x00\x01\x02")),
    ("struct", {"name": "struct", "configuration": {
        "fields": [{"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"}]}},
     {"a": 1, "b": 2.5}, STRUCT, np.array([(1, 0.5), (-2, np.inf), (3, -0.0), (4, 1e300), (5, -7.25)], dtype=STRUCT),
     np.array((1, 2.5), dtype=STRUCT)[()]),
]
IDS = [f[0] for f in FORMS]
ENDIAN = [{"name": "bytes", "configuration": {"endian": "little"}}]


def fixture(tmp_path, form, *, fill=None, name=None):
    """Writes a fixture array: five elements in chunks of two, chunk c/1 missing."""
    _, data_type, fill_json, dtype, values, _ = form
    path = tmp_path / (name or form[0])
    (path / "c").mkdir(parents=True)
    # zarr-python 3 states no byte order for types without one (S<n>, V<n>).
    one_byte = np.dtype(dtype).kind in "SV" and np.dtype(dtype).names is None
    doc = {"zarr_format": 3, "node_type": "array", "shape": [5], "data_type": data_type,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": fill_json if fill is None else fill,
           "codecs": [{"name": "bytes"}] if one_byte else ENDIAN, "attributes": {}}
    (path / "zarr.json").write_text(json.dumps(doc))
    pad = np.array([values[0]], dtype=dtype)
    (path / "c" / "0").write_bytes(values[0:2].astype(dtype).tobytes())
    (path / "c" / "2").write_bytes(np.concatenate([values[4:5], pad]).astype(dtype).tobytes())
    return path


def expected(form):
    values, fill = form[4], form[5]
    out = values.astype(form[3]).copy()
    out[2:4] = fill
    return out


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_zarrpp_reads_each_form_as_its_document_states(tmp_path, form):
    z = zarrpp.open_array(str(fixture(tmp_path, form)), mode="r")
    assert z.dtype == np.dtype(form[3])
    same(z[:], expected(form))
    assert np.array(z.fill_value, dtype=form[3]).tobytes() == np.array(form[5], dtype=form[3]).tobytes()
    same(z.oindex[[4, 0, 2]], expected(form)[[4, 0, 2]])
    same(z.vindex[np.array([True, False, True, False, True])], expected(form)[::2])
    same(z[1:4], expected(form)[1:4])


@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_zarrpp_writes_each_form_byte_for_byte(tmp_path, form):
    src = fixture(tmp_path, form)
    z = zarrpp.create_array(str(tmp_path / "w"), shape=(5,), chunks=(2,), dtype=form[3], fill_value=form[5],
                            compressors=None)
    z[0:2] = form[4][0:2]
    z[4:5] = form[4][4:5]
    doc, want = json.loads((tmp_path / "w" / "zarr.json").read_text()), json.loads((src / "zarr.json").read_text())
    assert doc["data_type"] == want["data_type"] and doc["fill_value"] == want["fill_value"]
    assert doc["codecs"] == want["codecs"]
    assert (tmp_path / "w" / "c" / "0").read_bytes() == (src / "c" / "0").read_bytes()
    assert not (tmp_path / "w" / "c" / "1").exists()
    got = (tmp_path / "w" / "c" / "2").read_bytes()
    size = np.dtype(form[3]).itemsize
    assert got[:size] == (src / "c" / "2").read_bytes()[:size]  # the padding element is the fill value
    assert got[size:] == np.array(form[5], dtype=form[3]).tobytes()


@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_growth_sharding_and_field_selections_keep_each_form(tmp_path, form):
    z = zarrpp.open_array(str(fixture(tmp_path, form)), mode="r+")
    z.append(form[4][:2])
    z.prepend(form[4][3:])
    same(z[:], np.concatenate([form[4][3:], expected(form), form[4][:2]]).astype(form[3]))
    s = zarrpp.create_array(str(tmp_path / "s"), shape=(6, 5), chunks=(2, 2), shards=(4, 4), dtype=form[3],
                            fill_value=form[5])
    data = np.stack([np.roll(form[4], i) for i in range(6)]).astype(form[3])
    s[:] = data
    s[1, 1:3] = form[4][:2]
    data[1, 1:3] = form[4][:2]
    same(zarrpp.open_array(str(tmp_path / "s"), mode="r")[:], data)
    same(s.oindex[[5, 0], [4, 1]], data[np.ix_([5, 0], [4, 1])])
    if form[0] == "struct":
        same(s["b"], data["b"])
        same(s[2:4, "a"], data["a"][2:4])


@pytest.mark.parametrize("form", FORMS, ids=IDS)
def test_conversion_to_v2_and_back_keeps_each_form(tmp_path, form):
    src = fixture(tmp_path, form)
    rep = zarrpp.convert_to_v2(str(src), dst=str(tmp_path / "v2"))
    assert rep["nodes"] == 1 and rep["chunks_copied"] == 2
    assert sorted(os.listdir(tmp_path / "v2")) == [".zarray", "0", "2"]
    assert (tmp_path / "v2" / "0").read_bytes() == (src / "c" / "0").read_bytes()
    v2 = zarr.open_array(str(tmp_path / "v2"), mode="r")
    assert v2.dtype == np.dtype(form[3])
    same(v2[:], expected(form))
    # Back to v3 in place: the same data type and fill value as the fixture states them.
    zarrpp.convert_to_v3(str(tmp_path / "v2"))
    doc, want = json.loads((tmp_path / "v2" / "zarr.json").read_text()), json.loads((src / "zarr.json").read_text())
    assert doc["data_type"] == want["data_type"] and doc["fill_value"] == want["fill_value"]
    zarrpp.convert_to_v2(str(tmp_path / "v2"))  # and to v2 again, in place (its keys are v2 keys)
    same(zarr.open_array(str(tmp_path / "v2"), mode="r")[:], expected(form))


def test_dask_and_xarray_read_each_form(tmp_path):
    """Dask reads each fixture; xarray on zarrpp reads them as xarray's own zarr engine reads the
    same arrays converted to Zarr v2 (eagerly and lazily, decoded or not)."""
    xr = pytest.importorskip("xarray")
    import zarrpp.dask
    from zarrpp.xarray import ZarrppBackendEntrypoint

    zarrpp.create_group(str(tmp_path / "ds"))
    for form in FORMS:
        path = fixture(tmp_path / "ds", form)
        doc = json.loads((path / "zarr.json").read_text())
        doc["dimension_names"] = ["x"]
        (path / "zarr.json").write_text(json.dumps(doc))
        same(zarrpp.dask.from_zarrpp(str(path)).compute(), expected(form))
    zarrpp.convert_to_v2(str(tmp_path / "ds"), dst=str(tmp_path / "v2"))
    # Undecoded missing values: xarray masks a v2 array's fill value but not a v3 one's (it reads
    # a v3 array's missing value from the attribute _FillValue only), and its CF decoder cannot
    # mask with a V<n> or structured fill value at all (it hashes the void scalar).
    for kw in [{}, {"chunks": {}}, {"decode_times": False}, {"chunks": {}, "decode_times": False}]:
        got = xr.open_dataset(str(tmp_path / "ds"), engine=ZarrppBackendEntrypoint, mask_and_scale=False, **kw)
        want = xr.open_dataset(str(tmp_path / "v2"), engine="zarr", consolidated=False, mask_and_scale=False, **kw)
        assert sorted(got.data_vars) == sorted(want.data_vars) == sorted(IDS)
        for name in IDS:
            want[name].attrs.pop("_FillValue", None)
            assert got[name].attrs == want[name].attrs, (name, kw)
            assert got[name].chunks == want[name].chunks, (name, kw)
            same(got[name].compute().values, want[name].compute().values)


def test_dask_and_xarray_write_each_form(tmp_path):
    """Dask's and xarray's writes into Zarr v3 state each type as zarr-python 3 does and read back."""
    xr = pytest.importorskip("xarray")
    import dask.array as da
    import zarrpp.dask
    from zarrpp.xarray import ZarrppBackendEntrypoint, to_zarrpp

    for form in FORMS:
        want = json.loads((fixture(tmp_path / "fixtures", form) / "zarr.json").read_text())
        data = form[4].astype(form[3])
        zarrpp.dask.to_zarrpp(da.from_array(data, chunks=2), str(tmp_path / "dask" / form[0]), fill_value=form[5])
        doc = json.loads((tmp_path / "dask" / form[0] / "zarr.json").read_text())
        assert doc["data_type"] == want["data_type"] and doc["fill_value"] == want["fill_value"], form[0]
        same(zarrpp.open_array(str(tmp_path / "dask" / form[0]), mode="r")[:], data)
    # The first three values: xarray's CF time encoding overflows on the fixtures' extreme dates.
    ds = xr.Dataset({form[0]: (("x",), form[4][:3].astype(form[3])) for form in FORMS})
    to_zarrpp(ds, str(tmp_path / "xr"))
    back = xr.open_dataset(str(tmp_path / "xr"), engine=ZarrppBackendEntrypoint, mask_and_scale=False)
    for form in FORMS:
        doc = json.loads((tmp_path / "xr" / form[0] / "zarr.json").read_text())
        # xarray stores dates and durations CF-encoded (as numbers), and text in Zarr v3 as the
        # variable-length string/bytes types; raw bytes and records as they are.
        if np.dtype(form[3]).kind == "V":
            assert doc["data_type"] == form[1], form[0]
        got = back[form[0]].values
        same(got.astype(form[3]) if got.dtype.kind == "O" else got,
             xr.Variable(("x",), form[4][:3].astype(form[3])).values)


def test_cli_shows_numpy_names_and_moves_npy_both_ways(tmp_path):
    for form in FORMS:
        path = fixture(tmp_path, form)
        info = subprocess.run([CLI, "info", str(path)], capture_output=True, text=True, check=True).stdout
        name = np.dtype(form[3])
        shown = (json.dumps([list(f) for f in name.descr]) if name.names else
                 name.str.lstrip("<|>").replace("M8", "datetime64").replace("m8", "timedelta64"))
        assert f"Data type     : {shown}" in info, info
        out = tmp_path / f"{form[0]}.npy"
        subprocess.run([CLI, "get", str(path), "--out", str(out)], check=True)
        same(np.load(out), expected(form))
        np.save(out, form[4][:2].astype(form[3]))
        subprocess.run([CLI, "append", str(path), "--axis", "0", "--from", str(out)], check=True)
        same(zarrpp.open_array(str(path), mode="r")[5:], form[4][:2].astype(form[3]))


def test_invalid_forms_are_refused_by_name(tmp_path):
    bad = [
        ({"name": "numpy.datetime64", "configuration": {"unit": "fortnight", "scale_factor": 1}}, 0, "unit"),
        ({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 0}}, 0, "scale_factor"),
        ({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 1.5}}, 0, "scale_factor"),
        ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}, "", "length_bytes"),
        ({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int8"},
                                                         {"name": "a", "data_type": "int8"}]}}, {"a": 0}, "'a'"),
        ({"name": "struct", "configuration": {"fields": [{"name": "", "data_type": "int8"}]}}, {"": 0}, "name"),
    ]
    for i, (data_type, fill, word) in enumerate(bad):
        form = ("bad", data_type, fill, "|u1", np.zeros(5, dtype="u1"), 0)
        path = fixture(tmp_path, form, name=f"bad{i}")
        with pytest.raises(Exception) as e:
            zarrpp.open_array(str(path), mode="r")
        assert word in str(e.value), (data_type, str(e.value))


@pytest.mark.parametrize("codecs,dtype", [
    ([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "numcodecs.zstd", "configuration": {"level": 3}}],
     "int8"),
    ([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, {"name": "bytes", "configuration": {
        "endian": "little"}}, {"name": "numcodecs.gzip", "configuration": {"level": 1}}], "int32"),
    ([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 3, "blocksize": 0}}], "int32"),
    ([{"name": "transpose", "configuration": {"order": [1, 0]}},
      {"name": "bytes", "configuration": {"endian": "big"}},
      {"name": "numcodecs.blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0}}],
     "float64"),
], ids=["big-int8-zstd", "delta-gzip", "blosc-typesize", "F-big-blosc"])
def test_conversion_to_v2_takes_every_chain_with_a_v2_form(tmp_path, codecs, dtype):
    """zarr-python 3's numcodecs.* names, a blosc typesize other than the item size, big-endian
    one-byte types: each has a v2 form, which zarr-python 2 reads as zarrpp read the v3 array."""
    path = tmp_path / "v3"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [5, 3], "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
        "fill_value": 0, "codecs": codecs}))
    data = (np.arange(15).reshape(5, 3) * 7 - 40).astype(dtype)
    zarrpp.open_array(str(path), mode="r+")[:4] = data[:4]
    want = zarrpp.open_array(str(path), mode="r")[:]
    zarrpp.convert_to_v2(str(path))
    got = zarr.open_array(str(path), mode="r")
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("=")
    assert np.array_equal(got[:], want)


def test_data_type_spellings_refused_with_the_reason():
    """dtype= is read once, by the binding (issue 68): each refusal names what is wrong."""
    cases = [("r12", ValueError, "positive multiple of 8"), ("r0", ValueError, "positive multiple of 8"),
             ("r8000000000000", ValueError, "too many bits"), (object, TypeError, "is ambiguous: give string"),
             ("(2,)i4", TypeError, "does not support data type"), ("M8", TypeError, "without a unit")]
    if hasattr(np, "float128"):
        cases.append(("float128", TypeError, "does not support data type float128"))
    for dtype, error, words in cases:
        with pytest.raises(error, match=re.escape(words)):
            zarrpp.create_array({}, shape=(2,), dtype=dtype)


def test_text_and_record_fill_values_as_numpy_reads_them():
    assert zarrpp.create_array({}, shape=(1,), dtype="U3", fill_value=0)[0] == "0"
    assert zarrpp.create_array({}, shape=(1,), dtype="S3", fill_value=5)[0] == b"5"
    dt = np.dtype([("a", ">i4"), ("b", ">f8")])
    assert zarrpp.create_array({}, shape=(1,), dtype=dt, fill_value=[1, 2.5])[0].tolist() == (1, 2.5)
    raw = np.array((3, 4.5), dtype=dt).tobytes()  # one element's bytes, in the fields' byte order
    assert zarrpp.create_array({}, shape=(1,), dtype=dt, fill_value=raw, zarr_format=2)[0].tolist() == (3, 4.5)
    with pytest.raises(ValueError, match="fill_value of 3 bytes for dtype .*: give one element, 12 bytes"):
        zarrpp.create_array({}, shape=(1,), dtype=dt, fill_value=b"abc", zarr_format=2)
