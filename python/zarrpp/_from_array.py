"""zarr-python 3's ``zarr.from_array``: a new array with another array's values, taking its layout
("keep") from a zarrpp array, or choosing one ("auto") for a NumPy array or array-like."""
from __future__ import annotations

import warnings
from typing import Any, Dict, Optional

import numpy as np

from ._array import DEFAULT_FILL_VALUE, Array, _like_args, create_array
from .errors import ZarrUserWarning

_KEEP = "keep"


def _is_keep(value: Any) -> bool:
    return isinstance(value, str) and value == _KEEP


def _kept_layout(src: Array, zarr_format: int) -> Dict[str, Any]:
    """What "keep" takes from a zarrpp array. Codecs and the chunk key encoding carry over only
    within one Zarr format (a v2 compressor is no v3 codec); across formats they are chosen anew,
    as zarr-python does."""
    kept: Dict[str, Any] = {"chunks": src.chunks, "shards": src.shards}
    if src.zarr_format == zarr_format:
        kept["filters"] = src.filters or None
        kept["compressors"] = src.compressors or None
        if zarr_format == 3:
            kept["serializer"] = src.serializer or "auto"
            kept["chunk_key_encoding"] = dict(src.metadata.get("chunk_key_encoding") or {}) or None
        else:
            kept["dimension_separator"] = src.metadata.get("dimension_separator")
    return kept


def _source(data: Any) -> Any:
    if isinstance(data, Array):
        return data
    if hasattr(data, "shape") and hasattr(data, "dtype") and hasattr(data, "__getitem__"):
        return data  # NumPy, Dask and other array-likes: read in slabs below
    return np.asarray(data)


def _defaults(src: Any, zarr_format: Optional[int], order: Optional[str], fill_value: Any,
              attributes: Any, dimension_names: Any) -> Dict[str, Any]:
    args = _like_args(src)
    args.pop("chunks", None)
    args.pop("shards", None)
    args.pop("compressors", None)
    if zarr_format is not None:
        args["zarr_format"] = zarr_format
    if isinstance(src, Array):
        if fill_value is DEFAULT_FILL_VALUE:
            fill_value = src.fill_value
        if attributes is None:
            attributes = src.attrs.asdict()
        if dimension_names is None and args.get("zarr_format", 3) == 3:
            dimension_names = src.dimension_names
        if order is None and src.zarr_format == 2:
            order = src.order
            if order == "F" and args.get("zarr_format") == 3:
                warnings.warn("from_array: the source is a Zarr v2 array stored in order 'F'; the new Zarr v3 array "
                              "has no stored order, so that order is not carried over (the values are)",
                              ZarrUserWarning, stacklevel=3)
    args.update(fill_value=fill_value, attributes=attributes, dimension_names=dimension_names)
    if order is not None and args.get("zarr_format") == 2:
        args["order"] = order
    else:
        args.pop("order", None)
    return args


def from_array(store: Any = None, *, data: Any, write_data: bool = True, name: Optional[str] = None,
               chunks: Any = _KEEP, shards: Any = _KEEP, filters: Any = _KEEP, compressors: Any = _KEEP,
               serializer: Any = _KEEP, fill_value: Any = DEFAULT_FILL_VALUE, order: Optional[str] = None,
               zarr_format: Optional[int] = None, attributes: Optional[Dict[str, Any]] = None,
               chunk_key_encoding: Any = None, dimension_names: Any = None,
               storage_options: Optional[Dict[str, Any]] = None, overwrite: bool = False,
               config: Optional[Dict[str, Any]] = None) -> Array:
    """A new array at ``store``/``name`` holding ``data``'s values (``write_data=False``: its layout
    only). ``data``: a zarrpp array (every "keep" argument takes its chunks, shards, codecs, fill
    value, attributes, dimension names and format), or a NumPy array or array-like ("keep" means
    "auto" chunks and codecs, no shards). Other values are as :func:`zarrpp.create_array` takes them.
    The values are copied a slab of shards (or chunks) at a time."""
    src = _source(data)
    args = _defaults(src, zarr_format, order, fill_value, attributes, dimension_names)
    kept = _kept_layout(src, args["zarr_format"]) if isinstance(src, Array) else {}
    given = {"chunks": chunks, "shards": shards, "filters": filters, "compressors": compressors,
             "serializer": serializer}
    fallback = {"chunks": "auto", "shards": None, "filters": None, "compressors": "auto", "serializer": "auto"}
    for key, value in given.items():
        args[key] = kept.get(key, fallback[key]) if _is_keep(value) else value
    if chunk_key_encoding is not None:
        args["chunk_key_encoding"] = chunk_key_encoding
    elif "chunk_key_encoding" in kept:
        args["chunk_key_encoding"] = kept["chunk_key_encoding"]
    if kept.get("dimension_separator") and chunk_key_encoding is None:
        args["dimension_separator"] = kept["dimension_separator"]
    if args.get("zarr_format") == 2:
        args.pop("serializer", None)
    out = create_array(store, name=name, overwrite=overwrite, config=config, storage_options=storage_options, **args)
    if write_data:
        _copy_values(src, out)
    return out


def _copy_values(src: Any, out: Array) -> None:
    """Copies in slabs along the first dimension, each a whole number of the new array's shards
    (or chunks), so no chunk is written twice and memory stays bounded for large sources."""
    if out.ndim == 0 or out.size == 0:
        out[...] = np.asarray(src[...])
        return
    step = (out.shards or out.chunks)[0]
    rows_per_slab = max(1, (64 << 20) // max(1, out.nbytes // max(1, out.shape[0])))
    step *= max(1, rows_per_slab // step)
    for start in range(0, out.shape[0], step):
        stop = min(out.shape[0], start + step)
        out[start:stop] = np.asarray(src[start:stop])
