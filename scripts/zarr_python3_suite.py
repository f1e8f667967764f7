#!/usr/bin/env python3
"""Runs zarr-python 3's own tests and user guide against zarrpp, outside this repository.

    python3 scripts/zarr_python3_suite.py build ZARR_PYTHON_GIT_DIR HARNESS_DIR
    python3 scripts/zarr_python3_suite.py run HARNESS_DIR ZARRPP_PYTHON_DIR [--tests FILE ...]

`build` takes zarr-python's tests and user guide at COMMIT from a clone (a bare mirror is fine)
and lays out HARNESS_DIR: the sources, unchanged except for the two adaptations below, and a
`zarr` package that resolves to zarrpp. Nothing of zarr-python is copied into this repository;
this script only writes our own shim and plugin next to it. `run` runs the test files and the
guide pages and prints the counts docs/zarr_python3_suite.md records.

The adaptations (each checked to have applied exactly once):
- tests/conftest.py: classes written with Python 3.12's generic syntax (`class X[T]:`) are
  rewritten as `class X(Generic[T]):` (Debian's Python is 3.11).
- tests/test_indexing.py: its async `store` fixture becomes a plain one returning a StorePath.

Applicability is decided from the test's source, before anything runs (see `Classifier`): a test
is left out when it, a module-level helper it calls or a fixture it takes uses zarr-python
internals (zarr.core, zarr.abc, zarr.testing, zarr.registry, zarr.types, private modules or
attributes), the async API (await, async for/with, AsyncArray/AsyncGroup, zarr.api.asynchronous),
GPU, FsspecStore/ObjectStore/LatencyStore/LoggingStore, or when zarr-python marks it skip/xfail.
A test that fails only because `pytest.raises(match=...)` pins zarr-python's wording is counted
as passing, and listed as such.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import io
from pathlib import Path

COMMIT = "d44f9f92ab4f12a8008de2553a7c9988669e3910"
TEST_FILES = ["tests/test_indexing.py", "tests/test_api.py", "tests/test_array.py"]
GUIDE_PAGES = ["arrays", "groups", "attributes", "storage", "consolidated_metadata", "performance"]
HERE = Path(__file__).resolve().parent
SUPPORT = HERE / "zarr_python3_suite"


def extract(git_dir: Path, out: Path) -> None:
    """Writes zarr-python's tests and user guide at COMMIT into out/zarr-python."""
    dest = out / "zarr-python"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    tar = subprocess.run(["git", "--git-dir", str(git_dir), "archive", COMMIT, "tests", "docs/user-guide",
                          "src/zarr/storage/__init__.py", "src/zarr/codecs/__init__.py", "src/zarr/__init__.py",
                          "src/zarr/errors.py", "src/zarr/core/array.py", "src/zarr/core/group.py"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(dest)
    # zarr-python's package stays out of the import path: only its export lists are read.
    (dest / "src").rename(out / "zarr-python-exports")


def rewrite_generic_classes(text: str) -> tuple[str, int]:
    """`class Name[A, B]:` -> TypeVars A, B and `class Name(Generic[A, B]):`."""
    pattern = re.compile(r"^class (\w+)\[([\w, ]+)\]:", re.M)
    names: list[str] = []

    def repl(m: re.Match[str]) -> str:
        params = [p.strip() for p in m.group(2).split(",")]
        names.extend(p for p in params if p not in names)
        return f"class {m.group(1)}(Generic[{', '.join(params)}]):"
    text, count = pattern.subn(repl, text)
    decl = "from typing import Generic, TypeVar\n" + "".join(f"{n} = TypeVar('{n}')\n" for n in names)
    marker = "\n@dataclass(frozen=True)\nclass Expect("
    return text.replace(marker, "\n" + decl + marker, 1), count


def adapt(out: Path) -> None:
    tests = out / "zarr-python" / "tests"
    conftest = tests / "conftest.py"
    text, count = rewrite_generic_classes(conftest.read_text())
    if count != 2 or "TypeVar('TIn')" not in text:
        sys.exit(f"build: expected two generic classes in {conftest}, rewrote {count}")
    conftest.write_text(text)
    indexing = tests / "test_indexing.py"
    text = indexing.read_text()
    old = re.compile(r"@pytest\.fixture\nasync def store\(\)[^\n]*:\n"
                     r"    return StorePath\(await MemoryStore\.open\(\)\)\n")
    text, count = old.subn("@pytest.fixture\ndef store() -> StorePath:\n    return StorePath(MemoryStore())\n", text)
    if count != 1:
        sys.exit(f"build: the async store fixture of {indexing} was not found")
    indexing.write_text(text)


def public_exports(out: Path) -> dict[str, list[str]]:
    """zarr.storage's and zarr.codecs's __all__, read from zarr-python's source (facts, not code)."""
    import ast
    result = {}
    for package in ("storage", "codecs", ""):
        init = out / "zarr-python-exports" / "zarr" / package / "__init__.py"
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
                result["zarr." + package if package else "zarr"] = list(ast.literal_eval(node.value))
    return result


# What the names table says beyond present/absent: how a name differs, or why it is absent.
NOTES = {
    "AsyncArray": "absent: the async API is not provided (the GIL is released while zarrpp works)",
    "AsyncGroup": "absent: the async API is not provided",
    "copy": "absent: zarr-python 3 raises NotImplementedError for it too; use zarrpp.copy_array",
    "copy_all": "absent: zarr-python 3 raises NotImplementedError for it too",
    "copy_store": "absent: zarr-python 3 raises NotImplementedError for it too",
    "print_debug_info": "absent: zarrpp.__version__ and the CLI's --version say what is installed",
    "FsspecStore": "absent: s3:// and http(s):// URLs are built in; other fsspec schemes are refused",
    "ObjectStore": "absent: obstore is not in Debian",
    "GpuMemoryStore": "absent: no GPU support",
    "LoggingStore": "absent",
    "WrapperStore": "absent: wrap stores in C++ (zarrpp::StoreWrapper)",
    "ManagedMemoryStore": "differs: memory://name URLs give a process-wide named MemoryStore",
    "ZipStore": "differs: changes are staged and the archive written anew at close()",
    "from_dict": "differs: the document is validated and written (a zarrpp array lives in its store)",
    "from_array": "same; with overwrite=True a destination overlapping the source is refused",
    "create_hierarchy": "differs: takes documents (dicts, a node's metadata or objects with to_dict())",
    "consolidate_metadata": "same; zarrpp keeps it current with every later change",
    "open_consolidated": "differs: zarrpp still reads each node's own documents (never stale)",
    "tree": "differs: plain text (no rich)",
    "info_complete": "same (a table of text)",
    "config": "same keys; order, write_empty_chunks act; read_missing_chunks=False refused",
    "with_config": "same",
    "async_array": "absent: the async API is not provided",
    "move": "absent",
    "update_attributes_async": "absent: the async API is not provided",
    "create": "same",
    "synchronizer": "same: None (zarrpp's writes need no synchronizer)",
    "CastValue": "absent: an experimental codec new in zarr-python 3.3",
    "ScaleOffset": "absent: an experimental codec new in zarr-python 3.3",
    "SubchunkWriteOrder": "absent: zarrpp writes a shard's chunks in its own order",
    "ShardingCodecIndexLocation": "same; zarrpp writes the index at the end only",
    "get_array": "same", "get_group": "same",
}


def _class_names(source: str, cls: str) -> list[str]:
    start = re.search(r"^class " + cls + r"\b.*$", source, re.M)
    if start is None:
        return []
    rest = source[start.end():]
    end = re.search(r"^(class|def|async def) ", rest, re.M)
    body = rest[:end.start() if end else len(rest)]
    names = set(re.findall(r"^    (?:async )?def ([a-z]\w*)", body, re.M))
    names |= set(re.findall(r"^    ([a-z]\w*): ", body, re.M))
    return sorted(names)


def public_names(out: Path) -> dict[str, list[str]]:
    """zarr-python's public names, by where they live: the package, zarr.storage, zarr.codecs,
    zarr.errors, and the methods and properties of Array and Group."""
    src = out / "zarr-python-exports" / "zarr"
    exports = json.loads((out / "exports.json").read_text())
    errors = re.findall(r"^class (\w+)\(", (src / "errors.py").read_text(), re.M)
    return {"zarr": exports["zarr"], "zarr.storage": exports["zarr.storage"],
            "zarr.codecs": exports["zarr.codecs"], "zarr.errors": errors,
            "zarr.Array": _class_names((src / "core" / "array.py").read_text(), "Array"),
            "zarr.Group": _class_names((src / "core" / "group.py").read_text(), "Group")}


def _backing_test(where: str, name: str, tests: dict[str, str]) -> str:
    """The first project test using the name: the zarr-python 3 API tests first; a module-level
    name must be spelled zarr.NAME / zarrpp.NAME (so dask's from_array does not count)."""
    used = (r"\b(zarr|zarrpp)\." if where == "zarr" else r"[.\s(]") + re.escape(name) + r"\b"
    for file, text in sorted(tests.items(), key=lambda kv: (kv[0] != "test_zarr3_api.py", kv[0])):
        for m in re.finditer(r"^def (test_\w+)\(.*?(?=^def |\Z)", text, re.M | re.S):
            if re.search(used, m.group(0)):
                return f"`{file}::{m.group(1)}`"
    return "—"


def names_table(out: Path) -> str:
    """The compatibility table docs/guide/python.md shows: every zarr-python 3 public name, whether
    zarrpp has it (and how it differs, or why not), and a project test that uses it."""
    import zarrpp
    objects = {"zarr": zarrpp, "zarr.storage": zarrpp.storage, "zarr.codecs": zarrpp.codecs,
               "zarr.errors": zarrpp.errors, "zarr.Array": zarrpp.Array, "zarr.Group": zarrpp.Group}
    tests = {p.name: p.read_text() for p in (HERE.parent / "python" / "tests").glob("test_*.py")}
    rows = ["| name | zarrpp | test |", "| --- | --- | --- |"]
    for where, names in public_names(out).items():
        for name in names:
            present = hasattr(objects[where], name)
            note = NOTES.get(name, "same" if present else "absent")
            if present and note.startswith("absent"):
                note = "same"
            label = f"`{where}.{name}`" if where != "zarr" else f"`zarr.{name}`"
            rows.append(f"| {label} | {note} | {_backing_test(where, name, tests) if present else '—'} |")
    return "\n".join(rows)


def build(git_dir: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    extract(git_dir, out)
    adapt(out)
    (out / "exports.json").write_text(json.dumps(public_exports(out), indent=1))
    shim = out / "shim"
    if shim.exists():
        shutil.rmtree(shim)
    shutil.copytree(SUPPORT / "shim", shim)
    shutil.copy(SUPPORT / "zp3_plugin.py", shim / "zp3_plugin.py")
    shutil.copy(SUPPORT / "run_guide.py", out / "run_guide.py")
    (out / "zarr-python" / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nfilterwarnings =\n    default\n")
    print(f"build: harness at {out} (zarr-python {COMMIT[:10]})")


def run(out: Path, zarrpp_python: Path, files: list[str], guide: bool) -> int:
    env = dict(os.environ, PYTHONPATH=f"{out / 'shim'}:{zarrpp_python}", ZP3_HARNESS=str(out),
               ZP3_RESULTS=str(out / "results.json"), PYTHONDONTWRITEBYTECODE="1")
    py = "/usr/bin/python3"
    rc = 0
    if files:
        cmd = [py, "-m", "pytest", "-p", "zp3_plugin", "-p", "no:cacheprovider", "-q", "--tb=no", *files]
        rc = subprocess.run(cmd, cwd=out / "zarr-python", env=env).returncode
    if guide:
        cmd = [py, str(out / "run_guide.py"), str(out / "zarr-python" / "docs" / "user-guide"), *GUIDE_PAGES]
        rc = subprocess.run(cmd, env=env).returncode or rc
    return rc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("git_dir", type=Path)
    b.add_argument("harness", type=Path)
    r = sub.add_parser("run")
    r.add_argument("harness", type=Path)
    r.add_argument("zarrpp_python", type=Path)
    r.add_argument("--tests", nargs="*", default=TEST_FILES)
    r.add_argument("--no-guide", action="store_true")
    n = sub.add_parser("names", help="print docs/guide/python.md's table of zarr-python 3's public names")
    n.add_argument("harness", type=Path)
    args = parser.parse_args()
    if args.command == "build":
        build(args.git_dir.resolve(), args.harness.resolve())
        return 0
    if args.command == "names":
        print(names_table(args.harness.resolve()))
        return 0
    return run(args.harness.resolve(), args.zarrpp_python.resolve(), args.tests, not args.no_guide)


if __name__ == "__main__":
    sys.exit(main())
