#!/usr/bin/env bash
# The extender inside real scheduling cycles: a local control plane with N KWOK nodes (default
# 5,000), the extender benchmark's synthetic fleet loaded into it (extender_fleet_objects: the
# same ModelRevisions and ModelCaches extender_bench decides over), the real
# modelplane-scheduler-extender, and five kube-scheduler processes of our own:
#   plain:       no extender, the anchor;
#   modelplane:  calling the extender (names only, nodeCacheCapable: true, as the chart does);
#   filter:      calling only its filter verb (no prioritize), for the narrowed pods below;
#   null, nullfilter: calling bench/extender/null-extender in those two ways, a Go extender that
#                decides nothing (every candidate passes, scores 0): the anchor for what the
#                extender protocol itself costs a cycle, run with the narrowed pods;
# each with two profiles: "-default" (kube-scheduler's adaptive percentageOfNodesToScore: at
# 5,000 nodes it stops at 500 feasible nodes, which are all the extender sees) and "-all"
# (percentageOfNodesToScore: 100, every node to the extender). bench/extender/cycle.py runs
# gated pods through the plain and modelplane profiles in turn and prints, per profile, pods
# per second and the cycle's parts from the schedulers' and the extender's own histograms; then
# runs both modelplane profiles again with pods that name no revision (the extender answers
# without a decision), and all ten profiles again with managed pods narrowed as the operator
# lets them go (their required node affinity names the nodes that hold the revision Ready, so
# those are all the cycle and the extender see: the product's own path for a gated pod), once
# with at most 100 nodes per pod as the operator narrows them and once with every holder. Each
# run records the CPU time per pod of the extenders, the schedulers and the control plane's
# processes, and how busy the machine was. The lines are appended to
# bench/extender/cycle-results.jsonl.
#
#   bench/extender/cycle.sh [--nodes 5000] [--pods 200] [--build build/bench] [--label TEXT]
#                           [--keep] [--cpu-profile SECONDS] [--narrowed-only] [--pace SECONDS]
#
# --narrowed-only runs only the narrowed pods, at most 100 nodes each, through the five
# schedulers' default profiles (about 3 minutes less).
# --pace lets one pod go every SECONDS instead of all at once: each cycle then runs on a
# scheduler and a machine that are done with the pod before (pods per second is the pace).
# --cpu-profile takes a Go CPU profile of each kube-scheduler over the first SECONDS of the
# pods' runs (its /debug/pprof/profile), for `go tool pprof`, into
# /tmp/modelplane-extender-cycle-profiles (outside the cluster's state, which `down` removes).
#
# Needs the control-plane tools (e2e/tools.sh), Go (as they do) and the project's venv
# (prometheus_client).
# About 10 minutes at 5,000 nodes on 2 vCPUs, most of it creating the nodes and the fleet.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

nodes=5000
pods=200
build=$root/build/bench
label=""
keep=0
cpu_profile=0
narrowed_only=0
pace=0
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --cpu-profile) cpu_profile=$2; shift 2 ;;
    --narrowed-only) narrowed_only=1; shift ;;
    --pace) pace=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
python=$root/.venv/bin/python
[[ -x $python ]] || scripts/setup.sh
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/mp-extcycle}
export MODELPLANE_E2E_NODES=$nodes
# Leases renewed every 500 s instead of 10 s: 5,000 nodes would write 500 leases a second.
export MODELPLANE_E2E_NODE_LEASE_SECONDS=2000
state=$MODELPLANE_E2E_STATE
work=$state/bench-cycle
results=$root/bench/extender/cycle-results.jsonl
bin=$(e2e/tools.sh bindir)

say() { printf '[extender-cycle] %s\n' "$*" >&2; }
pids=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if ((rc != 0)) && [[ -d $work ]]; then
    for log in "$work"/*.log; do
      say "last lines of $log:"
      tail -n 8 "$log" >&2 || true
    done
  fi
  if ((keep)); then
    say "cluster left up: eval \"\$(MODELPLANE_E2E_STATE=$state e2e/cluster.sh env)\""
  else
    e2e/cluster.sh down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

wait_until() {  # wait_until SECONDS WHAT COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { say "timed out waiting for $what"; exit 1; }
    sleep 0.5
  done
}

say "building the extender and the fleet generator ($build)"
ninja -C "$build" modelplane-scheduler-extender extender_fleet_objects >/dev/null
null_extender=/tmp/modelplane-null-extender  # outside the cluster's state, which `down` removes
(cd bench/extender/null-extender && CGO_ENABLED=0 GOTOOLCHAIN=local go build -o "$null_extender" .)
say "control plane with $nodes KWOK nodes ($state)"
e2e/cluster.sh down >/dev/null 2>&1 || true
started=$SECONDS
e2e/cluster.sh up >/dev/null
say "up in $((SECONDS - started)) s"
eval "$(e2e/cluster.sh env)"
kubectl apply -f crds/ >/dev/null
mkdir -p "$work"

"$build/bench/extender/extender_fleet_objects" --nodes "$nodes" --out "$work/fleet" >&2
say "loading the fleet"
"$python" bench/extender/cycle.py load --kubeconfig "$KUBECONFIG" --fleet "$work/fleet" >&2

free_port() { python3 e2e/free_ports.py; }
extender_port=$(free_port)
cat >"$work/extender.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
log: {level: info}
kubernetes: {kubeconfig: $KUBECONFIG}
YAML
"$build/scheduler-extender/modelplane-scheduler-extender" --config "$work/extender.yaml" \
  --address 127.0.0.1 --port "$extender_port" --path-prefix /scheduler >"$work/extender.log" 2>&1 &
pids+=($!)
wait_until 300 "the extender's inventory" grep -q inventory_synced "$work/extender.log"
grep -m1 inventory_synced "$work/extender.log" >&2
admin_port=$(grep -m1 admin_server_started "$work/extender.log" | sed -E 's/.*port=([0-9]+).*/\1/')

null_port=$(free_port)
"$null_extender" --address "127.0.0.1:$null_port" >"$work/null-extender.log" 2>&1 &
pids+=($!)
wait_until 30 "the null extender" bash -c "exec 3<>/dev/tcp/127.0.0.1/$null_port"

# scheduler NAME [VERBS [URL]]: a kube-scheduler process with profiles NAME-default and
# NAME-all, calling VERBS (none, "filter" or "filter prioritize") of the extender at URL (by
# default modelplane's), serving /metrics on a port of its own, which it leaves in
# scheduler_port. (Not run inside $(...): a process started in that subshell would be missing
# from pids, and outlive the run.)
scheduler() {
  local name=$1 verbs=${2:-} url=${3:-http://127.0.0.1:$extender_port/scheduler} port
  port=$(free_port)
  {
    cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $state/config/scheduler.kubeconfig, qps: 200, burst: 400}
leaderElection: {leaderElect: false}
profiles:
- schedulerName: $name-default
- schedulerName: $name-all
  percentageOfNodesToScore: 100
YAML
    if [[ -n $verbs ]]; then
      cat <<YAML
extenders:
- urlPrefix: $url
  filterVerb: filter
YAML
      [[ $verbs == *prioritize* ]] && echo "  prioritizeVerb: prioritize"
      cat <<YAML
  weight: 5
  enableHTTPS: false
  nodeCacheCapable: true
  ignorable: false
  httpTimeout: 5s
YAML
    fi
  } >"$work/scheduler-$name.yaml"
  "$bin/kube-scheduler" --config "$work/scheduler-$name.yaml" --bind-address 127.0.0.1 \
    --secure-port "$port" --cert-dir "$work/scheduler-$name-certs" \
    --authorization-always-allow-paths '/healthz,/readyz,/livez,/metrics,/debug/pprof/*' \
    >"$work/scheduler-$name.log" 2>&1 &
  pids+=($!)
  scheduler_port=$port
  processes+=(--process "scheduler-$name=$!")
}
# The processes whose CPU time each profile's run records: ours, and the control plane's.
processes=(--process "extender=${pids[0]}" --process "null-extender=${pids[1]}")
for file in "$state"/pids/*; do
  processes+=(--process "$(basename "$file")=$(cut -d' ' -f1 "$file")")
done
scheduler plain
plain_port=$scheduler_port
scheduler modelplane "filter prioritize"
modelplane_port=$scheduler_port
scheduler filter filter
filter_port=$scheduler_port
scheduler null "filter prioritize" "http://127.0.0.1:$null_port"
null_scheduler_port=$scheduler_port
scheduler nullfilter filter "http://127.0.0.1:$null_port"
nullfilter_port=$scheduler_port
for port in "$plain_port" "$modelplane_port" "$filter_port" "$null_scheduler_port" "$nullfilter_port"; do
  wait_until 120 "kube-scheduler on port $port" curl -fsk "https://127.0.0.1:$port/metrics"
done

profilers=()
profiles=/tmp/modelplane-extender-cycle-profiles
if ((cpu_profile > 0)); then
  mkdir -p "$profiles"
  for entry in "plain:$plain_port" "modelplane:$modelplane_port"; do
    curl -fsk --max-time $((cpu_profile + 60)) -o "$profiles/scheduler-${entry%%:*}.pprof" \
      "https://127.0.0.1:${entry##*:}/debug/pprof/profile?seconds=$cpu_profile" &
    profilers+=($!)
  done
fi
say "scheduling $pods pods per profile"
url() { echo "$1=https://127.0.0.1:$2/metrics"; }
if ((narrowed_only)); then
  runs=(--narrow-limits 100)
else
  runs=(--profile "$(url plain-default "$plain_port")" --profile "$(url modelplane-default "$modelplane_port")"
        --profile "$(url plain-all "$plain_port")" --profile "$(url modelplane-all "$modelplane_port")"
        --unmanaged "$(url modelplane-default "$modelplane_port")"
        --unmanaged "$(url modelplane-all "$modelplane_port")"
        --narrowed "$(url plain-all "$plain_port")" --narrowed "$(url modelplane-all "$modelplane_port")"
        --narrowed "$(url filter-all "$filter_port")"
        --narrowed "$(url null-all "$null_scheduler_port")" --narrowed "$(url nullfilter-all "$nullfilter_port")"
        --narrow-limits 100,0)
fi
"$python" bench/extender/cycle.py run --kubeconfig "$KUBECONFIG" --fleet "$work/fleet" \
  --pods "$pods" --pace "$pace" --extender-metrics "http://127.0.0.1:$admin_port/metrics" \
  --narrowed "$(url plain-default "$plain_port")" --narrowed "$(url modelplane-default "$modelplane_port")" \
  --narrowed "$(url filter-default "$filter_port")" \
  --narrowed "$(url null-default "$null_scheduler_port")" \
  --narrowed "$(url nullfilter-default "$nullfilter_port")" \
  "${runs[@]}" "${processes[@]}" \
  >"$work/cycle.jsonl"
for pid in "${profilers[@]}"; do
  wait "$pid" || say "a CPU profile was not taken (curl exit $?)"
done
((cpu_profile > 0)) && say "CPU profiles: $profiles/scheduler-{plain,modelplane}.pprof"

model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
"$python" - "$work/cycle.jsonl" "$label" "$nodes" "$model" >>"$results" <<'PY'
import datetime, json, os, sys
path, label, nodes, model = sys.argv[1:]
for line in open(path):
    result = json.loads(line)
    result.update({"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "label": label, "nodes": int(nodes), "cpu_model": model, "nproc": os.cpu_count(),
                   "load_average_1m": os.getloadavg()[0]})
    print(json.dumps(result))
PY
cat "$work/cycle.jsonl"
