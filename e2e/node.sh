#!/usr/bin/env bash
# A real Kubernetes node on this host, joined to the local control plane of e2e/cluster.sh:
# containerd, runc and the CNI plugins from Debian's packages, kubelet and kube-proxy of the
# control plane's release (e2e/tools.sh node-build), pods in network namespaces on a bridge of
# their own. Beside it, what a real cluster has and a KWOK cluster does not need: an image
# registry on loopback (the CNCF distribution registry) and cluster DNS (CoreDNS) for the pods.
# docs/real-node.md says what is real here and what this host shares.
#
#   e2e/node.sh net-up   make the pods' bridge and this host's address on it (print the address);
#                        run before `cluster.sh up` with MODELPLANE_E2E_HOST_IP set to it
#   e2e/node.sh up       registry, CoreDNS, containerd, kubelet, kube-proxy; wait for Node Ready
#   e2e/node.sh down     stop them, tear down what kubelet left (mounts, containers, network
#                        namespaces, cgroups), remove the bridge
#   e2e/node.sh env      print export lines: MODELPLANE_REGISTRY (host:port), MODELPLANE_NODE
#   e2e/node.sh push OCI_ARCHIVE NAME:TAG   push an image archive to the registry (skopeo)
#   e2e/node.sh image FOLDER NAME:TAG ENTRYPOINT USER   a one-layer image of FOLDER, pushed
#
# Environment: MODELPLANE_E2E_STATE (the cluster's state folder; this node's lives in
# real-node/ below it), MODELPLANE_REAL_NODE (the node's name, default real-node-0).
set -euo pipefail

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${MODELPLANE_E2E_STATE:-/tmp/modelplane-e2e}"
NODE_NAME="${MODELPLANE_REAL_NODE:-real-node-0}"
NODE_STATE="${STATE}/real-node"
LOGS="${NODE_STATE}/logs"
PIDS="${NODE_STATE}/pids"
CONF="${NODE_STATE}/config"

# The pods' network: one bridge, this host at .0.1 (the gateway, where kube-apiserver, MinIO and
# CoreDNS listen), the node's pods from 10.88.1.2 on. Traffic stays on this host: no route out,
# no masquerading.
BRIDGE=mpbr0
HOST_IP=10.88.0.1
POD_CIDR=10.88.0.0/16
POD_RANGE_START=10.88.1.2
POD_RANGE_END=10.88.1.254
# kubelet's root folder stays the default, so the chart's nodeAgent.csi.kubeletDir default fits.
KUBELET_DIR=/var/lib/kubelet
CGROUP_ROOT="/modelplane-${NODE_NAME}"
# Every hierarchy this host mounts (cgroup v1 controllers, name=systemd, the unified one):
# kubelet requires its root in each.
mapfile -t CGROUP_CONTROLLERS < <(find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
# Built here as the registry's first image: containerd's sandbox (pause) container.
PAUSE_IMAGE_NAME=modelplane/pause:3.10
# The bridge, kubelet's folder, the cgroup root and kube-proxy's rules belong to the host, so one
# real node at a time: this file names the state folder of the one that is up.
OWNER_FILE=/run/modelplane-real-node.owner
DEBIAN_PACKAGES=(containerd runc containernetworking-plugins iptables conntrack skopeo umoci
                 busybox-static)

log() { printf '[node] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# shellcheck source=e2e/lib/processes.sh
source "${E2E_DIR}/lib/processes.sh"

install_packages() {
  local missing=() package
  for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "${package}" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("${package}")
  done
  ((${#missing[@]})) || return 0
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# owned_elsewhere: true if another state folder's real node holds this host's parts and still
# runs (its kubelet or containerd alive); a dead one's parts are taken over and cleaned.
owned_elsewhere() {
  local owner
  owner=$(cat "${OWNER_FILE}" 2>/dev/null) || return 1
  [[ "${owner}" != "${NODE_STATE}" && -d "${owner}/pids" ]] || return 1
  PIDS="${owner}/pids" alive kubelet || PIDS="${owner}/pids" alive containerd
}

cmd_net_up() {
  [[ $(id -u) -eq 0 ]] || die "a real node needs root (containerd, kubelet, mounts)"
  if owned_elsewhere; then
    die "the real node of $(cat "${OWNER_FILE}") is up on this host (one at a time: they share the bridge and ${KUBELET_DIR}); take it down first"
  fi
  mkdir -p "${NODE_STATE}"
  echo "${NODE_STATE}" >"${OWNER_FILE}"
  if ! ip link show "${BRIDGE}" >/dev/null 2>&1; then
    ip link add "${BRIDGE}" type bridge
  fi
  ip addr show dev "${BRIDGE}" | grep -q "inet ${HOST_IP}/" || ip addr add "${HOST_IP}/16" dev "${BRIDGE}"
  ip link set "${BRIDGE}" up
  # Routing between the bridge and this host's own addresses, and bridged traffic through
  # iptables so that kube-proxy's Service rules apply between pods on the same bridge.
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  echo "${HOST_IP}"
}

cluster_env() {
  local env
  env="$(MODELPLANE_E2E_STATE="${STATE}" "${E2E_DIR}/cluster.sh" env)" || die "the cluster is not up"
  eval "${env}"
  grep -q "^LISTEN_IP=${HOST_IP}$" "${STATE}/ports" ||
    die "the cluster listens on 127.0.0.1 only: bring it up with MODELPLANE_E2E_HOST_IP=${HOST_IP}"
}

# --- images -------------------------------------------------------------------------------

# image_from_folder FOLDER NAME:TAG ENTRYPOINT USER: a one-layer OCI image of FOLDER pushed to
# the registry.
image_from_folder() {
  local folder="$1" reference="$2" entrypoint="$3" user="$4"
  local work="${NODE_STATE}/image-work/${reference//[\/:]/_}"
  rm -rf "${work}"
  mkdir -p "${work}"
  umoci init --layout "${work}/layout"
  umoci new --image "${work}/layout:build"
  umoci unpack --image "${work}/layout:build" "${work}/bundle" >/dev/null
  cp -a "${folder}/." "${work}/bundle/rootfs/"
  umoci repack --image "${work}/layout:build" "${work}/bundle"
  umoci config --image "${work}/layout:build" --config.entrypoint "${entrypoint}" \
    --config.user "${user}" --config.env PATH=/usr/local/bin:/usr/bin:/bin \
    --architecture amd64 --os linux
  push "oci:${work}/layout:build" "${reference}"
  rm -rf "${work}"
}

push() {
  skopeo copy --quiet --dest-tls-verify=false "$1" "docker://127.0.0.1:${REGISTRY_PORT}/$2"
}

# The sandbox image: Kubernetes' own pause.c (build/pause/linux in the pinned module), static.
build_pause_image() {
  local source folder
  source="$(cd "${E2E_DIR}/tools/k8s-node" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
  [[ -f "${source}" ]] || die "pause.c not found at ${source}"
  folder="${NODE_STATE}/pause-root"
  mkdir -p "${folder}"
  gcc -Os -static -DVERSION=3.10-modelplane -o "${folder}/pause" "${source}"
  strip "${folder}/pause"
  image_from_folder "${folder}" "${PAUSE_IMAGE_NAME}" /pause 65535:65535
}

# --- components ---------------------------------------------------------------------------

write_registry_config() {
  cat >"${CONF}/registry.yaml" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: ${NODE_STATE}/registry}
  delete: {enabled: true}
http:
  addr: 127.0.0.1:${REGISTRY_PORT}
EOF
}

write_corefile() {
  cat >"${CONF}/Corefile" <<EOF
.:53 {
    bind ${HOST_IP}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${KUBECONFIG} modelplane-e2e
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 10
}
EOF
}

write_containerd_config() {
  mkdir -p "${CONF}/cni"
  cat >"${CONF}/containerd.toml" <<EOF
version = 2
root = "${NODE_STATE}/containerd/root"
state = "${NODE_STATE}/containerd/state"
[grpc]
  address = "${NODE_STATE}/containerd/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "${NODE_STATE}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "127.0.0.1:${REGISTRY_PORT}/${PAUSE_IMAGE_NAME}"
  # This host withholds CAP_SYS_RESOURCE even from root, so no process may lower its
  # oom_score_adj (kubelet asks -998 for sandboxes, -997 for Guaranteed pods): containerd keeps
  # each at least its own score instead of failing the container.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${CONF}/cni"
EOF
  cat >"${CONF}/cni/10-modelplane.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "modelplane-real-nodes",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "${NODE_STATE}/cni-ipam",
        "ranges": [[{"subnet": "${POD_CIDR}", "rangeStart": "${POD_RANGE_START}",
                     "rangeEnd": "${POD_RANGE_END}", "gateway": "${HOST_IP}"}]],
        "routes": [{"dst": "${POD_CIDR}"}, {"dst": "10.96.0.0/16"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

write_kubelet_config() {
  cat >"${CONF}/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${HOST_IP}
port: ${KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${KUBELET_HEALTHZ_PORT}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${PKI_DIR}/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: ${PKI_DIR}/${NODE_NAME}-serving.crt
tlsPrivateKeyFile: ${PKI_DIR}/${NODE_NAME}-serving.key
containerRuntimeEndpoint: unix://${NODE_STATE}/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: ${CGROUP_ROOT}
# This host has cgroup v1 (docs/real-node.md); kubelet 1.35 refuses it unless told.
failCgroupV1: false
failSwapOn: false
clusterDNS: [${HOST_IP}]
clusterDomain: cluster.local
# Pods get cluster DNS only, never this host's resolvers.
resolvConf: ""
volumePluginDir: ${NODE_STATE}/volume-plugins
serializeImagePulls: false
maxPods: 30
# One disk shared with everything else on this host: evict only when it is really short.
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2%}
imageGCHighThresholdPercent: 100
EOF
}

write_kube_proxy_config() {
  cat >"${CONF}/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${CLUSTER_CONF}/system-kube-proxy.kubeconfig}
hostnameOverride: ${NODE_NAME}
mode: iptables
clusterCIDR: ${POD_CIDR}
healthzBindAddress: 127.0.0.1:${KUBE_PROXY_HEALTHZ_PORT}
metricsBindAddress: 127.0.0.1:${KUBE_PROXY_METRICS_PORT}
# Leave this host's conntrack sysctls as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

make_cgroups() {
  local controller
  for controller in "${CGROUP_CONTROLLERS[@]}"; do
    mkdir -p "/sys/fs/cgroup/${controller}${CGROUP_ROOT}"
  done
  # cpuset children start empty: give the root the parent's CPUs and memory nodes.
  local cpuset="/sys/fs/cgroup/cpuset${CGROUP_ROOT}"
  cat /sys/fs/cgroup/cpuset/cpuset.cpus >"${cpuset}/cpuset.cpus"
  cat /sys/fs/cgroup/cpuset/cpuset.mems >"${cpuset}/cpuset.mems"
}

node_ready() {
  kubectl get node "${NODE_NAME}" \
    -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True
}

cmd_up() {
  [[ $(id -u) -eq 0 ]] || die "a real node needs root (containerd, kubelet, mounts)"
  install_packages
  cluster_env
  [[ -f "${NODE_STATE}/up.stamp" ]] && { log "already up (${NODE_STATE})"; return 0; }
  local bin
  bin="$("${E2E_DIR}/tools.sh" node-bindir)" || die "node tools are not built: run e2e/tools.sh node-build"
  mkdir -p "${LOGS}" "${PIDS}" "${CONF}" "${NODE_STATE}/registry" "${NODE_STATE}/volume-plugins"
  trap up_failed EXIT

  read -r REGISTRY_PORT KUBELET_PORT KUBELET_HEALTHZ_PORT KUBE_PROXY_HEALTHZ_PORT \
    KUBE_PROXY_METRICS_PORT < <(python3 "${E2E_DIR}/free_ports.py" 5)
  cat >"${NODE_STATE}/ports" <<EOF
REGISTRY_PORT=${REGISTRY_PORT}
KUBELET_PORT=${KUBELET_PORT}
EOF
  PKI_DIR="${STATE}/pki"
  CLUSTER_CONF="${STATE}/config"
  local issue=("${E2E_DIR}/cluster.sh" issue)
  # The node's identity as the Node authorizer and NodeRestriction know it, its serving
  # certificate, and kube-proxy's identity (bound to system:node-proxier by default).
  "${issue[@]}" client "system-node-${NODE_NAME}" "/O=system:nodes/CN=system:node:${NODE_NAME}" >/dev/null
  "${issue[@]}" server "${NODE_NAME}-serving" "/CN=${NODE_NAME}" "IP:${HOST_IP},DNS:${NODE_NAME}" >/dev/null
  "${issue[@]}" client system-kube-proxy "/CN=system:kube-proxy" >/dev/null

  write_registry_config
  # No tracing collector here: without this the registry tries localhost:4318 every 5 s.
  OTEL_TRACES_EXPORTER=none start registry "${bin}/registry" serve "${CONF}/registry.yaml"
  wait_for registry 30 curl -fsS "http://127.0.0.1:${REGISTRY_PORT}/v2/"
  build_pause_image

  write_corefile
  start coredns "${bin}/coredns" -conf "${CONF}/Corefile"

  write_containerd_config
  start containerd containerd --config "${CONF}/containerd.toml"
  wait_for containerd 30 test -S "${NODE_STATE}/containerd/containerd.sock"

  make_cgroups
  write_kubelet_config
  mkdir -p "${KUBELET_DIR}"
  # The CSI plugin's mounts reach the pods through Bidirectional propagation, which needs
  # kubelet's folder on a shared mount; this host's / is private (no systemd), so the folder
  # becomes a shared mount of its own, as on a systemd host.
  if ! mountpoint -q "${KUBELET_DIR}"; then
    mount --bind "${KUBELET_DIR}" "${KUBELET_DIR}"
  fi
  mount --make-rshared "${KUBELET_DIR}"
  start kubelet "${bin}/kubelet" --config="${CONF}/kubelet.yaml" \
    --kubeconfig="${CLUSTER_CONF}/system-node-${NODE_NAME}.kubeconfig" \
    --root-dir="${KUBELET_DIR}" --hostname-override="${NODE_NAME}" --node-ip="${HOST_IP}" \
    --node-labels="type=real,topology.kubernetes.io/zone=zone-a,topology.kubernetes.io/region=e2e,modelplane.io/gpu=true" \
    --v=2

  write_kube_proxy_config
  start kube-proxy "${bin}/kube-proxy" --config="${CONF}/kube-proxy.yaml" --v=2

  wait_for "node ${NODE_NAME} Ready" 120 node_ready
  trap - EXIT
  date -u +%Y-%m-%dT%H:%M:%SZ >"${NODE_STATE}/up.stamp"
  log "node ${NODE_NAME} Ready; registry 127.0.0.1:${REGISTRY_PORT}"
}

up_failed() {
  local rc=$?
  trap - EXIT
  log "up failed; last lines of ${LOGS}:"
  tail -n 20 "${LOGS}"/*.log >&2 || true
  cmd_down
  exit "$(( rc == 0 ? 1 : rc ))"
}

# What kubelet and containerd leave on the host when they are stopped with pods still there:
# containers (their shims outlive containerd), mounts below kubelet's folder and containerd's
# root, the pods' network namespaces, the cgroups.
clean_host() {
  local socket="${NODE_STATE}/containerd/containerd.sock"
  if [[ -S "${socket}" ]]; then
    local task
    for task in $(ctr -a "${socket}" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "${socket}" -n k8s.io tasks kill -s SIGKILL "${task}" >/dev/null 2>&1 || true
    done
  fi
  # Shims of this containerd (they name its socket on their command line), and what they run.
  local pid
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address ${socket}" || true); do
    pkill -KILL -P "${pid}" 2>/dev/null || true
    kill -KILL "${pid}" 2>/dev/null || true
  done
  local mount
  for mount in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^(${KUBELET_DIR}|${NODE_STATE})/" | sort -r); do
    umount -l "${mount}" 2>/dev/null || true
  done
  mountpoint -q "${KUBELET_DIR}" && umount -l "${KUBELET_DIR}"
  for mount in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do
    ip netns delete "${mount}" 2>/dev/null || true
  done
  local controller
  for controller in "${CGROUP_CONTROLLERS[@]}"; do
    [[ -d "/sys/fs/cgroup/${controller}${CGROUP_ROOT}" ]] || continue
    find "/sys/fs/cgroup/${controller}${CGROUP_ROOT}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  rm -rf "${KUBELET_DIR}"
}

cmd_down() {
  if owned_elsewhere; then
    log "the host's real-node parts belong to $(cat "${OWNER_FILE}"); leaving them"
    rm -rf "${NODE_STATE}"
    return 0
  fi
  if [[ -d "${PIDS}" ]]; then
    stop_components kube-proxy kubelet
    clean_host
    stop_components containerd coredns registry
  fi
  # kube-proxy's rules point at addresses that are gone; it removes them itself.
  local bin
  if bin="$("${E2E_DIR}/tools.sh" node-bindir 2>/dev/null)"; then
    "${bin}/kube-proxy" --cleanup >/dev/null 2>&1 || true
  fi
  ip link show "${BRIDGE}" >/dev/null 2>&1 && ip link delete "${BRIDGE}"
  rm -rf "${NODE_STATE}" "${OWNER_FILE}"
  log "down"
}

cmd_env() {
  [[ -f "${NODE_STATE}/up.stamp" ]] || die "the node is not up (${NODE_STATE})"
  # shellcheck disable=SC1091
  source "${NODE_STATE}/ports"
  echo "export MODELPLANE_REGISTRY=127.0.0.1:${REGISTRY_PORT}"
  echo "export MODELPLANE_NODE=${NODE_NAME}"
  echo "export MODELPLANE_NODE_CONTAINERD=${NODE_STATE}/containerd/containerd.sock"
}

cmd_push() {
  [[ -f "${NODE_STATE}/up.stamp" ]] || die "the node is not up (${NODE_STATE})"
  (($# == 2)) || die "usage: push OCI_ARCHIVE NAME:TAG"
  # shellcheck disable=SC1091
  source "${NODE_STATE}/ports"
  push "oci-archive:$1" "$2"
}

cmd_image() {
  [[ -f "${NODE_STATE}/up.stamp" ]] || die "the node is not up (${NODE_STATE})"
  (($# == 4)) || die "usage: image FOLDER NAME:TAG ENTRYPOINT USER"
  # shellcheck disable=SC1091
  source "${NODE_STATE}/ports"
  image_from_folder "$@"
}

main() {
  case "${1:-}" in
    net-up) cmd_net_up ;;
    up) cmd_up ;;
    down) cmd_down ;;
    env) cmd_env ;;
    push) shift; cmd_push "$@" ;;
    image) shift; cmd_image "$@" ;;
    *) echo "usage: $0 net-up|up|down|env|push OCI_ARCHIVE NAME:TAG|image FOLDER NAME:TAG ENTRYPOINT USER" >&2
       return 2 ;;
  esac
}

main "$@"; exit "$?"
