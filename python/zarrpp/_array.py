"""Arrays and groups: the Python face of zarrpp's C++ Array and Group (zarr-python's API shape)."""
from __future__ import annotations

import contextlib
import copy
import html
import json
import math
import operator
import warnings
from collections.abc import ItemsView, KeysView, Mapping, MutableMapping, ValuesView
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, cast

import numpy as np

from . import _zarrpp
from .codecs import Codec, ShardingCodec, _as_list, from_metadata
from .errors import (ArrayNotFoundError, ContainsArrayError, ContainsGroupError, GroupNotFoundError, NodeNotFoundError,
                     NodeTypeValidationError, ZarrRuntimeWarning)
from . import _config
from .storage import is_read_only, make_store

__all__ = ["Array", "Group", "Attributes", "create_array", "open_array", "open_group", "create_group", "group",
           "open", "array"]

# ---- data types ----------------------------------------------------------------------------------


def _parse_dtype(dtype: Any) -> Tuple[np.dtype, str, str]:
    """(native NumPy dtype, Zarr data type name, endian of the bytes codec) for ``dtype=``, as the
    binding reads it (``parse_dtype``). ``str`` / "string" and ``bytes`` / "bytes" are the
    variable-length types, held in NumPy as object arrays of str / bytes (as in zarr-python 3)."""
    np_dtype, name, endian = _zarrpp.parse_dtype(dtype)
    return np_dtype, name, endian


class _DefaultFillValue:
    """create_array's default fill_value: the data type's zero. An explicit None is that too on
    Zarr v3, and on Zarr v2 means no fill value ("fill_value": null), as in zarr-python 3."""

    def __repr__(self) -> str:
        return "DEFAULT_FILL_VALUE"


DEFAULT_FILL_VALUE: Any = _DefaultFillValue()


def _core_fill_value(fill_value: Any, zarr_format: Optional[int]) -> Any:
    if fill_value is DEFAULT_FILL_VALUE:
        return None
    if fill_value is None and zarr_format == 2:
        return _zarrpp.NO_FILL_VALUE
    return fill_value


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"attribute values must be JSON-serialisable, got {type(o).__name__}")


def _to_json_text(obj: Any) -> str:
    # NaN and +-inf are written as zarr-python writes them (bare NaN / Infinity / -Infinity, which
    # Python's json reads; strict JSON readers such as zarrita.js and TensorStore refuse them).
    return json.dumps(obj, default=_json_default)


def _store_url(store: Any) -> str:
    if hasattr(store, "_zarrpp_url"):  # the URL it was opened by (memory://name/path, s3://...)
        return str(store._zarrpp_url)
    if isinstance(store, _zarrpp.LocalStore):
        return f"file://{store.root}"
    if isinstance(store, _zarrpp.MemoryStore):
        return str(store)
    return store.describe()


def _join(base: str, name: str) -> str:
    name = name.strip("/")
    return f"{base}/{name}" if base else name


def _check_store_writable(store: Any) -> None:
    if is_read_only(store):
        raise ValueError(f"store {_store_url(store)} is read-only and cannot be written")


def _check_mode(mode: str, allowed: Sequence[str], what: str) -> None:
    if mode not in allowed:
        raise ValueError(f"{what}: mode must be one of {', '.join(repr(m) for m in allowed)}, got {mode!r}")


# ---- values --------------------------------------------------------------------------------------

def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _python_numbers(value: Any, a: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Python numbers (scalars, lists) converted as ``np.asarray(value, dtype=dt)`` converts them
    in NumPy 2: an integer that does not fit an integer dtype is an OverflowError (never wrapped
    around or rounded through float64, as a list mixing small and huge integers would be)."""
    if dt.kind in "iu":
        objs = np.asarray(value, dtype=object).ravel() if a.dtype.kind in "fO" or a.dtype.kind in "iu" else None
        if objs is not None:
            info = np.iinfo(dt)
            for v in objs:
                if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and \
                        not info.min <= int(v) <= info.max:
                    raise OverflowError(f"Python integer {int(v)} out of bounds for {dt}")
        if a.dtype.kind in "Ofiu":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return np.array(value, dtype=dt)
            except (TypeError, ValueError):
                return a
        return a
    if a.dtype.kind == "O" and a.size and all(isinstance(v, int) and not isinstance(v, bool) for v in a.ravel()):
        return np.array(value, dtype=dt)
    return a


# ---- attributes ----------------------------------------------------------------------------------

def _pop_fields(selection: Any) -> Tuple[Any, Any]:
    """(fields, the rest) of ``z[...]``'s selection, as zarr-python 2 splits them: a string, or the
    strings of a tuple, name fields of a structured type; a list of strings names several."""
    if isinstance(selection, str):
        return selection, ()
    if isinstance(selection, list) and selection and all(isinstance(f, str) for f in selection):
        return selection, ()
    if not isinstance(selection, tuple) or not any(isinstance(f, str) for f in selection):
        return None, selection
    names = [f for f in selection if isinstance(f, str)]
    rest = tuple(f for f in selection if not isinstance(f, str))
    return (names[0] if len(names) == 1 else names), (rest[0] if len(rest) == 1 else rest)


def _fields_of(selection: Any, fields: Any) -> Tuple[Any, Any]:
    """``fields=``, or the fields named in ``z.oindex[...]`` / ``z.vindex[...]``'s selection."""
    if fields is not None:
        return fields, selection
    return _pop_fields(selection)


def _check_fields(fields: Any, dtype: np.dtype) -> None:
    if not isinstance(fields, (str, list, tuple)) or \
            (not isinstance(fields, str) and not all(isinstance(f, str) for f in fields)):
        raise IndexError(f"fields must be a field name or a list of them, not {fields!r}")
    if dtype.names is None:
        raise IndexError(f"fields {fields!r}: this array's dtype {dtype} has no fields")
    for f in [fields] if isinstance(fields, str) else fields:
        if f not in dtype.names:
            raise IndexError(f"field {f!r} is not one of this array's fields {list(dtype.names)}")


def _select_fields(values: Any, fields: Any) -> Any:
    """A field (its values; a subarray field adds its dimensions), or several fields as a packed
    structured array, of ``values``: what zarr-python 2 returns for ``fields=``."""
    a = np.asarray(values)
    if isinstance(fields, str):
        got = np.array(a[fields])
    else:
        fields = list(fields)
        got = np.empty(a.shape, dtype=np.dtype([(f, a.dtype[f]) for f in fields]))
        for f in fields:
            got[f] = a[f]
    # a scalar for one element (z[0, "a"]), a 0-d array where the core gave one (z[...] of 0-d)
    return got[()] if not isinstance(values, np.ndarray) and got.ndim == 0 else got


def _structured_value(value: Any, dt: np.dtype) -> np.ndarray:
    """``value`` (records, tuples, another structured array with these field names) as this
    structured dtype, by NumPy's assignment."""
    if isinstance(value, (np.ndarray, np.void)) and value.dtype.names is not None:
        if value.dtype.names != dt.names:
            raise TypeError(f"cannot store data of dtype {value.dtype} in a zarrpp array of dtype {dt}: "
                            f"the fields differ ({list(value.dtype.names)} against {list(dt.names or ())})")
        return np.asarray(value).astype(dt)
    return np.array(value, dtype=dt)


class Attributes(MutableMapping):
    """A node's user attributes (zarr.json "attributes"); every change is written to the store.

    Every reading method answers from one snapshot of the attributes the handle holds: the
    converted dict is kept until the handle's metadata changes (``generation``), so ``dict(a)``,
    ``a.items()`` or ``a[k]`` in a loop take linear time in the number of keys."""

    def __init__(self, node: "Union[Array, Group]"):
        self._node = node

    def _snapshot(self) -> Dict[str, Any]:
        # One conversion per metadata generation, shared by the node's Attributes objects; callers
        # must not hand this dict (or its containers) out without copying.
        node = self._node
        gen = node._core.generation
        cached = getattr(node, "_attrs_cache", None)
        if cached is None or cached[0] != gen:
            cached = (gen, node._attrs_get())
            node._attrs_cache = cached
        return cached[1]

    def asdict(self) -> Dict[str, Any]:
        """A copy of the attributes as a dict (as stored now)."""
        return copy.deepcopy(self._snapshot())

    def __getitem__(self, key: str) -> Any:
        v = self._snapshot()[key]
        return copy.deepcopy(v) if isinstance(v, (dict, list)) else v

    def get(self, key: str, default: Any = None) -> Any:
        """The attribute ``key``, or ``default`` when there is none."""
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: str, value: Any) -> None:
        self._node._attrs_update({key: value})

    def __delitem__(self, key: str) -> None:
        # Removed from the attributes as stored now, so keys other handles added meanwhile stay.
        if not self._node._attrs_remove([key]):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._snapshot()))

    def __len__(self) -> int:
        return len(self._snapshot())

    def __contains__(self, key: object) -> bool:
        return key in self._snapshot()

    def keys(self) -> KeysView:  # type: ignore[override]
        """The attribute names."""
        return dict.fromkeys(self._snapshot()).keys()

    def items(self) -> ItemsView:  # type: ignore[override]
        """(name, value) pairs of a copy of the attributes."""
        return self.asdict().items()

    def values(self) -> ValuesView:  # type: ignore[override]
        """The values of a copy of the attributes."""
        return self.asdict().values()

    def update(self, *args: Any, **kwargs: Any) -> None:  # one write for all keys
        """Sets several attributes in one write; other keys (also those another handle added) stay."""
        self._node._attrs_update(dict(*args, **kwargs))

    def put(self, d: Dict[str, Any]) -> None:
        """Replaces all attributes with ``d``."""
        self._node._attrs_put(dict(d))

    def refresh(self) -> None:
        """Reads the attributes from the store again (another process may have changed them)."""
        self._node._refresh()

    def __repr__(self) -> str:
        return repr(self._snapshot())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Attributes):
            other = other._snapshot()
        return self._snapshot() == other


# ---- arrays --------------------------------------------------------------------------------------

class _Indexer:
    def __init__(self, array: "Union[Array, CoordinateIndexer]", get: str, set_: str):
        self._array, self._get, self._set = array, get, set_

    def __getitem__(self, selection: Any) -> Any:
        return getattr(self._array, self._get)(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        getattr(self._array, self._set)(selection, value)


class CoordinateIndexer:
    """``z.coords[...]``: the array addressed by its domain's coordinates, as TensorStore does.

    Index ``i`` is the element at coordinate ``i`` whatever the lower bound is now, so a selection
    means the same elements before and after growth at either end (by this process or another);
    ``z[...]`` counts from the lower bound instead, so after a prepend it shifts. Negative numbers
    are coordinates (they do not count from the end), a missing slice bound is the domain's bound,
    and a coordinate outside the domain raises IndexError (never clamped). Integers, slices, 1-d
    integer arrays and 1-d boolean arrays select orthogonally (as ``oindex``); ``z.coords.vindex``
    takes points. When a selection falls outside the domain the handle knows, the metadata is
    re-read once (another process may have grown the array) before refusing.
    """

    def __init__(self, array: "Array"):
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        return self._array._core.get(selection, "orthogonal", coords=True)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._array._set(selection, value, "orthogonal", coords=True)

    @property
    def oindex(self) -> "CoordinateIndexer":
        return self

    @property
    def vindex(self) -> _Indexer:
        """Points by coordinates: integer arrays broadcast together, one element per point."""
        return _Indexer(self, "_get_points", "_set_points")

    def _get_points(self, selection: Any) -> np.ndarray:
        return self._array._core.get(selection, "vindex", coords=True)

    def _set_points(self, selection: Any, value: Any) -> None:
        self._array._set(selection, value, "vindex", coords=True)


class _Node:
    """What arrays and groups share: where they are and their attributes."""

    _core: Any
    _store: Any
    _read_only: bool
    _attrs_cache: Tuple[int, Dict[str, Any]]  # set by Attributes._snapshot

    @property
    def attrs(self) -> Attributes:
        """The user attributes, read and written like a dict (each change is one write to the metadata)."""
        return Attributes(cast("Union[Array, Group]", self))

    @property
    def path(self) -> str:
        """The node's path in its store ("" at the root)."""
        return self._core.path

    @property
    def name(self) -> str:
        """The node's path with a leading "/", as zarr-python's ``name``."""
        return "/" + self._core.path

    @property
    def basename(self) -> str:
        """The last part of the node's path."""
        return self._core.path.rsplit("/", 1)[-1]

    @property
    def store(self) -> Any:
        """The store the node is in."""
        return self._store

    @property
    def store_path(self) -> Any:
        """The node's store and path, as zarr-python's ``StorePath``."""
        from .storage import StorePath
        return StorePath(self._store, self.path)

    @property
    def read_only(self) -> bool:
        """Whether writes through this handle are refused."""
        return self._read_only


class Array(_Node):
    """A Zarr v3 array. Create one with :func:`zarrpp.create_array`, open one with
    :func:`zarrpp.open_array`. Indexing follows NumPy (``z[...]``), with ``z.oindex``,
    ``z.vindex`` and ``z.blocks`` as in zarr-python. Index 0 is the first element of the domain,
    which may start below 0 after :meth:`prepend`."""

    def __init__(self, core: Any, read_only: bool = False, store: Any = None):
        if not isinstance(core, _zarrpp.Array):
            raise TypeError("use zarrpp.create_array or zarrpp.open_array to get an Array")
        self._core = core
        # The Python store object (a subclass instance with its own attributes), kept alive here.
        self._store = store if store is not None else core.store
        self._read_only = bool(read_only) or is_read_only(self._store)
        self._dtype = core.dtype  # never changes for an array
        # zarrpp.config's, when opened or created; a v2 array's reads come in its stored order.
        self._config = ArrayConfig.from_settings(**({"order": core.v2_order} if core.zarr_format == 2 else {}))
        _apply_config(core, _config.array_defaults())

    # ---- description ----
    @property
    def shape(self) -> Tuple[int, ...]:
        """The number of elements per dimension (zero-based, as NumPy's). Setting it resizes."""
        return self._core.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        """``z.shape = (n, ...)`` resizes, as in zarr-python."""
        self.resize(value)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._core.ndim

    @property
    def dtype(self) -> np.dtype:
        """The NumPy data type of the elements (``object`` for variable-length strings and bytes)."""
        return self._dtype

    @property
    def chunks(self) -> Tuple[int, ...]:
        """The read/write chunk shape (the inner chunk when sharded). A rectilinear grid has none:
        NotImplementedError, as in zarr-python (``read_chunk_sizes`` has every chunk's size)."""
        if self._core.rectilinear:
            raise NotImplementedError(_NO_REGULAR.format("chunks", "read_chunk_sizes"))
        return self._core.chunks

    @property
    def shards(self) -> Optional[Tuple[int, ...]]:
        """The shard shape, or None; rectilinear shards have none (NotImplementedError, as in
        zarr-python: ``write_chunk_sizes`` has every shard's size)."""
        if self._core.rectilinear and self._core.sharded:
            raise NotImplementedError(_NO_REGULAR.format("shards", "write_chunk_sizes"))
        return None if self._core.rectilinear else self._core.shards

    def _grid_args(self) -> Dict[str, Any]:
        """``chunks`` and ``shards`` that create an array with this one's grid (per-dimension sizes
        for a rectilinear grid)."""
        if not self._core.rectilinear:
            return {"chunks": self.chunks, "shards": self.shards}
        sizes = [list(s) for s in self._core.grid_sizes()]  # the last not cut at the end: the same grid
        if self._core.sharded:  # rectilinear shards of regular inner chunks
            return {"chunks": tuple(self._core.chunks), "shards": sizes}
        return {"chunks": sizes, "shards": None}

    @property
    def domain(self) -> Tuple[Tuple[int, int], ...]:
        """Per dimension, the (inclusive lower, exclusive upper) coordinate bound."""
        return self._core.domain

    @property
    def lower_bound(self) -> Tuple[int, ...]:
        """The domain's first coordinate per dimension (0 unless the array was prepended or created
        with a lower bound); ``z[0]`` is the element at this coordinate, ``z.coords[c]`` at ``c``."""
        return tuple(lo for lo, _ in self._core.domain)

    @property
    def origin(self) -> Tuple[int, ...]:
        """The coordinate where chunk index 0 starts, per dimension (0 for a ``regular`` grid);
        growth never changes it, so chunk (shard) boundaries lie at ``origin + k * chunk``. On a
        ``rectilinear_bounded`` grid: where its first listed chunk (``first_chunk`` in zarr.json)
        starts, as zarr.json states it."""
        grid = self.metadata.get("chunk_grid", {})
        if grid.get("name") in ("regular_bounded", "rectilinear_bounded"):
            return tuple(int(v) for v in grid["configuration"]["origin"])
        return (0,) * self.ndim

    @property
    def fill_value(self) -> Any:
        """What elements no stored chunk holds read as (None when a Zarr v2 array states none)."""
        raw = self._core.fill_value_bytes
        if self._core.v2_fill_null:  # .zarray states none: None, as zarr-python gives it
            return None
        if self._dtype.kind == "O":  # str / bytes elements: the text or bytes themselves
            missing = self._core.missing_element
            if missing is not None:  # a v2 object array's 0 or None, as zarr-python 2 gives it
                return missing[0]
            return raw.decode("utf-8") if self._core.dtype_name == "string" else raw
        return np.frombuffer(raw, dtype=self._dtype)[0]

    @property
    def size(self) -> int:
        """The number of elements (the product of ``shape``)."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The elements' size in memory, in bytes (``size * itemsize``), as NumPy's ``nbytes``."""
        return self.size * self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element in memory."""
        return self._dtype.itemsize

    @property
    def order(self) -> str:
        """A v2 array's stored order; a v3 array's runtime order (``config.order``: the memory
        layout of the NumPy arrays reads return)."""
        return self._core.v2_order if self._core.zarr_format == 2 else self._config.order

    def _configure(self, cfg: Dict[str, Any]) -> None:
        """Applies checked ``config=`` values to this handle."""
        keep = ("order",) if self.zarr_format == 2 else ()  # a v2 array's order is its stored one
        self._config = self._config.replace(**{k: v for k, v in cfg.items() if k in ArrayConfig.KEYS and k not in keep})
        _apply_config(self._core, cfg)

    @property
    def config(self) -> "ArrayConfig":
        """This handle's settings (zarr-python's ``ArrayConfig``)."""
        return self._config

    def with_config(self, config: Any) -> "Array":
        """Another handle on this array with ``config`` (a dict or ``ArrayConfig``) changing its settings."""
        given = config.as_dict() if isinstance(config, ArrayConfig) else _checked_config(config)
        other = Array(_zarrpp.open_array(self.store, self.path), read_only=self._read_only, store=self._store)
        other._config = self._config.replace(**{k: v for k, v in given.items() if k != "concurrency"})
        _apply_config(other._core, {"write_empty_chunks": other._config.write_empty_chunks, **{
            k: v for k, v in given.items() if k == "concurrency"}})
        return other

    @property
    def compressor(self) -> Any:
        """A Zarr v2 array's one compressor (None when it has none); Zarr v3 arrays have
        ``compressors`` instead (TypeError, as in zarr-python)."""
        if self.zarr_format != 2:
            raise TypeError("compressor is a Zarr v2 attribute; use compressors for a Zarr v3 array")
        return self.compressors[0] if self.compressors else None

    @classmethod
    def open(cls, store: Any, *, zarr_format: Optional[int] = None) -> "Array":
        """The existing array at ``store`` (zarr-python's ``Array.open``)."""
        return open_array(store, zarr_format=zarr_format)

    @classmethod
    def from_dict(cls, store_path: Any, data: Dict[str, Any]) -> "Array":
        """The array the metadata document ``data`` (zarr.json's fields; for ``zarr_format`` 2,
        .zarray's with ``attributes``) describes, at ``store_path``. zarr-python builds the handle
        without writing; a zarrpp array lives in its store, so the document is validated and
        written, and a node already there is ContainsArrayError / ContainsGroupError."""
        st = make_store(store_path)
        _check_store_writable(st)
        _refuse_existing(st, "")
        return cls(_array_from_document(st, "", data, overwrite=False), store=st)

    @property
    def zarr_format(self) -> int:
        """3 for a zarr.json array, 2 for a .zarray one."""
        return int(self._core.zarr_format)

    @property
    def nchunks(self) -> int:
        """Chunks in the chunk grid (inner chunks when sharded, which may exceed the stored objects),
        as zarr-python counts them: the product of ``cdata_shape``."""
        return int(self._core.nchunks())

    @property
    def nchunks_initialized(self) -> int:
        """Chunks stored, as zarr-python counts them: when sharded, stored shards times the chunks
        per shard."""
        return int(self._core.nchunks_initialized())

    @property
    def nshards(self) -> int:
        """Stored objects in the grid (shards when sharded, else chunks)."""
        return int(self._core.nshards())

    def nbytes_stored(self) -> int:
        """Bytes the array occupies in its store: its metadata and every stored chunk, as zarr-python's
        ``nbytes_stored()``."""
        return self._core.nbytes_stored()

    @property
    def metadata(self) -> "Metadata":
        """The array's zarr.json document (a v2 array's .zarray): a dict whose fields are also
        attributes (``z.metadata.shape``, ``.dimension_names``, ``.to_dict()``), as zarr-python's
        metadata objects."""
        return Metadata(json.loads(self._core.metadata_json))

    def _codec_lists(self) -> Tuple[tuple, Optional[Codec], tuple]:
        parts = json.loads(self._core.codec_parts_json)

        def obj(c: Any) -> Any:
            return from_metadata(c) or c
        serializer = None if parts["serializer"] is None else obj(parts["serializer"])
        return tuple(map(obj, parts["filters"])), serializer, tuple(map(obj, parts["compressors"]))

    @property
    def compressors(self) -> tuple:
        """The bytes-to-bytes codecs (compressors, checksums), in order, as codec objects."""
        return self._codec_lists()[2]

    @property
    def filters(self) -> tuple:
        """The array-to-array codecs (v3) or numcodecs filters (v2), in order."""
        return self._codec_lists()[0]

    @property
    def serializer(self) -> Optional[Codec]:
        """The array-to-bytes codec (``bytes``, ``vlen-utf8``, ``sharding_indexed``, ...), or None."""
        return self._codec_lists()[1]

    @property
    def info(self) -> "Info":
        """A description that prints as a table (``print(z.info)``, or ``z.info`` at a prompt)."""
        return Info(self._info_rows())

    def info_complete(self) -> "Info":
        """``info`` with what reading the store tells: the chunks stored and the bytes they take."""
        return Info(self._info_rows() + [
            ("No. bytes stored", f"{self.nbytes_stored()} ({_human(self.nbytes_stored())})"),
            ("Chunks Initialized", f"{self.nchunks_initialized}/{self.nchunks}")])

    def _info_rows(self) -> List[Tuple[str, str]]:
        filters, serializer, compressors = self._codec_lists()
        rows = [
            ("Type", "Array"),
            ("Zarr format", str(self.zarr_format)),
            ("Data type", str(self._dtype) if self._dtype.kind not in "VO" else self._core.dtype_name),
            ("Fill value", repr(self.fill_value if self._dtype.kind == "O" or self.fill_value is None else
                                self.fill_value.item() if self._dtype.kind != "V" else self.fill_value.tobytes())),
            ("Shape", str(self.shape)),
            ("Domain", str(self.domain)),
            ("Chunk shape", str(self._grid_args()["chunks"]) if not self._core.rectilinear or
             self._core.sharded else "<variable>"),
        ]
        if self._core.rectilinear and self._core.sharded:
            rows.append(("Shard shape", "<variable>"))
        elif self.shards is not None:
            rows.append(("Shard shape", str(self.shards)))
        rows += [
            ("Order", self.order),
            ("Read-only", str(self.read_only)),
            ("Store type", type(self.store).__name__),
            ("Filters", str(filters)),
            ("Serializer", str(serializer)),
            ("Compressors", str(compressors)),
            ("No. bytes", f"{self.nbytes} ({_human(self.nbytes)})"),
        ]
        if self.attrs:
            rows.append(("Attributes", json.dumps(self.attrs.asdict())))
        return rows

    def __repr__(self) -> str:
        where = _store_url(self.store) + ("/" + self.path if self.path else "")
        return f"<Array {where} shape={self.shape} dtype={self._dtype}>"

    def chunk_map_svg(self, size: int = 400, max_cells: int = 40) -> str:
        """The chunk map as a standalone SVG document (what ``zarrpp show ARRAY --svg`` writes): the
        domain in coordinates with chunks before coordinate 0 left of or above it, the chunk (and
        shard) grid, which chunks are stored, and where edge chunks pass the domain (hatched). The
        last two dimensions are drawn; more than ``max_cells`` chunks along a side are drawn
        together, shaded by the share stored. ``size`` is the grid's longer side in pixels."""
        return str(self._core.chunk_map_svg(int(size), int(max_cells)))

    def _repr_html_(self) -> str:
        """The notebook view: the essentials beside the chunk map, as Dask and xarray show theirs."""
        return _array_html(self)

    def __eq__(self, other: object) -> bool:
        """Two handles on the same array (same store, same path) are equal, as in zarr-python."""
        if not isinstance(other, Array):
            return NotImplemented
        return self.store == other.store and self.path == other.path

    __hash__ = None  # type: ignore[assignment]  # mutable, as zarr-python's

    def __reduce__(self) -> Any:
        return (_reopen, (_store_for_pickle(self.store), self.path, "array", self._read_only))

    @property
    def cdata_shape(self) -> Tuple[int, ...]:
        """The shape of the chunk grid: chunks per dimension (inner chunks when sharded), as
        zarr-python; with a lower bound, the chunks the domain touches (a partly filled first chunk
        counts)."""
        return tuple(self._core.read_chunk_counts())

    @property
    def read_chunk_sizes(self) -> Tuple[Tuple[int, ...], ...]:
        """How many elements each chunk (inner chunk when sharded) holds, per dimension, the first
        and last cut to the domain."""
        return tuple(tuple(sizes) for sizes in self._core.read_chunk_sizes())

    @property
    def write_chunk_sizes(self) -> Tuple[Tuple[int, ...], ...]:
        """How many elements each stored object (shard when sharded, else chunk) holds, per
        dimension, the first and last cut to the domain."""
        return tuple(tuple(sizes) for sizes in self._core.write_chunk_sizes())

    @property
    def dimension_names(self) -> Optional[Tuple[Optional[str], ...]]:
        """Each dimension's name or None (a v2 array's ``_ARRAY_DIMENSIONS`` attribute), or None."""
        names = self.metadata.get("dimension_names")
        if names is None and self.zarr_format == 2:
            names = self.attrs.get("_ARRAY_DIMENSIONS")
        return None if names is None else tuple(names)

    def update_attributes(self, new_attributes: Dict[str, Any]) -> "Array":
        """Merges ``new_attributes`` into the stored attributes; returns this array (as zarr-python)."""
        self._attrs_update(dict(new_attributes))
        return self

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy is False:
            raise ValueError("`copy=False` is not supported: reading a zarrpp array always makes a new NumPy array")
        a = self.get_basic_selection(Ellipsis)
        return a if dtype is None else a.astype(dtype, copy=False)

    # ---- attributes ----
    def _attrs_get(self) -> Dict[str, Any]:
        return self._core.attributes()

    def _attrs_update(self, patch: Dict[str, Any]) -> None:
        self._check_writable()
        self._core.update_attributes_json(_to_json_text(patch))

    def _attrs_put(self, d: Dict[str, Any]) -> None:
        self._check_writable()
        self._core.set_attributes_json(_to_json_text(d))

    def _attrs_remove(self, keys: List[str]) -> List[str]:
        self._check_writable()
        return list(self._core.remove_attributes(list(keys)))

    def _refresh(self) -> None:
        self._core.refresh()

    def refresh(self) -> None:
        """Re-reads zarr.json (after another handle or process changed the array)."""
        self._core.refresh()

    # ---- helpers ----
    def _check_writable(self) -> None:
        if self._read_only:
            raise ValueError("this array was opened read-only (mode='r' or a read-only store) and cannot be written")

    def _cast(self, value: Any) -> np.ndarray:
        """``value`` as a NumPy array of this array's dtype (native byte order), NumPy's assignment casting."""
        if isinstance(value, Array):
            value = value[...]
        dt = self._dtype
        if dt.kind == "O":  # str / bytes elements: the core checks each one
            if isinstance(value, np.ndarray):
                return value if value.dtype.kind == "O" else value.astype(object)
            if isinstance(value, (bytes, bytearray, memoryview, str)):
                # one element (np.asarray would iterate a bytearray or memoryview)
                out = np.empty((), dtype=object)
                out[()] = bytes(value) if isinstance(value, (bytearray, memoryview)) else value
                return out
            return np.asarray(value, dtype=object)  # keeps bytes exactly (b"\x00" is not b"")
        if dt.fields is not None:
            return _structured_value(value, dt)
        if dt.kind in "USMm":
            # NumPy's own assignment (text cut to the width, dates converted between units, and
            # its refusals: floats or NaN into datetime64, years into minutes), into a buffer
            if isinstance(value, np.ndarray) and value.dtype == dt and value.dtype.isnative:
                return value
            out = np.empty(np.shape(value), dtype=dt)
            out[...] = value
            return out
        a = np.asarray(value)
        if not isinstance(value, (np.ndarray, np.generic)) and dt.kind in "iufcb":
            a = _python_numbers(value, a, dt)
        if a.dtype.kind in "OSUMm" or (a.dtype.kind == "V") != (dt.kind == "V"):
            raise TypeError(f"cannot store data of dtype {a.dtype} in a zarrpp array of dtype {dt}")
        if dt.kind == "V" and a.dtype.itemsize != dt.itemsize:
            raise TypeError(f"cannot store data of dtype {a.dtype} in a zarrpp array of dtype {dt}")
        if a.dtype != dt or not a.dtype.isnative:
            a = a.astype(dt, casting="unsafe")
        return a

    # ---- NumPy-style indexing: the core plans every selection (zarrpp::plan_index) ----
    def _get(self, selection: Any, mode: str, out: Optional[np.ndarray] = None, fields: Any = None) -> Any:
        if isinstance(fields, (list, tuple)) and not fields:  # no field named: whole elements, as zarr-python 2
            fields = None
        if fields is None:
            got = self._core.get(selection, mode, out=out)
            if out is None and self._config.order == "F" and isinstance(got, np.ndarray) and got.ndim > 1:
                return np.asfortranarray(got)
            return got
        _check_fields(fields, self._dtype)
        got = _select_fields(self._core.get(selection, mode), fields)
        if out is None:
            return got
        out[...] = got
        return out

    def _set(self, selection: Any, value: Any, mode: str, coords: bool = False, fields: Any = None) -> None:
        self._check_writable()
        if isinstance(fields, (list, tuple)) and not fields:
            fields = None
        if fields is not None:
            # Fields of whole elements: the elements are read, the fields changed, the elements
            # written back (another writer's change to other fields of them in between is lost).
            _check_fields(fields, self._dtype)
            current = np.array(self._core.get(selection, mode, coords=coords), dtype=self._dtype)
            current[fields] = value
            value = current
        self._core.set(selection, self._cast(value), mode, coords=coords)

    def __getitem__(self, selection: Any) -> Any:
        fields, selection = _pop_fields(selection)
        return self._get(selection, "numpy", None, fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = _pop_fields(selection)
        self._set(selection, value, "numpy", fields=fields)

    # ---- zarr-python's selection methods (fields=: a structured type's field, or list of them) ----
    def get_basic_selection(self, selection: Any = Ellipsis, *, out: Optional[np.ndarray] = None,
                            fields: Any = None) -> Any:
        """``z[selection]`` with integers, slices and Ellipsis only; ``out=`` fills a given array."""
        return self._get(selection, "basic", out, fields)

    def set_basic_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """``z[selection] = value`` with integers, slices and Ellipsis only; the value broadcasts."""
        self._set(selection, value, "basic", fields=fields)

    def get_orthogonal_selection(self, selection: Any, *, out: Optional[np.ndarray] = None, fields: Any = None) -> Any:
        """``z.oindex[selection]``: each index array or mask selects along its own dimension."""
        fields, selection = _fields_of(selection, fields)
        return self._get(selection, "orthogonal", out, fields)

    def set_orthogonal_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """``z.oindex[selection] = value``."""
        fields, selection = _fields_of(selection, fields)
        self._set(selection, value, "orthogonal", fields=fields)

    def get_coordinate_selection(self, selection: Any, *, out: Optional[np.ndarray] = None,
                                 fields: Any = None) -> np.ndarray:
        """``z.vindex[selection]`` with integer arrays: one element per point (the arrays broadcast together)."""
        fields, selection = _fields_of(selection, fields)
        return self._get(selection, "vindex", out, fields)

    def set_coordinate_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """``z.vindex[selection] = value`` with integer arrays."""
        fields, selection = _fields_of(selection, fields)
        self._set(selection, value, "vindex", fields=fields)

    def get_mask_selection(self, mask: Any, *, out: Optional[np.ndarray] = None, fields: Any = None) -> np.ndarray:
        """``z.vindex[mask]``: the elements where a boolean array of the array's shape is true."""
        return self._get(mask, "mask", out, fields)

    def set_mask_selection(self, mask: Any, value: Any, *, fields: Any = None) -> None:
        """``z.vindex[mask] = value``."""
        self._set(mask, value, "mask", fields=fields)

    def get_block_selection(self, selection: Any, *, out: Optional[np.ndarray] = None,
                            fields: Any = None) -> np.ndarray:
        """Blocks are chunks, or shards when sharded (as zarr-python 3 counts them)."""
        return self._get(selection, "blocks", out, fields)

    def set_block_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """``z.blocks[selection] = value``: blocks are chunks, or shards when sharded."""
        self._set(selection, value, "blocks", fields=fields)

    @property
    def oindex(self) -> _Indexer:
        """Orthogonal selection: each index array / mask selects along its own dimension."""
        return _Indexer(self, "get_orthogonal_selection", "set_orthogonal_selection")

    @property
    def vindex(self) -> _Indexer:
        """Coordinate selection (integer arrays broadcast together, one element per point) or mask
        selection (one boolean array of the array's shape)."""
        return _Indexer(self, "get_coordinate_selection", "set_coordinate_selection")

    @property
    def coords(self) -> CoordinateIndexer:
        """Selections in the domain's coordinates (``z.coords[-10:0]``): they mean the same
        elements before and after any growth. See :class:`CoordinateIndexer`."""
        return CoordinateIndexer(self)

    @property
    def blocks(self) -> _Indexer:
        """Block selection in units of chunks (shards when sharded): integers, step-1 slices and one
        Ellipsis; block 0 is the first chunk the domain touches."""
        return _Indexer(self, "get_block_selection", "set_block_selection")

    # ---- growth ----
    def _axis(self, axis: int) -> int:
        axis = operator.index(axis)
        if axis < 0:
            axis += self.ndim
        if not 0 <= axis < max(self.ndim, 1):
            raise IndexError(f"axis {axis} is out of bounds for a {self.ndim}-dimensional array")
        return axis

    def prepend(self, data: Any, axis: int = 0, *, chunk_size: int = 0, progress: Any = None) -> Tuple[int, ...]:
        """Adds ``data`` before index 0 along ``axis``; the domain's lower bound moves down and no
        existing chunk moves. On a rectilinear grid (which becomes ``rectilinear_bounded``) the data
        goes into one new chunk of exactly its extent, or chunks of ``chunk_size`` with only the one
        next to the old data smaller. ``progress``: a callable ``progress(objects, nbytes)`` told of
        each chunk written (from worker threads), or True for a tqdm bar. Returns the new shape."""
        self._check_writable()
        data = self._cast(data)
        with self.progress(progress, desc="prepend", total=getattr(data, "nbytes", None)):
            self._core.prepend(data, self._axis(axis), operator.index(chunk_size))
        return self.shape

    def append(self, data: Any, axis: int = 0, *, chunk_size: int = 0, progress: Any = None) -> Tuple[int, ...]:
        """Adds ``data`` after the last index along ``axis`` (``chunk_size`` and ``progress`` as for
        ``prepend``). Returns the new shape."""
        self._check_writable()
        data = self._cast(data)
        with self.progress(progress, desc="append", total=getattr(data, "nbytes", None)):
            self._core.append(data, self._axis(axis), operator.index(chunk_size))
        return self.shape

    def resize(self, *new_shape: Any, progress: Any = None) -> None:
        """New shape (a tuple, or one int per dimension), keeping the domain's lower bound.
        ``progress``: a callable ``progress(objects, nbytes)`` told of each chunk a shrink removes
        (``nbytes`` 0) or clears, or True for a tqdm bar counting them."""
        if len(new_shape) == 1 and not _is_int(new_shape[0]):
            new_shape = tuple(new_shape[0])
        self._check_writable()
        with self.progress(progress, desc="resize", unit="chunk"):
            self._core.resize([operator.index(n) for n in new_shape])

    @contextlib.contextmanager
    def progress(self, progress: Any = True, *, desc: str = "zarrpp", total: Optional[int] = None,
                 unit: str = "B") -> Iterator[None]:
        """Reports the work of this handle's reads, writes and growth inside a ``with`` block (the
        handle's: from any thread that uses it; blocks inside each other each hear it all):
        ``progress`` is a callable ``progress(objects, nbytes)``, called from the worker threads
        for each stored object (chunk, or shard) read, written or removed with the bytes of the
        selection's elements in it; True draws a tqdm bar (``desc``, ``total`` bytes if known,
        ``unit="chunk"`` to count objects instead); None reports nothing. An exception the callable
        raises goes to ``sys.unraisablehook`` once, and the work goes on. For example, ``with
        z.progress(): z[:] = big`` draws a tqdm bar while the write runs."""
        if progress is None or progress is False:  # nothing asked: an enclosing block's reporting goes on
            yield
            return
        with _Progress(progress, desc, total=total, unit=unit) as p:
            stack = self.__dict__.setdefault("_progress_stack", [])
            stack.append(p.step)
            self._core.set_progress(_fan_out(stack))
            try:
                yield
            finally:
                stack.remove(p.step)
                self._core.set_progress(_fan_out(stack))

    def expand_domain(self, axis: int = 0, *, before: int = 0, after: int = 0) -> Tuple[Tuple[int, int], ...]:
        """Adds ``before`` elements in front of and ``after`` behind the domain along ``axis``, as
        stored now (growth by others meanwhile is kept), writing no data: the new elements read as
        the fill value until written, e.g. by coordinates (``z.coords[...] = ...``), from any
        process. Negative counts shrink that end (deleting its data). Returns the new domain: this
        call's elements are ``[lower, lower + before)`` and ``[upper - after, upper)`` along
        ``axis``.

        The order is C++'s ``expand_domain(axis, before, after)``; ``before`` and ``after`` are
        keyword-only, since passing them swapped would grow or delete the wrong end:
        ``z.expand_domain(0, before=2)``."""
        self._check_writable()
        return self._core.expand_domain(self._axis(axis), before=operator.index(before), after=operator.index(after))

    def resize_domain(self, bounds: Sequence[Tuple[int, int]]) -> None:
        """New domain: one (inclusive lower, exclusive upper) pair per dimension."""
        self._check_writable()
        pairs = []
        for b in bounds:
            lo, hi = b
            pairs.append((operator.index(lo), operator.index(hi)))
        self._core.resize_domain(pairs)

    def convert_to_regular(self) -> None:
        """Switches a ``regular_bounded`` grid back to ``regular`` (which every Zarr reader reads),
        changing zarr.json only: possible when the lower bound and origin are 0 everywhere (a
        ValueError naming them otherwise; ``zarrpp.copy_array(a, dst, grid="regular")`` copies
        instead). A regular grid is left as it is."""
        self._check_writable()
        self._core.convert_to_regular()

    def convert_grid(self, name: str) -> None:
        """Switches the chunk grid in place, changing zarr.json only (no chunk moves): to
        ``"rectilinear_bounded"`` always; to ``"regular_bounded"`` when each dimension's chunks have
        one size; to ``"regular"`` or ``"rectilinear"`` when, besides, the domain and chunk 0 start
        at 0. A ValueError says why otherwise."""
        self._check_writable()
        self._core.convert_grid(name)

    def convert_to_regular_bounded(self) -> None:
        """Switches a ``regular`` grid to ``regular_bounded`` (origin and lower bound 0), changing
        zarr.json only, so the array can later grow in front."""
        self._check_writable()
        self._core.convert_to_regular_bounded()


class _Progress:
    """What a ``progress=`` argument asks for, as callbacks for the core: None or False for none,
    True for a tqdm bar (closed on leaving the ``with`` block), or the caller's callable, called
    as ``progress(objects, nbytes)`` for each stored object finished."""

    def __init__(self, progress: Any, desc: str, *, total: Optional[int] = None, unit: str = "B") -> None:
        self._bar: Any = None
        self._user: Any = None
        self._unit = unit
        self._failed = False
        if progress is None or progress is False:
            return
        if progress is True:
            try:
                from tqdm import tqdm  # type: ignore[import]
            except ImportError:
                raise ImportError("progress=True draws a bar with tqdm, which is not installed (Debian: apt-get "
                                  "install python3-tqdm; or pip install tqdm); pass a callable instead") from None
            self._bar = tqdm(total=total, unit=unit, unit_scale=True, unit_divisor=1024 if unit == "B" else 1000,
                             desc=desc)
        elif callable(progress):
            self._user = progress
        else:
            raise TypeError(f"progress must be a callable, True or None, not {type(progress).__name__}")

    def __enter__(self) -> "_Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.close()

    @property
    def step(self) -> Any:
        """The core's callback (objects, nbytes), or None."""
        if self._bar is None and self._user is None:
            return None
        return self._step

    def _step(self, objects: int, nbytes: int) -> None:
        if self._failed:
            return
        try:
            if self._user is not None:
                self._user(objects, nbytes)
            else:
                self._bar.update(nbytes if self._unit == "B" else objects)
        except BaseException:
            self._failed = True  # reported once (sys.unraisablehook), then no more calls
            raise

    @property
    def count(self) -> Any:
        """The core's callback (done, total) of a copy, chunk by chunk, or None."""
        if self._bar is None and self._user is None:
            return None
        return self._count

    def _count(self, done: int, total: int) -> None:
        if self._bar is not None and self._bar.total != total:
            self._bar.total = total
        self._step(1, 0)


def _fan_out(steps: List[Any]) -> Any:
    """One callback calling each of ``steps`` (the open progress blocks of a handle), or None."""
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    current = list(steps)

    def step(objects: int, nbytes: int) -> None:
        for s in current:
            s(objects, nbytes)
    return step


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)


def _codec_names(a: Array) -> str:
    filters, serializer, compressors = a._codec_lists()
    names = []
    for c in (*filters, *([] if serializer is None else [serializer]), *compressors):
        name = getattr(c, "name", None) or (c.get("name") or c.get("id") if isinstance(c, dict) else None)
        names.append(str(name or c))
    return " \u2192 ".join(names) or "none"


def _html_table(rows: List[Tuple[str, str]]) -> str:
    cells = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(k)}</th>"
                    f"<td style='text-align:left'>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _shape_text(get: Any) -> str:
    try:
        return str(get())
    except NotImplementedError:  # chunks of several sizes (a rectilinear grid)
        return "<variable>"


def _array_rows(a: Array, stored: bool = True) -> List[Tuple[str, str]]:
    """The essentials of the notebook views; ``stored`` adds what listing the store tells."""
    rows = [("Shape", str(a.shape)), ("Domain", ", ".join(f"[{lo}, {hi})" for lo, hi in a.domain)),
            ("Data type", str(a._dtype) if a._dtype.kind not in "VO" else a._core.dtype_name),
            ("Chunks", _shape_text(lambda: a.chunks))]
    if a._core.sharded:
        rows.append(("Shards", _shape_text(lambda: a.shards)))
    rows.append(("Codecs", _codec_names(a)))
    if stored:
        objects = "shards" if a._core.sharded else "chunks"
        try:
            n = a.nbytes_stored()
            rows.append(("Stored", f"{a._core.nshards_stored()} of {a._core.nshards()} {objects}, "
                                   f"{_human(n)}{' B' if n < 1024 else ''} with the metadata"))
        except Exception as e:  # a view must show what it can: say why this part is missing
            rows.append(("Stored", f"not known: {e}"))
    return rows


def _array_html(a: Array) -> str:
    where = _store_url(a.store) + ("/" + a.path if a.path else "")
    try:
        picture = a.chunk_map_svg()
    except Exception as e:  # e.g. a store that cannot be listed: say so instead of a picture
        picture = f"<p>chunk map not drawn: {html.escape(str(e))}</p>"
    return (f"<div><b>zarrpp.Array</b> <code>{html.escape(where)}</code>"
            f"<div style='display:flex;gap:1.5em;align-items:flex-start'>"
            f"<div>{_html_table(_array_rows(a))}</div><div>{picture}</div></div></div>")


def _group_html(g: "Group") -> str:
    where = _store_url(g.store) + ("/" + g.path if g.path else "")
    head = "<tr><th>Name</th><th>Kind</th><th>Shape</th><th>Data type</th><th>Chunks</th><th>Codecs</th></tr>"
    rows = []
    members = g.members()
    for name, node in members[:100]:
        if isinstance(node, Array):  # no listing per member: on S3 that would be a request per chunk
            try:
                r = dict(_array_rows(node, stored=False))
                cells = [name, "array", r["Shape"], r["Data type"], r["Chunks"], r["Codecs"]]
            except Exception as e:
                cells = [name, "array", f"not described: {e}", "", "", ""]
        else:
            cells = [name + "/", "group", "", "", "", ""]
        rows.append("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in cells) + "</tr>")
    more = f"<p>and {len(members) - 100} more members</p>" if len(members) > 100 else ""
    return (f"<div><b>zarrpp.Group</b> <code>{html.escape(where)}</code>, {len(members)} members"
            f"<table>{head}{''.join(rows)}</table>{more}</div>")


# ---- groups --------------------------------------------------------------------------------------

class Group(_Node):
    """A Zarr v3 group: named arrays and groups, with attributes."""

    def __init__(self, core: Any, read_only: bool = False, store: Any = None):
        if not isinstance(core, _zarrpp.Group):
            raise TypeError("use zarrpp.open_group or zarrpp.create_group to get a Group")
        self._core = core
        self._store = store if store is not None else core.store
        self._read_only = bool(read_only) or is_read_only(self._store)

    @property
    def metadata(self) -> "Metadata":
        """The group's zarr.json document (a v2 group's .zgroup with its attributes) as a dict."""
        raw = self.store.get(_join(self.path, "zarr.json"))
        if raw is None and self.zarr_format == 2:
            return Metadata({"zarr_format": 2, "node_type": "group", "attributes": self.attrs.asdict()})
        return Metadata(json.loads(raw) if raw is not None else {})

    def _check_writable(self) -> None:
        if self._read_only:
            raise ValueError("this group was opened read-only (mode='r' or a read-only store) and cannot be written")

    def _refresh(self) -> None:
        self._core = _zarrpp.open_group(self._store, self.path)

    def _attrs_get(self) -> Dict[str, Any]:
        return self._core.attributes()

    def _attrs_update(self, patch: Dict[str, Any]) -> None:
        self._check_writable()
        self._refresh()  # merge into the stored attributes, not a stale copy
        self._core.update_attributes_json(_to_json_text(patch))

    def _attrs_put(self, d: Dict[str, Any]) -> None:
        self._check_writable()
        self._core.set_attributes_json(_to_json_text(d))

    def _attrs_remove(self, keys: List[str]) -> List[str]:
        self._check_writable()
        return list(self._core.remove_attributes(list(keys)))

    def __repr__(self) -> str:
        where = _store_url(self.store) + ("/" + self.path if self.path else "")
        return f"<Group {where}>"

    def _repr_html_(self) -> str:
        """The notebook view: the group's members (at most 100), each array with its shape, data
        type, chunks and codecs."""
        return _group_html(self)

    # ---- children ----
    def _wrap(self, path: str, kind: Optional[str]) -> "Union[Array, Group]":
        if kind == "array":
            return Array(_zarrpp.open_array(self.store, path), read_only=self._read_only, store=self.store)
        return Group(_zarrpp.open_group(self.store, path), read_only=self._read_only, store=self.store)

    def __getitem__(self, name: str) -> "Union[Array, Group]":
        path = _join(self.path, str(name))
        try:
            kind = _zarrpp.node_type(self.store, path)
            if kind is None:
                raise KeyError(name)
            return self._wrap(path, kind)
        except FileNotFoundError:
            raise KeyError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        """The member ``name`` (an Array or a Group; a path such as "sub/a" too), or ``default``."""
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        try:
            return _zarrpp.node_type(self.store, _join(self.path, str(name))) is not None
        except ValueError:
            return False

    def __delitem__(self, name: str) -> None:
        self._check_writable()
        if name not in self:
            raise KeyError(name)
        _zarrpp.remove_node(self.store, _join(self.path, name))

    def keys(self) -> List[str]:
        """The names of the direct members, sorted."""
        return [n for n, _, _ in self._core.children()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._core.children())

    def members(self, max_depth: Optional[int] = 0) -> Tuple[Tuple[str, "Union[Array, Group]"], ...]:
        """(name, node) for every direct child, sorted by name; with ``max_depth`` > 0 (or None:
        all levels) also the members of child groups that deep, keyed by their path relative to
        this group ("sub/a"), as zarr-python. A child zarrpp cannot open (an unknown data type or
        codec, broken metadata) is left out with a warning naming it and why; the others still list."""
        if max_depth is not None and max_depth < 0:
            raise ValueError(f"max_depth must be None or >= 0, got {max_depth}")
        if max_depth != 0:
            nested: list = []
            self._walk(max_depth, "", 0, nested)
            return tuple(nested)
        out = []
        for n, t, err in self._core.children():
            if err is None:
                try:
                    out.append((n, self._wrap(_join(self.path, n), t)))
                    continue
                except (ValueError, NotImplementedError, OSError) as e:
                    err = str(e)
            warnings.warn(f"group member '{_join(self.path, n)}' cannot be opened and is left out: {err}",
                          UnreadableMemberWarning, stacklevel=2)
        return tuple(out)

    def array_keys(self) -> List[str]:
        """The names of the direct members that are arrays."""
        return [n for n, t, _ in self._core.children() if t == "array"]

    def group_keys(self) -> List[str]:
        """The names of the direct members that are groups."""
        return [n for n, t, _ in self._core.children() if t == "group"]

    @property
    def zarr_format(self) -> int:
        """3 for a zarr.json group, 2 for a .zgroup one."""
        return int(self._core.zarr_format)

    def arrays(self) -> Tuple[Tuple[str, Array], ...]:
        """(name, Array) for every direct member that is an array, sorted by name."""
        return tuple((n, a) for n, a in self.members() if isinstance(a, Array))

    def groups(self) -> Tuple[Tuple[str, "Group"], ...]:
        """(name, Group) for every direct member that is a group, sorted by name."""
        return tuple((n, g) for n, g in self.members() if isinstance(g, Group))

    def create(self, name: str, **kwargs: Any) -> Array:
        """``create_array`` (zarr-python's older name for it)."""
        return self.create_array(name, **kwargs)

    def create_hierarchy(self, nodes: Dict[str, Any], *, overwrite: bool = False) -> Any:
        """:func:`zarrpp.create_hierarchy` below this group (paths relative to it)."""
        from ._api import create_hierarchy
        self._check_writable()
        inside = {_join(self.path, p): m for p, m in nodes.items()}
        prefix = len(self.path) + 1 if self.path else 0
        return iter((p[prefix:], node) for p, node in create_hierarchy(store=self.store, nodes=inside,
                                                                       overwrite=overwrite))

    @property
    def synchronizer(self) -> None:
        """zarr-python 2's synchronizer: always None (zarrpp's writes need none)."""
        return None

    def array_values(self) -> Tuple[Array, ...]:
        """The child arrays, sorted by name."""
        return tuple(a for _, a in self.arrays())

    def group_values(self) -> Tuple["Group", ...]:
        """The child groups, sorted by name."""
        return tuple(g for _, g in self.groups())

    def get_array(self, path: str) -> Array:
        """The array at ``path`` below this group ("sub/a" reaches into subgroups);
        ArrayNotFoundError when nothing is there, ContainsGroupError when it is a group."""
        node = self._member_at(path, ArrayNotFoundError)
        if not isinstance(node, Array):
            raise ContainsGroupError(f"'{_join(self.path, path)}' is a group, not an array")
        return node

    def get_group(self, path: str) -> "Group":
        """The group at ``path`` below this group; GroupNotFoundError when nothing is there,
        ContainsArrayError when it is an array."""
        node = self._member_at(path, GroupNotFoundError)
        if not isinstance(node, Group):
            raise ContainsArrayError(f"'{_join(self.path, path)}' is an array, not a group")
        return node

    def _member_at(self, path: str, missing: type) -> "Union[Array, Group]":
        try:
            return self[path]
        except KeyError:
            raise missing(f"nothing at '{_join(self.path, path)}' in {_store_url(self.store)}") from None

    def require_groups(self, *names: str) -> Tuple["Group", ...]:
        """``require_group`` for each name."""
        return tuple(self.require_group(n) for n in names)

    @classmethod
    def from_store(cls, store: Any, *, attributes: Optional[Dict[str, Any]] = None, zarr_format: int = 3,
                   overwrite: bool = False) -> "Group":
        """A new group at the root of ``store`` (zarr-python's ``Group.from_store``)."""
        return create_group(store, attributes=attributes, zarr_format=zarr_format, overwrite=overwrite)

    @classmethod
    def open(cls, store: Any, zarr_format: Optional[int] = None, use_consolidated: Optional[bool] = None
             ) -> "Group":
        """The existing group at the root of ``store`` (zarr-python's ``Group.open``)."""
        return open_group(store, mode="r+" if _writable(store) else "r", zarr_format=zarr_format,
                          use_consolidated=use_consolidated)

    def create_array(self, name: str, **kwargs: Any) -> Array:
        """Creates an array under this group; takes :func:`zarrpp.create_array`'s keywords."""
        self._check_writable()
        kwargs.setdefault("zarr_format", self.zarr_format)
        return create_array(self.store, name=_join(self.path, name), **kwargs)

    def create_group(self, name: str, attributes: Optional[Dict[str, Any]] = None, overwrite: bool = False) -> "Group":
        """Creates the member group ``name`` (with ``attributes``); ``overwrite`` replaces a node there."""
        self._check_writable()
        return create_group(self.store, path=_join(self.path, name), attributes=attributes, overwrite=overwrite,
                            zarr_format=self.zarr_format)

    def require_group(self, name: str) -> "Group":
        """The member group ``name``, created when missing (TypeError when an array is there)."""
        path = _join(self.path, name)
        kind = _zarrpp.node_type(self.store, path)
        if kind == "group":
            return Group(_zarrpp.open_group(self.store, path), read_only=self._read_only, store=self.store)
        if kind == "array":
            raise TypeError(f"'{path}' is an array, not a group")
        return self.create_group(name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Group):
            return NotImplemented
        return self.store == other.store and self.path == other.path

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> Any:
        return (_reopen, (_store_for_pickle(self.store), self.path, "group", self._read_only))

    def update_attributes(self, new_attributes: Dict[str, Any]) -> "Group":
        """Merges ``new_attributes`` into the stored attributes; returns this group."""
        self._attrs_update(dict(new_attributes))
        return self

    def _walk(self, max_depth: Optional[int], prefix: str, depth: int, out: list) -> None:
        # Parents before their members, depth first, without recursion (hierarchies may be deep).
        stack = [(iter(self.members()), prefix, depth)]
        while stack:
            members, at, level = stack[-1]
            item = next(members, None)
            if item is None:
                stack.pop()
                continue
            key = f"{at}/{item[0]}".lstrip("/")
            out.append((key, item[1]))
            if isinstance(item[1], Group) and (max_depth is None or level < max_depth):
                stack.append((iter(item[1].members()), key, level + 1))

    def nmembers(self, max_depth: Optional[int] = 0) -> int:
        """How many members ``members(max_depth)`` lists."""
        return len(self.members(max_depth=max_depth))

    def tree(self, expand: Any = None, level: Optional[int] = None) -> "Info":
        """The hierarchy below this group as text (arrays with shape and dtype), ``level`` levels deep."""
        if expand is not None:
            raise NotImplementedError("'expand' is not implemented (as in zarr-python)")
        lines = [self.name]

        def walk(g: "Group", indent: str, depth: int) -> None:
            kids = sorted(g.members(), key=lambda kv: kv[0])
            for k, (n, node) in enumerate(kids):
                last = k == len(kids) - 1
                label = n if isinstance(node, Group) else f"{n} {node.shape} {node.dtype}"
                lines.append(indent + ("└── " if last else "├── ") + label)
                if isinstance(node, Group) and (level is None or depth < level):
                    walk(node, indent + ("    " if last else "│   "), depth + 1)
        walk(self, "", 1)
        return Info(lines, table=False)

    def require_array(self, name: str, *, shape: Any, dtype: Any = None, exact: bool = False, **kwargs: Any) -> Array:
        """The array ``name``, created with these arguments when missing; an existing one must have
        this shape and a dtype it can be cast to (equal with ``exact``), else TypeError."""
        path = _join(self.path, name)
        kind = _zarrpp.node_type(self.store, path)
        if kind is None:
            return self.create_array(name, shape=shape, dtype=dtype, **kwargs)
        if kind != "array":
            raise TypeError(f"Incompatible object ({kind}) already exists at '{path}'")
        a = cast(Array, self._wrap(path, kind))  # kind == "array"
        want_shape = _as_shape(shape, "shape")
        if a.shape != want_shape:
            raise TypeError(f"Incompatible shape ({a.shape} vs {want_shape})")
        want = _parse_dtype("float64" if dtype is None else dtype)[0]
        if (exact and a.dtype != want) or (not exact and not np.can_cast(a.dtype, want)):
            raise TypeError(f"Incompatible dtype ({a.dtype} vs {want})")
        return a

    def __setitem__(self, name: str, value: Any) -> None:
        """Stores a NumPy array (or anything array-like) as the array ``name``, replacing what is there."""
        self._check_writable()
        if not hasattr(value, "__array__") and not isinstance(value, (list, tuple)):
            raise TypeError(f"a group member must be set to an array, got {type(value).__name__}")
        data = np.asarray(value)
        self.create_array(name, data=data, overwrite=True)

    def _create_filled(self, name: str, shape: Any, fill_value: Any, kwargs: Dict[str, Any]) -> Array:
        kwargs.setdefault("dtype", "float64")
        return self.create_array(name, shape=shape, fill_value=fill_value, **kwargs)

    def zeros(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` of ``shape`` filled with zeros (``create_array``'s keywords)."""
        return self._create_filled(name, shape, 0, kwargs)

    def ones(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` of ``shape`` filled with ones."""
        return self._create_filled(name, shape, 1, kwargs)

    def empty(self, *, name: str, shape: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` of ``shape``, nothing written."""
        return self._create_filled(name, shape, None, kwargs)

    def full(self, *, name: str, shape: Any, fill_value: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` of ``shape`` filled with ``fill_value``."""
        return self._create_filled(name, shape, fill_value, kwargs)

    def _like(self, name: str, data: Any, fill: Any, kwargs: Dict[str, Any]) -> Array:
        for k, v in _like_args(data).items():
            kwargs.setdefault(k, v)
        kwargs.setdefault("fill_value", fill)
        return self.create_array(name, **kwargs)

    def zeros_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` shaped like ``data`` (an array), filled with zeros."""
        return self._like(name, data, 0, kwargs)

    def ones_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` shaped like ``data``, filled with ones."""
        return self._like(name, data, 1, kwargs)

    def empty_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` shaped like ``data``, nothing written."""
        return self._like(name, data, None, kwargs)

    def full_like(self, *, name: str, data: Any, **kwargs: Any) -> Array:
        """Creates the member array ``name`` shaped like ``data``, filled with its fill value (or
        ``fill_value=``)."""
        from ._api import like_fill_value
        return self._like(name, data, like_fill_value(data), kwargs)

    def is_consolidated(self) -> bool:
        """Whether the group has consolidated metadata (.zmetadata, or a v3 consolidated_metadata)."""
        if self.zarr_format == 2:
            return bool(self.store._exists(_join(self.path, ".zmetadata")))
        return isinstance(self.metadata.get("consolidated_metadata"), dict)

    def info_complete(self) -> "Info":
        """``info``, every line read from the store (zarrpp's ``info`` reads it already)."""
        return self.info

    def consolidate_metadata(self) -> "Group":
        """Writes this group's consolidated metadata anew (see :func:`zarrpp.consolidate_metadata`)."""
        self._check_writable()
        self._core.consolidate_metadata()
        return self

    @property
    def info(self) -> "Info":
        """A description of the group that prints as a table (``print(g.info)``)."""
        rows = [("Name", self.name), ("Type", "Group"), ("Zarr format", str(self.zarr_format)),
                ("Read-only", str(self.read_only)), ("Store type", type(self.store).__name__),
                ("No. members", str(len(self))),
                ("No. arrays", str(len(self.array_keys()))), ("No. groups", str(len(self.group_keys())))]
        return Info(rows)


class Metadata(dict):
    """A node's metadata document: a dict, whose fields are also attributes (lists that are
    shapes come back as tuples), with ``to_dict()``, as zarr-python's metadata objects."""

    _TUPLES = ("shape", "chunks", "dimension_names")

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        if key not in self:
            # Optional fields zarr-python's objects have as None: a group without consolidated metadata.
            if key == "dimension_names" or (key == "consolidated_metadata" and self.get("node_type") == "group"):
                return None
            raise AttributeError(f"the metadata has no field {key!r}")
        v = self[key]
        if key in self._TUPLES and isinstance(v, list):
            return tuple(v)
        # Nested objects read the same way (g.metadata.consolidated_metadata.metadata); the
        # members' documents of a consolidated listing are Metadata too.
        if key == "metadata" and isinstance(v, dict) and "kind" in self:
            return {k: Metadata(d) if isinstance(d, dict) else d for k, d in v.items()}
        return Metadata(v) if isinstance(v, dict) and not isinstance(v, Metadata) else v

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(json.dumps(self))


class Info(str):
    """Text that prints as itself at a prompt too (``z.info``, ``g.tree()``): a table of
    "label : value" rows, or lines."""

    rows: List[Any]

    def __new__(cls, rows: Sequence[Any], table: bool = True) -> "Info":
        if table:
            width = max(len(k) for k, _ in rows)
            text = "\n".join(f"{k.ljust(width)} : {v}" for k, v in rows)
        else:
            text = "\n".join(rows)
        obj = super().__new__(cls, text)
        obj.rows = list(rows)
        return obj

    def __repr__(self) -> str:
        return str(self)


def _like_args(a: Any) -> Dict[str, Any]:
    """What the ``*_like`` functions take from ``a``: shape, dtype and chunks (an array's inner
    chunks), and from a zarrpp array also its shards, codecs and format."""
    out: Dict[str, Any] = {}
    if hasattr(a, "shape"):
        out["shape"] = tuple(a.shape)
    if hasattr(a, "dtype"):
        out["dtype"] = a.dtype
    if isinstance(a, Array) and a.dtype.kind == "O":
        out["dtype"] = str if a._core.dtype_name == "string" else bytes
    if isinstance(a, Array):
        grid = a._grid_args()
        out["chunks"] = grid["chunks"]
        if grid["shards"] is not None:
            out["shards"] = grid["shards"]
        if a._core.rectilinear:
            out["_allow_rectilinear"] = True  # the source has the grid: no setting needed to repeat it
        out["compressors"] = a.compressors or None
        out["zarr_format"] = a.zarr_format
        if a.zarr_format == 2:
            out["order"] = a.order
    elif getattr(a, "chunks", None) is not None and isinstance(a.chunks, tuple) and \
            all(isinstance(c, int) for c in a.chunks):
        out["chunks"] = a.chunks
    return out


def _store_for_pickle(store: Any) -> Any:
    if isinstance(store, _zarrpp.MemoryStore):
        raise TypeError("an array or group in a MemoryStore cannot be pickled: the store lives in this process only "
                        "and cannot be reopened elsewhere (use a LocalStore, or an s3:// store, to share it)")
    return store


def _reopen(store: Any, path: str, kind: str, read_only: bool) -> "Union[Array, Group]":
    if kind == "array":
        return Array(_zarrpp.open_array(store, path), read_only=read_only, store=store)
    return Group(_zarrpp.open_group(store, path), read_only=read_only, store=store)


# ---- module-level API ----------------------------------------------------------------------------

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
    if isinstance(serializer, ShardingCodec):
        serializer, shards, chunks, filters, compressors = _unwrap_sharding(serializer, shards, chunks, filters,
                                                                            compressors)
    chunks_t, shards_t, chunk_sizes, shard_sizes = _resolve_grid(chunks, shards, shape_t, zarr_name,
                                                                 _allow_rectilinear)
    filter_specs, compressor_specs = _codec_specs(filters, compressors)
    key_encoding = _key_encoding(chunk_key_encoding, dimension_separator)
    if data is not None and write_data and np_dtype.kind != "O" and not isinstance(data, np.ndarray):
        # Checked (and cast) before anything is created: a value that does not fit leaves nothing behind.
        data = _python_numbers(data, np.asarray(data), np_dtype)
    if not overwrite:
        _refuse_existing(st, _zarrpp.normalize_path(node_path))
    dims = None if dimension_names is None else [None if d is None else str(d) for d in dimension_names]
    lb = None if lower_bound is None else list(_as_shape(lower_bound, "lower_bound"))
    core = _zarrpp.create_array(
        st, node_path, list(shape_t), list(chunks_t), zarr_name,
        _core_fill_value(fill_value, zarr_format),
        filter_specs, compressor_specs,
        None if shards_t is None else list(shards_t), dims,
        _to_json_text(attributes or {}), bool(overwrite), lb, endian, int(zarr_format),
        key_encoding, _serializer_spec(serializer), order or "C", chunk_sizes, shard_sizes)
    arr = Array(core, store=st)
    arr._configure(cfg)
    if data is not None and write_data:
        arr[...] = data
    return arr


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


class ArrayConfig:
    """An array handle's settings, as zarr-python's ``ArrayConfig``: ``order`` (the memory layout
    of what reads return), ``write_empty_chunks``, ``read_missing_chunks`` (True only: zarrpp reads
    a missing chunk as the fill value) and the two sharding read-coalescing limits (kept; zarrpp's
    sharded reads coalesce by their own rule). Unset keys come from ``zarrpp.config``."""

    KEYS = ("order", "write_empty_chunks", "read_missing_chunks", "sharding_coalesce_max_gap_bytes",
            "sharding_coalesce_max_bytes")

    def __init__(self, order: str = "C", write_empty_chunks: bool = False, read_missing_chunks: bool = True,
                 sharding_coalesce_max_gap_bytes: int = 1 << 20, sharding_coalesce_max_bytes: int = 16 << 20):
        self.check({"order": order, "read_missing_chunks": read_missing_chunks})
        self.order = order
        self.write_empty_chunks = bool(write_empty_chunks)
        self.read_missing_chunks = bool(read_missing_chunks)
        self.sharding_coalesce_max_gap_bytes = int(sharding_coalesce_max_gap_bytes)
        self.sharding_coalesce_max_bytes = int(sharding_coalesce_max_bytes)

    @staticmethod
    def check(cfg: Dict[str, Any]) -> None:
        """Refuses settings zarrpp cannot honour (an ``order`` other than C or F,
        ``read_missing_chunks=False``) with a ValueError naming them."""
        if "order" in cfg and cfg["order"] not in ("C", "F"):
            raise ValueError(f"config: order must be 'C' or 'F', got {cfg['order']!r}")
        if cfg.get("read_missing_chunks", True) is not True:
            raise ValueError("config: read_missing_chunks=False is not supported: zarrpp reads a chunk that is not "
                             "stored as the fill value")

    @classmethod
    def from_settings(cls, **given: Any) -> "ArrayConfig":
        """zarrpp.config's ``array.*`` values, with ``given`` instead where given."""
        get = _config.config.get
        values = {k: get("array." + k) for k in cls.KEYS}
        values.update(given)
        return cls(**values)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "ArrayConfig":
        """zarr-python's form: the keys given, zarrpp.config's for the others."""
        cls.check(dict(data))
        unknown = sorted(set(data) - set(cls.KEYS))
        if unknown:
            raise ValueError(f"ArrayConfig: unknown keys {unknown}")
        return cls.from_settings(**data)

    def replace(self, **given: Any) -> "ArrayConfig":
        """A copy with the ``given`` settings changed."""
        return ArrayConfig(**{**self.as_dict(), **given})

    def as_dict(self) -> Dict[str, Any]:
        """The settings as a dict (zarr-python's keys)."""
        return {k: getattr(self, k) for k in self.KEYS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrayConfig) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "ArrayConfig(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


def _array_from_document(st: Any, path: str, data: Any, overwrite: bool) -> Any:
    """The core array the document ``data`` describes (a dict, zarrpp's Metadata, or an object
    with ``to_dict()`` as zarr-python's metadata classes have), created at ``path``."""
    doc = dict(data.to_dict() if hasattr(data, "to_dict") else data)
    if doc.get("zarr_format") not in (2, 3):
        raise ValueError(f"the document's zarr_format must be 2 or 3, got {doc.get('zarr_format')!r}")
    attributes = doc.pop("attributes", None) if doc["zarr_format"] == 2 else None
    return _zarrpp.create_array_from_document(st, path, _to_json_text(doc), _to_json_text(attributes),
                                              bool(overwrite))


def _writable(store: Any) -> bool:
    try:
        return not is_read_only(make_store(store))
    except (TypeError, ValueError):
        return False


def _apply_config(core: Any, cfg: Dict[str, Any]) -> None:
    if "write_empty_chunks" in cfg:
        core.set_write_empty_chunks(bool(cfg["write_empty_chunks"]))
    if "concurrency" in cfg:
        core.concurrency = int(cfg["concurrency"])


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


def _key_encoding(chunk_key_encoding: Any, dimension_separator: Optional[str]) -> str:
    """``chunk_key_encoding=`` (zarr-python 3's forms: a name, ``{"name", "separator"}`` or
    ``{"name", "configuration"}``) and ``dimension_separator=`` as zarr.json states the encoding,
    for the core to read ("": the format's default)."""
    if chunk_key_encoding is None:
        if dimension_separator is None:
            return ""
        return json.dumps({"name": "", "configuration": {"separator": dimension_separator}})
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
    return json.dumps({**cke, "configuration": config} if config else cke)


def _checked_config(config: Any) -> Dict[str, Any]:
    """``config=`` (a dict or an ArrayConfig): zarr-python's ArrayConfig keys and zarrpp's
    concurrency, checked."""
    cfg = config.as_dict() if isinstance(config, ArrayConfig) else dict(config or {})
    unknown = sorted(set(cfg) - set(ArrayConfig.KEYS) - {"concurrency"})
    if unknown:
        raise ValueError(f"config: unknown keys {unknown} (known: {', '.join(ArrayConfig.KEYS)}, concurrency)")
    ArrayConfig.check(cfg)
    if "concurrency" in cfg:
        try:
            cfg["concurrency"] = operator.index(cfg["concurrency"])
        except TypeError:
            raise ValueError(f"config: concurrency must be an integer, got {cfg['concurrency']!r}") from None
        if cfg["concurrency"] < 0:
            raise ValueError(f"config: concurrency must be >= 0, got {cfg['concurrency']}")
    return cfg


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


def _refuse_existing(st: Any, p: str) -> None:
    """zarr-python's errors for a node already at ``p`` (creating without overwrite)."""
    kind = _zarrpp.node_type(st, p)
    if kind == "array":
        raise ContainsArrayError(f"An array exists in store {_store_url(st)} at path {p!r}.")
    if kind == "group":
        raise ContainsGroupError(f"A group exists in store {_store_url(st)} at path {p!r}.")


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


def open_array(store: Any = None, *, path: str = "", name: Optional[str] = None, mode: str = "a",
               zarr_format: Optional[int] = None, storage_options: Optional[Dict[str, Any]] = None) -> Array:
    """Opens an existing array. ``mode``: "r" (read-only), "r+" or "a" (read/write)."""
    _check_mode(mode, ("r", "r+", "a"), "open_array")
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    st = make_store(store, read_only=mode == "r", must_exist=True, missing=ArrayNotFoundError,
                    storage_options=storage_options)
    p = _zarrpp.normalize_path(name if name is not None else path)
    try:
        # Opened directly (on a remote store every document read is a round trip); what is there
        # is asked only to name a failure.
        native = _zarrpp.open_array(st, p)
    except (FileNotFoundError, ValueError):
        kind = _zarrpp.node_type(st, p)
        if kind is None:
            raise ArrayNotFoundError(f"No array found in store {_store_url(st)} at path {p!r}") from None
        if kind == "group":
            raise NodeTypeValidationError(f"'{p or '/'}' in {_store_url(st)} is a group, not an array") from None
        raise
    arr = Array(native, read_only=mode == "r", store=st)
    if zarr_format is not None and arr.zarr_format != zarr_format:
        raise ValueError(f"the array is Zarr format {arr.zarr_format}, not {zarr_format}")
    return arr


def create_group(store: Any = None, *, path: str = "", name: Optional[str] = None,
                 attributes: Optional[Dict[str, Any]] = None, overwrite: bool = False,
                 zarr_format: Optional[int] = None, storage_options: Optional[Dict[str, Any]] = None) -> Group:
    """Creates a group (and any missing parent groups); ``zarr_format=2`` writes .zgroup."""
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    st = make_store(store, storage_options=storage_options)
    _check_store_writable(st)
    p = name if name is not None else path
    if not overwrite:
        _refuse_existing(st, _zarrpp.normalize_path(p))
    return Group(_zarrpp.create_group(st, p, _to_json_text(attributes or {}), bool(overwrite),
                                      _config.default_zarr_format(zarr_format)), store=st)


def open_group(store: Any = None, *, path: str = "", name: Optional[str] = None, mode: str = "a",
               attributes: Optional[Dict[str, Any]] = None, zarr_format: Optional[int] = None,
               storage_options: Optional[Dict[str, Any]] = None, use_consolidated: Optional[bool] = None) -> Group:
    """Opens a group. ``mode``: "r" (read-only, must exist), "r+" (must exist), "a" (create if
    missing), "w" (create, replacing what is there), "w-"/"x" (create, fail if something is there).
    ``use_consolidated=True`` requires the group to have consolidated metadata (ValueError
    otherwise); zarrpp reads every node's own documents either way, so a listing is never stale."""
    _check_mode(mode, ("r", "r+", "a", "w", "w-", "x"), "open_group")
    if use_consolidated:
        # Consolidated metadata is read from a group that exists: nothing is created or replaced.
        if mode not in ("r", "r+", "a"):
            raise ValueError(f"use_consolidated=True reads an existing group's consolidated metadata; mode {mode!r} "
                             "would create one")
        group = open_group(store, path=path, name=name, mode="r" if mode == "r" else "r+", zarr_format=zarr_format,
                           storage_options=storage_options)
        if not group.is_consolidated():
            raise ValueError(f"use_consolidated=True, but the group at {group.path or '/'!r} in "
                             f"{_store_url(group.store)} has no consolidated metadata")
        return group
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    st = make_store(store, read_only=mode == "r", must_exist=mode in ("r", "r+"), missing=GroupNotFoundError,
                    storage_options=storage_options)
    p = _zarrpp.normalize_path(name if name is not None else path)
    if mode in ("r", "r+"):
        kind = _zarrpp.node_type(st, p)
        if kind is None:
            raise GroupNotFoundError(f"No group found in store {_store_url(st)} at path {p!r}")
        if kind == "array":
            raise NodeTypeValidationError(f"'{p or '/'}' in {_store_url(st)} is an array, not a group")
        return _checked_format(Group(_zarrpp.open_group(st, p), read_only=mode == "r", store=st), zarr_format)
    if mode == "a":
        kind = _zarrpp.node_type(st, p)
        if kind == "group":
            return _checked_format(Group(_zarrpp.open_group(st, p), store=st), zarr_format)
        if kind == "array":
            raise ContainsArrayError(f"An array exists in store {_store_url(st)} at path {p!r}.")
    if mode in ("w-", "x"):
        _refuse_existing(st, p)
    _check_store_writable(st)
    return Group(_zarrpp.create_group(st, p, _to_json_text(attributes or {}), mode == "w",
                                      _config.default_zarr_format(zarr_format)), store=st)


class FormatMismatchError(ValueError):
    """An existing node opened with a ``zarr_format`` it is not in."""


def _checked_format(node: Any, zarr_format: Optional[int]) -> Any:
    """An existing node opened with ``zarr_format`` given must be of that format, as arrays are."""
    if zarr_format is not None and node.zarr_format != zarr_format:
        kind = type(node).__name__.lower()
        raise FormatMismatchError(f"the {kind} at {node.path or '/'!r} is a Zarr v{node.zarr_format} {kind}, "
                                  f"not Zarr v{zarr_format}")
    return node


def group(store: Any = None, *, path: str = "", overwrite: bool = False,
          attributes: Optional[Dict[str, Any]] = None) -> Group:
    """Opens the group at ``path``, creating it when missing (or replacing it with ``overwrite``)."""
    return open_group(store, path=path, mode="w" if overwrite else "a", attributes=attributes)


def open(store: Any = None, *, path: str = "", mode: str = "a") -> Union[Array, Group]:  # noqa: A001
    """Opens the array or group at ``path``."""
    _check_mode(mode, ("r", "r+", "a"), "open")
    st = make_store(store, read_only=mode == "r", must_exist=True)
    p = _zarrpp.normalize_path(path)
    kind = _zarrpp.node_type(st, p)
    if kind == "array":
        return Array(_zarrpp.open_array(st, p), read_only=mode == "r", store=st)
    if kind == "group":
        return Group(_zarrpp.open_group(st, p), read_only=mode == "r", store=st)
    raise NodeNotFoundError(f"No array or group found in store {_store_url(st)} at path {p!r}")


class UnreadableMemberWarning(UserWarning):
    """A group member zarrpp cannot open was left out of a listing."""


class ZarrppWarning(UserWarning):
    """What zarrpp's core warns of: a change was made but something it keeps in step could not be
    (consolidated metadata that could not be refreshed, groups above a remote store's root that
    were not checked). The message names the document and how to refresh it."""


def copy_array(source: Array, store: Any, *, path: str = "", grid: Optional[str] = None, overwrite: bool = False,
               storage_options: Optional[Dict[str, Any]] = None, progress: Any = None) -> Array:
    """Copies the array ``source`` into a new array at ``path`` of ``store`` (a store, a path or a
    URL), with the same data type, chunks and codecs, and returns it. ``grid``: the copy's chunk
    grid, ``"regular"`` (index 0 is the source's first element whatever its lower bound, so a
    prepended array can go to readers that know only ``regular``) or ``"regular_bounded"``;
    default: the source's. ``overwrite`` replaces a node already there (after the source was read
    in full). On failure nothing the copy wrote is left. ``progress``: a callable
    ``progress(objects, nbytes)`` told of each chunk (shard) written (``nbytes`` 0: a copy counts
    chunks), or True for a tqdm bar counting them."""
    if not isinstance(source, Array):
        raise TypeError(f"copy_array: source must be a zarrpp Array, not {type(source).__name__}")
    st = make_store(store, storage_options=storage_options)
    _check_store_writable(st)
    with _Progress(progress, "copy", unit="chunk") as p:
        core = _zarrpp.copy_array(source._core, st, path, grid or "", bool(overwrite), p.count)
    return Array(core, store=st)


def _convert(store: Any, path: str, dst: Any, dst_path: str, overwrite: bool, zarr_format: int,
             progress: Any) -> Dict[str, Any]:
    st = make_store(store, must_exist=True)
    d = None if dst is None else make_store(dst)
    _check_store_writable(st if d is None else d)
    with _Progress(progress if d is not None else None, "convert") as p:
        nodes, copied, notes = _zarrpp.convert(st, path, d, dst_path, bool(overwrite), zarr_format, p.step)
    return {"nodes": nodes, "chunks_copied": copied, "notes": list(notes)}


def convert_to_v3(store: Any, *, path: str = "", dst: Any = None, dst_path: str = "",
                  overwrite: bool = False, progress: Any = None) -> Dict[str, Any]:
    """Converts the Zarr v2 array or group at ``path`` (with everything under it) to Zarr v3 without
    rewriting chunks: in place when ``dst`` is None (zarr.json is written, then .zarray/.zgroup/
    .zattrs/.zmetadata removed; running it again finishes an interrupted conversion), else into
    ``dst`` with the chunks copied byte for byte. Returns ``{"nodes", "chunks_copied", "notes"}``.
    ``progress`` (into ``dst`` only; in place nothing is copied): a callable
    ``progress(objects, nbytes)`` told of each chunk copied with its stored bytes, or True for a
    tqdm bar."""
    return _convert(store, path, dst, dst_path, overwrite, 3, progress)


def convert_to_v2(store: Any, *, path: str = "", dst: Any = None, dst_path: str = "",
                  overwrite: bool = False, progress: Any = None) -> Dict[str, Any]:
    """Converts the Zarr v3 array or group at ``path`` (with everything under it) back to Zarr v2
    without rewriting chunks: every node must have a v2 form (no sharding, crc32c or
    regular_bounded grid; checked before anything is written). In place when ``dst`` is None
    (.zattrs and .zarray/.zgroup are written, then zarr.json removed; an array's chunk keys must be
    v2 keys already, as a converted array's are), else into ``dst`` with the chunks copied byte for
    byte under their v2 keys. Returns ``{"nodes", "chunks_copied", "notes"}``. ``progress`` as for
    ``convert_to_v3``."""
    return _convert(store, path, dst, dst_path, overwrite, 2, progress)
