"""zarr-python's argument forms of a new array's grid and codecs, turned into the plain shapes,
sizes and (name, configuration) pairs the core takes."""
from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _zarrpp
from . import _config
from .codecs import Codec, ShardingCodec, _as_list
from ._values import _is_int


def _as_shape(value: Any, what: str) -> Tuple[int, ...]:
    if _is_int(value):
        return (operator.index(value),)
    try:
        return tuple(operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"{what}: expected an int or a tuple of ints, got {value!r}") from None


_NO_REGULAR = ("The `{0}` attribute is only defined for arrays using regular chunk grids. This array has a "
               "rectilinear chunk grid. Use `{1}` for general access.")


def _is_nested(value: Any) -> bool:
    """Whether ``chunks=`` / ``shards=`` lists sizes per dimension (a rectilinear grid), as
    zarr-python tells: an iterable whose first entry is itself an iterable (not text)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)) or len(value) == 0:
        return False
    first = value[0]
    return not isinstance(first, (str, bytes, int, np.integer)) and hasattr(first, "__iter__")


def _grid_sizes(value: Any, shape: Tuple[int, ...], what: str) -> List[List[int]]:
    """Per-dimension sizes of a rectilinear ``chunks=`` / ``shards=``: flat sequences of ints
    (zarr-python's user form; run-length pairs are the metadata's), checked by the core."""
    if len(value) != len(shape):
        raise ValueError(f"{what} has {len(value)} dimensions but shape has {len(shape)} dimensions")
    out = []
    for d, given in enumerate(value):
        if _is_int(given):
            raise TypeError(f"{what}[{d}]: give every dimension's sizes as a sequence (e.g. [{given}]) when another "
                            "dimension lists its sizes")
        sizes = list(given)  # once: a generator is read a single time
        bad = [i for i, v in enumerate(sizes) if not _is_int(v)]
        if bad:
            raise TypeError(f"{what}[{d}]: each chunk size must be an integer; got non-integer element(s) at indices "
                            f"{tuple(bad)}. Chunk sizes are a flat sequence of positive integers (e.g. [3, 3, 1]).")
        big = [v for v in sizes if not -2**63 <= operator.index(v) < 2**63]
        if big:
            raise ValueError(f"{what}[{d}]: size {big[0]} is beyond what an array can hold")
        out.append([operator.index(v) for v in sizes])
    return out


def _irregular_sizes(blocks: Sequence[Sequence[int]]) -> Optional[List[List[int]]]:
    """Dask-style ``chunks`` (block sizes per dimension) as a rectilinear grid's sizes, empty
    blocks left out, when a regular grid cannot hold them (the core's rule); else None."""
    sizes = [[int(c) for c in d if c] for d in blocks]
    if not sizes or not all(sizes) or _zarrpp.regular_chunk_shape(sizes) is not None:
        return None
    return sizes


def _rectilinear_args(chunks: Any, shards: Any, shape: Tuple[int, ...], allow: Optional[bool]
                      ) -> Tuple[Any, Any, List[List[int]], List[List[int]]]:
    """(chunks, shards, chunk_sizes, shard_sizes): nested ``chunks`` or ``shards`` become the
    core's sizes. Irregular sizes need ``array.rectilinear_chunks`` (or ``allow``), as in
    zarr-python, since most readers cannot read the grid."""
    chunk_sizes: List[List[int]] = []
    shard_sizes: List[List[int]] = []
    if _is_nested(chunks):
        if shards is not None:
            raise ValueError("Rectilinear chunks with sharding is not supported. Use rectilinear shards instead: "
                             "chunks=(inner_size, ...), shards=[[shard_sizes], ...]")
        chunk_sizes, chunks = _grid_sizes(chunks, shape, "chunks"), ()
    elif _is_nested(shards):
        if chunks is None or isinstance(chunks, str):
            raise ValueError("rectilinear shards need chunks= (the inner chunk shape, dividing every shard size)")
        shard_sizes, shards = _grid_sizes(shards, shape, "shards"), None
    sizes = chunk_sizes or shard_sizes
    if sizes and _zarrpp.regular_chunk_shape(sizes) is None:
        if not (allow if allow is not None else _config.config.get("array.rectilinear_chunks")):
            raise ValueError("Rectilinear chunk grids are experimental and disabled by default. Enable them with: "
                             "zarrpp.config.set({'array.rectilinear_chunks': True}) (zarr.config when imported as "
                             "zarr) or set the environment variable ZARR_ARRAY__RECTILINEAR_CHUNKS=True")
    return chunks, shards, chunk_sizes, shard_sizes


def _resolve_chunks(chunks: Any, shape: Tuple[int, ...], zarr_name: str, sharded: bool = False) -> Tuple[int, ...]:
    if chunks is None or chunks is True or (isinstance(chunks, str) and chunks == "auto"):
        return tuple(_zarrpp.auto_chunks(list(shape), zarr_name, sharded))
    if chunks is False:  # zarr-python: one chunk for the whole array
        return tuple(max(n, 1) for n in shape)
    if _is_int(chunks):
        chunks = (operator.index(chunks),) * len(shape)
    chunks = list(chunks)
    if len(chunks) != len(shape):
        raise ValueError(f"chunks {tuple(chunks)} must have one entry per dimension of shape {shape}")
    out = []
    for c, n in zip(chunks, shape):
        if c is None or (_is_int(c) and c == -1):
            out.append(max(n, 1))
        else:
            out.append(operator.index(c))
    return tuple(out)


def _resolve_grid(chunks: Any, shards: Any, shape: Tuple[int, ...], zarr_name: str, allow: Optional[bool]
                  ) -> Tuple[Tuple[int, ...], Optional[Tuple[int, ...]], List[List[int]], List[List[int]]]:
    """(chunks, shards, chunk_sizes, shard_sizes) for the core from create_array's arguments."""
    sharded = shards is not None
    chunks, shards, chunk_sizes, shard_sizes = _rectilinear_args(chunks, shards, shape, allow)
    chunks_t = () if chunk_sizes else _resolve_chunks(chunks, shape, zarr_name, sharded=sharded)
    return chunks_t, _resolve_shards(shards, shape, chunks_t, zarr_name), chunk_sizes, shard_sizes


def _codec_specs(filters: Any, compressors: Any) -> Tuple[List[tuple], Optional[List[tuple]]]:
    """The (name, configuration) pairs of ``filters=`` and ``compressors=`` for the core; "auto"
    compressors are None (the core's default)."""
    filt = [] if isinstance(filters, str) and filters == "auto" else _as_list(filters, "filters")
    if isinstance(compressors, str) and compressors == "auto":
        return [f._spec() for f in filt], None
    return [f._spec() for f in filt], [c._spec() for c in _as_list(compressors, "compressors")]


def _serializer_spec(serializer: Any) -> Optional[tuple]:
    """``serializer=`` for the core: None for "auto" (the data type's default)."""
    if isinstance(serializer, str) and serializer == "auto" or serializer is None:
        return None
    if not isinstance(serializer, Codec):
        raise ValueError(f"serializer: a zarrpp.codecs codec, a ShardingCodec or 'auto', got {serializer!r}")
    return serializer._spec()


def _unwrap_sharding(sharding: ShardingCodec, shards: Any, chunks: Any, filters: Any, compressors: Any
                     ) -> Tuple[Any, Any, Any, Any, Any]:
    """zarr-python's v3 form (serializer=ShardingCodec): the grid's chunks are the shards, the
    codec's chunk_shape the chunks, its codecs the chain's. (serializer, shards, chunks, filters,
    compressors) as create_array takes them otherwise."""
    if shards is not None:
        raise ValueError("give shards= or a ShardingCodec, not both")
    if isinstance(chunks, str):
        raise ValueError("with a ShardingCodec, chunks= gives the shard shape")
    if sharding.codecs is None:
        return "auto", chunks, sharding.chunk_shape, filters, compressors
    inner_f, inner_s, inner_c = _split_codecs(sharding.codecs, "ShardingCodec.codecs")
    return inner_s or "auto", chunks, sharding.chunk_shape, inner_f or filters, inner_c


def _resolve_shards(shards: Any, shape: Tuple[int, ...], chunks: Tuple[int, ...], zarr_name: str
                    ) -> Optional[Tuple[int, ...]]:
    """``shards=`` as zarr-python takes it: a shape, ``{"shape": ...}``, "auto" or None."""
    if isinstance(shards, dict):
        loc = shards.get("index_location", "end")
        if getattr(loc, "value", loc) != "end":
            raise ValueError(f"shards: zarrpp writes the shard index at the end, got index_location={loc!r}")
        shards = shards.get("shape")
    if isinstance(shards, str):
        if shards != "auto":
            raise ValueError(f"shards: a shape, a dict {{'shape': ...}}, 'auto' or None, got {shards!r}")
        target = _config.config.get("array.target_shard_size_bytes")
        shards = tuple(_zarrpp.auto_shards(list(shape), list(chunks), zarr_name,
                                           None if target is None else int(target)))
    return None if shards is None else _as_shape(shards, "shards")


def _key_encoding(chunk_key_encoding: Any, dimension_separator: Optional[str]) -> Optional[Dict[str, Any]]:
    """``chunk_key_encoding=`` (zarr-python 3's forms: a name, ``{"name", "separator"}`` or
    ``{"name", "configuration"}``) and ``dimension_separator=`` as zarr.json states the encoding,
    for the core to read (None: the format's default)."""
    if chunk_key_encoding is None:
        if dimension_separator is None:
            return None
        return {"name": "", "configuration": {"separator": dimension_separator}}
    if isinstance(chunk_key_encoding, str):
        cke: Dict[str, Any] = {"name": chunk_key_encoding}
    elif isinstance(chunk_key_encoding, Mapping):
        cke = dict(chunk_key_encoding)
    elif isinstance(chunk_key_encoding, tuple) and len(chunk_key_encoding) == 2 and \
            all(isinstance(x, str) for x in chunk_key_encoding):
        cke = {"name": chunk_key_encoding[0], "separator": chunk_key_encoding[1]}  # zarr.create's ("v2", ".")
    else:
        raise TypeError(f"chunk_key_encoding: expected a name or a dict, got {type(chunk_key_encoding).__name__}")
    config = dict(cke.pop("configuration", None) or {})
    for sep in ([cke.pop("separator")] if "separator" in cke else []) + (
            [dimension_separator] if dimension_separator is not None else []):
        if config.setdefault("separator", sep) != sep:
            raise ValueError(f"chunk_key_encoding {chunk_key_encoding!r} and dimension_separator "
                             f"{dimension_separator!r} ask for different separators")
    return {**cke, "configuration": config} if config else cke


def _split_codecs(codecs: Any, what: str) -> Tuple[List[Codec], Optional[Codec], List[Codec]]:
    """A whole v3 codec list as (filters, serializer or None, compressors), by each codec's role."""
    filters: List[Codec] = []
    compressors: List[Codec] = []
    serializer: Optional[Codec] = None
    for c in _as_list(codecs, what):
        role = _zarrpp.codec_role(c.name)
        if role == "array_to_array":
            filters.append(c)
        elif role == "array_to_bytes":
            serializer = c
        else:
            compressors.append(c)
    return filters, serializer, compressors
