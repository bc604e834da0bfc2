"""Builds the `ffijit` Python package with the project's own CMake build (pyproject.toml).

`pip install --no-build-isolation .` and `python -m build --wheel --no-isolation` run this: the
build_ext step configures and builds the extension `ffijit._core` and the libraries it loads, and
installs CMake's `ffijit_wheel` component (python/CMakeLists.txt) into the wheel: the package
folder holding the extension, the pure-Python files, the headers and libffijit_{runtime,reflect,
jit}.so, found through their $ORIGIN rpath (with LLVM, also libffijit_jit's plugin
libffijit_orc.so, which it loads from its own folder on the first compile). The version is CMakeLists.txt's project() version.

Environment:
  FFIJIT_CMAKE_BUILD_DIR  the CMake build folder to use (default: build/python-wheel in the
                          checkout). One that is already configured is built and used as it is,
                          whatever its options, so CI packages the build its tests ran on.
  FFIJIT_CMAKE_ARGS       extra configure arguments (shell words) for a folder configured here.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as cmake_lists:
        found = re.search(r"^project\(ffijit VERSION ([0-9][0-9.]*)", cmake_lists.read(), re.M)
    if found is None:
        raise RuntimeError("CMakeLists.txt has no `project(ffijit VERSION x.y.z` line")
    return found.group(1)


def run(command):
    print("setup.py:", " ".join(shlex.quote(word) for word in command), flush=True)
    subprocess.run(command, check=True)


class CMakeBuild(build_ext):
    """Builds the package with CMake and copies CMake's wheel layout into the build folder."""

    def run(self):
        if self.inplace:
            raise RuntimeError("ffijit builds with CMake: an in-place build is "
                               "`cmake --build <build> --target ffijit_python` (the package is "
                               "then <build>/python/ffijit)")
        build_dir = os.path.abspath(os.environ.get("FFIJIT_CMAKE_BUILD_DIR") or
                                    os.path.join(ROOT, "build", "python-wheel"))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            run(["cmake", "-S", ROOT, "-B", build_dir, *generator,
                 "-DCMAKE_BUILD_TYPE=Release", "-DFFIJIT_ENABLE_JIT=ON",
                 "-DFFIJIT_BUILD_PYTHON=ON", "-DFFIJIT_BUILD_TESTS=OFF",
                 "-DFFIJIT_BUILD_BENCH=OFF", "-DFFIJIT_BUILD_EXAMPLES=OFF",
                 f"-DFFIJIT_PYTHON={sys.executable}",
                 *shlex.split(os.environ.get("FFIJIT_CMAKE_ARGS", ""))])
        run(["cmake", "--build", build_dir, "--target", "ffijit_python"])
        staging = os.path.abspath(os.path.join(self.build_temp, "cmake-install"))
        shutil.rmtree(staging, ignore_errors=True)
        run(["cmake", "--install", build_dir, "--component", "ffijit_wheel", "--prefix", staging,
             "--strip"])
        package = os.path.join(staging, "ffijit")
        extension = "_core" + sysconfig.get_config_var("EXT_SUFFIX")
        if not os.path.exists(os.path.join(package, extension)):
            built = sorted(name for name in os.listdir(package) if name.startswith("_core"))
            raise RuntimeError(f"the CMake build in {build_dir} made {built} for another Python; "
                               f"this one ({sys.executable}) loads {extension}: configure it with "
                               f"-DFFIJIT_PYTHON={sys.executable}, or use another build folder")
        # build_py has put the Python files there; anything else an earlier build left (another
        # extension, a removed header) goes, so the wheel holds exactly this build.
        target = os.path.join(self.build_lib, "ffijit")
        fresh = set(os.listdir(package)) | set(os.listdir(os.path.join(ROOT, "python", "ffijit")))
        for name in os.listdir(target) if os.path.isdir(target) else []:
            path = os.path.join(target, name)
            if name not in fresh or os.path.isdir(path):
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        shutil.copytree(package, target, dirs_exist_ok=True)

    def get_outputs(self):
        return []


setup(
    version=project_version(),
    packages=["ffijit"],
    package_dir={"": "python"},
    package_data={"ffijit": ["*.pyi", "py.typed"]},
    # The extension is CMake's: declared so that the wheel is tagged for this interpreter and
    # platform, built by CMakeBuild.
    ext_modules=[Extension("ffijit._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
