"""pytest plugin of the zarr-python 3 harness (scripts/zarr_python3_suite.py): decides which tests
apply to zarrpp from their source, lets a wrong `match=` wording pass (noting it), and writes the
counts. The rules are in the docstring of scripts/zarr_python3_suite.py."""
from __future__ import annotations

import ast
import json
import os
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import pytest

INTERNAL_PREFIXES = ("zarr.core", "zarr.abc", "zarr.testing", "zarr.registry", "zarr.types", "zarr.buffer")
ASYNC_PREFIXES = ("zarr.api.asynchronous",)
EXCLUDED_NAMES = {"AsyncArray": "async API", "AsyncGroup": "async API", "FsspecStore": "fsspec store",
                  "ObjectStore": "object store", "LatencyStore": "latency store", "GpuMemoryStore": "GPU",
                  "gpu_test": "GPU", "cupy": "GPU"}
EXCLUDED_PARAMS = {"fsspec": "fsspec store", "memory_get_latency": "latency store", "remote": "fsspec store",
                   "cupy": "GPU", "async": "async API"}
# Attributes that hand out the async API.
ASYNC_ATTRIBUTES = ("async_array", "async_group")
# conftest.py's store plumbing (adapted stores); every other conftest fixture is analysed.
PLUMBING_FIXTURES = {"store", "store2", "sync_store", "local_store", "memory_store", "zip_store", "store_path",
                     "zarr_format", "path_type", "reset_config", "array_fixture", "xp", "tmp_path", "request",
                     "monkeypatch", "tmpdir", "capsys", "caplog", "recwarn", "tmp_path_factory"}

_exports: dict[str, list[str]] = json.loads((Path(os.environ["ZP3_HARNESS"]) / "exports.json").read_text())


def _public_in(module: str, name: str) -> bool:
    """A name from a private file of a public package (zarr.storage._common.StorePath) is public when
    the package exports it."""
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        package = ".".join(parts[:cut])
        if package in _exports and package != "zarr":
            return name in _exports[package]
    return False


def _module_reason(dotted: str) -> Optional[str]:
    if dotted.startswith(ASYNC_PREFIXES):
        return "async API"
    if dotted.startswith(INTERNAL_PREFIXES):
        return "internals (" + ".".join(dotted.split(".")[:3]) + ")"
    if any(p.startswith("_") and not p.startswith("__") for p in dotted.split(".")):
        return "internals (" + dotted + ")"
    return None


class ModuleInfo:
    """What a test module imports and defines, for deciding what a function uses."""

    def __init__(self, path: Path) -> None:
        self.tree = ast.parse(path.read_text())
        self.aliases: dict[str, str] = {}   # local name -> dotted origin
        self.defs: dict[str, ast.AST] = {}
        for node in self.tree.body:
            self._scan(node)
        self.memo: dict[str, Optional[str]] = {}

    def _scan(self, node: ast.AST) -> None:
        if isinstance(node, ast.ImportFrom) and node.module:
            module = node.module if node.level == 0 else "tests." + node.module
            for a in node.names:
                self.aliases[a.asname or a.name] = module + "." + a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defs[node.name] = node
        elif isinstance(node, ast.If):  # TYPE_CHECKING blocks bind names used only in annotations
            for child in node.body:
                if not isinstance(child, (ast.Import, ast.ImportFrom)):
                    self._scan(child)

    def name_reason(self, name: str, seen: set[str]) -> Optional[str]:
        if name in EXCLUDED_NAMES:
            return EXCLUDED_NAMES[name]
        origin = self.aliases.get(name)
        if origin is not None:
            if origin.startswith("tests.") and "conftest" in origin and not origin.endswith(
                    (".Expect", ".ExpectFail", ".skip_object_dtype")):
                return "internals (" + origin + ")"
            module, _, leaf = origin.rpartition(".")
            if leaf in EXCLUDED_NAMES:
                return EXCLUDED_NAMES[leaf]
            if module.startswith("zarr") and not _public_in(module, leaf):
                return _module_reason(origin)
            return None
        if name in self.defs and name not in seen:
            seen.add(name)
            return self.node_reason(self.defs[name], seen)
        return None

    def dotted(self, node: ast.AST) -> Optional[str]:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None or not root.startswith("zarr"):
            return None
        return ".".join([root, *reversed(parts)])

    def node_reason(self, fn: ast.AST, seen: set[str]) -> Optional[str]:
        annotations = {id(n) for n in _annotation_nodes(fn)}
        for node in _walk_skipping(fn, annotations):
            reason = self._one(node, seen)
            if reason:
                return reason
        return None

    def _one(self, node: ast.AST, seen: set[str]) -> Optional[str]:
        # `async def` alone is pytest-asyncio's way to write a test; awaiting is using the async API.
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)) or (
                isinstance(node, ast.comprehension) and node.is_async):
            return "async API"
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            return self.name_reason(node.id, seen)
        if isinstance(node, ast.Attribute):
            if node.attr in ASYNC_ATTRIBUTES:
                return "async API (." + node.attr + ")"
            if re.match(r"_[a-z]", node.attr) and not (isinstance(node.value, ast.Name)
                                                       and node.value.id in ("self", "cls")):
                return "private attribute ." + node.attr
            dotted = self.dotted(node)
            if dotted:
                return _module_reason(dotted)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.search(r"\bzarr\.(core|abc|testing|registry)\b", node.value):
                return "internals (string " + node.value[:40] + ")"
        return None


def _annotation_nodes(fn: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [a.annotation for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs
                    if a.annotation is not None]
            if node.returns is not None:
                out.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            out.append(node.annotation)
    return out


def _walk_skipping(root: ast.AST, skip: set[int]) -> Any:
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in skip:
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


_modules: dict[str, ModuleInfo] = {}


def _info(path: Path) -> ModuleInfo:
    key = str(path)
    if key not in _modules:
        _modules[key] = ModuleInfo(path)
    return _modules[key]


def _function_node(info: ModuleInfo, item: Any) -> Optional[ast.AST]:
    name = item.originalname if hasattr(item, "originalname") else item.name.split("[")[0]
    if item.cls is not None:
        cls = info.defs.get(item.cls.__name__)
        if isinstance(cls, ast.ClassDef):
            for node in cls.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return node
        return None
    return info.defs.get(name)


def exclusion(item: Any) -> Optional[str]:
    for mark in item.iter_markers():
        if mark.name in ("skip", "xfail", "gpu", "slow_hypothesis"):
            return "zarr-python marks it " + mark.name
        if mark.name == "skipif" and mark.args and mark.args[0] is True:
            return "zarr-python marks it skipif"
    for value in getattr(getattr(item, "callspec", None), "params", {}).values():
        text = value if isinstance(value, str) else repr(value)
        for key, why in EXCLUDED_PARAMS.items():
            if text == key or (not isinstance(value, str) and f"'{key}'" in text):
                return why
    info = _info(Path(str(item.fspath)))
    node = _function_node(info, item)
    if node is None:
        return "not analysable"
    reason = info.node_reason(node, {getattr(node, "name", "")})
    if reason:
        return reason
    conftest = _info(Path(str(item.fspath)).parent / "conftest.py")
    for fixture in item.fixturenames:
        if fixture in PLUMBING_FIXTURES:
            continue
        for source in (info, conftest):
            if fixture in source.defs:
                reason = source.node_reason(source.defs[fixture], {fixture})
                if reason:
                    return f"fixture {fixture}: {reason}"
    return None


# --- pytest.raises(match=...): zarrpp's wording is its own -------------------------------------
_original_raises = pytest.raises
_current: dict[str, Optional[str]] = {"nodeid": None}
_wording_only: set[str] = set()


class _Relaxed:
    def __init__(self, context: Any, pattern: Any) -> None:
        self.context, self.pattern, self.info = context, pattern, None

    def __enter__(self) -> Any:
        self.info = self.context.__enter__()
        return self.info

    def __exit__(self, *exc: Any) -> Any:
        suppressed = self.context.__exit__(*exc)
        if suppressed:
            _check_wording(self.info.value, self.pattern)
        return suppressed


def _check_wording(error: BaseException, pattern: Any) -> None:
    if not re.search(pattern, str(error)) and _current["nodeid"]:
        _wording_only.add(_current["nodeid"])


def _raises(expected: Any, *args: Any, match: Any = None, **kwargs: Any) -> Any:
    if match is None:
        return _original_raises(expected, *args, **kwargs)
    if args:
        info = _original_raises(expected, *args, **kwargs)
        _check_wording(info.value, match)
        return info
    return _Relaxed(_original_raises(expected, **kwargs), match)


pytest.raises = _raises  # type: ignore[assignment]

# --- results --------------------------------------------------------------------------------------
_results: dict[str, dict[str, Any]] = {}


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    for item in items:
        _results[item.nodeid] = {"file": item.nodeid.split("::")[0], "excluded": exclusion(item),
                                 "outcome": None}


class TestTimeout(Exception):
    """A test ran longer than ZP3_TEST_TIMEOUT seconds (default 120): it fails instead of hanging."""


def _alarm(signum: int, frame: Any) -> None:
    raise TestTimeout(f"the test ran longer than {os.environ.get('ZP3_TEST_TIMEOUT', '120')} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Any:
    _current["nodeid"] = item.nodeid
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(os.environ.get("ZP3_TEST_TIMEOUT", "120")))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        _current["nodeid"] = None


def pytest_runtest_logreport(report: Any) -> None:
    entry = _results.setdefault(report.nodeid, {"file": report.nodeid.split("::")[0], "excluded": None,
                                                "outcome": None})
    if report.skipped and entry["outcome"] is None:
        entry["outcome"] = "skipped"
        if not entry["excluded"]:
            entry["excluded"] = "skipped when run: " + str(report.longrepr[-1] if report.longrepr else "")[:80]
    elif report.failed:
        entry["outcome"] = "failed"
        entry["error"] = str(report.longrepr.reprcrash.message if hasattr(report.longrepr, "reprcrash")
                             else report.longrepr)[:300]
    elif report.when == "call" and entry["outcome"] is None:
        entry["outcome"] = "passed"


def pytest_sessionfinish(session: Any) -> None:
    for nodeid, entry in _results.items():
        entry["wording_only"] = nodeid in _wording_only and entry["outcome"] == "passed"
    Path(os.environ["ZP3_RESULTS"]).write_text(json.dumps(_results, indent=1))
    tally: dict[str, Counter] = {}
    for entry in _results.values():
        c = tally.setdefault(entry["file"], Counter())
        c["collected"] += 1
        if entry["excluded"]:
            c["excluded"] += 1
            continue
        c["applicable"] += 1
        if entry["outcome"] == "passed":
            c["passed"] += 1
            c["wording"] += entry["wording_only"]
    lines = ["", "zarr-python 3 suite against zarrpp: applicable tests passing (wording-only counted as passing)"]
    for file, c in sorted(tally.items()):
        share = 100.0 * c["passed"] / c["applicable"] if c["applicable"] else 0.0
        lines.append(f"  {file}: {c['passed']}/{c['applicable']} applicable pass ({share:.1f}%), "
                     f"{c['wording']} of them only with zarrpp's wording; {c['excluded']} of "
                     f"{c['collected']} not applicable")
    print("\n".join(lines))
