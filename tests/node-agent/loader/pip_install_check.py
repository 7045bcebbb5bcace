"""`pip install ./python` into a fresh venv, as a user would, then a load from outside the tree.

CTest runs this (node_agent_loader_pip_install) with MODELPLANE_LOADER_LIBRARY naming the
library the build made, so setup.py copies it instead of compiling it a second time. The venv's
Python runs in a temporary folder with MODELPLANE_LOADER_LIBRARY and PYTHONPATH unset: the
package and its library must both come from the venv.

Usage: python3 pip_install_check.py REPOSITORY_ROOT
Exit 0 on success, 77 (SKIPPED) when no venv with a working pip can be made here or PyPI (the
build backend, numpy) cannot be reached, 1 on any failure of the package itself.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

SKIPPED = 77
# What pip prints when it cannot reach an index; anything else is the package's fault.
UNREACHABLE = re.compile(
    r"NewConnectionError|Network is unreachable|Temporary failure in name resolution|"
    r"Name or service not known|Connection refused|ProxyError|"
    r"No matching distribution found for (setuptools|numpy)"
)

# Runs in the venv: prints the version and what the load returned, checked by the caller.
PROBE = r"""
import importlib.metadata, json, sys
import modelplane_loader
tensors = modelplane_loader.load(sys.argv[1])
print(json.dumps({
    "version": modelplane_loader.__version__,
    "installed_version": importlib.metadata.version("modelplane-loader"),
    "module": modelplane_loader.__file__,
    "library": modelplane_loader.library_path(),
    "tensors": {name: {"dtype": str(array.dtype), "shape": list(array.shape),
                       "values": array.ravel().tolist()} for name, array in tensors.items()},
    "bytes_read": tensors.stats["bytes_read"],
}))
"""


def skip(reason: str) -> None:
    print(f"SKIPPED: {reason}")
    sys.exit(SKIPPED)


def fail(reason: str) -> None:
    print(f"FAILED: {reason}")
    sys.exit(1)


def write_checkpoint(path: Path) -> dict:
    """Two tensors in the safetensors layout (8-byte header length, JSON header, data)."""
    weight = [0.5 * i - 1.0 for i in range(6)]  # F32 [2, 3]
    steps = [-3, 0, 1 << 40]  # I64 [3]
    data = struct.pack("<6f", *weight) + struct.pack("<3q", *steps)
    header = json.dumps({
        "layer.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "layer.steps": {"dtype": "I64", "shape": [3], "data_offsets": [24, 48]},
    }).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return {
        "layer.weight": {"dtype": "float32", "shape": [2, 3], "values": weight},
        "layer.steps": {"dtype": "int64", "shape": [3], "values": steps},
    }


def declared_version(repository: Path) -> str:
    source = (repository / "python" / "modelplane_loader" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"$', source, re.MULTILINE)
    if not match:
        fail("no __version__ in python/modelplane_loader/__init__.py")
    return match.group(1)


def main() -> None:
    repository = Path(sys.argv[1]).resolve()
    library = os.environ.get("MODELPLANE_LOADER_LIBRARY", "")
    if not Path(library).is_file():
        fail(f"MODELPLANE_LOADER_LIBRARY={library!r} is not a built library")
    with tempfile.TemporaryDirectory(prefix="modelplane-pip-") as scratch_name:
        scratch = Path(scratch_name)
        venv = scratch / "venv"
        made = subprocess.run([sys.executable, "-m", "venv", str(venv)],
                              capture_output=True, text=True)
        python = venv / "bin" / "python"
        if made.returncode != 0 or not python.is_file():
            skip(f"{sys.executable} -m venv failed (python3-venv missing?): "
                 f"{made.stderr.strip()[-300:]}")
        if subprocess.run([str(python), "-m", "pip", "--version"],
                          capture_output=True).returncode != 0:
            skip(f"the venv made by {sys.executable} has no working pip")

        # The package sources as they are in the tree, copied so that setuptools' in-place
        # build folders (python/build, *.egg-info) land in the scratch folder, not in the
        # repository that parallel builds and other checkouts share.
        source = scratch / "src" / "python"
        shutil.copytree(repository / "python", source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        # Short network timeouts: an unreachable index must end in SKIPPED within the CTest
        # timeout, not in a timeout.
        environment = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1",
                           PIP_ROOT_USER_ACTION="ignore", PIP_RETRIES="1",
                           PIP_TIMEOUT="20", PIP_DEFAULT_TIMEOUT="20")
        environment.pop("PYTHONPATH", None)
        installed = subprocess.run([str(python), "-m", "pip", "install", str(source)],
                                   cwd=scratch, env=environment, capture_output=True, text=True)
        output = installed.stdout + installed.stderr
        if installed.returncode != 0:
            if UNREACHABLE.search(output):
                skip(f"pip could not reach the package index for the build backend or numpy:\n"
                     f"{output[-1500:]}")
            fail(f"pip install {source} exited {installed.returncode}:\n{output[-4000:]}")

        checkpoint = scratch / "model.safetensors"
        expected = write_checkpoint(checkpoint)
        probe_environment = {key: value for key, value in environment.items()
                             if key not in ("MODELPLANE_LOADER_LIBRARY", "PYTHONPATH")}
        probe = subprocess.run([str(python), "-c", PROBE, str(checkpoint)], cwd=scratch,
                               env=probe_environment, capture_output=True, text=True)
        if probe.returncode != 0:
            fail(f"the installed package did not load the checkpoint:\n{probe.stderr[-4000:]}")
        result = json.loads(probe.stdout)
        print(f"modelplane_loader {result['version']} from {result['module']}")

        want_version = declared_version(repository)
        site_packages = venv / "lib"
        problems = []
        if result["version"] != want_version or result["installed_version"] != want_version:
            problems.append(f"__version__ {result['version']}, installed metadata "
                            f"{result['installed_version']}, the source says {want_version}")
        for what in ("module", "library"):
            if not Path(result[what]).resolve().is_relative_to(site_packages.resolve()):
                problems.append(f"{what} {result[what]} is not inside the venv")
        if result["tensors"] != expected:
            problems.append(f"tensors {result['tensors']}, expected {expected}")
        if result["bytes_read"] < 48:
            problems.append(f"bytes_read {result['bytes_read']} < the 48 data bytes")
        if problems:
            fail("; ".join(problems))
        print("ok: installed, imported outside the repository, loaded 2 tensors")


if __name__ == "__main__":
    main()
