"""Creating arrays: create_array and array, one core call for every argument form."""
from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy as np

from . import _zarrpp
from . import _config
from .codecs import ShardingCodec
from .errors import ZarrRuntimeWarning
from .storage import is_read_only, make_store
from ._arguments import _as_shape, _codec_specs, _key_encoding, _resolve_grid, _serializer_spec, _unwrap_sharding
from ._array import Array
from ._config import _checked_config
from ._node import _check_store_writable, _refuse_existing
from ._values import DEFAULT_FILL_VALUE, _core_fill_value, _parse_dtype, _python_numbers


def create_array(
    store: Any = None,
    *,
    name: Optional[str] = None,
    path: Optional[str] = None,
    shape: Any = None,
    dtype: Any = None,
    data: Any = None,
    chunks: Any = "auto",
    shards: Any = None,
    filters: Any = None,
    compressors: Any = "auto",
    serializer: Any = "auto",
    fill_value: Any = DEFAULT_FILL_VALUE,
    order: Optional[str] = None,
    zarr_format: Optional[int] = None,
    attributes: Optional[Dict[str, Any]] = None,
    dimension_names: Optional[Sequence[Optional[str]]] = None,
    overwrite: bool = False,
    lower_bound: Any = None,
    write_data: bool = True,
    config: Optional[Dict[str, Any]] = None,
    chunk_key_encoding: Any = None,
    dimension_separator: Optional[str] = None,
    storage_options: Optional[Dict[str, Any]] = None,
    _allow_rectilinear: Optional[bool] = None,
) -> Array:
    """Creates a Zarr v3 array, as zarr-python's ``zarr.create_array``.

    ``store``: a store, a path (-> LocalStore) or None (-> a new MemoryStore). ``name``/``path``:
    where in it ("" = the root). ``shape``/``dtype`` (or ``data``, a NumPy array, also written).
    ``chunks``: tuple, int, "auto", or sizes per dimension (``[[10, 20, 30], [50, 50]]``: a
    rectilinear grid, with ``array.rectilinear_chunks`` on). ``shards``: a multiple of ``chunks``,
    sizes per dimension (each a multiple), or None. ``compressors``: "auto" (the core's default,
    zstd), None, one ``zarrpp.codecs`` codec or a list of them (``Crc32c()`` last adds checksums).
    ``filters``: ``zarrpp.codecs.Transpose`` codecs. ``fill_value``: default 0 / False / empty (also
    an explicit None on Zarr v3; on Zarr v2 no fill value, null). ``lower_bound``: a domain starting
    at this index (default 0). ``config``: ``{"write_empty_chunks": bool, "concurrency": int}``.
    ``zarr_format``: 3 or 2 (.zarray/.zattrs as zarr-python 2 writes; ``order`` "C" or "F",
    ``dimension_separator`` "." (default) or "/", numcodecs filters and compressors); by default
    ``zarrpp.config``'s ``default_zarr_format`` (3), and ``order`` its ``array.order``.
    ``chunk_key_encoding``: ``{"name": "default"|"v2", "separator": "/"|"."}`` (v2 arrays: "v2").
    """
    cfg = _checked_config(config)
    zarr_format, order = _format_and_order(zarr_format, order, cfg.get("order"))
    if name is not None and path is not None and name.strip("/") != path.strip("/"):
        raise ValueError(f"name={name!r} and path={path!r} disagree; give one of them")
    node_path = (name if name is not None else path) or ""
    st = make_store(store, storage_options=storage_options)
    _check_store_writable(st)
    data, shape, dtype = _from_data(data, shape, dtype)
    shape_t = _as_shape(shape, "shape")
    np_dtype, zarr_name, endian = _parse_dtype("float64" if dtype is None else dtype)
    args = _zarrpp.ArrayArgs()
    _layout_args(args, shape_t, zarr_name, (chunks, shards, filters, compressors, serializer), _allow_rectilinear)
    key_encoding = _key_encoding(chunk_key_encoding, dimension_separator)
    if data is not None and write_data and np_dtype.kind != "O" and not isinstance(data, np.ndarray):
        # Checked (and cast) before anything is created: a value that does not fit leaves nothing behind.
        data = _python_numbers(data, np.asarray(data), np_dtype)
    if not overwrite:
        _refuse_existing(st, _zarrpp.normalize_path(node_path))
    dims = None if dimension_names is None else [None if d is None else str(d) for d in dimension_names]
    lb = None if lower_bound is None else list(_as_shape(lower_bound, "lower_bound"))
    args.shape, args.dtype, args.fill_value = list(shape_t), zarr_name, _core_fill_value(fill_value, zarr_format)
    args.dimension_names, args.lower_bound = dims, lb
    args.attributes, args.overwrite = attributes or {}, bool(overwrite)
    args.endian, args.zarr_format, args.key_encoding, args.order = endian, int(zarr_format), key_encoding, order or "C"
    core = _zarrpp.create_array(st, node_path, args)
    arr = Array(core, store=st)
    arr._configure(cfg)
    if data is not None and write_data:
        arr[...] = data
    return arr


def _layout_args(args: Any, shape: Tuple[int, ...], zarr_name: str, forms: Tuple[Any, ...],
                 allow_rectilinear: Optional[bool]) -> None:
    """A new array's grid and codecs into ``args``: zarr-python's forms of ``chunks``, ``shards``,
    ``filters``, ``compressors`` and ``serializer`` (a sharding codec included) made plain."""
    chunks, shards, filters, compressors, serializer = forms
    if isinstance(serializer, ShardingCodec):
        serializer, shards, chunks, filters, compressors = _unwrap_sharding(serializer, shards, chunks, filters,
                                                                            compressors)
    chunks_t, shards_t, args.chunk_sizes, args.shard_sizes = _resolve_grid(chunks, shards, shape, zarr_name,
                                                                           allow_rectilinear)
    args.chunks, args.shards = list(chunks_t), None if shards_t is None else list(shards_t)
    args.filters, args.compressors = _codec_specs(filters, compressors)
    args.serializer = _serializer_spec(serializer)


def _format_and_order(zarr_format: Optional[int], order: Optional[str], config_order: Optional[str] = None
                      ) -> Tuple[int, Optional[str]]:
    """``zarr_format`` and a v2 array's stored ``order``: given, else ``config={"order": ...}``'s,
    else zarrpp.config's (as zarr-python 3)."""
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    zarr_format = _config.default_zarr_format(zarr_format)
    if order is None and zarr_format == 2:
        order = config_order or _config.config.get("array.order")
    if zarr_format == 3 and order is not None:
        warnings.warn("order= has no effect on a Zarr v3 array: the memory layout of what reads return is a setting "
                      "of the handle (config={'order': 'F'}, or zarrpp.config's array.order)", ZarrRuntimeWarning,
                      stacklevel=3)
        order = None
    return zarr_format, order


def _from_data(data: Any, shape: Any, dtype: Any) -> Tuple[Any, Any, Any]:
    """``data=`` gives the shape and dtype not given; (data, shape, dtype)."""
    if data is not None:
        if not isinstance(data, np.ndarray) and dtype is None:
            data = np.asarray(data)
        if shape is None:
            shape = np.shape(data)
        if dtype is None:
            dtype = data.dtype
    if shape is None:
        raise TypeError("create_array: shape= (or data=) is required")
    return data, shape, dtype


def _writable(store: Any) -> bool:
    try:
        return not is_read_only(make_store(store))
    except (TypeError, ValueError):
        return False


def array(data: Any, store: Any = None, *, write_empty_chunks: Optional[bool] = None, **kwargs: Any) -> Array:
    """Creates an array holding ``data`` (shape and dtype from it unless given).
    ``write_empty_chunks=`` is deprecated as in zarr-python 3 (a warning; it still applies)."""
    _legacy_keywords(kwargs)
    if write_empty_chunks is not None:
        warn_write_empty_chunks_keyword()
        kwargs["config"] = {**(kwargs.get("config") or {}), "write_empty_chunks": bool(write_empty_chunks)}
    return create_array(store, data=data, **kwargs)


# zarr-python 2's keywords that zarr-python 3 takes and ignores with a warning: zarrpp does the same.
_LEGACY_KEYWORDS = ("synchronizer", "chunk_store", "cache_metadata", "cache_attrs", "object_codec", "meta_array")


def _legacy_keywords(kwargs: Dict[str, Any]) -> None:
    """Takes zarr-python 2's legacy keywords out of ``kwargs``, warning (ZarrRuntimeWarning) for
    each one given a value: they have no effect, as in zarr-python 3."""
    for name in _LEGACY_KEYWORDS:
        if kwargs.pop(name, None) is not None:
            warnings.warn(f"{name}= has no effect in zarrpp (nor in zarr-python 3); it is ignored", ZarrRuntimeWarning,
                          stacklevel=3)


def warn_write_empty_chunks_keyword() -> None:
    warnings.warn("write_empty_chunks= is deprecated (as in zarr-python 3): pass config={'write_empty_chunks': ...} "
                  "or set zarrpp.config's array.write_empty_chunks", ZarrRuntimeWarning, stacklevel=3)


def _like_args(a: Any) -> Dict[str, Any]:
    """What the ``*_like`` functions take from ``a``: shape, dtype and chunks (an array's inner
    chunks), and from a zarrpp array also its shards, codecs and format."""
    out: Dict[str, Any] = {}
    if hasattr(a, "shape"):
        out["shape"] = tuple(a.shape)
    if hasattr(a, "dtype"):
        out["dtype"] = a.dtype
    if isinstance(a, Array) and a.dtype.kind == "O":
        out["dtype"] = str if a._type_name == "string" else bytes
    if isinstance(a, Array):
        grid = a._grid_args()
        out["chunks"] = grid["chunks"]
        if grid["shards"] is not None:
            out["shards"] = grid["shards"]
        if a._rectilinear:
            out["_allow_rectilinear"] = True  # the source has the grid: no setting needed to repeat it
        out["compressors"] = a.compressors or None
        out["zarr_format"] = a.zarr_format
        if a.zarr_format == 2:
            out["order"] = a.order
    elif getattr(a, "chunks", None) is not None and isinstance(a.chunks, tuple) and \
            all(isinstance(c, int) for c in a.chunks):
        out["chunks"] = a.chunks
    return out
