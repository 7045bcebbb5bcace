#!/usr/bin/env bash
# End-to-end smoke test of the local control plane (e2e/cluster.sh) against a real
# kube-apiserver, kube-scheduler and kube-controller-manager with KWOK nodes and MinIO.
#
#   e2e/smoke.sh            builds tools if needed, brings a private cluster up, runs the
#                           checks, brings it down (also on failure or Ctrl-C)
#
# Each check prints "PASS name" or "FAIL name"; the last line is "N passed, N failed" and the
# exit status is non-zero on any failure. Details of a failed check go to stderr.
#
# Environment: MODELPLANE_E2E_NODES (default 4), MODELPLANE_E2E_UP_BUDGET_S (default 30),
# MODELPLANE_E2E_KEEP=1 keeps the cluster up afterwards for debugging,
# MODELPLANE_E2E_REUSE=1 runs the checks against the cluster already up at MODELPLANE_E2E_STATE.
set -Eeuo pipefail

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "${E2E_DIR}/.." && pwd)"
CLUSTER="${E2E_DIR}/cluster.sh"
NODES="${MODELPLANE_E2E_NODES:-4}"
UP_BUDGET_S="${MODELPLANE_E2E_UP_BUDGET_S:-30}"
export MODELPLANE_E2E_NODES="${NODES}"

# A private state dir: the smoke test never touches a cluster a developer has up, unless
# MODELPLANE_E2E_REUSE=1 asks it to run the checks against the cluster at MODELPLANE_E2E_STATE
# (then it neither starts nor stops it).
REUSE="${MODELPLANE_E2E_REUSE:-0}"
WORK="$(mktemp -d /tmp/modelplane-smoke.XXXXXX)"
if [[ "${REUSE}" != 1 ]]; then
  export MODELPLANE_E2E_STATE="${WORK}/cluster"
fi
NS="smoke"

PASSED=0
FAILED=0
smoke_start=${SECONDS}

say() { printf '%s\n' "$*"; }

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ "${REUSE}" == 1 ]]; then
    rm -rf "${WORK}"
  elif [[ "${MODELPLANE_E2E_KEEP:-0}" == 1 && -d "${MODELPLANE_E2E_STATE}" ]]; then
    say "keeping the cluster: eval \"\$(MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE} ${CLUSTER} env)\""
    say "the stub extender (pid ${EXTENDER_PID:-none}) keeps running too; kill it after cluster.sh down"
  else
    "${CLUSTER}" down >/dev/null 2>&1 || true
    stop_extender_stub
    rm -rf "${WORK}"
  fi
  exit "${rc}"
}
trap finish EXIT
trap 'exit 130' INT TERM

# The stand-in scheduler extender: started before `up` so kube-scheduler is configured with it.
EXTENDER_PID=""
start_extender_stub() {
  python3 "${E2E_DIR}/extender_stub.py" "${WORK}/extender.port" >"${WORK}/extender.log" 2>&1 &
  EXTENDER_PID=$!
  wait_until 10 test -s "${WORK}/extender.port"
  MODELPLANE_EXTENDER_URL="http://127.0.0.1:$(cat "${WORK}/extender.port")/scheduler"
  export MODELPLANE_EXTENDER_URL
}
stop_extender_stub() {
  if [[ -n "${EXTENDER_PID}" ]]; then
    kill "${EXTENDER_PID}" 2>/dev/null || true
    wait "${EXTENDER_PID}" 2>/dev/null || true
  fi
}

# check NAME FUNCTION: runs FUNCTION in a subshell with errexit really on (it is not, inside
# an `if`), captures its output and prints only on failure.
check() {
  local name="$1" fn="$2" out rc start=${SECONDS}
  out="${WORK}/check.out"
  set +e
  ( set -Eeuo pipefail; "${fn}" ) >"${out}" 2>&1
  rc=$?
  set -e
  if (( rc == 0 )); then
    PASSED=$((PASSED + 1))
    say "PASS ${name} ($((SECONDS - start))s)"
  else
    FAILED=$((FAILED + 1))
    say "FAIL ${name} ($((SECONDS - start))s)"
    sed 's/^/    | /' "${out}" | tail -n 40 >&2
  fi
  return 0
}

# wait_until SECONDS COMMAND...: polls every 0.25 s.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    (( SECONDS < deadline )) || { echo "timed out: $*" >&2; return 1; }
    sleep 0.25
  done
}

k() { kubectl -n "${NS}" "$@"; }

# --- checks -------------------------------------------------------------------------------

check_up() {
  local start=${SECONDS}
  "${CLUSTER}" up
  echo "$((SECONDS - start))" >"${WORK}/up.seconds"
}

check_up_fast() {
  local took
  took="$(cat "${WORK}/up.seconds")"
  echo "up took ${took}s (budget ${UP_BUDGET_S}s)"
  (( took <= UP_BUDGET_S ))
}

check_nodes() {
  kubectl version
  kubectl get nodes -o wide
  local ready zones gpus
  ready="$(kubectl get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$')"
  [[ "${ready}" -eq "${NODES}" ]] || { echo "ready=${ready} want ${NODES}"; return 1; }
  zones="$(kubectl get nodes -l modelplane.io/gpu=true -o jsonpath='{range .items[*]}{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}' | sort -u | wc -l)"
  (( zones >= 2 )) || { echo "zones=${zones}"; return 1; }
  gpus="$(kubectl get node gpu-node-0 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')"
  [[ "${gpus}" -ge 1 ]] || { echo "no allocatable nvidia.com/gpu"; return 1; }
}

check_server_version() {
  local want got
  want="$("${E2E_DIR}/tools.sh" versions | sed -n 's/^kubernetes=//p')"
  got="$(kubectl get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])')"
  echo "server ${got}, pinned ${want}"
  [[ "${got}" == "${want}" ]]
}

crd_files() { find "${REPO_DIR}/crds" -maxdepth 1 -name '*.yaml' | sort; }

check_crds_apply() {
  local f
  [[ -n "$(crd_files)" ]] || { echo "no CRDs in crds/"; return 1; }
  for f in $(crd_files); do kubectl apply --server-side -f "${f}"; done
  kubectl wait --for=condition=Established --timeout=30s crd/modelrevisions.modelplane.io
  kubectl get modelrevisions -A
  if [[ -f "${REPO_DIR}/crds/modelcaches.yaml" ]]; then
    kubectl wait --for=condition=Established --timeout=30s crd/modelcaches.modelplane.io
    # Cluster-scoped, one per node, named after the node.
    kubectl apply -f - <<'EOF'
apiVersion: modelplane.io/v1alpha1
kind: ModelCache
metadata:
  name: gpu-node-0
spec:
  revisions:
  - revision: {namespace: smoke, name: sample}
    digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000"
    pinned: true
    reason: prestage
EOF
    kubectl get modelcaches
    [[ -z "$(kubectl get modelcache gpu-node-0 -o jsonpath='{.metadata.namespace}')" ]]
    kubectl delete modelcache gpu-node-0
  fi
  # The examples shipped beside the CRDs must be valid against them.
  local ex ns
  for ex in "${REPO_DIR}"/crds/examples/*.yaml; do
    [[ -e "${ex}" ]] || continue
    # Examples name their namespace (or take the default one); it must exist for a dry run.
    for ns in $(sed -n 's/^  namespace: *//p' "${ex}" | tr -d '"' | sort -u); do
      kubectl create namespace "${ns}" --dry-run=client -o yaml | kubectl apply -f -
    done
    kubectl apply --dry-run=server -f "${ex}"
  done
}

check_modelrevision_immutable() {
  kubectl create namespace "${NS}" --dry-run=client -o yaml | kubectl apply -f -
  k apply -f "${E2E_DIR}/manifests/sample-modelrevision.yaml"
  k get modelrevision sample -o name
  # A mutable field may change ...
  k patch modelrevision sample --type=merge -p '{"spec":{"modelName":"renamed-for-humans"}}'
  # ... but a different file set must be refused by the CEL rule `self == oldSelf`.
  local err
  if err="$(k patch modelrevision sample --type=json \
      -p '[{"op":"replace","path":"/spec/files/0/size","value":4214913}]' 2>&1)"; then
    echo "changing spec.files was accepted"; return 1
  fi
  echo "${err}"
  grep -q "immutable" <<<"${err}"
}

pods_running() {  # pods_running SELECTOR COUNT
  local phases
  phases="$(k get pods -l "$1" -o jsonpath='{range .items[*]}{.status.phase}{" "}{.spec.nodeName}{"\n"}{end}')"
  [[ "$(grep -c '^Running gpu-node-' <<<"${phases}")" -eq "$2" && "$(grep -c . <<<"${phases}")" -eq "$2" ]]
}

image_of() { k get deploy/web -o jsonpath='{.spec.template.spec.containers[0].image}'; }
rs_count() { k get rs -l app=web -o name | grep -c .; }

check_deployment() {
  k create deployment web --image=registry.k8s.io/pause:3.10 --replicas=3
  k rollout status deploy/web --timeout=60s
  wait_until 30 pods_running app=web 3
  k get pods -l app=web -o wide
}

check_rollout_pause_resume_undo() {
  k rollout pause deploy/web
  k set image deploy/web pause=registry.k8s.io/pause:3.9
  sleep 2
  # Paused: the template changed but no new ReplicaSet was created.
  [[ "$(k get deploy/web -o jsonpath='{.spec.paused}')" == "true" ]]
  [[ "$(rs_count)" -eq 1 ]] || { echo "a ReplicaSet was created while paused"; return 1; }
  k rollout resume deploy/web
  k rollout status deploy/web --timeout=60s
  [[ "$(rs_count)" -eq 2 ]]
  wait_until 30 pods_running app=web 3
  [[ "$(k get pods -l app=web -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u)" == "registry.k8s.io/pause:3.9" ]]
  k rollout undo deploy/web
  k rollout status deploy/web --timeout=60s
  [[ "$(image_of)" == "registry.k8s.io/pause:3.10" ]]
  wait_until 30 pods_running app=web 3
  k rollout history deploy/web
}

gate_reason() {
  k get pod gated -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'
}
gated_running() { [[ "$(k get pod gated -o jsonpath='{.status.phase}')" == Running ]]; }

check_scheduling_gate() {
  # Also exercises the second scheduler profile and the fake GPU resource.
  k apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: gated
spec:
  schedulerName: modelplane-scheduler
  schedulingGates:
  - name: modelplane.io/admission
  nodeSelector:
    modelplane.io/gpu: "true"
  containers:
  - name: engine
    image: registry.k8s.io/pause:3.10
    resources:
      limits:
        nvidia.com/gpu: "1"
EOF
  wait_until 10 bash -c "[[ \"\$(kubectl -n ${NS} get pod gated -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].reason}')\" == SchedulingGated ]]"
  sleep 3
  [[ "$(gate_reason)" == SchedulingGated ]] || { echo "reason $(gate_reason)"; return 1; }
  [[ -z "$(k get pod gated -o jsonpath='{.spec.nodeName}')" ]]
  k patch pod gated --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]'
  wait_until 30 gated_running
  k get pod gated -o wide
}

steered_node() { k get pod steered -o jsonpath='{.spec.nodeName}'; }
steered_scheduled() { [[ -n "$(steered_node)" ]]; }

check_extender() {
  # The stub extender filters out the nodes a pod's annotation names; only the scheduler
  # calling it (through the config cluster.sh wrote) can land this pod on gpu-node-3.
  local deny
  deny="$(kubectl get nodes -l type=kwok -o name | sed 's|node/||' | grep -vx gpu-node-3 | paste -sd, -)"
  k apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: steered
  annotations:
    modelplane.io/e2e-deny-nodes: "${deny}"
spec:
  schedulerName: modelplane-scheduler
  containers:
  - name: engine
    image: registry.k8s.io/pause:3.10
EOF
  wait_until 30 steered_scheduled
  echo "scheduled on $(steered_node)"
  grep '"verb": "filter", "pod": "smoke/steered"' "${WORK}/extender.log"
  [[ "$(steered_node)" == gpu-node-3 ]]
}

check_helm() {
  local chart="${REPO_DIR}/charts/modelplane"
  helm lint --strict "${chart}"
  kubectl create namespace modelplane-system --dry-run=client -o yaml | kubectl apply -f -
  # Render for the server we actually have (the helm build defaults to the pinned minor too).
  local server
  server="$(kubectl get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])')"
  helm template smoke "${chart}" --namespace modelplane-system --include-crds \
    --kube-version "${server}" >"${WORK}/chart.yaml"
  grep -q "kind: CustomResourceDefinition" "${WORK}/chart.yaml" || { echo "chart renders no CRDs"; return 1; }
  kubectl apply --dry-run=server -f "${WORK}/chart.yaml"
  # And for real: the release installs, its operator pod runs (on KWOK), and it uninstalls.
  helm install smoke "${chart}" --namespace modelplane-system --wait --timeout 60s
  kubectl -n modelplane-system get deploy,sa,role,rolebinding -l app.kubernetes.io/instance=smoke
  helm uninstall smoke --namespace modelplane-system --wait --timeout 60s
}

check_generator_deterministic() {
  # e2e/manifests/sample-modelrevision.yaml pins real digests; the generator must still
  # produce exactly those bytes (anyone pinning digests from it relies on this).
  python3 "${E2E_DIR}/checkpoint/generate.py" --out "${WORK}/sample" --size 8MiB --shards 2 \
    --seed 0 --modelrevision sample --prefix tiny-seed0/ --endpoint http://127.0.0.1:9000 \
    >"${WORK}/sample.yaml"
  diff <(grep -v '^#' "${E2E_DIR}/manifests/sample-modelrevision.yaml") "${WORK}/sample.yaml"
}

check_s3_roundtrip() {
  local src="${WORK}/ckpt" dst="${WORK}/ckpt-back"
  python3 "${E2E_DIR}/checkpoint/generate.py" --out "${src}" --size 32MiB --shards 3 --seed 7 \
    --upload "s3://${MODELPLANE_S3_BUCKET}/smoke/" --summary >"${WORK}/summary.json"
  python3 "${E2E_DIR}/checkpoint/generate.py" --out "${src}" --verify
  mkdir -p "${dst}"
  s5cmd cp "s3://${MODELPLANE_S3_BUCKET}/smoke/*" "${dst}/"
  (cd "${src}" && sha256sum -- * | sort -k2) >"${WORK}/a.sums"
  (cd "${dst}" && sha256sum -- * | sort -k2) >"${WORK}/b.sums"
  cat "${WORK}/b.sums"
  diff "${WORK}/a.sums" "${WORK}/b.sums"
  # The summary's digests are the ones the bytes really have.
  python3 - "${WORK}/summary.json" "${WORK}/b.sums" <<'EOF'
import json, sys
summary = json.load(open(sys.argv[1]))
got = dict(reversed(line.split()) for line in open(sys.argv[2]))
assert all(got[f["path"]] == f["sha256"] for f in summary["files"]), "summary digests differ"
EOF
}

check_etcd_compaction() {
  # Later tests compact etcd under a running apiserver (watch resumption, "too old resource
  # version"); show that etcdctl reaches etcd and the apiserver keeps serving afterwards.
  local rev
  rev="$(etcdctl endpoint status -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])')"
  etcdctl compaction "${rev}"
  kubectl get nodes -o name | grep -c .
  k get deploy/web
}

check_apiserver_restart() {
  # `cluster.sh restart kube-apiserver` (a crash and a supervisor restart): the same data and
  # ports come back, and the controllers carry on (a new replica gets scheduled and runs).
  "${CLUSTER}" restart kube-apiserver
  k get deploy/web
  k scale deploy/web --replicas=4
  wait_until 60 pods_running app=web 4
}

# ours PID: true if PID is a live (not zombie) process of this cluster. Every component has
# the state dir in its arguments; a PID or port that another program reuses meanwhile (other
# clusters run on this machine too) is not ours.
ours() {
  [[ -e "/proc/$1/stat" && "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]] &&
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "${MODELPLANE_E2E_STATE}"
}

check_down_clean() {
  local pids ports p owner
  pids="$(awk '{print $1}' "${MODELPLANE_E2E_STATE}"/pids/*)"
  # shellcheck disable=SC1091
  ports="$(source "${MODELPLANE_E2E_STATE}/ports"; echo "${ETCD_PORT} ${ETCD_PEER_PORT} ${APISERVER_PORT} ${MINIO_PORT} ${MINIO_CONSOLE_PORT} ${KWOK_PORT}")"
  "${CLUSTER}" down
  for p in ${pids}; do
    if ours "${p}"; then echo "pid ${p} still alive"; return 1; fi
  done
  for p in ${ports}; do
    for owner in $(ss -Hltnp "sport = :${p}" | grep -o 'pid=[0-9]*' | cut -d= -f2); do
      if ours "${owner}"; then echo "port ${p} still held by pid ${owner}"; return 1; fi
      echo "port ${p} now used by an unrelated process (pid ${owner})"
    done
  done
  [[ ! -d "${MODELPLANE_E2E_STATE}" ]] || { echo "state dir left behind"; return 1; }
}

# --- run ----------------------------------------------------------------------------------
if [[ "${REUSE}" != 1 ]]; then
  say "building tools (cached after the first run)"
  "${E2E_DIR}/tools.sh" build >/dev/null
  start_extender_stub
  check "cluster up" check_up
  [[ -f "${WORK}/up.seconds" ]] && check "cluster up within ${UP_BUDGET_S}s" check_up_fast
fi
if "${CLUSTER}" status >/dev/null; then
  eval "$("${CLUSTER}" env)"
  if [[ "${REUSE}" == 1 ]]; then
    # Start from a clean slate on a reused cluster (objects of an earlier run).
    kubectl delete namespace "${NS}" --ignore-not-found --wait=true --timeout=60s >/dev/null
  fi
  check "${NODES} KWOK GPU nodes Ready in 2+ zones" check_nodes
  check "server reports the pinned version" check_server_version
  check "CRDs from crds/ apply and serve" check_crds_apply
  check "ModelRevision spec.files is immutable (CEL)" check_modelrevision_immutable
  check "Deployment of 3 replicas Running on KWOK nodes" check_deployment
  check "kubectl rollout pause, resume, undo" check_rollout_pause_resume_undo
  check "scheduling gate holds a pod until removed" check_scheduling_gate
  if [[ "${REUSE}" != 1 ]]; then
    check "kube-scheduler calls the extender at MODELPLANE_EXTENDER_URL" check_extender
  fi
  check "helm lint, server dry-run, install and uninstall of charts/modelplane" check_helm
  check "checkpoint generator reproduces the pinned sample digests" check_generator_deterministic
  check "s5cmd put/get of a generated checkpoint matches sha256" check_s3_roundtrip
  check "etcdctl compacts etcd; the apiserver keeps serving" check_etcd_compaction
  check "kube-apiserver restart: state kept, controllers recover" check_apiserver_restart
  if [[ "${MODELPLANE_E2E_KEEP:-0}" != 1 && "${REUSE}" != 1 ]]; then
    check "down leaves no process, port or state" check_down_clean
  fi
fi

say "smoke took $((SECONDS - smoke_start))s"
say "${PASSED} passed, ${FAILED} failed"
(( FAILED == 0 ))
