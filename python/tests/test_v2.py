"""Zarr v2 against the live peer, zarr-python 2.13 (Debian's python3-zarr), both ways.

zarr-python 2 writes a matrix of arrays covering every dtype, compressor, filter, order and
separator (pairwise: each dtype meets a compressor, a filter, an order and a separator in turn,
and each compressor and filter is used on several dtypes); zarrpp reads every one exactly, through
the library and through the CLI. Then zarrpp writes the same matrix as v2 and zarr-python 2 reads
every one exactly. Combinations numcodecs itself refuses are skipped (delta on bool or complex,
quantize/fixedscaleoffset on non-floats) and so are filters on float16, which zarrpp's
filters do not implement (zarrpp refuses them by name, tested below).
"""
import json
import os
import shutil
import subprocess
import warnings
import zlib

import numcodecs
import numpy as np
import pytest
import zarr  # python3-zarr: zarr-python 2.13, the v2 peer (installed by scripts/setup.sh)

import zarrpp

assert zarr.__version__.startswith("2."), f"the v2 peer must be zarr-python 2, found {zarr.__version__}"

CLI = os.path.join(os.environ.get("ZARRPP_INSTALL_TEST_BUILD_DIR", ""), "zarrpp")

DTYPES = ["|b1", "|i1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8", "|u1", "<u2", ">u2", "<u4", "<u8", ">u8",
          "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c16", "<M8[ns]", ">m8[s]", "<M8[D]", ">M8[us]",
          "<m8[10ms]", "<U5", ">U3", "|S4", "|S1"]
COMPRESSORS = [None, numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
               numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE),
               numcodecs.Blosc("blosclz", 1, numcodecs.Blosc.NOSHUFFLE),
               numcodecs.Blosc("zlib", 4, numcodecs.Blosc.AUTOSHUFFLE),
               numcodecs.Zstd(3), numcodecs.GZip(6), numcodecs.Zlib(2), numcodecs.LZ4(), numcodecs.BZ2(5),
               numcodecs.LZMA()]


def filters_for(dt, k):
    """The k-th filter choice valid for dtype dt (None when it has none)."""
    d = np.dtype(dt)
    native = d.newbyteorder("=").str if d.itemsize > 1 else d.str
    plain = d.str
    choices = [None, [numcodecs.Shuffle(d.itemsize)]]
    if d.kind in "iu" or (d.kind == "f" and d.itemsize > 2):
        choices.append([numcodecs.Delta(dtype=plain)])
    if d.kind == "f" and d.itemsize > 2:
        choices.append([numcodecs.FixedScaleOffset(offset=1.5, scale=100, dtype=plain, astype="<i4")])
        choices.append([numcodecs.Quantize(digits=3, dtype=plain)])
        choices.append([numcodecs.AsType(encode_dtype=native.replace("8", "4") if d.itemsize == 8 else native,
                                         decode_dtype=plain)])
        choices.append([numcodecs.Quantize(digits=2, dtype=plain), numcodecs.Shuffle(d.itemsize)])
    if d.kind in "iu" and d.itemsize >= 2:
        choices.append([numcodecs.Delta(dtype=plain), numcodecs.Shuffle(d.itemsize)])
    if d.kind == "u" and d.itemsize == 2:
        choices.append([numcodecs.AsType(encode_dtype="<u4", decode_dtype=plain)])
    if d.itemsize == 1 and d.kind in "biu":
        choices.append([numcodecs.PackBits()])
    if d.kind in "mM":  # numcodecs views times as their int64 counts
        choices.append([numcodecs.Delta(dtype=d.str[0] + "i8")])
        choices.append([numcodecs.FixedScaleOffset(offset=0, scale=1, dtype=d.str[0] + "i8")])
    if d.kind == "f" and d.str[0] == "<":  # numcodecs 0.11's BitRound fails on big-endian names
        choices.append([numcodecs.BitRound(keepbits={2: 6, 4: 12, 8: 30}[d.itemsize])])
    return choices[k % len(choices)]


def values(dt, shape, seed):
    rng = np.random.default_rng(seed)
    d = np.dtype(dt)
    n = int(np.prod(shape))
    if d.kind == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif d.kind in "iu":
        info = np.iinfo(d)
        v = rng.integers(info.min, info.max, n, dtype=np.int64 if d.kind == "i" or d.itemsize < 8 else np.uint64,
                         endpoint=True)
    elif d.kind == "f":
        v = rng.normal(0, 10, n)
    elif d.kind == "c":
        v = rng.normal(0, 10, n) + 1j * rng.normal(0, 10, n)
    elif d.kind == "U":  # text up to the width, non-ASCII and astral characters included
        alphabet = list("abcxyz é\u00fc\u4e2d\U0001f600")
        v = ["".join(rng.choice(alphabet, int(rng.integers(0, d.itemsize // 4 + 1)))) for _ in range(n)]
    elif d.kind == "S":  # any bytes, NULs inside included (NumPy drops trailing ones)
        v = [bytes(rng.integers(0, 256, int(rng.integers(0, d.itemsize + 1))).astype(np.uint8)) for _ in range(n)]
    else:  # datetime64 / timedelta64, NaT included
        v = rng.integers(-10**15, 10**15, n)
        v[::11] = np.iinfo(np.int64).min
    if d.kind in "mM":
        return np.asarray(v).view(d.newbyteorder("=").str).astype(d).reshape(shape)
    return np.asarray(v).astype(d).reshape(shape)


def fill_for(dt, i):
    d = np.dtype(dt)
    if i % 5 == 4:
        return None
    return {"b": True, "i": -7 if True else 0, "u": 42, "f": np.nan if i % 2 else 2.5, "c": 1 + 2j,
            "M": 0 if i % 2 else np.datetime64("NaT"), "m": 0, "U": "fé" if i % 2 else "", "S": b"x"}[d.kind]


def matrix():
    cases = []
    for i, dt in enumerate(DTYPES):
        cases.append((f"d{i}", dt, COMPRESSORS[i % len(COMPRESSORS)], filters_for(dt, i), "CF"[i % 2],
                      "./"[(i // 2) % 2], fill_for(dt, i)))
    # Every compressor and every filter on a few more types.
    for j, comp in enumerate(COMPRESSORS):
        for dt in ["<u2", ">f8"]:
            cases.append((f"c{j}{dt[1:]}", dt, comp, filters_for(dt, j + 1), "FC"[j % 2], "/."[j % 2], fill_for(dt, j)))
    for k in range(8):
        for dt in ["<f4", ">i8"]:
            cases.append((f"f{k}{dt[1:]}", dt, COMPRESSORS[(k * 3) % len(COMPRESSORS)], filters_for(dt, k),
                          "CF"[k % 2], ".", 0))
    # Bits: packbits on every one-byte type, bitround on each float width.
    for j, dt in enumerate(["|b1", "|i1", "|u1"]):
        cases.append((f"p{j}", dt, COMPRESSORS[j], [numcodecs.PackBits()], "CF"[j % 2], "./"[j % 2], fill_for(dt, j)))
    for j, dt in enumerate(["<f2", "<f4", "<f8"]):
        cases.append((f"r{j}", dt, COMPRESSORS[j + 3], [numcodecs.BitRound(keepbits=j * 9 + 1)], "FC"[j % 2], ".",
                      fill_for(dt, j)))
    return cases


SHAPE, CHUNKS = (13, 7), (4, 3)


def expected_from_zarr(z):
    return z[:]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    if a.dtype.kind in "mM":  # the same unit and counts, NaT included
        assert a.dtype.newbyteorder("=") == b.dtype.newbyteorder("="), (a.dtype, b.dtype)
        return np.array_equal(a.astype(a.dtype.newbyteorder("=")).view("i8"),
                              b.astype(b.dtype.newbyteorder("=")).view("i8"))
    if a.dtype.kind in "US":
        assert a.dtype.newbyteorder("=") == b.dtype.newbyteorder("="), (a.dtype, b.dtype)
    if a.dtype.kind in "fc":
        a = a.astype(a.dtype.newbyteorder("="))
        b = b.astype(b.dtype.newbyteorder("="))
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def written_by_zarr(tmp_path_factory):
    root = tmp_path_factory.mktemp("v2_by_zarr")
    out = []
    for name, dt, comp, filt, order, sep, fill in matrix():
        path = str(root / name)
        z = zarr.open(path, mode="w", shape=SHAPE, chunks=CHUNKS, dtype=dt, compressor=comp, filters=filt, order=order,
                      dimension_separator=sep, fill_value=fill)
        data = values(dt, SHAPE, seed=hash(name) % 1000)
        z[:9] = data[:9]  # the last chunk row stays missing: it reads as the fill value
        out.append((path, name, dt))
    return out


def expected_with_null_fill(path, z_v2):
    """zarr-python 2 reads a missing chunk of an array without fill value (null) as whatever
    np.empty returned (uninitialised memory); zarrpp reads it as zeros, which is also what
    zarr-python 2 writes into the unwritten part of a chunk it creates. So where the chunk row 12
    is missing, the expectation is zeros."""
    want = expected_from_zarr(z_v2)
    if z_v2.fill_value is None:
        want = want.copy()
        want[12:] = np.zeros((), want.dtype)  # 0, False, '', b'', 1970-01-01
    return want


def test_zarrpp_reads_what_zarr_python_2_writes(written_by_zarr):
    for path, name, dt in written_by_zarr:
        want = expected_with_null_fill(path, zarr.open(path, mode="r"))
        z = zarrpp.open_array(path, mode="r")
        assert z.zarr_format == 2
        got = z[:]
        assert same(got, want), (name, dt, json.load(open(os.path.join(path, ".zarray"))))
        # A selection that is not chunk aligned, and single elements.
        assert same(z[3:11, 1:6], want[3:11, 1:6]), name
        assert same(z[12, ::2], want[12, ::2]), name


@pytest.mark.skipif(not os.path.exists(CLI), reason="the CLI is not built")
def test_cli_reads_what_zarr_python_2_writes(written_by_zarr, tmp_path):
    for path, name, dt in written_by_zarr:
        want = expected_with_null_fill(path, zarr.open(path, mode="r"))
        out = str(tmp_path / (name + ".npy"))
        r = cli("get", path, "--out", out)
        assert r.returncode == 0, (name, r.stderr)
        got = np.load(out)
        assert same(got, want), name
        info = json.loads(cli("info", "--json", path).stdout)
        assert info["zarr_format"] == 2 and info["v2_dtype"] == dt
        d = np.dtype(dt)
        assert info["data_type"] == {"U": f"U{d.itemsize // 4}", "S": f"S{d.itemsize}"}.get(d.kind, d.name)


def zarrpp_kwargs(dt, comp, filt, order, sep, fill):
    return dict(shape=SHAPE, chunks=CHUNKS, dtype=np.dtype(dt).newbyteorder("=") if np.dtype(dt).kind != "b" else dt,
                zarr_format=2, compressors=comp, filters=filt, order=order, dimension_separator=sep)


def test_zarr_python_2_reads_what_zarrpp_writes(tmp_path):
    n = 0
    for name, dt, comp, filt, order, sep, fill in matrix():
        d = np.dtype(dt)
        if d.byteorder == ">":
            continue  # zarrpp writes its arrays little-endian (big-endian ones are read above)
        path = str(tmp_path / name)
        fv = None if fill is None else (float("nan") if isinstance(fill, float) and np.isnan(fill) else fill)
        # no fill given: the type's zero (an explicit None would state no fill value, null)
        given = {} if fv is None else {"fill_value": fv}
        z = zarrpp.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dt, zarr_format=2, compressors=comp,
                                filters=filt, order=order, dimension_separator=sep, **given)
        data = values(dt, SHAPE, seed=n)
        z[:9] = data[:9]
        meta = json.load(open(os.path.join(path, ".zarray")))
        assert meta["zarr_format"] == 2 and meta["order"] == order and meta["dimension_separator"] == sep
        r = zarr.open(path, mode="r")
        assert r.dtype == d
        assert same(r[:], z[:]), (name, meta)
        assert same(r[:9], z[:9])
        n += 1
    assert n > 30


def test_groups_attributes_and_consolidated_metadata(tmp_path):
    path = str(tmp_path / "g")
    g = zarr.open_group(path, mode="w")
    g.attrs["title"] = "from zarr 2"
    sub = g.create_group("sub")
    sub.attrs["level"] = 1
    a = sub.create_dataset("arr", data=np.arange(20, dtype="<i4").reshape(4, 5), chunks=(2, 2))
    a.attrs["units"] = "m"
    zarr.consolidate_metadata(path)
    root = zarrpp.open_group(path, mode="r+")
    assert root.zarr_format == 2 and root.attrs["title"] == "from zarr 2"
    assert [n for n, _ in root.members()] == ["sub"]
    arr = root["sub"]["arr"]
    assert arr.attrs["units"] == "m" and np.array_equal(arr[:], np.arange(20).reshape(4, 5))
    # zarrpp changes nodes: .zmetadata follows, so zarr.open_consolidated sees the changes.
    arr.attrs["units"] = "km"
    arr.resize(6, 5)
    arr[4:] = 7
    root["sub"].create_group("new")
    c = zarr.open_consolidated(path, mode="r")
    assert c["sub/arr"].attrs["units"] == "km" and c["sub/arr"].shape == (6, 5)
    assert np.array_equal(c["sub/arr"][4:], np.full((2, 5), 7))
    assert "new" in c["sub"]
    # The node's own metadata wins over .zmetadata (as in zarr-python).
    meta = json.load(open(os.path.join(path, ".zmetadata")))
    meta["metadata"]["sub/arr/.zarray"]["shape"] = [99, 5]
    json.dump(meta, open(os.path.join(path, ".zmetadata"), "w"))
    assert zarrpp.open_array(path + "/sub/arr").shape == (6, 5)
    # zarrpp creates v2 groups and arrays zarr-python 2 reads.
    g2 = zarrpp.create_group(str(tmp_path / "made"), zarr_format=2, attributes={"a": [1, 2]})
    x = g2.create_array("x", shape=(5,), chunks=(2,), dtype="f4", fill_value=float("nan"))
    x[:3] = [1, 2, 3]
    r = zarr.open_group(str(tmp_path / "made"), mode="r")
    assert r.attrs["a"] == [1, 2] and np.array_equal(r["x"][:], [1, 2, 3, np.nan, np.nan], equal_nan=True)


def test_growth_on_v2_and_conversion(tmp_path):
    path = str(tmp_path / "grow")
    z = zarr.open(path, mode="w", shape=(5, 3), chunks=(2, 2), dtype="<i4", compressor=numcodecs.Zstd(1),
                  fill_value=None)
    z[:] = np.arange(15).reshape(5, 3)
    z.attrs["_ARRAY_DIMENSIONS"] = ["t", "x"]
    a = zarrpp.open_array(path)
    a.append(np.full((2, 3), 9, dtype="i4"))
    assert zarr.open(path, mode="r").shape == (7, 3)
    with pytest.raises(ValueError, match="convert"):
        a.prepend(np.zeros((1, 3), dtype="i4"))
    assert zarr.open(path, mode="r").shape == (7, 3)  # nothing changed
    before = {f: zlib.crc32(open(os.path.join(path, f), "rb").read())
              for f in os.listdir(path) if not f.startswith(".")}
    stamps = {f: os.stat(os.path.join(path, f)).st_mtime_ns for f in before}
    rep = zarrpp.convert_to_v3(path)
    assert rep["nodes"] == 1 and any("fill_value null" in n for n in rep["notes"])
    assert sorted(os.listdir(path)) == sorted(list(before) + ["zarr.json"])
    after = {f: zlib.crc32(open(os.path.join(path, f), "rb").read()) for f in before}
    assert after == before and {f: os.stat(os.path.join(path, f)).st_mtime_ns for f in before} == stamps
    v3 = zarrpp.open_array(path)
    assert v3.zarr_format == 3 and v3.metadata["dimension_names"] == ["t", "x"]
    assert np.array_equal(v3[:5], np.arange(15).reshape(5, 3))
    v3.prepend(np.full((1, 3), -1, dtype="i4"))
    assert v3.domain == ((-1, 7), (0, 3)) and np.array_equal(v3[0], [-1, -1, -1])


def test_nested_arrays_from_before_zarr_2_8_read_and_convert(tmp_path):
    """zarr-python before 2.8 wrote no dimension_separator; NestedDirectoryStore's chunks are
    "0/0". zarrpp finds the layout from what is stored, as zarr-python 2 does when told the store."""
    data = np.arange(6 * 5, dtype="<i4").reshape(6, 5)
    for store_type, sep in ((zarr.NestedDirectoryStore, "/"), (zarr.DirectoryStore, ".")):
        path = str(tmp_path / f"legacy{sep == '/'}")
        z = zarr.open(store_type(path), mode="w", shape=data.shape, chunks=(2, 2), dtype="<i4")
        z[:] = data
        meta = json.load(open(os.path.join(path, ".zarray")))
        meta.pop("dimension_separator", None)  # as zarr-python 2.7 wrote it
        json.dump(meta, open(os.path.join(path, ".zarray"), "w"))
        assert np.array_equal(zarr.open(store_type(path), mode="r")[:], data)  # the reference
        a = zarrpp.open_array(path)
        assert np.array_equal(a[:], data)
        a.append(np.full((2, 5), -1, dtype="<i4"))
        back = zarr.open(store_type(path), mode="r")
        assert back.shape == (8, 5) and np.array_equal(back[6:], np.full((2, 5), -1))
        assert json.load(open(os.path.join(path, ".zarray")))["dimension_separator"] == sep
        zarrpp.convert_to_v3(path)
        assert np.array_equal(zarrpp.open_array(path)[:6], data)


def test_interrupted_conversion_opens_as_v3_and_convert_finishes(tmp_path):
    path = str(tmp_path / "half")
    z = zarr.open(path, mode="w", shape=(4,), chunks=(2,), dtype="<u2")
    z[:] = [1, 2, 3, 4]
    shutil.copy(os.path.join(path, ".zarray"), str(tmp_path / "zarray.bak"))
    zarrpp.convert_to_v3(path)
    shutil.copy(str(tmp_path / "zarray.bak"), os.path.join(path, ".zarray"))  # as if stopped before the removal
    a = zarrpp.open_array(path)
    assert a.zarr_format == 3 and list(a[:]) == [1, 2, 3, 4]
    if os.path.exists(CLI):
        info = cli("info", path).stdout
        assert "interrupted conversion" in info
    rep = zarrpp.convert_to_v3(path)
    assert any("interrupted" in n for n in rep["notes"])
    assert not os.path.exists(os.path.join(path, ".zarray"))


def test_xarray_to_zarr_datasets_read(tmp_path):
    xr = pytest.importorskip("xarray")
    path = str(tmp_path / "ds.zarr")
    t = np.arange(6)
    ds = xr.Dataset({"temp": (("time", "x"), np.arange(24, dtype="f8").reshape(6, 4) / 3),
                     "flag": (("time",), np.array([1, 0, 1, 1, 0, 0], dtype="i1"))},
                    coords={"time": t, "x": [10, 20, 30, 40]}, attrs={"title": "test"})
    ds.to_zarr(path, mode="w")
    g = zarrpp.open_group(path, mode="r")
    assert g.zarr_format == 2 and g.attrs["title"] == "test"
    names = sorted(n for n, _ in g.members())
    assert names == ["flag", "temp", "time", "x"]
    assert np.array_equal(g["temp"][:], ds["temp"].values)
    assert g["temp"].attrs["_ARRAY_DIMENSIONS"] == ["time", "x"]
    assert np.array_equal(g["flag"][:], ds["flag"].values)
    # And a dataset zarrpp converts reads back in xarray's v2-free way: dimension names.
    zarrpp.convert_to_v3(path)
    assert zarrpp.open_array(path + "/temp").metadata["dimension_names"] == ["time", "x"]


def test_bad_v2_input_gets_clear_errors_and_changes_nothing(tmp_path):
    base = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": None, "fill_value": 0,
            "order": "C", "filters": None}
    cases = [
        ({"compressor": {"id": "zfpy", "mode": 4}}, "compressor 'zfpy' is not supported"),
        ({"filters": [{"id": "categorize", "labels": ["a"], "dtype": "<U1", "astype": "|u1"}]},
         "categorize works on str (object) and U<n> arrays only, not int32"),
        ({"filters": [{"id": "categorize", "labels": ["a"], "dtype": "<U1", "astype": "|u1"}], "dtype": "<U2",
          "fill_value": ""}, "\"dtype\" must be the array's own (<U2)"),
        ({"filters": [{"id": "packbits"}]}, "packbits works on bool, int8 and uint8 arrays only, not int32"),
        ({"filters": [{"id": "pickle"}], "dtype": "|O"}, "object codec 'pickle'"),
        ({"filters": [{"id": "json"}], "dtype": "|O"}, "object codec 'json'"),
        ({"filters": [{"id": "msgpack2"}], "dtype": "|O"}, "object codec 'msgpack2'"),
        ({"filters": [{"id": "vlen-array", "dtype": "<i4"}], "dtype": "|O"}, "object codec 'vlen-array'"),
        ({"dtype": "|O"}, "without an object codec"),
        ({"dtype": "<M8"}, "without a unit"),
        ({"dtype": "<U4", "fill_value": "abcde"}, "longer than 4 characters"),
        ({"dtype": "|S2", "fill_value": 1.5}, "expected a base64 string"),
        ({"dtype": [["a", "<i4"], ["b", ">i4"]], "fill_value": None}, "both byte orders"),
        ({"dtype": [["a", "<i4"]], "fill_value": 0}, "a structured type takes base64"),
        ({"chunks": [2, 2]}, "chunks"),
        ({"order": "K"}, "order"),
        ({"dimension_separator": ":"}, "dimension_separator"),
        ({"shape": [-1]}, "shape"),
        ({"zarr_format": 3}, "zarr_format"),
        ({"fill_value": "abc"}, "fill_value"),
        ({"filters": [{"id": "delta", "dtype": "<f8"}]}, "differs from the data type"),
        ({"compressor": {"id": "lzma", "format": 2}}, "format"),
    ]
    for i, (patch, msg) in enumerate(cases):
        d = tmp_path / f"bad{i}"
        d.mkdir()
        meta = dict(base, **patch)
        (d / ".zarray").write_text(json.dumps(meta))
        (d / "0").write_bytes(b"\0" * 8)
        snapshot = {p.name: p.read_bytes() for p in d.iterdir()}
        with pytest.raises((ValueError, NotImplementedError)) as e:
            zarrpp.open_array(str(d))
        assert msg in str(e.value), (patch, str(e.value))
        if os.path.exists(CLI):
            r = cli("info", str(d))
            assert r.returncode != 0 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert {p.name: p.read_bytes() for p in d.iterdir()} == snapshot
    # A group with one unreadable member still lists the others.
    g = zarr.open_group(str(tmp_path / "mixed"), mode="w")
    g.create_dataset("good", data=np.arange(3))
    g.create_dataset("bad", data=np.arange(3))
    meta = json.load(open(tmp_path / "mixed" / "bad" / ".zarray"))
    meta["compressor"] = {"id": "zfpy"}
    json.dump(meta, open(tmp_path / "mixed" / "bad" / ".zarray", "w"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        members = zarrpp.open_group(str(tmp_path / "mixed")).members()
    assert [n for n, _ in members] == ["good"]
    assert any("bad" in str(x.message) and "zfpy" in str(x.message) for x in w)


def test_v2_writes_refuse_what_v2_cannot_state(tmp_path):
    with pytest.raises(ValueError, match="sharding needs Zarr v3"):
        zarrpp.create_array(str(tmp_path / "a"), shape=(4,), chunks=(2,), shards=(4,), dtype="i4", zarr_format=2)
    with pytest.raises(ValueError, match="crc32c"):
        zarrpp.create_array(str(tmp_path / "b"), shape=(4,), chunks=(2,), dtype="i4", zarr_format=2,
                            compressors=[zarrpp.codecs.Crc32c()])
    with pytest.raises(ValueError, match="lower bound"):
        zarrpp.create_array(str(tmp_path / "c"), shape=(4,), chunks=(2,), dtype="i4", zarr_format=2, lower_bound=(-2,))
    assert not any((tmp_path / n).exists() and any((tmp_path / n).iterdir()) for n in "abc")


# ---- strings and bytes -------------------------------------------------------------------------

def test_object_arrays_both_ways_with_zarr_python_2(tmp_path):
    texts = np.array([["a", "ßü", ""], ["😀 emoji", "x" * 500, "tab\there"]], dtype=object)
    blobs = np.array([[b"\x00\xff", b"", b"abc"], [b"\n", b"z" * 300, b"\x80"]], dtype=object)
    for k, (codec, data) in enumerate([(numcodecs.VLenUTF8(), texts), (numcodecs.VLenBytes(), blobs)]):
        for comp in [None, numcodecs.Zstd(1), numcodecs.Blosc("lz4", 5, numcodecs.Blosc.NOSHUFFLE), numcodecs.GZip(1)]:
            for order in "CF":
                path = str(tmp_path / f"o{k}_{type(comp).__name__}_{order}")
                z = zarr.open(path, mode="w", shape=(3, 3), chunks=(2, 2), dtype=object, object_codec=codec,
                              compressor=comp, order=order)
                z[:2] = data
                got = zarrpp.open_array(path, mode="r")[:]
                assert got.dtype == object and got.shape == (3, 3)
                assert got[:2].tolist() == data.tolist(), path
                # The missing chunk row: zarr-python 2 returns its fill value, the number 0, as zarrpp.
                assert [type(v) for v in got[2]] == [int] * 3 and got[2].tolist() == [0] * 3
        # zarrpp writes v2 object arrays zarr-python 2 reads.
        path = str(tmp_path / f"w{k}")
        a = zarrpp.create_array(path, shape=(2, 3), chunks=(1, 2), dtype=bytes if k else str, zarr_format=2,
                                compressors=numcodecs.Zstd(2))
        a[:] = data
        r = zarr.open(path, mode="r")
        assert r.dtype == object and r[:].tolist() == data.tolist()
        assert json.load(open(os.path.join(path, ".zarray")))["filters"] == [{"id": "vlen-bytes" if k else "vlen-utf8"}]


def same_objects(a, b):
    """Equal object arrays whose elements are also of the same types (0 is not "", None is not b"")."""
    return a.shape == b.shape and [(type(x), x) for x in a.ravel()] == [(type(x), x) for x in b.ravel()]


OBJECT_FILLS = [{}, {"fill_value": 0}, {"fill_value": None}, {"fill_value": ""}, {"fill_value": "x"}]


@pytest.mark.parametrize("kw", OBJECT_FILLS, ids=["default", "0", "None", "empty", "x"])
@pytest.mark.parametrize("codec", [numcodecs.VLenUTF8(), numcodecs.VLenBytes()], ids=["utf8", "bytes"])
def test_object_arrays_missing_elements_read_as_zarr_python_2_reads_them(tmp_path, codec, kw):
    # Missing elements are what .zarray's fill value says, even where that is not of the array's
    # type (0, None, text on a bytes array); elements of a written chunk never assigned are empty.
    path = str(tmp_path / "o")
    utf8 = isinstance(codec, numcodecs.VLenUTF8)
    # numcodecs cannot encode text in a bytes chunk: there, only whole chunks are written.
    whole = not utf8 and isinstance(kw.get("fill_value"), str)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = zarr.open(path, mode="w", shape=(3, 4), chunks=(2, 2), dtype=object, object_codec=codec, **kw)
        if whole:
            ref[:2, :2] = [[b"p", b"q"], [b"r", b""]]
        else:
            ref[0, :2] = ["p", "q"] if utf8 else [b"p", b"q"]
    want = ref[:]
    z = zarrpp.open_array(path, mode="r+")
    assert same_objects(z[:], want) and same_objects(z[1:, 1:3], want[1:, 1:3])
    assert same_objects(z.vindex[[0, 2], [1, 3]], want[[0, 2], [1, 3]])
    assert (type(z.fill_value), z.fill_value) == (type(ref.fill_value), ref.fill_value)
    printed = json.loads(subprocess.run([CLI, "get", path], check=True, capture_output=True, text=True).stdout)
    as_json = [[v.decode() if isinstance(v, bytes) else v for v in row] for row in want.tolist()]
    if isinstance(codec, numcodecs.VLenBytes):
        as_json = [[f"b'{v}'" if isinstance(w, bytes) else v for v, w in zip(r, wr)]
                   for r, wr in zip(as_json, want.tolist())]
    assert printed == as_json
    if whole:
        return
    # What zarrpp reads it writes back as zarr-python 2 would (missing values stored empty).
    z[:] = z[:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref[:] = want
    assert same_objects(zarr.open(path, mode="r")[:], ref[:])
    assert same_objects(z[:], ref[:])


@pytest.mark.parametrize("dtype", [str, bytes])
def test_object_arrays_zarrpp_writes_read_alike_in_zarr_python_2(tmp_path, dtype):
    path = str(tmp_path / "w")
    z = zarrpp.create_array(path, shape=(4,), chunks=(2,), dtype=dtype, zarr_format=2)
    z[:2] = ["a", ""] if dtype is str else [b"a", b""]
    ref = zarr.open(path, mode="r")
    assert same_objects(z[:], ref[:]) and same_objects(zarrpp.open_array(path)[:], ref[:])
    assert z.fill_value == ref.fill_value
    if dtype is bytes:  # no fill value (zarr-python 2 cannot state bytes): missing elements are None
        assert z[:].tolist() == [b"a", b"", None, None]
        with pytest.raises(TypeError, match="takes bytes objects, got int"):
            z[0] = 0  # only the array's own missing value (None) is taken besides bytes
    from zarrpp.dask import from_zarrpp
    assert same_objects(from_zarrpp(path).compute(), ref[:])


CATEGORIES = ["paris", "lyon", "nicé", "😀z"]


@pytest.mark.parametrize("dtype,astype", [(object, "|u1"), ("<U5", "<u2"), (">U5", "|u1"), (object, "<i4")])
def test_categorize_both_ways_with_zarr_python_2(tmp_path, dtype, astype):
    path = str(tmp_path / "c")
    data = np.array([["paris", "", "nicé"], ["😀z", "lyon", "paris"], ["lyon", "lyon", ""]], dtype=dtype)
    with warnings.catch_warnings():  # zarr-python 2 warns that an object array has no object codec
        warnings.simplefilter("ignore")
        ref = zarr.open(path, mode="w", shape=(4, 3), chunks=(2, 2), dtype=dtype, compressor=numcodecs.Zstd(1),
                        filters=[numcodecs.Categorize(CATEGORIES, dtype=dtype, astype=astype)])
        ref[:3] = data
    z = zarrpp.open_array(path, mode="r+")
    assert z.dtype == ref.dtype.newbyteorder("<") and same_objects(z[:], ref[:])  # the missing row: fill value
    cli = json.loads(subprocess.run([CLI, "get", path, "0:3"], check=True, capture_output=True, text=True).stdout) \
        if dtype is object else None
    assert cli is None or cli == data.tolist()
    # zarrpp writes, zarr-python 2 reads; text that is no label is refused with nothing changed
    z[3] = ["nicé", "", "lyon"]
    z[0, 1] = "paris"
    with pytest.raises(ValueError, match="\"rome\" is not one of the filter's labels"):
        z[1] = ["lyon", "rome", "lyon"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same_objects(zarr.open(path, mode="r")[:], z[:])
    assert z[:].tolist()[3] == ["nicé", "", "lyon"] and z[1, 1] == "lyon"
    # a new array with the filter, read by zarr-python 2; and both converted to v3
    new = str(tmp_path / "n")
    w = zarrpp.create_array(new, shape=(3, 3), chunks=(2, 2), dtype=str if dtype is object else dtype, zarr_format=2,
                            filters=[numcodecs.Categorize(CATEGORIES, dtype=dtype, astype=astype)])
    w[:] = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same_objects(zarr.open(new, mode="r")[:], data)
    assert json.load(open(os.path.join(new, ".zarray")))["filters"][0]["id"] == "categorize"
    before = z[:]
    zarrpp.convert_to_v3(path)
    assert same_objects(zarrpp.open_array(path)[:], before) if dtype is not object else \
        zarrpp.open_array(path)[:3].tolist() == before[:3].tolist()


def test_object_arrays_missing_elements_survive_copies_and_likes(tmp_path):
    path = str(tmp_path / "o")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = zarr.open(path, mode="w", shape=(6,), chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8())
        ref[:3] = ["a", "b", "c"]
    z = zarrpp.open_array(path)
    for k, grid in enumerate([None, "regular"]):
        copy = zarrpp.copy_array(z, str(tmp_path / f"c{k}"), grid=grid)
        assert same_objects(copy[:], z[:]), copy[:]  # the missing elements stay 0 (not written as "")
    like = zarrpp.full_like(z, store=str(tmp_path / "like"))
    assert like.fill_value == "" and like[:].tolist() == [""] * 6
    zarrpp.copy_array(z, str(tmp_path / "v2"), path="__x")  # a v2 copy may have such a name
    v3 = zarrpp.create_array(str(tmp_path / "s3"), shape=(2,), dtype=str)
    with pytest.raises(ValueError, match="'__x'.*reserves"):
        zarrpp.copy_array(v3, str(tmp_path / "v3"), path="__x")
    assert not os.path.exists(tmp_path / "v3" / "__x")


def test_categorize_stores_a_fill_value_that_is_a_label_as_that_label(tmp_path):
    # numcodecs stores an element holding the fill value as its label's number when it is a label
    path = str(tmp_path / "c")
    z = zarrpp.create_array(path, shape=(4,), chunks=(4,), dtype=str, zarr_format=2, fill_value="b",
                            filters=[numcodecs.Categorize(["a", "b", "b"], dtype=object)])
    z[:2] = ["a", "b"]
    assert z[:].tolist() == ["a", "b", "b", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open(path, mode="r")[:].tolist() == ["a", "b", "b", "b"]
    stored = numcodecs.Zstd().decode(open(os.path.join(path, "0"), "rb").read()) \
        if json.load(open(os.path.join(path, ".zarray")))["compressor"] else open(os.path.join(path, "0"), "rb").read()
    assert list(bytes(stored)) == [1, 3, 3, 3]  # "b" given twice: the last number, as numcodecs


def test_string_arrays_select_and_grow_like_numbers(tmp_path):
    ref = np.array([[f"{i}-{j}" * (j + 1) for j in range(5)] for i in range(6)], dtype=object)
    z = zarrpp.create_array(str(tmp_path / "s"), shape=(6, 5), chunks=(4, 2), dtype=str, fill_value="?",
                            shards=(4, 4))
    z[:] = ref
    assert z.dtype == np.dtype("O")
    assert z[:].tolist() == ref.tolist()
    assert z[1:5:2, 1:4].tolist() == ref[1:5:2, 1:4].tolist()
    assert z.oindex[[0, 5], [4, 1]].tolist() == ref[np.ix_([0, 5], [4, 1])].tolist()
    assert z.vindex[[0, 5, 3], [4, 1, 2]].tolist() == ref[[0, 5, 3], [4, 1, 2]].tolist()
    mask = (np.arange(30).reshape(6, 5) % 7) == 0
    assert z[mask].tolist() == ref[mask].tolist()
    assert z.get_block_selection((1, 0)).tolist() == ref[4:6, 0:4].tolist()  # blocks are shards, as zarr-python
    z[2, 3] = "one"
    ref[2, 3] = "one"
    z.vindex[[0, 1], [0, 0]] = ["p", "q"]
    ref[[0, 1], [0, 0]] = ["p", "q"]
    z[mask] = "m"
    ref[mask] = "m"
    assert z[:].tolist() == ref.tolist()
    z.prepend(np.array([["new"] * 5]))
    z.append([["end"] * 5])
    assert z.domain == ((-1, 7), (0, 5))
    assert z[0].tolist() == ["new"] * 5 and z[-1].tolist() == ["end"] * 5 and z[1:7].tolist() == ref.tolist()
    z.resize(4, 5)
    z.resize(8, 5)
    assert z[4:].tolist() == [["?"] * 5] * 4
    with pytest.raises(TypeError, match="str"):
        z[0, 0] = 5
    with pytest.raises(TypeError, match="str"):
        z[0, 0] = b"bytes"
    assert z[0, 0] == "new"
    # NumPy's fixed-width text arrays are accepted as input.
    z[0] = np.array(["u", "v", "w", "x", "y"])
    assert z[0].tolist() == list("uvwxy")
    b = zarrpp.create_array(str(tmp_path / "b"), shape=(3,), chunks=(2,), dtype=bytes, fill_value=b"\x01")
    b[1] = b"\x00"
    assert b[:].tolist() == [b"\x01", b"\x00", b"\x01"]
    with pytest.raises(TypeError, match="bytes"):
        b[0] = "text"


def test_big_endian_filters_written_for_zarr_python_2(tmp_path):
    # numcodecs filters view their input in their dtype's byte order: zarrpp states the chunk's.
    data = np.arange(-20, 20, dtype=">i4") * 7
    cases = [(">i4", [numcodecs.Delta(dtype="<i4")], None),
             (">f8", [numcodecs.Quantize(digits=3, dtype="<f8")], numcodecs.Zstd(1)),
             (">f8", [numcodecs.FixedScaleOffset(offset=1, scale=10, dtype="<f8", astype="<i4")], None),
             (">u2", [numcodecs.AsType(encode_dtype="<u4", decode_dtype="<u2")], numcodecs.GZip(1))]
    for k, (dt, filt, comp) in enumerate(cases):
        path = str(tmp_path / f"be{k}")
        z = zarrpp.create_array(path, shape=(40,), chunks=(16,), dtype=dt, zarr_format=2, filters=filt,
                                compressors=comp)
        ref = (np.abs(data) if dt.startswith(">u") else data).astype(dt) / (1 if dt[1] != "f" else 3)
        z[:] = ref.astype(dt)
        meta = json.load(open(os.path.join(path, ".zarray")))
        assert meta["dtype"] == dt
        for f in meta["filters"]:
            for key in ("dtype", "astype", "encode_dtype", "decode_dtype"):
                if key in f:
                    assert f[key][0] == ">", (meta, key)
        got = zarr.open(path, mode="r")[:]
        assert np.allclose(got, z[:]) and np.allclose(z[:], ref.astype(dt), atol=0.1), (dt, got, z[:])
    # zarr-python 2 filtering byte-swapped values (a filter dtype in the other byte order) is refused by name.
    path = str(tmp_path / "swapped")
    zarr.open(path, mode="w", shape=(8,), chunks=(4,), dtype=">i4",
              filters=[numcodecs.Delta(dtype="<i4")])[:] = np.arange(8)
    with pytest.raises(Exception, match="delta.*other byte order"):
        zarrpp.open_array(path)[:]


def test_object_arrays_with_a_non_string_fill_store_every_chunk(tmp_path):
    # zarr-python 2's default object fill value is the number 0, which it returns for missing
    # chunks: zarrpp must store a chunk of only "" rather than leave it missing.
    path = str(tmp_path / "o")
    zarr.open(path, mode="w", shape=(6,), chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8())
    z = zarrpp.open_array(path, mode="r+")
    z[:] = ["", "", "a", "", "", "b"]
    assert zarr.open(path, mode="r")[:].tolist() == ["", "", "a", "", "", "b"]
    # The same for a numeric array whose fill value is null.
    path = str(tmp_path / "n")
    zarr.open(path, mode="w", shape=(6,), chunks=(2,), dtype="<i4", fill_value=None)
    z = zarrpp.open_array(path, mode="r+")
    z[:] = 0
    assert sorted(os.listdir(path)) == [".zarray", "0", "1", "2"]
    assert zarr.open(path, mode="r")[:].tolist() == [0] * 6


def test_lone_bytes_like_values_go_into_one_element(tmp_path):
    z = zarrpp.create_array(str(tmp_path / "b"), shape=(3,), chunks=(2,), dtype=bytes)
    z[0] = bytearray(b"xy")
    z[1] = memoryview(b"\x00\x01")
    z[2] = b"z"
    assert z[:].tolist() == [b"xy", b"\x00\x01", b"z"]
    s = zarrpp.create_array(str(tmp_path / "s"), shape=(2,), chunks=(2,), dtype=str)
    s[0] = "abc"
    assert s[:].tolist() == ["abc", ""]


def test_copy_of_a_v2_array_states_its_new_codecs(tmp_path):
    src = str(tmp_path / "src")
    zarr.open(src, mode="w", shape=(10, 4), chunks=(4, 4), dtype="<f4", compressor=numcodecs.Zlib(3),
              filters=[numcodecs.Quantize(digits=2, dtype="<f4")])[:] = np.arange(40, dtype="<f4").reshape(10, 4) / 3
    for args, comp in [((), "zlib"), (("--compressor", "zstd:3"), "zstd"), (("--compressor", "none"), None),
                       (("--chunks", "5,2"), "zlib")]:
        dst = str(tmp_path / f"dst_{len(args)}_{comp}_{args[-1] if args else ''}".replace(",", "_"))
        cli("copy", src, dst, *args)
        assert sorted(f for f in os.listdir(dst) if f.startswith(".")) == [".zarray"], os.listdir(dst)
        meta = json.load(open(os.path.join(dst, ".zarray")))
        assert (meta["compressor"] or {}).get("id") == comp, meta
        assert meta["filters"] == json.load(open(os.path.join(src, ".zarray")))["filters"]
        assert np.array_equal(zarr.open(dst, mode="r")[:], zarr.open(src, mode="r")[:]), dst
        assert np.array_equal(zarrpp.open_array(dst)[:], zarr.open(src, mode="r")[:])


def test_consolidated_metadata_forgets_removed_and_converted_subtrees(tmp_path):
    path = str(tmp_path / "g")
    g = zarr.open_group(path, mode="w")
    for name in ("keep", "gone", "conv"):
        sub = g.create_group(name)
        sub.create_group("inner").create_dataset("a", data=np.arange(4), chunks=(2,))
    zarr.consolidate_metadata(path)
    root = zarrpp.open_group(path, mode="r+")
    del root["gone"]
    zarrpp.convert_to_v3(path, path="conv")
    keys = json.load(open(os.path.join(path, ".zmetadata")))["metadata"].keys()
    assert not [k for k in keys if k.startswith(("gone/", "conv/"))], sorted(keys)
    assert "keep/inner/a/.zarray" in keys
    c = zarr.open_consolidated(path, mode="r")
    assert sorted(c.group_keys()) == ["keep"]  # zarr-python 2 lists v2 nodes only
    assert np.array_equal(zarrpp.open_array(path + "/conv/inner/a")[:], np.arange(4))


def test_stale_v2_handle_does_not_write_attributes_beside_a_converted_node(tmp_path):
    path = str(tmp_path / "a")
    zarr.open(path, mode="w", shape=(4,), chunks=(2,), dtype="<i4")
    old = zarrpp.open_array(path, mode="r+")
    zarrpp.convert_to_v3(path)
    with pytest.raises(Exception, match="Zarr v3 now"):
        old.attrs["x"] = 1
    assert sorted(os.listdir(path)) == ["zarr.json"]
    zarrpp.open_array(path, mode="r+").attrs["x"] = 1
    assert json.load(open(os.path.join(path, "zarr.json")))["attributes"] == {"x": 1}


def test_nodes_only_consolidated_metadata_describes_read_as_open_consolidated(tmp_path):
    path = str(tmp_path / "g.zarr")
    g = zarr.open_group(path, mode="w")
    g.create("a", shape=(5,), chunks=(2,), dtype="<f4", fill_value=-1)[:3] = [1.5, 2.5, 3.5]
    g["a"].attrs["units"] = "m"
    g.create_group("sub").create("b", shape=(2, 2), chunks=(1, 2), dtype="|S2")[:] = [[b"x", b"y"], [b"z", b""]]
    g.create("unwritten", shape=(3,), chunks=(3,), dtype="<i8", fill_value=4)
    zarr.consolidate_metadata(path)
    for doc in ("a/.zarray", "a/.zattrs", "sub/.zgroup", "sub/b/.zarray", "unwritten/.zarray"):
        os.remove(os.path.join(path, doc))
    theirs = zarr.open_consolidated(path, mode="r")
    mine = zarrpp.open_group(path, mode="r")
    assert [n for n, _ in mine.members()] == sorted(theirs.keys()) == ["a", "sub", "unwritten"]
    for name in ("a", "sub/b", "unwritten"):
        assert same(mine[name][...], theirs[name][...]), name
        assert dict(mine[name].attrs) == dict(theirs[name].attrs)
    # converted, to another place and in place: nothing dropped
    zarrpp.convert_to_v3(path, dst=str(tmp_path / "v3.zarr"))
    zarrpp.convert_to_v3(path)
    for where in (str(tmp_path / "v3.zarr"), path):
        v3 = zarrpp.open_group(where, mode="r")
        assert [n for n, _ in v3.members()] == ["a", "sub", "unwritten"]
        for name in ("a", "sub/b", "unwritten"):
            assert v3[name].zarr_format == 3 and same(v3[name][...], theirs[name][...]), (where, name)
        assert v3["a"].attrs["units"] == "m"
