"""modelplane_loader (the C ABI through ctypes) against the real `safetensors` package.

Checkpoints are written by safetensors itself (serialize_file), covering every dtype its Rust
core accepts, BF16 and the F8 types included; the reference bytes come from safetensors
(deserialize for every dtype, numpy.load_file where numpy has the type). Each load path runs:
io_uring and the pread pool, O_DIRECT and buffered, ml_dtypes and raw dtypes, rank-aware.

Run by ctest (node_agent_loader_python) with MODELPLANE_LOADER_LIBRARY set, or by hand:
    MODELPLANE_LOADER_LIBRARY=build/x/node-agent/loader/libmodelplane_loader.so \
        PYTHONPATH=python .venv/bin/pytest tests/node-agent/loader
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import safetensors
import safetensors.numpy

import modelplane_loader

# safetensors' own dtype names (TensorSpec) -> (header name, bits): every dtype safetensors 0.8
# serialises, BF16, the F8 family and packed F4 included. (F6 it reads but cannot write from
# Python; the C++ tests cover F6.)
DTYPES = {
    "bool": ("BOOL", 8),
    "uint8": ("U8", 8),
    "int8": ("I8", 8),
    "float8_e5m2": ("F8_E5M2", 8),
    "float8_e4m3fn": ("F8_E4M3", 8),
    "float8_e8m0fnu": ("F8_E8M0", 8),
    "float8_e4m3fnuz": ("F8_E4M3FNUZ", 8),
    "float8_e5m2fnuz": ("F8_E5M2FNUZ", 8),
    "int16": ("I16", 16),
    "uint16": ("U16", 16),
    "float16": ("F16", 16),
    "bfloat16": ("BF16", 16),
    "int32": ("I32", 32),
    "uint32": ("U32", 32),
    "float32": ("F32", 32),
    "complex64": ("C64", 64),
    "float64": ("F64", 64),
    "int64": ("I64", 64),
    "uint64": ("U64", 64),
    "float4_e2m1fn_x2": ("F4", 4),
}
BITS = {header: bits for header, bits in DTYPES.values()}


def random_bytes(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=count, dtype=np.uint8)


def write_with_safetensors(path, tensors):
    """tensors: name -> (safetensors dtype, shape, uint8 array); written by safetensors itself."""
    specs = {
        name: safetensors.TensorSpec(dtype=dtype, shape=list(shape), data_ptr=data.ctypes.data, data_len=data.nbytes)
        for name, (dtype, shape, data) in tensors.items()
    }
    safetensors.serialize_file(specs, str(path), metadata={"writer": "test"})


@pytest.fixture(scope="module")
def every_dtype(tmp_path_factory):
    folder = tmp_path_factory.mktemp("every-dtype")
    tensors = {}
    for seed, (dtype, (header, bits)) in enumerate(DTYPES.items()):
        # F4 is given in its storage shape (bytes); safetensors doubles the last dimension.
        shape = [12, 20]
        data = random_bytes(12 * 20 * max(bits, 8) // 8, seed)
        if dtype == "bool":
            data = data & 1  # booleans are 0 or 1
        tensors[f"t.{header}"] = (dtype, shape, data)
    tensors["big"] = ("bfloat16", [256, 1000], random_bytes(512000, 99))
    tensors["empty"] = ("float32", [0, 3], np.zeros(0, np.uint8))
    path = folder / "model.safetensors"
    write_with_safetensors(path, tensors)
    return path


def reference(path):
    with open(path, "rb") as f:
        return {name: info for name, info in safetensors.deserialize(f.read())}


@pytest.mark.parametrize("engine", ["io_uring", "pread"])
@pytest.mark.parametrize("io", ["direct", "buffered"])
def test_every_dtype_byte_exact(every_dtype, engine, io):
    expected = reference(every_dtype)
    loaded = modelplane_loader.load(str(every_dtype), engine=engine, io=io, request_bytes=65536)
    assert loaded.stats["engine"] == ("io_uring" if engine == "io_uring" else "pread-pool")
    assert loaded.stats["files_direct"] == (1 if io == "direct" else 0)
    assert set(loaded) == set(expected)
    for name, info in expected.items():
        array = loaded[name]
        assert array.tobytes() == bytes(info["data"]), name
        if BITS[info["dtype"]] >= 8:
            assert list(array.shape) == info["shape"], name


def test_numpy_dtypes_equal_safetensors_numpy(every_dtype):
    loaded = modelplane_loader.load(str(every_dtype))
    with safetensors.safe_open(str(every_dtype), framework="np") as f:
        for name in f.keys():
            dtype = loaded[name].dtype
            if name.split(".")[-1] not in safetensors.numpy._TYPES:
                continue  # BF16, F8, F4: compared through deserialize above
            theirs = f.get_tensor(name)
            assert loaded[name].dtype == theirs.dtype, name
            np.testing.assert_array_equal(loaded[name], theirs, err_msg=name)
            assert dtype == theirs.dtype


def test_bf16_and_f8_types_with_and_without_ml_dtypes(every_dtype):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    typed = modelplane_loader.load(str(every_dtype))
    raw = modelplane_loader.load(str(every_dtype), raw_dtypes=True)
    assert typed["t.BF16"].dtype == ml_dtypes.bfloat16
    assert typed["t.F8_E4M3"].dtype == ml_dtypes.float8_e4m3fn
    assert typed["t.F8_E5M2"].dtype == ml_dtypes.float8_e5m2
    assert raw["t.BF16"].dtype == np.uint16
    assert raw["t.F8_E4M3"].dtype == np.uint8
    assert raw["t.F4"].shape == (12, 20)  # packed bytes: [12, 40] F4 values, two per byte
    assert typed["t.BF16"].view(np.uint16).tobytes() == raw["t.BF16"].tobytes()


def test_arrays_outlive_the_result_and_share_its_memory(every_dtype):
    array = modelplane_loader.load(str(every_dtype))["t.F32"]
    expected = bytes(reference(every_dtype)["t.F32"]["data"])
    import gc

    gc.collect()
    assert array.tobytes() == expected
    assert not array.flags.owndata


def test_dlpack_on_cpu(every_dtype):
    loaded = modelplane_loader.load(str(every_dtype), as_dlpack=True)
    for name in ("t.F32", "t.I64", "t.U8"):
        array = np.from_dlpack(loaded[name])
        assert array.tobytes() == bytes(reference(every_dtype)[name]["data"])


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sharded")
    rng = np.random.default_rng(5)
    first = {
        "layers.0.q_proj.weight": rng.standard_normal((256, 128), dtype=np.float32),
        "layers.0.o_proj.weight": rng.standard_normal((64, 512)).astype(np.float16),
    }
    second = {
        "lm_head.weight": rng.standard_normal((32, 16), dtype=np.float32),
        "norm.weight": rng.standard_normal((17,), dtype=np.float32),
    }
    safetensors.numpy.save_file(first, str(folder / "model-00001-of-00002.safetensors"))
    safetensors.numpy.save_file(second, str(folder / "model-00002-of-00002.safetensors"))
    return folder, {**first, **second}


RULES = {"*.q_proj.weight": "split:0", "*.o_proj.weight": "split:1", "lm_head*": "rank:1"}


@pytest.mark.parametrize("io", ["buffered", "direct"])
def test_rank_aware_loads_are_slices_and_read_only_their_ranges(sharded, io):
    folder, full = sharded
    whole = modelplane_loader.load(str(folder))
    for name, array in full.items():
        np.testing.assert_array_equal(whole[name], array)
    world = 4
    for rank in range(world):
        part = modelplane_loader.load(
            str(folder), rank=rank, world_size=world, rules=RULES, io=io, coalesce_gap_bytes=0
        )
        np.testing.assert_array_equal(part["layers.0.q_proj.weight"], np.split(full["layers.0.q_proj.weight"], world, 0)[rank])
        np.testing.assert_array_equal(part["layers.0.o_proj.weight"], np.split(full["layers.0.o_proj.weight"], world, 1)[rank])
        np.testing.assert_array_equal(part["norm.weight"], full["norm.weight"])
        assert ("lm_head.weight" in part) == (rank == 1)
        needed = sum(a.nbytes for a in part.values())
        assert part.stats["bytes_needed"] == needed
        if io == "buffered":
            assert part.stats["bytes_read"] == needed
        else:
            # Rounded out to 4 KiB blocks, never the other ranks' q_proj rows.
            assert part.stats["bytes_read"] <= needed + (3 + 64) * 2 * 4096
            assert part.stats["bytes_read"] < full["layers.0.q_proj.weight"].nbytes / world + 64 * 2 * 4096 + 3 * 8192


def test_errors_carry_codes(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises(modelplane_loader.LoadError) as error:
        modelplane_loader.load(str(bad))
    assert error.value.code == "invalid_argument"
    with pytest.raises(modelplane_loader.LoadError) as error:
        modelplane_loader.load(str(tmp_path / "missing.safetensors"))
    assert error.value.code == "not_found"
    with pytest.raises(modelplane_loader.LoadError):
        modelplane_loader.load(str(bad), no_such_option=1)


def test_cuda_absent_is_reported(every_dtype):
    if os.environ.get("MODELPLANE_CUDART_LIBRARY") is None and any(
        os.path.exists(p) for p in ("/dev/nvidia0", "/dev/nvidiactl")
    ):
        pytest.skip("a GPU is present: bench/loader/gpu-check.sh covers CUDA")
    with pytest.raises(modelplane_loader.LoadError) as error:
        modelplane_loader.load(str(every_dtype), device="cuda:0")
    assert error.value.code == "unavailable"
