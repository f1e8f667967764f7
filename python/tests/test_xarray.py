"""xarray on zarrpp: the ``engine="zarrpp"`` backend (entry point, dimensions, coordinates, CF
decoding, lazy loading, Zarr v2 datasets written by xarray's own zarr engine) and
zarrpp.xarray.to_zarrpp (encodings, append_dim, prepend_dim, refusals that change nothing)."""
import importlib.metadata
import os

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

import zarrpp  # noqa: E402
import zarrpp.xarray as zx  # noqa: E402
from zarrpp.xarray import ZarrppBackendEntrypoint  # noqa: E402


def _installed():
    try:
        importlib.metadata.distribution("zarrpp")
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


# The installed package registers engine="zarrpp"; from a build tree, pass the class itself.
ENGINE = "zarrpp" if _installed() else ZarrppBackendEntrypoint


def _dataset(start="2021-03-01", n=12, seed=0):
    rng = np.random.default_rng(seed)
    time = pd.date_range(start, periods=n, freq="D")
    temp = rng.normal(280, 5, (n, 3, 4)).astype("f4")
    temp[0, 0, 0] = np.nan
    return xr.Dataset(
        {"temp": (("time", "y", "x"), temp, {"units": "K", "long_name": "air temperature"}),
         "rain": (("time", "x"), rng.random((n, 4)), {"units": "mm"}),
         "flag": (("time",), np.arange(n, dtype="i2"))},
        coords={"time": time, "y": [1.5, 2.5, 3.5], "x": [10, 20, 30, 40],
                "station": (("x",), np.array(["a", "bb", "ccc", "d"], dtype=object)),
                "elev": (("y", "x"), np.arange(12.0).reshape(3, 4), {"units": "m"})},
        attrs={"title": "zarrpp test", "history": "made in a test", "version": 3})


def _files(path):
    out = {}
    for root, _, names in os.walk(path):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, path)] = f.read()
    return out


def test_engine_is_registered_by_the_entry_point():
    if not _installed():
        pytest.skip("the zarrpp distribution is not installed here (ctest's python.pytest runs this in a venv)")
    assert "zarrpp" in xr.backends.list_engines()
    assert isinstance(xr.backends.list_engines()["zarrpp"], ZarrppBackendEntrypoint)


def test_round_trip_with_dimensions_coordinates_attributes_and_cf(tmp_path):
    ds = _dataset()
    ds.temp.encoding = {"chunks": (4, 3, 4), "compressors": zarrpp.codecs.ZstdCodec(level=3)}
    ds.rain.encoding = {"dtype": "i2", "scale_factor": 0.01, "_FillValue": -1}
    zx.to_zarrpp(ds, str(tmp_path / "d.zarr"))
    g = zarrpp.open_group(str(tmp_path / "d.zarr"))
    assert g["temp"].dimension_names == ("time", "y", "x") and g["temp"].chunks == (4, 3, 4)
    assert g["temp"].compressors[0].level == 3
    assert g["rain"].dtype == np.dtype("i2") and g["rain"].attrs["scale_factor"] == 0.01
    assert g["time"].attrs["units"].startswith("days since") and g["time"].dtype.kind == "i"
    # xarray's own encoding of a v3 _FillValue attribute: base64 of the little-endian float64 NaN
    assert g["temp"].attrs["_FillValue"] == "AAAAAAAA+H8="
    out = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ENGINE)
    assert set(out.coords) == {"time", "y", "x", "station", "elev"}
    assert out.temp.dims == ("time", "y", "x") and out.attrs == ds.attrs
    assert out.time.dtype == np.dtype("datetime64[ns]")
    xr.testing.assert_identical(out.drop_vars("rain").load(), ds.drop_vars("rain"))
    np.testing.assert_allclose(out.rain.values, ds.rain.values, atol=0.006)
    assert out.temp.encoding["preferred_chunks"] == {"time": 4, "y": 3, "x": 4}
    # undecoded: the stored numbers
    raw = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ENGINE, decode_times=False, mask_and_scale=False)
    assert raw.rain.dtype == np.dtype("i2") and raw.time.attrs["units"].startswith("days since")


def test_growth_with_missing_times_into_an_encoding_without_a_missing_value_names_the_cause(tmp_path):
    path = str(tmp_path / "t.zarr")
    ds = xr.Dataset({"v": (("time",), np.arange(3.0))}, coords={"time": pd.date_range("2020-01-01", periods=3)})
    ds.time.encoding = {"units": "days since 2020-01-01", "dtype": "int64"}
    zx.to_zarrpp(ds, path)
    before = _files(path)
    more = xr.Dataset({"v": (("time",), [3.0, 4.0])},
                      coords={"time": np.array(["2020-01-04", "NaT"], dtype="datetime64[ns]")})
    with pytest.raises(ValueError, match=r"append_dim: variable 'time': the new values include 1 NaT, which the "
                       r"stored encoding .*'units': 'days since 2020-01-01'.* cannot hold: it has no missing value"):
        zx.to_zarrpp(more, path, append_dim="time")
    assert _files(path) == before
    # fractions of a day are still named as such
    finer = xr.Dataset({"v": (("time",), [3.0])},
                       coords={"time": np.array(["2020-01-04T12:00"], dtype="datetime64[ns]")})
    with pytest.raises(ValueError, match="times finer than the units"):
        zx.to_zarrpp(finer, path, append_dim="time")
    assert _files(path) == before


def test_reads_are_lazy(tmp_path, monkeypatch):
    zx.to_zarrpp(_dataset(n=50), str(tmp_path / "d.zarr"))
    reads = []
    orig = zx.ZarrppBackendArray._read

    def spy(self, key):
        reads.append((self._array.path, key))
        return orig(self, key)

    monkeypatch.setattr(zx.ZarrppBackendArray, "_read", spy)
    out = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ENGINE)
    assert not {"temp", "rain", "flag"} & {path for path, _ in reads}  # no data variable was read
    reads.clear()
    v = out.temp.isel(time=slice(10, 12), x=1).values
    assert v.shape == (2, 3) and len(reads) == 1
    path, key = reads[0]
    assert path == "temp" and key[0] == slice(10, 12, 1) and key[2] == 1
    # with Dask: chunks follow the stored chunks
    lazy = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ENGINE, chunks={})
    assert lazy.temp.chunks is not None
    xr.testing.assert_identical(lazy.load(), out.load())


def test_opens_zarr_v2_datasets_written_by_xarray(tmp_path):
    pytest.importorskip("zarr")
    ds = _dataset()
    ds.to_zarr(str(tmp_path / "v2.zarr"), consolidated=False)  # xarray's own engine, zarr-python 2
    mine = xr.open_dataset(str(tmp_path / "v2.zarr"), engine=ENGINE)
    theirs = xr.open_dataset(str(tmp_path / "v2.zarr"), engine="zarr", consolidated=False)
    xr.testing.assert_identical(mine.load(), theirs.load())
    assert "_ARRAY_DIMENSIONS" not in mine.temp.attrs


def test_zarr_v2_datasets_grow_at_the_end_and_stay_readable_by_xarrays_zarr_engine(tmp_path):
    pytest.importorskip("zarr")
    path = str(tmp_path / "v2.zarr")
    _dataset().to_zarr(path, consolidated=False)
    zx.to_zarrpp(_dataset("2021-03-13", 2, seed=7), path, append_dim="time")
    theirs = xr.open_dataset(path, engine="zarr", consolidated=False).load()
    assert theirs.sizes["time"] == 14 and str(theirs.time.values[-1])[:10] == "2021-03-14"
    xr.testing.assert_identical(xr.open_dataset(path, engine=ENGINE).load(), theirs)
    before = _files(path)
    with pytest.raises(ValueError, match="Zarr v2"):
        zx.to_zarrpp(_dataset("2021-02-13", 2), path, prepend_dim="time")
    # written into in v2, but not resized: the cause named, and growth only as v2 has it
    with pytest.raises(ValueError, match=r"variable '\w+' has different dimension sizes than the stored dataset "
                       r"along 'time': 2 elements, the stored dataset 14 .*give it all 14 elements along 'time', or "
                       r"add these 2 to them with append_dim='time'$"):
        zx.to_zarrpp(_dataset("2021-02-13", 2), path, mode="a")
    with pytest.raises(ValueError, match=r": 16 elements, the stored dataset 14 .*to add 2 elements along "
                       r"'time', write only the new ones, with append_dim='time'$"):
        zx.to_zarrpp(_dataset("2021-02-13", 16), path, mode="a")
    with pytest.raises(ValueError, match="zarr_format=3: the group written into is Zarr v2"):
        zx.to_zarrpp(_dataset("2021-02-13", 14), path, mode="a", zarr_format=3)
    assert _files(path) == before


def test_datasets_in_a_group(tmp_path):
    path = str(tmp_path / "g.zarr")
    zx.to_zarrpp(_dataset(), path, group="runs/a")
    zx.to_zarrpp(_dataset("2021-02-27", 2), path, group="runs/a", prepend_dim="time")
    assert xr.open_dataset(path, engine=ENGINE, group="runs/a").sizes["time"] == 14
    with pytest.raises(zarrpp.errors.ContainsGroupError):
        zx.to_zarrpp(_dataset(), path, group="runs/a")
    with pytest.raises(zarrpp.errors.GroupNotFoundError, match="runs/b"):
        xr.open_dataset(path, engine=ENGINE, group="runs/b")
    with pytest.raises(FileNotFoundError, match="runs/b"):
        zx.to_zarrpp(_dataset(), path, group="runs/b", append_dim="time")


def test_prepended_dataset_has_the_new_coordinate_values(tmp_path):
    path = str(tmp_path / "d.zarr")
    later, earlier = _dataset("2021-03-10", 12, seed=1), _dataset("2021-03-01", 9, seed=2)
    zx.to_zarrpp(later, path)
    opened_before = xr.open_dataset(path, engine=ENGINE)
    zx.to_zarrpp(earlier, path, prepend_dim="time")
    g = zarrpp.open_group(path)
    assert g["temp"].domain[0] == (-9, 12) and g["time"].domain == ((-9, 12),)
    assert g.attrs[zx.DIMENSIONS_ATTR]["time"] == [-9, 12]
    out = xr.open_dataset(path, engine=ENGINE)
    both = xr.concat([earlier, later], "time", data_vars="minimal", coords="minimal", compat="override")
    assert out.time.values[0] == np.datetime64("2021-03-01") and out.sizes["time"] == 21
    xr.testing.assert_identical(out.load(), both)
    # A dataset opened before the growth still shows what it showed (read by coordinates).
    xr.testing.assert_identical(opened_before.load(), later)
    # and appending at the other end
    zx.to_zarrpp(_dataset("2021-03-22", 3, seed=3), path, append_dim="time")
    out = xr.open_dataset(path, engine=ENGINE)
    assert out.sizes["time"] == 24 and str(out.time.values[-1])[:10] == "2021-03-24"
    assert g["time"].attrs["units"] == zarrpp.open_group(path)["time"].attrs["units"]  # the stored encoding


def test_a_reader_between_growth_steps_sees_the_dataset_as_before(tmp_path):
    path = str(tmp_path / "d.zarr")
    ds = _dataset()
    zx.to_zarrpp(ds, path)
    g = zarrpp.open_group(path)
    g["temp"].prepend(np.zeros((2, 3, 4), "f4"))  # one array grown, the others and the extent not yet
    xr.testing.assert_identical(xr.open_dataset(path, engine=ENGINE).load(), ds)


def test_growth_refusals_change_nothing(tmp_path):
    path = str(tmp_path / "d.zarr")
    zx.to_zarrpp(_dataset(), path)
    before = _files(path)
    new = _dataset("2021-02-01", 3, seed=4)
    cases = [
        (new.drop_vars("rain"), "rain"),  # a stored variable would fall behind
        (new.assign(extra=("time", np.zeros(3))), "extra"),  # a variable the store does not have
        (new.assign(flag=("time", np.array([0.5, 1, 2]))), "flag"),  # 0.5 into int16
        (new.assign_coords(time=pd.date_range("2021-02-01", periods=3, freq="h")), "time"),  # finer than days
        (new.isel(x=slice(0, 2)), "dimension 'x' differs"),  # another shape besides time
        (new.rename_dims(time="t"), "time"),
    ]
    for bad, word in cases:
        with pytest.raises(ValueError, match=word):
            zx.to_zarrpp(bad, path, prepend_dim="time")
        assert _files(path) == before, word
    with pytest.raises(ValueError, match="encoding"):
        zx.to_zarrpp(new, path, append_dim="time", encoding={"temp": {"chunks": (1, 3, 4)}})
    with pytest.raises(ValueError, match="not both"):
        zx.to_zarrpp(new, path, append_dim="time", prepend_dim="time")
    with pytest.raises(ValueError, match="unexpected encoding"):
        zx.to_zarrpp(new, str(tmp_path / "e.zarr"), encoding={"temp": {"chunksize": 3}})
    with pytest.raises(zarrpp.errors.ContainsGroupError):
        zx.to_zarrpp(new, path)  # mode "w-" by default
    assert _files(path) == before
    # mode "w" replaces the dataset, but only once everything about the new one was accepted
    with pytest.raises(ValueError, match="shard"):
        zx.to_zarrpp(new, path, mode="w", encoding={"temp": {"chunks": (2, 3, 4), "shards": (3, 3, 4)}})
    with pytest.raises(ValueError, match="does not fit 64 bits"):
        zx.to_zarrpp(new.assign_attrs(bad=2**70), path, mode="w")
    assert _files(path) == before
    zx.to_zarrpp(new, path, mode="w")  # replaces
    assert xr.open_dataset(path, engine=ENGINE).sizes["time"] == 3


def test_dask_backed_datasets_write_in_parallel_and_read_lazily(tmp_path, dask_client):
    ds = _dataset(n=40).chunk({"time": 10})
    zx.to_zarrpp(ds, str(tmp_path / "d.zarr"), encoding={"temp": {"chunks": (5, 3, 4), "shards": (10, 3, 4)}})
    out = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ENGINE, chunks={})
    assert out.temp.chunks[0][0] == 10  # the shard is the preferred chunk
    xr.testing.assert_identical(out.compute(), ds.compute())
    assert float(out.temp.mean().compute()) == pytest.approx(float(ds.temp.mean().compute()))


def test_dask_backed_growth_is_written_by_the_workers_and_undone_on_failure(tmp_path, dask_client):
    path = str(tmp_path / "d.zarr")
    later = _dataset("2021-03-01", 12)
    zx.to_zarrpp(later, path, encoding={"temp": {"chunks": (7, 3, 4)}})
    early = _dataset("2021-02-01", 28, seed=3).chunk({"time": 7})
    zx.to_zarrpp(early, path, prepend_dim="time")
    g = zarrpp.open_group(path)
    assert g["temp"].domain[0] == (-28, 12) and g.attrs[zx.DIMENSIONS_ATTR]["time"] == [-28, 12]
    both = xr.concat([early.compute(), later], "time", data_vars="minimal", coords="minimal", compat="override")
    xr.testing.assert_identical(xr.open_dataset(path, engine=ENGINE).load(), both)
    # A block the stored encoding cannot hold fails on a worker: every array is as it was.
    bad = _dataset("2021-01-01", 14, seed=4).chunk({"time": 7})
    bad["flag"] = bad["flag"].astype("f8") + 0.5
    with pytest.raises(ValueError, match="'flag'"):
        zx.to_zarrpp(bad, path, prepend_dim="time")
    assert {n: z.domain[0] for n, z in g.arrays() if "time" in z.dimension_names} == \
        {"temp": (-28, 12), "rain": (-28, 12), "flag": (-28, 12), "time": (-28, 12)}
    xr.testing.assert_identical(xr.open_dataset(path, engine=ENGINE).load(), both)


def test_s3_datasets(moto_s3):
    opts = {"endpoint_url": moto_s3, "region": "us-east-1", "key": "k", "secret": "s"}
    ds = _dataset()
    zx.to_zarrpp(ds, "s3://bucket/ds", storage_options=opts)
    zx.to_zarrpp(_dataset("2021-02-27", 2, seed=5), "s3://bucket/ds", prepend_dim="time", storage_options=opts)
    out = xr.open_dataset("s3://bucket/ds", engine=ENGINE, storage_options=opts)
    assert out.sizes["time"] == 14 and str(out.time.values[0])[:10] == "2021-02-27"
    xr.testing.assert_identical(out.isel(time=slice(2, None)).load(), ds)


def test_the_worked_example_runs(tmp_path):
    """python/examples/dask_xarray_growth.py, as the README's "Dask and xarray" section runs it."""
    if not _installed():
        pytest.skip("the example uses engine=\"zarrpp\", which needs the installed package (ctest's python.pytest)")
    import subprocess
    import sys
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "dask_xarray_growth.py")
    r = subprocess.run([sys.executable, example, str(tmp_path), "--days", "60"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "now:    164 days, 2023-11-02 .. 2024-04-13" in r.stdout and "every value as computed: True" in r.stdout
    out = xr.open_dataset(str(tmp_path / "weather.zarr"), engine="zarrpp")
    assert out.sizes["time"] == 164 and out.temperature.notnull().all()


def test_writing_into_a_grown_dataset_keeps_coordinates_and_sizes(tmp_path):
    p = str(tmp_path / "a.zarr")
    full = xr.Dataset({"v": ("t", np.arange(8) * 10)}, coords={"t": np.arange(8)})
    zx.to_zarrpp(full.isel(t=slice(3, None)), p)
    zx.to_zarrpp(full.isel(t=slice(0, 3)), p, prepend_dim="t")
    zx.to_zarrpp(xr.Dataset({"w": ("t", np.arange(8))}, coords={"t": np.arange(8)}), p, mode="a")
    out = xr.open_dataset(p, engine=ENGINE).load()
    assert out.sizes["t"] == 8 and out.v.values.tolist() == list(range(0, 80, 10)) and \
        out.w.values.tolist() == list(range(8))
    before = _files(p)
    with pytest.raises(ValueError, match="'b' has different dimension sizes .*: 3 elements, the stored dataset 8"):
        zx.to_zarrpp(xr.Dataset({"b": ("t", np.arange(3))}), p, mode="a")
    assert _files(p) == before


def test_writes_into_a_zarr_v2_store_are_zarr_v2_and_v3_ones_are_refused(tmp_path):
    pytest.importorskip("zarr")
    q = str(tmp_path / "v2.zarr")
    ds = xr.Dataset({"v": ("t", np.arange(5.0))})
    ds.to_zarr(q, group="g")
    before = _files(q)
    for mode, group in (("w", "g"), ("a", "h"), ("a", "g")):
        with pytest.raises(ValueError, match="Zarr v2"):
            zx.to_zarrpp(ds, q, group=group, mode=mode, zarr_format=3)
        assert _files(q) == before, (mode, group)
    for mode, group in (("w", "g"), ("a", "h")):  # by default, the store's format
        zx.to_zarrpp(ds * 2, q, group=group, mode=mode)
        back = xr.open_dataset(q, group=group, engine="zarr", consolidated=False)
        xr.testing.assert_identical(back.load(), ds * 2)
        assert zarrpp.open_group(q)[group].zarr_format == 2


def test_growth_refuses_values_the_stored_dtype_would_change(tmp_path):
    p = str(tmp_path / "b.zarr")
    zx.to_zarrpp(xr.Dataset({"v": ("t", np.array([1.0, 2.0], "f4"))}), p)
    before = _files(p)
    for bad in (np.array([1e300, 1.0]), np.array([2 ** 40 + 1, 16777217])):
        with pytest.raises(ValueError, match="'v'"):
            zx.to_zarrpp(xr.Dataset({"v": ("t", bad)}), p, append_dim="t")
        assert _files(p) == before
    zx.to_zarrpp(xr.Dataset({"v": ("t", np.array([0.1, 2.0 ** 40]))}), p, append_dim="t")  # rounding to f4 only
    assert xr.open_dataset(p, engine=ENGINE).sizes["t"] == 4


@pytest.mark.skipif(not _installed(), reason="engine guessing needs the installed entry point")
def test_open_dataset_guesses_zarrpp_for_a_v3_store(tmp_path):
    """Without engine=: a zarrpp-written (v3) store opens with zarrpp's engine, with or without the
    .zarr suffix (xarray's zarr engine on zarr-python 2 would fail on it); a v2 store xarray wrote
    still goes to xarray's own engine. docs/guide/python.md says so."""
    from xarray.backends.plugins import guess_engine
    ds = xr.Dataset({"t": ("x", np.arange(4.0))})
    zx.to_zarrpp(ds, str(tmp_path / "plain"), mode="w")
    zx.to_zarrpp(ds, str(tmp_path / "suffixed.zarr"), mode="w")
    ds.to_zarr(str(tmp_path / "theirs.zarr"), mode="w")
    for name in ("plain", "suffixed.zarr"):
        assert guess_engine(str(tmp_path / name)) == "zarrpp"
        assert xr.open_dataset(str(tmp_path / name))["t"].values.tolist() == [0, 1, 2, 3]
    (tmp_path / "suffixed.zarr" / ".zgroup").write_text('{"zarr_format": 2}')  # as an interrupted conversion leaves
    assert guess_engine(str(tmp_path / "suffixed.zarr")) == "zarrpp"  # zarr.json is what the group is
    assert ZarrppBackendEntrypoint().guess_can_open(os.fsencode(str(tmp_path / "plain")))
    assert guess_engine(str(tmp_path / "theirs.zarr")) == "zarr"
    assert guess_engine(str(tmp_path / "missing.zarr")) == "zarr"  # its own message for a missing path


def _labelled(start="2021-03-01", n=4, seed=0):
    """Fixed-width strings (a string coordinate, bytes), CF times and durations: what xarray stores
    as NumPy U<n>, S<n> and int64 with units in Zarr v2."""
    rng = np.random.default_rng(seed)
    return xr.Dataset(
        {"t2m": (("time", "site"), rng.normal(280, 5, (n, 3)), {"units": "K"}),
         "code": (("site",), np.array([b"PAR", b"LY", b"NC\x00E"])),
         "lead": (("time",), (np.arange(n) * 3).astype("m8[h]"))},
        coords={"site": ["paris", "lyon", "nicé"], "time": pd.date_range(start, periods=n, freq="D")})


def _same_as_xarrays_zarr_engine(mine_path, theirs_path):
    """Identical, eager and lazy, decoded or not."""
    for kw in ({}, {"chunks": {}}):
        for decode in ({}, {"decode_times": False}, {"mask_and_scale": False}):
            theirs = xr.open_dataset(theirs_path, engine="zarr", consolidated=False, **kw, **decode).load()
            mine = xr.open_dataset(mine_path, engine=ENGINE, **kw, **decode).load()
            xr.testing.assert_identical(mine, theirs)


def test_string_coordinates_bytes_and_times_read_as_xarrays_zarr_engine_reads_them(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "v2.zarr")
    _labelled().to_zarr(path, consolidated=False)
    _same_as_xarrays_zarr_engine(path, path)
    mine = xr.open_dataset(path, engine=ENGINE)
    assert mine.site.dtype == np.dtype("<U5") and mine.code.dtype == np.dtype("S4")
    assert float(mine.sel(site="paris").t2m[0]) == float(_labelled().t2m[0, 0])  # the labels index
    # grown at the end: the string coordinate is part of the stored dataset
    zx.to_zarrpp(_labelled("2021-03-05", 2, seed=1).drop_vars("code"), path, append_dim="time")
    assert xr.open_dataset(path, engine=ENGINE).sizes["time"] == 6
    # raw datetime64 (zarr-python 2 stores NumPy's dtype as it is), NaT as the fill value
    g = zarr.open_group(path, mode="r+")
    raw = g.create("stamp", shape=(6,), chunks=(4,), dtype="<M8[ms]", fill_value=np.datetime64("NaT"))
    raw[:2] = np.array(["2021-03-01T12:00", "NaT"], dtype="M8[ms]")
    raw.attrs["_ARRAY_DIMENSIONS"] = ["time"]
    assert xr.open_dataset(path, engine=ENGINE).stamp.dtype.kind == "M"
    fill = xr.open_dataset(path, engine=ENGINE, mask_and_scale=False).stamp.attrs["_FillValue"]
    assert isinstance(fill, np.datetime64) and np.isnat(fill)  # as engine="zarr" gives it, not None
    _same_as_xarrays_zarr_engine(path, path)
    # converted to v3: read with engine="zarrpp" as the v2 original reads with engine="zarr"
    v3 = str(tmp_path / "v3.zarr")
    notes = zarrpp.convert_to_v3(path, dst=v3)["notes"]
    assert any("stamp: its fill value is xarray's missing value, kept as the attribute _FillValue" in n
               for n in notes), notes
    _same_as_xarrays_zarr_engine(v3, path)  # _FillValue (NaT) kept: it was dropped before


def test_object_variables_with_missing_chunks_read_as_xarrays_zarr_engine_reads_them(tmp_path):
    """Object (str/bytes) variables whose chunks are partly missing: zarr-python 2 reads the missing
    elements as .zarray's fill value (0 by default, None as xarray writes them), which xarray then
    masks (0) or keeps (None)."""
    zarr = pytest.importorskip("zarr")
    import numcodecs
    import warnings
    path = str(tmp_path / "v2.zarr")
    xr.Dataset({"s": (("x",), np.array(["a", "bb", "c", "d"], dtype=object))}).to_zarr(
        path, consolidated=False, encoding={"s": {"chunks": (2,)}})
    g = zarr.open_group(path, mode="r+")
    for name, codec, kw in [("zero", numcodecs.VLenUTF8(), {}), ("none", numcodecs.VLenUTF8(), {"fill_value": None}),
                            ("blob", numcodecs.VLenBytes(), {"fill_value": None})]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = g.create(name, shape=(4,), chunks=(2,), dtype=object, object_codec=codec, **kw)
            a[:1] = ["p"] if name != "blob" else [b"p"]
        a.attrs["_ARRAY_DIMENSIONS"] = ["x"]
    theirs = xr.open_dataset(path, engine="zarr", consolidated=False)
    assert theirs.zero.values[3] != theirs.zero.values[3] and theirs.none.values[3] is None  # NaN, None
    _same_as_xarrays_zarr_engine(path, path)


def test_non_finite_attributes_and_reserved_looking_names_as_xarrays_zarr_engine(tmp_path):
    """NaN / Infinity attributes are written as xarray's to_zarr writes them; a variable named
    "__v" (reserved in Zarr v3 only) reads in a v2 store, and converting that store is refused."""
    pytest.importorskip("zarr")
    ds = xr.Dataset({"__v": (("x",), [1.0, 2.0]), "w": (("x",), [3.0, 4.0], {"lo": float("-inf")})},
                    attrs={"nan": float("nan"), "inf": float("inf")})
    theirs, mine = str(tmp_path / "theirs.zarr"), str(tmp_path / "mine.zarr")
    ds.to_zarr(theirs, consolidated=False)
    zx.to_zarrpp(ds, mine, zarr_format=2)
    _same_as_xarrays_zarr_engine(theirs, theirs)
    _same_as_xarrays_zarr_engine(mine, theirs)
    before = _files(theirs)
    with pytest.raises(ValueError, match="'__v'.*reserves names starting with '__'.*nothing was converted"):
        zarrpp.convert_to_v3(theirs)
    assert _files(theirs) == before


def test_conversion_keeps_xarrays_missing_values(tmp_path):
    """xarray reads a v2 array's fill value as its missing value (a packed int16 with _FillValue,
    a float with NaN); a v3 array's from the _FillValue attribute, in xarray's encoding, which the
    conversion writes. Expectations written by hand from xarray's FillValueCoder."""
    pytest.importorskip("zarr")
    path, v3 = str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr")
    temp = np.array([280.5, np.nan, 290.25, 300.0])
    ds = xr.Dataset({"temp": (("x",), temp), "level": (("x",), np.array([1.5, np.nan, 3.0, 4.0]))})
    ds.temp.encoding = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768}
    ds.to_zarr(path, consolidated=False)
    zarrpp.convert_to_v3(path, dst=v3)
    attrs = zarrpp.open_group(v3)["temp"].attrs
    assert attrs["_FillValue"] == -32768 and attrs["scale_factor"] == 0.01
    assert zarrpp.open_group(v3)["level"].attrs["_FillValue"] == "AAAAAAAA+H8="  # base64 of the float64 NaN
    mine = xr.open_dataset(v3, engine=ENGINE)
    assert np.isnan(mine.temp.values[1]) and mine.temp.values[0] == pytest.approx(280.5)
    _same_as_xarrays_zarr_engine(v3, path)


def test_conversion_to_v3_and_back_reads_identically_in_xarray(tmp_path):
    """A dataset xarray wrote to v2 (consolidated, with variables that have no missing value, whose
    .zarray fill value is null), converted to v3 and back: xarray reads the same dataset, and the
    .zarray documents are xarray's own again but for the dimension_separator zarrpp states."""
    pytest.importorskip("zarr")
    import json
    path, v3, back = str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr"), str(tmp_path / "back.zarr")
    ds = _dataset()
    ds.temp.encoding = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768}
    ds.to_zarr(path)
    zarrpp.convert_to_v3(path, dst=v3)
    zarrpp.convert_to_v2(v3, dst=back)
    xr.testing.assert_identical(xr.open_dataset(back, engine="zarr"), xr.open_dataset(path, engine="zarr"))
    for name in ["temp", "rain", "flag", "time", "station"]:
        want = json.load(open(os.path.join(path, name, ".zarray")))
        got = json.load(open(os.path.join(back, name, ".zarray")))
        got.pop("dimension_separator")
        want.pop("dimension_separator", None)
        assert got == want, name
    assert json.load(open(os.path.join(back, ".zmetadata")))["metadata"].keys() == \
        json.load(open(os.path.join(path, ".zmetadata")))["metadata"].keys()
    # In place too: the converted v3 store goes back as it came (its chunk keys are v2 keys).
    zarrpp.convert_to_v2(v3)
    xr.testing.assert_identical(xr.open_dataset(v3, engine="zarr"), xr.open_dataset(path, engine="zarr"))


def test_to_zarrpp_writes_zarr_v2_as_xarrays_zarr_engine_does(tmp_path):
    """zarr_format=2: the same .zarray documents xarray's own engine writes (dtype, fill value as
    the missing value or null, _ARRAY_DIMENSIONS), read identically by both engines, and grown."""
    pytest.importorskip("zarr")
    ds = _labelled()
    ds["t2m"][1, 1] = np.nan
    ds.t2m.encoding = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768}
    ds["station"] = (("site",), np.array(["a", "bb", "ccc"], dtype=object))
    mine, theirs = str(tmp_path / "mine.zarr"), str(tmp_path / "theirs.zarr")
    zx.to_zarrpp(ds, mine, zarr_format=2)
    ds.to_zarr(theirs, consolidated=False)
    import json
    for name in ds.variables:
        with open(os.path.join(mine, name, ".zarray")) as f, open(os.path.join(theirs, name, ".zarray")) as g:
            a, b = json.load(f), json.load(g)
        assert (a["dtype"], a["fill_value"], a["shape"]) == (b["dtype"], b["fill_value"], b["shape"]), name
    _same_as_xarrays_zarr_engine(mine, theirs)
    for kw in ({}, {"chunks": {}}):  # xarray's own engine reads zarrpp's v2 as its own
        xr.testing.assert_identical(xr.open_dataset(mine, engine="zarr", consolidated=False, **kw).load(),
                                    xr.open_dataset(theirs, engine="zarr", consolidated=False, **kw).load())
    assert zarrpp.open_group(mine).zarr_format == 2
    # grown at the end, by zarrpp, into the v2 dataset; and a v2 group is written in v2 by default
    more = _labelled("2021-03-05", 2, seed=1).drop_vars("code")
    zx.to_zarrpp(more, mine, append_dim="time")
    grown = xr.open_dataset(mine, engine="zarr", consolidated=False)
    assert grown.sizes["time"] == 6 and str(grown.time.values[-1])[:10] == "2021-03-06"
    zx.to_zarrpp(xr.Dataset({"extra": (("site",), np.arange(3.0))}), mine, mode="a")
    assert zarrpp.open_group(mine)["extra"].zarr_format == 2
    with pytest.raises(ValueError, match="zarr_format=3: the group written into is Zarr v2"):
        zx.to_zarrpp(xr.Dataset({"more": (("site",), np.arange(3.0))}), mine, mode="a", zarr_format=3)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("stored", ["i1", "i2", "i4"])
def test_unsigned_held_in_encoding_reads_back_unsigned(tmp_path, zarr_format, stored):
    # Issue 70, class 1: _Unsigned in a variable's encoding stores unsigned values in a signed type
    # and marks it, as xarray's CF encoding does (it used to be dropped: 200 read back as -56).
    width = np.dtype(stored).itemsize * 8
    values = np.array([0, 1, 2 ** (width - 1), 2 ** width - 1], dtype=f"u{width // 8}")
    ds = xr.Dataset({"v": ("x", values)})
    ds["v"].encoding = {"_Unsigned": "true", "dtype": stored}
    path = str(tmp_path / "u.zarr")
    zx.to_zarrpp(ds, path, zarr_format=zarr_format)
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    np.testing.assert_array_equal(back["v"].values, values)
    assert back["v"].dtype == values.dtype
    assert zarrpp.open_group(path)["v"].dtype == np.dtype(stored)  # stored signed, as xarray stores it
    if zarr_format == 2:  # xarray's own engine reads the same
        theirs = xr.open_dataset(path, engine="zarr", consolidated=False).load()
        np.testing.assert_array_equal(theirs["v"].values, values)
    # growth keeps the stored encoding: more unsigned values stay unsigned
    more = xr.Dataset({"v": ("x", values[::-1].copy())})
    zx.to_zarrpp(more, path, append_dim="x")
    grown = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    np.testing.assert_array_equal(grown["v"].values, np.concatenate([values, values[::-1]]))


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("fill", [b"X", b"n/a", b"\x00\xff"])
def test_bytes_fill_value_masks_what_it_stood_for(tmp_path, zarr_format, fill):
    # Issue 70, class 2: a bytes _FillValue is stored as xarray stores it (v2: the S<n> array's
    # fill value; v3: base64 in the _FillValue attribute), so the missing elements read back missing.
    values = np.array([b"ab", b"cdef", np.nan, b"g"], dtype=object)
    ds = xr.Dataset({"x": ("t", values, {}, {"_FillValue": fill})})
    path = str(tmp_path / "b.zarr")
    zx.to_zarrpp(ds, path, zarr_format=zarr_format)
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    assert list(back["x"].values[[0, 1, 3]]) == [b"ab", b"cdef", b"g"]
    assert back["x"].isnull().values.tolist() == [False, False, True, False]
    if zarr_format == 2:  # xarray's own engine reads the same
        theirs = xr.open_dataset(path, engine="zarr", consolidated=False).load()
        assert theirs["x"].isnull().values.tolist() == [False, False, True, False]


def test_a_bytes_fill_attribute_that_is_not_base64_is_refused(tmp_path):
    # zarrpp wrote a v3 bytes variable's _FillValue as text before: which elements it meant is unknown.
    path = str(tmp_path / "old.zarr")
    zx.to_zarrpp(xr.Dataset({"x": ("t", np.array([b"a", b"b"], dtype=object))}), path, zarr_format=3)
    zarrpp.open_group(path, mode="r+")["x"].attrs["_FillValue"] = "X!"
    with pytest.raises(ValueError, match="not base64"):
        xr.open_dataset(path, engine=ZarrppBackendEntrypoint)


def test_the_private_xarray_helpers_zarrpp_relies_on():
    # xarray.backends.zarr.encode_zarr_variable is not public API: this pins what the writer needs
    # of it (CF encoding, text with dtype S1 as bytes marked _Encoding, bytes objects as S<n>).
    from xarray.backends.zarr import encode_zarr_variable
    text = xr.Variable(("t",), np.array(["ab", "cdef"], dtype=object), encoding={"dtype": "S1"})
    encoded = encode_zarr_variable(text, name="x")
    assert encoded.dtype.kind == "S" and encoded.attrs["_Encoding"] == "utf-8"
    raw = xr.Variable(("t",), np.array([b"ab", b"cdef", np.nan], dtype=object), encoding={"_FillValue": b"X"})
    encoded = encode_zarr_variable(raw, name="y")
    assert encoded.dtype == np.dtype("S4") and encoded.attrs["_FillValue"] == b"X"
    assert encoded.values.tolist() == [b"ab", b"cdef", b"X"]
    unsigned = xr.Variable(("t",), np.array([200], dtype="u1"), encoding={"_Unsigned": "true", "dtype": "i1"})
    encoded = encode_zarr_variable(unsigned, name="z")
    assert encoded.dtype == np.dtype("i1") and encoded.attrs["_Unsigned"] == "true"
    # names: xarray.backends.api._validate_dataset_names, xarray.backends.common's name coding
    from xarray.backends.api import _validate_dataset_names
    from xarray.backends.common import _decode_variable_name, _encode_variable_name
    with pytest.raises(TypeError, match="Invalid name 0"):
        _validate_dataset_names(xr.Dataset({0: ("x", [1])}))
    assert _encode_variable_name(None) == "__values__" and _decode_variable_name("__values__") is None
    assert _encode_variable_name("a") == "a" and _decode_variable_name("a") == "a"
    # Dask blocks against Zarr chunks: xarray.backends.zarr._determine_zarr_chunks
    from xarray.backends.zarr import _determine_zarr_chunks
    assert _determine_zarr_chunks(None, ((4, 4, 2),), 1, "v", True) == (4,)
    assert _determine_zarr_chunks((2,), ((4, 4, 2),), 1, "v", True) == (2,)
    with pytest.raises(NotImplementedError, match="would overlap"):
        _determine_zarr_chunks((3,), ((4, 4, 2),), 1, "v", True)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", [0, (4, 5), True, 1.5, b"x", ""])
def test_names_xarray_refuses_are_refused_before_anything_is_written(tmp_path, zarr_format, name):
    # Issue 70, class 4: a variable name that is not text (or is empty) is refused as xarray refuses
    # it, naming it, and nothing is written (it used to be turned into text silently).
    path = tmp_path / "n.zarr"
    ds = xr.Dataset({name: ("x", np.arange(3))})
    with pytest.raises((TypeError, ValueError), match="Invalid name"):
        zx.to_zarrpp(ds, str(path), zarr_format=zarr_format)
    assert not path.exists()


def test_a_variable_named_none_round_trips_on_v2_and_is_refused_on_v3(tmp_path):
    ds = xr.Dataset({None: (("x", "y"), [[0, 1], [2, 3]])})
    path = str(tmp_path / "v2.zarr")
    zx.to_zarrpp(ds, path, zarr_format=2)  # stored as xarray stores it: "__values__"
    assert list(zarrpp.open_group(path).array_keys()) == ["__values__"]
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    assert list(back.data_vars) == [None]
    xr.testing.assert_identical(back, ds)
    theirs = xr.open_dataset(path, engine="zarr", consolidated=False).load()  # xarray's own engine
    assert list(theirs.data_vars) == [None]
    with pytest.raises(ValueError, match="Zarr v3 reserves"):
        zx.to_zarrpp(ds, str(tmp_path / "v3.zarr"), zarr_format=3)
    assert not (tmp_path / "v3.zarr").exists()


def _cf_keys_dataset():
    ds = xr.Dataset(
        {"tas": (("lat", "lon"), np.arange(6.0).reshape(2, 3))},
        coords={"lat": ("lat", [10.0, 20.0]), "lon": ("lon", [1.0, 2.0, 3.0]),
                "cell_area": (("lat", "lon"), np.ones((2, 3)), {"units": "m2"}),
                "lat_bounds": (("lat", "nv"), [[5.0, 15.0], [15.0, 25.0]]),
                "crs": ((), 0, {"grid_mapping_name": "latitude_longitude"}),
                "level": ((), 3.0), "p0": ((), 1000.0)})
    ds["tas"].encoding.update({"grid_mapping": "crs", "cell_measures": "area: cell_area"})
    ds["lat"].encoding.update({"bounds": "lat_bounds"})
    ds["level"].encoding.update({"formula_terms": "p0: p0"})
    return ds


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_cf_keys_held_in_encoding_are_written_as_xarray_writes_them(tmp_path, zarr_format):
    # Issue 70, class 3: bounds, grid_mapping, cell_measures and formula_terms held in encoding
    # become the variables' attributes, never a global "coordinates" list that turns the bounds
    # into coordinates on reading.
    ds = _cf_keys_dataset()
    path = str(tmp_path / "cf.zarr")
    zx.to_zarrpp(ds, path, zarr_format=zarr_format)
    g = zarrpp.open_group(path)
    assert g["lat"].attrs["bounds"] == "lat_bounds"
    assert g["tas"].attrs["grid_mapping"] == "crs" and g["tas"].attrs["cell_measures"] == "area: cell_area"
    assert g["level"].attrs["formula_terms"] == "p0: p0"
    assert "coordinates" not in g.attrs or "lat_bounds" not in g.attrs["coordinates"]
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint, decode_coords="all").load()
    xr.testing.assert_identical(back, ds)
    if zarr_format == 2:  # the same attributes as xarray's own engine writes
        ds.to_zarr(str(tmp_path / "theirs.zarr"), consolidated=False)
        theirs = zarrpp.open_group(str(tmp_path / "theirs.zarr"))
        assert dict(theirs.attrs) == {k: v for k, v in g.attrs.items() if not k.startswith("_zarrpp")}
        for name in ds.variables:
            assert dict(theirs[str(name)].attrs) == dict(g[str(name)].attrs), name


def test_lazy_outer_indexing_matches_numpy(tmp_path):
    # xarray's lazy (non-Dask) indexing with lists on several dimensions at once, and the backend
    # array exposing no "array" attribute that xarray would take for a wrapped NumPy array.
    data = np.arange(60.0).reshape(3, 4, 5)
    ds = xr.Dataset({"v": (("x", "y", "z"), data)})
    path = str(tmp_path / "o.zarr")
    zx.to_zarrpp(ds, path)
    with xr.open_dataset(path, engine=ZarrppBackendEntrypoint) as back:
        inner = back["v"].variable._data
        while not isinstance(inner, zx.ZarrppBackendArray):
            inner = inner.array
        assert not hasattr(inner, "array")
        got = back.isel(x=[2, 0], y=[1, 3, 1], z=slice(1, 4))["v"].values
    np.testing.assert_array_equal(got, data[[2, 0]][:, [1, 3, 1]][:, :, 1:4])


def test_v2_codecs_in_encoding_as_xarrays_engine_shows_them_and_written_again(tmp_path):
    import numcodecs
    ds = xr.Dataset({"v": ("x", np.arange(100.0))})
    ds.to_zarr(str(tmp_path / "a.zarr"), consolidated=False,
               encoding={"v": {"compressor": numcodecs.Zlib(level=3), "filters": [numcodecs.Delta("f8")]}})
    ours = xr.open_dataset(str(tmp_path / "a.zarr"), engine=ZarrppBackendEntrypoint)
    theirs = xr.open_dataset(str(tmp_path / "a.zarr"), engine="zarr", consolidated=False)
    for key in ("compressor", "filters"):
        assert ours["v"].encoding[key] == theirs["v"].encoding[key], key
    zx.to_zarrpp(ours, str(tmp_path / "b.zarr"), zarr_format=2)  # written again with the same codecs
    again = zarrpp.open_array(str(tmp_path / "b.zarr"), path="v")
    assert again.metadata["compressor"] == {"id": "zlib", "level": 3}
    assert again.metadata["filters"] == [numcodecs.Delta("f8").get_config()]
    # a v3 array shows zarr-python 3's form
    zx.to_zarrpp(ds, str(tmp_path / "c.zarr"), zarr_format=3)
    v3 = xr.open_dataset(str(tmp_path / "c.zarr"), engine=ZarrppBackendEntrypoint)
    assert "compressors" in v3["v"].encoding and "compressor" not in v3["v"].encoding


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_mode_a_keeps_a_stored_variables_dimensions_and_encoding(tmp_path, zarr_format):
    # As xarray's to_zarr: into an existing dataset, a variable may not change its dimensions or
    # take a new encoding (it used to be replaced silently); nothing changes when refused.
    path = tmp_path / "a.zarr"
    zx.to_zarrpp(xr.Dataset({"foo": ("x", [1, 2])}), str(path), zarr_format=zarr_format)
    before = _files(str(path))
    with pytest.raises(ValueError, match=r"'foo' already exists with different dimension names \('x',\) != \('y',\)"):
        zx.to_zarrpp(xr.Dataset({"foo": ("y", [3, 4])}), str(path), mode="a")
    with pytest.raises(ValueError, match="'foo' already exists, but encoding was provided"):
        zx.to_zarrpp(xr.Dataset({"foo": ("x", [3, 4])}), str(path), mode="a", encoding={"foo": {"dtype": "f4"}})
    with pytest.raises(ValueError, match=r"non-pre-existing variables \['bar'\]"):
        zx.to_zarrpp(xr.Dataset({"bar": ("x", [3, 4])}), str(path), mode="r+")
    with pytest.raises(TypeError, match=r"Invalid attribute in Dataset.attrs."):
        zx.to_zarrpp(xr.Dataset({"foo": ("x", [3, 4])}, attrs={"bad": object()}), str(path), mode="a")
    assert _files(str(path)) == before
    zx.to_zarrpp(xr.Dataset({"foo": ("x", [3, 4])}), str(path), mode="a")  # same dimensions: overwritten
    assert xr.open_dataset(str(path), engine=ZarrppBackendEntrypoint)["foo"].values.tolist() == [3, 4]


def _documents(path):
    """Every metadata document under ``path`` with its bytes (zarr.json, .zarray, .zattrs, ...)."""
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            if f in ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"):
                with open(os.path.join(root, f), "rb") as fh:
                    out[os.path.relpath(os.path.join(root, f), path)] = fh.read()
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_compute_false_then_region_writes_change_no_metadata(tmp_path, zarr_format):
    # xarray's two-step pattern: compute=False writes the metadata, then each part is written with
    # region=; the parts change no metadata document (workers never contend on it).
    ds = xr.Dataset({"u": (("t", "x"), np.arange(40.0).reshape(10, 4), {"units": "m"}),
                     "c": ("t", np.arange(10) * 2)},
                    coords={"t": np.arange(10), "x": [1, 2, 3, 4]}, attrs={"title": "parts"})
    path = str(tmp_path / "r.zarr")
    delayed = zx.to_zarrpp(ds.chunk({"t": 2}), path, zarr_format=zarr_format, compute=False)
    assert hasattr(delayed, "compute")  # never computed: the region writes bring the data
    before = _documents(path)
    assert before  # the metadata is there at once, and the index coordinates (in memory)
    assert xr.open_dataset(path, engine=ZarrppBackendEntrypoint)["x"].values.tolist() == [1, 2, 3, 4]
    for i in range(0, 10, 2):
        part = ds.isel(t=slice(i, i + 2)).drop_vars(["x"])
        zx.to_zarrpp(part, path, region={"t": slice(i, i + 2)})
    assert _documents(path) == before
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    xr.testing.assert_identical(back, ds)
    # "auto" finds the part from the stored coordinate; a part not in it is refused
    zx.to_zarrpp((ds.isel(t=slice(4, 7)) * 0).drop_vars(["x"]), path, region="auto")
    assert xr.open_dataset(path, engine=ZarrppBackendEntrypoint)["c"].values.tolist()[3:8] == [6, 0, 0, 0, 14]
    with pytest.raises(KeyError, match="contiguous"):
        zx.to_zarrpp(ds.isel(t=[1, 5]).drop_vars(["x"]), path, region="auto")
    with pytest.raises(ValueError, match=r"drop_vars\(\['x'\]\)"):
        zx.to_zarrpp(ds.isel(t=slice(0, 2)), path, region={"t": slice(0, 2)})
    with pytest.raises(ValueError, match="cannot set region unless"):
        zx.to_zarrpp(ds, path, region={"t": slice(None)}, mode="w")
    assert _documents(path) == before


def test_region_writes_from_dask_and_into_a_dataset_grown_in_front(tmp_path):
    ds = xr.Dataset({"u": ("t", np.arange(6.0))}, coords={"t": np.arange(6)})
    path = str(tmp_path / "g.zarr")
    zx.to_zarrpp(ds, path, encoding={"u": {"chunks": (2,)}})
    zx.to_zarrpp(xr.Dataset({"u": ("t", [-2.0, -1.0])}, coords={"t": [-2, -1]}), path, prepend_dim="t")
    # region indices count from the dataset's first element, as xarray's do
    part = xr.Dataset({"u": ("t", np.array([10.0, 11.0, 12.0]))}).chunk(2)
    with pytest.raises(ValueError, match="cuts a stored chunk"):  # it ends inside a chunk
        zx.to_zarrpp(part, path, region={"t": slice(0, 3)})
    zx.to_zarrpp(part, path, region={"t": slice(0, 3)}, safe_chunks=False)
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    assert back["u"].values.tolist() == [10.0, 11.0, 12.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert back["t"].values.tolist() == [-2, -1, 0, 1, 2, 3, 4, 5]


def test_straddling_dask_blocks_are_refused_unless_safe_chunks_false_and_then_lose_nothing(tmp_path):
    # xarray's rule (safe_chunks=True): Dask blocks that straddle the Zarr chunks given in encoding
    # are refused before anything is written; with safe_chunks=False zarrpp's partial-chunk writes
    # (conditional on a local folder) still lose nothing, which xarray cannot promise.
    data = np.arange(40.0)
    ds = xr.Dataset({"v": ("x", data)}).chunk({"x": (3, 7, 5, 9, 16)})
    ds["v"].encoding["chunks"] = (4,)
    path = tmp_path / "s.zarr"
    with pytest.raises(NotImplementedError, match="would overlap multiple dask chunks"):
        zx.to_zarrpp(ds, str(path))
    assert not path.exists()
    zx.to_zarrpp(ds, str(path), safe_chunks=False)
    back = xr.open_dataset(str(path), engine=ZarrppBackendEntrypoint).load()
    assert back["v"].values.tolist() == data.tolist()


@pytest.mark.parametrize("layout", ["v3-sharded", "v3", "v2"])
def test_a_cluster_writes_one_dataset_in_regions_then_grows_it(tmp_path, dask_client, layout):
    # xarray's two-step pattern on worker processes: compute=False writes the metadata, each task
    # writes its region (aligned and unaligned with the chunks), then growth at both ends (v3) or
    # the end (v2); read back equal, by zarrpp and (v2) by xarray's own engine.
    fmt = 2 if layout == "v2" else 3
    n = 24
    ds = xr.Dataset({"temp": (("time", "x"), np.arange(n * 3, dtype="f8").reshape(n, 3))},
                    coords={"time": np.arange(n), "x": [10, 20, 30]}, attrs={"title": "cluster"})
    enc = {"temp": {"chunks": (4, 3)}}
    if layout == "v3-sharded":
        enc["temp"]["shards"] = (8, 3)
    path = str(tmp_path / "c.zarr")
    ds.chunk({"time": 4}).zarrpp.to_zarr(path, compute=False, zarr_format=fmt, encoding=enc)
    edges = [0, 4, 8, 11, 17, 24]  # the last three regions cut chunks
    parts = [ds.isel(time=slice(a, b)).drop_vars("x") for a, b in zip(edges, edges[1:])]

    def write(part, a, b):
        import zarrpp.xarray as zxw
        zxw.to_zarrpp(part, path, region={"time": slice(a, b)})
        return b - a

    futures = [dask_client.submit(write, p, a, b, pure=False) for p, a, b in zip(parts, edges, edges[1:])]
    assert sum(dask_client.gather(futures)) == n
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    xr.testing.assert_identical(back, ds)
    later = ds.isel(time=slice(0, 4)).assign_coords(time=np.arange(n, n + 4))
    zx.to_zarrpp(later, path, append_dim="time")
    expected = xr.concat([ds, later], dim="time")
    if fmt == 3:
        earlier = ds.isel(time=slice(0, 2)).assign_coords(time=[-2, -1])
        zx.to_zarrpp(earlier, path, prepend_dim="time")
        expected = xr.concat([earlier, expected], dim="time")
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    xr.testing.assert_identical(back, expected)
    if fmt == 2:
        theirs = xr.open_dataset(path, engine="zarr").load()
        xr.testing.assert_identical(theirs, expected)


def test_dask_regions_that_cut_chunks_need_safe_chunks_false_and_then_lose_nothing(tmp_path, dask_client):
    # Two tasks writing regions that share a chunk: refused by default (newer xarray's rule for
    # regions), written with safe_chunks=False, where zarrpp's conditional partial-chunk writes keep
    # both parts (a LocalCluster's worker processes write them at once).
    n = 40
    ds = xr.Dataset({"v": ("t", np.zeros(n))}, coords={"t": np.arange(n)})
    path = str(tmp_path / "u.zarr")
    zx.to_zarrpp(ds, path, encoding={"v": {"chunks": (8,)}})
    part = xr.Dataset({"v": ("t", np.arange(5.0, 15.0))}).chunk(5)
    with pytest.raises(ValueError, match="cuts a stored chunk"):
        zx.to_zarrpp(part, path, region={"t": slice(5, 15)})
    edges = [0, 5, 13, 21, 30, 37, 40]  # none but the ends on a chunk boundary
    values = np.arange(n, dtype="f8") + 1
    writes = [zx.to_zarrpp(xr.Dataset({"v": ("t", values[a:b])}).chunk(3), path, region={"t": slice(a, b)},
                           safe_chunks=False, compute=False) for a, b in zip(edges, edges[1:])]
    dask_client.compute(writes, sync=True)
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    assert back["v"].values.tolist() == values.tolist()


def test_unaligned_dask_regions_are_refused_on_stores_that_cannot_condition_writes():
    from conftest import PlainMapping
    store = PlainMapping()
    zx.to_zarrpp(xr.Dataset({"v": ("t", np.zeros(20))}), store, encoding={"v": {"chunks": (10,)}})
    before = dict(store.d)
    part = xr.Dataset({"v": ("t", np.ones(7))}).chunk(7)
    with pytest.raises(ValueError, match="cannot condition a write on what is stored"):
        zx.to_zarrpp(part, store, region={"t": slice(3, 10)}, safe_chunks=False)
    assert store.d == before  # nothing written
    aligned = xr.Dataset({"v": ("t", np.ones(10))}).chunk(5)
    import dask
    with dask.config.set(scheduler="threads"):  # the mapping lives in this process only
        zx.to_zarrpp(aligned, store, region={"t": slice(10, 20)})  # no chunk shared: written
    back = xr.open_dataset(store, engine=ZarrppBackendEntrypoint).load()
    assert back["v"].values.tolist() == [0.0] * 10 + [1.0] * 10


def test_a_cluster_writes_a_zip_file_in_regions(tmp_path, dask_client):
    # A zip file has one writer at a time: the graph's process lets it go before the tasks run, and
    # each task on a worker process writes through a writer of its own, committed when the task
    # ends (before that, the first worker held the file until it closed: the others waited, then
    # failed).
    n = 40
    ds = xr.Dataset({"v": (("t", "x"), np.arange(n * 3, dtype="f8").reshape(n, 3))}, coords={"t": np.arange(n)})
    st = zarrpp.storage.ZipStore(tmp_path / "r.zip", mode="w", lock_timeout=5)
    delayed = zx.to_zarrpp(ds.chunk({"t": 10}), st, compute=False, encoding={"v": {"chunks": (10, 3)}})
    dask_client.compute(delayed, sync=True)
    values = ds["v"].values * 2
    edges = [0, 10, 17, 23, 40]  # two regions cut a chunk: conditioned writes keep both parts
    writes = [zx.to_zarrpp(xr.Dataset({"v": (("t", "x"), values[a:b])}).chunk({"t": 4}), st,
                           region={"t": slice(a, b)}, safe_chunks=False, compute=False)
              for a, b in zip(edges, edges[1:])]
    dask_client.compute(writes, sync=True)
    st.close()
    back = xr.open_dataset(zarrpp.storage.ZipStore(tmp_path / "r.zip"), engine=ZarrppBackendEntrypoint).load()
    assert back["v"].values.tolist() == values.tolist()
    assert back["t"].values.tolist() == list(range(n))


def test_region_values_the_stored_encoding_would_mask_are_refused(tmp_path):
    # A float variable whose stored missing value is -999: a part holding -999 would read back
    # missing, so it is refused (floats stored as they are skip the decoding check only when the
    # missing value is NaN).
    ds = xr.Dataset({"v": ("t", np.arange(8.0))}, coords={"t": np.arange(8)})
    ds["v"].encoding["_FillValue"] = -999.0
    path = str(tmp_path / "m.zarr")
    zx.to_zarrpp(ds, path, encoding={"v": {"chunks": (4,), "_FillValue": -999.0}})
    with pytest.raises(ValueError, match="cannot|missing"):
        zx.to_zarrpp(xr.Dataset({"v": ("t", [1.0, -999.0, 3.0, 4.0])}), path, region={"t": slice(0, 4)})
    zx.to_zarrpp(xr.Dataset({"v": ("t", [1.0, np.nan, 3.0, 4.0])}), path, region={"t": slice(0, 4)})
    back = xr.open_dataset(path, engine=ZarrppBackendEntrypoint).load()
    assert np.isnan(back["v"].values[1]) and back["v"].values[[0, 2, 3, 4]].tolist() == [1.0, 3.0, 4.0, 4.0]


@pytest.mark.parametrize("how", ["keyword", "encoding", "dask-keyword"])
def test_write_empty_chunks_decides_whether_fill_chunks_are_stored(tmp_path, dask_client, how):
    # newer xarray's write_empty_chunks (keyword or encoding): chunks equal to the fill value are
    # stored only when it is True; the Dask path carries it to the workers with the array.
    values = np.zeros(16)
    values[12:] = 1.0  # chunk 3 holds data; chunks 0-2 are all fill value (0)
    ds = xr.Dataset({"v": ("t", values)})
    if how.startswith("dask"):
        ds = ds.chunk(4)

    def stored_chunks(path):
        z = zarrpp.open_group(path)["v"]
        return z.nchunks_initialized

    for flag in (True, False):
        path = str(tmp_path / f"{how}-{flag}.zarr")
        enc = {"v": {"chunks": (4,), "_FillValue": 0.0}}
        if how == "encoding":
            enc["v"]["write_empty_chunks"] = flag
            zx.to_zarrpp(ds, path, encoding=enc)
        else:
            zx.to_zarrpp(ds, path, encoding=enc, write_empty_chunks=flag)
        assert stored_chunks(path) == (4 if flag else 1), (how, flag)
        assert xr.open_dataset(path, engine=ZarrppBackendEntrypoint, mask_and_scale=False)["v"].values.tolist() \
            == values.tolist()


def test_xarray_keywords_zarrpp_does_not_take_are_refused_by_name(tmp_path):
    # The reader's and the writer's refusals of xarray's zarr keywords, each naming what and why;
    # nothing is written by a refused write.
    ds = xr.Dataset({"v": ("t", np.arange(4.0))})
    path = str(tmp_path / "k.zarr")
    for kw, words in (({"chunk_store": {}}, "chunk_store"), ({"synchronizer": object()}, "synchronizer"),
                      ({"zarr_format": 3, "zarr_version": 2}, "disagree")):
        with pytest.raises(ValueError, match=words):
            zx.to_zarrpp(ds, path, **kw)
        assert not os.path.exists(path)
    zx.to_zarrpp(ds, path, consolidated=False)
    for kw, words in (({"chunk_store": {}}, "chunk_store"), ({"synchronizer": object()}, "synchronizer"),
                      ({"zarr_version": 2}, "zarr_format=2, but the group is Zarr v3"),
                      ({"zarr_version": 3, "zarr_format": 2}, "disagree")):
        with pytest.raises(ValueError, match=words):
            xr.open_dataset(path, engine=ZarrppBackendEntrypoint, **kw)
    with pytest.raises(KeyError, match="no consolidated metadata"):
        xr.open_dataset(path, engine=ZarrppBackendEntrypoint, consolidated=True)
    with pytest.warns(RuntimeWarning, match="Failed to open Zarr store with consolidated metadata"):
        xr.open_dataset(path, engine=ZarrppBackendEntrypoint)
    with pytest.raises(FileNotFoundError, match="No such file or directory"):
        xr.open_dataset(str(tmp_path / "missing.zarr"), engine=ZarrppBackendEntrypoint)
