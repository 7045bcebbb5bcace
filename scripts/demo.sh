#!/usr/bin/env bash
# The local demo: a real Kubernetes control plane (built from Go modules) with fake GPU nodes,
# MinIO holding a generated checkpoint, modelplane installed with Helm, a ModelRevision applied,
# and the operator running against it. The cluster stays up for exploring with kubectl.
#
#   scripts/demo.sh          bring it up (first run builds the tools and the binaries)
#   scripts/demo.sh down     take it all down again
#
# What the demo shows today: the API (CRDs with printer columns and CEL immutability), the
# checkpoint in the object store with its digests, and the operator's leader election and
# admin endpoints. Staging onto nodes, placement and readiness arrive with the end-to-end issue.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/modelplane-demo}
build=$root/build/demo
operator_pid_file=$MODELPLANE_E2E_STATE/modelplane-operator.pid

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if [[ ${1:-up} == down ]]; then
  if [[ -f $operator_pid_file ]]; then
    kill "$(cat "$operator_pid_file")" 2>/dev/null || true
  fi
  e2e/cluster.sh down
  exit 0
fi

say "Installing what the demo needs (idempotent)"
scripts/setup.sh
say "Building modelplane"
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMODELPLANE_BUILD_TESTS=OFF \
  -DMODELPLANE_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" modelplane-operator modelplane-scheduler-extender modelplane-node-agent

say "Starting the local control plane (etcd, kube-apiserver, scheduler, controller-manager, KWOK, MinIO)"
e2e/cluster.sh up
eval "$(e2e/cluster.sh env)"
kubectl get nodes -L topology.kubernetes.io/zone

say "Installing the chart (CRDs, RBAC); the operator runs on this host, not in a fake pod"
kubectl create namespace modelplane-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
helm upgrade --install modelplane charts/modelplane --namespace modelplane-system \
  --set operator.enabled=false --wait --timeout 60s
kubectl get crds -l app.kubernetes.io/part-of=modelplane 2>/dev/null || kubectl get crds | grep modelplane

say "Generating a 256 MiB checkpoint and uploading it to MinIO"
checkpoint=$MODELPLANE_E2E_STATE/checkpoint
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size 256MiB --shards 4 --seed 7 \
  --summary >"$MODELPLANE_E2E_STATE/checkpoint.json"
python3 - "$MODELPLANE_E2E_STATE/checkpoint.json" <<'PY'
import json, sys
for entry in json.load(open(sys.argv[1]))["files"]:
    print(f"  {entry['path']:40} {entry['size']:>12}  sha256:{entry['sha256'][:16]}...")
PY
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size 256MiB --shards 4 --seed 7 \
  --upload "s3://$MODELPLANE_S3_BUCKET/demo-r1/" >/dev/null
s5cmd --endpoint-url "$S3_ENDPOINT_URL" ls "s3://$MODELPLANE_S3_BUCKET/demo-r1/*"

say "Applying a ModelRevision for it"
kubectl create namespace models --dry-run=client -o yaml | kubectl apply -f - >/dev/null
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size 256MiB --shards 4 --seed 7 \
  --modelrevision demo-r1 --bucket "$MODELPLANE_S3_BUCKET" --prefix demo-r1 |
  kubectl apply -n models -f -
kubectl get modelrevisions -n models

say "The API server keeps revisions immutable: changing the file set is refused"
kubectl patch modelrevision demo-r1 -n models --type=json \
  -p '[{"op":"replace","path":"/spec/files/0/size","value":1}]' 2>&1 | sed 's/^/  /' || true

say "Starting modelplane-operator on this host"
cat >"$MODELPLANE_E2E_STATE/operator.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
kubernetes: {kubeconfig: $KUBECONFIG}
leaderElection: {namespace: modelplane-system}
YAML
nohup "$build/operator/modelplane-operator" --config "$MODELPLANE_E2E_STATE/operator.yaml" \
  >"$MODELPLANE_E2E_STATE/logs/modelplane-operator.log" 2>&1 &
echo $! >"$operator_pid_file"
for _ in $(seq 50); do
  grep -q leadership_acquired "$MODELPLANE_E2E_STATE/logs/modelplane-operator.log" && break
  sleep 0.2
done
sed 's/^/  /' "$MODELPLANE_E2E_STATE/logs/modelplane-operator.log"
kubectl get lease -n modelplane-system modelplane-operator

say "The cluster stays up. Explore it with:"
cat <<TEXT
  export MODELPLANE_E2E_STATE=$MODELPLANE_E2E_STATE
  eval "\$(e2e/cluster.sh env)"
  kubectl get modelrevisions -A        # or: kubectl get mr -A
  kubectl get nodes -L topology.kubernetes.io/zone
  tail -f $MODELPLANE_E2E_STATE/logs/modelplane-operator.log
Take it down with:  scripts/demo.sh down
TEXT
