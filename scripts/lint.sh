#!/usr/bin/env bash
# Checks formatting of every tracked C++ file with clang-format, and, with --tidy, runs
# clang-tidy-16 (.clang-tidy) over the translation units of a build folder's
# compile_commands.json that a change touches (scripts/tidy_units.py; the test command's step),
# or over all of them with --full (the full run: about 1,650 CPU-seconds); --base REV counts
# changes from REV (default: the merge-base with origin/main, else HEAD~1); --changed FILE
# (repeatable) counts only FILE as changed instead of asking git (the units a header reaches).
# Arguments after -- go to clang-tidy (--checks='clang-analyzer-*').
# Usage: scripts/lint.sh [--fix] [--skip-format] [--tidy BUILD_DIR [--full] [--base REV]
#                        [--changed FILE]... [-- CLANG_TIDY_ARGS...]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=check
format=1
tidy_build=
tidy_full=
tidy_base=
tidy_changed=()
tidy_args=()
while (($#)); do
  case $1 in
    --fix) mode=fix ;;
    --skip-format) format=0 ;;
    --tidy) tidy_build=$2; shift ;;
    --full) tidy_full=1 ;;
    --base) tidy_base=$2; shift ;;
    --changed) tidy_changed+=(--changed "$2"); shift ;;
    --) shift; tidy_args=("$@"); break ;;
    *) echo "usage: $0 [--fix] [--skip-format] [--tidy BUILD_DIR [--full] [--base REV]" \
            "[--changed FILE]... [-- CLANG_TIDY_ARGS...]]" >&2
       exit 2 ;;
  esac
  shift
done

# Tracked files and new ones git does not ignore: a file is formatted before its first commit,
# not found unformatted by CI's clean clone.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h')
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
  # the project's headers are reported through --header-filter (the project's folders only).
  # scripts/tidy_units.py lists them (fuzz/, bench/, generated code and the REST client left
  # out; largest first, so the last job to start is a short one) and, without --full, keeps only
  # those a change touches whose content has not passed before: units that depend on a file
  # changed since the base commit (the compiler's dependency record: a header change reaches
  # every unit that includes it), minus those the cache under ~/.cache/modelplane/tidy holds a
  # pass of with the same content; see its header for the base and what forces a full run.
  folders='core|operator|node-agent|scheduler-extender|kubectl-plugin|tests'
  # clang-tidy-16 parses GCC's flags but not its -std=c++23 spelling; libstdc++ 12 hides
  # <expected> from clang's older __cpp_concepts value; Boost 1.74 finds co_await in clang only
  # with <experimental/coroutine>, which libstdc++ lacks (clang 16 has the standard one).
  tidy_command=(clang-tidy-16 -p "$tidy_build" --quiet --warnings-as-errors='*'
                --header-filter="^$root/($folders)/" --extra-arg=-std=c++2b
                --extra-arg=-U__cpp_concepts --extra-arg=-D__cpp_concepts=202002L
                --extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1 --extra-arg=-Wno-unknown-warning-option
                ${tidy_args[@]+"${tidy_args[@]}"})
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/modelplane/tidy
  selection=$(python3 "$root/scripts/tidy_units.py" "$tidy_build" --cache "$cache" \
                --tidy-version "$(clang-tidy-16 --version)" --args "${tidy_command[*]}" \
                ${tidy_full:+--full} ${tidy_base:+--base "$tidy_base"} \
                ${tidy_changed[@]+"${tidy_changed[@]}"}) || exit 2
  mapfile -t units < <(printf '%s\n' "$selection" | sed '/^$/d')
  if ((${#units[@]} == 0)); then
    python3 "$root/scripts/tidy_units.py" "$tidy_build" --cache "$cache" --confirm
    echo "lint: clang-tidy: no translation unit to check"
    exit 0
  fi
  # One unit per job; a pass is remembered under the key tidy_units.py gave it ("-": not).
  export MODELPLANE_TIDY_CACHE=$cache
  MODELPLANE_TIDY_COMMAND=$(printf '%q ' "${tidy_command[@]}")
  export MODELPLANE_TIDY_COMMAND
  # shellcheck disable=SC2016  # expanded by the inner shell
  printf '%s\n' "${units[@]}" |
    nice -n 10 xargs -P "$(nproc)" -n 2 bash -c '
      eval "command=($MODELPLANE_TIDY_COMMAND)"
      "${command[@]}" "$1" || exit 1
      [[ $2 == - ]] || touch "$MODELPLANE_TIDY_CACHE/$2"' tidy_unit
  # A clean tree's commit is now checked: later runs count changes from it.
  python3 "$root/scripts/tidy_units.py" "$tidy_build" --cache "$cache" --confirm
  echo "lint: clang-tidy clean (${#units[@]} translation units)"
fi
