"""Writing xarray variables: their encoding (xarray's CF conventions, the user's ``encoding=``, the
stored variables' for growth), and creating each variable's array."""
from __future__ import annotations

import math
from typing import Any, Dict, Hashable, Mapping, Optional, Tuple, cast

import numpy as np
import xarray as xr
from xarray.backends.zarr import _determine_zarr_chunks, encode_zarr_variable

from . import _zarrpp
from ._config import config
from ._arguments import _irregular_sizes
from ._array import Array
from ._group import Group
from ._xarray_common import _V2_DIMS, _VALUE_ATTRS, _decode_attr, _fill_attr

# What the zarr side takes after xarray's CF encoding consumed its keys: xarray's zarr keys, and
# zarrpp's own (shards, zarr-python 3's compressors, the domain and chunks its reader records).
_ZARR_KEYS = {"chunks", "compressor", "filters", "cache_metadata", "write_empty_chunks"}
_ZARRPP_KEYS = {"shards", "compressors", "preferred_chunks", "zarrpp_domain"}
# Encodings the stored variable fixes for data appended or prepended to it.
_CF_KEYS = ("units", "calendar", "scale_factor", "add_offset", "_FillValue", "missing_value", "_Unsigned")


def _json_value(key: str, v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_json_value(key, x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_json_value(key, x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v) and key in _VALUE_ATTRS:
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    # other NaN / infinite attributes are written NaN / Infinity, as xarray's to_zarr and Python's
    # json write them (zarrpp reads them back as floats)
    if isinstance(v, bytes):
        return v.decode("utf-8")
    return v


def _encode(ds: xr.Dataset, encoding: Optional[Mapping[Hashable, Mapping[str, Any]]],
            fixed: Optional[Mapping[Hashable, Mapping[str, Any]]] = None, zarr_format: int = 3,
            safe_chunks: bool = True) -> Tuple[Dict[Hashable, xr.Variable], Dict[str, Any]]:
    """The Dataset's variables encoded as xarray's zarr engine encodes them: coordinates and the CF
    keys held in encoding (``coordinates``, ``bounds``, ``grid_mapping``, ...) by
    ``encode_dataset_coordinates``, then each variable by ``encode_zarr_variable`` (times as
    numbers with units, _FillValue, packing, ``_Unsigned``, text with ``dtype="S1"`` as bytes
    marked ``_Encoding``, bytes objects as S<n>). As in xarray, ``encoding=`` replaces a variable's
    encoding, and keys left over that no zarr writer takes are refused for the variables it names
    and dropped for the others (what a variable brings from where it was read). For growth,
    ``fixed`` holds the stored variables' encodings."""
    variables, attrs = xr.conventions.encode_dataset_coordinates(ds)
    for name, enc in (encoding or {}).items():
        if name not in variables:
            raise KeyError(f"encoding given for {name!r}, which is not a variable of the dataset")
        variables[name].encoding = enc  # a ValueError naming it when it is not a mapping
    for name, enc in (fixed or {}).items():
        kept = {k: x for k, x in variables[name].encoding.items() if k not in _CF_KEYS and k != "dtype"}
        variables[name].encoding = {**kept, **enc}
    # growth (fixed) makes no array: its Dask blocks need no chunks
    out = {name: _encode_variable(name, v, encoding is not None and name in encoding, safe_chunks, fixed is None)
           for name, v in variables.items()}
    return out, dict(attrs)


def _encode_variable(name: Hashable, v: xr.Variable, given: bool, safe_chunks: bool = True,
                     creates: bool = True) -> xr.Variable:
    """One variable through xarray's zarr encoder; zarrpp's own keys (shards, compressors, the
    recorded domain) set aside and put back; leftovers refused when the user gave them."""
    own = {k: v.encoding[k] for k in _ZARRPP_KEYS if k in v.encoding}
    v = v.copy(deep=False)
    v.encoding = {k: x for k, x in v.encoding.items() if k not in _ZARRPP_KEYS}
    e = encode_zarr_variable(v, name=name)
    if e.encoding.get("_FillValue", 0) is None:
        del e.encoding["_FillValue"]  # "no fill value", which xarray's mask coder leaves in place
    leftover = sorted(set(e.encoding) - _ZARR_KEYS)
    if given and leftover:
        raise ValueError(f"unexpected encoding parameters for zarr backend: {leftover!r} (variable {name!r}; "
                         f"zarrpp takes {sorted(_ZARR_KEYS | _ZARRPP_KEYS)} and xarray's CF keys)")
    e.encoding = {**{k: x for k, x in e.encoding.items() if k in _ZARR_KEYS}, **own}
    if e.chunks is not None and creates:
        e.encoding["chunks"] = _dask_zarr_chunks(name, e, safe_chunks)
    return e


def _dask_zarr_chunks(name: Hashable, v: xr.Variable, safe_chunks: bool) -> Any:
    """A Dask-backed variable's Zarr chunks by xarray's rule (its private _determine_zarr_chunks:
    the first block's shape; blocks of different sizes or blocks that straddle the chunks given in
    encoding refused, the latter unless ``safe_chunks=False``), except that with zarrpp.config's
    ``array.rectilinear_chunks`` irregular blocks become a rectilinear grid."""
    blocks = v.chunks or ()
    given = v.encoding.get("chunks")
    if given is not None and not isinstance(given, int) and len(given) != v.ndim:
        given = None  # kept from before a dimension was dropped: thrown away, as xarray does
    if given is None and config.get("array.rectilinear_chunks"):
        sizes = _irregular_sizes(blocks)
        if sizes is not None:
            return sizes
    if given is not None and not isinstance(given, int) and any(not isinstance(c, (int, np.integer)) for c in given):
        return given  # sizes per dimension: a rectilinear grid asked for
    chunks = _determine_zarr_chunks(given, blocks, v.ndim, name, safe_chunks)
    return None if chunks is None else tuple(max(int(c), 1) for c in chunks)


def _storage_dtype(v: xr.Variable, zarr_format: int = 3) -> np.dtype:
    dt = v.dtype
    if zarr_format == 2:
        return dt  # as xarray's zarr engine stores them: U<n> and S<n> stay fixed-width
    if dt.kind == "U":
        return np.dtype(object)  # a Zarr "string" array
    if dt.kind == "S":
        return np.dtype(object) if v.encoding.get("dtype") is None else dt
    return dt


def _values(v: xr.Variable, dtype: np.dtype) -> Any:
    data = v.data
    if dtype.kind == "O":
        arr = np.asarray(v.values)
        return arr.astype(str).astype(object) if arr.dtype.kind == "U" else arr
    return data


def _attrs_for(v: xr.Variable) -> Dict[str, Any]:
    # a bytes _FillValue is the array's fill value (v2) or written in xarray's encoding (v3), never as text
    return {str(k): x if k == "_FillValue" and isinstance(x, bytes) else _json_value(str(k), x)
            for k, x in v.attrs.items()}


def _fill_for(v: xr.Variable, dtype: np.dtype) -> Any:
    fv = v.attrs.get("_FillValue")
    if fv is None:
        return None
    if dtype.kind == "O":
        return fv if isinstance(fv, (str, bytes)) else None
    try:
        return np.array(fv).astype(dtype).item()
    except (TypeError, ValueError):
        return None


def _write_data(z: Array, data: Any) -> None:
    if hasattr(data, "dask") and hasattr(data, "chunks"):
        from .dask import to_zarrpp as dask_to_zarrpp
        dask_to_zarrpp(data, z)
    else:
        z[...] = np.asarray(data)


def _grid_arg(v: Any) -> Any:
    """``chunks``/``shards`` from an encoding: a shape, or sizes per dimension (rectilinear)."""
    if isinstance(v, int):
        return v
    if any(not isinstance(c, (int, np.integer)) for c in v):
        return [[int(x) for x in c] for c in v]
    return tuple(int(c) for c in v)


def _dask_grid(chunks: Tuple[Tuple[int, ...], ...]) -> Any:
    """A Dask variable's chunks as the array's: its blocks as they are when they differ in size and
    zarrpp.config's ``array.rectilinear_chunks`` is on (a rectilinear grid), else its largest block."""
    sizes = _irregular_sizes(chunks) if config.get("array.rectilinear_chunks") else None
    return sizes if sizes is not None else tuple(max(max(c), 1) if c else 1 for c in chunks)


def _create_variable(g: Group, name: str, v: xr.Variable, enc: Mapping[str, Any], write: bool = True,
                     lower_bound: Optional[Tuple[int, ...]] = None) -> Array:
    dims = tuple(str(d) for d in v.dims)
    dtype = _storage_dtype(v, g.zarr_format)
    kw: Dict[str, Any] = {}
    chunks = enc.get("chunks")
    if chunks is not None and not isinstance(chunks, int) and len(chunks) != v.ndim:
        chunks = None  # kept from before a dimension was dropped: thrown away, as xarray does
    if chunks is None and v.chunks is not None:
        chunks = _dask_grid(v.chunks)
    if chunks is not None:
        kw["chunks"] = _grid_arg(chunks)
    if enc.get("shards") is not None:
        kw["shards"] = _grid_arg(enc["shards"])
    if "compressors" in enc:
        kw["compressors"] = enc["compressors"]
    elif "compressor" in enc:
        kw["compressors"] = enc["compressor"]
    if "filters" in enc:
        kw["filters"] = enc["filters"]
    fill = _fill_for(v, dtype)
    if fill is not None:
        kw["fill_value"] = fill
    if lower_bound is not None:
        kw["lower_bound"] = lower_bound
    create_dtype: Any = dtype
    if dtype.kind == "O":  # variable-length text (or bytes, when the values are bytes)
        flat = np.asarray(v.values).ravel()
        create_dtype = bytes if flat.size and isinstance(flat[0], bytes) else str
    attrs = _attrs_for(v)
    if g.zarr_format == 2:
        # As xarray's zarr engine writes Zarr v2: the missing value is the array's fill value (none:
        # null), the dimension names an attribute.
        attrs.pop("_FillValue", None)
        kw["fill_value"] = fill
        attrs[_V2_DIMS] = list(dims)
        z = g.create_array(name, shape=v.shape, dtype=create_dtype, attributes=attrs, zarr_format=2, **kw)
    else:
        if fill is not None and "_FillValue" in attrs:
            stored = create_dtype if dtype.kind == "O" else dtype.newbyteorder("=")
            encoded = _zarrpp.xarray_fill_attribute(_zarrpp.data_type_name(stored), fill)
            if encoded is not None:  # as xarray writes it (it reads a v3 array's missing value from there)
                attrs["_FillValue"] = encoded
        z = g.create_array(name, shape=v.shape, dtype=create_dtype, attributes=attrs, dimension_names=dims,
                           zarr_format=3, **kw)
    if enc.get("write_empty_chunks") is not None:  # a handle setting, for the writes below
        z = z.with_config({"write_empty_chunks": bool(enc["write_empty_chunks"])})
    if write and v.size:
        _write_data(z, _values(v, dtype))
    return z


def _stored_encoding(z: Array) -> Dict[str, Any]:
    enc = {"dtype": z.dtype}
    for k in _CF_KEYS:
        if k in z.attrs:
            enc[k] = _fill_attr(z, z.attrs[k]) if k == "_FillValue" else _decode_attr(k, z.attrs[k])
    return enc


def _check_round_trip(word: str, name: Hashable, original: xr.Variable, encoded: xr.Variable, stored: np.ndarray,
                      enc: Mapping[str, Any]) -> None:
    """Refuses new data the stored encoding cannot hold: decoding what would be stored must give
    the data back (within half a packing step when scale_factor packs it). Floats stored as they
    are (the stored encoding is their own type, any missing value NaN) need no decoding."""
    fill = encoded.attrs.get("_FillValue", math.nan)  # a NaN missing value masks nothing that is not missing
    if set(enc) <= {"dtype"} and original.dtype.kind in "fc" and encoded.attrs.keys() <= {"_FillValue"} and \
            np.dtype(enc.get("dtype", stored.dtype)) == original.dtype == stored.dtype and \
            isinstance(fill, float) and math.isnan(fill):
        return
    back = xr.conventions.decode_cf_variable(str(name), xr.Variable(encoded.dims, stored, encoded.attrs))
    a, b = np.asarray(back.values), np.asarray(original.values)
    if a.shape != b.shape:
        return  # reported by the shape checks
    if a.dtype.kind in "fc" and b.dtype.kind in "fciub":
        wide = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
        aw, bw = a.astype(wide), b.astype(wide)
        # no value may turn infinite (overflow) or lose integer precision
        ok = not np.any(np.isinf(aw) & np.isfinite(bw))
        if "scale_factor" in enc:
            ok = ok and np.allclose(aw, bw, rtol=0, atol=abs(float(enc["scale_factor"])) / 2 + 1e-12, equal_nan=True)
        elif b.dtype.kind in "iub":
            ok = ok and bool(np.all(a == b))
        else:  # float data into a float type: rounding to the stored precision only
            eps = cast(float, np.finfo(stored.dtype).eps) if stored.dtype.kind in "fc" else 0.0
            ok = ok and np.allclose(aw, bw, rtol=2 * eps, atol=0, equal_nan=True)
    elif a.dtype.kind == "O" or b.dtype.kind == "O" or a.dtype.kind in "US":
        ok = bool(np.all(a.astype(object) == b.astype(object)))
    else:
        try:
            ok = np.array_equal(a, b, equal_nan=a.dtype.kind in "fcmM")
        except TypeError:
            ok = np.array_equal(a, b)
    if not ok:
        shown = {k: enc[k] for k in ("dtype", "units", "calendar", "scale_factor", "add_offset", "_FillValue")
                 if k in enc}
        lost = _lost_missing(a, b)
        if lost:
            raise ValueError(f"{word}: variable {name!r}: the new values include {lost}, which the stored encoding "
                             f"{shown} cannot hold: it has no missing value (_FillValue) to store them as; fill them "
                             "first, or write the dataset again with a _FillValue in the variable's encoding")
        raise ValueError(f"{word}: variable {name!r}: the new values cannot be stored with the stored encoding "
                         f"{shown} without changing them (e.g. fractions into integers, or times finer than "
                         "the units)")


def _lost_missing(back: np.ndarray, new: np.ndarray) -> Optional[str]:
    """"N NaT" / "N NaN" when missing values of the new data do not come back missing (an
    encoding without a _FillValue holds none); None otherwise."""
    if new.dtype.kind in "mM":
        word, missing = "NaT", np.isnat(new)
        back_missing = np.isnat(back) if back.dtype.kind in "mM" else np.zeros(back.shape, bool)
    elif new.dtype.kind in "fc":
        word, missing = "NaN", np.isnan(new)
        back_missing = np.isnan(back) if back.dtype.kind in "fc" else np.zeros(back.shape, bool)
    else:
        return None
    lost = int(np.count_nonzero(missing & ~back_missing))
    return f"{lost} {word}" if lost else None
