#!/usr/bin/env python3
"""Cold and warm page-cache load benchmark: modelplane's loader against fio (the device limit)
and the PyPI anchors (safetensors, runai-model-streamer, fastsafetensors) in the same run.

    bench/loader/.venv/bin/python bench/loader/bench.py --build build/bench \
        --checkpoint /tmp/loader-bench-4g --reps 5

Cold: `sync; echo 3 > /proc/sys/vm/drop_caches` before every measurement (needs root; without
it every tool would read from the page cache and the run stops). Warm: the files are read
once with cat before every measurement. Tools alternate in a rotating order so drift on a
shared machine spreads over all of them. Each tool runs in its own process; see
anchor_load.py for what is timed. Prints a markdown table (median, min, max of GiB/s and peak
RSS) and writes every sample to --out as JSON lines.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def warm(files) -> None:
    for path in files:
        with open(path, "rb") as f:
            while f.read(16 << 20):
                pass


def run_json(command, env=None) -> dict:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr[-2000:]}")
    line = [l for l in done.stdout.splitlines() if l.startswith("{")][-1]
    result = json.loads(line)
    result["process_seconds"] = wall
    return result


def fio(files, total) -> dict:
    done = subprocess.run(
        ["fio", "--name=device-limit", "--readonly", "--rw=read", "--direct=1", "--bs=16m",
         "--iodepth=16", "--ioengine=io_uring", "--filename=" + ":".join(f.replace(":", "\\:") for f in files),
         "--output-format=json"],
        capture_output=True, text=True, check=True, timeout=600)
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]["read"]
    return {"tool": "fio", "seconds": job["runtime"] / 1000.0, "bytes": job["io_bytes"],
            "rss_peak_bytes": 0}


def stream(binary, files, extra) -> dict:
    result = run_json([binary, "stream", *files, "--json", *extra])
    return {"tool": "modelplane-cli" + ("" if not extra else " " + " ".join(extra)),
            "seconds": result["seconds"], "bytes": result["bytes_needed"],
            "rss_peak_bytes": result["peak_rss_bytes"], "stats": result}


def anchor(python, tool, files, library) -> dict:
    env = dict(os.environ, MODELPLANE_LOADER_LIBRARY=library,
               PYTHONPATH=os.path.join(ROOT, "python"))
    return run_json([python, os.path.join(HERE, "anchor_load.py"), tool, *files], env=env)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "bench"))
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--modes", default="cold,warm")
    parser.add_argument("--tools", default="fio,modelplane-cli,modelplane-py,safetensors-np,safetensors-pt,runai,fastsafetensors")
    parser.add_argument("--stream-flags", default="", help="extra flags for modelplane-cli")
    parser.add_argument("--out", default="/tmp/loader-bench.jsonl")
    args = parser.parse_args()

    files = sorted(glob.glob(os.path.join(args.checkpoint, "*.safetensors")))
    total = sum(os.path.getsize(f) for f in files)
    binary = os.path.join(args.build, "node-agent", "loader", "modelplane-stream")
    library = os.path.join(args.build, "node-agent", "loader", "libmodelplane_loader.so")
    tools = args.tools.split(",")
    samples = []
    with open(args.out, "a") as out:
        for mode in args.modes.split(","):
            for rep in range(args.reps):
                order = tools[rep % len(tools):] + tools[:rep % len(tools)]
                for tool in order:
                    if mode == "cold":
                        drop_caches()
                    else:
                        warm(files)
                    if tool == "fio":
                        if mode != "cold":
                            continue  # O_DIRECT: the device limit, cold by construction
                        sample = fio(files, total)
                    elif tool == "modelplane-cli":
                        sample = stream(binary, files, args.stream_flags.split())
                        sample["tool"] = "modelplane-cli"
                    elif tool == "modelplane-py":
                        sample = anchor(sys.executable, "modelplane", files, library)
                        sample["tool"] = "modelplane-py"
                    else:
                        sample = anchor(sys.executable, tool, files, library)
                    sample.update(mode=mode, rep=rep, file_bytes=total)
                    sample["gib_per_s"] = sample["bytes"] / sample["seconds"] / (1 << 30)
                    samples.append(sample)
                    out.write(json.dumps(sample) + "\n")
                    out.flush()
                    print(f"{mode} rep {rep} {sample['tool']:<16} {sample['gib_per_s']:.3f} GiB/s "
                          f"{sample['seconds']:.2f} s rss {sample['rss_peak_bytes'] / (1 << 20):.0f} MiB",
                          file=sys.stderr, flush=True)
    print(f"\n{len(files)} files, {total / (1 << 30):.2f} GiB, {args.reps} repetitions\n")
    print("| mode | tool | median GiB/s | min | max | median s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        for tool in tools:
            rows = [s for s in samples if s["mode"] == mode and s["tool"] == tool]
            if not rows:
                continue
            rates = [s["gib_per_s"] for s in rows]
            print(f"| {mode} | {tool} | {statistics.median(rates):.3f} | {min(rates):.3f} | "
                  f"{max(rates):.3f} | {statistics.median(s['seconds'] for s in rows):.2f} | "
                  f"{statistics.median(s['rss_peak_bytes'] for s in rows) / (1 << 20):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
