"""Builds the Python module kalah for `pip install .` (pyproject.toml) with the project's
own CMake build, target kalah_python (api/CMakeLists.txt), rather than a second list of
sources and flags here: one build, one place.

Environment: KALAH_CMAKE_BUILD_DIR, an existing CMake build directory to build the target
in (configured when it is not yet); otherwise a fresh one under setuptools' build_temp.
KALAH_CMAKE_ARGS, extra arguments to CMake's configure step (as scripts/setup.sh takes)."""

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    """CMakeLists.txt's project(kalah VERSION x.y.z): the one version of every part."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"project\(kalah VERSION ([0-9]+\.[0-9]+\.[0-9]+)", f.read())
    if not m:
        raise RuntimeError("CMakeLists.txt: no project(kalah VERSION x.y.z)")
    return m.group(1)


class CMakeBuild(build_ext):
    """Configures (if needed) and builds the target kalah_python, then copies the module
    where setuptools expects the extension."""

    def build_extension(self, ext):
        build_dir = os.environ.get("KALAH_CMAKE_BUILD_DIR") or os.path.join(
            os.path.abspath(self.build_temp), "cmake")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            # Only what the module needs: no benchmarks, no web service, no sanitizers.
            args = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                    "-DKALAH_BUILD_BENCH=OFF", "-DKALAH_SERVE=OFF", "-DKALAH_PYTHON=ON",
                    "-DPYTHON_EXECUTABLE=" + sys.executable]
            args += shlex.split(os.environ.get("KALAH_CMAKE_ARGS", ""))
            subprocess.run(args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", build_dir, "--target", "kalah_python", "-j", jobs],
                       check=True)
        built = glob.glob(os.path.join(build_dir, "python", "kalah", "_kalah*.so"))
        if len(built) != 1:
            raise RuntimeError("CMake built {} modules in {}/python/kalah, expected one "
                               "(pybind11-dev and python3-dev installed?)".format(
                                   len(built), build_dir))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


# setuptools' own build tree (and its egg-info): beside the CMake build it uses when KALAH_CMAKE_BUILD_DIR is
# given (so that two such builds do not share one), else in build-pip/, not in build/ (the
# README's CMake build).
build_base = os.path.join(os.environ["KALAH_CMAKE_BUILD_DIR"], "pip-build") if os.environ.get(
    "KALAH_CMAKE_BUILD_DIR") else "build-pip"
os.makedirs(build_base, exist_ok=True)
setup(version=version(), ext_modules=[Extension("kalah._kalah", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": build_base}, "egg_info": {"egg_base": build_base}})
