"""Stores: where zarrpp keeps zarr.json documents and chunks.

``LocalStore(path)`` (alias ``FileStore``) is a directory on the local file system; every write
is atomic and safe across processes. ``MemoryStore()`` lives in this process only. ``ZipStore``
is a zip file, as zarr-python keeps one. Anywhere a store is expected, a ``str`` or
``pathlib.Path`` means ``LocalStore(path)``, None means a new ``MemoryStore()``,
``"memory://name/path"`` the folder ``path`` of the process-wide memory store ``name`` (made by
its first use, kept until ``forget_memory_store(name)``), ``StorePath(store, path)`` the folder
``path`` of ``store``, and a ``dict`` (or any mapping) holds the keys and bytes zarr-python would
put there. Every store has zarr-python 3's methods (``get``, ``set``, ``list_dir``,
``with_read_only``, ``close``, ...), synchronous.
"""
from __future__ import annotations

import atexit
import os
import pathlib
import warnings
import weakref
from collections.abc import Mapping, MutableMapping
from typing import Any, Dict, Optional, cast

from . import _zarrpp
from ._store_base import (Buffer, OffsetByteRequest, RangeByteRequest, Store, SuffixByteRequest,
                          _value_bytes)

__all__ = ["Store", "StorePath", "ZipStore", "LocalStore", "FileStore", "MemoryStore", "S3Store", "AzureStore",
           "HttpStore", "StoreLike", "open_url", "forget_memory_store", "Buffer", "RangeByteRequest",
           "OffsetByteRequest", "SuffixByteRequest"]


def _read_only_error(store: Any) -> ValueError:
    return ValueError(f"{type(store).__name__} has no writable form: it is read-only")


class MemoryStore(Store, _zarrpp.MemoryStore):
    """A thread-safe in-memory store. ``store_dict``: keys and their bytes to start from (as
    zarr-python's first argument; zarrpp copies them in, so later changes to the dict are not seen,
    and the store's changes do not reach the dict)."""

    _zarrpp_url: str  # set on the stores memory:// URLs name

    def __init__(self, store_dict: Optional[Dict[str, Any]] = None, *, read_only: bool = False,
                 _share: Optional[_zarrpp.MemoryStore] = None):
        super().__init__(_share, bool(read_only))
        if store_dict is None:
            return
        if not isinstance(store_dict, dict):
            raise TypeError("MemoryStore(store_dict): expected a dict of key -> bytes, "
                            f"got {type(store_dict).__name__}")
        writer = self._with_read_only(False)
        for k, v in store_dict.items():
            if not isinstance(k, str):
                raise TypeError(f"MemoryStore(store_dict): keys must be str, got {k!r}")
            writer._set(k, _value_bytes(k, v))

    def with_read_only(self, read_only: bool = False) -> "MemoryStore":
        """This store's keys and values, read-only or writable: writes through one are seen by both."""
        view = MemoryStore(read_only=read_only, _share=self)
        if hasattr(self, "_zarrpp_url"):
            view._zarrpp_url = self._zarrpp_url
        return view

    def __reduce__(self) -> Any:
        raise TypeError("a MemoryStore cannot be pickled: it lives in this process only and cannot be reopened "
                        "elsewhere (use a LocalStore, or an s3:// store, to share data between processes)")

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, _zarrpp.MemoryStore) and self._shares_data_with(other)
                and self.read_only == other.read_only)

    def __hash__(self) -> int:
        return hash(self._location())

    def __str__(self) -> str:
        return str(getattr(self, "_zarrpp_url", f"memory://{self._location()[len('memory:'):]}"))


class LocalStore(Store, _zarrpp.LocalStore):
    """A directory on the local file system. Opening creates nothing: a missing directory reads as
    an empty store and is made by the first write (never with ``read_only``)."""

    def __init__(self, root: "str | os.PathLike[str]", read_only: bool = False, *, _is_dir: bool = False):
        text = os.path.expanduser(os.fspath(root))
        if read_only and not _is_dir and not os.path.isdir(text):  # _is_dir: the caller has just looked
            raise FileNotFoundError(f"LocalStore: no directory at '{pathlib.Path(text)}'")
        super().__init__(text, bool(read_only))  # type: ignore[arg-type]  # str converts as a path does

    def with_read_only(self, read_only: bool = False) -> "LocalStore":
        """The same directory, read-only or writable."""
        return LocalStore(self.root, read_only=read_only)

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

_ZIP_STORED, _ZIP_DEFLATED = 0, 8  # zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED


class ZipStore(Store, _zarrpp.ZipStore):
    """A zip file, as zarr-python's (and zarr-python 2's) ``ZipStore`` keeps it: each key a member.
    ``mode``: ``"r"`` read, ``"w"`` a new archive (an existing one is replaced when the store is
    first committed), ``"a"`` add to it (made if missing), ``"x"`` a new archive where no file is.
    ``compression``: ``zipfile.ZIP_STORED`` (0, the default) or ``zipfile.ZIP_DEFLATED`` (8).

    A zip member cannot be replaced in place: what is written (and deleted) is kept in a folder
    beside the archive, seen by reads at once, until ``close()`` (or ``commit()``, or the store's
    end) writes the archive anew, to a temporary file renamed over it, so a crash leaves the old
    archive whole. One writer at a time (a second is refused at its first change); readers follow
    the file to the last commit.

    One writer at a time, across processes: a writer locks the file from its first change (or
    before growth reads the array) until ``close()``; another writer, in this process or another,
    waits for it up to ``lock_timeout`` seconds (default 60; 0 refuses at once), then gets an error
    naming the lock. Leftovers of writers that died (a killed commit's copy of the archive, staged
    values) are removed by the next writer."""

    def __init__(self, path: "str | os.PathLike[str]", *, mode: str = "r", read_only: Optional[bool] = None,
                 compression: int = _ZIP_STORED, allowZip64: bool = True, lock_timeout: float = 60.0):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"ZipStore takes the path of a zip file, not {type(path).__name__}")
        # mode "r" with read_only=False opens for reading, as zarr-python's does (a write is then
        # refused); a writing mode with read_only=True would be a contradiction.
        if read_only and mode != "r":
            raise ValueError(f"ZipStore: mode '{mode}' and read_only={read_only} contradict each other "
                             "(mode 'r' reads; 'w', 'a' and 'x' write)")
        if compression not in (_ZIP_STORED, _ZIP_DEFLATED):
            raise ValueError(f"ZipStore: compression {compression!r} is not taken "
                             "(zipfile.ZIP_STORED or ZIP_DEFLATED)")
        if not allowZip64:
            raise ValueError("ZipStore: allowZip64=False is not taken (zarrpp writes ZIP64 when an archive needs it)")
        root = pathlib.Path(os.fspath(path)).expanduser()
        super().__init__(root, mode, compression == _ZIP_DEFLATED, float(lock_timeout))
        self._zip_args = (os.fspath(root), mode, compression, float(lock_timeout))
        if mode != "r":
            _OPEN_ZIP_WRITERS.add(self)

    @property
    def path(self) -> pathlib.Path:
        """The zip file's path."""
        return pathlib.Path(self._path)

    def close(self) -> None:
        """Writes what was staged into the archive and releases it (using the store again reopens
        it; a writer then adds to what it wrote)."""
        self._close()

    def with_read_only(self, read_only: bool = False) -> "ZipStore":
        """Another store on the same file: a read-only one follows its commits; a writable one can
        write once this store is closed (one writer at a time)."""
        return ZipStore(self._path, mode="r" if read_only else "a", compression=self._zip_args[2],
                        lock_timeout=self._zip_args[3])

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ZipStore) and self._location() == other._location() and \
            self.read_only == other.read_only

    def __hash__(self) -> int:
        return hash(self._location())

    def __str__(self) -> str:
        return f"zip://{self._path}"

    def __reduce__(self) -> Any:
        # By where it is; a writer is reopened to add to the file, never to replace it.
        path, mode, compression, lock_timeout = self._zip_args
        return (_reopen_zip, (path, "r" if mode == "r" else "a", compression, lock_timeout))


def _reopen_zip(path: str, mode: str, compression: int, lock_timeout: float = 60.0) -> ZipStore:
    return ZipStore(path, mode=mode, compression=compression, lock_timeout=lock_timeout)


# Writers still open when Python exits are closed then (their staged writes committed), since
# objects alive at exit may never be destroyed.
_OPEN_ZIP_WRITERS: "weakref.WeakSet[ZipStore]" = weakref.WeakSet()


@atexit.register
def _close_zip_writers() -> None:
    for store in list(_OPEN_ZIP_WRITERS):
        try:
            store.close()
        except Exception as e:  # reported, and the next store is still closed
            warnings.warn(f"{store}: {e}", RuntimeWarning)


class _FolderStore(Store, _zarrpp.PrefixStore):
    """The folder ``path`` of another store (a ``memory://`` URL's folder, a folder inside a zip
    file, a StorePath's store), read-only or as writable as that store."""

    _zarrpp_url: str  # set on the folders memory:// URLs name

    def with_read_only(self, read_only: bool = False) -> "_FolderStore":
        """The same folder, read-only or writable."""
        if self.inner.read_only and not read_only:
            raise _read_only_error(self.inner)
        view = _FolderStore(self.inner, self.path, read_only)
        if hasattr(self, "_zarrpp_url"):
            view._zarrpp_url = self._zarrpp_url
        return view

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, _zarrpp.PrefixStore) and self.path == other.path
                and self.inner._location() == other.inner._location() and self.read_only == other.read_only)

    def __hash__(self) -> int:
        return hash(self._location())

    def __str__(self) -> str:
        if hasattr(self, "_zarrpp_url"):
            return str(self._zarrpp_url)
        return f"{str(self.inner).rstrip('/')}/{self.path}"

    def __reduce__(self) -> Any:
        raise TypeError(f"the store {self} cannot be pickled: it is a folder of a store that lives in this process "
                        "only (use a LocalStore, or an s3:// store, to share data between processes)")


class _MappingStore(Store, _zarrpp.MappingStore):
    """A Python mapping as a store (zarr-python's ``store={}``)."""

    def with_read_only(self, read_only: bool = False) -> "_MappingStore":
        """The same mapping, read-only or writable (a read-only mapping is never writable)."""
        if not read_only and not isinstance(self.mapping, MutableMapping):
            raise _read_only_error(self)
        return _MappingStore(self.mapping, read_only)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, _zarrpp.MappingStore) and self.mapping is other.mapping
                and self.read_only == other.read_only)

    def __hash__(self) -> int:
        return hash(self._location())

    def __str__(self) -> str:
        return str(self._location())

    def __reduce__(self) -> Any:
        raise TypeError("a store over a Python mapping cannot be pickled: a copy elsewhere would not be the mapping "
                        "(use a LocalStore, or an s3:// store, to share data between processes)")


def _memory_url(name: str, path: str) -> Store:
    """The store ``memory://name/path`` names: the core's process-wide memory store ``name`` (made
    on first use), or the folder ``path`` inside it."""
    store = MemoryStore(_share=_zarrpp.named_memory_store(name))
    store._zarrpp_url = f"memory://{name}"
    if not path:
        return store
    sub = _FolderStore(store, path)
    sub._zarrpp_url = f"memory://{name}/{path}"
    return sub


def _zip_at(archive: str, inner: str, read_only: bool) -> Store:
    """The zip file ``archive`` (read, or added to), at the folder ``inner`` inside it."""
    z = ZipStore(archive, mode="r" if read_only else "a")
    if not inner:
        return z
    return _FolderStore(z, inner, bool(read_only))


def _mapping_store(mapping: Mapping[str, Any], read_only: bool) -> Store:
    """A mapping as a store (zarr-python's ``store={}``): its keys and bytes are the store's, as
    zarr-python 2 keeps them (zarrpp writes ``bytes``; reads any bytes-like value, or one with
    ``to_bytes()``). A ``dict`` allows growth and concurrent updates from this process's threads;
    any other mapping is written without them (growth is refused, naming the store)."""
    return _MappingStore(mapping, read_only or not isinstance(mapping, MutableMapping))


def forget_memory_store(name: str) -> bool:
    """Drops the memory store ``memory://name`` (its data goes once nothing holds it); True when
    there was one."""
    return bool(_zarrpp.forget_named_memory_store(name))


class StorePath:
    """A folder of a store (zarr-python's ``StorePath``): ``store`` and ``path``; anywhere a store
    is taken, it stands for the store opened at ``path``. ``sp / "name"`` goes one folder down; its
    ``get``, ``set``, ``delete`` and ``exists`` act on the key ``path`` itself."""

    store: Store
    path: str

    def __init__(self, store: Any, path: str = ""):
        if isinstance(store, StorePath):  # a folder of a folder: the same store, the paths joined
            outer: StorePath = store
            store, path = outer.store, f"{outer.path}/{path}"
        if not isinstance(store, _zarrpp.Store):
            raise TypeError(f"StorePath: expected a zarrpp store or a StorePath, got {type(store).__name__}")
        self.store = cast(Store, store)
        self.path = _zarrpp.normalize_path(path) if path.strip("/") else ""

    @property
    def read_only(self) -> bool:
        """Whether the store refuses writes."""
        return bool(self.store.read_only)

    def get(self, prototype: Any = None, byte_range: Any = None) -> Optional[Buffer]:
        """The value at ``path`` (a ``byte_range`` of it), or None when there is none."""
        return Store.get(self.store, self.path, prototype, byte_range)

    def get_sync(self, *, prototype: Any = None, byte_range: Any = None) -> Optional[Buffer]:
        """``get``, as zarr-python's synchronous name."""
        return Store.get(self.store, self.path, prototype, byte_range)

    def set(self, value: Any) -> None:
        """Writes ``value`` (bytes or a Buffer) at ``path``; readers see the old or the new value."""
        Store.set(self.store, self.path, value)

    set_sync = set

    def set_if_not_exists(self, value: Any) -> None:
        """Writes ``value`` at ``path`` only when nothing is there."""
        Store.set_if_not_exists(self.store, self.path, value)

    def delete(self) -> None:
        """Deletes the value at ``path`` (nothing when there is none)."""
        self.store._delete(self.path)

    delete_sync = delete

    def delete_dir(self) -> None:
        """Deletes every value under the folder ``path``."""
        Store.delete_dir(self.store, self.path)

    def exists(self) -> bool:
        """Whether a value is stored at ``path``."""
        return bool(self.store._exists(self.path))

    def is_empty(self) -> bool:
        """Whether nothing is stored under the folder ``path``."""
        return Store.is_empty(self.store, self.path)

    def __truediv__(self, other: str) -> "StorePath":
        return StorePath(self.store, "/".join(p for p in (self.path, other.strip("/")) if p))

    def __str__(self) -> str:
        return "/".join(p for p in (str(self.store).rstrip("/"), self.path) if p)

    def __repr__(self) -> str:
        return f"StorePath({type(self.store).__name__}, '{self}')"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, StorePath) and self.store == other.store and self.path == other.path

    def __hash__(self) -> int:
        return hash((self.store, self.path))


def _store_at(sp: StorePath) -> Store:
    """The store a StorePath stands for: its store opened at its path."""
    if not sp.path:
        return sp.store
    inner: Any = sp.store
    path = sp.path
    if isinstance(sp.store, _zarrpp.PrefixStore):
        inner, path = sp.store.inner, f"{sp.store.path}/{path}"
    st = _FolderStore(inner, path, bool(sp.store.read_only))
    if hasattr(sp.store, "_zarrpp_url"):
        st._zarrpp_url = f"{sp.store._zarrpp_url}/{sp.path}"
    return st


StoreLike = Any  # a Store, StorePath, mapping, str, os.PathLike or None


_REMOTE_SCHEMES = ("s3://", "http://", "https://", "az://", "abfs://", "abfss://", "gs://", "gcs://")


class _RemoteStore(Store):
    """What S3 and HTTP stores share: made from a URL and storage_options, and pickled by them
    (only options the caller gave explicitly travel in the pickle: credentials from the
    environment are read again where it is unpickled)."""

    _zarrpp_url: str
    _zarrpp_options: Dict[str, Any]
    _location: Any

    def _remember(self, url: str, storage_options: Optional[Dict[str, Any]]) -> None:
        self._zarrpp_url = url
        self._zarrpp_options = dict(storage_options or {})

    def with_read_only(self, read_only: bool = False) -> Any:
        """The same location, read-only or writable (an HTTP store is never writable)."""
        return open_url(self._zarrpp_url, self._zarrpp_options, read_only)

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._location() == other._location() and \
            self.read_only == other.read_only

    def __hash__(self) -> int:
        return hash(self._location())

    def __str__(self) -> str:
        return str(self._zarrpp_url)

    def __reduce__(self) -> Any:
        return (open_url, (self._zarrpp_url, self._zarrpp_options, self.read_only))


class S3Store(_RemoteStore, _zarrpp.S3Store):
    """A store in an S3 bucket: ``S3Store("s3://bucket/prefix", storage_options)`` (see ``open_url``
    for the options)."""

    def __init__(self, url: str, storage_options: Optional[Dict[str, Any]] = None, read_only: bool = False):
        _zarrpp.S3Store.__init__(self, url, dict(storage_options or {}), bool(read_only))
        self._remember(url, storage_options)


class AzureStore(_RemoteStore, _zarrpp.AzureStore):
    """A store in an Azure Blob Storage container: ``AzureStore("az://container/prefix",
    storage_options)`` (see ``open_url`` for the options)."""

    def __init__(self, url: str, storage_options: Optional[Dict[str, Any]] = None, read_only: bool = False):
        _zarrpp.AzureStore.__init__(self, url, dict(storage_options or {}), bool(read_only))
        self._remember(url, storage_options)


class HttpStore(_RemoteStore, _zarrpp.HttpStore):
    """A read-only store over HTTP(S): ``HttpStore("https://host/path", storage_options)`` (see
    ``open_url`` for the options)."""

    def __init__(self, url: str, storage_options: Optional[Dict[str, Any]] = None, read_only: bool = True):
        _zarrpp.HttpStore.__init__(self, url, dict(storage_options or {}), True)
        self._remember(url, storage_options)

    def with_read_only(self, read_only: bool = False) -> Any:
        """The same location, read-only (an HTTP store is never writable)."""
        if not read_only:
            raise _read_only_error(self)
        return super().with_read_only(True)

    @property
    def supports_writes(self) -> bool:
        """False: HTTP is read-only."""
        return False

    @property
    def supports_deletes(self) -> bool:
        """False: HTTP is read-only."""
        return False


def open_url(url: str, storage_options: Optional[Dict[str, Any]] = None, read_only: bool = False) -> Store:
    """The store at ``url``: ``s3://bucket/prefix`` (endpoint, region and credentials from
    ``storage_options`` — ``endpoint_url``, ``region``, ``key``, ``secret``, ``token``, ``anon`` — else
    from the ``AWS_*`` environment variables, as the C++ S3Store) or ``http(s)://host/path``
    (read-only; ``storage_options={"headers": {...}}``) or ``az://container/prefix`` (also
    ``abfs://`` and ``https://ACCOUNT.blob.core.windows.net/container/prefix``; ``storage_options``
    as adlfs spells them — ``account_name``, ``account_key``, ``sas_token``, ``connection_string``,
    ``account_host``, ``anon``, ``endpoint_url`` — else ``AZURE_STORAGE_CONNECTION_STRING`` and the
    ``AZURE_STORAGE_*`` variables) or ``gs://bucket/prefix`` (public data read over HTTPS; with
    HMAC keys as ``key`` and ``secret``, or ``GS_ACCESS_KEY_ID`` / ``GS_SECRET_ACCESS_KEY``, GCS's
    S3-compatible API, where conditional writes and growth are refused; ``endpoint_url`` or
    ``STORAGE_EMULATOR_HOST`` points elsewhere). The URL is the node itself.

    Every request is bounded, for both kinds: ``connect_timeout``, ``timeout`` (one attempt),
    ``stall_timeout`` (no byte moving), ``retry_window`` (no new attempt after it),
    ``retry_initial_delay`` and ``retry_max_delay`` in seconds, and ``max_attempts``. The defaults
    (10, 300, 10, 30, 0.1, 5 and 4) fail a stalled server in about 30 s. ``read_only``: every write
    is refused (an HTTP store is always read-only)."""
    kind = _zarrpp.locate_store(url)["kind"]
    if kind == "gcs":  # public data over HTTPS, or GCS's S3-compatible API with HMAC keys
        kind = _zarrpp.remote_class(url, dict(storage_options or {}))
    if kind == "s3":
        return S3Store(url, storage_options, read_only)
    if kind == "azure":
        return AzureStore(url, storage_options, read_only)
    if kind == "http":
        return HttpStore(url, storage_options)
    raise ValueError(f"open_url: '{url}' is not an s3://, az://, gs:// or http(s):// URL")


def _store_from_text(s: str, read_only: Optional[bool], must_exist: bool, storage_options: Optional[Dict[str, Any]],
                     missing: Any) -> Store:
    """The store a string names, where the core says it points (``locate_store``: file:// decoded,
    ".." as the OS takes it, paths into an existing zip file, memory://NAME); Python makes the
    store objects."""
    at = _zarrpp.locate_store(s)
    if at["kind"] in ("http", "s3", "azure", "gcs"):
        return open_url(s, storage_options, bool(read_only))
    if at["kind"] == "memory":
        return _memory_url(at["name"], at["inner"])
    if at["kind"] == "zip":
        return _zip_at(at["path"], at["inner"], bool(read_only))
    path = at["path"] if s.lower().startswith("file:") else s
    if must_exist and not os.path.isdir(path):
        raise missing(f"no Zarr store at '{path}' (not a directory)")
    return LocalStore(path, read_only=bool(read_only), _is_dir=must_exist)


def make_store(store: StoreLike, read_only: Optional[bool] = None, must_exist: bool = False,
               storage_options: Optional[Dict[str, Any]] = None, missing: Any = None) -> Any:
    """The store for a ``store=`` argument: a Store as is, a path -> LocalStore (a zip file, or a
    folder inside one -> ZipStore), an s3:// or http(s):// URL -> a remote store, a memory:// URL ->
    a named memory store, None -> MemoryStore.
    With ``must_exist``, a path that is not a directory is a FileNotFoundError (opening never
    creates directories). Other URL schemes are refused (never taken as a local folder named
    "gs:")."""
    from .errors import NodeNotFoundError
    missing = missing or NodeNotFoundError
    if storage_options and not (isinstance(store, str) and store.startswith(_REMOTE_SCHEMES)):
        raise TypeError("storage_options is only taken with an s3://, az://, gs:// or http(s):// URL")
    if store is None:
        return MemoryStore()
    if isinstance(store, _zarrpp.Store):
        return store
    if isinstance(store, StorePath):
        return _store_at(store)
    if isinstance(store, Mapping) and not isinstance(store, (str, bytes)):
        return _mapping_store(store, bool(read_only))
    if isinstance(store, (str, os.PathLike)):
        s = os.fspath(store)
        if isinstance(s, bytes):
            s = os.fsdecode(s)
        return _store_from_text(s, read_only, must_exist, storage_options, missing)
    raise TypeError(f"expected a zarrpp store (zarrpp.storage.LocalStore / MemoryStore), a mapping, a path or "
                    f"None, got {type(store).__name__}")


def is_read_only(store: _zarrpp.Store) -> bool:
    return bool(getattr(store, "read_only", False))
