#!/usr/bin/env bash
# Hollow agents on the real API server: N KWOK nodes of e2e/cluster.sh, the real
# modelplane-operator, and one process of N hollow node agents (hollow_agents_main.cc: the
# agent's real control loop, stager, fetch engine and store; only the origin is a model, every
# node reading its files at --rate). One ModelRevision prestaged on every node is the rollout.
#
# Measured from kube-apiserver's own /metrics, from the revision's create to every node Ready:
# requests by verb and resource, watch events and their bytes by resource (everything the API
# server sent to every watcher, the operator's included), per node and per second, and the CPU
# seconds and peak RSS of kube-apiserver and etcd. Appends one JSON line to
# bench/hollow/results.jsonl.
#
#   bench/hollow/run.sh --nodes 100 [--build build/bench] [--operator BINARY]
#                       [--agents BINARY] [--size 1MiB] [--files 2] [--rate 32768]
#                       [--label TEXT] [--keep]
# HOLLOW_LOG_LEVEL=info logs each agent's status writes and their reasons (large at 1,000).
#
# --build names a folder holding bench/hollow/hollow_agents and operator/modelplane-operator;
# --agents and --operator name the binaries apart (the "before" numbers come from binaries built
# at an older commit, see docs/benchmarks.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

nodes=100
build=$root/build/bench
operator=""
agents=""
files=2
size=$((1 << 20))
rate=32768
label=""
keep=0
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --operator) operator=$2; shift 2 ;;
    --agents) agents=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --size) size=$(numfmt --from=iec-i "${2%B}"); shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
operator=${operator:-$build/operator/modelplane-operator}
agents=${agents:-$build/bench/hollow/hollow_agents}
for binary in "$operator" "$agents"; do
  [[ -x $binary ]] || { echo "missing $binary" >&2; exit 1; }
done
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/mp-hollow}
export MODELPLANE_E2E_NODES=$nodes
state=$MODELPLANE_E2E_STATE
work=$state/bench-hollow
results=$root/bench/hollow/results.jsonl

say() { printf '[hollow] %s\n' "$*" >&2; }
operator_pid=""
agents_pid=""
cleanup() {
  local rc=$?
  for pid in $agents_pid $operator_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      timeout 60 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  if ((rc != 0)); then
    for log in operator agents; do
      [[ -f $work/$log.log ]] || continue
      say "failed; last lines of the $log log:"
      tail -n 15 "$work/$log.log" >&2 || true
    done
  fi
  if ((keep)); then
    say "cluster left up: eval \"\$(MODELPLANE_E2E_STATE=$state e2e/cluster.sh env)\""
  else
    e2e/cluster.sh down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
peak_rss_mb() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
component_pid() { awk '{print $1}' "$state/pids/$1"; }
wait_until() {  # wait_until SECONDS WHAT COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    for pid in $operator_pid $agents_pid; do
      kill -0 "$pid" 2>/dev/null || { say "process $pid exited"; exit 1; }
    done
    ((SECONDS < deadline)) || { say "timed out waiting for $what"; exit 1; }
    sleep 1
  done
}

say "control plane with $nodes KWOK nodes ($state)"
e2e/cluster.sh down >/dev/null 2>&1 || true
e2e/cluster.sh up >/dev/null
eval "$(e2e/cluster.sh env)"
kubectl apply -f crds/ >/dev/null
kubectl create namespace modelplane-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl create namespace models --dry-run=client -o yaml | kubectl apply -f - >/dev/null
rm -rf "$work"
mkdir -p "$work"
# A long lease: at 1,000 nodes the hollow agents' own data plane (one process hashing and
# writing every node's files) takes most of the two cores, and a renewal starved of CPU for 10 s
# must not end the run; the lease is one request every 2 s either way.
cat >"$work/operator.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
log: {level: warn}
kubernetes: {kubeconfig: $KUBECONFIG, qps: 200, burst: 400}
leaderElection: {namespace: modelplane-system, leaseDuration: 60s, renewDeadline: 40s, retryPeriod: 2s}
sourcePolicy: {objectStores: [{endpoint: "$S3_ENDPOINT_URL", buckets: [$MODELPLANE_S3_BUCKET], nodeCredentials: true, addresses: [127.0.0.0/8]}]}
YAML
"$operator" --config "$work/operator.yaml" >"$work/operator.log" 2>&1 &
operator_pid=$!
caches_created() { (($(kubectl get modelcaches --no-headers 2>/dev/null | wc -l) >= nodes)); }
wait_until 600 "$nodes ModelCaches" caches_created

# Thousands of threads in one process: two malloc arenas, not one per thread, keep the hollow
# agents' memory to what they hold.
MALLOC_ARENA_MAX=2 "$agents" run --kubeconfig "$KUBECONFIG" --count "$nodes" --cache-root "$work/caches" \
  --rate "$rate" --endpoint "$S3_ENDPOINT_URL" --bucket "$MODELPLANE_S3_BUCKET" \
  --log-level "${HOLLOW_LOG_LEVEL:-warn}" >"$work/agents.out" 2>"$work/agents.log" &
agents_pid=$!
started=$SECONDS
wait_until 900 "$nodes hollow agents" grep -q hollow_agents_started "$work/agents.out"
say "$nodes hollow agents started in $((SECONDS - started)) s; settling 20 s"
sleep 20

apiserver=$(component_pid kube-apiserver)
etcd=$(component_pid etcd)
kubectl get --raw /metrics >"$work/apiserver-before.txt"
api_cpu_before=$(cpu_seconds "$apiserver")
etcd_cpu_before=$(cpu_seconds "$etcd")
agents_cpu_before=$(cpu_seconds "$agents_pid")
operator_cpu_before=$(cpu_seconds "$operator_pid")
"$agents" revision --name hollow-r1 --namespace models --files "$files" --file-size "$size" \
  --nodes "$nodes" --endpoint "$S3_ENDPOINT_URL" --bucket "$MODELPLANE_S3_BUCKET" \
  >"$work/revision.json"
rollout_started=$(date +%s.%N)
kubectl create -f "$work/revision.json" >/dev/null
ready_count() {
  local ready
  ready=$(kubectl get modelrevision -n models hollow-r1 -o jsonpath='{.status.readyNodes}' 2>/dev/null) || true
  echo "${ready:-0}"
}
all_ready() { (($(ready_count) >= nodes)); }
# The rollout ends when every node is Ready, or when the operator or the agents give up (an
# API server that cannot keep up costs the operator its lease); what it cost until then is
# reported all the same, with how far it got.
completed=true
deadline=$((SECONDS + 1800))
until all_ready; do
  if ! kill -0 "$operator_pid" 2>/dev/null || ! kill -0 "$agents_pid" 2>/dev/null ||
    ((SECONDS >= deadline)); then
    completed=false
    say "the rollout did not finish: $(grep -c leadership_lost "$work/operator.log" || true) leadership_lost in the operator's log"
    break
  fi
  sleep 1
done
ready_nodes=$(ready_count)
rollout_seconds=$(awk -v a="$rollout_started" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
kubectl get --raw /metrics >"$work/apiserver-after.txt"
api_cpu_after=$(cpu_seconds "$apiserver")
etcd_cpu_after=$(cpu_seconds "$etcd")
operator_cpu_after=$(cpu_seconds "$operator_pid" 2>/dev/null || echo "$operator_cpu_before")
agents_cpu_after=$(cpu_seconds "$agents_pid" 2>/dev/null || echo "$agents_cpu_before")
say "${ready_nodes:-0} of $nodes nodes Ready after $rollout_seconds s"

python3 bench/hollow/api_cost.py --before "$work/apiserver-before.txt" \
  --after "$work/apiserver-after.txt" --nodes "$nodes" --seconds "$rollout_seconds" \
  --label "$label" --size "$size" --files "$files" --rate "$rate" \
  --ready "${ready_nodes:-0}" --completed "$completed" \
  --cpu "apiserver=$api_cpu_before:$api_cpu_after" --cpu "etcd=$etcd_cpu_before:$etcd_cpu_after" \
  --cpu "hollow_agents=$agents_cpu_before:$agents_cpu_after" \
  --cpu "operator=$operator_cpu_before:$operator_cpu_after" \
  --rss "apiserver=$(peak_rss_mb "$apiserver")" --rss "etcd=$(peak_rss_mb "$etcd")" \
  --rss "hollow_agents=$(peak_rss_mb "$agents_pid" 2>/dev/null || echo 0)" >>"$results"
tail -n 1 "$results" >&2
[[ $completed == true ]]
