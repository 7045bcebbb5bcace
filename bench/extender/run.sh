#!/usr/bin/env bash
# The extender at scale: extender_bench on this build, then on scheduler-extender as it was at
# 65ef1df (bench/extender/baseline.sh), both appending to bench/extender/results.jsonl.
# Usage: bench/extender/run.sh [seconds per result, default 5]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-5}
binary=$root/build/bench/bench/extender/extender_bench
[[ -x $binary ]] || { echo "missing $binary: ninja -C build/bench extender_bench" >&2; exit 1; }
results=$root/bench/extender/results.jsonl
"$binary" --verify --breakdown --seconds "$seconds" --json "$results" --label after
"$root/bench/extender/baseline.sh" --verify --breakdown --seconds "$seconds" --json "$results" \
  --label "before (scheduler-extender at 65ef1df)"
