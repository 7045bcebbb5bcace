#!/usr/bin/env bash
# Runs ninja so that a long build shows how far it has got without flooding a log. On a
# terminal ninja draws its own one-line [done/total] status. Otherwise (CI, a pipe) it prints a
# status line per build step, so those are thinned to one per 5% of the steps, each with the
# elapsed seconds; everything else ninja prints (compiler warnings and errors, FAILED: and the
# command line) passes through whole. The exit status is ninja's.
# Usage: scripts/ninja-progress.sh -C BUILD_DIR [ninja arguments...]
set -euo pipefail
if [[ -t 1 ]]; then
  exec ninja "$@"
fi
export NINJA_STATUS='[%f/%t %es] '
ninja "$@" | awk '
  BEGIN { shown = -1 }
  match($0, /^\[[0-9]+\/[0-9]+ [0-9.]+s\] /) {
    split(substr($0, 2, RLENGTH - 3), count, /[\/ ]/)
    step = count[2] > 0 ? int(count[1] * 20 / count[2]) : 0
    if (step != shown) { print; fflush(); shown = step }
    next
  }
  { print; fflush() }'
