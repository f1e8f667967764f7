"""Arrays: the Python face of zarrpp's C++ Array (zarr-python's API shape)."""
from __future__ import annotations

import contextlib
import math
import operator
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple

import numpy as np

from . import _zarrpp
from . import _config
from .codecs import Codec, from_metadata
from .errors import ArrayNotFoundError, NodeTypeValidationError
from .storage import is_read_only, make_store
from ._arguments import _NO_REGULAR
from ._config import ArrayConfig, _checked_config
from ._display import Info, array_info_rows, _Progress, _array_html, _fan_out, _human
from ._node import Metadata, _Node, _check_mode, _check_store_writable, _refuse_existing, _store_url
from ._indexers import CoordinateIndexer, _Indexer
from ._values import cast_to, _check_fields, _fields_of, _is_int, _pop_fields, _select_fields


__all__ = ["Array", "CoordinateIndexer"]


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
        settings = _config.config.flat_section("array")
        stored_order = core.v2_order
        self._config = ArrayConfig.from_settings(settings, **({"order": stored_order} if stored_order else {}))
        _apply_config(core, _config.array_defaults(settings))

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
        return self._core.v2_order or self._config.order

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
        return Metadata(self._core.metadata_document)

    def _codec_lists(self) -> Tuple[tuple, Optional[Codec], tuple]:
        parts = self._core.codec_parts

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
        return Info(array_info_rows(self))

    def info_complete(self) -> "Info":
        """``info`` with what reading the store tells: the chunks stored and the bytes they take."""
        return Info(array_info_rows(self) + [
            ("No. bytes stored", f"{self.nbytes_stored()} ({_human(self.nbytes_stored())})"),
            ("Chunks Initialized", f"{self.nchunks_initialized}/{self.nchunks}")])

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
        return (_reopen, (_store_for_pickle(self.store), self.path, self._read_only))

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
    def _attrs_update(self, patch: Dict[str, Any]) -> None:
        self._check_writable()
        self._core.update_attributes(patch)

    def _refresh(self) -> None:
        self._core.refresh()

    def refresh(self) -> None:
        """Re-reads zarr.json (after another handle or process changed the array)."""
        self._core.refresh()

    # ---- helpers ----
    # ---- what the other modules of the package ask of the core array (only this module holds it) ----
    @property
    def _type_name(self) -> str:
        """The zarrpp data type's name ("string", "r16", "int32")."""
        return str(self._core.dtype_name)

    @property
    def _rectilinear(self) -> bool:
        return bool(self._core.rectilinear)

    @property
    def _sharded(self) -> bool:
        return bool(self._core.sharded)

    def _nshards_stored(self) -> int:
        """Stored objects (shards when sharded, else chunks), by listing the store."""
        return int(self._core.nshards_stored())

    def _get_coords(self, selection: Any, mode: str) -> Any:
        """A selection by domain coordinates (``z.coords``)."""
        return self._core.get(selection, mode, coords=True)

    def _write_chunk_sizes(self, per: Sequence[int], region: Any = None) -> Tuple[Tuple[int, ...], ...]:
        """Sizes of the pieces a writer should cut along each dimension: ``per`` shards or chunks
        each (none: one), within ``region`` (coordinates; none: the domain)."""
        sizes = self._core.write_chunk_sizes(list(per)) if region is None else \
            self._core.write_chunk_sizes(list(per), region)
        return tuple(tuple(s) for s in sizes)

    def _xarray_fill_from_attribute(self, attribute: Any) -> Any:
        """The fill value xarray's ``_FillValue`` attribute (its JSON value) means for this array."""
        return self._core.xarray_fill_from_attribute(attribute)

    def _copy_to(self, store: Any, path: str, grid: str, overwrite: bool, count: Any) -> "Array":
        """A copy of this array at ``path`` of ``store`` (zarrpp's copy_array)."""
        return Array(_zarrpp.copy_array(self._core, store, path, grid, overwrite, count), store=store)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ValueError("this array was opened read-only (mode='r' or a read-only store) and cannot be written")

    def _cast(self, value: Any) -> np.ndarray:
        """``value`` as a NumPy array of this array's dtype (native byte order), NumPy's assignment casting."""
        return cast_to(value[...] if isinstance(value, Array) else value, self._dtype)

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


def _store_for_pickle(store: Any) -> Any:
    if isinstance(store, _zarrpp.MemoryStore):
        raise TypeError("an array or group in a MemoryStore cannot be pickled: the store lives in this process only "
                        "and cannot be reopened elsewhere (use a LocalStore, or an s3:// store, to share it)")
    return store


def _reopen(store: Any, path: str, read_only: bool) -> Array:
    """An unpickled array: the one at ``path`` of ``store``, opened again."""
    return Array(_zarrpp.open_array(store, path), read_only=read_only, store=store)


def _array_from_document(st: Any, path: str, data: Any, overwrite: bool) -> Any:
    """The core array the document ``data`` describes (a dict, zarrpp's Metadata, or an object
    with ``to_dict()`` as zarr-python's metadata classes have), created at ``path``."""
    doc = dict(data.to_dict() if hasattr(data, "to_dict") else data)
    if doc.get("zarr_format") not in (2, 3):
        raise ValueError(f"the document's zarr_format must be 2 or 3, got {doc.get('zarr_format')!r}")
    attributes = doc.pop("attributes", None) if doc["zarr_format"] == 2 else None
    return _zarrpp.create_array_from_document(st, path, doc, attributes, bool(overwrite))


def _apply_config(core: Any, cfg: Dict[str, Any]) -> None:
    if "write_empty_chunks" in cfg:
        core.set_write_empty_chunks(bool(cfg["write_empty_chunks"]))
    if "concurrency" in cfg:
        core.concurrency = int(cfg["concurrency"])


def open_array(store: Any = None, *, path: str = "", name: Optional[str] = None, mode: str = "a",
               zarr_format: Optional[int] = None, storage_options: Optional[Dict[str, Any]] = None) -> Array:
    """Opens an existing array. ``mode``: "r" (read-only), "r+" or "a" (read/write)."""
    _check_mode(mode, ("r", "r+", "a"), "open_array")
    st = make_store(store, read_only=mode == "r", must_exist=True, missing=ArrayNotFoundError,
                    storage_options=storage_options)
    return _open_at(st, name if name is not None else path, mode, zarr_format)


def _open_at(st: Any, path: str, mode: str, zarr_format: Optional[int]) -> Array:
    """The array at ``path`` of the store ``st`` (mode "r", "r+" or "a", checked by the caller)."""
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    p = _zarrpp.normalize_path(path)
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


def like_fill_value(a: Any) -> Any:
    """``a``'s fill value for a new array like it: a v2 object array's missing value (0, None),
    which no str / bytes array holds, becomes the type's empty value."""
    fv = getattr(a, "fill_value", None)
    if isinstance(a, Array) and a.dtype.kind == "O" and not isinstance(fv, (str, bytes)):
        return b"" if a._type_name != "string" else ""
    return fv
