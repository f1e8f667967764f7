"""What arrays and groups share: their place in a store, their attributes and metadata."""
from __future__ import annotations

import copy
import json
from collections.abc import ItemsView, KeysView, MutableMapping, ValuesView
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union, cast

from . import _zarrpp
from .errors import ContainsArrayError, ContainsGroupError, FormatMismatchError, NodeTypeValidationError
from .storage import is_read_only

if TYPE_CHECKING:  # annotations only: the classes import this module
    from ._array import Array
    from ._group import Group


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

    def _check_writable(self) -> None:  # each kind of node says why a write is refused
        raise NotImplementedError

    def _attrs_get(self) -> Dict[str, Any]:
        return self._core.attributes()

    def _attrs_put(self, d: Dict[str, Any]) -> None:
        self._check_writable()
        self._core.set_attributes(d)

    def _attrs_remove(self, keys: List[str]) -> List[str]:
        self._check_writable()
        return list(self._core.remove_attributes(list(keys)))


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


def _refuse_existing(st: Any, p: str) -> None:
    """zarr-python's errors for a node already at ``p`` (creating without overwrite)."""
    kind = _zarrpp.node_type(st, p)
    if kind is not None:
        raise _exists_error(st, p, kind)


def _exists_error(st: Any, p: str, found: str) -> Exception:
    if found == "array":
        return ContainsArrayError(f"An array exists in store {_store_url(st)} at path {p!r}.")
    return ContainsGroupError(f"A group exists in store {_store_url(st)} at path {p!r}.")


def _decide_open(st: Any, p: str, mode: str, kind: str, missing: Any) -> str:
    """zarr-python's open ``mode`` for a node of ``kind`` at ``p``, decided by the core from one look
    (``decide_open``): "open", "create" or "replace"; what the mode refuses raises zarr-python's
    error for it (``missing`` when nothing is there)."""
    step, found = _zarrpp.decide_open(st, p, mode, kind)
    if step != "refuse":
        return str(step)
    if found is None:
        raise missing(f"No {kind} found in store {_store_url(st)} at path {p!r}")
    if mode in ("r", "r+"):
        article = {"array": "an array", "group": "a group"}
        raise NodeTypeValidationError(f"'{p or '/'}' in {_store_url(st)} is {article[found]}, not {article[kind]}")
    raise _exists_error(st, p, found)


def _checked_format(node: Any, zarr_format: Optional[int]) -> Any:
    """An existing node opened with ``zarr_format`` given must be of that format, as arrays are."""
    if zarr_format is not None and node.zarr_format != zarr_format:
        kind = type(node).__name__.lower()
        raise FormatMismatchError(f"the {kind} at {node.path or '/'!r} is a Zarr v{node.zarr_format} {kind}, "
                                  f"not Zarr v{zarr_format}")
    return node


def _path_of(path: Optional[str], name: Optional[str] = None) -> str:
    return _zarrpp.normalize_path((name if name is not None else path) or "")
