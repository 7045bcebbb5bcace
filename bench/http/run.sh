#!/usr/bin/env bash
# Loopback download benchmark: modelplane's HttpClient vs curl against modelplane's HttpServer.
#
#   bench/http/run.sh [size_mib=1024] [repetitions=5]
#
# Builds http_download_bench in build/http, writes a random file of size_mib MiB to /tmp (kept for
# reruns), and prints the machine description and the tables that go into docs/http.md.
set -euo pipefail

size_mib="${1:-1024}"
repetitions="${2:-5}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${root}/build/http"
file="/tmp/modelplane-http-bench-${size_mib}MiB.bin"

if [[ ! -f "${build}/build.ninja" ]]; then
  cmake -G Ninja -S "${root}" -B "${build}" -DMODELPLANE_WERROR=ON -DMODELPLANE_BUILD_BENCH=ON >/dev/null
fi
ninja -C "${build}" -j2 http_download_bench >/dev/null

if [[ ! -f "${file}" || "$(stat -c %s "${file}")" -ne $((size_mib * 1024 * 1024)) ]]; then
  head -c "$((size_mib * 1024 * 1024))" /dev/urandom > "${file}.tmp"
  mv "${file}.tmp" "${file}"
fi

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "kernel: $(uname -r); curl: $(curl --version | head -1 | cut -d' ' -f1-2)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## sink: discard"
"${build}/bench/http/http_download_bench" --file "${file}" --repetitions "${repetitions}"
echo
echo "## sink: sha256"
"${build}/bench/http/http_download_bench" --file "${file}" --repetitions "${repetitions}" --hash
echo
echo "## sink: discard, server copies (pread + send) instead of sendfile"
"${build}/bench/http/http_download_bench" --file "${file}" --repetitions "${repetitions}" --no-sendfile
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
