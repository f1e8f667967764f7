"""Builds zarrpp's Python extension with the project's CMake (see pyproject.toml).

The version is the one CMakeLists.txt's project() states, the single place it is written (C++,
the CLI and `zarrpp.__version__` take it from there too).

Environment:
  ZARRPP_CMAKE_BUILD_DIR  reuse an already configured CMake build tree (e.g. build/release): only
                          its zarrpp_python target is brought up to date and its module copied.
                          For the test suite; such a module may link the build tree's libzarrpp.
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: all cores).
Otherwise the extension is built in build/pip (kept between installs, so a reinstall is
incremental) with libzarrpp linked in statically, so the installed package stands alone.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    m = re.search(r"project\(zarrpp VERSION ([0-9.]+)", text)
    if not m:
        raise RuntimeError("CMakeLists.txt: project(zarrpp VERSION x.y.z) not found")
    return m.group(1)


def terminal():
    """The user's terminal when pip hides this build's output (it does unless -v), else None."""
    if sys.stdout.isatty() or os.environ.get("ZARRPP_NO_PROGRESS", "0") not in ("", "0"):
        return None
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None


def build_with_progress(cmd):
    """Runs the build, its output passed on (pip shows it with -v, or when the build fails); the
    compile steps ("[12/51]") are also shown on the terminal as one line pip cannot hide, since the
    first build takes minutes."""
    tty = terminal()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    step = re.compile(r"^\[\s*(\d+)/(\d+)\]|^\[\s*(\d+)%\]")
    for line in proc.stdout:
        sys.stdout.write(line)
        m = step.match(line)
        if tty and m:
            done = f"{m.group(1)}/{m.group(2)} steps" if m.group(1) else f"{m.group(3)}%"
            tty.write(f"\r  zarrpp: compiling the extension, {done}   ")
            tty.flush()
    sys.stdout.flush()
    if tty:
        tty.write("\n")
        tty.close()
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = os.path.abspath(self.get_ext_fullpath(ext.name))
        build_dir = os.environ.get("ZARRPP_CMAKE_BUILD_DIR")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
                raise RuntimeError(f"ZARRPP_CMAKE_BUILD_DIR={build_dir} is not a configured CMake build tree")
        else:
            build_dir = os.path.join(ROOT, "build", "pip")
            subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                            "-DBUILD_SHARED_LIBS=OFF", "-DZARRPP_BUILD_TESTS=OFF", "-DZARRPP_BUILD_TOOLS=OFF",
                            "-DZARRPP_BUILD_BENCH=OFF", "-DZARRPP_BUILD_PYTHON=ON",
                            f"-DPython3_EXECUTABLE={sys.executable}"]
                           + (["-G", "Ninja"] if shutil.which("ninja")
                              and not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")) else []),
                           check=True)
        build_with_progress(["cmake", "--build", build_dir, "--target", "zarrpp_python", "-j", jobs])
        built = glob.glob(os.path.join(build_dir, "python", "zarrpp", "_zarrpp*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _zarrpp module under {build_dir}/python/zarrpp, found {built}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(version=version(), ext_modules=[Extension("zarrpp._zarrpp", sources=[])], cmdclass={"build_ext": CMakeBuild})
