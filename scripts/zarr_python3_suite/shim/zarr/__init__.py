"""The `zarr` package of the zarr-python 3 harness: zarr-python's import names, resolving to zarrpp.

Only for scripts/zarr_python3_suite.py. Public modules map to zarrpp's (zarr.storage and its
private files -> zarrpp.storage, zarr.codecs.* -> zarrpp.codecs, zarr.errors -> zarrpp.errors,
zarr.api.synchronous -> zarrpp); every other zarr.* module, and every name zarrpp lacks, is a
placeholder that imports fine, so a test that needs it fails on its own instead of taking its whole
file down at import. A public name zarrpp lacks (zarr.from_array) raises `HarnessMissing` when
called; zarr-python's internal modules (zarr.core.*) give placeholders all the way down, as the
test modules use some at import time (the tests that use them are not counted).
"""
import asyncio
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from typing import Any, Optional

import zarrpp
from zarrpp import *  # noqa: F401,F403


class HarnessMissing(Exception):
    """A name zarrpp does not provide (a zarr-python internal or missing API) was used."""


class _Missing(type):
    """Placeholder classes: attribute access, subscripting and `|` give placeholders; calling raises."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return placeholder(f"{cls.zp3_name}.{name}", cls.zp3_internal)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls.zp3_internal:
            return placeholder(f"{cls.zp3_name}()", internal=True)
        raise HarnessMissing(f"{cls.zp3_name} is not available in zarrpp")

    def __iter__(cls) -> Any:
        return iter(())

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __or__(cls, other: Any) -> Any:
        return cls

    __ror__ = __or__

    def __repr__(cls) -> str:
        return f"<missing {cls.zp3_name}>"


_classes: dict = {}


def placeholder(name: str, internal: bool = False) -> Any:
    leaf = name.rsplit(".", 1)[-1]
    if leaf.endswith(("Warning", "Error")):
        # Warning and exception classes must be real classes (filterwarnings marks, pytest.raises);
        # zarrpp's own when it has one of that name.
        if hasattr(zarrpp.errors, leaf):
            return getattr(zarrpp.errors, leaf)
        base = UserWarning if leaf.endswith("Warning") else Exception
        return _classes.setdefault(name, type(leaf, (base,), {"zp3_name": name}))
    return _Missing(name.rsplit(".", 1)[-1], (), {"zp3_name": name, "zp3_internal": internal})


class _Forward(types.ModuleType):
    """A module whose names come from `target`, with placeholders for the rest."""

    def __init__(self, name: str, target: Optional[types.ModuleType]) -> None:
        super().__init__(name)
        self.__path__: list = []
        self.zp3_target = target
        if target is not None:
            self.__all__ = list(getattr(target, "__all__", []))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        target = self.__dict__.get("zp3_target")
        if target is not None and hasattr(target, name):
            return getattr(target, name)
        return placeholder(f"{self.__name__}.{name}", internal=target is None)


def sync(coroutine: Any) -> Any:
    """zarr.core.sync.sync for conftest's fixtures: runs the coroutine on its own loop."""
    result: dict = {}

    def work() -> None:
        try:
            result["value"] = asyncio.run(coroutine)
        except BaseException as e:  # noqa: B902 - handed to the caller
            result["error"] = e
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def _module_for(name: str) -> types.ModuleType:
    parts = name.split(".")
    if parts[1] == "storage":
        return _Forward(name, zarrpp.storage)
    if parts[1] == "codecs":
        return _Forward(name, zarrpp.codecs)
    if name == "zarr.errors":
        return _Forward(name, zarrpp.errors)
    if name == "zarr.api.synchronous":
        return _Forward(name, zarrpp)
    if name == "zarr.abc.store":
        # The store base class conftest.py checks its fixtures against: zarrpp's.
        module = _Forward(name, None)
        module.Store = zarrpp.storage.Store  # type: ignore[attr-defined]
        return module
    module = _Forward(name, None)
    if name == "zarr.core.sync":
        module.sync = sync  # type: ignore[attr-defined]
    return module


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if not fullname.startswith("zarr."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        return _module_for(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _hypothesis_ci_profile() -> None:
    """tests/conftest.py builds on the "ci" profile newer hypothesis releases define and Debian's
    does not; it is registered here, as every process that imports the tests (spawned pool
    workers too) imports this package first."""
    try:
        from hypothesis import settings
    except ImportError:
        return
    try:
        settings.get_profile("ci")
    except Exception:
        settings.register_profile("ci", derandomize=True, deadline=None)


_hypothesis_ci_profile()
sys.meta_path.insert(0, _Finder())
config = zarrpp.config
__version__ = zarrpp.__version__


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if hasattr(zarrpp, name):
        return getattr(zarrpp, name)
    return placeholder(f"zarr.{name}")


import zarr.api.synchronous  # noqa: E402,F401
import zarr.codecs  # noqa: E402,F401
import zarr.errors  # noqa: E402,F401
import zarr.storage  # noqa: E402,F401
