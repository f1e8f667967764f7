"""Hostile and careless input (issue 30, item 5), from Python.

* Attributes as Python's json writes them and zarr-python stores them: bare NaN / Infinity /
  -Infinity and escaped lone surrogates ("\\udcff"). They read as the float and the str
  json.loads gives, are written back as zarr-python writes them, and never make data unreachable.
* Attribute mappings answer from one snapshot, in linear time.
* expand_domain has C++'s order, with the counts keyword-only.
"""
import json
import math
import time

import numpy as np
import pytest
import zarr  # zarr-python 2.13, the v2 peer

import zarrpp

ATTRS = {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "name": "file\udcff.nc",
         "hi": "\ud83d", "emoji": "\U0001f600", "valid_range": [float("nan"), 1.0]}


def _same(a, b):
    """Equal as json.loads gives them (NaN equal to NaN)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_v2_attributes_round_trip_with_zarr_python_2(tmp_path):
    path = str(tmp_path / "v2.zarr")
    root = zarr.open_group(path, mode="w")
    root.attrs.update(ATTRS)  # NaN in a root's attributes made the store unopenable
    z = root.create_dataset("x", shape=(4,), chunks=(2,), dtype="f8", fill_value=np.nan)
    z[:] = [1, 2, 3, 4]
    z.attrs.update(ATTRS)  # a lone surrogate made the array unreachable
    g = zarrpp.open_group(path)
    assert _same(g.attrs.asdict(), ATTRS)
    a = g["x"]
    got = a.attrs.asdict()
    assert _same(got, ATTRS)
    assert math.isnan(got["nan"]) and got["inf"] == math.inf and got["ninf"] == -math.inf
    assert got["name"] == "file\udcff.nc" and got["hi"] == "\ud83d"
    np.testing.assert_array_equal(a[:], [1, 2, 3, 4])
    # Written back by zarrpp: byte for byte what zarr-python 2 wrote, and read by it identically.
    before = open(f"{path}/x/.zattrs", "rb").read()
    a.attrs.put(got)
    assert open(f"{path}/x/.zattrs", "rb").read() == before
    a.attrs["more"] = float("nan")
    assert _same(dict(zarr.open_array(path + "/x").attrs), {**ATTRS, "more": float("nan")})
    g.attrs["more"] = -math.inf
    assert _same(dict(zarr.open_group(path).attrs), {**ATTRS, "more": -math.inf})


def test_v3_attributes_nan_and_surrogates(tmp_path):
    zarrpp.create((4,), chunks=(2,), dtype="i4", store=str(tmp_path / "v3.zarr"), attributes=ATTRS)
    text = (tmp_path / "v3.zarr" / "zarr.json").read_text()
    # As zarr-python 3 writes them (json.dumps): bare tokens, lowercase \\u escapes.
    assert '"nan": NaN' in text and '"ninf": -Infinity' in text and '"name": "file\\udcff.nc"' in text
    assert _same(json.loads(text)["attributes"], ATTRS)
    r = zarrpp.open_array(str(tmp_path / "v3.zarr"))
    assert _same(r.attrs.asdict(), ATTRS)
    assert _same(r.metadata.attributes, ATTRS)
    r[:] = 7
    np.testing.assert_array_equal(r[:], [7, 7, 7, 7])


def test_xarray_variable_with_nan_attributes_is_kept(tmp_path):
    xr = pytest.importorskip("xarray")
    from zarrpp.xarray import ZarrppBackendEntrypoint
    path = str(tmp_path / "ds.zarr")
    ds = xr.Dataset({"t": ("x", np.arange(3.0)), "u": ("x", np.ones(3))})
    ds.to_zarr(path, mode="w")  # zarr-python 2.13
    zarr.open_array(path + "/t", mode="r+").attrs.update({"valid_range": [float("nan"), 1.0], "note": "a\udcffb"})
    zarr.open_group(path, mode="r+").attrs["missing"] = float("nan")
    zarr.consolidate_metadata(path)
    out = xr.open_dataset(path, engine=ZarrppBackendEntrypoint)
    assert "t" in out.variables and "u" in out.variables
    vr = out["t"].attrs["valid_range"]
    assert math.isnan(vr[0]) and vr[1] == 1.0 and out["t"].attrs["note"] == "a\udcffb"
    assert math.isnan(out.attrs["missing"])
    np.testing.assert_array_equal(out["t"].values, [0.0, 1.0, 2.0])


def test_attribute_mappings_are_linear():
    # 8,000 keys took 8.4 s through dict(); 50,000 did not finish in 10 minutes.
    n = 50_000
    z = zarrpp.create((1,), dtype="i1", attributes={f"k{i}": i for i in range(n)})
    a = z.attrs
    t0 = time.perf_counter()
    d = dict(a)
    items = list(a.items())
    keys, values = list(a.keys()), list(a.values())
    count = sum(1 for _ in a) + len(a)
    got = [a[f"k{i}"] for i in range(0, n, 7)] + [a.get("missing", -1)]
    hit = all(f"k{i}" in a for i in range(0, n, 11))
    equal = a == d
    took = time.perf_counter() - t0
    assert len(d) == n and len(items) == n and len(keys) == n and sum(values) == n * (n - 1) // 2
    assert count == 2 * n and got[-1] == -1 and hit and equal
    assert took < 10, f"the mapping methods took {took:.1f} s for {n} keys"


def test_attribute_snapshot_follows_changes():
    z = zarrpp.create((1,), dtype="i1", attributes={"a": [1]})
    attrs = z.attrs
    v = attrs["a"]
    v.append(2)  # a returned value is the caller's: the snapshot is unchanged
    assert attrs["a"] == [1] and attrs.asdict() == {"a": [1]}
    attrs["b"] = 2
    assert dict(attrs) == {"a": [1], "b": 2} and len(attrs) == 2 and "b" in attrs
    del attrs["a"]
    assert list(attrs) == ["b"] and list(attrs.items()) == [("b", 2)]
    z.update_attributes({"c": 3})
    assert dict(z.attrs) == {"b": 2, "c": 3}
    g = zarrpp.group()
    g.attrs["x"] = 1
    assert dict(g.attrs) == {"x": 1}
    g.attrs.update(y=2)
    assert dict(g.attrs) == {"x": 1, "y": 2}


def test_expand_domain_order_matches_cpp_and_counts_are_keyword_only():
    z = zarrpp.create((4, 3), chunks=(2, 3), dtype="i4", fill_value=0)
    z[:] = np.arange(12).reshape(4, 3)
    # README's C++ order, expand_domain(axis, before, after): positional counts would be ambiguous
    # (the old Python order was (before, after, axis)), so they are refused.
    with pytest.raises(TypeError):
        z.expand_domain(0, 0, -2)
    with pytest.raises(TypeError):
        z.expand_domain(0, -2)
    with pytest.raises(TypeError):
        z._core.expand_domain(0, 0, -2)
    np.testing.assert_array_equal(z[:], np.arange(12).reshape(4, 3))  # nothing was deleted
    assert z.expand_domain(0, before=1) == ((-1, 4), (0, 3))
    assert z.expand_domain(1, after=2) == ((-1, 4), (0, 5))
    assert z.expand_domain(axis=0, before=-1, after=-1) == ((0, 3), (0, 5))
    np.testing.assert_array_equal(z[:, :3], np.arange(9).reshape(3, 3))
