"""Groups: the Python face of zarrpp's C++ Group (zarr-python's API shape)."""
from __future__ import annotations

import html
import warnings
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union, cast

import numpy as np

from . import _zarrpp
from . import _config
from .errors import (ArrayNotFoundError, ContainsArrayError, ContainsGroupError, GroupNotFoundError,
                     UnreadableMemberWarning)
from .storage import is_read_only, make_store
from ._arguments import _as_shape
from ._array import Array, _array_from_document, _store_for_pickle, like_fill_value
from ._creation import _like_args, _writable, create_array
from ._display import Info, _array_rows
from ._node import (Metadata, _Node, _check_mode, _check_store_writable, _checked_format, _decide_open, _join,
                    _path_of, _refuse_existing, _store_url)
from ._values import _parse_dtype


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
        return Metadata(self._core.metadata_document)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ValueError("this group was opened read-only (mode='r' or a read-only store) and cannot be written")

    def _refresh(self) -> None:
        self._core = _zarrpp.open_group(self._store, self.path)

    def _attrs_update(self, patch: Dict[str, Any]) -> None:
        self._check_writable()
        self._refresh()  # merge into the stored attributes, not a stale copy
        self._core.update_attributes(patch)

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
        return (_reopen_group, (_store_for_pickle(self.store), self.path, self._read_only))

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
        return self._like(name, data, like_fill_value(data), kwargs)

    def is_consolidated(self) -> bool:
        """Whether the group has consolidated metadata (.zmetadata, or a v3 consolidated_metadata)."""
        return bool(self._core.is_consolidated())

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
    return Group(_zarrpp.create_group(st, p, attributes or {}, bool(overwrite),
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
    step = _decide_open(st, p, mode, "group", GroupNotFoundError)
    if step == "open":
        return _checked_format(Group(_zarrpp.open_group(st, p), read_only=mode == "r", store=st), zarr_format)
    _check_store_writable(st)
    return Group(_zarrpp.create_group(st, p, attributes or {}, step == "replace",
                                      _config.default_zarr_format(zarr_format)), store=st)


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


def create_hierarchy(*, store: Any, nodes: Dict[str, Any], overwrite: bool = False) -> Any:
    """Creates the groups and arrays ``nodes`` describes, ``{path: metadata document}`` (a dict of
    zarr.json's fields, a node's ``metadata``, or an object with ``to_dict()``), parents before
    children, with the groups between them made too (as zarr-python's ``create_hierarchy``).
    Without ``overwrite`` every path is checked before anything is written, so an existing node
    leaves the store as it was. Returns (path, node) pairs, parents first."""
    st = make_store(store)
    docs = {_path_of(p): dict(m.to_dict() if hasattr(m, "to_dict") else m) for p, m in nodes.items()}
    for p, doc in docs.items():
        if doc.get("node_type", "array" if "shape" in doc else "group") not in ("array", "group"):
            raise ValueError(f"create_hierarchy: {p!r}: node_type must be 'array' or 'group'")
        if not overwrite:
            _refuse_existing(st, p)
    for p in _with_parents(docs) - set(docs):
        if _zarrpp.node_type(st, p) == "array":
            raise ContainsArrayError(f"create_hierarchy: an array at {p!r} would have to be a group")
    made: List[Tuple[str, Any]] = []
    for p in sorted(_with_parents(docs), key=lambda q: (q.count("/") + (q != ""), q)):
        doc = docs.get(p, {"node_type": "group", "zarr_format": _group_format(docs)})
        if doc.get("node_type", "array" if "shape" in doc else "group") == "group":
            if p not in docs and _zarrpp.node_type(st, p) == "group":
                continue  # an implicit parent that exists already
            made.append((p, open_group(st, path=p, mode="w" if overwrite else "w-", zarr_format=doc.get("zarr_format"),
                                       attributes=doc.get("attributes"))))
        else:
            made.append((p, Array(_array_from_document(st, p, doc, overwrite), store=st)))
    return iter(made)


def _with_parents(docs: Dict[str, Any]) -> set:
    paths = set(docs)
    for p in docs:
        parts = p.split("/") if p else []
        paths.update("/".join(parts[:i]) for i in range(len(parts)))
    return paths


def _group_format(docs: Dict[str, Any]) -> int:
    formats = {d.get("zarr_format") for d in docs.values()} - {None}
    return formats.pop() if len(formats) == 1 else _config.default_zarr_format(None)


def _reopen_group(store: Any, path: str, read_only: bool) -> Group:
    """An unpickled group: the one at ``path`` of ``store``, opened again."""
    return Group(_zarrpp.open_group(store, path), read_only=read_only, store=store)
