#!/usr/bin/env bash
# Checks formatting of every tracked C++ file with clang-format, and, with --tidy, runs
# clang-tidy-16 (.clang-tidy) over the translation units of a build folder's
# compile_commands.json; arguments after -- go to clang-tidy (--checks='clang-analyzer-*').
# Usage: scripts/lint.sh [--fix] [--skip-format] [--tidy BUILD_DIR [-- CLANG_TIDY_ARGS...]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=check
format=1
tidy_build=
tidy_args=()
while (($#)); do
  case $1 in
    --fix) mode=fix ;;
    --skip-format) format=0 ;;
    --tidy) tidy_build=$2; shift ;;
    --) shift; tidy_args=("$@"); break ;;
    *) echo "usage: $0 [--fix] [--skip-format] [--tidy BUILD_DIR [-- CLANG_TIDY_ARGS...]]" >&2
       exit 2 ;;
  esac
  shift
done

mapfile -t files < <(git ls-files '*.cc' '*.h')
if ((!format)); then
  :
elif [[ $mode == fix ]]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run --Werror "${files[@]}"
  echo "lint: clang-format clean (${#files[@]} files)"
fi

if [[ -n $tidy_build ]]; then
  tidy_build=$(cd "$tidy_build" && pwd)
  if [[ ! -f $tidy_build/compile_commands.json ]]; then
    echo "lint: no compile_commands.json in $tidy_build (configure it first)" >&2
    exit 2
  fi
  # The build's translation units, not its sources: in a unity build (CI's) each is one of
  # CMake's Unity/unity_N_cxx.cxx files, which #include up to 16 .cc files, so a header is
  # parsed once per batch instead of once per source. Findings in the included .cc files and in
  # the project's headers are reported through --header-filter (the project's folders only);
  # fuzz/ and bench/ are left out, and so are units that hold no project source (the generated
  # CSI protobuf code). Largest first, so the last job to start is a short one.
  folders='core|operator|node-agent|scheduler-extender|kubectl-plugin|tests'
  mapfile -t units < <(
    sed -n 's/^ *"file": "\(.*\)",\{0,1\}$/\1/p' "$tidy_build/compile_commands.json" |
      grep -v -E "^($root|$tidy_build)/(fuzz|bench)/" |
      # cpprest's json.h does not compile under clang 16 in C++23 mode with libstdc++ 12 (its
      # constexpr unique_ptr destructor needs a type json.h only declares), so the one unit
      # that includes it, the REST client, is checked by GCC's warnings only.
      grep -v -E "^$root/core/kube/kube_client\.cc$" |
      while read -r unit; do
        if [[ $unit != "$tidy_build"/* ]]; then
          echo "1 $unit"
        elif count=$(grep -c -E "^#include \"$root/($folders)/" "$unit"); then
          echo "$count $unit"
        fi
      done | sort -rn | cut -d' ' -f2-)
  if ((${#units[@]} == 0)); then
    echo "lint: no translation units in $tidy_build/compile_commands.json" >&2
    exit 2
  fi
  # clang-tidy-16 parses GCC's flags but not its -std=c++23 spelling; libstdc++ 12 hides
  # <expected> from clang's older __cpp_concepts value; Boost 1.74 finds co_await in clang only
  # with <experimental/coroutine>, which libstdc++ lacks (clang 16 has the standard one).
  printf '%s\n' "${units[@]}" |
    nice -n 10 xargs -P "$(nproc)" -n 1 clang-tidy-16 -p "$tidy_build" --quiet \
      --warnings-as-errors='*' --header-filter="^$root/($folders)/" \
      --extra-arg=-std=c++2b --extra-arg=-U__cpp_concepts --extra-arg=-D__cpp_concepts=202002L \
      --extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1 --extra-arg=-Wno-unknown-warning-option \
      ${tidy_args[@]+"${tidy_args[@]}"}
  echo "lint: clang-tidy clean (${#units[@]} translation units)"
fi
