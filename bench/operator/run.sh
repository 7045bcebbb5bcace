#!/usr/bin/env bash
# Operator at scale: N ModelRevisions (prestaged on 2-3 nodes each) x M KWOK nodes on a local
# control plane of its own, with the real modelplane-operator binary and no node agents (the
# ModelCaches report no status, so every Ready node is a candidate with unknown capacity).
#
# Measures from the first create to every revision converged (observedGeneration == generation,
# desiredNodes == spec.prestage.nodes, and that many ModelCaches list it in their spec;
# bench/operator/scale.py), the operator's peak
# RSS (VmHWM), its CPU seconds (whole run, and from the first create to convergence), the CPU
# seconds kube-apiserver and etcd spent meanwhile, and the operator's reconcile counters from
# /metrics. Appends one JSON line to bench/operator/results.jsonl.
#
#   bench/operator/run.sh [--revisions 1000] [--nodes 500] [--build build/bench] [--qps Q]
#                         [--burst B] [--workers W] [--operator BINARY] [--label TEXT] [--keep]
#
# Needs modelplane-operator built in the build folder (ninja -C build/bench modelplane-operator)
# and the control-plane tools (e2e/tools.sh). --keep leaves the cluster up (state folder
# $MODELPLANE_E2E_STATE, default /tmp/mp-opscale); otherwise it goes down at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

revisions=1000
nodes=500
build=$root/build/bench
operator=""
qps=""
burst=""
workers=""
label=""
keep=0
while (($#)); do
  case $1 in
    --revisions) revisions=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --operator) operator=$2; shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
operator=${operator:-$build/operator/modelplane-operator}
[[ -x $operator ]] || { echo "missing $operator: build target modelplane-operator first" >&2; exit 1; }
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/mp-opscale}
export MODELPLANE_E2E_NODES=$nodes
state=$MODELPLANE_E2E_STATE
work=$state/bench-operator
results=$root/bench/operator/results.jsonl

say() { printf '[operator-scale] %s\n' "$*" >&2; }
operator_pid=""
cleanup() {
  local rc=$?
  if [[ -n $operator_pid ]] && kill -0 "$operator_pid" 2>/dev/null; then
    kill -TERM "$operator_pid" 2>/dev/null || true
    wait "$operator_pid" 2>/dev/null || true
  fi
  if ((rc != 0)) && [[ -f $work/operator.log ]]; then
    say "failed; last lines of the operator's log:"
    tail -n 20 "$work/operator.log" >&2 || true
  fi
  if ((keep)); then
    say "cluster left up: eval \"\$(MODELPLANE_E2E_STATE=$state e2e/cluster.sh env)\""
  else
    # Keep the operator's log and metrics beside the results, the state folder goes.
    if [[ -d $work ]]; then
      mkdir -p /tmp/mp-opscale-logs
      cp "$work"/operator.log "$work"/metrics-*.txt /tmp/mp-opscale-logs/ 2>/dev/null || true
    fi
    e2e/cluster.sh down >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# cpu_seconds PID: user + system time of the process so far.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"
}
component_pid() { awk '{print $1}' "$state/pids/$1"; }

say "control plane with $nodes KWOK nodes ($state)"
e2e/cluster.sh down >/dev/null 2>&1 || true
up_started=$SECONDS
e2e/cluster.sh up >/dev/null
say "up in $((SECONDS - up_started)) s"
eval "$(e2e/cluster.sh env)"
kubectl apply -f crds/ >/dev/null
kubectl create namespace modelplane-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl create namespace models --dry-run=client -o yaml | kubectl apply -f - >/dev/null
mkdir -p "$work"

kubernetes="{kubeconfig: $KUBECONFIG"
[[ -n $qps ]] && kubernetes+=", qps: $qps"
[[ -n $burst ]] && kubernetes+=", burst: $burst"
kubernetes+="}"
controllers=""
[[ -n $workers ]] && controllers="controllers: {revisionWorkers: $workers}"
cat >"$work/operator.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
log: {level: info}
kubernetes: $kubernetes
leaderElection: {namespace: modelplane-system, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s}
sourcePolicy: {objectStores: [{endpoint: "$S3_ENDPOINT_URL", buckets: [$MODELPLANE_S3_BUCKET], nodeCredentials: true, addresses: [127.0.0.0/8]}]}
$controllers
YAML
"$operator" --config "$work/operator.yaml" >"$work/operator.log" 2>&1 &
operator_pid=$!
say "operator pid $operator_pid"

wait_until() {  # wait_until SECONDS WHAT COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    kill -0 "$operator_pid" 2>/dev/null || { say "the operator exited"; exit 1; }
    ((SECONDS < deadline)) || { say "timed out waiting for $what"; exit 1; }
    sleep 0.5
  done
}
caches_created() { (($(kubectl get modelcaches --no-headers 2>/dev/null | wc -l) >= nodes)); }
wait_until 120 "leadership" grep -q leadership_acquired "$work/operator.log"
wait_until 300 "$nodes ModelCaches" caches_created
admin_port=$(grep -m1 admin_server_started "$work/operator.log" | sed -E 's/.*port=([0-9]+).*/\1/')
metrics() { curl -sf "http://127.0.0.1:$admin_port/metrics"; }
# Let the start-up reconciles drain: every cache created, nothing queued.
sleep 5
curl -sf "http://127.0.0.1:$admin_port/metrics" >"$work/metrics-before.txt"
kubectl get --raw /metrics >"$work/apiserver-before.txt"
cpu_before=$(cpu_seconds "$operator_pid")
apiserver_before=$(cpu_seconds "$(component_pid kube-apiserver)")
etcd_before=$(cpu_seconds "$(component_pid etcd)")
rss_before=$(awk '/VmHWM/ {print $2}' "/proc/$operator_pid/status")
say "operator settled: ${cpu_before} CPU s, VmHWM ${rss_before} kB; creating $revisions revisions"

python3 bench/operator/scale.py --kubeconfig "$KUBECONFIG" --revisions "$revisions" \
  --namespace models --endpoint "$S3_ENDPOINT_URL" --bucket "$MODELPLANE_S3_BUCKET" \
  >"$work/scale.json"
cat "$work/scale.json" >&2

cpu_after=$(cpu_seconds "$operator_pid")
apiserver_after=$(cpu_seconds "$(component_pid kube-apiserver)")
etcd_after=$(cpu_seconds "$(component_pid etcd)")
metrics >"$work/metrics-after.txt"
kubectl get --raw /metrics >"$work/apiserver-after.txt"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$operator_pid/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$operator_pid/status")
# Settled: give the tail of the work (cache events waking revisions once more) 10 s, then count.
sleep 10
metrics >"$work/metrics-settled.txt"
cpu_settled=$(cpu_seconds "$operator_pid")
hwm_settled=$(awk '/VmHWM/ {print $2}' "/proc/$operator_pid/status")

python3 - "$work" "$label" "$revisions" "$nodes" "$cpu_before" "$cpu_after" "$cpu_settled" \
  "$apiserver_before" "$apiserver_after" "$etcd_before" "$etcd_after" "$rss_before" "$hwm" "$rss" \
  "$hwm_settled" "${qps:-50}" "${burst:-100}" "${workers:-4}" >>"$results" <<'PY'
import json, re, sys, datetime, os
(work, label, revisions, nodes, cpu_before, cpu_after, cpu_settled, api_before, api_after,
 etcd_before, etcd_after, rss_before, hwm, rss, hwm_settled, qps, burst, workers) = sys.argv[1:]
scale = json.load(open(f"{work}/scale.json"))

def counters(path):
    out = {}
    for line in open(path):
        m = re.match(r'modelplane_operator_reconcile_total\{controller="(\w+)",result="(\w+)"\} (\S+)', line)
        if m:
            out[f"{m.group(1)}_{m.group(2)}"] = float(m.group(3))
        m = re.match(r'modelplane_operator_reconcile_duration_seconds_(sum|count)\{controller="modelrevision"\} (\S+)', line)
        if m:
            out[f"modelrevision_duration_{m.group(1)}"] = float(m.group(2))
    return out

before, after, settled = (counters(f"{work}/metrics-{p}.txt") for p in ("before", "after", "settled"))

# What the API server answered from the first create to convergence, for modelplane's
# resources and Events (every client: the operator, scale.py's creates and watch).
def requests(path):
    out = {}
    for line in open(path):
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        resource = labels.get("resource", "")
        if resource not in ("modelrevisions", "modelcaches", "events", "sourcebudgets"):
            continue
        key = f'{resource}/{labels.get("subresource") or "-"}/{labels.get("verb")}/{labels.get("code")}'
        out[key] = out.get(key, 0) + float(line.rsplit(" ", 1)[1])
    return out
served_before = requests(f"{work}/apiserver-before.txt")
served_after = requests(f"{work}/apiserver-after.txt")
api_requests = {k: int(v - served_before.get(k, 0)) for k, v in sorted(served_after.items())
                if v - served_before.get(k, 0) > 0}
delta = {k: round(v - before.get(k, 0), 3) for k, v in after.items()}
delta_settled = {k: round(v - before.get(k, 0), 3) for k, v in settled.items()}
with open("/proc/cpuinfo") as f:
    model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
result = {
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "label": label, "revisions": int(revisions), "nodes": int(nodes),
    "qps": float(qps), "burst": int(burst), "revision_workers": int(workers),
    "cpus": os.cpu_count(), "cpu_model": model, "load_average": os.getloadavg()[0],
    **scale,
    "operator_cpu_seconds_total": float(cpu_settled),
    "operator_cpu_seconds_run": round(float(cpu_after) - float(cpu_before), 2),
    "operator_vmhwm_mb": round(int(hwm_settled) / 1024, 1),
    "operator_vmhwm_before_mb": round(int(rss_before) / 1024, 1),
    "operator_vmrss_mb": round(int(rss) / 1024, 1),
    "apiserver_cpu_seconds_run": round(float(api_after) - float(api_before), 2),
    "etcd_cpu_seconds_run": round(float(etcd_after) - float(etcd_before), 2),
    "apiserver_requests_run": api_requests,
    "reconciles_run": delta,
    "reconciles_settled": delta_settled,
}
print(json.dumps(result))
PY
tail -n 1 "$results" >&2
say "operator log: $(grep -c cache_entry_written "$work/operator.log") cache_entry_written, $(grep -c reconcile_failed "$work/operator.log") reconcile_failed"
