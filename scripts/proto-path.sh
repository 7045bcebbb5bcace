#!/usr/bin/env bash
# Prints the path of a .proto file the node agent speaks, from the Go module that ships it,
# downloading the module into the Go module cache when it is not there yet. CMake calls this at
# configure time (cmake/ModelplaneDependencies.cmake); no proto is copied into this repository.
#   csi                  the CSI specification's csi.proto (github.com/container-storage-interface/spec)
#   plugin-registration  kubelet's plugin registration API, pluginregistration/v1 (k8s.io/kubelet):
#                        the agent registers its CSI socket with kubelet itself (docs/csi.md)
# Usage: scripts/proto-path.sh NAME            print the path (exit 1 with a reason on stderr)
#        scripts/proto-path.sh NAME --version  print the pinned module version
set -euo pipefail

case ${1:-} in
  # The CSI spec version the node plugin speaks (docs/csi.md). csi-sanity (e2e/tools.sh) is
  # built against its own go.mod's spec version; the wire format is compatible across 1.x.
  csi) module=github.com/container-storage-interface/spec version=v1.12.0 file=csi.proto ;;
  # The kubelet of the pinned Kubernetes release (e2e/tools.sh); the API is v1 since 1.12.
  plugin-registration)
    module=k8s.io/kubelet version=v0.35.4 file=pkg/apis/pluginregistration/v1/api.proto ;;
  *) echo "usage: $0 csi|plugin-registration [--version]" >&2; exit 2 ;;
esac

if [[ ${2:-} == --version ]]; then
  echo "${version}"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "proto-path: go is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
# Outside any module, so no go.mod of ours is read or written; GOTOOLCHAIN=local so go never
# fetches another toolchain to answer. The JSON is read with sed: the Docker builder has no
# Python.
json=$(cd / && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "${module}@${version}") || true
dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"${json}")
if [[ -z ${dir} ]] || grep -q '"Error"' <<<"${json}"; then
  echo "proto-path: could not download ${module}@${version} (is the Go module proxy reachable?)" >&2
  sed -n 's/^[[:space:]]*"Error": /proto-path: /p' <<<"${json}" >&2
  exit 1
fi
if [[ ! -f ${dir}/${file} ]]; then
  echo "proto-path: ${dir}/${file} is missing from the module" >&2
  exit 1
fi
echo "${dir}/${file}"
