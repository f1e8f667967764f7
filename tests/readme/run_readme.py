#!/usr/bin/env python3
"""Runs the README's examples exactly as written (ctest's install.readme_examples).

Every block marked ``<!-- readme-test: NAME -->`` in README.md is taken from the README itself:

- cpp-main: the C++ quickstart; it must equal examples/quickstart.cpp (the program the build
  compiles), and is built against an installed prefix with the README's own CMakeLists.txt
  (cmake-consumer) and commands (sh-consumer), with $HOME pointing where the prefix was installed,
  then run twice (a second run must work too);
- sh-cli: the command-line session, run top to bottom with the *installed* CLI on PATH (so the
  installed binary must find its library by itself), then the array it leaves is checked element
  by element;
- python-quickstart: run by a venv that installed the package the way the README says.

Usage: run_readme.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def expected_outputs(readme: str, b: dict) -> tuple:
    """What the README says the quickstarts print: "It prints `...`" after the C++ program, and the
    comment after the Python quickstart's print()."""
    text = open(readme, encoding="utf-8").read()
    cpp = re.search(r"readme-test: cpp-main -->\n```cpp\n.*?```\n\nIt prints `([^`]+)`", text, re.S)
    py = re.search(r"^print\(.*\)\s+# (.+)$", b["python-quickstart"], re.M)
    if not cpp or not py:
        sys.exit("README.md: cannot find what the quickstarts print ('It prints `...`', '# ...' after print())")
    return cpp.group(1), py.group(1).strip()


def blocks(readme: str) -> dict:
    text = open(readme, encoding="utf-8").read()
    found = {}
    for m in re.finditer(r"<!-- readme-test: ([a-z0-9-]+) -->\n```[a-z]*\n(.*?)```", text, re.S):
        if m.group(1) in found:
            sys.exit(f"README.md: two blocks are marked readme-test: {m.group(1)}")
        found[m.group(1)] = m.group(2)
    for name in ("cpp-main", "cmake-consumer", "sh-consumer", "sh-cli", "python-quickstart"):
        if name not in found:
            sys.exit(f"README.md: no block marked readme-test: {name}")
    return found


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {cmd}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}")
    return r.stdout


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "CMAKE_PREFIX_PATH")}
    env.update(extra)
    return env


def main() -> None:
    src, build = sys.argv[1], sys.argv[2]
    b = blocks(os.path.join(src, "README.md"))
    expected_cpp, expected_py = expected_outputs(os.path.join(src, "README.md"), b)
    quickstart = open(os.path.join(src, "examples", "quickstart.cpp"), encoding="utf-8").read()
    if quickstart != b["cpp-main"]:
        sys.exit("README.md's C++ quickstart differs from examples/quickstart.cpp: make them the same")
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        prefix = os.path.join(home, ".local")  # the README installs into $HOME/.local
        run(["cmake", "--install", build, "--prefix", prefix])
        env = clean_env(HOME=home)

        # The installed CLI starts by itself (its RUNPATH finds the installed library).
        out = run([os.path.join(prefix, "bin", "zarrpp"), "--version"], env=env)
        dyn = run(["readelf", "-d", os.path.join(prefix, "bin", "zarrpp")])
        if "$ORIGIN/../lib" not in dyn:
            sys.exit(f"the installed CLI has no RUNPATH to its library:\n{dyn}")
        print("installed CLI:", out.strip())

        # The C++ quickstart, built as the README says, from the prefix.
        app = os.path.join(tmp, "app")
        os.makedirs(app)
        open(os.path.join(app, "main.cpp"), "w").write(b["cpp-main"])
        open(os.path.join(app, "CMakeLists.txt"), "w").write(b["cmake-consumer"])
        out = run(["bash", "-euo", "pipefail", "-c", b["sh-consumer"]], cwd=app, env=env)
        if out.strip().splitlines()[-1:] != [expected_cpp]:
            sys.exit(f"the C++ quickstart printed {out!r}, the README says {expected_cpp!r}")
        out = run([os.path.join(app, "build", "app")], cwd=app, env=env)
        if out.strip() != expected_cpp:
            sys.exit(f"the C++ quickstart run a second time printed {out!r}")
        print("C++ quickstart: built from the prefix with the README's CMake lines, ran twice")

        # The CLI session, with the installed zarrpp first on PATH and Debian's python3 (NumPy).
        cli = os.path.join(tmp, "cli")
        os.makedirs(cli)
        path = os.path.join(prefix, "bin") + ":/usr/bin:/bin"
        run(["bash", "-euo", "pipefail", "-c", b["sh-cli"]], cwd=cli, env=dict(env, PATH=path))
        whole = os.path.join(cli, "whole.npy")
        run([os.path.join(prefix, "bin", "zarrpp"), "get", os.path.join(cli, "data.zarr"), "--out", whole], env=env)
        want = np.zeros((11, 6), dtype="int32")
        want[2:5, :4] = 2       # the prepended rows
        want[5:, :4] = 1        # the first six rows, all ones
        want[2:, 4:] = 3        # the appended columns, kept by the resize
        want[2:5, ::2] = 7      # set "0:3, ::2" (zero-based, before the resize)
        got = np.load(whole)
        if not np.array_equal(got, want):
            sys.exit(f"the README's CLI session left\n{got}\nexpected\n{want}")
        part = np.load(os.path.join(cli, "part.npy"))
        if part.shape != (3, 3) or not (part == 7).all():
            sys.exit(f"the README's 'get ... --out part.npy' wrote {part!r}")
        print("CLI session: ran top to bottom with the installed CLI; the array holds what it says")

        # The Python quickstart, in a venv that installed the package as the README says (reusing
        # this build's module, as the Python tests do).
        venv = os.path.join(tmp, "venv")
        run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
        try:
            run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index", "--no-deps", "-q",
                 src], env=dict(env, ZARRPP_CMAKE_BUILD_DIR=build))
        finally:
            shutil.rmtree(os.path.join(src, "python", "zarrpp.egg-info"), ignore_errors=True)
        out = run([os.path.join(venv, "bin", "python"), "-c", b["python-quickstart"]], cwd=tmp, env=env)
        if out.strip() != expected_py:
            sys.exit(f"the Python quickstart printed {out!r}, the README says {expected_py!r}")
        print("Python quickstart: ran from an installed package")


if __name__ == "__main__":
    main()
