#!/usr/bin/env bash
# A real local Kubernetes control plane for tests and the demo, with no container runtime:
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as plain processes,
# KWOK plays N fake GPU nodes (pods go Running without containers), MinIO is the object store.
#
#   e2e/cluster.sh up       start everything (refuses if this state dir is already up)
#   e2e/cluster.sh down     stop exactly the processes `up` started, remove the state dir
#   e2e/cluster.sh status   show each component and whether it is alive
#   e2e/cluster.sh env      print export lines: KUBECONFIG, PATH, S3 settings
#   e2e/cluster.sh issue client NAME SUBJECT      a client certificate of the cluster CA and
#                                                 config/NAME.kubeconfig (real nodes' kubelets)
#   e2e/cluster.sh issue server NAME SUBJECT SANS a serving certificate (pki/NAME.{crt,key})
#
# Environment:
#   MODELPLANE_E2E_STATE      state folder (default /tmp/modelplane-e2e)
#   MODELPLANE_E2E_NODES      number of KWOK GPU nodes (default 4)
#   MODELPLANE_E2E_GPUS       nvidia.com/gpu per node (default 8)
#   MODELPLANE_E2E_NODE_LEASE_SECONDS  KWOK's node lease (default 40; renewed every quarter of
#                             it): thousands of nodes at 40 s are hundreds of lease writes a
#                             second, so bench/extender/cycle.sh lengthens it, and the
#                             controller-manager's grace period with it
#   MODELPLANE_EXTENDER_URL   if set, kube-scheduler calls this modelplane extender
#                             (e.g. http://127.0.0.1:8888/scheduler); see write_scheduler_config
#   MODELPLANE_E2E_AUDIT_POLICY  if set, an audit policy file (e.g. e2e/audit-policy.yaml):
#                             kube-apiserver writes its audit log to logs/audit.log (JSON lines)
#   MODELPLANE_E2E_PROFILING  true: kube-apiserver serves /debug/pprof (bench/operator profiles it)
#   MODELPLANE_E2E_HOST_IP    if set, an address of this host on the bridge of real nodes' pods
#                             (e2e/node.sh makes it): kube-apiserver and MinIO listen there instead
#                             of on 127.0.0.1, so that pods reach them, and the `kubernetes`
#                             Service points at it (kube-proxy on the real nodes routes it)
#
# Everything listens on 127.0.0.1 only (or MODELPLANE_E2E_HOST_IP), on ports picked free at `up`.
set -euo pipefail

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${MODELPLANE_E2E_STATE:-/tmp/modelplane-e2e}"
NODES="${MODELPLANE_E2E_NODES:-4}"
GPUS_PER_NODE="${MODELPLANE_E2E_GPUS:-8}"
NODE_LEASE_SECONDS="${MODELPLANE_E2E_NODE_LEASE_SECONDS:-40}"
ZONES=(zone-a zone-b)
S3_BUCKET="modelplane"
# Test-only credentials for a loopback MinIO; never used anywhere else.
S3_ACCESS_KEY="modelplane"
S3_SECRET_KEY="modelplane-e2e-secret"

PKI="${STATE}/pki"
# Where kube-apiserver and MinIO listen; `up` records it with the ports.
LISTEN_IP="${MODELPLANE_E2E_HOST_IP:-127.0.0.1}"
# The `kubernetes` Service's address: the first of --service-cluster-ip-range.
SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SERVICE_IP=10.96.0.1
LOGS="${STATE}/logs"
PIDS="${STATE}/pids"
CONF="${STATE}/config"

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# MODELPLANE_E2E_BIN points at another bin dir (e.g. tools built elsewhere); default: the cache.
bin_dir() {
  if [[ -n "${MODELPLANE_E2E_BIN:-}" ]]; then echo "${MODELPLANE_E2E_BIN}"; return 0; fi
  "${E2E_DIR}/tools.sh" bindir
}

# --- process bookkeeping: start, alive, recorded_pid, stop_components, wait_for -------------
# shellcheck source=e2e/lib/processes.sh
source "${E2E_DIR}/lib/processes.sh"

# --- ports --------------------------------------------------------------------------------
# Free loopback ports below the ephemeral range (e2e/free_ports.py says why).
pick_ports() { python3 "${E2E_DIR}/free_ports.py" "$1"; }

# --- PKI ----------------------------------------------------------------------------------
# ECDSA P-256 keys: an RSA-2048 key takes up to a second on a loaded 2-core machine and
# `up` makes seven; Kubernetes accepts EC keys everywhere here (TLS, client certs, ES256
# service-account tokens).
new_key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

# sign NAME SUBJECT EXTENSIONS: key + certificate signed by the cluster CA.
sign() {
  local name="$1" subject="$2" ext="$3"
  new_key "${PKI}/${name}.key"
  openssl req -new -key "${PKI}/${name}.key" -subj "${subject}" -out "${PKI}/${name}.csr" 2>/dev/null
  printf '%s\n' "${ext}" >"${PKI}/${name}.ext"
  openssl x509 -req -in "${PKI}/${name}.csr" -CA "${PKI}/ca.crt" -CAkey "${PKI}/ca.key" \
    -CAcreateserial -days 365 -sha256 -extfile "${PKI}/${name}.ext" \
    -out "${PKI}/${name}.crt" 2>/dev/null
}

make_pki() {
  mkdir -p "${PKI}"
  new_key "${PKI}/ca.key"
  openssl req -x509 -new -key "${PKI}/ca.key" -subj "/CN=modelplane-e2e-ca" -days 365 \
    -sha256 -out "${PKI}/ca.crt" 2>/dev/null
  local client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
  sign apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:${LISTEN_IP},IP:${KUBERNETES_SERVICE_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  # system:masters bypasses RBAC: the admin identity for kubectl, tests and KWOK.
  sign admin "/O=system:masters/CN=kubernetes-admin" "${client}"
  # The built-in RBAC roles bind these exact user names.
  sign controller-manager "/CN=system:kube-controller-manager" "${client}"
  sign scheduler "/CN=system:kube-scheduler" "${client}"
  # Service-account token signing key pair (the apiserver's TokenRequest signs and verifies;
  # the controller-manager signs legacy tokens).
  new_key "${PKI}/sa.key"
  openssl ec -in "${PKI}/sa.key" -pubout -out "${PKI}/sa.pub" 2>/dev/null
  rm -f "${PKI}"/*.csr "${PKI}"/*.ext
}

# write_kubeconfig FILE CERT_NAME
write_kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: modelplane-e2e
  cluster:
    server: https://${LISTEN_IP}:${APISERVER_PORT}
    certificate-authority: ${PKI}/ca.crt
users:
- name: $2
  user:
    client-certificate: ${PKI}/$2.crt
    client-key: ${PKI}/$2.key
contexts:
- name: modelplane-e2e
  context:
    cluster: modelplane-e2e
    user: $2
current-context: modelplane-e2e
EOF
}

# --- scheduler ----------------------------------------------------------------------------
write_scheduler_config() {
  cat >"${CONF}/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: ${CONF}/scheduler.kubeconfig
leaderElection:
  leaderElect: false
profiles:
# Pods that do not ask for modelplane keep the stock behaviour.
- schedulerName: default-scheduler
# Serving pods set spec.schedulerName: modelplane-scheduler. Today it has the default
# plugins; the extender below (when configured) adds cache-aware filtering and scoring.
- schedulerName: modelplane-scheduler
EOF
  # MODELPLANE EXTENDER: extenders apply to every profile in one scheduler process, so the
  # extender itself ignores pods that are not modelplane's (it sees the pod spec).
  # ignorable: a down extender must not stop all scheduling in tests.
  if [[ -n "${MODELPLANE_EXTENDER_URL:-}" ]]; then
    cat >>"${CONF}/scheduler.yaml" <<EOF
extenders:
- urlPrefix: ${MODELPLANE_EXTENDER_URL}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 5
  enableHTTPS: false
  nodeCacheCapable: false
  ignorable: true
  httpTimeout: 5s
EOF
  fi
}

# --- nodes --------------------------------------------------------------------------------
write_nodes() {
  local i out="${CONF}/nodes.yaml"
  : >"${out}"
  for ((i = 0; i < NODES; i++)); do
    local zone="${ZONES[i % ${#ZONES[@]}]}"
    cat >>"${out}" <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-${i}
  annotations:
    # KWOK manages exactly the nodes carrying this annotation.
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: gpu-node-${i}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    topology.kubernetes.io/zone: ${zone}
    topology.kubernetes.io/region: e2e
    modelplane.io/gpu: "true"
spec: {}
status:
  allocatable:
    cpu: "64"
    memory: 512Gi
    ephemeral-storage: 2Ti
    pods: "110"
    nvidia.com/gpu: "${GPUS_PER_NODE}"
  capacity:
    cpu: "64"
    memory: 512Gi
    ephemeral-storage: 2Ti
    pods: "110"
    nvidia.com/gpu: "${GPUS_PER_NODE}"
EOF
  done
}

# start_apiserver BIN: kube-apiserver with this cluster's flags; `up` and `restart` share it.
start_apiserver() {
  local bin="$1"
  local audit=()
  # Opt-in (`up` copies the policy): one line per request the policy selects, never rotated,
  # so a checker sees every request of a run; a restart appends to the same file.
  if [[ -f "${CONF}/audit-policy.yaml" ]]; then
    audit=(--audit-policy-file="${CONF}/audit-policy.yaml" --audit-log-path="${LOGS}/audit.log"
           --audit-log-format=json --audit-log-maxsize=0 --audit-log-maxbackup=0)
  fi
  # --endpoint-reconciler-type=none: the `kubernetes` Service endpoint would be 127.0.0.1,
  # which Endpoints validation rejects; nothing in a KWOK cluster dials it anyway. With real
  # nodes it is the host's bridge address, which their pods reach through kube-proxy.
  local endpoints=(--endpoint-reconciler-type=none)
  [[ "${LISTEN_IP}" != 127.0.0.1 ]] && endpoints=(--endpoint-reconciler-type=lease)
  # --watch-cache-sizes=configmaps#0: ConfigMap watches are served by etcd itself, so the
  # client tests can expire a watch's resourceVersion for real by compacting etcd (the watch
  # cache would otherwise keep serving the old version from memory).
  start kube-apiserver "${bin}/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:${ETCD_PORT}" \
    --bind-address="${LISTEN_IP}" --advertise-address="${LISTEN_IP}" \
    --secure-port="${APISERVER_PORT}" "${endpoints[@]}" \
    --tls-cert-file="${PKI}/apiserver.crt" --tls-private-key-file="${PKI}/apiserver.key" \
    --client-ca-file="${PKI}/ca.crt" \
    --kubelet-client-certificate="${PKI}/admin.crt" --kubelet-client-key="${PKI}/admin.key" \
    --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NodeRestriction \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="${PKI}/sa.pub" \
    --service-account-signing-key-file="${PKI}/sa.key" \
    --service-cluster-ip-range="${SERVICE_CIDR}" \
    --allow-privileged=true --profiling="${MODELPLANE_E2E_PROFILING:-false}" \
    --watch-cache-sizes=configmaps#0 \
    "${audit[@]}"
}

# --- commands -----------------------------------------------------------------------------
load_ports() {
  # shellcheck disable=SC1091
  source "${STATE}/ports"
  LISTEN_IP="${LISTEN_IP:-127.0.0.1}"
}

cmd_up() {
  local start_time=${SECONDS}
  if [[ -f "${STATE}/up.stamp" ]]; then
    if all_alive; then
      log "already up (state ${STATE}); reusing it"
      return 0
    fi
    die "state ${STATE} exists but some components are dead: run '$0 down' first"
  fi
  if [[ -d "${STATE}" ]]; then
    # A half-started cluster: clean it first so no process is left behind.
    log "found a partial state dir, cleaning it"
    cmd_down
  fi

  local bin
  bin="$(bin_dir)" || die "tools are not built: run e2e/tools.sh build"
  local tools_dir
  tools_dir="$(dirname "${bin}")"
  mkdir -p "${PKI}" "${LOGS}" "${PIDS}" "${CONF}" "${STATE}/etcd" "${STATE}/minio"
  # From here on a failure (set -e or die) must not leave processes: stop what was started.
  trap up_failed EXIT

  read -r ETCD_PORT ETCD_PEER_PORT APISERVER_PORT MINIO_PORT MINIO_CONSOLE_PORT KWOK_PORT \
    < <(pick_ports 6)
  cat >"${STATE}/ports" <<EOF
ETCD_PORT=${ETCD_PORT}
ETCD_PEER_PORT=${ETCD_PEER_PORT}
APISERVER_PORT=${APISERVER_PORT}
MINIO_PORT=${MINIO_PORT}
MINIO_CONSOLE_PORT=${MINIO_CONSOLE_PORT}
KWOK_PORT=${KWOK_PORT}
LISTEN_IP=${LISTEN_IP}
EOF
  echo "${bin}" >"${STATE}/bindir"

  make_pki
  write_kubeconfig "${CONF}/admin.kubeconfig" admin
  write_kubeconfig "${CONF}/controller-manager.kubeconfig" controller-manager
  write_kubeconfig "${CONF}/scheduler.kubeconfig" scheduler
  write_scheduler_config
  write_nodes
  if [[ -n "${MODELPLANE_E2E_AUDIT_POLICY:-}" ]]; then
    cp "${MODELPLANE_E2E_AUDIT_POLICY}" "${CONF}/audit-policy.yaml"
  fi
  # KWOK's stock stages, changed so gated pods wait for their readiness gates (kubelet rule).
  python3 "${E2E_DIR}/kwok/readiness-gates.py" <"${tools_dir}/share/kwok-stages.yaml" \
    >"${CONF}/kwok.yaml"

  # etcd: one member, loopback only. --unsafe-no-fsync: test data, and fsync on a shared
  # CI disk would dominate apiserver latency.
  start etcd "${bin}/etcd" \
    --name=e2e --data-dir="${STATE}/etcd" \
    --listen-client-urls="http://127.0.0.1:${ETCD_PORT}" \
    --advertise-client-urls="http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster="e2e=http://127.0.0.1:${ETCD_PEER_PORT}" \
    --unsafe-no-fsync=true --log-level=warn

  # MinIO starts now: it is independent of Kubernetes and takes a few seconds itself.
  MINIO_ROOT_USER="${S3_ACCESS_KEY}" MINIO_ROOT_PASSWORD="${S3_SECRET_KEY}" \
  MINIO_BROWSER=off MINIO_UPDATE=off \
    start minio "${bin}/minio" server --quiet \
      --address "${LISTEN_IP}:${MINIO_PORT}" --console-address "127.0.0.1:${MINIO_CONSOLE_PORT}" \
      "${STATE}/minio"

  wait_for etcd 20 curl -fsS "http://127.0.0.1:${ETCD_PORT}/health"

  start_apiserver "${bin}"

  local kubectl=("${bin}/kubectl" --kubeconfig="${CONF}/admin.kubeconfig")
  wait_for kube-apiserver 60 "${kubectl[@]}" get --raw=/readyz

  # --secure-port=0: no health endpoint to expose; liveness is checked by PID and by
  # the work they do (service accounts appear, pods get scheduled).
  # A lease longer than the default needs a grace period longer than its renewal interval.
  local grace=()
  ((NODE_LEASE_SECONDS > 40)) && grace=(--node-monitor-grace-period="$((NODE_LEASE_SECONDS))s")
  # Its node controller takes the not-ready taint off each new node once it is Ready, with the
  # client's 20 requests a second: about 5 nodes a second (measured at 5,000 nodes), so
  # thousands of nodes stayed unschedulable for many minutes after reporting Ready, and 500
  # (bench/operator) took longer than the wait below allows. From 100 nodes on: at least 50 a
  # second (500 nodes in about 40 s), NODES/25 past 1,250.
  local api_rate=() qps=$((NODES / 25 > 50 ? NODES / 25 : 50))
  ((NODES > 100)) && api_rate=(--kube-api-qps="${qps}" --kube-api-burst="$((qps * 2))")
  start kube-controller-manager "${bin}/kube-controller-manager" "${grace[@]}" "${api_rate[@]}" \
    --kubeconfig="${CONF}/controller-manager.kubeconfig" \
    --secure-port=0 --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="${PKI}/sa.key" \
    --root-ca-file="${PKI}/ca.crt" \
    --cluster-signing-cert-file="${PKI}/ca.crt" --cluster-signing-key-file="${PKI}/ca.key" \
    --concurrent-deployment-syncs=5

  start kube-scheduler "${bin}/kube-scheduler" \
    --config="${CONF}/scheduler.yaml" --secure-port=0

  start kwok "${bin}/kwok" \
    --config="${CONF}/kwok.yaml" \
    --kubeconfig="${CONF}/admin.kubeconfig" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr=10.244.0.0/16 --node-ip=127.0.0.1 \
    --server-address="127.0.0.1:${KWOK_PORT}" \
    --node-lease-duration-seconds="${NODE_LEASE_SECONDS}"

  "${kubectl[@]}" apply -f "${CONF}/nodes.yaml" >/dev/null

  wait_for "${NODES} Ready, schedulable nodes" "$((60 + NODES / 20))" nodes_ready "${kubectl[@]}"
  # Pods need the default ServiceAccount, which the controller-manager creates.
  wait_for "default service account" 60 "${kubectl[@]}" -n default get serviceaccount default
  wait_for minio 60 curl -fsS "http://${LISTEN_IP}:${MINIO_PORT}/minio/health/ready"
  s3_env "${bin}/s5cmd" mb "s3://${S3_BUCKET}" >/dev/null

  trap - EXIT
  date -u +%Y-%m-%dT%H:%M:%SZ >"${STATE}/up.stamp"
  log "up in $((SECONDS - start_time))s; run: eval \"\$($0 env)\""
}

# nodes_ready KUBECTL...: true when all NODES KWOK nodes report Ready=True and none carries
# the controller-manager's not-ready or unreachable taint any more (until it is gone, the
# scheduler places nothing there, whatever the node's condition says).
nodes_ready() {
  local ready
  ready="$("$@" get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.taints[*].key}{"\n"}{end}' |
    grep '^True' | grep -c -v -e 'node.kubernetes.io/not-ready' -e 'node.kubernetes.io/unreachable')" || true
  [[ "${ready}" -eq "${NODES}" ]]
}

# s3_env COMMAND...: runs COMMAND with the S3 settings of this cluster.
s3_env() {
  AWS_ACCESS_KEY_ID="${S3_ACCESS_KEY}" AWS_SECRET_ACCESS_KEY="${S3_SECRET_KEY}" \
  AWS_REGION=us-east-1 S3_ENDPOINT_URL="http://${LISTEN_IP}:${MINIO_PORT}" "$@"
}

COMPONENTS=(etcd minio kube-apiserver kube-controller-manager kube-scheduler kwok)

all_alive() {
  local c
  for c in "${COMPONENTS[@]}"; do alive "${c}" || return 1; done
}

up_failed() {
  local rc=$?
  trap - EXIT
  log "up failed; last lines of ${LOGS}:"
  tail -n 15 "${LOGS}"/*.log >&2 || true
  cmd_down
  exit "$(( rc == 0 ? 1 : rc ))"
}

cmd_down() {
  [[ -d "${STATE}" ]] || { log "nothing to stop (${STATE} does not exist)"; return 0; }
  # Reverse start order: clients go before the servers they talk to.
  local i reversed=()
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do reversed+=("${COMPONENTS[i]}"); done
  stop_components "${reversed[@]}"
  rm -rf "${STATE}"
  log "down"
}

cmd_status() {
  if [[ ! -d "${STATE}" ]]; then
    echo "down (no state at ${STATE})"
    return 1
  fi
  local c rc=0
  for c in "${COMPONENTS[@]}"; do
    if alive "${c}"; then
      printf '%-24s running pid=%s\n' "${c}" "$(recorded_pid "${c}")"
    else
      printf '%-24s NOT RUNNING\n' "${c}"; rc=1
    fi
  done
  [[ -f "${STATE}/ports" ]] && { load_ports; echo "apiserver https://${LISTEN_IP}:${APISERVER_PORT}  minio http://${LISTEN_IP}:${MINIO_PORT}"; }
  [[ -f "${STATE}/up.stamp" ]] || { echo "up not complete"; rc=1; }
  return "${rc}"
}

cmd_env() {
  [[ -f "${STATE}/up.stamp" ]] || die "cluster is not up (state ${STATE})"
  load_ports
  cat <<EOF
export KUBECONFIG=${CONF}/admin.kubeconfig
export PATH=$(cat "${STATE}/bindir"):\$PATH
export AWS_ACCESS_KEY_ID=${S3_ACCESS_KEY}
export AWS_SECRET_ACCESS_KEY=${S3_SECRET_KEY}
export AWS_REGION=us-east-1
export S3_ENDPOINT_URL=http://${LISTEN_IP}:${MINIO_PORT}
export MODELPLANE_S3_BUCKET=${S3_BUCKET}
export ETCDCTL_ENDPOINTS=http://127.0.0.1:${ETCD_PORT}
export MODELPLANE_E2E_STATE=${STATE}
EOF
}

# restart kube-apiserver: kill -9 it and start it again with the same flags, as a crash and a
# supervisor restart would; tests use it to check that clients and informers recover.
cmd_restart() {
  [[ "${1:-}" == kube-apiserver ]] || die "only 'restart kube-apiserver' is supported"
  [[ -f "${STATE}/up.stamp" ]] || die "cluster is not up (state ${STATE})"
  load_ports
  local bin pid
  bin="$(cat "${STATE}/bindir")"
  if alive kube-apiserver; then
    pid="$(recorded_pid kube-apiserver)"
    kill -9 "${pid}"
    while kill -0 "${pid}" 2>/dev/null; do sleep 0.05; done
  fi
  start_apiserver "${bin}"
  wait_for kube-apiserver 60 "${bin}/kubectl" --kubeconfig="${CONF}/admin.kubeconfig" get --raw=/readyz
}

# issue client|server NAME SUBJECT [SANS]: a certificate of this cluster's CA for a component
# that joins later (e2e/node.sh: kubelet, kube-proxy); prints the files' folder.
cmd_issue() {
  [[ -f "${STATE}/up.stamp" ]] || die "cluster is not up (state ${STATE})"
  load_ports
  local kind="${1:-}" name="${2:-}" subject="${3:-}" sans="${4:-}"
  [[ "${name}" =~ ^[a-z0-9][a-z0-9.-]*$ && -n "${subject}" ]] || die "usage: issue client|server NAME SUBJECT [SANS]"
  case "${kind}" in
    client)
      sign "${name}" "${subject}" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
      write_kubeconfig "${CONF}/${name}.kubeconfig" "${name}"
      ;;
    server)
      [[ -n "${sans}" ]] || die "a serving certificate needs SANS, e.g. IP:10.88.0.1,DNS:node-0"
      sign "${name}" "${subject}" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=${sans}"
      ;;
    *) die "usage: issue client|server NAME SUBJECT [SANS]" ;;
  esac
  rm -f "${PKI}/${name}.csr" "${PKI}/${name}.ext"
  echo "${PKI}"
}

# etcdctl ARGS...: etcdctl against this cluster's etcd (tests compact it to expire watches).
cmd_etcdctl() {
  [[ -f "${STATE}/up.stamp" ]] || die "cluster is not up (state ${STATE})"
  load_ports
  # The flag wins over an ETCDCTL_ENDPOINTS from `env`, which etcdctl refuses to have both of.
  env -u ETCDCTL_ENDPOINTS "$(cat "${STATE}/bindir")/etcdctl" \
    --endpoints="http://127.0.0.1:${ETCD_PORT}" "$@"
}

main() {
  case "${1:-}" in
    restart) shift; cmd_restart "$@" ;;
    etcdctl) shift; cmd_etcdctl "$@" ;;
    issue) shift; cmd_issue "$@" ;;
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) cmd_env ;;
    *) echo "usage: $0 up|down|status|env|restart kube-apiserver|etcdctl ARGS...|issue ..." >&2; return 2 ;;
  esac
}

main "$@"; exit "$?"
