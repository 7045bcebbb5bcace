"""modelplane_loader: load safetensors checkpoints with modelplane's streaming loader.

A thin ctypes layer over libmodelplane_loader.so (node-agent/loader/c_api.h):

    import modelplane_loader
    tensors = modelplane_loader.load("/models/llama", device="cpu", rank=0, world_size=2,
                                     rules=["*.q_proj.weight=split:0", "*.o_proj.weight=split:1"])
    tensors["model.embed_tokens.weight"]   # numpy array, a view of the loader's memory
    tensors.stats["bytes_read"]            # what the load did (see docs/loader.md)

Every load is also recorded as Prometheus metrics; `modelplane_loader.metrics.register()` adds
them to prometheus_client's registry (the engine's /metrics).

On CPU the values are numpy arrays that share the loader's memory (no copy); the memory is
freed when the last array goes. On "cuda"/"cuda:N" the values are DLPackTensor objects that
torch.from_dlpack / cupy.from_dlpack / jax.dlpack accept.

dtypes: BF16 and the F8 types come back as ml_dtypes types (bfloat16, float8_e4m3fn,
float8_e5m2, float8_e8m0fnu, float8_e4m3fnuz, float8_e5m2fnuz) when ml_dtypes is installed, else as uint16/uint8 arrays of the
same bits (raw_dtypes=True forces that). F4 and F6 come back as their packed bytes (uint8,
last dimension in bytes), as DLPack has no code for them either.

The library is the one bundled in the installed package (`pip install ./python`, see
docs/loader.md), else MODELPLANE_LOADER_LIBRARY, else the newest
build/*/node-agent/loader/libmodelplane_loader.so of this repository (PYTHONPATH=python).
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

import numpy as np

from . import metrics

__all__ = ["load", "LoadError", "LoadedTensors", "DLPackTensor", "library_path", "metrics", "__version__"]

# The package's one version: pyproject.toml reads it from here (setuptools' attr:, without
# importing the module) and the installed metadata carries it.
__version__ = "0.1.0"

_ABI_VERSION = 2
_LIBRARY_NAME = "libmodelplane_loader.so"


class LoadError(RuntimeError):
    """The load failed; `code` is the core::ErrorCode name ("data_loss", "invalid_argument")."""

    def __init__(self, message: str):
        super().__init__(message)
        self.code = message.split(":", 1)[0]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_char_p),
        ("dtype_bits", ctypes.c_uint32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_uint64),
        ("device_type", ctypes.c_int32),
        ("device_index", ctypes.c_int32),
    ]


def library_path() -> str:
    """Where the shared library is taken from (see the module docstring)."""
    # An installed package carries its own copy (setup.py puts it beside this file); a source
    # checkout on PYTHONPATH has none and uses the build tree's.
    bundled = Path(__file__).resolve().parent / _LIBRARY_NAME
    if bundled.is_file():
        return str(bundled)
    explicit = os.environ.get("MODELPLANE_LOADER_LIBRARY")
    if explicit:
        return explicit
    root = Path(__file__).resolve().parents[2]
    found = glob.glob(str(root / "build" / "*" / "node-agent" / "loader" / _LIBRARY_NAME))
    if not found:
        raise LoadError(
            f"not_found: {_LIBRARY_NAME}: install the package (pip install ./python), set "
            "MODELPLANE_LOADER_LIBRARY or build the modelplane_loader target under build/"
        )
    return max(found, key=os.path.getmtime)


_library = None


def _lib():
    global _library
    if _library is not None:
        return _library
    lib = ctypes.CDLL(library_path())
    lib.mp_loader_abi_version.restype = ctypes.c_uint32
    if lib.mp_loader_abi_version() != _ABI_VERSION:
        raise LoadError(f"internal: {library_path()} has ABI {lib.mp_loader_abi_version()}")
    lib.mp_loader_load.restype = ctypes.c_void_p
    lib.mp_loader_load.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_char_p]
    lib.mp_loader_result_error.restype = ctypes.c_char_p
    lib.mp_loader_result_error.argtypes = [ctypes.c_void_p]
    lib.mp_loader_result_tensor_count.restype = ctypes.c_size_t
    lib.mp_loader_result_tensor_count.argtypes = [ctypes.c_void_p]
    lib.mp_loader_result_tensor.restype = ctypes.c_int32
    lib.mp_loader_result_tensor.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(_Tensor)]
    lib.mp_loader_result_stats_json.restype = ctypes.c_char_p
    lib.mp_loader_result_stats_json.argtypes = [ctypes.c_void_p]
    lib.mp_loader_result_dlpack.restype = ctypes.c_void_p
    lib.mp_loader_result_dlpack.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.mp_loader_result_release.restype = None
    lib.mp_loader_result_release.argtypes = [ctypes.c_void_p]
    lib.mp_loader_metrics_create.restype = ctypes.c_void_p
    lib.mp_loader_metrics_create.argtypes = []
    lib.mp_loader_metrics_destroy.restype = None
    lib.mp_loader_metrics_destroy.argtypes = [ctypes.c_void_p]
    lib.mp_loader_metrics_record.restype = ctypes.c_int32
    lib.mp_loader_metrics_record.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.mp_loader_metrics_text.restype = ctypes.c_void_p  # freed with mp_loader_free
    lib.mp_loader_metrics_text.argtypes = [ctypes.c_void_p]
    lib.mp_loader_free.restype = None
    lib.mp_loader_free.argtypes = [ctypes.c_void_p]
    _library = lib
    return lib


class _Owner:
    """Holds one reference to a C result; arrays keep it alive through their base chain."""

    def __init__(self, lib, handle: int):
        self._lib = lib
        self.handle = handle

    def __del__(self):
        if self.handle:
            self._lib.mp_loader_result_release(self.handle)
            self.handle = 0


class _ArrayView:
    """Exposes a span of the loader's memory to numpy without copying."""

    def __init__(self, owner: _Owner, address: int, shape: tuple, typestr: str):
        self._owner = owner
        self.__array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (address, False),
            "version": 3,
        }


_NATIVE = {
    "BOOL": "|b1",
    "U8": "|u1",
    "I8": "|i1",
    "I16": "<i2",
    "U16": "<u2",
    "F16": "<f2",
    "I32": "<i4",
    "U32": "<u4",
    "F32": "<f4",
    "F64": "<f8",
    "I64": "<i8",
    "U64": "<u8",
    "C64": "<c8",
}
# dtype -> (carrier typestr, ml_dtypes attribute)
_EXTENDED = {
    "BF16": ("<u2", "bfloat16"),
    "F8_E4M3": ("|u1", "float8_e4m3fn"),
    "F8_E5M2": ("|u1", "float8_e5m2"),
    "F8_E8M0": ("|u1", "float8_e8m0fnu"),
    "F8_E4M3FNUZ": ("|u1", "float8_e4m3fnuz"),
    "F8_E5M2FNUZ": ("|u1", "float8_e5m2fnuz"),
}


def _ml_dtypes():
    try:
        import ml_dtypes  # noqa: PLC0415  (optional)
    except ImportError:
        return None
    return ml_dtypes


def _packed_shape(shape: tuple, bits: int, nbytes: int) -> tuple:
    if shape and (shape[-1] * bits) % 8 == 0:
        return shape[:-1] + (shape[-1] * bits // 8,)
    return (nbytes,)


def _to_numpy(owner: _Owner, tensor: _Tensor, raw_dtypes: bool) -> np.ndarray:
    dtype = tensor.dtype.decode()
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if dtype in _NATIVE:
        typestr, extended = _NATIVE[dtype], None
    elif dtype in _EXTENDED:
        typestr, extended = _EXTENDED[dtype]
    else:  # F4, F6_*: packed bytes
        typestr, extended = "|u1", None
        shape = _packed_shape(shape, tensor.dtype_bits, tensor.nbytes)
    if tensor.nbytes == 0 or not tensor.data:
        array = np.empty(shape, dtype=np.dtype(typestr))
    else:
        array = np.asarray(_ArrayView(owner, tensor.data, shape, typestr))
    ml = None if raw_dtypes or extended is None else _ml_dtypes()
    if ml is not None and hasattr(ml, extended):
        array = array.view(getattr(ml, extended))
    return array


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


_pythonapi = ctypes.pythonapi
_pythonapi.PyCapsule_New.restype = ctypes.py_object
_pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
_pythonapi.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@_CapsuleDestructor
def _destroy_capsule(capsule):
    # A consumer renames the capsule "used_dltensor" and owns the tensor; otherwise we free it.
    if _pythonapi.PyCapsule_IsValid(capsule, b"dltensor"):
        pointer = _pythonapi.PyCapsule_GetPointer(capsule, b"dltensor")
        managed = _DLManagedTensor.from_address(pointer)
        managed.deleter(pointer)


class DLPackTensor:
    """One loaded tensor for DLPack consumers (torch.from_dlpack, cupy.from_dlpack, numpy)."""

    def __init__(self, owner: _Owner, index: int, name: str, dtype: str, shape: tuple, device: tuple):
        self._owner = owner
        self._index = index
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self._device = device

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None, **_):
        # The loader synchronised its copy streams before returning: no stream to wait on.
        pointer = _lib().mp_loader_result_dlpack(self._owner.handle, self._index)
        if not pointer:
            raise LoadError(f"internal: no DLPack view of {self.name}")
        return _pythonapi.PyCapsule_New(pointer, b"dltensor", ctypes.cast(_destroy_capsule, ctypes.c_void_p))

    def __repr__(self):
        return f"DLPackTensor({self.name!r}, {self.dtype}, {self.shape}, device={self._device})"


class LoadedTensors(dict):
    """name -> tensor, plus `stats` (the loader's statistics as a dict)."""

    stats: dict


def _rules_text(rules) -> str:
    if rules is None:
        return ""
    if isinstance(rules, str):
        return rules
    if isinstance(rules, Mapping):
        return ";".join(f"{pattern}={action}" for pattern, action in rules.items())
    return ";".join(rules)


def _resolve_revision(path, cache_root) -> Union[str, os.PathLike]:
    """A revision digest becomes the folder view the node agent publishes for it."""
    if not isinstance(path, str) or not path.startswith("sha256:"):
        return path
    digest = path[len("sha256:"):]
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"not a revision digest: {path!r}")
    root = cache_root or os.environ.get("MODELPLANE_CACHE_ROOT") or "/var/lib/modelplane/cache"
    view = os.path.join(os.fspath(root), "models", digest)
    if not os.path.isdir(view):
        raise FileNotFoundError(f"revision {path} is not ready in the cache at {root}")
    return view


def load(
    path: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    device: str = "cpu",
    rank: int = 0,
    world_size: int = 1,
    rules: Union[None, str, Iterable[str], Mapping[str, str]] = None,
    *,
    raw_dtypes: bool = False,
    as_dlpack: bool = False,
    cache_root: Union[None, str, os.PathLike] = None,
    **options,
) -> LoadedTensors:
    """Loads a checkpoint (a .safetensors file, a folder, an index.json, or a list of them), or a
    revision staged by the node agent, named by its digest ("sha256:<hex>", the ModelRevision's
    status.digest): its folder view under the node's cache root (cache_root, else
    $MODELPLANE_CACHE_ROOT, else /var/lib/modelplane/cache).

    rules: "PATTERN=split:DIM", "PATTERN=rank:R" or "PATTERN=replicate" entries (a list, a
    ';'-separated string or {pattern: action}); first match wins, unmatched tensors replicate.
    options: request_bytes, queue_depth, ring_bytes, engine ("auto", "io_uring", "pread"),
    io ("auto", "direct", "buffered"), gds, cuda_streams, coalesce_gap_bytes.
    as_dlpack: return DLPackTensor objects on CPU too (always on CUDA).
    """
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    paths = [_resolve_revision(p, cache_root) for p in paths]
    encoded = [os.fsencode(p) for p in paths]
    array = (ctypes.c_char_p * len(encoded))(*encoded)
    settings = dict(options, device=device, rank=rank, world_size=world_size, rules=_rules_text(rules))
    lib = _lib()
    handle = lib.mp_loader_load(array, len(encoded), json.dumps(settings).encode())
    if not handle:
        raise MemoryError("mp_loader_load")
    owner = _Owner(lib, handle)
    metrics._record(handle)
    error = lib.mp_loader_result_error(handle)
    if error is not None:
        raise LoadError(error.decode())
    result = LoadedTensors()
    result.stats = json.loads(lib.mp_loader_result_stats_json(handle))
    info = _Tensor()
    for index in range(lib.mp_loader_result_tensor_count(handle)):
        lib.mp_loader_result_tensor(handle, index, ctypes.byref(info))
        name = info.name.decode()
        if info.device_type == 2 or (as_dlpack and info.device_type == 1):
            shape = tuple(info.shape[i] for i in range(info.ndim))
            result[name] = DLPackTensor(
                owner, index, name, info.dtype.decode(), shape, (info.device_type, info.device_index)
            )
        elif info.device_type == 1:
            result[name] = _to_numpy(owner, info, raw_dtypes)
        else:  # device "none": nothing kept
            result[name] = None
    return result
