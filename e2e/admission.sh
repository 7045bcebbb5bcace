#!/usr/bin/env bash
# Admission and fan-out on the local control plane (docs/admission.md): N KWOK nodes in two
# zones with one modelplane-node-agent each on this host, modelplane-operator, and MinIO behind
# e2e/throttling_proxy.py, the origin every byte is counted at (a byte-rate cap, 503 SlowDown
# above a number of requests in flight, as an S3 prefix answers a burst). A ModelRevision is
# staged on every node, the read burst of a rollout, once per phase:
#   on   admission and fan-out on: budgets learned from the agents' telemetry, one seeder per
#        zone reads the origin, the others read from it;
#   off  both off: every agent straight to the origin at its own concurrency, no peers (the
#        anchor: what a fleet without modelplane's admission and fan-out reads).
# Each phase starts from empty caches, a fresh operator and fresh agents, and writes one JSON
# line: origin bytes (the proxy's own counter) and per zone, its busiest second, 503s, failed
# stagings, bytes-to-ready p50/p95/p99, and where the bytes came from by tier.
#
#   e2e/admission.sh [--nodes N] [--size 256MiB] [--cap 64MiB] [--max-concurrent 16]
#                    [--phases on,off] [--kill-operator] [--kill-seeder] [--check] [--out FILE]
#
# --kill-operator kills the operator (kill -9) while the stagings run and starts another after
# the lease expires; --kill-seeder kills a zone's seeder agent mid-fetch and restarts it once
# another node took over. --check fails unless the "on" phase kept origin bytes at most 1.1x
# the model per zone (1.2x with a kill), had no failed staging and p99 at most 1.5x p50.
# Environment: MODELPLANE_BUILD (default build/e2e, built here), MODELPLANE_E2E_STATE, and
# MODELPLANE_E2E_LOGS (default <state>-logs: where the logs and phase records are kept).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
nodes=6
size=128MiB
cap=32MiB
max_concurrent=16
phases=on,off
kill_operator=0
kill_seeder=0
check=0
out=
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --size) size=$2; shift ;;
    --cap) cap=$2; shift ;;
    --max-concurrent) max_concurrent=$2; shift ;;
    --phases) phases=$2; shift ;;
    --kill-operator) kill_operator=1 ;;
    --kill-seeder) kill_seeder=1 ;;
    --check) check=1 ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--nodes N] [--size S] [--cap BYTES] [--max-concurrent C] [--phases on,off] [--kill-operator] [--kill-seeder] [--check] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/modelplane-admission}
export MODELPLANE_E2E_NODES=$nodes
state=$MODELPLANE_E2E_STATE
logs_copy=${MODELPLANE_E2E_LOGS:-$state-logs}
build=${MODELPLANE_BUILD:-$root/build/e2e}
python=$root/.venv/bin/python
pids_file=$state/processes.pids
bytes_of() { "$python" -c 'import re,sys
m = re.fullmatch(r"(\d+)\s*([KMG]i?B?)?", sys.argv[1])
units = {"K": 2**10, "M": 2**20, "G": 2**30}
print(int(m.group(1)) * (units[m.group(2)[0]] if m.group(2) else 1))' "$1"; }
cap_bytes=$(bytes_of "$cap")

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
fail() { printf '\033[31mFAIL: %s\033[0m\n' "$*" >&2; exit 1; }
pass() { printf '  \033[32mok\033[0m %s\n' "$*"; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after ${seconds}s waiting for: $what"
    fail_if_died
    sleep 0.5
  done
}
free_port() { "$python" e2e/free_ports.py; }
# The processes this script stopped itself (a killed seeder until its restart): the others
# must stay up, and one that exits fails the run at once instead of at the readiness deadline.
stopped_on_purpose=" "
start() {  # start NAME COMMAND...: a background process, its log in $state/logs/NAME.log
  local name=$1
  shift
  nohup "$@" >>"$state/logs/$name.log" 2>&1 &
  echo "$! $name" >>"$pids_file"
  stopped_on_purpose=${stopped_on_purpose// $name / }
}
pid_of() { awk -v name="$1" '$2 == name {pid = $1} END {print pid}' "$pids_file"; }
stop_named() {  # stop_named NAME [SIGNAL]
  local pid
  pid=$(pid_of "$1")
  stopped_on_purpose+="$1 "
  [[ -n $pid ]] && kill "-${2:-TERM}" "$pid" 2>/dev/null || true
}
fail_if_died() {
  [[ -f $pids_file ]] || return 0
  local pid name
  while read -r pid name; do
    [[ $stopped_on_purpose == *" $name "* ]] && continue
    kill -0 "$pid" 2>/dev/null || fail "$name exited on its own (its log: $state/logs/$name.log)"
  done < <(awk '{pid[$2] = $1} END {for (name in pid) print pid[name], name}' "$pids_file")
}
stop_processes() {
  [[ -f $pids_file ]] || return 0
  while read -r pid _; do kill "$pid" 2>/dev/null || true; done <"$pids_file"
  sleep 1
  while read -r pid _; do kill -9 "$pid" 2>/dev/null || true; done <"$pids_file"
  rm -f "$pids_file"
}
cleanup() {
  local code=$?
  if ((code != 0)); then
    echo "--- last lines of the component logs (all in $state/logs) ---" >&2
    for log in "$state"/logs/*.log; do
      [[ -f $log ]] && { echo "# $log" >&2; tail -n 12 "$log" >&2; }
    done
  fi
  stop_processes
  # The cluster's state folder goes with it; the logs and each phase's records stay.
  rm -rf "$logs_copy"
  mkdir -p "$logs_copy"
  cp -r "$state"/logs "$logs_copy"/ 2>/dev/null || true
  for phase_folder in "$state"/on "$state"/off; do
    [[ -d $phase_folder ]] && cp "$phase_folder"/*.json "$logs_copy/" 2>/dev/null || true
  done
  e2e/cluster.sh down >/dev/null 2>&1 || true
}
trap cleanup EXIT

say "Building modelplane ($build)"
scripts/release-build.sh "$build" modelplane-operator modelplane-node-agent

say "Starting the local control plane ($nodes KWOK GPU nodes in 2 zones, MinIO)"
stop_processes
e2e/cluster.sh down >/dev/null 2>&1 || true
rm -rf "$state"
mkdir -p "$state/logs"
e2e/cluster.sh up >/dev/null
eval "$(e2e/cluster.sh env)"
kubectl apply -f crds/ >/dev/null
kubectl create namespace modelplane-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl create namespace models --dry-run=client -o yaml | kubectl apply -f - >/dev/null
mapfile -t node_names < <(kubectl get nodes -l type=kwok -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
((${#node_names[@]} == nodes)) || fail "expected $nodes KWOK nodes, found ${#node_names[@]}"

# The origin every agent reads: MinIO behind the throttling proxy, started for each phase.
proxy_port=$(free_port)
origin=http://127.0.0.1:$proxy_port
proxy_stats() { curl -sf "$origin/__proxy/stats"; }

say "Generating a $size checkpoint in MinIO"
checkpoint=$state/checkpoint
"$python" e2e/checkpoint/generate.py --out "$checkpoint" --size "$size" --shards 4 --seed 21 \
  --upload "s3://$MODELPLANE_S3_BUCKET/admission/" >/dev/null
model_bytes=$("$python" -c 'import json,sys; print(sum(f["size"] for f in json.load(sys.stdin)["files"]))' \
  < <("$python" e2e/checkpoint/generate.py --out "$checkpoint" --size "$size" --shards 4 --seed 21 --summary))
echo "  $model_bytes bytes in 4 shards and their config files"

head -c 48 /dev/urandom | base64 >"$state/peer-token.key"
# The origin is on loopback, a special-purpose range the agents refuse unless the rule lists it.
source_policy="{objectStores: [{endpoint: \"$origin\", buckets: [$MODELPLANE_S3_BUCKET], nodeCredentials: true, \
addresses: [127.0.0.0/8]}]}"

start_operator() {  # start_operator PHASE ADMISSION(true|false)
  cat >"$state/$1/operator.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
kubernetes: {kubeconfig: $KUBECONFIG}
# The operator's defaults (15 s, 10 s, 2 s), not shorter: under CI's load (clang-tidy beside the
# run) the API server once took 2 s per write, a renewal overran a 6 s deadline, and the
# operator stepped down mid-test. With --kill-operator the successor waits out the 15 s lease.
leaderElection: {namespace: modelplane-system, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s}
# 10 s, not the chart's 30 s, so a killed seeder is replaced within the run; not 4 s: under CI's
# load a seeder reading at 23 MB/s was once judged stalled at 4 s (its progress is read from
# status writes), and its successor read the zone's copy again.
admission: {enabled: $2, interval: 1s, stepInterval: 2s, grantTtl: 30s, seederStallTimeout: 10s, wantedStreams: 8}
sourcePolicy: $source_policy
YAML
  start "modelplane-operator-$1" "$build/operator/modelplane-operator" --config "$state/$1/operator.yaml"
}
start_agent() {  # start_agent PHASE NODE ADMISSION(true|false)
  local folder=$state/$1/agents/$2
  # The anchor reads like a fleet without modelplane's fan-out: no peers, origin only.
  local peers=true
  [[ $3 == false ]] && peers=false
  mkdir -p "$folder"
  if [[ ! -f $folder/agent.yaml ]]; then
    cat >"$folder/agent.yaml" <<YAML
nodeName: $2
cacheRoot: $folder/cache
admin: {address: 127.0.0.1, port: 0}
kubernetes: {kubeconfig: $KUBECONFIG}
statusInterval: 1s
fetch: {rangeSize: 4Mi, inFlight: 8, bufferPool: 64Mi, rangeTimeout: 20s}
admission:
  enabled: $3
  safeStreams: 2
  startGrace: 10s
  telemetryWindow: 3s
  mediaProbe: 8Mi
  operatorLease: {namespace: modelplane-system, name: modelplane-operator}
eviction: {enabled: false}
peers:
  enabled: $peers
  listenAddress: 127.0.0.1
  port: $(free_port)
  advertiseAddress: 127.0.0.1
  plainHttp: true
  tokenKeyFile: $state/peer-token.key
sourcePolicy: $source_policy
YAML
  fi
  start "modelplane-node-agent-$1-$2" "$build/node-agent/modelplane-node-agent" run \
    --config "$folder/agent.yaml"
}

# A node's agent logs which seeder the operator chose only indirectly; the grants say it: the
# nodes holding a grant of more than 0 streams.
seeders() {
  kubectl get modelcaches -o json | "$python" -c '
import json, sys
for item in json.load(sys.stdin)["items"]:
    if any(g.get("streams", 0) > 0 for g in item.get("spec", {}).get("grants", [])):
        print(item["metadata"]["name"], (item.get("status") or {}).get("zone", ""))'
}

has_seeder() { [[ -n $(seeders) ]]; }
# taken_over NODE ZONE: a node of ZONE other than NODE holds streams of the origin, or every
# node of ZONE but NODE holds the revision Ready.
taken_over() {
  seeders | awk -v node="$1" -v zone="$2" '$2 == zone && $1 != node {found = 1} END {exit !found}' && return 0
  kubectl get modelcaches -o json | "$python" -c '
import json, sys
node, zone = sys.argv[1], sys.argv[2]
pending = 0
for item in json.load(sys.stdin)["items"]:
    status = item.get("status") or {}
    if item["metadata"]["name"] == node or status.get("zone") != zone:
        continue
    if not any(entry.get("state") == "Ready" for entry in status.get("revisions", [])):
        pending += 1
sys.exit(1 if pending else 0)' "$1" "$2"
}
staging_started() {
  (($(kubectl get modelrevision llama-on -n models -o jsonpath='{.status.stagingNodes}' || echo 0) > 0))
}

run_phase() {  # run_phase on|off
  local phase=$1 admission=true
  [[ $phase == off ]] && admission=false
  say "Phase $phase: admission and fan-out $([[ $admission == true ]] && echo on || echo off)"
  mkdir -p "$state/$phase"
  # Nothing from an earlier phase (its revision went while its operator ran): no cache entries,
  # no learned budget.
  kubectl delete modelcaches --all --wait=true >/dev/null 2>&1 || true
  kubectl delete sourcebudgets --all --wait=true >/dev/null 2>&1 || true
  start_operator "$phase" "$admission"
  for node in "${node_names[@]}"; do start_agent "$phase" "$node" "$admission"; done
  wait_for 60 "the operator to lead" grep -q leadership_acquired "$state/logs/modelplane-operator-$phase.log"
  for node in "${node_names[@]}"; do
    wait_for 60 "ModelCache $node" kubectl get modelcache "$node"
  done
  curl -sf -X POST "$origin/__proxy/reset" >/dev/null
  "$python" e2e/checkpoint/generate.py --out "$checkpoint" --size "$size" --shards 4 --seed 21 \
    --modelrevision "llama-$phase" --bucket "$MODELPLANE_S3_BUCKET" --prefix admission \
    --endpoint "$origin" >"$state/$phase/revision.yaml"
  printf '  prestage:\n    nodes: %d\n' "$nodes" >>"$state/$phase/revision.yaml"
  local started=$SECONDS
  kubectl apply -n models -f "$state/$phase/revision.yaml" >/dev/null
  local killed=""
  if ((kill_operator)) && [[ $phase == on ]]; then
    wait_for 120 "stagings to start" staging_started
    sleep 3
    stop_named "modelplane-operator-on" KILL
    killed+="operator "
    echo "  killed the operator (kill -9); a new one starts once its lease lapses"
    sleep 2
    start "modelplane-operator-on-2" "$build/operator/modelplane-operator" --config "$state/on/operator.yaml"
  fi
  if ((kill_seeder)) && [[ $phase == on ]]; then
    wait_for 120 "a seeder" has_seeder
    sleep 2
    local seeder zone
    read -r seeder zone < <(seeders | head -n 1)
    stop_named "modelplane-node-agent-on-$seeder" KILL
    killed+="seeder:$seeder "
    echo "  killed the seeder of $zone, $seeder (kill -9), mid-fetch"
    # Another node of the zone takes over once the seeder's progress stalls, unless the zone
    # finished first from its peers and the other zone's copies.
    wait_for 120 "another seeder in $zone, or $zone done" taken_over "$seeder" "$zone"
    local successor
    successor=$(seeders | awk -v node="$seeder" -v zone="$zone" '$2 == zone && $1 != node {print $1; exit}')
    if [[ -n $successor ]]; then
      echo "  $successor took over as the seeder of $zone"
      killed+="successor:$successor "
    else
      echo "  $zone finished from its peers before a successor was needed"
    fi
    echo "  restarting $seeder's agent"
    start_agent on "$seeder" true
  fi
  local ready_expr="{.status.readyNodes}/{.status.failedNodes}"
  local deadline=$((SECONDS + 900)) status=""
  while ((SECONDS < deadline)); do
    status=$(kubectl get modelrevision "llama-$phase" -n models -o jsonpath="$ready_expr" 2>/dev/null || true)
    [[ $status == "$nodes/"* ]] && break
    fail_if_died
    sleep 1
  done
  local seconds=$((SECONDS - started))
  sleep 2  # the last status writes
  proxy_stats >"$state/$phase/proxy.json"
  kubectl get modelrevision "llama-$phase" -n models -o json >"$state/$phase/revision.json"
  kubectl get modelcaches -o json >"$state/$phase/caches.json"
  "$python" - "$phase" "$state/$phase" "$model_bytes" "$cap_bytes" "$nodes" "$seconds" "$killed" <<'PY' | tee -a "${out:-/dev/null}" >"$state/$phase/result.json"
import json, sys
phase, folder, model_bytes, cap, nodes, seconds, killed = sys.argv[1:8]
model_bytes, cap, nodes, seconds = int(model_bytes), int(cap), int(nodes), int(seconds)
proxy = json.load(open(f"{folder}/proxy.json"))
revision = json.load(open(f"{folder}/revision.json"))
caches = json.load(open(f"{folder}/caches.json"))["items"]
status = revision.get("status", {})
digest = status.get("digest")
zone_of = {c["metadata"]["name"]: (c.get("status") or {}).get("zone", "") for c in caches}
origin_by_zone = {}
for cache in caches:
    for entry in (cache.get("status") or {}).get("revisions", []):
        if entry.get("digest") != digest:
            continue
        tiers = entry.get("bytesByTier", {})
        origin = sum(v for k, v in tiers.items() if k not in ("peer", "local"))
        zone = zone_of[cache["metadata"]["name"]]
        origin_by_zone[zone] = origin_by_zone.get(zone, 0) + origin
per_second = proxy.get("bytes_per_second") or proxy.get("per_second") or {}
values = [v for k, v in sorted(per_second.items(), key=lambda kv: int(kv[0])) if int(k) >= 5] if isinstance(per_second, dict) else per_second[5:]
percentiles = status.get("bytesToReadySeconds") or {}
result = {
    "phase": phase, "nodes": nodes, "model_bytes": model_bytes, "cap_bytes_per_second": cap,
    "seconds": seconds, "killed": killed.strip(),
    "ready_nodes": status.get("readyNodes", 0), "failed_nodes": status.get("failedNodes", 0),
    "origin_bytes": proxy.get("bytes_served", 0),
    "origin_bytes_per_zone": origin_by_zone,
    "origin_copies_per_zone": round(proxy.get("bytes_served", 0) / model_bytes / max(1, len(zone_of and set(zone_of.values()))), 3),
    "origin_busiest_second_after_5s": max(values) if values else 0,
    "slowdown_503": proxy.get("refused", proxy.get("requests_refused", 0)),
    "bytes_to_ready_p50": percentiles.get("p50"), "bytes_to_ready_p95": percentiles.get("p95"),
    "bytes_to_ready_p99": percentiles.get("p99"),
    "fetched_by_tier": (status.get("fetchedBytes") or {}).get("byTier", {}),
}
print(json.dumps(result, sort_keys=True))
PY
  cat "$state/$phase/result.json"
  # The revision goes while the operator runs (it releases the revision's finalizer), then this
  # phase's processes stop; the next phase starts clean.
  kubectl delete modelrevision "llama-$phase" -n models --wait=true --timeout=60s >/dev/null 2>&1 || true
  stop_processes
  [[ $status == "$nodes/"* ]] || { ((check)) && [[ $phase == on ]] && fail "phase $phase: $status of $nodes Ready after ${seconds}s"; echo "  phase $phase did not finish: $status"; }
  return 0
}

IFS=, read -r -a phase_list <<<"$phases"
for phase in "${phase_list[@]}"; do
  say "The origin: MinIO behind the throttling proxy ($cap/s, SlowDown above $max_concurrent requests in flight)"
  start throttling-proxy "$python" e2e/throttling_proxy.py --listen "127.0.0.1:$proxy_port" \
    --upstream "$S3_ENDPOINT_URL" --bytes-per-second "$cap_bytes" --max-concurrent "$max_concurrent"
  wait_for 30 "the proxy" curl -sf "$origin/__proxy/stats"
  run_phase "$phase"
done

if ((check)) && [[ -f $state/on/result.json ]]; then
  say "Checking the on phase"
  limit=1.1
  ((kill_operator || kill_seeder)) && limit=1.2
  "$python" - "$state/on/result.json" "$limit" <<'PY' || fail "the on phase broke a promise (above)"
import json, sys
result = json.load(open(sys.argv[1]))
limit = float(sys.argv[2])
problems = []
zones = max(1, len(result["origin_bytes_per_zone"]))
if result["origin_bytes"] > limit * result["model_bytes"] * zones:
    problems.append(f"origin served {result['origin_bytes']} bytes, over {limit}x the model in each of {zones} zones")
for zone, served in result["origin_bytes_per_zone"].items():
    if served > limit * result["model_bytes"]:
        problems.append(f"zone {zone} read {served} bytes from the origin")
if result["failed_nodes"]:
    problems.append(f"{result['failed_nodes']} failed stagings")
if result["ready_nodes"] != result["nodes"]:
    problems.append(f"{result['ready_nodes']} of {result['nodes']} nodes Ready")
if result["origin_busiest_second_after_5s"] > 1.1 * result["cap_bytes_per_second"]:
    problems.append(f"the origin's busiest second moved {result['origin_busiest_second_after_5s']} bytes")
p50, p99 = result["bytes_to_ready_p50"] or 0, result["bytes_to_ready_p99"] or 0
if p50 and p99 > 1.5 * p50:
    problems.append(f"bytes-to-ready p99 {p99} s is over 1.5x p50 {p50} s")
for problem in problems:
    print("  FAIL:", problem)
sys.exit(1 if problems else 0)
PY
  pass "origin bytes within ${limit}x the model per zone, no failed staging, p99 within 1.5x p50"
fi
