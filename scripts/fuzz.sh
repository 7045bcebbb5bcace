#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-16 (ASan + UBSan) and runs each for a bounded time.
#
#   scripts/fuzz.sh [seconds-per-fuzzer]     default 30
#
# Uses its own build folder (build/fuzz) so it never disturbs the GCC builds. Each fuzzer starts
# from its seed corpus in fuzz/corpus/<name>/ and writes new inputs to build/fuzz/corpus/<name>/
# (the seeds stay small and reviewed); crashes land in build/fuzz/artifacts/<name>/ and make
# the script fail. clang-16 is required: clang-14 cannot compile GCC 12's <expected>.
set -euo pipefail

SECONDS_PER_FUZZER="${1:-30}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROOT}/build/fuzz"
FUZZERS=(safetensors_header_fuzzer api_json_fuzzer admission_review_fuzzer extender_request_fuzzer
         model_signature_fuzzer)
JOBS="${MODELPLANE_FUZZ_BUILD_JOBS:-2}"

CC_BIN="${CC:-clang-16}"
CXX_BIN="${CXX:-clang++-16}"
command -v "${CXX_BIN}" >/dev/null || { echo "fuzz.sh: ${CXX_BIN} not found (apt install clang-16 libclang-rt-16-dev)" >&2; exit 2; }

# The libraries need coverage instrumentation and the sanitizers too, not only the fuzzer main.
SANITIZE="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# GCC 12's <expected> is hidden unless __cpp_concepts >= 202002L. Clang 16 implements what that
# value stands for (P0848, conditionally trivial special members) but still reports 201907L, so
# the real libstdc++ std::expected is unlocked by raising the macro. The probe below proves
# the combination compiles and behaves (triviality included) before anything is built with it;
# drop this once a newer clang is installed.
EXPECTED_FIX="-D__cpp_concepts=202002L -Wno-macro-redefined"
probe_dir="$(mktemp -d)"
trap 'rm -rf "${probe_dir}"' EXIT
cat >"${probe_dir}/probe.cc" <<'PROBE'
#include <expected>
#include <string>
#include <type_traits>
static_assert(std::is_trivially_copy_constructible_v<std::expected<int, int>>);
static_assert(!std::is_trivially_copy_constructible_v<std::expected<std::string, int>>);
int main() {
  std::expected<std::string, int> ok = std::string("x");
  std::expected<std::string, int> bad = std::unexpected(3);
  return (ok.value() == "x" && !bad && bad.error() == 3) ? 0 : 1;
}
PROBE
if ! "${CXX_BIN}" -std=c++2b ${EXPECTED_FIX} "${probe_dir}/probe.cc" -o "${probe_dir}/probe" ||
   ! "${probe_dir}/probe"; then
  echo "fuzz.sh: ${CXX_BIN} cannot use libstdc++'s std::expected; a newer clang is needed" >&2
  exit 2
fi

cmake -G Ninja -S "${ROOT}" -B "${BUILD}" \
  -DCMAKE_C_COMPILER="${CC_BIN}" -DCMAKE_CXX_COMPILER="${CXX_BIN}" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_C_FLAGS="${SANITIZE}" -DCMAKE_CXX_FLAGS="${SANITIZE} ${EXPECTED_FIX}" \
  -DMODELPLANE_BUILD_FUZZERS=ON -DMODELPLANE_BUILD_TESTS=OFF -DMODELPLANE_BUILD_BENCH=OFF >/dev/null
ninja -C "${BUILD}" -j "${JOBS}" "${FUZZERS[@]}"

status=0
for fuzzer in "${FUZZERS[@]}"; do
  corpus="${BUILD}/corpus/${fuzzer%_fuzzer}"
  artifacts="${BUILD}/artifacts/${fuzzer%_fuzzer}"
  mkdir -p "${corpus}" "${artifacts}"
  binary="$(find "${BUILD}" -type f -name "${fuzzer}" -perm -u+x | head -n 1)"
  echo "fuzz.sh: running ${fuzzer} for ${SECONDS_PER_FUZZER}s"
  if ! "${binary}" "${corpus}" "${ROOT}/fuzz/corpus/${fuzzer%_fuzzer}" \
      -max_total_time="${SECONDS_PER_FUZZER}" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="${artifacts}/" -print_final_stats=1 2>"${BUILD}/${fuzzer}.log"; then
    echo "fuzz.sh: ${fuzzer} FAILED; see ${BUILD}/${fuzzer}.log and ${artifacts}/" >&2
    tail -n 40 "${BUILD}/${fuzzer}.log" >&2
    status=1
  else
    grep -E "^stat::(number_of_executed_units|new_units_added)" "${BUILD}/${fuzzer}.log" || true
  fi
done
exit "${status}"
