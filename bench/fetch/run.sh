#!/usr/bin/env bash
# Staging benchmarks for the node agent's fetch engine, each against its anchor in the same run:
#   object store: `modelplane-node-agent fetch` from MinIO on loopback (sha256-verified, fsynced,
#                 published) vs `s5cmd cp` of the same objects (no verification);
#   shared filesystem: `fetch` from a sharedFilesystem source vs a large-block O_DIRECT `fio`
#                 read of the same files (the device limit);
# with page caches dropped before every run, peak RSS of each process, and medians.
#
# Destinations (s5cmd's folder, our cache root) are on tmpfs (/dev/shm): the sources (MinIO's
# data, the "shared filesystem") are on the VM's one disk, and writing the copy back to that
# same disk would halve what it can read, which is not the situation being measured (a node's
# cache is its own NVMe). On tmpfs both tools write to memory alike.
#
#   bench/fetch/run.sh [size=4GiB] [repetitions=3]     (MODELPLANE_BUILD=build/x to reuse a build)
#
# Needs root (drop_caches) and the e2e tools (MinIO, s5cmd: e2e/tools.sh build). Scratch data
# lives in /tmp/modelplane-fetch-bench (kept: the checkpoint is reused by later runs).
set -euo pipefail
size=${1:-4GiB}
repetitions=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${MODELPLANE_BUILD:-$root/build/bench-fetch}  # any configured build folder works
work=/tmp/modelplane-fetch-bench
checkpoint=$work/checkpoint-$size
bin=$("$root/e2e/tools.sh" bindir)
dest=${BENCH_DEST:-/dev/shm/modelplane-fetch-bench}
mkdir -p "$work" "$dest"

if [[ ! -f $build/build.ninja ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DMODELPLANE_BUILD_TESTS=OFF -DMODELPLANE_BUILD_BENCH=OFF >/dev/null
fi
ninja -C "$build" -j2 modelplane-node-agent >/dev/null
agent=$build/node-agent/modelplane-node-agent

if [[ ! -f $checkpoint/config.json ]]; then
  python3 "$root/e2e/checkpoint/generate.py" --out "$checkpoint" --size "$size" --shards 8 --seed 5 >/dev/null
fi
total=$(du -sb "$checkpoint" | cut -f1)

# MinIO of our own on a free loopback port, fresh data each run.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rm -rf "$work/minio" && mkdir -p "$work/minio"
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret-key AWS_REGION=us-east-1
export S3_ENDPOINT_URL=http://127.0.0.1:$port
MINIO_ROOT_USER=$AWS_ACCESS_KEY_ID MINIO_ROOT_PASSWORD=$AWS_SECRET_ACCESS_KEY \
  "$bin/minio" server --quiet --address "127.0.0.1:$port" "$work/minio" >"$work/minio.log" 2>&1 &
minio_pid=$!
trap 'kill $minio_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -fsS "$S3_ENDPOINT_URL/minio/health/ready" >/dev/null 2>&1 && break; sleep 0.2; done
s5() { "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" "$@"; }
s5 mb s3://bench >/dev/null
s5 cp "$checkpoint/*" s3://bench/model/ >/dev/null

python3 "$root/e2e/checkpoint/generate.py" --out "$checkpoint" --size "$size" --shards 8 --seed 5 \
  --modelrevision bench --bucket bench --prefix model --endpoint "$S3_ENDPOINT_URL" >"$work/s3.yaml"
python3 - "$work/s3.yaml" "$checkpoint" >"$work/fs.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
start = text.index("  sources:")
end = text.index("  files:")
text = text[:start] + f"""  sources:
  - name: nfs
    type: sharedFilesystem
    sharedFilesystem:
      path: "{sys.argv[2]}"
""" + text[end:]
print(text, end="")
PY

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# timed LABEL COMMAND...: appends "label seconds max_rss_kib" to results
timed() {
  local label=$1
  shift
  drop
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$work/$label.out" 2>"$work/$label.err" ||
    { cat "$work/$label.err" >&2; exit 1; }
  echo "$label $(cat "$work/time.txt")" >>"$work/results.txt"
}
# One fio job per file, all at once: large O_DIRECT reads, 8 in flight each (the device limit).
fio_args=(--rw=read --bs=8M --direct=1 --ioengine=libaio --iodepth=8 --group_reporting
  --output-format=terse)
# (The index, config and tokenizer files, a few KiB, are below fio's block size and left out.)
for file in "$checkpoint"/*; do
  (($(stat -c %s "$file") >= 8 << 20)) && fio_args+=(--name="$(basename "$file")" --filename="$file")
done

rm -f "$work/results.txt"
for rep in $(seq "$repetitions"); do
  rm -rf "$dest/s5cmd-out" "$dest/cache"
  timed s5cmd "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" --numworkers 32 cp \
    "s3://bench/model/*" "$dest/s5cmd-out/"
  rm -rf "$dest/s5cmd-out"
  timed fetch-s3 "$agent" fetch --revision "$work/s3.yaml" --cache-root "$dest/cache"
  rm -rf "$dest/cache"
  timed fio fio "${fio_args[@]}"
  timed fetch-fs "$agent" fetch --revision "$work/fs.yaml" --cache-root "$dest/cache"
  rm -rf "$dest/cache"
done

echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(free -g | awk '/Mem/{print $2}') GiB"
echo "sources on: $(df -h "$work" | awk 'NR==2{print $1" "$2}') ($(findmnt -no FSTYPE -T "$work")); destinations on $(findmnt -no FSTYPE -T "$dest" | head -1) ($dest)"
echo "data: $total bytes in $(ls "$checkpoint" | wc -l) files; $repetitions repetitions; page cache dropped before each"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/results.txt" "$total" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    label, seconds, rss = line.split()
    rows.setdefault(label, []).append((float(seconds), int(rss)))
total = int(sys.argv[2])
def summary(label):
    seconds = [s for s, _ in rows[label]]
    median = statistics.median(seconds)
    return median, total / median / 2**20, max(r for _, r in rows[label]) / 1024, seconds
print()
print("| run | median s | MiB/s | peak RSS MiB | all runs (s) |")
print("|---|---|---|---|---|")
for label in ["s5cmd", "fetch-s3", "fio", "fetch-fs"]:
    median, rate, rss, seconds = summary(label)
    print(f"| {label} | {median:.2f} | {rate:.0f} | {rss:.0f} | {', '.join(f'{s:.2f}' for s in seconds)} |")
print()
print(f"object store: fetch / s5cmd = {summary('s5cmd')[0] / summary('fetch-s3')[0]:.2f}x (target >= 1.0)")
print(f"shared filesystem: fetch / fio O_DIRECT = {summary('fio')[0] / summary('fetch-fs')[0]:.2f}x (target >= 0.9)")
PY
