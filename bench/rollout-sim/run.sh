#!/usr/bin/env bash
# The rollout simulator (docs/scale.md): its calibration against the local fleet matrix
# (docs/fleet/fleet.csv), the sweep over fleet size, zones, model size and NIC speed, and
# Kraken's published shape, as CSV and plots in docs/scale/.
#
#   bench/rollout-sim/run.sh [--build DIR] [--out DIR]
#
# Builds bench/rollout-sim/rollout_sim (Release) into DIR (default build/bench) unless
# MODELPLANE_SKIP_BUILD=1, and installs matplotlib into the project's venv when missing (PyPI).
# About 30 minutes on the 2-vCPU dev VM, one core: the 10,000-node rows take up to a minute
# each, and 700 GB models are swept to 1,000 nodes only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=$root/build/bench
out=$root/docs/scale
while (($#)); do
  case $1 in
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    *) sed -n '2,11p' "$0" >&2; exit 2 ;;
  esac
  shift
done
python=$root/.venv/bin/python
[[ -x $python ]] || scripts/setup.sh
if [[ ${MODELPLANE_SKIP_BUILD:-0} != 1 ]]; then
  if [[ ! -f $build/build.ninja ]]; then
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMODELPLANE_BUILD_TESTS=OFF \
      -DMODELPLANE_BUILD_BENCH=ON >/dev/null
  fi
  scripts/ninja-progress.sh -C "$build" rollout_sim
fi
"$python" -c 'import matplotlib' 2>/dev/null || "$python" -m pip install --quiet matplotlib
simulator=$build/bench/rollout-sim/rollout_sim
mkdir -p "$out"
"$simulator" --out "$out/calibration.csv" calibrate --matrix docs/fleet/fleet.csv
"$simulator" --out "$out/sweep.csv" sweep --nodes 1,10,100,1000,10000 --zones 1,2,8 \
  --model-gb 8,70 --nic-gbps 25,100,400
"$simulator" --out "$out/sweep-700.csv" sweep --nodes 1,10,100,1000 --zones 1,2,8 \
  --model-gb 700 --nic-gbps 25,100,400
"$simulator" --out "$out/kraken.csv" kraken
"$python" bench/rollout-sim/plot.py "$out"
