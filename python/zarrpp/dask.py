"""Dask arrays from zarrpp arrays, and Dask arrays written to zarrpp (``import zarrpp.dask``).

``dask.array.from_array(z, chunks=...)`` works on a zarrpp array as it is (reads release the GIL;
on a cluster the array travels as its location and each worker reopens it). The helpers here go
further:

- :func:`from_zarrpp` gives one task per stored object (shard when sharded, else chunk), aligned
  with the chunk grid (also when a lower bound puts the grid's first boundary inside the domain).
  Each task carries only the array's location and a box of coordinates, so a worker opens the
  array itself, and the box means the same elements even if the array grows meanwhile.
- :func:`to_zarrpp` writes a Dask array into a new or existing array, one task per block, by
  coordinates. Blocks are rechunked onto the array's stored objects first (``align=True``), so no
  two tasks write one object; with ``align=False`` they keep Dask's blocks and tasks sharing an
  object still lose nothing (each write re-reads and retries when another changed the object), but
  pay for it.
"""
from __future__ import annotations

import pickle
import threading
import uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, cast

import numpy as np
import dask.array as da

from ._arguments import _irregular_sizes
from ._array import Array, _reopen, _store_for_pickle, open_array
from ._creation import create_array
from ._config import config
from .storage import ZipStore

__all__ = ["from_zarrpp", "to_zarrpp", "grid_chunks"]


def grid_chunks(z: Array, per_block: Optional[Sequence[int]] = None) -> Tuple[Tuple[int, ...], ...]:
    """Dask ``chunks`` for ``z``: one block per stored object (shard when sharded, else chunk), or
    ``per_block[d]`` objects per block along dimension ``d``; boundaries follow the chunk grid."""
    per = tuple(per_block) if per_block is not None else (1,) * z.ndim
    if len(per) != z.ndim or any(int(k) < 1 for k in per):
        raise ValueError(f"per_block: one positive count of stored objects per dimension ({z.ndim}), got {per_block!r}")
    # The grid's own answer; Dask wants (0,) for an empty extent, which has no chunks.
    return tuple(tuple(sizes) or (0,) for sizes in z._write_chunk_sizes([int(k) for k in per]))


# ---- the array as tasks see it -------------------------------------------------------------------

_open_lock = threading.Lock()
_opened: Dict[Tuple[str, bytes], Array] = {}  # per process: (graph token, location) -> handle
_OPENED_MAX = 64


class _Location:
    """What a task carries instead of the array: its store and path (pickled by location, never
    data), plus a token naming the graph, so one process opens the array once per graph."""

    def __init__(self, array: Array, token: str):
        self.array: Optional[Array] = array
        self.token = token
        self._state: Optional[Tuple[Any, str, bool]] = None
        self._write_empty = bool(array.config.write_empty_chunks)  # a handle setting: it travels too

    def __reduce__(self) -> Any:
        if self.array is None:
            store, path, read_only = self._state  # type: ignore[misc]
        else:
            store, path, read_only = _store_for_pickle(self.array.store), self.array.path, self.array._read_only
        return (_Location._rebuild, (self.token, store, path, read_only, self._write_empty))

    @staticmethod
    def _rebuild(token: str, store: Any, path: str, read_only: bool, write_empty: bool = False) -> "_Location":
        loc = _Location.__new__(_Location)
        loc.array, loc.token, loc._state, loc._write_empty = None, token, (store, path, read_only), write_empty
        return loc

    def get(self) -> Array:
        if self.array is not None:
            return self.array
        store, path, read_only = self._state  # type: ignore[misc]
        key = (self.token, pickle.dumps((store, path, read_only, self._write_empty)))
        with _open_lock:
            z = _opened.get(key)
        if z is None:
            z = self._opened(store)  # type: ignore[assignment]
            with _open_lock:
                if len(_opened) >= _OPENED_MAX:
                    _opened.pop(next(iter(_opened)))
                _opened[key] = z  # type: ignore[assignment]
        self.array = z  # type: ignore[assignment]
        return z  # type: ignore[return-value]

    def write(self, sel: Tuple[slice, ...], value: Any) -> None:
        """Writes ``value`` at ``sel``. A zip file has one writer at a time, holding the file until
        it closes its store; so a task in another process than the graph's writes through a writer
        of its own, closed (the archive rewritten) before the task ends: one commit per block."""
        if self._state is None or not _zip_writer(self._state[0]):
            self.get().coords[sel] = value
            return
        store, path, read_only = self._state
        own = pickle.loads(pickle.dumps(store))  # a new writer of the same file
        try:
            self._opened(own).coords[sel] = value
        finally:
            own.close()

    def _opened(self, store: Any) -> Array:
        """The array at this location in ``store``, with the graph's write_empty_chunks setting."""
        _, path, read_only = self._state  # type: ignore[misc]
        z = _reopen(store, path, read_only)
        if z.config.write_empty_chunks != self._write_empty:
            z = z.with_config({"write_empty_chunks": self._write_empty})
        return z


def _zip_writer(store: Any) -> bool:
    return isinstance(store, ZipStore) and not store.read_only


def _release_zip_writer(z: Any) -> None:
    """Commits what ``z``'s zip file writer staged and lets the file go (the store takes it again
    at its next change), so the tasks of other processes can write (one writer at a time)."""
    if _zip_writer(z.store):
        z.store.close()


def _read_box(loc: _Location, box: Tuple[Tuple[int, int], ...]) -> np.ndarray:
    z = loc.get()
    return z.coords[tuple(slice(a, b) for a, b in box)]


class _CoordinateTarget:
    """A ``da.store`` target writing by coordinates: Dask's zero-based block slices are shifted to
    start at ``start`` (the region's first coordinate per dimension)."""

    def __init__(self, loc: _Location, start: Tuple[int, ...], shape: Tuple[int, ...], dtype: np.dtype):
        self.loc, self.start, self.shape, self.dtype = loc, start, shape, dtype
        self.ndim = len(shape)

    def __setitem__(self, key: Any, value: Any) -> None:
        key = key if isinstance(key, tuple) else (key,)
        sel = []
        for s, lo in zip(key, self.start):
            if not isinstance(s, slice) or s.step not in (None, 1):
                raise TypeError(f"zarrpp.dask: unexpected block index {s!r} from dask")
            sel.append(slice(lo + (s.start or 0), lo + s.stop))
        self.loc.write(tuple(sel), value)


# ---- reading ---------------------------------------------------------------------------------------

def _open(source: Union[str, Array], mode: str, storage_options: Optional[Dict[str, Any]]) -> Array:
    if isinstance(source, Array):
        if storage_options:
            raise ValueError("storage_options: give them with a URL, not with an opened array")
        return source
    if not isinstance(source, str) and not hasattr(source, "__fspath__"):
        raise TypeError(f"expected a zarrpp array, a path or a URL, got {type(source).__name__}")
    return open_array(source, mode=mode, storage_options=storage_options)


def from_zarrpp(source: Union[str, Array], chunks: Optional[Sequence[int]] = None, *,
                storage_options: Optional[Dict[str, Any]] = None, name: Optional[str] = None) -> da.Array:
    """A Dask array reading ``source`` (a zarrpp array, or a path/URL to open read-only) with one
    task per stored object: per shard when sharded (tasks per inner chunk would be far too many),
    else per chunk. ``chunks``: stored objects per block along each dimension (default 1 each).

    Tasks carry only the location and their box of coordinates: the workers open the array
    themselves (once per process), and a box means the same elements after any growth. An array in
    a MemoryStore cannot be shared with other processes (use the threaded scheduler or a
    LocalStore/S3 store)."""
    z = _open(source, "r", storage_options)
    block_chunks = grid_chunks(z, chunks)
    token = uuid.uuid4().hex
    name = name or "zarrpp-read-" + token
    loc = _Location(z, token)
    starts: List[List[Tuple[int, int]]] = []
    for (lo, _), sizes in zip(z.domain, block_chunks):
        pos, spans = lo, []
        for n in sizes:
            spans.append((pos, pos + n))
            pos += n
        starts.append(spans)
    graph: Dict[Any, Any] = {}
    if z.ndim == 0:
        graph[(name,)] = (_read_box, loc, ())
    else:
        for idx in np.ndindex(*[len(s) for s in block_chunks]):
            box = tuple(starts[d][i] for d, i in enumerate(idx))
            graph[(name,) + tuple(int(i) for i in idx)] = (_read_box, loc, box)
    meta = np.empty((0,) * z.ndim, dtype=z.dtype)
    return da.Array(graph, name, block_chunks, meta=meta)


# ---- writing ---------------------------------------------------------------------------------------

def _region_start(z: Array, region: Optional[Sequence[slice]], shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """The first coordinate of the region (coordinates of ``z``'s domain) that ``shape`` fills."""
    dom = z.domain
    if region is None:
        if tuple(hi - lo for lo, hi in dom) != tuple(shape):
            raise ValueError(f"the Dask array's shape {tuple(shape)} differs from the array's shape {z.shape}: "
                             "give region= (slices in the array's coordinates)")
        return tuple(lo for lo, _ in dom)
    region = tuple(region) if isinstance(region, (tuple, list)) else (cast(slice, region),)  # a single slice
    if len(region) != z.ndim or not all(isinstance(r, slice) and r.step in (None, 1) for r in region):
        raise ValueError(f"region: one step-1 slice of coordinates per dimension ({z.ndim}), got {region!r}")
    start = []
    for d, (r, (lo, hi), n) in enumerate(zip(region, dom, shape)):
        a = lo if r.start is None else int(r.start)
        b = hi if r.stop is None else int(r.stop)
        if not lo <= a <= b <= hi:
            raise IndexError(f"region {a}:{b} of dimension {d} is outside the array's domain [{lo}, {hi})")
        if b - a != n:
            raise ValueError(f"region {a}:{b} of dimension {d} holds {b - a} elements, the Dask array has {n}")
        start.append(a)
    return tuple(start)


def _aligned_chunks(z: Array, start: Tuple[int, ...], shape: Tuple[int, ...]) -> Tuple[Tuple[int, ...], ...]:
    region = [(a, a + n) for a, n in zip(start, shape)]
    return tuple(tuple(sizes) or (0,) for sizes in z._write_chunk_sizes([], region))


def to_zarrpp(x: da.Array, target: Union[str, Array], *, region: Optional[Sequence[slice]] = None,
              align: bool = True, compute: bool = True, overwrite: bool = False,
              storage_options: Optional[Dict[str, Any]] = None, rectilinear_chunks: Optional[bool] = None,
              **create_kwargs: Any) -> Any:
    """Writes the Dask array ``x`` into ``target``: an opened zarrpp array, or a path/URL where a
    new array is created (``create_kwargs`` as for ``zarrpp.create_array``: ``chunks`` defaults to
    ``x``'s block shape, ``shards``, ``compressors``, ``dimension_names``, ...; an existing node is
    an error unless ``overwrite=True``; an existing array is written with ``zarrpp.open_array``
    first). ``region``: where in an existing array, as slices of its coordinates (default: the
    whole domain, whose shape ``x`` must have). ``rectilinear_chunks``: a new array takes ``x``'s
    chunks as they are, also when they differ in size (a rectilinear grid: no rechunk), instead of
    its largest block shape; by default ``zarrpp.config``'s ``array.rectilinear_chunks`` (off:
    most readers cannot read a rectilinear grid).

    Each task writes one block by coordinates. With ``align=True`` (default) ``x`` is rechunked so
    its blocks are whole stored objects (shards/chunks; the region's ends may cut the first and
    last), so no two tasks write one object. ``compute=False`` returns a ``dask.delayed`` to
    compute later. Returns the array (or the delayed)."""
    if not isinstance(x, da.Array):
        raise TypeError(f"to_zarrpp: expected a dask.array.Array, got {type(x).__name__}")
    if isinstance(target, Array):
        if create_kwargs or overwrite or storage_options:
            raise ValueError("to_zarrpp: creation arguments and storage_options go with a path or URL, "
                             "not an opened array")
        z = target
    else:
        if region is not None:
            raise ValueError("to_zarrpp: region= writes into an existing array: open it first (zarrpp.open_array)")
        kw = dict(create_kwargs)
        allow = rectilinear_chunks if rectilinear_chunks is not None else config.get("array.rectilinear_chunks")
        sizes = _irregular_sizes(x.chunks) if allow and "chunks" not in kw else None
        if sizes is not None:
            kw["chunks"] = sizes
        kw.setdefault("chunks", tuple(int(c) for c in x.chunksize) if x.ndim else ())
        z = create_array(target, shape=x.shape, dtype=x.dtype, overwrite=overwrite, storage_options=storage_options,
                         _allow_rectilinear=allow, **kw)
    z._check_writable()
    start = _region_start(z, region, x.shape)
    if align and x.ndim:
        want = _aligned_chunks(z, start, x.shape)
        if tuple(x.chunks) != want:
            x = x.rechunk(want)
    loc = _Location(z, uuid.uuid4().hex)
    tgt = _CoordinateTarget(loc, start, tuple(x.shape), z.dtype)
    _release_zip_writer(z)  # before any task writes: they may run in other processes
    stored = da.store(x, tgt, lock=False, compute=compute)  # type: ignore[arg-type]  # any __setitem__ target
    return z if compute else stored
