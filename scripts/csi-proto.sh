#!/usr/bin/env bash
# Prints the path of the CSI specification's csi.proto, from the Go module that ships it
# (github.com/container-storage-interface/spec), downloading the module into the Go module
# cache when it is not there yet. CMake calls this at configure time (cmake/
# ModelplaneDependencies.cmake); the proto is never copied into this repository.
# Usage: scripts/csi-proto.sh            print the path (exit 1 with a reason on stderr)
#        scripts/csi-proto.sh --version  print the pinned module version
set -euo pipefail

# The CSI spec version the node plugin speaks (docs/csi.md). csi-sanity (e2e/tools.sh) is built
# against its own go.mod's spec version; the wire format is compatible across 1.x.
CSI_SPEC_MODULE="github.com/container-storage-interface/spec"
CSI_SPEC_VERSION="v1.12.0"

if [[ ${1:-} == --version ]]; then
  echo "${CSI_SPEC_VERSION}"
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "csi-proto: go is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
# Outside any module, so no go.mod of ours is read or written; GOTOOLCHAIN=local so go never
# fetches another toolchain to answer. The JSON is read with sed: the Docker builder has no
# Python.
json=$(cd / && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json \
  "${CSI_SPEC_MODULE}@${CSI_SPEC_VERSION}") || true
dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"${json}")
if [[ -z ${dir} ]] || grep -q '"Error"' <<<"${json}"; then
  echo "csi-proto: could not download ${CSI_SPEC_MODULE}@${CSI_SPEC_VERSION} (is the Go module proxy reachable?)" >&2
  sed -n 's/^[[:space:]]*"Error": /csi-proto: /p' <<<"${json}" >&2
  exit 1
fi
if [[ ! -f ${dir}/csi.proto ]]; then
  echo "csi-proto: ${dir}/csi.proto is missing from the module" >&2
  exit 1
fi
echo "${dir}/csi.proto"
