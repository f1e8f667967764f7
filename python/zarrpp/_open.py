"""Opening and converting nodes by store and path: open_array, open_group, open, group, copy and conversion."""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

from . import _zarrpp
from .errors import NodeNotFoundError
from .storage import make_store
from ._array import Array
from ._display import _Progress
from ._group import Group, open_group
from ._node import _check_mode, _check_store_writable, _store_url


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
        return source._copy_to(st, path, grid or "", bool(overwrite), p.count)


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
