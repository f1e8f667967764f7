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
                          "src/zarr/storage/__init__.py", "src/zarr/codecs/__init__.py", "src/zarr/__init__.py"],
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
    args = parser.parse_args()
    if args.command == "build":
        build(args.git_dir.resolve(), args.harness.resolve())
        return 0
    return run(args.harness.resolve(), args.zarrpp_python.resolve(), args.tests, not args.no_guide)


if __name__ == "__main__":
    sys.exit(main())
