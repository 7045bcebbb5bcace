#!/usr/bin/env bash
# Checks formatting of every tracked C++ file with clang-format, and, with --tidy, runs
# clang-tidy-16 over the sources in a build folder's compile_commands.json.
# Usage: scripts/lint.sh [--fix] [--tidy BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=check
tidy_build=
while (($#)); do
  case $1 in
    --fix) mode=fix ;;
    --tidy) tidy_build=$2; shift ;;
    *) echo "usage: $0 [--fix] [--tidy BUILD_DIR]" >&2; exit 2 ;;
  esac
  shift
done

mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ $mode == fix ]]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run --Werror "${files[@]}"
  echo "lint: clang-format clean (${#files[@]} files)"
fi

if [[ -n $tidy_build ]]; then
  # Sources only (headers are checked through them). clang-tidy-16 parses GCC's flags but not
  # its -std=c++23 spelling, and libstdc++ 12 hides <expected> from clang's older
  # __cpp_concepts value, hence the extra arguments.
  mapfile -t sources < <(git ls-files '*.cc' | grep -v -E '^(fuzz|bench)/')
  printf '%s\n' "${sources[@]}" |
    xargs -P "$(nproc)" -n 4 clang-tidy-16 -p "$tidy_build" --quiet --warnings-as-errors='*' \
      --extra-arg=-std=c++2b --extra-arg=-D__cpp_concepts=202002L \
      --extra-arg=-Wno-builtin-macro-redefined
  echo "lint: clang-tidy clean (${#sources[@]} sources)"
fi
