#!/usr/bin/env bash
# Informer benchmark on a local control plane of its own: 10,000 ModelCache objects.
# Usage: bench/kube/run.sh [build-dir] [objects]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/bench}
objects=${2:-10000}
binary=$build/bench/kube/informer_bench
[[ -x $binary ]] || { echo "missing $binary: build target informer_bench first" >&2; exit 1; }
export MODELPLANE_E2E_STATE=/tmp/modelplane-bench-kube-$$
trap '"$root/e2e/cluster.sh" down >/dev/null 2>&1 || true' EXIT
"$root/e2e/cluster.sh" up >/dev/null
eval "$("$root/e2e/cluster.sh" env)"
kubectl apply -f "$root/crds/" >/dev/null
"$binary" --kubeconfig "$KUBECONFIG" --objects "$objects"
