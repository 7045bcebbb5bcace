#!/usr/bin/env bash
# The one command that sets up and runs every test: formatting, one warnings-as-errors build
# under AddressSanitizer + UndefinedBehaviorSanitizer (libraries, binaries, tests, benchmarks),
# its unit tests, the tests against a local control plane and the end-to-end scenario (a
# ModelRevision staged on nodes, pods placed where the weights are) with those same
# instrumented binaries, short fuzzing runs and the smoke test of the control plane, and
# clang-tidy (.clang-tidy, bugprone-exception-escape among its checks) over that build.
#
# One build, not a release build and a sanitizer build, and a unity build at -O0 (UBSan on the
# product's code, not the tests' own; cmake/ModelplaneTargets.cmake): on two cores
# the build is most of the run. The per-file build at -O1 under ASan+UBSan took about 30 minutes
# of two busy cores on a quiet VM and ran past CI's 90 minutes on a loaded one (2026-12-01);
# merged 16 sources to a translation unit (each header parsed once per batch, not once per
# file) and at -O0 (UBSan at -O1 made one coroutine file take 3 minutes) it took 12 (2026-12-02). The tests wait on sockets and the API server, not on the CPU,
# so -O0 costs them little. --skip-sanitizers builds without them (RelWithDebInfo) instead.
# clang-tidy checks only the translation units a change touches (scripts/lint.sh); --full-tidy
# checks all of them, as a scheduled run should.
# Usage: scripts/test.sh [--skip-e2e] [--skip-sanitizers] [--full-tidy]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run_e2e=1
run_sanitizers=1
full_tidy=
for arg in "$@"; do
  case $arg in
    --skip-e2e) run_e2e=0 ;;
    --skip-sanitizers) run_sanitizers=0 ;;
    --full-tidy) full_tidy=--full ;;
    *) echo "usage: $0 [--skip-e2e] [--skip-sanitizers] [--full-tidy]" >&2; exit 2 ;;
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

build=build/ci
build_flags=(-DMODELPLANE_WERROR=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
if ((run_sanitizers)); then
  # -g1: line tables are all a sanitizer report needs, and full debug info doubles link time.
  build_flags+=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1"
                "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1" -DMODELPLANE_SANITIZE=ON)
  # A report (leaks included) fails the process that made it: tests, agents, operator and
  # extender alike. Undefined behaviour stops the process (-fno-sanitize-recover) with a stack.
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
else
  build_flags+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMODELPLANE_SANITIZE=OFF)
fi

build_all() {
  cmake -G Ninja -S "$root" -B "$build" "${build_flags[@]}" >/dev/null &&
    "$root/scripts/ninja-progress.sh" -C "$build" -j "$jobs"
}

unit_tests() {
  ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 300 --label-exclude cluster
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
    ctest --test-dir "$build" --output-on-failure --timeout 600 --label-regex cluster
)

if ! scripts/setup.sh; then
  echo "setup failed"
  echo "steps: 0 passed, 1 failed"
  exit 1
fi

step "format" scripts/lint.sh
# What the README and docs/*.md name exists: files, links and their anchors, sections, the
# binaries' and scripts' subcommands and flags, every module in the README's tour
# (scripts/check_docs.py); and the checker fails on a planted wrong name
# (tests/scripts/test_check_docs.py). Seconds, no build needed.
docs_check() {
  python3 scripts/check_docs.py &&
    .venv/bin/python -m pytest -q -p no:cacheprovider tests/scripts/test_check_docs.py
}
step "docs (every file, command and flag they name exists)" docs_check
# The chart's alert rules (promtool check and unit tests) and dashboard, and the metric names
# both use against the sources' registrations: seconds, no build or cluster needed
# (e2e/monitoring/check_scraped.sh checks the names against the running binaries' /metrics).
step "chart alerts and dashboard (promtool, metric names)" e2e/monitoring/check.sh
failed_before_build=$failed
step "build (-Werror$( ((run_sanitizers)) && echo ', ASan + UBSan'))" build_all
if ((failed > failed_before_build)); then
  echo "the build failed: nothing to test"
  echo "steps: $passed passed, $failed failed"
  exit 1
fi
# clang-tidy (scripts/lint.sh --tidy, .clang-tidy) over the build's unity translation units
# rather than its ~430 sources, so each header is parsed once per batch as in the build;
# findings in the included .cc files and the project's headers count, and any fails the step.
# Only the units a change touches (scripts/tidy_units.py: those that depend, by the compiler's
# dependency record, on a file changed since the last commit checked clean here, else since
# origin/main or HEAD~1, minus those that passed before with the same content; every unit is a
# candidate when .clang-tidy, the lint scripts or the CMake files change); --full-tidy checks
# them all. It needs only the build's compile_commands.json and deps log, so it starts now in
# the background at the lowest priority and uses the CPU the tests below leave idle while they
# wait on sockets and the API server; step "clang-tidy" at the end waits for it and prints its
# findings. Measured on 2026-12-06 (2 cores, under another engineer's builds): all 110 units
# took 1,481 CPU-seconds, 21 minutes; the units the last 80 commits touched, a mean of 174
# CPU-seconds a commit (0 for the 38 that touched no unit, 60 on average for the 34 that
# touched 1-10 units, all 1,481 on a fresh machine for the 8 that changed CMake files).
tidy_log=$(mktemp)
setsid nice -n 19 scripts/lint.sh --skip-format --tidy "$build" $full_tidy >"$tidy_log" 2>&1 &
tidy_pid=$!
trap 'kill -- -"$tidy_pid" 2>/dev/null; rm -f "$tidy_log"' EXIT
tidy_wait() {
  local status=0
  wait "$tidy_pid" || status=$?
  cat "$tidy_log"
  return "$status"
}
step "unit tests" unit_tests
# The checker the scenario runs on kube-apiserver's audit log (RBAC against what the code calls),
# on a synthetic chart and log, the harnesses' port picker, the choice of the units clang-tidy
# checks (on a small project ninja builds), and the test Hub server against the real
# huggingface_hub and modelscope clients; seconds in all.
step "harness tests (RBAC audit checker, port picker, clang-tidy's units, test Hub server)" \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/e2e/test_rbac_audit.py \
  tests/e2e/test_free_ports.py tests/scripts/test_tidy_units.py tests/e2e/test_hub_server.py \
  tests/e2e/test_modelscope_server.py
# kubectl-modelplane import, the binary just built, against the test Hub and huggingface_hub.
step "kubectl modelplane import against the test Hub" env MODELPLANE_BINARY_DIR="$root/$build" \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/e2e/test_hub_import.py
step "Kubernetes client tests on a local control plane" cluster_tests
if [[ -x scripts/fuzz.sh ]]; then
  step "fuzzers (bounded run)" scripts/fuzz.sh 20
fi
if ((run_e2e)) && [[ -x e2e/smoke.sh ]]; then
  step "e2e smoke on the local control plane" e2e/smoke.sh
fi
if ((run_e2e)) && [[ -x e2e/chart_test.sh ]]; then
  # The Helm chart on a cluster of its own: schema, server dry run, install, least privilege,
  # admission policies, webhook and extender TLS (docs/helm.md); about a minute.
  step "e2e Helm chart" e2e/chart_test.sh
fi
if ((run_e2e)); then
  # Reuses the build of step "build" (it holds the binaries).
  step "e2e scenario: stage, place, ready" env MODELPLANE_BUILD="$root/$build" \
    MODELPLANE_E2E_STATE=/tmp/modelplane-scenario-$$ e2e/scenario.sh
  # The short admission check: 6 nodes behind a throttling origin, once as is and once with
  # a zone's seeder killed mid-fetch (bench/admission runs the 16-node matrix).
  step "e2e admission and fan-out" env MODELPLANE_BUILD="$root/$build" \
    MODELPLANE_E2E_STATE=/tmp/modelplane-admission-$$ e2e/admission.sh --phases on --check
  step "e2e admission: a seeder killed mid-fetch" env MODELPLANE_BUILD="$root/$build" \
    MODELPLANE_E2E_STATE=/tmp/modelplane-admission-$$ e2e/admission.sh --phases on \
    --kill-seeder --size 256MiB --check
  # The fleet matrix's short version: each tier (cold, shared filesystem, node-local, peer,
  # fallback) rolling out 8 replicas of a 64 MiB model on 10 nodes (docs/fleet.md).
  step "e2e fleet: 8 replicas per tier" env MODELPLANE_SKIP_BUILD=1 MODELPLANE_BUILD="$root/$build" \
    bench/fleet/run.sh --replicas 8 --size 64MiB --check --state /tmp/modelplane-fleet-$$ \
    --out /tmp/modelplane-fleet-$$-table
  # A real node (kubelet, kube-proxy, containerd, runc) beside the KWOK ones: the chart
  # installed from a registry on loopback with images of this build's binaries, a Deployment
  # with only the annotation reading every file through the CSI volume, the agent replaced
  # twice and the node drained while it reads (docs/real-node.md); root only.
  if (($(id -u) == 0)); then
    step "e2e real node: helm install, CSI volume, agent restarts, drain" env \
      MODELPLANE_BUILD="$root/$build" MODELPLANE_E2E_STATE=/tmp/modelplane-real-node-$$ \
      e2e/real-node.sh
  else
    echo "==> e2e real node: skipped (needs root: containerd, kubelet and mounts)"
  fi
fi
step "clang-tidy (started after the build)" tidy_wait

if ((failed)); then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "steps: $passed passed, $failed failed"
((failed == 0))
