"""The package as pip installs it (python/README.md's install command; ctest runs this suite in a
fresh venv with the package pip-installed, see run_in_venv.sh)."""
import importlib.metadata
import os
import subprocess
import sys
import zipfile

import pytest

import zarrpp

SRC = os.environ.get("ZARRPP_SOURCE_DIR", os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..")))
VENV = os.environ.get("ZARRPP_TEST_VENV")
BUILD = os.environ.get("ZARRPP_INSTALL_TEST_BUILD_DIR")
needs_venv = pytest.mark.skipif(VENV is None,
                                reason="run by ctest (run_in_venv.sh), which installs the package into a venv")


@needs_venv
def test_the_suite_runs_against_the_pip_installed_package():
    assert os.path.realpath(zarrpp.__file__).startswith(os.path.realpath(VENV)), zarrpp.__file__
    assert importlib.metadata.version("zarrpp") == zarrpp.__version__
    listed = subprocess.run([os.path.join(VENV, "bin", "pip"), "list"], capture_output=True, text=True,
                            check=True).stdout
    assert any(line.split()[:2] == ["zarrpp", zarrpp.__version__] for line in listed.splitlines())


def test_version_comes_from_cmakelists():
    import re
    text = open(os.path.join(SRC, "CMakeLists.txt")).read()
    assert re.search(r"project\(zarrpp VERSION ([0-9.]+)", text).group(1) == zarrpp.__version__


def test_typing_files_ship_and_stubs_match_the_extension():
    pkg = os.path.dirname(zarrpp.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    assert os.path.exists(os.path.join(pkg, "_zarrpp.pyi"))
    r = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "gen_python_stubs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_upstream_example_runs_from_the_installed_package(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(SRC, "python", "examples", "upstream_example.py")],
                       capture_output=True, text=True, cwd=tmp_path,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH" or not VENV})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["(9, 4)", "((-3, 6), (0, 4))"]


@needs_venv
@pytest.mark.skipif(BUILD is None, reason="needs the CMake build tree to reuse")
def test_pip_wheel_and_uninstall(tmp_path):
    env = dict(os.environ, ZARRPP_CMAKE_BUILD_DIR=BUILD)
    env.pop("PYTHONPATH", None)
    pip = os.path.join(VENV, "bin", "pip")
    # python/README.md's command as written (plus -q): offline, so any index it tried would fail.
    env.update(PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_FIND_LINKS="", PIP_RETRIES="0", PIP_TIMEOUT="2")
    subprocess.run([pip, "wheel", "--no-build-isolation", "--no-deps", "-w", str(tmp_path / "dist"), SRC, "-q"],
                   check=True, env=env, capture_output=True)
    wheels = os.listdir(tmp_path / "dist")
    assert len(wheels) == 1 and wheels[0].startswith(f"zarrpp-{zarrpp.__version__}-"), wheels
    names = zipfile.ZipFile(tmp_path / "dist" / wheels[0]).namelist()
    for f in ("zarrpp/__init__.py", "zarrpp/py.typed", "zarrpp/_zarrpp.pyi"):
        assert f in names
    assert any(n.startswith("zarrpp/_zarrpp.") and n.endswith(".so") for n in names)
    # A second venv: install the wheel, then pip uninstall removes the package again.
    v2 = tmp_path / "v2"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(v2)], check=True)
    subprocess.run([str(v2 / "bin" / "pip"), "install", "--no-index", "--no-deps", "-q",
                    str(tmp_path / "dist" / wheels[0])], check=True, env=env)
    probe = [str(v2 / "bin" / "python"), "-c", "import zarrpp, importlib.metadata as m; print(m.version('zarrpp'))"]
    assert subprocess.run(probe, capture_output=True, text=True, cwd=tmp_path,
                          env=env).stdout.strip() == zarrpp.__version__
    subprocess.run([str(v2 / "bin" / "pip"), "uninstall", "-y", "-q", "zarrpp"], check=True, env=env)
    assert subprocess.run(probe, capture_output=True, cwd=tmp_path, env=env).returncode != 0
