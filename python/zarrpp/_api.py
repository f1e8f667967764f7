"""zarr-python 3's module-level functions (``zarr.create``, ``zarr.zeros``, ``zarr.open``, ``zarr.save``,
...), on top of :func:`zarrpp.create_array` and friends, with zarr-python's modes:

- ``"r"``: read only, must exist; ``"r+"``: read/write, must exist;
- ``"a"``: read/write, created when missing (arrays: when ``shape`` is given);
- ``"w"``: created, replacing whatever node is there; ``"w-"`` (or ``"x"``): created, failing when
  a node is there.
"""
from __future__ import annotations

import warnings
from typing import Any, Dict, Optional, Union

import numpy as np

from . import _zarrpp
from . import _config
from ._arguments import _split_codecs
from ._array import Array, like_fill_value
from ._array import _open_at
from ._creation import _legacy_keywords, _like_args, create_array, warn_write_empty_chunks_keyword
from ._group import Group, create_hierarchy, open_group
from ._node import _check_mode, _decide_open, _join, _path_of, _store_url
from .errors import ArrayNotFoundError, NodeNotFoundError, ZarrDeprecationWarning
from .storage import make_store

__all__ = ["create", "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like", "open",
           "open_array", "open_like", "save", "save_array", "save_group", "load", "consolidate_metadata",
           "open_consolidated", "tree", "create_hierarchy"]

_MODES = ("r", "r+", "a", "w", "w-", "x")


def create(shape: Any, *, chunks: Any = None, dtype: Any = None, compressor: Any = "auto", fill_value: Any = 0,
           order: Optional[str] = None, store: Any = None, overwrite: bool = False, path: Optional[str] = None,
           filters: Any = None, read_only: Optional[bool] = None, dimension_separator: Optional[str] = None,
           write_empty_chunks: Optional[bool] = None, zarr_format: Optional[int] = None,
           attributes: Optional[Dict[str, Any]] = None,
           chunk_shape: Any = None, chunk_key_encoding: Any = None, codecs: Any = None, dimension_names: Any = None,
           storage_options: Optional[Dict[str, Any]] = None, config: Optional[Dict[str, Any]] = None,
           compressors: Any = None, shards: Any = None, lower_bound: Any = None, mode: Optional[str] = None,
           **kwargs: Any) -> Array:
    """zarr-python's ``zarr.create``: a new array (an existing node is ContainsArrayError /
    ContainsGroupError unless ``overwrite``). ``compressor`` (one, v2 style) or ``compressors``;
    ``codecs``: the whole v3 codec list (filters, one bytes codec, compressors)."""
    allow_rectilinear = kwargs.pop("_allow_rectilinear", None)  # from the *_like functions
    _legacy_keywords(kwargs)
    if kwargs:
        raise TypeError(f"create: unexpected or unsupported arguments {sorted(kwargs)}")
    if write_empty_chunks is not None:
        warn_write_empty_chunks_keyword()
    _refuse_v3_conflicts(zarr_format, chunks, chunk_shape, dimension_separator, filters, compressor)
    if mode is not None:
        _check_mode(mode, ("a", "w", "w-", "x"), "create")
        overwrite = overwrite or mode == "w"
    serializer: Any = "auto"
    if codecs is not None:
        filt, ser, compressors = _split_codecs(codecs, "codecs")
        filters, serializer = filt or filters, ser or "auto"
    elif compressors is None and compressor != "auto":
        compressors = compressor
    elif compressors is None:
        compressors = "auto"
    cfg = dict(config or {})
    if write_empty_chunks is not None:
        cfg["write_empty_chunks"] = bool(write_empty_chunks)
    st = make_store(store, storage_options=storage_options)
    return create_array(st, name=_path_of(path), shape=shape, dtype="float64" if dtype is None else dtype,
                        chunks=chunks if chunks is not None else (chunk_shape if chunk_shape is not None else "auto"),
                        shards=shards, filters=filters, compressors=compressors, serializer=serializer,
                        fill_value=fill_value, order=order, zarr_format=zarr_format, attributes=attributes,
                        dimension_names=dimension_names, overwrite=overwrite, lower_bound=lower_bound,
                        config=cfg or None, chunk_key_encoding=chunk_key_encoding,
                        dimension_separator=dimension_separator, _allow_rectilinear=allow_rectilinear)


def _refuse_v3_conflicts(zarr_format: Optional[int], chunks: Any, chunk_shape: Any, dimension_separator: Any,
                         filters: Any, compressor: Any) -> None:
    """Arguments ``create`` refuses as zarr-python 3 does: both chunk forms, and the v2 layout
    arguments on a v3 array (which state it otherwise: chunk_key_encoding, codecs, compressors)."""
    if chunks is not None and chunk_shape is not None:
        raise ValueError("create: give chunks= or chunk_shape=, not both")
    if _config.default_zarr_format(zarr_format) != 3:
        return
    for name, given, instead in (("dimension_separator", dimension_separator is not None, "chunk_key_encoding="),
                                 ("filters", filters is not None, "array-to-array codecs in codecs="),
                                 ("compressor", not (isinstance(compressor, str) and compressor == "auto"),
                                  "compressors=")):
        if given:
            raise ValueError(f"create: {name}= is a Zarr v2 argument; for a Zarr v3 array use {instead}")


def _deprecated(name: str, instead: str) -> None:
    warnings.warn(f"zarrpp.{name} is deprecated, as in zarr-python 3: use {instead}", ZarrDeprecationWarning,
                  stacklevel=3)


def empty(shape: Any, **kwargs: Any) -> Array:
    """A new array whose unwritten elements read as the fill value (0 unless given)."""
    kwargs.setdefault("fill_value", None)
    return create(shape, **kwargs)


def _is_text(dtype: Any) -> bool:
    if dtype in (str, bytes) or (isinstance(dtype, str) and dtype in ("str", "bytes", "string")):
        return True
    try:
        return np.dtype(dtype).kind in "OUS"  # "U3", "S5", np.dtype("<U3")
    except TypeError:
        return False


def zeros(shape: Any, **kwargs: Any) -> Array:
    """Zeros; for str / bytes arrays, empty strings."""
    kwargs["fill_value"] = None if _is_text(kwargs.get("dtype")) else 0
    return create(shape, **kwargs)


def ones(shape: Any, **kwargs: Any) -> Array:
    """A new array of ``shape`` filled with ones (``create_array``'s keywords)."""
    kwargs["fill_value"] = 1
    return create(shape, **kwargs)


def full(shape: Any, fill_value: Any, **kwargs: Any) -> Array:
    """A new array of ``shape`` filled with ``fill_value`` (``create_array``'s keywords)."""
    return create(shape, fill_value=fill_value, **kwargs)


def _like(a: Any, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    args = _like_args(a)
    args.update(kwargs)  # what the caller gives wins (zarr-python 3.1.3+)
    if args.get("zarr_format") != 2:
        args.pop("order", None)  # a v2 layout setting
    if "shape" not in args:
        raise TypeError(f"cannot take a shape from {type(a).__name__}")
    return args


def empty_like(a: Any, **kwargs: Any) -> Array:
    """A new array with ``a``'s shape, data type and chunks (keywords override), nothing written."""
    args = _like(a, kwargs)
    return empty(args.pop("shape"), **args)


def zeros_like(a: Any, **kwargs: Any) -> Array:
    """``empty_like`` filled with zeros."""
    args = _like(a, kwargs)
    return zeros(args.pop("shape"), **args)


def ones_like(a: Any, **kwargs: Any) -> Array:
    """``empty_like`` filled with ones."""
    args = _like(a, kwargs)
    return ones(args.pop("shape"), **args)


def full_like(a: Any, **kwargs: Any) -> Array:
    """``empty_like`` filled with ``fill_value`` (a keyword; ``a``'s fill value by default)."""
    args = _like(a, kwargs)
    args.setdefault("fill_value", like_fill_value(a))
    return full(args.pop("shape"), **args)


def open_like(a: Any, path: str, **kwargs: Any) -> Array:
    """Opens (creating when missing) the array at ``path`` with ``a``'s shape, dtype and chunks."""
    args = _like(a, kwargs)
    return open_array(path, **args)


def open_array(store: Any = None, *, path: Optional[str] = None, name: Optional[str] = None, mode: Optional[str] = None,
               zarr_format: Optional[int] = None, storage_options: Optional[Dict[str, Any]] = None,
               **kwargs: Any) -> Array:
    """Opens an array; with mode "a"/"w"/"w-" and creation arguments (``shape``, ...) creates it
    when missing ("w": replacing what is there; "w-": failing when something is there). Without a
    mode a missing array is ArrayNotFoundError, as in zarr-python."""
    mode = mode or "a"
    _check_mode(mode, _MODES, "open_array")
    p = _path_of(path, name)
    # As zarr-python: creation arguments only matter when the array is created; an existing array
    # is opened as it is.
    if mode in ("r", "r+", "a"):
        # Opening without what creating needs never creates a directory.
        st = make_store(store, read_only=mode == "r", must_exist=mode != "a" or "shape" not in kwargs,
                        storage_options=storage_options, missing=ArrayNotFoundError)
        if mode != "a" or "shape" not in kwargs:
            try:
                return _open_at(st, p, mode, zarr_format)
            except ArrayNotFoundError:
                if mode == "a" and kwargs:
                    raise TypeError("open_array: creating an array needs shape=") from None
                raise
    else:
        st = make_store(store, storage_options=storage_options)
        if "shape" not in kwargs:
            raise TypeError(f"open_array: mode {mode!r} creates an array, which needs shape=")
    step = _decide_open(st, p, mode, "array", ArrayNotFoundError)
    if step == "open":
        return _open_at(st, p, mode, zarr_format)
    return create(store=st, path=p, zarr_format=zarr_format, overwrite=step == "replace", **kwargs)


def open(store: Any = None, *, mode: Optional[str] = None, zarr_format: Optional[int] = None,  # noqa: A001
         path: Optional[str] = None, storage_options: Optional[Dict[str, Any]] = None,
         **kwargs: Any) -> Union[Array, Group]:
    """zarr-python's ``zarr.open``: the array at the path if there is one (or, given ``shape``, an
    array opened or created per ``mode``), else the group, created when the mode allows ("w"
    replaces what is there with a new group)."""
    mode = mode or "a"
    _check_mode(mode, _MODES, "open")
    p = _path_of(path)
    if mode in ("w-", "x") and "shape" not in kwargs:
        # As zarr-python: without a shape, "w-" makes a group, and refuses any node already there.
        unknown = sorted(set(kwargs) - {"attributes"})
        if unknown:
            raise TypeError(f"open: mode {mode!r} without shape= makes a group, which takes no {unknown}")
        st = make_store(store, storage_options=storage_options)
        if _zarrpp.node_type(st, p) is not None:
            raise FileExistsError(f"open: mode {mode!r}, but a node exists at {p or '/'!r} in {_store_url(st)}")
        return open_group(st, path=p, mode=mode, zarr_format=zarr_format, attributes=kwargs.pop("attributes", None))
    if "shape" in kwargs or mode in ("w-", "x"):
        return open_array(store, path=p, mode=mode, zarr_format=zarr_format, storage_options=storage_options, **kwargs)
    st = make_store(store, read_only=mode == "r", must_exist=mode in ("r", "r+"), storage_options=storage_options,
                    missing=NodeNotFoundError)
    kind = _zarrpp.node_type(st, p)
    if kind == "array" and mode != "w":
        return _open_at(st, p, mode, zarr_format)
    if kind is None and mode in ("r", "r+"):
        raise NodeNotFoundError(f"No array or group found in store {_store_url(st)} at path {p!r}")
    return open_group(st, path=p, mode=mode, zarr_format=zarr_format, attributes=kwargs.pop("attributes", None))


def save_array(store: Any, arr: Any, *, zarr_format: Optional[int] = None, path: Optional[str] = None,
               storage_options: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
    """Writes ``arr`` (a NumPy array or anything array-like) as a new array; ``mode`` "a" (the
    default) refuses an existing node, "w" replaces it."""
    mode = kwargs.pop("mode", "a")
    _check_mode(mode, ("a", "w", "w-", "x"), "save_array")
    overwrite = kwargs.pop("overwrite", None) or mode == "w"
    data = np.asarray(arr)
    st = make_store(store, storage_options=storage_options)
    create_array(st, name=_path_of(path), data=data, zarr_format=zarr_format, overwrite=overwrite, **kwargs)


def save_group(store: Any, *args: Any, zarr_format: Optional[int] = None, path: Optional[str] = None,
               storage_options: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
    """Writes a group (replacing what is at ``path``) holding the arrays given: positional ones as
    ``arr_0``, ``arr_1``, ..., keyword ones under their names."""
    if not args and not kwargs:
        raise ValueError("at least one array must be provided")
    for key, value in kwargs.items():
        if not hasattr(value, "shape"):
            raise TypeError(f"save_group: keyword argument {key!r} must be an array (NumPy or array-like with a "
                            f"shape), got {type(value).__name__}")
    st = make_store(store, storage_options=storage_options)
    p = _path_of(path)
    open_group(st, path=p, mode="w", zarr_format=zarr_format)
    for i, a in enumerate(args):
        save_array(st, a, zarr_format=zarr_format, path=_join(p, f"arr_{i}"))
    for k, a in kwargs.items():
        save_array(st, a, zarr_format=zarr_format, path=_join(p, k))


def save(store: Any, *args: Any, zarr_format: Optional[int] = None, path: Optional[str] = None, **kwargs: Any) -> None:
    """One positional array: :func:`save_array`; otherwise :func:`save_group`."""
    if len(args) == 1 and not kwargs:
        return save_array(store, args[0], zarr_format=zarr_format, path=path)
    return save_group(store, *args, zarr_format=zarr_format, path=path, **kwargs)


def load(store: Any, path: Optional[str] = None, zarr_format: Optional[int] = None) -> np.ndarray:
    """The whole array at ``path`` as a NumPy array (loading a group is NotImplementedError, as in
    zarr-python 3.1)."""
    try:
        obj = open(store, path=path, mode="r", zarr_format=zarr_format)
    except NodeNotFoundError as e:
        # zarr-python 3 opens (and creates) a group there and then refuses to load it; zarrpp
        # creates nothing, and says there is nothing to load.
        raise NothingToLoadError(f"load: {e}; there is no array to load") from None
    if isinstance(obj, Array):
        return obj[...]
    raise NotImplementedError("loading groups not yet supported (as in zarr-python); "
                              "open the group and read its arrays")


class NothingToLoadError(NodeNotFoundError, NotImplementedError):
    """``load`` where no node is: both a NodeNotFoundError and the NotImplementedError zarr-python
    3 raises there (it loads an empty group)."""


def consolidate_metadata(store: Any, path: Optional[str] = None, zarr_format: Optional[int] = None) -> Group:
    """Writes the consolidated metadata of the group at ``path`` anew from the nodes below it
    (``.zmetadata`` for a Zarr v2 group, ``consolidated_metadata`` in a v3 group's zarr.json), as
    zarr-python's ``consolidate_metadata``; zarrpp keeps it current with every change it makes."""
    group = open_group(store, path=_path_of(path), mode="r+", zarr_format=zarr_format)
    return group.consolidate_metadata()


def open_consolidated(store: Any, *, use_consolidated: bool = True, **kwargs: Any) -> Group:
    """:func:`zarrpp.open_group` requiring consolidated metadata (zarr-python's ``open_consolidated``)."""
    return open_group(store, use_consolidated=use_consolidated, **kwargs)


def tree(grp: Group, expand: Any = None, level: Optional[int] = None) -> Any:
    """``grp.tree()`` (deprecated, as in zarr-python 3)."""
    _deprecated("tree(group)", "group.tree()")
    return grp.tree(expand=expand, level=level)
