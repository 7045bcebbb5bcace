#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need, from Debian's packages, PyPI and
# the Go module proxy. Idempotent: a second run on a prepared machine takes seconds.
# Usage: scripts/setup.sh [--no-tools]   (--no-tools skips building the local control plane)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_tools=1
[[ ${1:-} == --no-tools ]] && build_tools=0

# Debian 12 packages. Kept in one list so docs/dependencies.md can say why each is here.
debian_packages=(
  build-essential cmake ninja-build pkg-config git mold
  libboost-dev libboost-system-dev libboost-thread-dev libcpprest-dev
  libyaml-cpp-dev libssl-dev openssl nlohmann-json3-dev libsimdjson-dev
  libgtest-dev libgmock-dev googletest
  libspdlog-dev libfmt-dev libcli11-dev liburing-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  clang-16 libclang-rt-16-dev clang-format clang-tidy-16
  python3 python3-venv curl fio nginx-light iproute2 procps psmisc golang-go
)

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
# Go comes from the machine image when present; Debian's golang-go is only a fallback.
if command -v go >/dev/null; then
  missing=("${missing[@]/golang-go/}")
fi
read -r -a missing <<<"${missing[*]}"
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Python tools for tests (prometheus_client's parser, pytest).
venv=$root/.venv
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
stamp=$venv/.requirements.sha256
want=$(sha256sum "$root/requirements-test.txt" | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/requirements-test.txt"
  echo "$want" >"$stamp"
fi

# The local Kubernetes control plane, MinIO, Helm, KWOK and s5cmd, built from Go modules once
# into a versioned cache folder (see docs/control-plane.md).
if ((build_tools)) && [[ -x $root/e2e/tools.sh ]]; then
  "$root/e2e/tools.sh" build
fi
echo "setup: done"
