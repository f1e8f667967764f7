"""The base of every store class: zarr-python 3's store methods over the primitives of zarrpp's
stores, and the values and byte requests they take and give."""
from __future__ import annotations

import operator
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Optional, Tuple


class Buffer(bytes):
    """A value read from a store: ``bytes``, with zarr-python's ``Buffer`` methods."""

    def to_bytes(self) -> bytes:
        """The value as plain ``bytes``."""
        return bytes(self)

    def as_numpy_array(self) -> Any:
        """The value as a NumPy ``uint8`` array (a view, no copy)."""
        import numpy
        return numpy.frombuffer(self, dtype="B")

    @classmethod
    def from_bytes(cls, data: Any) -> "Buffer":
        """A Buffer holding ``data``."""
        return cls(data)


@dataclass(frozen=True)
class RangeByteRequest:
    """Bytes ``[start, end)`` of a value."""
    start: int
    end: int


@dataclass(frozen=True)
class OffsetByteRequest:
    """The bytes of a value from ``offset`` on."""
    offset: int


@dataclass(frozen=True)
class SuffixByteRequest:
    """The last ``suffix`` bytes of a value."""
    suffix: int


class _Listing(list):  # type: ignore[type-arg]
    """Keys, iterable with ``for`` and (as zarr-python's listings) ``async for``."""

    def __aiter__(self) -> AsyncIterator[str]:
        async def each() -> AsyncIterator[str]:
            for k in list.__iter__(self):
                yield k
        return each()


def _range_args(byte_range: Any) -> Tuple[str, int, int]:
    """(kind, a, b) of a byte request: zarr-python's classes (or any object with their fields)."""
    if byte_range is None:
        return ("all", 0, 0)
    if hasattr(byte_range, "start") and hasattr(byte_range, "end"):
        return ("range", operator.index(byte_range.start), operator.index(byte_range.end))
    if hasattr(byte_range, "offset"):
        return ("offset", operator.index(byte_range.offset), 0)
    if hasattr(byte_range, "suffix"):
        return ("suffix", operator.index(byte_range.suffix), 0)
    raise TypeError(f"byte_range: expected RangeByteRequest, OffsetByteRequest or SuffixByteRequest, "
                    f"got {type(byte_range).__name__}")


def _value_bytes(key: str, value: Any) -> Any:
    """The bytes to store for ``value``: bytes-like, or a zarr-python Buffer (``to_bytes()``)."""
    if hasattr(value, "to_bytes") and not isinstance(value, (int, bytes)):
        value = value.to_bytes()
    try:
        return memoryview(value).cast("B")
    except TypeError:
        raise TypeError(f"cannot store {type(value).__name__} at '{key}': expected bytes-like or a Buffer") from None


def _dir_prefix(prefix: str) -> str:
    return prefix if prefix in ("", "/") or prefix.endswith("/") else prefix + "/"


class Store:
    """zarr-python 3's store methods, synchronous (``get``, ``set``, ``list_dir``, ...), over the
    primitives of zarrpp's stores (``_get``, ``_set``, ...): the base of every store class here
    (LocalStore, MemoryStore, ZipStore, S3Store, HttpStore, and the views inside them)."""

    _get: Any
    _set: Any
    _exists: Any
    _size: Any
    _delete: Any
    _delete_prefix: Any
    _list_prefix: Any
    _list_dir: Any
    read_only: bool

    @classmethod
    async def open(cls, *args: Any, **kwargs: Any) -> Any:
        """``await Store.open(...)``, zarr-python 3's asynchronous constructor: the store, made at
        once (zarrpp's stores need no asynchronous set-up)."""
        return cls(*args, **kwargs)

    def get(self, key: str, prototype: Any = None, byte_range: Any = None) -> Optional[Buffer]:
        """The value of ``key`` (a ``byte_range`` of it) as a Buffer, or None when there is none."""
        v = self._get(key, *_range_args(byte_range))
        return None if v is None else Buffer(v)

    def get_sync(self, key: str, *, prototype: Any = None, byte_range: Any = None) -> Optional[Buffer]:
        """``get``, as zarr-python's synchronous name."""
        return self.get(key, prototype, byte_range)

    def set(self, key: str, value: Any) -> None:
        """Writes ``value`` (bytes or a Buffer) at ``key``; readers see the old or the new value."""
        self._set(key, _value_bytes(key, value))

    set_sync = set

    def set_if_not_exists(self, key: str, value: Any) -> None:
        """Writes ``value`` at ``key`` only when nothing is there (atomically where the store can)."""
        self._set(key, _value_bytes(key, value), True)

    def delete(self, key: str) -> None:
        """Deletes the value at ``key`` (nothing when there is none)."""
        self._delete(key)

    delete_sync = delete

    def delete_dir(self, prefix: str) -> None:
        """Deletes every value under the folder ``prefix`` ("": everything)."""
        self._delete_prefix(_dir_prefix(prefix).lstrip("/"))

    def clear(self) -> None:
        """Deletes every value in the store."""
        self._delete_prefix("")

    def exists(self, key: str) -> bool:
        """Whether a value is stored at ``key``."""
        return bool(self._exists(key))

    def list(self) -> _Listing:
        """Every key, sorted."""
        return _Listing(self._list_prefix(""))

    def list_prefix(self, prefix: str = "") -> _Listing:
        """Every key starting with ``prefix``, sorted."""
        return _Listing(self._list_prefix(prefix))

    def list_dir(self, prefix: str = "") -> _Listing:
        """The names directly under the folder ``prefix``: keys and folders, without a trailing '/'."""
        keys, folders = self._list_dir(_dir_prefix(prefix).lstrip("/"))
        return _Listing(sorted(set(keys) | set(folders)))

    def is_empty(self, prefix: str = "") -> bool:
        """Whether nothing is stored under the folder ``prefix``."""
        return not self._list_prefix(_dir_prefix(prefix).lstrip("/"))

    def getsize(self, key: str) -> int:
        """The size of the value at ``key`` in bytes (FileNotFoundError when there is none)."""
        n = self._size(key)
        if n is None:
            raise FileNotFoundError(key)
        return int(n)

    def getsize_prefix(self, prefix: str) -> int:
        """The total size of the values under the folder ``prefix``, in bytes."""
        return sum(int(self._size(k) or 0) for k in self._list_prefix(_dir_prefix(prefix).lstrip("/")))

    def close(self) -> None:
        """Nothing to release: the store stays usable (zarr-python reopens on use)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def supports_writes(self) -> bool:
        """Whether the store takes writes (every store but HTTP)."""
        return True

    @property
    def supports_deletes(self) -> bool:
        """Whether the store can delete (every store but HTTP)."""
        return True

    @property
    def supports_partial_writes(self) -> bool:
        """False: zarrpp writes whole values."""
        return False

    @property
    def supports_consolidated_metadata(self) -> bool:
        """True: consolidated metadata is read and written on every store."""
        return True
