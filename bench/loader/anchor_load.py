"""Loads a checkpoint's shards into host memory with one tool and prints one JSON line.

    anchor_load.py TOOL FILE...
TOOL: modelplane | safetensors-np | safetensors-pt | runai | fastsafetensors

Runs in its own process (bench.py starts one per measurement) so page-cache state, threads
and peak RSS belong to that tool alone. `seconds` covers the load call until every tensor is
in host memory, plus one read of a byte per page of every tensor (see touch); imports are
outside it. `rss_peak_bytes` is the process's high-water mark and
`rss_before_bytes` the resident size after imports, so their difference is what loading cost.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def rss_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def touch(value) -> int:
    """Reads one byte per 4 KiB page: an mmap-backed tool (safetensors.torch maps the file)
    has loaded nothing until its pages are read. Every tool's result gets the same pass."""
    if hasattr(value, "numel"):  # torch
        flat = value.reshape(-1).view(__import__("torch").uint8)
        return int(flat[::4096].sum()) if flat.numel() else 0
    flat = value.reshape(-1).view("u1")
    return int(flat[::4096].sum()) if flat.size else 0


def main() -> int:
    tool, files = sys.argv[1], sys.argv[2:]
    keep = {}
    if tool == "modelplane":
        import modelplane_loader

        modelplane_loader._lib()  # opening the shared library is import work
        before = rss_now()
        start = time.perf_counter()
        keep = modelplane_loader.load(files)
        checksum = sum(touch(v) for v in keep.values())
        seconds = time.perf_counter() - start
        extra = {"stats": keep.stats}
    elif tool == "safetensors-np":
        import safetensors.numpy

        before = rss_now()
        start = time.perf_counter()
        for path in files:
            keep.update(safetensors.numpy.load_file(path))
        checksum = sum(touch(v) for v in keep.values())
        seconds = time.perf_counter() - start
        extra = {}
    elif tool == "safetensors-pt":
        import safetensors.torch

        before = rss_now()
        start = time.perf_counter()
        for path in files:
            keep.update(safetensors.torch.load_file(path, device="cpu"))
        checksum = sum(touch(v) for v in keep.values())
        seconds = time.perf_counter() - start
        extra = {}
    elif tool == "runai":
        from runai_model_streamer import SafetensorsStreamer

        before = rss_now()
        start = time.perf_counter()
        with SafetensorsStreamer() as streamer:
            streamer.stream_files(files)  # owned=True: each tensor stays the caller's
            for name, tensor in streamer.get_tensors():
                keep[name] = tensor
        checksum = sum(touch(v) for v in keep.values())
        seconds = time.perf_counter() - start
        extra = {}
    elif tool == "fastsafetensors":
        from fastsafetensors import fastsafe_open

        before = rss_now()
        start = time.perf_counter()
        with fastsafe_open(files, framework="pt", device="cpu", nogds=True) as f:
            for name in f.keys():
                keep[name] = f.get_tensor(name)
        checksum = sum(touch(v) for v in keep.values())
        seconds = time.perf_counter() - start
        extra = {}
    else:
        print(f"unknown tool {tool}", file=sys.stderr)
        return 2
    nbytes = 0
    for value in keep.values():
        nbytes += value.nbytes if hasattr(value, "nbytes") else value.numel() * value.element_size()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"tool": tool, "seconds": seconds, "bytes": nbytes, "tensors": len(keep),
                      "page_checksum": checksum,
                      "rss_before_bytes": before, "rss_peak_bytes": peak, **extra}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
