"""GPU side of gpu-check.sh: load a checkpoint onto cuda:0 with one tool, or verify bytes.

    gpu_load.py verify FOLDER            modelplane (pinned ring, then GDS if present, then a
                                         rank-aware load) against safetensors on the CPU
    gpu_load.py TOOL FOLDER              one timed load; TOOL: modelplane, modelplane-nogds,
                                         safetensors, runai, fastsafetensors, fastsafetensors-gds,
                                         instanttensor
Prints one JSON line per load. Exit 3 when the tool's package is missing (the caller skips).
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time


def files_of(folder):
    return sorted(glob.glob(os.path.join(folder, "*.safetensors")))


def need(module):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as error:
        print(f"SKIPPED: {module} not importable ({error})", file=sys.stderr)
        sys.exit(3)


def verify(folder) -> int:
    torch = need("torch")
    safetensors_torch = need("safetensors.torch")
    import modelplane_loader

    files = files_of(folder)
    reference = {}
    for path in files:
        reference.update(safetensors_torch.load_file(path, device="cpu"))
    failures = 0
    for label, options in (("pinned ring", {"gds": False}), ("gds or fallback", {"gds": True})):
        loaded = modelplane_loader.load(files, device="cuda:0", **options)
        for name, capsule in loaded.items():
            tensor = torch.from_dlpack(capsule)
            assert tensor.is_cuda, name
            if not torch.equal(tensor.cpu().view(torch.uint8).flatten(),
                               reference[name].view(torch.uint8).flatten()):
                print(f"MISMATCH ({label}): {name}")
                failures += 1
        stats = loaded.stats
        print(json.dumps({"check": label, "tensors": len(loaded), "files_gds": stats["files_gds"],
                          "host_pinned_bytes": stats["host_pinned_bytes"],
                          "gib_per_s": stats["bytes_per_second"] / (1 << 30),
                          "fallbacks": stats["fallbacks"]}))
    rules = {"*q_proj.weight": "split:0", "*o_proj.weight": "split:1"}
    for rank in range(2):
        part = modelplane_loader.load(files, device="cuda:0", rank=rank, world_size=2, rules=rules)
        for name, capsule in part.items():
            tensor = torch.from_dlpack(capsule).cpu()
            full = reference[name]
            if name.endswith("q_proj.weight"):
                full = full.chunk(2, 0)[rank]
            elif name.endswith("o_proj.weight"):
                full = full.chunk(2, 1)[rank]
            if not torch.equal(tensor.contiguous().view(torch.uint8).flatten(),
                               full.contiguous().view(torch.uint8).flatten()):
                print(f"MISMATCH (rank {rank}): {name}")
                failures += 1
        print(json.dumps({"check": f"rank {rank} of 2", "bytes_read": part.stats["bytes_read"],
                          "bytes_needed": part.stats["bytes_needed"]}))
    print("verify:", "OK" if failures == 0 else f"{failures} mismatches")
    return 1 if failures else 0


def timed(tool, folder) -> int:
    torch = need("torch")
    files = files_of(folder)
    keep = {}
    torch.cuda.synchronize()
    start = time.perf_counter()
    if tool in ("modelplane", "modelplane-nogds"):
        import modelplane_loader

        loaded = modelplane_loader.load(files, device="cuda:0", gds=(tool == "modelplane"))
        keep = {name: torch.from_dlpack(capsule) for name, capsule in loaded.items()}
    elif tool == "safetensors":
        safetensors_torch = need("safetensors.torch")
        for path in files:
            keep.update(safetensors_torch.load_file(path, device="cuda:0"))
    elif tool == "runai":
        streamer_module = need("runai_model_streamer")
        with streamer_module.SafetensorsStreamer() as streamer:
            streamer.stream_files(files)
            for name, tensor in streamer.get_tensors():
                keep[name] = tensor.to("cuda:0", non_blocking=True)
    elif tool in ("fastsafetensors", "fastsafetensors-gds"):
        fst = need("fastsafetensors")
        with fst.fastsafe_open(files, framework="pt", device="cuda:0",
                               nogds=(tool == "fastsafetensors")) as f:
            for name in f.keys():
                keep[name] = f.get_tensor(name).clone()
    elif tool == "instanttensor":
        instanttensor = need("instanttensor")
        with instanttensor.safe_open(files, framework="pt", device=0) as f:
            for name in f.keys():
                keep[name] = f.get_tensor(name)
    else:
        print(f"unknown tool {tool}", file=sys.stderr)
        return 2
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    nbytes = sum(t.numel() * t.element_size() for t in keep.values())
    print(json.dumps({"tool": tool, "seconds": seconds, "bytes": nbytes,
                      "gib_per_s": nbytes / seconds / (1 << 30)}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(verify(sys.argv[2]) if sys.argv[1] == "verify" else timed(sys.argv[1], sys.argv[2]))
