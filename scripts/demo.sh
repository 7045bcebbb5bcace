#!/usr/bin/env bash
# The local demo: a real Kubernetes control plane (built from Go modules) with 4 fake GPU nodes
# in 2 zones, MinIO holding a generated ~1 GiB checkpoint, modelplane's CRDs and RBAC installed
# with Helm, and modelplane's operator, scheduler extender and one node agent per node running on
# this host. A ModelRevision is prestaged on 2 nodes, a 3-replica Deployment lands where the
# weights are, the third node stages them from a peer, and all pods go Ready through the
# weights-ready gate; a timeline shows per node the tier and the stage timestamps.
# The cluster stays up for exploring with kubectl (e2e/scenario.sh asserts every step).
#
#   scripts/demo.sh          bring it up (the first run builds the tools and the binaries)
#   scripts/demo.sh down     take it all down again
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/modelplane-demo}
export MODELPLANE_BUILD=${MODELPLANE_BUILD:-$root/build/demo}

if [[ ${1:-up} == down ]]; then
  exec e2e/scenario.sh down
fi
printf '\n\033[1m== Installing what the demo needs (idempotent)\033[0m\n'
scripts/setup.sh
exec e2e/scenario.sh --keep
