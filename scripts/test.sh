#!/usr/bin/env bash
# The one command that sets up and runs every test: formatting, the unit tests in a warnings-
# as-errors build, the same unit tests under AddressSanitizer + UndefinedBehaviorSanitizer,
# short fuzzing runs, the smoke test of the local control plane, and the end-to-end scenario
# (a ModelRevision staged on nodes, pods placed where the weights are) on it.
# Usage: scripts/test.sh [--skip-e2e] [--skip-sanitizers]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run_e2e=1
run_sanitizers=1
for arg in "$@"; do
  case $arg in
    --skip-e2e) run_e2e=0 ;;
    --skip-sanitizers) run_sanitizers=0 ;;
    *) echo "usage: $0 [--skip-e2e] [--skip-sanitizers]" >&2; exit 2 ;;
  esac
done

jobs=$(nproc)
passed=0
failed=0
failed_steps=()
step() {
  local name=$1
  shift
  echo "==> $name"
  local started=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "<== $name: passed in $((SECONDS - started)) s"
  else
    failed=$((failed + 1))
    failed_steps+=("$name")
    echo "<== $name: FAILED after $((SECONDS - started)) s"
  fi
}

build_and_test() {
  local dir=$1
  shift
  cmake -G Ninja -S "$root" -B "$dir" "$@" >/dev/null &&
    "$root/scripts/ninja-progress.sh" -C "$dir" -j "$jobs" &&
    ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 300 --label-exclude cluster
}

# Tests labelled "cluster" run against a local control plane of their own, taken down again
# whatever happens.
cluster_tests() (
  export MODELPLANE_E2E_STATE=/tmp/modelplane-cluster-tests-$$
  trap 'e2e/cluster.sh down >/dev/null 2>&1 || true' EXIT
  e2e/cluster.sh up || exit 1
  eval "$(e2e/cluster.sh env)"
  kubectl apply -f crds/ >/dev/null || exit 1
  MODELPLANE_TEST_KUBECONFIG=$KUBECONFIG MODELPLANE_TEST_CLUSTER=$root/e2e/cluster.sh \
    ctest --test-dir build/ci --output-on-failure --timeout 600 --label-regex cluster
)

if ! scripts/setup.sh; then
  echo "setup failed"
  echo "steps: 0 passed, 1 failed"
  exit 1
fi

step "format" scripts/lint.sh
step "unit tests (release, -Werror)" build_and_test build/ci \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMODELPLANE_WERROR=ON
if ((run_sanitizers)); then
  step "unit tests (ASan + UBSan)" build_and_test build/asan \
    -DCMAKE_BUILD_TYPE=Debug -DMODELPLANE_SANITIZE=ON -DMODELPLANE_BUILD_BENCH=OFF
fi
step "Kubernetes client tests on a local control plane" cluster_tests
if [[ -x scripts/fuzz.sh ]]; then
  step "fuzzers (bounded run)" scripts/fuzz.sh 20
fi
if ((run_e2e)) && [[ -x e2e/smoke.sh ]]; then
  step "e2e smoke on the local control plane" e2e/smoke.sh
fi
if ((run_e2e)); then
  # Reuses the release build of step "unit tests" (it holds the three binaries).
  step "e2e scenario: stage, place, ready" env MODELPLANE_BUILD="$root/build/ci" \
    MODELPLANE_E2E_STATE=/tmp/modelplane-scenario-$$ e2e/scenario.sh
fi

if ((failed)); then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "steps: $passed passed, $failed failed"
((failed == 0))
