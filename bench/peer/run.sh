#!/usr/bin/env bash
# Peer-to-peer loopback benchmark: modelplane's PeerServer + PeerRangeSource against nginx + curl.
#
#   bench/peer/run.sh [size_mib=1024] [repetitions=5] [modes="plain tls"]
#
# For each repetition, in the same run and alternating, it times four downloads of one blob:
#   curl  <- nginx         the anchor
#   peer  <- serve-peers   ours end to end (PeerRangeSource: 8 MiB ranges, 4 in flight, pwrite)
#   peer  <- nginx         our client against nginx's server
#   curl  <- serve-peers   curl against our server
# and prints medians in bytes/s and MiB/s. "plain" is plain HTTP (our server with
# --insecure-http and tokens; nginx plain); "tls" is HTTPS with tokens on ours and on nginx, with
# a throwaway CA made by openssl. Output files go to $PEER_BENCH_DIR (default a temp dir under
# /tmp), removed at the end.
set -euo pipefail

size_mib="${1:-1024}"
repetitions="${2:-5}"
modes="${3:-plain tls}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${PEER_BENCH_BUILD:-${root}/build/peer}"
work="$(mktemp -d "${PEER_BENCH_DIR:-/tmp}/peer-bench.XXXXXX")"
nginx_pid=""
peer_pid=""
cleanup() {
  [[ -n "${peer_pid}" ]] && kill "${peer_pid}" 2>/dev/null && wait "${peer_pid}" 2>/dev/null || true
  [[ -n "${nginx_pid}" ]] && kill "${nginx_pid}" 2>/dev/null && wait "${nginx_pid}" 2>/dev/null || true
  rm -rf "${work}"
}
trap cleanup EXIT

if [[ ! -f "${build}/build.ninja" ]]; then
  cmake -G Ninja -S "${root}" -B "${build}" -DMODELPLANE_BUILD_BENCH=ON >/dev/null
fi
nice ninja -C "${build}" -j2 peer_bench >/dev/null
bench="${build}/bench/peer/peer_bench"

# The blob, in the cache layout serve-peers reads and in a tree nginx serves at the same path.
size=$((size_mib * 1024 * 1024))
mkdir -p "${work}/cache/blobs/sha256" "${work}/www/v1/blobs" "${work}/out"
head -c "${size}" /dev/urandom > "${work}/blob"
hex="$(sha256sum "${work}/blob" | cut -d' ' -f1)"
mv "${work}/blob" "${work}/cache/blobs/sha256/${hex}"
ln "${work}/cache/blobs/sha256/${hex}" "${work}/www/v1/blobs/sha256:${hex}"
path="/v1/blobs/sha256:${hex}"
head -c 48 /dev/urandom | base64 > "${work}/peer.key"

# TLS material: one CA, one server certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "${work}/ca.key" -out "${work}/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "${work}/server.key" -out "${work}/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "${work}/san.ext"
openssl x509 -req -in "${work}/server.csr" -CA "${work}/ca.crt" -CAkey "${work}/ca.key" \
  -CAcreateserial -days 1 -extfile "${work}/san.ext" -out "${work}/server.crt" 2>/dev/null

nginx_port=18480
peer_port=18443
cat > "${work}/nginx.conf" <<CONF
user root;
worker_processes auto;
daemon off;
pid ${work}/nginx.pid;
error_log ${work}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path ${work}/nginx-body;
  proxy_temp_path ${work}/nginx-proxy;
  fastcgi_temp_path ${work}/nginx-fastcgi;
  uwsgi_temp_path ${work}/nginx-uwsgi;
  scgi_temp_path ${work}/nginx-scgi;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${nginx_port};
    root ${work}/www;
  }
  server {
    listen 127.0.0.1:$((nginx_port + 1)) ssl;
    ssl_certificate ${work}/server.crt;
    ssl_certificate_key ${work}/server.key;
    root ${work}/www;
  }
}
CONF
nginx -c "${work}/nginx.conf" &
nginx_pid=$!

start_peer() {  # $1: plain|tls
  if [[ -n "${peer_pid}" ]]; then kill "${peer_pid}"; wait "${peer_pid}" 2>/dev/null || true; fi
  local tls_flags=(--insecure-http)
  if [[ "$1" == tls ]]; then tls_flags=(--tls-cert "${work}/server.crt" --tls-key "${work}/server.key"); fi
  "${bench}" serve-peers --cache-root "${work}/cache" --listen "127.0.0.1:${peer_port}" \
    --token-key-file "${work}/peer.key" "${tls_flags[@]}" --log-level warn &
  peer_pid=$!
}
wait_port() {
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "port $1 did not open" >&2
  return 1
}

timed_curl() {  # url [extra curl args...]: prints bytes/s
  local url="$1"
  shift
  rm -f "${work}/out/curl"
  curl -s -f "$@" -o "${work}/out/curl" -w '%{speed_download}\n' "${url}"
}
timed_peer() {  # endpoint [extra fetch args...]: prints bytes/s
  local endpoint="$1"
  shift
  rm -f "${work}/out/peer"
  "${bench}" fetch --endpoint "${endpoint}" --digest "sha256:${hex}" --size "${size}" \
    --out "${work}/out/peer" --range-mib 8 --parallel 4 "$@" | cut -d' ' -f3
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "kernel: $(uname -r); $(curl --version | head -1 | cut -d' ' -f1-2); $(nginx -v 2>&1)"
echo "blob: ${size_mib} MiB; repetitions: ${repetitions}; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
wait_port "${nginx_port}"

for mode in ${modes}; do
  start_peer "${mode}"
  wait_port "${peer_port}"
  if [[ "${mode}" == tls ]]; then
    scheme=https nginx_at=$((nginx_port + 1)) client_tls=(--ca "${work}/ca.crt") curl_tls=(--cacert "${work}/ca.crt")
  else
    scheme=http nginx_at=${nginx_port} client_tls=() curl_tls=()
  fi
  : > "${work}/a" ; : > "${work}/b" ; : > "${work}/c" ; : > "${work}/d"
  for _ in $(seq "${repetitions}"); do
    timed_curl "${scheme}://127.0.0.1:${nginx_at}${path}" "${curl_tls[@]}" >> "${work}/a"
    timed_peer "127.0.0.1:${peer_port}" --token-key-file "${work}/peer.key" "${client_tls[@]}" >> "${work}/b"
    timed_peer "127.0.0.1:${nginx_at}" "${client_tls[@]}" >> "${work}/c"
    token="$("${bench}" sign --token-key-file "${work}/peer.key" --audience "127.0.0.1:${peer_port}" --path "${path}")"
    timed_curl "${scheme}://127.0.0.1:${peer_port}${path}" "${curl_tls[@]}" \
      -H "Authorization: ${token}" >> "${work}/d"
  done
  cmp "${work}/out/peer" "${work}/www${path}"
  cmp "${work}/out/curl" "${work}/www${path}"
  a="$(median < "${work}/a")" b="$(median < "${work}/b")" c="$(median < "${work}/c")" d="$(median < "${work}/d")"
  echo
  echo "## ${mode} (medians; runs in B/s: anchor $(tr '\n' ' ' < "${work}/a"); ours $(tr '\n' ' ' < "${work}/b"))"
  echo "| client <- server | median B/s | MiB/s | vs curl <- nginx |"
  echo "|---|---|---|---|"
  for row in "curl <- nginx:${a}" "PeerRangeSource <- serve-peers:${b}" "PeerRangeSource <- nginx:${c}" "curl <- serve-peers:${d}"; do
    name="${row%%:*}" value="${row#*:}"
    echo "| ${name} | ${value%.*} | $(mib "${value}") | $(awk -v x="${value}" -v y="${a}" 'BEGIN { printf "%.2fx", x / y }') |"
  done
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
