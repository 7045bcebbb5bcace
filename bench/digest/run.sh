#!/usr/bin/env bash
# SHA-256 throughput of core::Sha256 against `openssl speed -evp sha256` in the same run.
# Alternates anchor and candidate so drift on a noisy machine hits both; reports medians.
# Usage: bench/digest/run.sh [build-dir] [repetitions]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/bench}
reps=${2:-3}
seconds=3
binary=$build/bench/digest/sha256_throughput
[[ -x $binary ]] || { echo "missing $binary: build target sha256_throughput first" >&2; exit 1; }

python3 - "$binary" "$reps" "$seconds" <<'PY'
import json, statistics, subprocess, sys
binary, reps, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def openssl(block, elapsed):
    command = ["openssl", "speed", "-evp", "sha256", "-bytes", str(block), "-seconds", seconds]
    if elapsed:
        command.append("-elapsed")
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    # The last line is "sha256  <rate>k" in thousands of bytes per second.
    line = [l for l in out.splitlines() if l.lower().startswith("sha256")][-1]
    return float(line.split()[-1].rstrip("k")) * 1000

def ours(block):
    out = subprocess.run([binary, "--block-bytes", str(block), "--seconds", seconds],
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out)
    return result["bytes_per_cpu_second"], result["bytes_per_second"]

# Per CPU second is the comparison that survives a busy machine (openssl's default measure);
# per wall second (openssl -elapsed) is shown too.
print(f"{'block':>8} {'measure':>8} {'openssl MB/s':>13} {'modelplane MB/s':>16} {'ratio':>6}")
for block in (16384, 1 << 20):
    anchor_cpu, anchor_wall, ours_cpu, ours_wall = [], [], [], []
    for _ in range(reps):
        anchor_cpu.append(openssl(block, elapsed=False))
        cpu, wall = ours(block)
        ours_cpu.append(cpu)
        ours_wall.append(wall)
        anchor_wall.append(openssl(block, elapsed=True))
    for measure, a, c in (("cpu", anchor_cpu, ours_cpu), ("wall", anchor_wall, ours_wall)):
        a, c = statistics.median(a), statistics.median(c)
        print(f"{block:>8} {measure:>8} {a/1e6:>13.1f} {c/1e6:>16.1f} {c/a:>6.3f}")
PY
