#!/usr/bin/env bash
# Staging benchmarks for the node agent's fetch engine, each against its anchor in the same run:
#   object store: `modelplane-node-agent fetch` from MinIO on loopback (sha256-verified, fsynced,
#                 published) vs `s5cmd cp` of the same objects (no verification), and vs
#                 `s5cmd cp` followed by `sha256sum` (a verified download with standard tools);
#   shared filesystem: `fetch` from a sharedFilesystem source vs a large-block O_DIRECT `fio`
#                 read of the same files (the device limit: fio's own measured runtime);
# with page caches dropped before every run, peak RSS and CPU seconds of each client, the CPU
# seconds MinIO spent serving it (client and MinIO share the machine's CPUs), and medians.
# Several checkpoint sizes are measured in one run, interleaved (every repetition runs every
# size), and summed up in one staging-by-size table, with where each fetch spent its time
# (process start, first byte, transfer, verification and publication, exit).
#
# Destinations (s5cmd's folder, our cache root) stand in for a node's own NVMe. The sources
# (MinIO's data, the "shared filesystem") are on the VM's one disk, and writing the copy back to
# that same disk would halve what it can read, so the copies go to memory, in two ways:
#   ext4-on-ram: ext4 on a loop device backed by a preallocated tmpfs file: a real block
#                filesystem with a journal, O_DIRECT and writeback, as on NVMe, minus the DMA
#                (the loop driver copies each block on the CPU, for both tools alike);
#   tmpfs:       /dev/shm, where every write is a CPU copy into 4 KiB pages for both tools and
#                O_DIRECT changes nothing.
# A size whose copy (or, for ext4-on-ram, the loop device's backing file) does not fit in the
# memory available is left out of that destination, and the script says so with the figures.
# A checkpoint that does not fit twice on the disk (its files and MinIO's copy) is generated in
# /dev/shm, uploaded and removed: that size has no shared-filesystem comparison.
#
#   bench/fetch/run.sh [sizes="4GiB"] [repetitions=3]
#     e.g. bench/fetch/run.sh "512MiB 1GiB 2GiB 4GiB 16GiB" 3
#   MODELPLANE_BUILD=build/x   reuse a configured build folder
#   BENCH_DESTINATIONS="ext4-on-ram tmpfs"
#   BENCH_SHA256SUM=0          leave out the `s5cmd cp, then sha256sum` anchor (the slowest run)
#   BENCH_SHARED_FS=0          leave out the shared-filesystem runs (fio, fetch from files)
#   BENCH_BASELINE_AGENT=path  also run this (earlier) modelplane-node-agent, as "fetch-before"
#   BENCH_KEEP_DATA=1          keep the checkpoints and MinIO's copies for the next run
#
# Needs root (drop_caches) and the e2e tools (MinIO, s5cmd: e2e/tools.sh build). Scratch data
# lives in /tmp/modelplane-fetch-bench and is removed on exit unless BENCH_KEEP_DATA=1: a 16 GiB
# run leaves about 40 GiB there, and a disk filled by a forgotten benchmark fails the next build.
set -euo pipefail
sizes=${1:-4GiB}
repetitions=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${MODELPLANE_BUILD:-$root/build/bench-fetch}  # any configured build folder works
work=/tmp/modelplane-fetch-bench
bin=$("$root/e2e/tools.sh" bindir)
destinations=${BENCH_DESTINATIONS:-ext4-on-ram tmpfs}
with_sha256sum=${BENCH_SHA256SUM:-1}
with_shared_fs=${BENCH_SHARED_FS:-1}
keep_data=${BENCH_KEEP_DATA:-0}
gib=$((1 << 30))
mkdir -p "$work"

"$root/scripts/release-build.sh" "$build" modelplane-node-agent >/dev/null
agent=$build/node-agent/modelplane-node-agent

# MinIO of our own on a free loopback port; with BENCH_KEEP_DATA=1 its data is kept between runs
# (uploads are slow).
port=$(python3 "$root/e2e/free_ports.py")
mkdir -p "$work/minio"
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
  rm -rf "$backing" /dev/shm/modelplane-fetch-bench /dev/shm/modelplane-fetch-bench-checkpoint
  if [[ $keep_data != 1 ]]; then
    # results.txt and phases.txt stay: they are the run's record, a few KiB
    rm -rf "$work/minio" "$work"/checkpoint-* "$work/ram-disk"
  fi
}
trap cleanup EXIT
for _ in $(seq 100); do curl -fsS "$S3_ENDPOINT_URL/minio/health/ready" >/dev/null 2>&1 && break; sleep 0.2; done
s5() { "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" "$@"; }
s5 ls s3://bench >/dev/null 2>&1 || s5 mb s3://bench >/dev/null
bytes_of() { python3 -c 'import re,sys; n,u=re.fullmatch(r"(\d+)(|KiB|MiB|GiB)",sys.argv[1]).groups(); print(int(n)<<{"":0,"KiB":10,"MiB":20,"GiB":30}[u])' "$1"; }
available_memory() { echo $(($(awk '/MemAvailable/{print $2}' /proc/meminfo) * 1024)); }
available_disk() { df -B1 --output=avail "$work" | tail -1; }

# prepare SIZE: the checkpoint (kept on disk when it fits twice there), MinIO's copy, and the
# manifests s3-SIZE.yaml and (with the files on disk) fs-SIZE.yaml.
declare -A total files shared
prepare() {
  local size=$1 checkpoint=$work/checkpoint-$1 template=$work/manifest-$1.yaml
  local wanted
  wanted=$(bytes_of "$size")
  local uploaded=1 out=$checkpoint
  s5 ls "s3://bench/model-$size/config.json" >/dev/null 2>&1 || uploaded=0
  if ((!uploaded && wanted + 4 * gib > $(available_disk))); then
    echo "$size: MinIO's copy needs $((wanted / gib)) GiB of disk, $(($(available_disk) / gib))" \
      "GiB free less 4: left out" | tee -a "$work/left-out.txt" >&2
    return 1
  fi
  if [[ ! -f $checkpoint/config.json ]] && { [[ ! -f $template ]] || ((!uploaded)); }; then
    if ((wanted * 2 + 4 * gib > $(available_disk))); then
      out=/dev/shm/modelplane-fetch-bench-checkpoint  # uploaded, then removed
      echo "checkpoint $size: $((wanted * 2 / gib)) GiB on disk (files and MinIO's copy) is" \
        "more than the $(($(available_disk) / gib)) GiB free less 4; generated in memory," \
        "without a shared-filesystem comparison" >&2
    fi
  fi
  if [[ ! -f $template || ( ! -f $out/config.json && $uploaded == 0 ) ]]; then
    python3 "$root/e2e/checkpoint/generate.py" --out "$out" --size "$size" --shards 8 --seed 5 \
      --modelrevision bench --bucket bench --prefix "model-$size" --endpoint @ENDPOINT@ \
      >"$template.tmp"
    mv "$template.tmp" "$template"
  fi
  if ((!uploaded)); then
    s5 cp "$out/*" "s3://bench/model-$size/" >/dev/null
  fi
  [[ $out == "$checkpoint" ]] || rm -rf "$out"
  sed "s|@ENDPOINT@|$S3_ENDPOINT_URL|" "$template" >"$work/s3-$size.yaml"
  total[$size]=$(python3 -c 'import re,sys; print(sum(map(int, re.findall(r"size: (\d+)", open(sys.argv[1]).read()))))' "$template")
  files[$size]=$(grep -c 'sha256:' "$template")
  shared[$size]=0
  if [[ $with_shared_fs == 1 && -f $checkpoint/config.json ]]; then
    shared[$size]=1
    python3 - "$work/s3-$size.yaml" "$checkpoint" >"$work/fs-$size.yaml" <<'PY'
import sys
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
  fi
}
rm -f "$work/results.txt" "$work/phases.txt" "$work/left-out.txt"
prepared=
for size in $sizes; do prepare "$size" && prepared+="$size "; done
sizes=$prepared

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
minio_cpu() { awk '{print $14 + $15}' "/proc/$minio_pid/stat"; }  # clock ticks, user + system
ticks=$(getconf CLK_TCK)
# timed DESTINATION SIZE LABEL COMMAND...: appends
# "destination size label seconds max_rss_kib cpu_seconds minio_cpu_seconds" to results.txt;
# for fetch runs, also where the time went (from the report's stage timestamps) to phases.txt.
timed() {
  local destination=$1 size=$2 label=$3
  shift 3
  drop
  local before started ended
  before=$(minio_cpu)
  started=$(date +%s.%N)
  /usr/bin/time -f "%e %M %U %S" -o "$work/time.txt" "$@" >"$work/$label.out" 2>"$work/$label.err" ||
    { cat "$work/$label.err" >&2; exit 1; }
  ended=$(date +%s.%N)
  read -r seconds rss user system <"$work/time.txt"
  echo "$destination $size $label $seconds $rss $user $system $(minio_cpu) $before $ticks" |
    awk '{printf "%s %s %s %s %s %.2f %.2f\n", $1, $2, $3, $4, $5, $6 + $7, ($8 - $9) / $10}' \
      >>"$work/results.txt"
  if [[ $label == fetch-* && $label != fetch-cached ]]; then
    python3 - "$work/$label.out" "$started" "$ended" "$destination $size $label" \
      >>"$work/phases.txt" <<'PY'
import datetime, json, sys
times = json.load(open(sys.argv[1]))["times"]
at = lambda key: datetime.datetime.strptime(times[key], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
    tzinfo=datetime.timezone.utc).timestamp()
started, ended = float(sys.argv[2]), float(sys.argv[3])
# start -> queued (process start, manifest, sources, store), queued -> first byte, first ->
# last byte, last byte -> published (hash tail, fsync, rename, manifest, view), then exit.
print(sys.argv[4], *(f"{value:.3f}" for value in (
    at("queued") - started, at("firstByte") - at("queued"), at("lastByte") - at("firstByte"),
    at("published") - at("lastByte"), ended - at("published"))))
PY
  fi
}
# The same for fio, whose own measured runtime is the device's time: its wall time adds the
# start of one process per file, which is not reading.
timed_fio() {
  drop
  local runtime_ms
  fio "${fio_args[@]}" >"$work/fio.out" 2>"$work/fio.err" || { cat "$work/fio.err" >&2; exit 1; }
  runtime_ms=$(cut -d';' -f9 "$work/fio.out")  # terse v3: read runtime in ms (group_reporting)
  awk -v ms="$runtime_ms" -v destination="$1" -v size="$2" \
    'BEGIN {printf "%s %s fio %.3f 0 0 0\n", destination, size, ms / 1000}' >>"$work/results.txt"
}
# s5cmd, then sha256sum of every file it wrote (as many at once as there are CPUs): what
# verifying a plain download costs with the standard tools.
download_then_verify() {
  "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" --numworkers 32 cp "s3://bench/model-$2/*" "$1/" &&
    find "$1" -type f -print0 | xargs -0 -P "$(nproc)" -n 1 sha256sum
}
export -f download_then_verify
export bin

# One fio job per file, all at once: large O_DIRECT reads, 8 in flight each (the device limit).
# (The index, config and tokenizer files, a few KiB, are below fio's block size and left out.)
set_fio_args() {
  fio_args=(--rw=read --bs=8M --direct=1 --ioengine=libaio --iodepth=8 --group_reporting
    --output-format=terse)
  for file in "$work/checkpoint-$1"/*; do
    (($(stat -c %s "$file") >= 8 << 20)) && fio_args+=(--name="$(basename "$file")" --filename="$file")
  done
}

# What a destination needs in memory for SIZE: its copy (tmpfs), or the loop device's backing
# file (ext4-on-ram: the copy, an eighth for ext4's journal and metadata, and 1 GiB); plus 2 GiB
# for the processes and MinIO's reads.
needed_memory() {
  local bytes=${total[$2]}
  case $1 in
    ext4-on-ram) echo $((bytes + bytes / 8 + gib + 2 * gib)) ;;
    tmpfs) echo $((bytes + 2 * gib)) ;;
  esac
}

# mount_destination NAME: sets `dest`, the folder the copies go to, and `fitting`, the sizes
# that fit there.
mount_destination() {
  fitting=()
  local largest=0
  for size in $sizes; do
    if (($(needed_memory "$1" "$size") <= $(available_memory))); then
      fitting+=("$size")
      ((${total[$size]} > largest)) && largest=${total[$size]}
    else
      echo "$1 $size: needs $(($(needed_memory "$1" "$size") / gib)) GiB of memory," \
        "$(($(available_memory) / gib)) GiB available: left out" | tee -a "$work/left-out.txt" >&2
    fi
  done
  case $1 in
    ext4-on-ram)
      ((${#fitting[@]} > 0)) || return 0
      # Preallocated, as a device's capacity is.
      fallocate -l $(((largest + largest / 8 + gib) >> 20 << 20)) "$backing"
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

for destination in $destinations; do
  mount_destination "$destination"
  for _ in $(seq "$repetitions"); do
    for size in "${fitting[@]}"; do
      rm -rf "$dest/s5cmd-out" "$dest/cache"
      timed "$destination" "$size" s5cmd "$bin/s5cmd" --endpoint-url "$S3_ENDPOINT_URL" \
        --numworkers 32 cp "s3://bench/model-$size/*" "$dest/s5cmd-out/"
      rm -rf "$dest/s5cmd-out"
      timed "$destination" "$size" fetch-s3 "$agent" fetch --revision "$work/s3-$size.yaml" \
        --cache-root "$dest/cache"
      rm -rf "$dest/cache"
      if [[ -n ${BENCH_BASELINE_AGENT:-} ]]; then
        timed "$destination" "$size" fetch-before "$BENCH_BASELINE_AGENT" fetch \
          --revision "$work/s3-$size.yaml" --cache-root "$dest/cache"
        rm -rf "$dest/cache"
      fi
      if [[ $with_sha256sum == 1 ]]; then
        timed "$destination" "$size" s5cmd+sha256sum bash -c 'download_then_verify "$0" "$1"' \
          "$dest/s5cmd-out" "$size"
        rm -rf "$dest/s5cmd-out"
      fi
      # The shared-filesystem anchor (fio) only reads, so its comparison wants the destination
      # that costs least: tmpfs. (The loop device copies each block in one kernel thread, slower
      # than this disk reads.)
      if [[ $destination == tmpfs && ${shared[$size]} == 1 ]]; then
        set_fio_args "$size"
        timed_fio "$destination" "$size"
        timed "$destination" "$size" fetch-fs "$agent" fetch --revision "$work/fs-$size.yaml" \
          --cache-root "$dest/cache"
        # Again, with everything cached: the process's own footprint, without any buffer in use.
        timed "$destination" "$size" fetch-cached "$agent" fetch --revision "$work/fs-$size.yaml" \
          --cache-root "$dest/cache"
        rm -rf "$dest/cache"
      fi
    done
  done
  if [[ $destination == ext4-on-ram && -n $loop_device ]]; then
    umount "$ram_disk" && losetup -d "$loop_device" && loop_device= && rm -f "$backing"
  fi
done

echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(free -g | awk '/Mem/{print $2}') GiB; $(date -u '+%F %H:%M UTC')"
echo "sources on: $(df -h "$work" | awk 'NR==2{print $1" "$2}') ($(findmnt -no FSTYPE -T "$work")); destinations: $destinations"
for size in $sizes; do
  echo "data $size: ${total[$size]} bytes in ${files[$size]} files"
done
echo "$repetitions repetitions; page cache dropped before each run"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
[[ -f $work/left-out.txt ]] && sed 's/^/left out: /' "$work/left-out.txt"
[[ -f $work/results.txt ]] || exit 0
touch "$work/phases.txt"
python3 - "$work/results.txt" "$work/phases.txt" "$sizes" \
  "$(for size in $sizes; do echo "$size=${total[$size]}"; done)" <<'PY'
import statistics, sys
sizes = sys.argv[3].split()
rows = {}
for line in open(sys.argv[1]):
    destination, size, label, seconds, rss, cpu, minio = line.split()
    rows.setdefault((destination, size), {}).setdefault(label, []).append(
        (float(seconds), int(rss), float(cpu), float(minio)))
phases = {}
for line in open(sys.argv[2]):
    destination, size, label, *values = line.split()
    phases.setdefault((destination, size, label), []).append([float(v) for v in values])
total = {size: int(bytes_) for size, bytes_ in (pair.split("=") for pair in sys.argv[4].split())}
def median(runs, label, column):
    return statistics.median(row[column] for row in runs[label])

for (destination, size), runs in rows.items():
    print()
    print(f"destination: {destination}, {size} ({total[size]} bytes)")
    print()
    print("| run | median s | MiB/s | peak RSS MiB | CPU s (client) | CPU s (MinIO) | all runs (s) |")
    print("|---|---|---|---|---|---|---|")
    for label in [label for label in ["s5cmd", "fetch-s3", "fetch-before", "s5cmd+sha256sum", "fio", "fetch-fs",
                                      "fetch-cached"] if label in runs]:
        seconds = median(runs, label, 0)
        rss = max(row[1] for row in runs[label]) / 1024
        print(f"| {label} | {seconds:.2f} | {total[size] / seconds / 2**20:.0f} | "
              f"{rss:.0f} | {median(runs, label, 2):.2f} | {median(runs, label, 3):.2f} | "
              f"{', '.join(f'{row[0]:.2f}' for row in runs[label])} |")
    ratio = lambda anchor, run: median(runs, anchor, 0) / median(runs, run, 0)
    print()
    print(f"object store: fetch / s5cmd = {ratio('s5cmd', 'fetch-s3'):.2f}x (target >= 1.0)")
    if "fetch-before" in runs:
        print(f"object store: fetch before / s5cmd = {ratio('s5cmd', 'fetch-before'):.2f}x")
    if "s5cmd+sha256sum" in runs:
        print(f"object store: fetch / (s5cmd then sha256sum) = {ratio('s5cmd+sha256sum', 'fetch-s3'):.2f}x")
    if "fio" in runs:
        print(f"shared filesystem: fetch / fio O_DIRECT = {ratio('fio', 'fetch-fs'):.2f}x (target >= 0.9)")
    if "fetch-cached" in runs:
        base = max(row[1] for row in runs["fetch-cached"]) / 1024
        staging = max(max(row[1] for row in runs[label]) for label in ["fetch-s3", "fetch-fs"]) / 1024
        print(f"memory: peak RSS {staging:.0f} MiB, of which {staging - base:.0f} MiB above a fully "
              f"cached fetch ({base:.0f} MiB); the buffer pool is 256 MiB")

print()
print("Staging by size, object store (medians; time split from fetch's report, medians of each part):")
print()
print("| size | destination | s5cmd s | fetch s | fetch / s5cmd | fetch MiB/s | start | to first byte "
      "| transfer | to published | exit | RSS MiB | CPU s fetch / s5cmd | CPU s MinIO fetch / s5cmd "
      "| before / s5cmd |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for destination in dict.fromkeys(key[0] for key in rows):
    for size in sizes:
        runs = rows.get((destination, size))
        if runs is None:
            continue
        split = phases.get((destination, size, "fetch-s3"), [])
        parts = [statistics.median(run[index] for run in split) for index in range(5)] if split else [0] * 5
        fetch, anchor = median(runs, "fetch-s3", 0), median(runs, "s5cmd", 0)
        print(f"| {size} | {destination} | {anchor:.2f} | {fetch:.2f} | {anchor / fetch:.2f}x | "
              f"{total[size] / fetch / 2**20:.0f} | " + " | ".join(f"{part:.2f}" for part in parts) +
              f" | {max(row[1] for row in runs['fetch-s3']) / 1024:.0f} | "
              f"{median(runs, 'fetch-s3', 2):.2f} / {median(runs, 's5cmd', 2):.2f} | "
              f"{median(runs, 'fetch-s3', 3):.2f} / {median(runs, 's5cmd', 3):.2f} | " +
              (f"{anchor / median(runs, 'fetch-before', 0):.2f}x |" if "fetch-before" in runs else "- |"))
PY
