#!/usr/bin/env bash
# Builds (once per machine) every binary the e2e cluster needs, from Go modules only:
# no container runtime and no binary downloads are available here.
#
#   e2e/tools.sh build       build what is missing, print the bin dir (idempotent)
#   e2e/tools.sh bindir      print the bin dir (does not build; fails if the build is incomplete)
#   e2e/tools.sh csi-sanity  print the path of csi-sanity (does not build; fails if missing)
#   e2e/tools.sh promtool    print the path of promtool (does not build; fails if missing)
#   e2e/tools.sh node-build  build what real nodes need (kubelet, kube-proxy, the registry,
#                            CoreDNS; e2e/real-node.sh), print their bin dir (idempotent)
#   e2e/tools.sh node-bindir print that bin dir (does not build; fails if incomplete)
#   e2e/tools.sh versions    print the pinned versions
#
# The cache folder is keyed by the pinned versions and the wrapper modules' go.mod/go.sum, so
# a version bump builds into a new folder and never mixes binaries. A stamp file is written
# only after every binary is built; an interrupted build resumes binary by binary.
#
# csi-sanity (the CSI conformance suite, docs/csi.md) has a folder and stamp of its own under
# the same cache root, keyed by its own version: adding it or bumping it never changes the key
# of the folder above, which would rebuild Kubernetes (12-45 minutes) on every machine.
# promtool (the chart's alert rules, e2e/monitoring/check.sh) is kept the
# same way, for the same reason.
set -euo pipefail

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# --- pinned versions (docs/control-plane.md explains the choice) ---------------------------
KUBERNETES_VERSION="v1.35.4"   # also pinned in e2e/tools/k8s/go.mod (staging modules v0.35.4)
ETCD_VERSION="v3.6.5"          # the etcd that k8s v1.35.4's go.mod requires; e2e/tools/etcd/go.mod
KWOK_VERSION="v0.8.0"
HELM_VERSION="v3.22.0"
S5CMD_VERSION="v2.3.0"         # also pinned in e2e/tools/s5cmd/go.mod
# MinIO publishes no semver tags; this is the last commit the module proxy serves.
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"

# Bump when the build commands or flags below change, so every machine rebuilds.
BUILD_RECIPE=2
# csi-sanity from github.com/kubernetes-csi/csi-test (its go.mod pins its dependencies).
CSI_TEST_VERSION="v5.6.0"
CSI_SANITY_RECIPE=1
# promtool from github.com/prometheus/prometheus (module v0.316.0 is Prometheus 3.16.0; its
# go.mod pins its dependencies and has no replace directive, so go install builds it as is).
PROMETHEUS_VERSION="v0.316.0"
PROMETHEUS_RELEASE="3.16.0"
PROMTOOL_RECIPE=1
# Real nodes (e2e/real-node.sh): kubelet and kube-proxy of KUBERNETES_VERSION from the wrapper
# module e2e/tools/k8s-node, the CNCF distribution registry (the image registry on loopback) and
# CoreDNS (cluster DNS for the real nodes' pods); containerd, runc and the CNI plugins are
# Debian's. A folder of their own, so that none of this changes the control plane's key.
DISTRIBUTION_VERSION="v3.1.2"
COREDNS_VERSION="v1.14.7"
NODE_TOOLS_RECIPE=1

CACHE_ROOT="${MODELPLANE_TOOLS_CACHE:-${HOME}/.cache/modelplane/tools}"

cache_key() {
  # Hash the wrapper modules too: editing go.mod/go.sum must not reuse stale binaries.
  local inputs
  inputs="recipe-${BUILD_RECIPE} $(go env GOVERSION) ${KUBERNETES_VERSION} ${ETCD_VERSION} ${KWOK_VERSION} ${HELM_VERSION} ${S5CMD_VERSION} ${MINIO_VERSION}"
  inputs+="$(cat "${E2E_DIR}"/tools/{k8s,etcd,s5cmd}/go.{mod,sum} "${E2E_DIR}"/tools/etcd/etcd/main.go)"
  printf 'k8s-%s_etcd-%s_%s' "${KUBERNETES_VERSION}" "${ETCD_VERSION}" \
    "$(printf '%s' "${inputs}" | sha256sum | cut -c1-12)"
}

TOOLS_DIR="${CACHE_ROOT}/$(cache_key)"
BIN_DIR="${TOOLS_DIR}/bin"
STAMP="${TOOLS_DIR}/complete.stamp"

csi_sanity_key() {
  printf 'csi-sanity-%s_%s' "${CSI_TEST_VERSION}" \
    "$(printf 'recipe-%s %s %s' "${CSI_SANITY_RECIPE}" "$(go env GOVERSION)" "${CSI_TEST_VERSION}" |
      sha256sum | cut -c1-12)"
}
CSI_SANITY_DIR="${CACHE_ROOT}/$(csi_sanity_key)"
CSI_SANITY_STAMP="${CSI_SANITY_DIR}/complete.stamp"

promtool_key() {
  printf 'promtool-%s_%s' "${PROMETHEUS_RELEASE}" \
    "$(printf 'recipe-%s %s %s' "${PROMTOOL_RECIPE}" "$(go env GOVERSION)" "${PROMETHEUS_VERSION}" |
      sha256sum | cut -c1-12)"
}
PROMTOOL_DIR="${CACHE_ROOT}/$(promtool_key)"
PROMTOOL_STAMP="${PROMTOOL_DIR}/complete.stamp"

node_tools_key() {
  local inputs
  inputs="recipe-${NODE_TOOLS_RECIPE} $(go env GOVERSION) ${KUBERNETES_VERSION} ${DISTRIBUTION_VERSION} ${COREDNS_VERSION}"
  inputs+="$(cat "${E2E_DIR}"/tools/k8s-node/go.{mod,sum})"
  printf 'node-%s_%s' "${KUBERNETES_VERSION}" "$(printf '%s' "${inputs}" | sha256sum | cut -c1-12)"
}
NODE_TOOLS_DIR="${CACHE_ROOT}/$(node_tools_key)"
NODE_TOOLS_STAMP="${NODE_TOOLS_DIR}/complete.stamp"

log() { printf '[tools] %s\n' "$*" >&2; }

# Shared by every go invocation: the machine has 2 cores and C++ builds run beside us.
go_build_env() {
  export GOFLAGS="-p=2"
  export CGO_ENABLED=0        # static binaries; also avoids needing a C toolchain here
  export GOTOOLCHAIN=local    # fail loudly instead of fetching another Go
}

# The version variables that `make` sets in Kubernetes (hack/lib/version.sh), so
# `kubectl version` and /version report the real release instead of v0.0.0-master.
k8s_ldflags() {
  local minor
  minor="$(cut -d. -f2 <<<"${KUBERNETES_VERSION}")"
  local flags="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${KUBERNETES_VERSION}"
    flags+=" -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    flags+=" -X ${pkg}.gitTreeState=clean"
    flags+=" -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "${flags}"
}

# with_heartbeat NAME CMD...: runs CMD, logging once a minute that NAME is still building: a
# go build prints nothing until it ends, and kube-apiserver alone takes 10+ minutes here.
# The exit status is CMD's.
with_heartbeat() {
  local name="$1"; shift
  local start=${SECONDS} status=0 beat
  (
    sleeper=
    trap '[[ -n ${sleeper} ]] && kill "${sleeper}" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 60 </dev/null >/dev/null 2>&1 &
      sleeper=$!
      wait "${sleeper}" || true
      log "still building ${name}: $(((SECONDS - start) / 60)) min so far"
    done
  ) >&2 &
  beat=$!
  "$@" || status=$?
  kill "${beat}" 2>/dev/null || true
  wait "${beat}" 2>/dev/null || true
  return "${status}"
}

# build_one NAME CMD...: runs CMD unless BIN_DIR/NAME exists; logs its duration.
build_one() {
  local name="$1"; shift
  if [[ -x "${BIN_DIR}/${name}" ]]; then
    return 0
  fi
  log "building ${name}"
  local start=${SECONDS}
  with_heartbeat "${name}" nice -n 10 "$@"
  [[ -x "${BIN_DIR}/${name}" ]] || { log "ERROR: ${name} was not produced"; return 1; }
  log "built ${name} in $((SECONDS - start))s"
}


# Standalone kwok refuses to start without Stage objects in its config. Take kwok's own
# default stages (node-fast, node-heartbeat-with-lease, pod-fast) from the pinned release,
# so they always match the binary and nothing is copied into this repo.
copy_kwok_stages() {
  local out="${TOOLS_DIR}/share/kwok-stages.yaml"
  [[ -s "${out}" ]] && return 0
  mkdir -p "${TOOLS_DIR}/share"
  local dir
  dir="$(go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  local stage_dir="${dir}/kustomize/stage" f
  {
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "---"
      cat "${stage_dir}/${f}"
    done
  } > "${out}.tmp"
  mv "${out}.tmp" "${out}"
}

cmd_build() {
  build_cluster_tools
  build_csi_sanity
  build_promtool
  echo "${BIN_DIR}"
}

# build_in_own_folder NAME DIR STAMP VERSION_LINE CMD...: runs CMD (which writes DIR/bin/NAME)
# unless STAMP exists, under a lock, and writes STAMP only once NAME is there.
build_in_own_folder() {
  local name="$1" dir="$2" stamp="$3" version_line="$4"; shift 4
  [[ -f "${stamp}" ]] && return 0
  mkdir -p "${dir}/bin"
  local lock_fd
  exec {lock_fd}>"${dir}/build.lock"
  flock "${lock_fd}"
  if [[ -f "${stamp}" ]]; then
    exec {lock_fd}>&-
    return 0
  fi
  go_build_env
  local start=${SECONDS}
  log "building ${name} into ${dir}"
  with_heartbeat "${name}" "$@"
  [[ -x "${dir}/bin/${name}" ]] || { log "ERROR: ${name} was not produced"; return 1; }
  {
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "build_seconds=$((SECONDS - start))"
    echo "go=$(go env GOVERSION)"
    echo "${version_line}"
  } > "${stamp}.tmp"
  mv "${stamp}.tmp" "${stamp}"
  exec {lock_fd}>&-
  log "built ${name} in $((SECONDS - start))s"
}

build_promtool() {
  # The ldflags are those of Prometheus's .promu.yml that say which release this is.
  local ldflags="-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_RELEASE}"
  ldflags+=" -X github.com/prometheus/common/version.Branch=HEAD"
  build_in_own_folder promtool "${PROMTOOL_DIR}" "${PROMTOOL_STAMP}" \
    "prometheus=${PROMETHEUS_VERSION}" \
    env "GOBIN=${PROMTOOL_DIR}/bin" nice -n 10 go install -trimpath -tags netgo \
    -ldflags "${ldflags}" "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_VERSION}"
}

cmd_promtool() {
  if [[ ! -f "${PROMTOOL_STAMP}" ]]; then
    log "promtool not built yet: run e2e/tools.sh build"
    return 1
  fi
  echo "${PROMTOOL_DIR}/bin/promtool"
}

build_csi_sanity() {
  # go install pkg@version builds with the module's own go.mod and go.sum, outside ours.
  build_in_own_folder csi-sanity "${CSI_SANITY_DIR}" "${CSI_SANITY_STAMP}" \
    "csi-test=${CSI_TEST_VERSION}" \
    env "GOBIN=${CSI_SANITY_DIR}/bin" nice -n 10 go install -trimpath \
    -ldflags "-s -w -X main.VERSION=${CSI_TEST_VERSION}" \
    "github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity@${CSI_TEST_VERSION}"
}

# kubelet, kube-proxy, registry and coredns into one folder; the stamp is written once all four
# are there (build_in_own_folder checks the last one named).
build_node_tools() {
  local bin="${NODE_TOOLS_DIR}/bin" mod="${E2E_DIR}/tools/k8s-node" ldflags
  ldflags="$(k8s_ldflags)"
  build_in_own_folder coredns "${NODE_TOOLS_DIR}" "${NODE_TOOLS_STAMP}" \
    "kubernetes=${KUBERNETES_VERSION} distribution=${DISTRIBUTION_VERSION} coredns=${COREDNS_VERSION}" \
    bash -c "set -e
      for cmd in kubelet kube-proxy; do
        [[ -x '${bin}'/\${cmd} ]] || (cd '${mod}' && nice -n 10 go build -trimpath -ldflags '${ldflags}' \
          -o '${bin}'/\${cmd} k8s.io/kubernetes/cmd/\${cmd})
      done
      [[ -x '${bin}/registry' ]] || GOBIN='${bin}' nice -n 10 go install -trimpath -ldflags '-s -w' \
        github.com/distribution/distribution/v3/cmd/registry@${DISTRIBUTION_VERSION}
      [[ -x '${bin}/coredns' ]] || GOBIN='${bin}' nice -n 10 go install -trimpath -ldflags '-s -w' \
        github.com/coredns/coredns@${COREDNS_VERSION}"
}

cmd_node_bindir() {
  if [[ ! -f "${NODE_TOOLS_STAMP}" ]]; then
    log "node tools not built yet: run e2e/tools.sh node-build"
    return 1
  fi
  echo "${NODE_TOOLS_DIR}/bin"
}

cmd_csi_sanity() {
  if [[ ! -f "${CSI_SANITY_STAMP}" ]]; then
    log "csi-sanity not built yet: run e2e/tools.sh build"
    return 1
  fi
  echo "${CSI_SANITY_DIR}/bin/csi-sanity"
}

build_cluster_tools() {
  if [[ -f "${STAMP}" ]]; then
    return 0
  fi
  mkdir -p "${BIN_DIR}"
  # Two builds at once (setup and a test run, two shells) would write the same files: the
  # second waits for the first, then finds the stamp.
  exec 9>"${TOOLS_DIR}/build.lock"
  flock 9
  if [[ -f "${STAMP}" ]]; then
    return 0
  fi
  go_build_env
  local start=${SECONDS}
  log "cold build into ${TOOLS_DIR}"

  local etcd_mod="${E2E_DIR}/tools/etcd" k8s_mod="${E2E_DIR}/tools/k8s"
  build_one etcd bash -c "cd '${etcd_mod}' && go build -trimpath -ldflags '-s -w' -o '${BIN_DIR}/etcd' ./etcd"
  build_one etcdctl bash -c "cd '${etcd_mod}' && go build -trimpath -ldflags '-s -w' -o '${BIN_DIR}/etcdctl' go.etcd.io/etcd/etcdctl/v3"

  local ldflags cmd
  ldflags="$(k8s_ldflags)"
  for cmd in kube-apiserver kubectl kube-controller-manager kube-scheduler; do
    build_one "${cmd}" bash -c "cd '${k8s_mod}' && go build -trimpath -ldflags '${ldflags}' -o '${BIN_DIR}/${cmd}' k8s.io/kubernetes/cmd/${cmd}"
  done

  # go install writes into GOBIN (an external command, so `nice` can run it).
  local go_install=(env "GOBIN=${BIN_DIR}" go install -trimpath -ldflags "-s -w")
  build_one kwok "${go_install[@]}" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  # s5cmd: built from a wrapper module, see e2e/tools/s5cmd/go.mod for why.
  build_one s5cmd bash -c "cd '${E2E_DIR}/tools/s5cmd' && go build -trimpath -ldflags '-s -w' -o '${BIN_DIR}/s5cmd' github.com/peak/s5cmd/v2"
  # helm's Makefile stamps its version and the Kubernetes version it templates and lints for
  # by default (otherwise v1.20); we target the pinned cluster.
  local helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
  local p
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    helm_ldflags+=" -X ${p}.k8sVersionMajor=1 -X ${p}.k8sVersionMinor=$(cut -d. -f2 <<<"${KUBERNETES_VERSION}")"
  done
  build_one helm env "GOBIN=${BIN_DIR}" go install -trimpath -ldflags "${helm_ldflags}" \
    "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  build_one minio "${go_install[@]}" "github.com/minio/minio@${MINIO_VERSION}"
  copy_kwok_stages

  # Only a complete set gets the stamp; `bindir` and cluster.sh trust it.
  {
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cold_build_seconds=$((SECONDS - start))"
    echo "go=$(go env GOVERSION)"
    cmd_versions
  } > "${STAMP}.tmp"
  mv "${STAMP}.tmp" "${STAMP}"
  log "complete in $((SECONDS - start))s; size $(du -sh "${TOOLS_DIR}" | cut -f1)"
}

cmd_bindir() {
  if [[ ! -f "${STAMP}" ]]; then
    log "tools not built yet: run e2e/tools.sh build"
    return 1
  fi
  echo "${BIN_DIR}"
}

cmd_versions() {
  echo "kubernetes=${KUBERNETES_VERSION}"
  echo "etcd=${ETCD_VERSION}"
  echo "kwok=${KWOK_VERSION}"
  echo "helm=${HELM_VERSION}"
  echo "s5cmd=${S5CMD_VERSION}"
  echo "minio=${MINIO_VERSION}"
}

main() {
  case "${1:-}" in
    build) cmd_build ;;
    bindir) cmd_bindir ;;
    csi-sanity) cmd_csi_sanity ;;
    promtool) cmd_promtool ;;
    node-build) build_node_tools && echo "${NODE_TOOLS_DIR}/bin" ;;
    node-bindir) cmd_node_bindir ;;
    versions)
      cmd_versions
      echo "csi-test=${CSI_TEST_VERSION}"
      echo "prometheus=${PROMETHEUS_VERSION}"
      echo "distribution=${DISTRIBUTION_VERSION}"
      echo "coredns=${COREDNS_VERSION}"
      ;;
    *) echo "usage: $0 build|bindir|csi-sanity|promtool|node-build|node-bindir|versions" >&2; return 2 ;;
  esac
}

# One line, parsed whole before it runs: editing this file during a long build is then safe.
main "$@"; exit "$?"
