#!/usr/bin/env bash
# Builds release binaries (RelWithDebInfo, no tests, no benchmarks) into BUILD_DIR, configuring
# it first when it has no build.ninja yet: the one way the e2e scripts, the benchmarks and the
# image builder get optimized binaries.
#
# Unity batches of 16 sources, as the test build: each header is then parsed once per batch, not
# once per source, and on two cores the per-source release build of the three daemons took
# longer than the whole ASan test build (11 of 94 steps in 10 minutes beside other work,
# 2026-12-02).
# Usage: scripts/release-build.sh BUILD_DIR TARGET...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
(($# >= 2)) || { sed -n '2,10p' "$0" >&2; exit 2; }
build=$1
shift
if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
    -DMODELPLANE_BUILD_TESTS=OFF -DMODELPLANE_BUILD_BENCH=OFF >/dev/null
fi
"$root/scripts/ninja-progress.sh" -C "$build" "$@"
