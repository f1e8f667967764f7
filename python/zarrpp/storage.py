"""Stores: where zarrpp keeps zarr.json documents and chunks.

``LocalStore(path)`` (alias ``FileStore``) is a directory on the local file system; every write
is atomic and safe across processes. ``MemoryStore()`` lives in this process only. Anywhere a
store is expected, a ``str`` or ``pathlib.Path`` means ``LocalStore(path)``, None means a new
``MemoryStore()``, ``"memory://name/path"`` the folder ``path`` of the process-wide memory store
``name`` (made by its first use, kept until ``forget_memory_store(name)``), and a ``dict`` (or any
mapping) holds the keys and bytes zarr-python would put there.
"""
from __future__ import annotations

import os
import pathlib
import re
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any, Dict, Optional

from . import _zarrpp

__all__ = ["Store", "LocalStore", "FileStore", "MemoryStore", "S3Store", "HttpStore", "StoreLike", "open_url",
           "forget_memory_store"]

Store = _zarrpp.Store


class MemoryStore(_zarrpp.MemoryStore):
    """A thread-safe in-memory store. ``store_dict``: keys and their bytes to start from (as
    zarr-python's first argument; zarrpp copies them in, so later changes to the dict are not seen,
    and the store's changes do not reach the dict)."""

    _zarrpp_url: str  # set on the stores memory:// URLs name

    def __init__(self, store_dict: Optional[Dict[str, Any]] = None, *, read_only: bool = False):
        super().__init__()
        if store_dict is not None:
            if not isinstance(store_dict, dict):
                raise TypeError("MemoryStore(store_dict): expected a dict of key -> bytes, "
                                f"got {type(store_dict).__name__}")
            for k, v in store_dict.items():
                if not isinstance(k, str):
                    raise TypeError(f"MemoryStore(store_dict): keys must be str, got {k!r}")
                try:
                    data = bytes(v.to_bytes() if hasattr(v, "to_bytes") and not isinstance(v, int) else memoryview(v))
                except TypeError:
                    raise TypeError(f"MemoryStore(store_dict): the value of {k!r} is not bytes-like") from None
                super().set(k, data)
        self.read_only = bool(read_only)

    def set(self, key: str, value: bytes) -> None:
        if self.read_only:
            raise ValueError(f"this MemoryStore is read-only: cannot set '{key}'")
        super().set(key, value)

    def delete(self, key: str) -> None:
        if self.read_only:
            raise ValueError(f"this MemoryStore is read-only: cannot delete '{key}'")
        super().delete(key)

    def __reduce__(self) -> Any:
        raise TypeError("a MemoryStore cannot be pickled: it lives in this process only and cannot be reopened "
                        "elsewhere (use a LocalStore, or an s3:// store, to share data between processes)")

    def __eq__(self, other: Any) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __str__(self) -> str:
        return str(getattr(self, "_zarrpp_url", f"memory://{id(self)}"))


class LocalStore(_zarrpp.LocalStore):
    """A directory on the local file system. Opening creates nothing: a missing directory reads as
    an empty store and is made by the first write (never with ``read_only``)."""

    def __init__(self, root: "str | os.PathLike[str]", read_only: bool = False):
        root = pathlib.Path(os.fspath(root)).expanduser()
        if read_only and not root.is_dir():
            raise FileNotFoundError(f"LocalStore: no directory at '{root}'")
        super().__init__(root, bool(read_only))  # the C++ store itself refuses writes when read-only
        self.read_only = bool(read_only)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LocalStore) and pathlib.Path(self.root).resolve() == pathlib.Path(other.root).resolve()

    def __hash__(self) -> int:
        return hash(str(pathlib.Path(self.root).resolve()))

    def __str__(self) -> str:
        return f"file://{self.root}"

    def __reduce__(self) -> Any:
        # Pickled by where it is, never by its data.
        return (LocalStore, (os.fspath(self.root), self.read_only))


FileStore = LocalStore

# The memory stores memory:// URLs name, by name: process-wide, as zarr-python's (with fsspec,
# whose memory file system keeps what is written until it is removed).
_NAMED_MEMORY: Dict[str, MemoryStore] = {}
_NAMED_LOCK = threading.Lock()


def _memory_url(url: str) -> _zarrpp.Store:
    """The store ``memory://name/path`` names: the named memory store (made on first use), or the
    folder ``path`` inside it."""
    name, _, path = url[len("memory://"):].partition("/")
    if not name:
        raise ValueError(f"'{url}': a memory:// URL names its store: memory://NAME or memory://NAME/PATH")
    with _NAMED_LOCK:
        store = _NAMED_MEMORY.get(name)
        if store is None:
            store = _NAMED_MEMORY[name] = MemoryStore()
            store._zarrpp_url = f"memory://{name}"
    path = path.strip("/")
    if not path:
        return store
    sub: Any = _zarrpp.PrefixStore(store, path)
    sub._zarrpp_url = f"memory://{name}/{path}"
    sub.read_only = False
    return sub


def _mapping_store(mapping: Mapping[str, Any], read_only: bool) -> _zarrpp.Store:
    """A mapping as a store (zarr-python's ``store={}``): its keys and bytes are the store's, as
    zarr-python 2 keeps them (zarrpp writes ``bytes``; reads any bytes-like value, or one with
    ``to_bytes()``). A ``dict`` allows growth and concurrent updates from this process's threads;
    any other mapping is written without them (growth is refused, naming the store)."""
    st: Any = _zarrpp.MappingStore(mapping, read_only or not isinstance(mapping, MutableMapping))
    st.read_only = read_only or not isinstance(mapping, MutableMapping)
    return st


def forget_memory_store(name: str) -> bool:
    """Drops the memory store ``memory://name`` (its data goes once nothing holds it); True when
    there was one."""
    with _NAMED_LOCK:
        return _NAMED_MEMORY.pop(name, None) is not None


StoreLike = Any  # a Store, str, os.PathLike or None


S3Store = _zarrpp.S3Store
HttpStore = _zarrpp.HttpStore
_REMOTE_SCHEMES = ("s3://", "http://", "https://")


def open_url(url: str, storage_options: Optional[Dict[str, Any]] = None) -> _zarrpp.Store:
    """The store at ``url``: ``s3://bucket/prefix`` (endpoint, region and credentials from
    ``storage_options`` — ``endpoint_url``, ``region``, ``key``, ``secret``, ``token``, ``anon`` — else
    from the ``AWS_*`` environment variables, as the C++ S3Store) or ``http(s)://host/path``
    (read-only; ``storage_options={"headers": {...}}``). The URL is the node itself.

    Every request is bounded, for both kinds: ``connect_timeout``, ``timeout`` (one attempt),
    ``stall_timeout`` (no byte moving), ``retry_window`` (no new attempt after it),
    ``retry_initial_delay`` and ``retry_max_delay`` in seconds, and ``max_attempts``. The defaults
    (10, 300, 10, 30, 0.1, 5 and 4) fail a stalled server in about 30 s."""
    opts = dict(storage_options or {})
    st: Any = _zarrpp.open_url(url, opts)  # Any: the attributes below are set on the instance
    # Kept to pickle the store by where it is: only options the caller gave explicitly travel in
    # the pickle (credentials from the environment are read again where it is unpickled).
    st._zarrpp_url = url
    st._zarrpp_options = opts
    st.read_only = isinstance(st, _zarrpp.HttpStore)
    return st


def _reduce_remote(store: Any) -> Any:
    return (open_url, (store._zarrpp_url, store._zarrpp_options))


def _refuse_pickling_mapping(store: Any) -> Any:
    raise TypeError("a store over a Python mapping cannot be pickled: a copy elsewhere would not be the mapping "
                    "(use a LocalStore, or an s3:// store, to share data between processes)")


def _refuse_pickling_folder(store: Any) -> Any:
    raise TypeError(f"the store {store._zarrpp_url if hasattr(store, '_zarrpp_url') else store!r} cannot be "
                    "pickled: it is a folder of a store that lives in this process only (use a LocalStore, or an "
                    "s3:// store, to share data between processes)")


_zarrpp.MappingStore.__reduce__ = _refuse_pickling_mapping  # type: ignore[assignment]
_zarrpp.PrefixStore.__reduce__ = _refuse_pickling_folder  # type: ignore[assignment]
_zarrpp.S3Store.__reduce__ = _reduce_remote  # type: ignore[assignment]
_zarrpp.HttpStore.__reduce__ = _reduce_remote  # type: ignore[assignment]


def make_store(store: StoreLike, read_only: Optional[bool] = None, must_exist: bool = False,
               storage_options: Optional[Dict[str, Any]] = None, missing: Any = None) -> _zarrpp.Store:
    """The store for a ``store=`` argument: a Store as is, a path -> LocalStore, an s3:// or
    http(s):// URL -> a remote store, a memory:// URL -> a named memory store, None -> MemoryStore.
    With ``must_exist``, a path that is not a directory is a FileNotFoundError (opening never
    creates directories). Other URL schemes are refused (never taken as a local folder named
    "gs:")."""
    from .errors import NodeNotFoundError
    missing = missing or NodeNotFoundError
    if storage_options and not (isinstance(store, str) and store.startswith(_REMOTE_SCHEMES)):
        raise TypeError("storage_options is only taken with an s3:// or http(s):// URL")
    if store is None:
        return MemoryStore()
    if isinstance(store, _zarrpp.Store):
        return store
    if isinstance(store, Mapping) and not isinstance(store, (str, bytes)):
        return _mapping_store(store, bool(read_only))
    if isinstance(store, (str, os.PathLike)):
        s = os.fspath(store)
        if isinstance(s, bytes):
            s = os.fsdecode(s)
        if s.startswith(_REMOTE_SCHEMES):
            return open_url(s, storage_options)
        if s.startswith("file://"):
            s = s[len("file://"):]
        if s.startswith("memory://"):
            return _memory_url(s)
        scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", s)
        if scheme:
            raise ValueError(f"'{s}': zarrpp does not open {scheme.group(1)}:// URLs (it takes s3://, http://, "
                             "https://, file:// and local paths)")
        if must_exist and not os.path.isdir(s):
            raise missing(f"no Zarr store at '{s}' (not a directory)")
        return LocalStore(s, read_only=bool(read_only))
    raise TypeError(f"expected a zarrpp store (zarrpp.storage.LocalStore / MemoryStore), a mapping, a path or "
                    f"None, got {type(store).__name__}")


def is_read_only(store: _zarrpp.Store) -> bool:
    return bool(getattr(store, "read_only", False))
