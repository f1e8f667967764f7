"""zarr-python 3's ``zarr.from_array``: a new array with another array's values, taking its layout
("keep") from a zarrpp array, or choosing one ("auto") for a NumPy array or array-like."""
from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _zarrpp
from ._array import Array, like_fill_value
from ._creation import _like_args, create_array
from ._values import DEFAULT_FILL_VALUE
from .codecs import Transpose
from .errors import ZarrUserWarning
from .storage import make_store

_KEEP = "keep"


def _is_keep(value: Any) -> bool:
    return isinstance(value, str) and value == _KEEP


def _kept_layout(src: Array, zarr_format: int) -> Dict[str, Any]:
    """What "keep" takes from a zarrpp array. Codecs and the chunk key encoding carry over only
    within one Zarr format (a v2 compressor is no v3 codec); across formats they are chosen anew,
    as zarr-python does."""
    kept: Dict[str, Any] = src._grid_args()
    if src.zarr_format == zarr_format:
        # A v2 array's order "F" shows as a transpose filter; its order carries it instead.
        filters = [f for f in src.filters if not (src.zarr_format == 2 and isinstance(f, Transpose))]
        kept["filters"] = filters or None
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
    order_given = order is not None
    args = _like_args(src)
    args.pop("_allow_rectilinear", None)  # from_array decides (a kept grid)
    args.pop("chunks", None)
    args.pop("shards", None)
    args.pop("compressors", None)
    if zarr_format is not None:
        args["zarr_format"] = zarr_format
    if isinstance(src, Array):
        if fill_value is DEFAULT_FILL_VALUE or fill_value is None:  # zarr-python: None keeps it too
            fill_value = like_fill_value(src)
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
    if order is not None and (args.get("zarr_format") == 2 or order_given):
        args["order"] = order  # on a v3 array create_array warns that it has no effect
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
    st = make_store(store, storage_options=storage_options)
    path = _zarrpp.normalize_path(name or "")
    place = _source_place(src) if overwrite else None
    if place is not None and _zarrpp.destination_overlaps_source(place[0], place[1], st, path):
        # Replacing what is at the destination would delete the source (or part of it) before it
        # was read. The core asks the stores, and for stores it cannot see through (a mapping over
        # another library's store) writes a marker through the destination and looks for it
        # through the source. Without overwrite the core refuses a node or stray chunk keys there.
        raise ValueError(f"from_array: the source {src.path or '/'!r} and the new array {path or '/'!r} are the same "
                         "node or one lies inside the other; write the copy elsewhere")
    # A rectilinear grid kept from the source needs no opt-in: the source already has it.
    keeps_rect = isinstance(src, Array) and src._rectilinear and (_is_keep(chunks) or _is_keep(shards))
    out = create_array(st, name=path, overwrite=overwrite, config=config,
                       _allow_rectilinear=True if keeps_rect else None, **args)
    if write_data:
        _copy_or_undo(src, out, overwrite)
    return out


def _source_place(src: Any) -> Optional[Tuple[_zarrpp.Store, str]]:
    """Where a source array is stored: a zarrpp array's store and path, or a zarr-python 2
    array's mapping (as a store) and path; None for other data (NumPy arrays, ...)."""
    if isinstance(src, Array):
        return src.store, src.path
    # zarr-python 2 keeps the chunks in chunk_store when it is another store than the metadata's
    # (open_consolidated: the metadata from .zmetadata, the chunks from the folder).
    store = getattr(src, "chunk_store", None) or getattr(src, "store", None)
    path = getattr(src, "path", None)
    if isinstance(store, Mapping) and isinstance(path, str):
        return make_store(store, read_only=True), _zarrpp.normalize_path(path)
    return None


def _copy_or_undo(src: Any, out: Array, overwrite: bool) -> None:
    """Copies the values; if that fails, a new array (no ``overwrite``) is removed again, and an
    array that replaced another says how far the copy got."""
    done = [0]
    try:
        _copy_values(src, out, done)
    except BaseException as e:
        if not overwrite:
            _zarrpp.remove_node(out.store, out.path)
            raise
        e.add_note(f"from_array: the array at {out.path or '/'!r} replaced the one there and holds the source's "
                   f"values for its first {done[0]} rows along dimension 0 only")
        raise


_SLAB_BYTES = 64 << 20


def _copy_values(src: Any, out: Array, done: List[int]) -> None:
    """Copies in slabs along the first dimension, each a whole number of the new array's shards
    (or chunks), so no chunk is written twice and memory stays bounded for large sources; when
    one band of shards is itself large, a shard at a time. ``done[0]``: the rows copied so far."""
    if out.ndim == 0 or out.size == 0:
        out[...] = np.asarray(src[...])
        return
    if out._rectilinear:
        _copy_by_rows(src, out, done)
        return
    unit = out.shards or out.chunks
    band = out.nbytes // max(1, out.shape[0]) * unit[0]
    if band > _SLAB_BYTES and out.ndim > 1:
        _copy_by_unit(src, out, unit, done)
        return
    step = unit[0] * max(1, _SLAB_BYTES // max(1, band))
    for start in range(0, out.shape[0], step):
        stop = min(out.shape[0], start + step)
        out[start:stop] = np.asarray(src[start:stop])
        done[0] = stop


def _copy_by_rows(src: Any, out: Array, done: List[int]) -> None:
    """A rectilinear array: rows of stored objects along dimension 0, as many as fit a slab, or
    object by object where one row of them is larger than a slab."""
    row_bytes = out.nbytes // max(1, out.shape[0])
    bounds = [list(itertools.accumulate(sizes, initial=0)) for sizes in out.write_chunk_sizes]
    rows, start = bounds[0], 0
    for i in range(1, len(rows)):
        if i + 1 < len(rows) and (rows[i + 1] - start) * row_bytes <= _SLAB_BYTES:
            continue  # the next row of objects fits in this slab too
        _copy_band(src, out, start, rows[i], bounds, row_bytes)
        done[0] = start = rows[i]


def _copy_band(src: Any, out: Array, start: int, stop: int, bounds: List[List[int]], row_bytes: int) -> None:
    """Rows [start, stop) whole when they fit a slab, else one stored object's box at a time."""
    if (stop - start) * row_bytes <= _SLAB_BYTES or out.ndim == 1:
        out[start:stop] = np.asarray(src[start:stop])
        return
    for corner in itertools.product(*[range(len(b) - 1) for b in bounds[1:]]):
        box = (slice(start, stop),) + tuple(slice(b[k], b[k + 1]) for b, k in zip(bounds[1:], corner))
        out[box] = np.asarray(src[box])


def _copy_by_unit(src: Any, out: Array, unit: Tuple[int, ...], done: List[int]) -> None:
    starts = [range(0, n, u) for n, u in zip(out.shape, unit)]
    for corner in itertools.product(*starts):
        region = tuple(slice(c, min(n, c + u)) for c, n, u in zip(corner, out.shape, unit))
        out[region] = np.asarray(src[region])
        if all(c == 0 for c in corner[1:]):
            done[0] = corner[0]
    done[0] = out.shape[0]
