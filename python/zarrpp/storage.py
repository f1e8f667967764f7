"""Stores: where zarrpp keeps zarr.json documents and chunks.

``LocalStore(path)`` (alias ``FileStore``) is a directory on the local file system; every write
is atomic and safe across processes. ``MemoryStore()`` lives in this process only. Anywhere a
store is expected, a ``str`` or ``pathlib.Path`` means ``LocalStore(path)`` and None means a new
``MemoryStore()``.
"""
from __future__ import annotations

import os
import pathlib
from typing import Any, Optional

from . import _zarrpp

__all__ = ["Store", "LocalStore", "FileStore", "MemoryStore", "StoreLike"]

Store = _zarrpp.Store


class MemoryStore(_zarrpp.MemoryStore):
    """A thread-safe in-memory store."""

    def __init__(self, read_only: bool = False):
        super().__init__()
        self.read_only = bool(read_only)

    def set(self, key: str, value: bytes) -> None:
        if self.read_only:
            raise ValueError(f"this MemoryStore is read-only: cannot set '{key}'")
        super().set(key, value)

    def delete(self, key: str) -> None:
        if self.read_only:
            raise ValueError(f"this MemoryStore is read-only: cannot delete '{key}'")
        super().delete(key)

    def __eq__(self, other: Any) -> bool:
        return self is other

    __hash__ = object.__hash__


class LocalStore(_zarrpp.LocalStore):
    """A directory on the local file system (created if missing unless ``read_only``)."""

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


FileStore = LocalStore

StoreLike = Any  # a Store, str, os.PathLike or None


def make_store(store: StoreLike, read_only: Optional[bool] = None, must_exist: bool = False) -> _zarrpp.Store:
    """The store for a ``store=`` argument: a Store as is, a path -> LocalStore, None -> MemoryStore.
    With ``must_exist``, a path that is not a directory is a FileNotFoundError (opening never
    creates directories)."""
    if store is None:
        return MemoryStore()
    if isinstance(store, _zarrpp.Store):
        return store
    if isinstance(store, (str, os.PathLike)):
        s = os.fspath(store)
        if isinstance(s, bytes):
            s = os.fsdecode(s)
        if s.startswith("file://"):
            s = s[len("file://"):]
        if s.startswith("memory://"):
            raise ValueError("a memory:// URL cannot name an existing MemoryStore; pass the store object")
        if must_exist and not os.path.isdir(s):
            raise FileNotFoundError(f"no Zarr store at '{s}' (not a directory)")
        return LocalStore(s, read_only=bool(read_only))
    raise TypeError(f"expected a zarrpp store (zarrpp.storage.LocalStore / MemoryStore), a path or None, "
                    f"got {type(store).__name__}")


def is_read_only(store: _zarrpp.Store) -> bool:
    return bool(getattr(store, "read_only", False))
