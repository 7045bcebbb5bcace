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

def openssl(block):
    out = subprocess.run(["openssl", "speed", "-evp", "sha256", "-bytes", str(block),
                          "-seconds", seconds], capture_output=True, text=True, check=True).stdout
    # The last line is "sha256  <rate>k" in thousands of bytes per second.
    line = [l for l in out.splitlines() if l.lower().startswith("sha256")][-1]
    return float(line.split()[-1].rstrip("k")) * 1000

def ours(block):
    out = subprocess.run([binary, "--block-bytes", str(block), "--seconds", seconds],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["bytes_per_second"]

print(f"{'block':>8} {'openssl MB/s':>13} {'modelplane MB/s':>16} {'ratio':>6}")
for block in (16384, 1 << 20):
    anchor, candidate = [], []
    for _ in range(reps):
        anchor.append(openssl(block))
        candidate.append(ours(block))
    a, c = statistics.median(anchor), statistics.median(candidate)
    print(f"{block:>8} {a/1e6:>13.1f} {c/1e6:>16.1f} {c/a:>6.3f}")
PY
