#!/usr/bin/env bash
# Staging benchmarks for the node agent's fetch engine, each against its anchor in the same run:
#   object store: `modelplane-node-agent fetch` from MinIO on loopback (sha256-verified, fsynced,
#                 published) vs `s5cmd cp` of the same objects (no verification), and vs
#                 `s5cmd cp` followed by `sha256sum` (a verified download with standard tools);
#   shared filesystem: `fetch` from a sharedFilesystem source vs a large-block O_DIRECT `fio`
#                 read of the same files (the device limit: fio's own measured runtime);
# with page caches dropped before every run, peak RSS and CPU seconds of each client, the CPU
# seconds MinIO spent serving it (client and MinIO share the machine's CPUs), and medians.
#
# Destinations (s5cmd's folder, our cache root) stand in for a node's own NVMe. The sources
# (MinIO's data, the "shared filesystem") are on the VM's one disk, and writing the copy back to
# that same disk would halve what it can read, so the copies go to memory, in two ways:
#   ext4-on-ram: ext4 on a loop device backed by a preallocated tmpfs file: a real block
#                filesystem with a journal, O_DIRECT and writeback, as on NVMe, minus the DMA
#                (the loop driver copies each block on the CPU, for both tools alike);
#   tmpfs:       /dev/shm, where every write is a CPU copy into 4 KiB pages for both tools and
#                O_DIRECT changes nothing.
#
#   bench/fetch/run.sh [size=4GiB] [repetitions=3]     (MODELPLANE_BUILD=build/x to reuse a build;
#                                                       BENCH_DESTINATIONS="ext4-on-ram tmpfs")
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
destinations=${BENCH_DESTINATIONS:-ext4-on-ram tmpfs}
mkdir -p "$work"

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
ram_disk=$work/ram-disk
backing=/dev/shm/modelplane-fetch-bench.img
loop_device=
cleanup() {
  kill "$minio_pid" 2>/dev/null || true
  mountpoint -q "$ram_disk" && umount "$ram_disk"
  [[ -n $loop_device ]] && losetup -d "$loop_device"
  rm -rf "$backing" /dev/shm/modelplane-fetch-bench
}
trap cleanup EXIT
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
minio_cpu() { awk '{print $14 + $15}' "/proc/$minio_pid/stat"; }  # clock ticks, user + system
ticks=$(getconf CLK_TCK)
# timed DESTINATION LABEL COMMAND...: appends
# "destination label seconds max_rss_kib cpu_seconds minio_cpu_seconds"
timed() {
  local destination=$1 label=$2
  shift 2
  drop
  local before
  before=$(minio_cpu)
  /usr/bin/time -f "%e %M %U %S" -o "$work/time.txt" "$@" >"$work/$label.out" 2>"$work/$label.err" ||
    { cat "$work/$label.err" >&2; exit 1; }
  read -r seconds rss user system <"$work/time.txt"
  echo "$destination $label $seconds $rss $user $system $(minio_cpu) $before $ticks" |
    awk '{printf "%s %s %s %s %.2f %.2f\n", $1, $2, $3, $4, $5 + $6, ($7 - $8) / $9}' \
      >>"$work/results.txt"
}
# The same for fio, whose own measured runtime is the device's time: its wall time adds the
# start of one process per file, which is not reading.
timed_fio() {
  drop
  local runtime_ms
  fio "${fio_args[@]}" >"$work/fio.out" 2>"$work/fio.err" || { cat "$work/fio.err" >&2; exit 1; }
  runtime_ms=$(cut -d';' -f9 "$work/fio.out")  # terse v3: read runtime in ms (group_reporting)
  awk -v ms="$runtime_ms" -v destination="$1" 'BEGIN {printf "%s fio %.3f 0 0 0\n", destination, ms / 1000}' \
    >>"$work/results.txt"
}
# s5cmd, then sha256sum of every file it wrote (as many at once as there are CPUs): what
# verifying a plain download costs with the standard tools.
download_then_verify() {
  "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" --numworkers 32 cp "s3://bench/model/*" "$1/" &&
    find "$1" -type f -print0 | xargs -0 -P "$(nproc)" -n 1 sha256sum
}
export -f download_then_verify
export bin

# One fio job per file, all at once: large O_DIRECT reads, 8 in flight each (the device limit).
fio_args=(--rw=read --bs=8M --direct=1 --ioengine=libaio --iodepth=8 --group_reporting
  --output-format=terse)
# (The index, config and tokenizer files, a few KiB, are below fio's block size and left out.)
for file in "$checkpoint"/*; do
  (($(stat -c %s "$file") >= 8 << 20)) && fio_args+=(--name="$(basename "$file")" --filename="$file")
done

# mount_destination NAME: sets `dest`, the folder the copies go to.
mount_destination() {
  case $1 in
    ext4-on-ram)
      # Room for two copies; preallocated, as a device's capacity is.
      fallocate -l $((total * 2 + (1 << 30))) "$backing"
      loop_device=$(losetup --find --show "$backing")
      mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop_device"
      mkdir -p "$ram_disk"
      mount "$loop_device" "$ram_disk"
      dest=$ram_disk
      ;;
    tmpfs)
      dest=/dev/shm/modelplane-fetch-bench
      mkdir -p "$dest"
      ;;
    *) echo "unknown destination $1" >&2 && exit 2 ;;
  esac
}

rm -f "$work/results.txt"
for destination in $destinations; do
  mount_destination "$destination"
  for _ in $(seq "$repetitions"); do
    rm -rf "$dest/s5cmd-out" "$dest/cache"
    timed "$destination" s5cmd "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" --numworkers 32 cp \
      "s3://bench/model/*" "$dest/s5cmd-out/"
    rm -rf "$dest/s5cmd-out"
    timed "$destination" fetch-s3 "$agent" fetch --revision "$work/s3.yaml" --cache-root "$dest/cache"
    rm -rf "$dest/cache"
    timed "$destination" s5cmd+sha256sum bash -c 'download_then_verify "$0"' "$dest/s5cmd-out"
    rm -rf "$dest/s5cmd-out"
    # The shared-filesystem anchor (fio) only reads, so its comparison wants the destination
    # that costs least: tmpfs. (The loop device copies each block in one kernel thread, slower
    # than this disk reads.)
    if [[ $destination == tmpfs ]]; then
      timed_fio "$destination"
      timed "$destination" fetch-fs "$agent" fetch --revision "$work/fs.yaml" --cache-root "$dest/cache"
      # Again, with everything cached: the process's own footprint, without any buffer in use.
      timed "$destination" fetch-cached "$agent" fetch --revision "$work/fs.yaml" --cache-root "$dest/cache"
      rm -rf "$dest/cache"
    fi
  done
  if [[ $destination == ext4-on-ram ]]; then
    umount "$ram_disk" && losetup -d "$loop_device" && loop_device= && rm -f "$backing"
  fi
done

echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(free -g | awk '/Mem/{print $2}') GiB"
echo "sources on: $(df -h "$work" | awk 'NR==2{print $1" "$2}') ($(findmnt -no FSTYPE -T "$work")); destinations: $destinations"
echo "data: $total bytes in $(ls "$checkpoint" | wc -l) files; $repetitions repetitions; page cache dropped before each"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/results.txt" "$total" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    destination, label, seconds, rss, cpu, minio = line.split()
    rows.setdefault(destination, {}).setdefault(label, []).append(
        (float(seconds), int(rss), float(cpu), float(minio)))
total = int(sys.argv[2])
for destination, runs in rows.items():
    def median(label, column):
        return statistics.median(row[column] for row in runs[label])
    print()
    print(f"destination: {destination}")
    print()
    print("| run | median s | MiB/s | peak RSS MiB | CPU s (client) | CPU s (MinIO) | all runs (s) |")
    print("|---|---|---|---|---|---|---|")
    for label in [label for label in ["s5cmd", "fetch-s3", "s5cmd+sha256sum", "fio", "fetch-fs",
                                      "fetch-cached"]
                  if label in runs]:
        seconds = median(label, 0)
        rss = max(row[1] for row in runs[label]) / 1024
        print(f"| {label} | {seconds:.2f} | {total / seconds / 2**20:.0f} | "
              f"{rss:.0f} | {median(label, 2):.2f} | {median(label, 3):.2f} | "
              f"{', '.join(f'{row[0]:.2f}' for row in runs[label])} |")
    print()
    ratio = lambda anchor, run: median(anchor, 0) / median(run, 0)
    print(f"object store: fetch / s5cmd = {ratio('s5cmd', 'fetch-s3'):.2f}x (target >= 1.0)")
    print(f"object store: fetch / (s5cmd then sha256sum) = {ratio('s5cmd+sha256sum', 'fetch-s3'):.2f}x")
    if "fio" in runs:
        print(f"shared filesystem: fetch / fio O_DIRECT = {ratio('fio', 'fetch-fs'):.2f}x (target >= 0.9)")
    if "fetch-cached" in runs:
        base = max(row[1] for row in runs["fetch-cached"]) / 1024
        staging = max(max(row[1] for row in runs[label]) for label in ["fetch-s3", "fetch-fs"]) / 1024
        print(f"memory: peak RSS {staging:.0f} MiB, of which {staging - base:.0f} MiB above a fully "
              f"cached fetch ({base:.0f} MiB); the buffer pool is 256 MiB")
PY
