"""Puts libmodelplane_loader.so into the modelplane_loader wheel (the rest is in pyproject.toml).

The library is MODELPLANE_LOADER_LIBRARY when that names an already-built one (copied as is),
else it is built from this repository: the top-level CMake project configured without tests
and benchmarks (it has no narrower option; configuring still finds every dependency of the
tree, see docs/dependencies.md) and only the modelplane_loader target built, in a build folder
under setuptools' build temp, which a later `pip install ./python` reuses.

The wheel holds a native library and no Python extension: it is tagged py3-none-<platform>.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
except ImportError:  # pragma: no cover  (older setuptools with the wheel package)
    from wheel.bdist_wheel import bdist_wheel

LIBRARY_NAME = "libmodelplane_loader.so"
PACKAGE = "modelplane_loader"
REPOSITORY = Path(__file__).resolve().parent.parent


def _run(command: list) -> None:
    print("modelplane_loader: " + " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True)


def _build_library(build_dir: Path) -> Path:
    if not (REPOSITORY / "node-agent" / "loader" / "CMakeLists.txt").is_file():
        raise SystemExit(
            f"modelplane_loader: {REPOSITORY} is not the modelplane repository, so the loader "
            f"cannot be built here: set MODELPLANE_LOADER_LIBRARY to a built {LIBRARY_NAME}"
        )
    if shutil.which("cmake") is None:
        raise SystemExit("modelplane_loader: cmake not found (scripts/setup.sh installs it)")
    if not (build_dir / "CMakeCache.txt").is_file():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", str(REPOSITORY), "-B", str(build_dir), *generator,
              "-DCMAKE_BUILD_TYPE=Release", "-DMODELPLANE_BUILD_TESTS=OFF",
              "-DMODELPLANE_BUILD_BENCH=OFF"])
    # CMAKE_BUILD_PARALLEL_LEVEL, when set, bounds the jobs (cmake --build reads it).
    _run(["cmake", "--build", str(build_dir), "--target", "modelplane_loader"])
    return build_dir / "node-agent" / "loader" / LIBRARY_NAME


class BuildPyWithLibrary(build_py):
    """build_py, then the shared library beside the package's __init__.py."""

    def run(self):
        super().run()
        prebuilt = os.environ.get("MODELPLANE_LOADER_LIBRARY")
        if prebuilt:
            library = Path(prebuilt)
            if not library.is_file():
                raise SystemExit(
                    f"modelplane_loader: MODELPLANE_LOADER_LIBRARY={prebuilt}: no such file")
            print(f"modelplane_loader: bundling {library} (MODELPLANE_LOADER_LIBRARY)",
                  file=sys.stderr)
        else:
            build_temp = Path(self.get_finalized_command("build").build_temp).resolve()
            library = _build_library(build_temp / "cmake")
        target = Path(self.build_lib) / PACKAGE / LIBRARY_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library, target)
        target.chmod(0o755)


class NativeDistribution(Distribution):
    """Not pure Python: the package goes to platlib and the wheel is platform-specific."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Tagged py3-none-<platform>: any Python 3 can load the .so (ctypes, no Python ABI)."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=NativeDistribution,
      cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
