#!/usr/bin/env bash
# extender_bench against scheduler-extender/ as it was at a commit (default 65ef1df: before the
# per-request HeldBytes and the nodes' digest index), so before and after run on the same
# machine under the same load. Everything but scheduler-extender/ comes from the working tree
# and build/bench's libraries (build extender_bench there first); with --bench-from-commit the
# benchmark's own sources come from that commit too, for an anchor whose extender API the
# working tree's benchmark no longer builds against (its MODELPLANE_EXTENDER_BASELINE branch
# is 65ef1df's API).
#
#   bench/extender/baseline.sh [--commit C [--bench-from-commit]] [extender_bench flags...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
commit=65ef1df
bench_from_commit=0
if [[ ${1:-} == --commit ]]; then
  commit=$2
  shift 2
  if [[ ${1:-} == --bench-from-commit ]]; then
    bench_from_commit=1
    shift
  fi
fi
build=$root/build/bench
[[ -f $build/build.ninja ]] || { echo "configure build/bench first (docs/benchmarks.md)" >&2; exit 1; }
suffix=
((bench_from_commit)) && suffix=-whole
out=/tmp/modelplane-extender-baseline-$commit$suffix
mkdir -p "$out/src" "$out/obj"
# Rebuilt when the benchmark's own sources changed since.
if [[ ! -x $out/extender_bench ]] ||
  [[ -n $(find "$root/bench/extender" \( -name '*.cc' -o -name '*.h' \) -newer "$out/extender_bench") ]]; then
  git -C "$root" archive "$commit" scheduler-extender | tar -x -C "$out/src"
  flags=(-DBOOST_ALL_NO_LIB -DBOOST_ASIO_NO_DEPRECATED -DFMT_SHARED -DSPDLOG_COMPILED_LIB
         -DSPDLOG_FMT_EXTERNAL -DSPDLOG_SHARED_LIB -D_TURN_OFF_PLATFORM_STRING
         -I"$out/src" -I"$root" -O3 -DNDEBUG -std=c++23)
  if ((bench_from_commit)); then
    git -C "$root" archive "$commit" bench/extender | tar -x -C "$out/src"
    bench_dir=$out/src/bench/extender
  else
    flags+=(-DMODELPLANE_EXTENDER_BASELINE)
    bench_dir=$root/bench/extender
  fi
  # The benchmark's main and the synthetic fleet; not the other tools' mains.
  sources=("$bench_dir/extender_bench_main.cc" "$bench_dir/synthetic_fleet.cc")
  for source in "$out"/src/scheduler-extender/*.cc; do
    [[ $source == *_main.cc ]] || sources+=("$source")
  done
  objects=()
  for source in "${sources[@]}"; do
    object=$out/obj/$(basename "$source" .cc).o
    nice -n 10 c++ "${flags[@]}" -c "$source" -o "$object" &
    objects+=("$object")
    while (($(jobs -r | wc -l) >= 2)); do sleep 0.5; done
  done
  wait
  # extender_bench's libraries, less the extender's own.
  mapfile -t libraries < <(grep -A3 '^build bench/extender/extender_bench:' "$build/build.ninja" |
    sed -n 's/^  LINK_LIBRARIES = //p' | tr ' ' '\n' | grep -v -e scheduler_extender -e extender_synthetic_fleet -e '^$')
  (cd "$build" && c++ -o "$out/extender_bench" "${objects[@]}" "${libraries[@]}" -lpthread)
fi
"$out/extender_bench" "$@"
