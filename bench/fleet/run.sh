#!/usr/bin/env bash
# The fleet benchmark (docs/fleet.md): tiers x simultaneous replicas on the local control plane,
# one CSV row per cell and PNG plots in docs/fleet/.
#
#   bench/fleet/run.sh [--tiers cold,sharedfs,local,peer,fallback] [--replicas 1,8,32]
#                      [--size 256MiB] [--cap 64MiB] [--max-concurrent 16] [--timeout 600]
#                      [--out docs/fleet] [--state /tmp/modelplane-fleet] [--check] [--keep]
#
# Builds the release binaries into MODELPLANE_BUILD (default build/e2e) unless
# MODELPLANE_SKIP_BUILD=1, installs matplotlib into the project's venv when missing (PyPI), and
# needs root for dropping the page cache before each cell and for resetting the agents' peak
# memory counters. The full matrix takes 10-15 minutes on the 2-vCPU dev VM. With --check
# (the test command's short version) it fails unless every pod of every cell went Ready with no
# failed staging and the origin served at most 1.1 copies per zone, and draws no plots.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${MODELPLANE_BUILD:-$root/build/e2e}
python=$root/.venv/bin/python
out=$root/docs/fleet
arguments=()
check=0
while (($#)); do
  case $1 in
    --out) out=$2; shift ;;
    --check) check=1; arguments+=("$1") ;;
    --keep) arguments+=("$1") ;;
    --tiers | --replicas | --size | --cap | --max-concurrent | --timeout | --state) arguments+=("$1" "$2"); shift ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $python ]] || scripts/setup.sh
if [[ ${MODELPLANE_SKIP_BUILD:-0} != 1 ]]; then
  scripts/release-build.sh "$build" modelplane-operator modelplane-scheduler-extender modelplane-node-agent
fi
((check)) || "$python" -c 'import matplotlib' 2>/dev/null || "$python" -m pip install --quiet matplotlib
PATH=$(e2e/tools.sh bindir):$PATH
export PATH
"$python" bench/fleet/fleet.py --build "$build" --out "$out" "${arguments[@]}"
((check)) || "$python" bench/fleet/fleet_plot.py "$out/fleet.csv" "$out"
