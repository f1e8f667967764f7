"""``zarrpp.config``: zarr-python 3's configuration object (``zarr.config``), with its keys, its
``ZARR_*`` environment variables and its ``get`` / ``set`` / ``reset``.

The keys that change what zarrpp does: ``default_zarr_format`` (new arrays and groups),
``array.order`` (the stored order of new Zarr v2 arrays), ``array.write_empty_chunks`` and
``async.concurrency`` (defaults of every array opened or created; the concurrency is zarrpp's
thread count, and its default 10 leaves zarrpp's own, the machine's cores), and
``array.rectilinear_chunks``. Keys that only tune zarr-python's machinery (``threading``,
``codec_pipeline.batch_size``, the sharding coalescing sizes, ``async.timeout``, ``json_indent``)
are kept and read back but change nothing here. Keys naming zarr-python's own classes
(``codecs.*``, ``buffer``, ``ndbuffer``, ``codec_pipeline.path``) take only the values that name
zarr-python's defaults: zarrpp cannot swap its codecs, so another value is refused rather than
ignored. Keys zarr-python 3.1 removed (the ``array.v2_default_*`` / ``v3_default_*`` codec
defaults) are refused as there; ``array.read_missing_chunks=False`` is refused (zarrpp reads a
missing chunk as the fill value). Any other key is stored and read back, as zarr-python does.
A ``ZARR_*`` variable zarrpp cannot take is not applied and is named in a RuntimeWarning (an
error would stop ``import zarrpp`` for a variable set for zarr-python).
"""
from __future__ import annotations

import ast
import copy
import operator
import os
import threading
import warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from .codecs import ZARR_PYTHON_CODEC_CLASSES as _CODECS

__all__ = ["Config", "ConfigSet", "BadConfigError", "config"]


# zarr-python 3.3's defaults, key for key (zarr/core/config.py).
_DEFAULTS: Dict[str, Any] = {
    "default_zarr_format": 3,
    "array": {
        "order": "C",
        "write_empty_chunks": False,
        "read_missing_chunks": True,
        "target_shard_size_bytes": None,
        "rectilinear_chunks": False,
        "sharding_coalesce_max_gap_bytes": 1 << 20,
        "sharding_coalesce_max_bytes": 16 << 20,
    },
    "async": {"concurrency": 10, "timeout": None},
    "threading": {"max_workers": None},
    "json_indent": 2,
    "codec_pipeline": {"path": "zarr.core.codec_pipeline.BatchedCodecPipeline", "batch_size": 1, "max_workers": None},
    "codecs": _CODECS,
    "buffer": "zarr.buffer.cpu.Buffer",
    "ndbuffer": "zarr.buffer.cpu.NDBuffer",
}

# Removed in zarr-python 3.1 (setting them is a ValueError there too).
_REMOVED = {f"array.{k}" for k in (
    "v2_default_compressor.numeric", "v2_default_compressor.string", "v2_default_compressor.bytes",
    "v2_default_filters.string", "v2_default_filters.bytes", "v3_default_filters.numeric",
    "v3_default_filters.raw", "v3_default_filters.bytes", "v3_default_serializer.numeric",
    "v3_default_serializer.string", "v3_default_serializer.bytes", "v3_default_compressors.string",
    "v3_default_compressors.bytes", "v3_default_compressors")}

# Keys naming zarr-python's classes: the values zarrpp is (zarr-python's CPU defaults, also the
# names older zarr-python versions used).
_CLASS_KEYS = {
    "buffer": {"zarr.buffer.cpu.Buffer", "zarr.core.buffer.cpu.Buffer"},
    "ndbuffer": {"zarr.buffer.cpu.NDBuffer", "zarr.core.buffer.cpu.NDBuffer"},
    "codec_pipeline.path": {"zarr.core.codec_pipeline.BatchedCodecPipeline",
                            "zarr.core.codec_pipeline.FusedCodecPipeline"},
}


class BadConfigError(ValueError):
    """A configuration value zarrpp cannot take."""


def _check_bool(key: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise BadConfigError(f"zarr.config: '{key}' must be True or False, got {value!r}")


def _check_value(key: str, value: Any) -> None:
    """Refuses a value zarrpp would otherwise ignore or misapply, naming the key."""
    if key in _REMOVED or any(key.startswith(k + ".") for k in _REMOVED):
        raise ValueError(f"zarr.config: '{key}' has been removed (zarr-python 3.1 removed the default codec "
                         "settings; pass compressors=, filters= or serializer= when creating an array)")
    if key == "default_zarr_format" and value not in (2, 3):
        raise BadConfigError(f"zarr.config: 'default_zarr_format' must be 2 or 3, got {value!r}")
    if key == "array.order" and value not in ("C", "F"):
        raise BadConfigError(f"zarr.config: 'array.order' must be 'C' or 'F', got {value!r}")
    if key in ("array.write_empty_chunks", "array.rectilinear_chunks", "array.read_missing_chunks"):
        _check_bool(key, value)
    if key == "array.read_missing_chunks" and value is False:
        raise BadConfigError("zarr.config: 'array.read_missing_chunks' = False is not supported: zarrpp reads "
                             "a chunk that is not stored as the fill value")
    if key == "async.concurrency" and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise BadConfigError(f"zarr.config: 'async.concurrency' must be an integer >= 1, got {value!r}")
    if key.startswith("codecs.") and _CODECS.get(key[len("codecs."):]) != value:
        raise BadConfigError(f"zarr.config: '{key}' = {value!r} cannot be taken: zarrpp has its own codecs "
                             "and cannot use another implementation")
    if key in _CLASS_KEYS and value not in _CLASS_KEYS[key]:
        raise BadConfigError(f"zarr.config: '{key}' = {value!r} cannot be taken: zarrpp works on NumPy (CPU) "
                             f"buffers with its own pipeline (takes {sorted(_CLASS_KEYS[key])})")


def _leaves(prefix: str, value: Any) -> Iterator[Tuple[str, Any]]:
    """(dotted key, value) of every leaf under ``value`` (a dict is walked, anything else a leaf)."""
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            yield from _leaves(f"{prefix}.{k}" if prefix else str(k), v)
    else:
        yield prefix, value


def _env_config(prefix: str = "ZARR_") -> Dict[str, Any]:
    """``ZARR_ARRAY__ORDER=F`` -> {"array.order": "F"}: lower case, ``__`` nests, values read as
    Python literals where they are one (else text), as donfig reads them."""
    out: Dict[str, Any] = {}
    for name, text in os.environ.items():
        if not name.startswith(prefix) or name == prefix:
            continue
        key = name[len(prefix):].lower().replace("__", ".")
        try:
            out[key] = ast.literal_eval(text)
        except (SyntaxError, ValueError):
            out[key] = text
    return out


class ConfigSet:
    """What ``config.set(...)`` returns: the change is made at once; used as a context manager,
    it is undone when the block ends."""

    def __init__(self, owner: "Config", undo: List[Tuple[List[str], Any]]):
        self._owner = owner
        self._undo = undo

    def __enter__(self) -> "Config":
        return self._owner

    def __exit__(self, *exc: Any) -> None:
        with self._owner._lock:
            for path, old in reversed(self._undo):
                self._owner._put(path, old)


_MISSING = object()


class Config:
    """zarr-python's configuration (a donfig ``Config``): nested keys read with dots
    (``config.get("array.order")``), set for good or for a ``with`` block, reset to the defaults and
    the ``ZARR_*`` environment variables."""

    def __init__(self, name: str = "zarr", defaults: Optional[List[Dict[str, Any]]] = None):
        self.name = name
        self.env_prefix = name.upper() + "_"
        self.defaults: List[Dict[str, Any]] = defaults if defaults is not None else [copy.deepcopy(_DEFAULTS)]
        self.config: Dict[str, Any] = {}
        self._lock = threading.RLock()
        self.refresh()

    # ---- reading ----
    def _canonical(self, parts: List[str], create: bool) -> List[str]:
        """The key's parts as stored: '-' and '_' are one (an existing spelling wins)."""
        node: Any = self.config
        out = []
        for p in parts:
            if isinstance(node, dict) and p not in node:
                alt = p.replace("-", "_") if "-" in p else p.replace("_", "-")
                p = alt if alt in node else p
            out.append(p)
            node = node.get(p) if isinstance(node, dict) else None
        return out

    def get(self, key: str, default: Any = _MISSING, override_with: Any = None) -> Any:
        """The value at ``key`` ("array.order"); ``default`` when it is not set, else KeyError."""
        if override_with is not None:
            return override_with
        with self._lock:
            node: Any = self.config
            for p in self._canonical(str(key).split("."), False):
                if not isinstance(node, dict) or p not in node:
                    if default is _MISSING:
                        raise KeyError(key)
                    return default
                node = node[p]
            # A copy, so the caller cannot change the settings through it; a scalar needs none.
            return node if isinstance(node, (str, int, float, bool, type(None))) else copy.deepcopy(node)

    def flat_section(self, key: str) -> Dict[str, Any]:
        """The settings under ``key`` ("array") whose values are scalars, as a new dict: a look-up
        without ``get``'s deep copy, for the settings every array handle reads."""
        with self._lock:
            node: Any = self.config
            for p in self._canonical(str(key).split("."), False):
                node = node.get(p) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                return {}
            return {k: v for k, v in node.items() if isinstance(v, (str, int, float, bool, type(None)))}

    def __contains__(self, key: str) -> bool:
        absent = object()
        return self.get(key, absent) is not absent

    # ---- writing ----
    def _put(self, path: List[str], value: Any) -> None:
        node = self.config
        for p in path[:-1]:
            if not isinstance(node.get(p), dict):
                node[p] = {}
            node = node[p]
        if value is _MISSING:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value

    def _old(self, path: List[str]) -> Any:
        node: Any = self.config
        for p in path:
            if not isinstance(node, dict) or p not in node:
                return _MISSING
            node = node[p]
        return copy.deepcopy(node)

    def set(self, arg: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> ConfigSet:
        """Sets keys (``{"array.order": "F"}``, or ``array__order="F"``) for good, or for a
        ``with`` block. Every value is checked before any is set."""
        items = dict(arg or {})
        items.update({k.replace("__", "."): v for k, v in kwargs.items()})
        flat = [leaf for key, value in items.items() for leaf in _leaves(str(key), value)]
        for key, value in flat:
            _check_value(key, value)
        undo: List[Tuple[List[str], Any]] = []
        with self._lock:
            for key, value in items.items():
                path = self._canonical(str(key).split("."), True)
                undo.append((path, self._old(path)))
                self._put(path, copy.deepcopy(value))
        return ConfigSet(self, undo)

    def update(self, new: Mapping[str, Any]) -> None:
        """Merges the nested mapping ``new`` in (each leaf as ``set`` would)."""
        self.set({k: v for k, v in _leaves("", new)})

    def clear(self) -> None:
        """Empties the settings (defaults included; ``reset`` brings them back)."""
        with self._lock:
            self.config = {}

    def refresh(self) -> None:
        """The defaults, then the ``ZARR_*`` environment variables over them."""
        env = _env_config(self.env_prefix)
        for key, value in list(env.items()):
            try:
                _check_value(key, value)
            except ValueError as e:  # at import: a variable meant for zarr-python must not stop it
                warnings.warn(f"{self.env_prefix}{key.upper().replace('.', '__')} is not applied: {e}", RuntimeWarning,
                              stacklevel=2)
                del env[key]
        with self._lock:
            self.config = copy.deepcopy(self.defaults[0]) if self.defaults else {}
            for key, value in env.items():
                self._put(self._canonical(key.split("."), True), value)

    def reset(self) -> None:
        """Back to the defaults and the environment variables."""
        self.clear()
        self.refresh()

    def enable_gpu(self) -> ConfigSet:
        """Refused (BadConfigError): zarrpp reads into NumPy arrays in main memory."""
        raise BadConfigError("zarrpp has no GPU buffers: arrays are read into NumPy arrays in main memory")

    def pprint(self) -> None:
        """Prints the settings."""
        import pprint
        pprint.pprint(self.config)


config = Config("zarr")


def default_zarr_format(given: Optional[int]) -> int:
    """``zarr_format`` as given, else ``default_zarr_format`` from the configuration."""
    return int(config.get("default_zarr_format") if given is None else given)


def array_defaults(settings: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The settings of an array opened or created now: write_empty_chunks, and the thread count
    when ``async.concurrency`` is not its default. ``settings``: the "array" section, when the
    caller has read it."""
    settings = config.flat_section("array") if settings is None else settings
    out: Dict[str, Any] = {"write_empty_chunks": bool(settings.get("write_empty_chunks", False))}
    concurrency = config.flat_section("async").get("concurrency", 10)
    if concurrency != _DEFAULTS["async"]["concurrency"]:
        out["concurrency"] = int(concurrency)
    return out


class ArrayConfig:
    """An array handle's settings, as zarr-python's ``ArrayConfig``: ``order`` (the memory layout
    of what reads return), ``write_empty_chunks``, ``read_missing_chunks`` (True only: zarrpp reads
    a missing chunk as the fill value) and the two sharding read-coalescing limits (kept; zarrpp's
    sharded reads coalesce by their own rule). Unset keys come from ``zarrpp.config``."""

    KEYS = ("order", "write_empty_chunks", "read_missing_chunks", "sharding_coalesce_max_gap_bytes",
            "sharding_coalesce_max_bytes")

    def __init__(self, order: str = "C", write_empty_chunks: bool = False, read_missing_chunks: bool = True,
                 sharding_coalesce_max_gap_bytes: int = 1 << 20, sharding_coalesce_max_bytes: int = 16 << 20):
        self.check({"order": order, "read_missing_chunks": read_missing_chunks})
        self.order = order
        self.write_empty_chunks = bool(write_empty_chunks)
        self.read_missing_chunks = bool(read_missing_chunks)
        self.sharding_coalesce_max_gap_bytes = int(sharding_coalesce_max_gap_bytes)
        self.sharding_coalesce_max_bytes = int(sharding_coalesce_max_bytes)

    @staticmethod
    def check(cfg: Dict[str, Any]) -> None:
        """Refuses settings zarrpp cannot honour (an ``order`` other than C or F,
        ``read_missing_chunks=False``) with a ValueError naming them."""
        if "order" in cfg and cfg["order"] not in ("C", "F"):
            raise ValueError(f"config: order must be 'C' or 'F', got {cfg['order']!r}")
        if cfg.get("read_missing_chunks", True) is not True:
            raise ValueError("config: read_missing_chunks=False is not supported: zarrpp reads a chunk that is not "
                             "stored as the fill value")

    @classmethod
    def from_settings(cls, settings: Optional[Dict[str, Any]] = None, **given: Any) -> "ArrayConfig":
        """zarrpp.config's ``array.*`` values (``settings``: that section, when the caller has read
        it), with ``given`` instead where given."""
        settings = config.flat_section("array") if settings is None else settings
        values = {k: settings[k] for k in cls.KEYS}
        values.update(given)
        return cls(**values)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "ArrayConfig":
        """zarr-python's form: the keys given, zarrpp.config's for the others."""
        cls.check(dict(data))
        unknown = sorted(set(data) - set(cls.KEYS))
        if unknown:
            raise ValueError(f"ArrayConfig: unknown keys {unknown}")
        return cls.from_settings(**data)

    def replace(self, **given: Any) -> "ArrayConfig":
        """A copy with the ``given`` settings changed."""
        return ArrayConfig(**{**self.as_dict(), **given})

    def as_dict(self) -> Dict[str, Any]:
        """The settings as a dict (zarr-python's keys)."""
        return {k: getattr(self, k) for k in self.KEYS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrayConfig) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "ArrayConfig(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


def _checked_config(config: Any) -> Dict[str, Any]:
    """``config=`` (a dict or an ArrayConfig): zarr-python's ArrayConfig keys and zarrpp's
    concurrency, checked."""
    cfg = config.as_dict() if isinstance(config, ArrayConfig) else dict(config or {})
    unknown = sorted(set(cfg) - set(ArrayConfig.KEYS) - {"concurrency"})
    if unknown:
        raise ValueError(f"config: unknown keys {unknown} (known: {', '.join(ArrayConfig.KEYS)}, concurrency)")
    ArrayConfig.check(cfg)
    if "concurrency" in cfg:
        try:
            cfg["concurrency"] = operator.index(cfg["concurrency"])
        except TypeError:
            raise ValueError(f"config: concurrency must be an integer, got {cfg['concurrency']!r}") from None
        if cfg["concurrency"] < 0:
            raise ValueError(f"config: concurrency must be >= 0, got {cfg['concurrency']}")
    return cfg
