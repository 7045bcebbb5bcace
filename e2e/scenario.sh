#!/usr/bin/env bash
# The end-to-end path on the local control plane (issue 6), asserted step by step:
#   4 KWOK GPU nodes in 2 zones and MinIO holding a generated ~1 GiB checkpoint; CRDs and RBAC
#   installed with `helm install`; modelplane-operator, kube-scheduler's second profile
#   `modelplane-scheduler` calling modelplane-scheduler-extender, and one modelplane-node-agent
#   per node (own cache root and ports) running on this host;
#   a ModelRevision prestaged on 2 nodes becomes Ready 2/2 with the bytes verified on disk;
#   a 3-replica Deployment whose template carries only the modelplane.io/revision annotation:
#   the real admission webhook (served by the operator over TLS, configured by the chart) adds
#   the gates, scheduler and read-only volume; 2 pods are let go to the prestaged nodes, the
#   third waits gated while another node stages the revision (from a peer), and all 3 go Ready
#   through the weights-ready readiness gate;
#   a Helm chart holding a Deployment and the ModelRevision it names installs in one step: its
#   pod is admitted before the revision exists and starts once it is staged;
#   an invalid revision gets Valid=False; a file-set change is refused by the API server;
#   a ModelRevocation of llama-r1's digest: every peer refuses its blobs, its pods' weights-ready
#   goes False, every store purges it and status says no node holds it (not with --keep: the
#   demo keeps it serving);
#   every metric the chart's alerts and dashboard name is exported by the running binaries;
#   every component ran with its chart ServiceAccount's token, and kube-apiserver's audit log
#   shows each used exactly what the chart grants it (e2e/rbac_audit.py).
#
#   e2e/scenario.sh            run it and take everything down (the README test command does)
#   e2e/scenario.sh --keep     leave the cluster and processes up (scripts/demo.sh does)
#   e2e/scenario.sh down       take a kept run down
# Environment: MODELPLANE_E2E_STATE (default /tmp/modelplane-scenario), MODELPLANE_BUILD (the
# build folder; default build/e2e, configured and built here), MODELPLANE_SKIP_BUILD=1 (use the
# binaries in MODELPLANE_BUILD as they are), SCENARIO_SIZE (default 1GiB).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/modelplane-scenario}
state=$MODELPLANE_E2E_STATE
build=${MODELPLANE_BUILD:-$root/build/e2e}
size=${SCENARIO_SIZE:-1GiB}
keep=0
pids_file=$state/scenario.pids

stop_processes() {
  if [[ -f $pids_file ]]; then
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$pids_file"
    sleep 1
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$pids_file"
    rm -f "$pids_file"
  fi
}

case ${1:-} in
  down)
    stop_processes
    e2e/cluster.sh down
    exit 0
    ;;
  --keep) keep=1 ;;
  "") ;;
  *) echo "usage: $0 [--keep|down]" >&2; exit 2 ;;
esac

# say, pass, fail, wait_for
# shellcheck source=e2e/lib/checks.sh
source "$root/e2e/lib/checks.sh"
free_port() { python3 "$root/e2e/free_ports.py"; }

cleanup() {
  local code=$?
  if ((keep == 0)) || ((code != 0)); then
    if ((code != 0)); then
      echo "--- last lines of the component logs (all kept in $state-logs) ---" >&2
      for log in "$state"/logs/modelplane-*.log; do
        [[ -f $log ]] && { echo "# $log" >&2; tail -n 15 "$log" >&2; }
      done
      # The cluster's state folder goes with it; the logs stay for a look afterwards.
      rm -rf "$state-logs"
      cp -r "$state/logs" "$state-logs" 2>/dev/null || true
      kubectl get modelcaches,modelrevisions -A -o yaml >"$state-logs/objects.yaml" 2>/dev/null || true
    fi
    if ((keep == 0)); then
      stop_processes
      e2e/cluster.sh down >/dev/null 2>&1 || true
    fi
  fi
}
trap cleanup EXIT

if [[ ${MODELPLANE_SKIP_BUILD:-0} == 1 ]]; then
  say "Using the binaries in $build as they are (MODELPLANE_SKIP_BUILD=1)"
else
  say "Building modelplane ($build)"
  scripts/release-build.sh "$build" modelplane-operator modelplane-scheduler-extender \
    modelplane-node-agent kubectl-modelplane
fi
bin=$build
python=$root/.venv/bin/python

say "Starting the local control plane (4 KWOK GPU nodes in 2 zones, MinIO)"
stop_processes
e2e/cluster.sh down >/dev/null 2>&1 || true
mkdir -p "$state"
extender_port=$(free_port)
webhook_port=$(free_port)
gates_port=$(free_port)
export MODELPLANE_EXTENDER_URL=http://127.0.0.1:$extender_port/scheduler
# What modelplane's ServiceAccounts ask the API server for, to compare with the chart at the end.
export MODELPLANE_E2E_AUDIT_POLICY=${MODELPLANE_E2E_AUDIT_POLICY:-$root/e2e/audit-policy.yaml}
e2e/cluster.sh up >/dev/null
eval "$(e2e/cluster.sh env)"
mkdir -p "$state/logs"
kubectl get nodes -L topology.kubernetes.io/zone

say "helm install: CRDs, RBAC and the admission webhook (the binaries run on this host: KWOK pods run no containers)"
kubectl create namespace modelplane-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
helm install modelplane charts/modelplane --namespace modelplane-system \
  --set operator.enabled=false --set extender.enabled=false --set scheduler.enabled=false \
  --set nodeAgent.enabled=false --set operator.webhook.url="https://127.0.0.1:$webhook_port" \
  --wait --timeout 90s >/dev/null
kubectl get crd modelrevisions.modelplane.io modelcaches.modelplane.io >/dev/null
kubectl get mutatingwebhookconfiguration modelplane-modelplane-webhook >/dev/null
# The operator runs on this host: it serves the certificate the chart generated (for 127.0.0.1).
kubectl get secret -n modelplane-system modelplane-modelplane-webhook-tls \
  -o jsonpath='{.data.tls\.crt}' | base64 -d >"$state/webhook-tls.crt"
kubectl get secret -n modelplane-system modelplane-modelplane-webhook-tls \
  -o jsonpath='{.data.tls\.key}' | base64 -d >"$state/webhook-tls.key"
# The agents verify the operator's credentials endpoint with the CA the chart publishes for them.
kubectl get configmap -n modelplane-system modelplane-modelplane-webhook-ca \
  -o jsonpath='{.data.ca\.crt}' >"$state/webhook-ca.crt"
pass "chart installed: CRDs served, MutatingWebhookConfiguration for https://127.0.0.1:$webhook_port"

say "Each component's identity: the chart's ServiceAccounts, RBAC and admission policies"
identities_started=$SECONDS
# The install above leaves the components out (they run on this host, not in pods), and with
# them their ServiceAccounts and roles; those come from the same chart with default values.
# Each component then runs with a token of its own ServiceAccount, so the API server applies the
# chart's RBAC to every request; an agent's token is bound to a pod on its node, as kubelet
# mounts it, so the admission policies that keep an agent to its own node hold too.
helm template modelplane charts/modelplane --namespace modelplane-system >"$state/chart-defaults.yaml"
"$python" e2e/rbac_audit.py objects "$state/chart-defaults.yaml" | kubectl apply -f - >/dev/null
agent_account=modelplane-modelplane-node-agent
mapfile -t nodes < <(kubectl get nodes -l type=kwok -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
((${#nodes[@]} == 4)) || fail "expected 4 KWOK nodes, found ${#nodes[@]}"
# The agents' pods, as the chart's DaemonSet would place them (KWOK runs no containers): what
# their tokens are bound to.
for node in "${nodes[@]}"; do
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: node-agent-$node, namespace: modelplane-system, labels: {modelplane.io/e2e: agent-identity}}
spec:
  nodeName: $node
  serviceAccountName: $agent_account
  automountServiceAccountToken: false
  tolerations: [{operator: Exists}]
  containers: [{name: node-agent, image: ghcr.io/modelplane/modelplane-node-agent:e2e}]
YAML
done | kubectl apply -f - >/dev/null
api_server=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')
api_ca=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')
# token_kubeconfig FILE SERVICE_ACCOUNT [POD]: a kubeconfig holding a token of the account (bound
# to POD when given). 24 h: scripts/demo.sh leaves everything up for exploring.
token_kubeconfig() {
  local file=$1 account=$2 pod=${3:-} token bound=()
  [[ -z $pod ]] || bound=(--bound-object-kind=Pod --bound-object-name="$pod")
  token=$(kubectl create token "$account" -n modelplane-system "${bound[@]}" --duration=24h)
  (umask 077 && cat >"$file" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$api_server", certificate-authority: "$api_ca"}}]
users: [{name: $account, user: {token: "$token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: $account}}]
current-context: e2e
YAML
  )
}
mkdir -p "$state/identities"
token_kubeconfig "$state/identities/operator.kubeconfig" modelplane-modelplane-operator
token_kubeconfig "$state/identities/extender.kubeconfig" modelplane-modelplane-extender
for node in "${nodes[@]}"; do
  token_kubeconfig "$state/identities/node-agent-$node.kubeconfig" "$agent_account" "node-agent-$node"
  # What the chart's projected volume gives the agent for the operator's credentials endpoint.
  (umask 077 && kubectl create token "$agent_account" -n modelplane-system --duration=24h \
    --bound-object-kind=Pod --bound-object-name="node-agent-$node" --audience=modelplane-operator \
    >"$state/identities/node-agent-$node.operator-token")
done
[[ $(KUBECONFIG=$state/identities/node-agent-${nodes[0]}.kubeconfig kubectl auth whoami \
  -o jsonpath='{.status.userInfo.extra.authentication\.kubernetes\.io/node-name[0]}') == "${nodes[0]}" ]] ||
  fail "the agent's token on ${nodes[0]} does not carry its node"
pass "operator, extender and 4 agents have tokens of their ServiceAccounts; each agent's names its node ($((SECONDS - identities_started)) s)"

start() {  # start NAME COMMAND...: background process, log in $state/logs/NAME.log
  local name=$1
  shift
  nohup "$@" >"$state/logs/$name.log" 2>&1 &
  echo $! >>"$pids_file"
}

say "Starting 2 node agents, then modelplane-operator and modelplane-scheduler-extender, then 2 more agents"
# The source policy the operator and every agent enforce: only MinIO's bucket, with the agents'
# own keys (AWS_* from cluster.sh env); shared filesystems only below the state folder's share.
# MinIO listens on loopback, a special-purpose range the agents connect to only because the rule
# lists it in `addresses`.
# Revisions of `models` may be signed by the scenario's release key (OpenSSF model signing; the
# key signs llama-r1 below with the real model_signing tool).
mkdir -p "$state/share"
openssl ecparam -name prime256v1 -genkey -noout -out "$state/release.key" 2>/dev/null &&
  openssl ec -in "$state/release.key" -pubout -out "$state/release.pub" 2>/dev/null ||
  fail "openssl could not make the release key"
release_key=$(awk '{printf "%s\\n", $0}' "$state/release.pub")
# A local Hugging Face Hub (e2e/hub): one private repository, its LFS files behind a "CDN" on
# 127.0.0.2, at most 2 resolve calls per 2 s as the Hub answers a burst of pods (429).
hub_token=hf_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
"$root/.venv/bin/python" e2e/checkpoint/generate.py --out "$state/hub-model" --size 16MiB --shards 2 \
  --seed 7 >/dev/null
hub_commit=$(python3 e2e/hub/seed_repo.py --root "$state/hub" --repo scenario/tiny \
  --from "$state/hub-model" --token "$hub_token")
start hub python3 e2e/hub/hub_server.py --root "$state/hub" --port 0 --lfs-threshold 4096 \
  --request-log "$state/hub-requests.jsonl" --resolve-limit 2 --resolve-window 2
wait_for 30 "the test Hub to listen" grep -q '"hub"' "$state/logs/hub.log"
hub_url=$(python3 -c '
import json, sys
print(next(json.loads(line)["hub"] for line in open(sys.argv[1]) if line.startswith("{")))' \
  "$state/logs/hub.log")
source_policy="{credentialsNamespace: modelplane-system, \
objectStores: [{endpoint: \"$S3_ENDPOINT_URL\", buckets: [$MODELPLANE_S3_BUCKET], nodeCredentials: true, \
addresses: [127.0.0.0/8]}], \
sharedFilesystems: [{root: $state/share}], \
hubs: [{endpoint: \"$hub_url\", redirectHosts: [127.0.0.2], addresses: [127.0.0.0/8]}], \
signatures: {signers: [{name: scenario-release, publicKey: \"$release_key\", namespaces: [models]}]}}"
cat >"$state/operator.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
kubernetes: {kubeconfig: $state/identities/operator.kubeconfig}
leaderElection: {namespace: modelplane-system}
webhook:
  enabled: true
  address: 127.0.0.1
  port: $webhook_port
  certificateFile: $state/webhook-tls.crt
  keyFile: $state/webhook-tls.key
rolloutGates: {enabled: true, address: 127.0.0.1, port: $gates_port}
credentials: {enabled: true, agentNamespace: modelplane-system, agentServiceAccount: $agent_account}
peerCertificates: {enabled: true, caCertificateFile: $state/peer-ca.crt, caKeyFile: $state/peer-ca.key,
                   agentNamespace: modelplane-system, agentServiceAccount: $agent_account}
sourcePolicy: $source_policy
YAML
cat >"$state/extender.yaml" <<YAML
admin: {address: 127.0.0.1, port: 0}
kubernetes: {kubeconfig: $state/identities/extender.kubeconfig}
YAML
head -c 48 /dev/urandom | base64 >"$state/peer-token.key"
# The peer CA the operator signs each agent's own certificate with (the chart makes one alike).
# Agents serve each other over mutual TLS and check that a peer's certificate names its node.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=e2e peer CA" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout "$state/peer-ca.key" -out "$state/peer-ca.crt" 2>/dev/null ||
  fail "openssl could not make the peer CA"
start_agent() {  # start_agent NODE
  local node=$1
  mkdir -p "$state/agents/$node"
  cat >"$state/agents/$node/agent.yaml" <<YAML
nodeName: $node
cacheRoot: $state/agents/$node/cache
admin: {address: 127.0.0.1, port: 0}
kubernetes: {kubeconfig: $state/identities/node-agent-$node.kubeconfig}
statusInterval: 500ms
fetch: {rangeSize: 8Mi, inFlight: 8, bufferPool: 64Mi}
admission: {operatorLease: {namespace: modelplane-system, name: modelplane-operator}}
peers:
  listenAddress: 127.0.0.1
  port: $(free_port)
  advertiseAddress: 127.0.0.1
  certificateDirectory: $state/agents/$node/peer-identity
  clientCaFile: $state/peer-ca.crt
  tokenKeyFile: $state/peer-token.key
credentials:
  url: https://127.0.0.1:$webhook_port
  tokenFile: $state/identities/node-agent-$node.operator-token
  caFile: $state/webhook-ca.crt
sourcePolicy: $source_policy
YAML
  start "modelplane-node-agent-$node" "$bin/node-agent/modelplane-node-agent" run \
    --config "$state/agents/$node/agent.yaml"
}
# Both ways a node's ModelCache comes to be: an agent that starts before the operator makes its
# own (the operator adopts it), and the operator makes the others' as it finds their Nodes.
for node in "${nodes[@]:0:2}"; do start_agent "$node"; done
for node in "${nodes[@]:0:2}"; do
  wait_for 60 "the agent on $node to create ModelCache $node" kubectl get modelcache "$node"
done
start modelplane-operator "$bin/operator/modelplane-operator" --config "$state/operator.yaml"
start modelplane-scheduler-extender "$bin/scheduler-extender/modelplane-scheduler-extender" \
  --config "$state/extender.yaml" --address 127.0.0.1 --port "$extender_port" --path-prefix /scheduler
for node in "${nodes[@]:2}"; do
  wait_for 60 "the operator to create ModelCache $node" kubectl get modelcache "$node"
  start_agent "$node"
done
wait_for 60 "the operator to lead" grep -q leadership_acquired "$state/logs/modelplane-operator.log"
wait_for 60 "the webhook to serve" grep -q webhook_listening "$state/logs/modelplane-operator.log"
for node in "${nodes[@]}"; do
  wait_for 60 "agent on $node" grep -q node_agent_running "$state/logs/modelplane-node-agent-$node.log"
done
pass "operator leads, extender serves, 4 agents run, 4 ModelCaches exist (2 made by their agents)"

say "Per-node peer certificates: each agent's own key, signed by the operator for its node"
# peer_identity_ok NODE: the agent serves peers with a certificate the operator signed for
# NODE's identity only, and its ModelCache advertises the endpoint from then on.
peer_identity_ok() {
  local node=$1 names
  names=$(openssl x509 -in "$state/agents/$node/peer-identity/peer.pem" -noout \
    -ext subjectAltName 2>/dev/null | tail -n +2 | tr -d ' ')
  [[ $names == "DNS:$node.peer.modelplane.invalid"* && $names != *DNS:*DNS:* ]] &&
    openssl verify -CAfile "$state/peer-ca.crt" "$state/agents/$node/peer-identity/peer.pem" &&
    [[ -n $(kubectl get modelcache "$node" -o jsonpath='{.status.peerEndpoint}') ]]
}
for node in "${nodes[@]}"; do
  wait_for 60 "the operator to sign $node's peer certificate" peer_identity_ok "$node"
done
approved=$(kubectl get certificatesigningrequests -o json | "$python" -c '
import json, sys
items = [i for i in json.load(sys.stdin)["items"] if i["spec"]["signerName"] == "modelplane.io/peer"]
print(sum(1 for i in items if any(c["type"] == "Approved" for c in i["status"].get("conditions", []))))')
((approved >= ${#nodes[@]})) || fail "expected ${#nodes[@]} approved peer certificate requests, found $approved"
pass "4 agents serve peers over mutual TLS with certificates of their own nodes (requests approved: $approved; 2 agents asked before the operator started)"

say "Generating a $size checkpoint and uploading it to MinIO"
checkpoint=$state/checkpoint
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size "$size" --shards 4 --seed 11 \
  --upload "s3://$MODELPLANE_S3_BUCKET/scenario-r1/" >/dev/null
kubectl create namespace models --dry-run=client -o yaml | kubectl apply -f - >/dev/null
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size "$size" --shards 4 --seed 11 \
  --modelrevision llama-r1 --bucket "$MODELPLANE_S3_BUCKET" --prefix scenario-r1 \
  >"$state/llama-r1.yaml"
# MinIO's keys in a Secret of the revision's own namespace: the operator hands them to the agents
# of the nodes that stage llama-r1, and only to those (docs/security.md, "Credentials").
kubectl create secret generic minio-readonly -n models --dry-run=client -o yaml \
  --from-literal=accessKeyId="$AWS_ACCESS_KEY_ID" --from-literal=secretAccessKey="$AWS_SECRET_ACCESS_KEY" |
  kubectl apply -f - >/dev/null
sed -i 's|^      region: us-east-1$|&\n    credentialsSecretRef: {name: minio-readonly}|' "$state/llama-r1.yaml"
grep -q 'credentialsSecretRef: {name: minio-readonly}' "$state/llama-r1.yaml" ||
  fail "no credentialsSecretRef in llama-r1"
# Prestage on 2 GPU nodes.
cat >>"$state/llama-r1.yaml" <<YAML
  prestage:
    nodes: 2
    nodeSelector:
      modelplane.io/gpu: "true"
YAML
# Signed with the real model_signing tool (PyPI model-signing) over the folder the revision lists.
"$root/.venv/bin/model_signing" sign key --private_key "$state/release.key" \
  --signature "$state/llama-r1.sig" "$checkpoint" >"$state/logs/model-signing.log" 2>&1 ||
  fail "model_signing could not sign the checkpoint: $(tail -n 3 "$state/logs/model-signing.log")"
printf '  signatures:\n  - bundle: |\n      %s\n' "$(tr -d '\n' <"$state/llama-r1.sig")" >>"$state/llama-r1.yaml"
total_bytes=$(python3 -c 'import json,sys; print(sum(f["size"] for f in json.load(open(sys.argv[1]))["files"]))' \
  <(python3 e2e/checkpoint/generate.py --out "$checkpoint" --size "$size" --shards 4 --seed 11 --summary))
echo "  $total_bytes bytes in $(ls "$checkpoint" | wc -l) files"

say "Applying ModelRevision llama-r1 (prestage: 2 nodes)"
applied_at=$SECONDS
kubectl apply -n models -f "$state/llama-r1.yaml" >/dev/null
revision_ready() {
  [[ $(kubectl get modelrevision llama-r1 -n models -o jsonpath='{.status.phase}/{.status.readyNodes}') == Ready/2 ]]
}
wait_for 600 "llama-r1 Ready on 2 nodes" revision_ready
pass "llama-r1 Ready 2/2 after $((SECONDS - applied_at)) s"
signer=$(kubectl get modelrevision llama-r1 -n models -o jsonpath='{.status.signedBy[0].signer}')
[[ $signer == scenario-release ]] || fail "llama-r1's signature was not verified (signedBy: '$signer')"
pass "llama-r1's model_signing bundle verified: signed by $signer ($(kubectl get modelrevision llama-r1 -n models -o jsonpath='{.status.signedBy[0].publicKey}' | cut -c1-23)...)"
grep -q 'credentials_served.*namespace=models.*secret=minio-readonly' "$state/logs/modelplane-operator.log" ||
  fail "the operator served no agent Secret models/minio-readonly"
grep -q 'secret_credentials_fetched.*secret=minio-readonly' "$state"/logs/modelplane-node-agent-*.log ||
  fail "no agent fetched Secret models/minio-readonly from the operator"
served=$(grep -c 'credentials_served.*secret=minio-readonly' "$state/logs/modelplane-operator.log")
pass "llama-r1 read MinIO with Secret models/minio-readonly, which the operator handed to its nodes' agents ($served requests)"
digest=$(kubectl get modelrevision llama-r1 -n models -o jsonpath='{.status.digest}')
mapfile -t holders < <(kubectl get modelcaches -o json | python3 -c '
import json, sys
digest = sys.argv[1]
for item in json.load(sys.stdin)["items"]:
    for entry in (item.get("status") or {}).get("revisions", []):
        if entry.get("digest") == digest and entry.get("state") == "Ready":
            print(item["metadata"]["name"])' "$digest")
((${#holders[@]} == 2)) || fail "expected 2 ModelCaches holding $digest Ready, got ${holders[*]:-none}"
zones=$(for node in "${holders[@]}"; do kubectl get node "$node" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}'; done | sort -u | wc -l)
((zones == 2)) || fail "the two prestaged nodes share a zone"
pass "ModelCaches of ${holders[*]} report it Ready, one per zone"
# The bytes on disk: every blob of every file hashes to its name and the manifest's sha256.
for node in "${holders[@]}"; do
  python3 - "$state/llama-r1.yaml" "$state/agents/$node/cache" <<'PY' || fail "bytes on $node do not match"
import hashlib, re, sys, pathlib
manifest = open(sys.argv[1]).read()
root = pathlib.Path(sys.argv[2])
for sha in re.findall(r'sha256: "sha256:([0-9a-f]{64})"', manifest):
    blob = root / "blobs" / "sha256" / sha
    digest = hashlib.sha256()
    with open(blob, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            digest.update(chunk)
    assert digest.hexdigest() == sha, blob
PY
done
pass "blobs on both nodes hash to the manifest's sha256s"

say "A 3-replica Deployment whose template names its revision and nothing else of modelplane's"
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-server, namespace: models}
spec:
  replicas: 3
  # In-place replacement: each new pod takes the node an old one leaves (one per host).
  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}
  selector: {matchLabels: {app: llama-server}}
  template:
    metadata:
      labels: {app: llama-server}
      annotations: {modelplane.io/revision: llama-r1}
    spec:
      tolerations: [{operator: Exists}]
      nodeSelector: {modelplane.io/gpu: "true"}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: llama-server}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: server
        image: vllm/vllm-openai:v0.11.0
        resources: {limits: {nvidia.com/gpu: "1"}}
YAML
three_pods() {
  [[ $(kubectl get pods -n models -l app=llama-server -o name | grep -c .) == 3 ]]
}
wait_for 60 "3 pods created" three_pods
first_pod=$(kubectl get pods -n models -l app=llama-server -o jsonpath='{.items[0].metadata.name}')
kubectl get pod -n models "$first_pod" -o json | python3 -c '
import json, sys
pod = json.load(sys.stdin)
spec = pod["spec"]
assert spec["schedulerName"] == "modelplane-scheduler", spec["schedulerName"]
assert {"conditionType": "modelplane.io/weights-ready"} in spec["readinessGates"], spec.get("readinessGates")
volume = [v for v in spec["volumes"] if v["name"] == "modelplane-weights"][0]
assert volume["csi"] == {"driver": "csi.modelplane.io", "readOnly": True,
                         "volumeAttributes": {"modelplane.io/revision": "llama-r1"}}, volume
mount = [m for m in spec["containers"][0]["volumeMounts"] if m["name"] == "modelplane-weights"][0]
assert mount == {"name": "modelplane-weights", "mountPath": "/models/llama-r1", "readOnly": True}, mount
assert pod["metadata"]["annotations"]["modelplane.io/injected"].startswith("sha256:")
' || fail "the webhook did not inject $first_pod as expected"
pass "the webhook injected the scheduler, the readiness gate and the read-only CSI volume at /models/llama-r1"
all_scheduled() {
  [[ $(kubectl get pods -n models -l app=llama-server -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .) == 3 ]]
}
# Two pods go to the prestaged nodes at once; the third (one per host) waits, gated, while a
# node the operator chose stages the revision; the Event on it says so.
waiting_event() {
  kubectl get events -n models -o jsonpath='{range .items[*]}{.reason} {.message}{"\n"}{end}' |
    grep -c "WaitingForWeights waiting for ModelRevision models/llama-r1 on 1 more node" >/dev/null
}
wait_for 120 "an Event on the waiting pod" waiting_event
kubectl get events -n models -o jsonpath='{range .items[*]}{.reason} {.message}{"\n"}{end}' |
  awk '/WaitingForWeights/ && !shown { print "    event: " $0; shown = 1 }'
wait_for 600 "3 pods scheduled" all_scheduled
mapfile -t placed < <(kubectl get pods -n models -l app=llama-server -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort)
on_holders=0
third=""
for node in "${placed[@]}"; do
  if [[ " ${holders[*]} " == *" $node "* ]]; then on_holders=$((on_holders + 1)); else third=$node; fi
done
((on_holders == 2)) || fail "pods on ${placed[*]}; expected both of ${holders[*]}"
[[ -n $third ]] || fail "no pod landed off the prestaged nodes"
pass "pods on ${placed[*]}: both prestaged nodes, and $third"
grep -q "llama-r1" "$state/logs/modelplane-scheduler-extender.log" || fail "no extender decision logged"
pass "the extender's decisions are in its log:"
grep "llama-r1" "$state/logs/modelplane-scheduler-extender.log" | tail -n 3 | cut -c1-240 | sed 's/^/    /'
pods_ready() {
  [[ $(kubectl get pods -n models -l app=llama-server -o json | python3 -c '
import json, sys
pods = json.load(sys.stdin)["items"]
def cond(pod, kind):
    return any(c["type"] == kind and c["status"] == "True" for c in pod["status"].get("conditions", []))
print(sum(1 for p in pods if cond(p, "Ready") and cond(p, "modelplane.io/weights-ready")))') == 3 ]]
}
wait_for 600 "all 3 pods Ready through the weights-ready gate" pods_ready
pass "all 3 pods Ready; weights-ready True on each"
third_tier=$(kubectl get modelcache "$third" -o json | python3 -c '
import json, sys
digest = sys.argv[1]
for entry in json.load(sys.stdin)["status"]["revisions"]:
    if entry["digest"] == digest:
        print(entry["state"], entry.get("sourceTier", ""))' "$digest")
[[ $third_tier == Ready* ]] || fail "$third does not report the revision Ready: $third_tier"
pass "$third staged it on demand: $third_tier"
# The promise: every pod was let go only to a node that held the revision Ready.
for pod in $(kubectl get pods -n models -l app=llama-server -o name); do
  node=$(kubectl get -n models "$pod" -o jsonpath='{.spec.nodeName}')
  narrowed=$(kubectl get -n models "$pod" -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[*].matchFields[*].values[*]}')
  [[ " $narrowed " == *" $node "* ]] || fail "$pod runs on $node, outside the nodes it was narrowed to ($narrowed)"
  kubectl get events -n models --field-selector "involvedObject.name=${pod#pod/},reason=WeightsVerified" \
    -o jsonpath='{.items[*].message}' | grep -c "verified on" >/dev/null || fail "$pod has no WeightsVerified Event"
done
pass "each pod was narrowed to nodes holding llama-r1 Ready and runs on one of them"
kubectl apply --dry-run=server -f docs/examples/vllm-deployment.yaml >"$state/vllm-dry-run.txt" 2>&1 ||
  { cat "$state/vllm-dry-run.txt"; fail "docs/examples/vllm-deployment.yaml does not pass admission"; }
pass "docs/examples/vllm-deployment.yaml passes the API server and the webhook (dry run)"

say "Flagger's rollout gates on llama-server (the operator's gate endpoint, as a Canary calls it)"
gate() {  # gate HOOK: the HTTP status; the answer's reason in $state/gate.txt
  curl -sS -o "$state/gate.txt" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data '{"name": "llama-server", "namespace": "models", "phase": "Progressing"}' \
    "http://127.0.0.1:$gates_port/gates/$1"
}
for hook in confirm-rollout confirm-traffic-increase; do
  code=$(gate "$hook")
  [[ $code == 200 ]] || fail "$hook answered $code: $(cat "$state/gate.txt")"
  pass "$hook: go ($(head -c 160 "$state/gate.txt"))"
done
# No Flagger here, so no llama-server-primary: the gate reads it and answers either way.
code=$(gate confirm-promotion)
[[ $code == 200 || $code == 403 ]] || fail "confirm-promotion answered $code: $(cat "$state/gate.txt")"
pass "confirm-promotion: $code ($(head -c 160 "$state/gate.txt"))"

say "A Helm chart with a Deployment and the ModelRevision it names, installed in one step"
# Helm creates custom resources after Deployments: the pod is admitted before its revision.
small=$state/checkpoint-small
python3 e2e/checkpoint/generate.py --out "$small" --size 32MiB --shards 1 --seed 12 \
  --upload "s3://$MODELPLANE_S3_BUCKET/scenario-small/" >/dev/null
mkdir -p "$state/app-chart/templates"
printf 'apiVersion: v2\nname: llama-small\nversion: 0.1.0\n' >"$state/app-chart/Chart.yaml"
python3 e2e/checkpoint/generate.py --out "$small" --size 32MiB --shards 1 --seed 12 \
  --modelrevision llama-small --bucket "$MODELPLANE_S3_BUCKET" --prefix scenario-small \
  >"$state/app-chart/templates/revision.yaml"
cat >"$state/app-chart/templates/deployment.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-small}
spec:
  replicas: 1
  selector: {matchLabels: {app: llama-small}}
  template:
    metadata:
      labels: {app: llama-small}
      annotations: {modelplane.io/revision: llama-small}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: server
        image: vllm/vllm-openai:v0.11.0
        args: [--model=/models/llama-small]
YAML
helm install llama-small "$state/app-chart" --namespace models >/dev/null
small_ready() {
  [[ $(kubectl get pods -n models -l app=llama-small -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{end}') == True ]]
}
wait_for 300 "the llama-small pod Ready" small_ready
small_pod=$(kubectl get pods -n models -l app=llama-small -o jsonpath='{.items[0].metadata.name}')
# Which came first is a race between Helm and the ReplicaSet controller; either way it starts.
if [[ $(kubectl get pod -n models "$small_pod" -o jsonpath='{.metadata.annotations.modelplane\.io/injected}') == pending ]]; then
  order="admitted before llama-small existed, waited gated"
else
  order="admitted after llama-small existed"
fi
pass "llama-small: one helm install; pod $small_pod $order, Ready on $(kubectl get pod -n models "$small_pod" -o jsonpath='{.spec.nodeName}')"

say "kubectl rollout: llama-r1 to llama-r2, then undo"
# What each step took from remote sources (the object store) and from peers, from the agents'
# own counters.
fetched() { "$root/.venv/bin/python" e2e/fetched_bytes.py "$state"; }
delta() {  # delta BEFORE_JSON AFTER_JSON TIER...: bytes fetched in between from those tiers
  python3 - "$@" <<'PY'
import json, sys
before, after = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(sum(after.get(t, 0) - before.get(t, 0) for t in sys.argv[3:]))
PY
}
remote_tiers=(objectStore http sharedFilesystem)
python3 e2e/checkpoint/generate.py --out "$state/checkpoint-r2" --size "$size" --shards 4 --seed 21 \
  --upload "s3://$MODELPLANE_S3_BUCKET/scenario-r2/" >/dev/null
python3 e2e/checkpoint/generate.py --out "$state/checkpoint-r2" --size "$size" --shards 4 --seed 21 \
  --modelrevision llama-r2 --bucket "$MODELPLANE_S3_BUCKET" --prefix scenario-r2 >"$state/llama-r2.yaml"
printf '  retention:\n    rollbackWindow: 1h\n' >>"$state/llama-r2.yaml"
kubectl apply -n models -f "$state/llama-r2.yaml" >/dev/null
r2_digest() { kubectl get modelrevision llama-r2 -n models -o jsonpath='{.status.digest}'; }
wait_for 60 "llama-r2 validated" r2_digest
r2=$(r2_digest)
mapfile -t r1_nodes < <(kubectl get pods -n models -l app=llama-server -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort)
before_rollout=$(fetched)
rollout_started=$SECONDS
kubectl patch deployment llama-server -n models --type=merge \
  -p '{"spec":{"template":{"metadata":{"annotations":{"modelplane.io/revision":"llama-r2"}}}}}' >/dev/null
# No new pod goes before llama-r2 is verified on every node llama-r1's pods run on.
new_pod_gated_until_prestaged() {
  python3 - "$r2" "${r1_nodes[@]}" <<'PY'
import json, subprocess, sys
digest, nodes = sys.argv[1], set(sys.argv[2:])
# Pods first: a pod let go before this read was let go after its nodes said Ready, and Ready
# stays (caches read first could miss a node that turned Ready just before the pod went).
pods = json.loads(subprocess.check_output(["kubectl", "get", "pods", "-n", "models", "-l", "app=llama-server", "-o", "json"]))
caches = json.loads(subprocess.check_output(["kubectl", "get", "modelcaches", "-o", "json"]))
ready = {c["metadata"]["name"] for c in caches["items"]
         for e in (c.get("status") or {}).get("revisions", []) if e["digest"] == digest and e["state"] == "Ready"}
for pod in pods["items"]:
    if pod["metadata"]["annotations"].get("modelplane.io/revision") != "llama-r2":
        continue
    if not pod["spec"].get("schedulingGates") and not nodes <= ready:
        print(f"{pod['metadata']['name']} was let go while llama-r2 was Ready on {sorted(ready & nodes)} of {sorted(nodes)}")
        sys.exit(1)
PY
}
rollout_done() {
  # A violation ends the wait; it is reported below (wait_for hides the command's output).
  new_pod_gated_until_prestaged >"$state/rollout-violation.txt" || return 0
  kubectl rollout status deployment/llama-server -n models --timeout=1s >/dev/null 2>&1
}
wait_for 600 "the rollout to llama-r2" rollout_done
[[ ! -s $state/rollout-violation.txt ]] || fail "$(cat "$state/rollout-violation.txt")"
after_rollout=$(fetched)
kubectl get events -n models --field-selector involvedObject.kind=Deployment,reason=WeightsPrestaged \
  -o jsonpath='{range .items[*]}    event: {.reason}: {.message}{"\n"}{end}' | tail -n 1
pass "rolled to llama-r2 in $((SECONDS - rollout_started)) s: $(delta "$before_rollout" "$after_rollout" "${remote_tiers[@]}") bytes from the object store, $(delta "$before_rollout" "$after_rollout" peer) from peers"
pinned=$(kubectl get modelcaches -o json | python3 -c '
import json, sys
print(sum(1 for c in json.load(sys.stdin)["items"] for e in c["spec"].get("revisions", [])
          if e["revision"]["name"] == "llama-r1" and e.get("reason") == "rollback" and e.get("pinned")))')
((pinned == ${#r1_nodes[@]})) || fail "llama-r1 is pinned on $pinned nodes, expected ${#r1_nodes[@]}"
pass "llama-r1 pinned for undo on the ${#r1_nodes[@]} nodes its pods ran on (rollback window 1h)"
undo_started=$SECONDS
kubectl rollout undo deployment/llama-server -n models >/dev/null
undo_done() { kubectl rollout status deployment/llama-server -n models --timeout=1s >/dev/null 2>&1 &&
  [[ $(kubectl get deployment llama-server -n models -o jsonpath='{.spec.template.metadata.annotations.modelplane\.io/revision}') == llama-r1 ]]; }
wait_for 300 "kubectl rollout undo back to llama-r1" undo_done
after_undo=$(fetched)
undo_remote=$(delta "$after_rollout" "$after_undo" "${remote_tiers[@]}" peer)
((undo_remote == 0)) || fail "the undo fetched $undo_remote bytes; expected node-local hits only"
pass "undone to llama-r1 in $((SECONDS - undo_started)) s: 0 bytes fetched, every pod served by a node-local hit"

say "A ModelQuota: the namespace's pins limited to none"
# After the undo llama-r2 is the revision kept pinned for a redo. A quota of 0 pinned bytes ends
# those pins (the bytes stay cached, evictable), the revision says why, the quota's status
# reports the namespace's usage, and the tenant's view shows both; without the quota the pins
# come back.
r2_pins() {
  kubectl get modelcaches -o json | python3 -c '
import json, sys
print(sum(1 for c in json.load(sys.stdin)["items"] for e in c["spec"].get("revisions", [])
          if e["revision"]["name"] == "llama-r2" and e.get("reason") == "rollback" and e.get("pinned")))'
}
r2_pinned() { (($(r2_pins) > 0)); }
wait_for 60 "llama-r2 pinned for a redo" r2_pinned
pins_before=$(r2_pins)
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: modelplane.io/v1alpha1
kind: ModelQuota
metadata: {name: scenario-limits, namespace: models}
spec: {pinnedBytes: 0, prestagedBytes: 1Ti, pinTtlAfterLastUse: 24h}
YAML
quota_enforced() {
  [[ $(r2_pins) == 0 ]] &&
    [[ $(kubectl get modelrevision llama-r2 -n models -o jsonpath='{.status.conditions[?(@.type=="WithinQuota")].reason}') == QuotaExceeded ]] &&
    [[ " $(kubectl get modelquota scenario-limits -n models -o jsonpath='{.status.limitedRevisions[*]}') " == *" llama-r2 "* ]] &&
    [[ $(kubectl get modelquota scenario-limits -n models -o jsonpath='{.status.used.pinnedBytes}') == 0 ]]
}
wait_for 60 "the ModelQuota ending llama-r2's pins" quota_enforced
PATH=$bin/kubectl-plugin:$PATH kubectl modelplane quota -n models >"$state/plugin-quota.txt" ||
  fail "kubectl modelplane quota failed: $(cat "$state/plugin-quota.txt")"
sed 's/^/  /' "$state/plugin-quota.txt"
grep -q "llama-r2: QuotaExceeded: pinned on 0 of" "$state/plugin-quota.txt" ||
  fail "kubectl modelplane quota does not say why llama-r2 holds no pin"
pass "ModelQuota models/scenario-limits (pinnedBytes 0): llama-r2's $pins_before pins ended, WithinQuota=False QuotaExceeded, usage in the quota's status"
kubectl delete modelquota scenario-limits -n models >/dev/null
pins_back() { [[ $(r2_pins) == "$pins_before" ]]; }
wait_for 60 "llama-r2 pinned again without the quota" pins_back
pass "quota removed: llama-r2 pinned again on $pins_before nodes"

say "A private model from the Hub: imported in one command, staged with its token kept home"
printf '%s' "$hub_token" >"$state/hub-token"
kubectl create secret generic hf-token -n models --from-literal=token="$hub_token" >/dev/null
PATH=$bin/kubectl-plugin:$PATH kubectl modelplane import hf://scenario/tiny@main --name tiny-hub \
  --endpoint "$hub_url" --token-file "$state/hub-token" --credentials-secret hf-token -n models \
  >"$state/tiny-hub.yaml" 2>"$state/hub-import.txt" ||
  fail "kubectl modelplane import failed: $(cat "$state/hub-import.txt")"
grep -q "$hub_commit" "$state/tiny-hub.yaml" || fail "the imported revision does not name commit $hub_commit"
# A push after the import moves main; the revision names the commit, so nothing changes.
"$root/.venv/bin/python" e2e/checkpoint/generate.py --out "$state/hub-model-2" --size 16MiB \
  --shards 2 --seed 8 >/dev/null
python3 e2e/hub/seed_repo.py --root "$state/hub" --repo scenario/tiny --from "$state/hub-model-2" \
  --token "$hub_token" >/dev/null
sed -i 's/^  prestage:.*//' "$state/tiny-hub.yaml"
kubectl apply -n models -f "$state/tiny-hub.yaml" >/dev/null
kubectl patch modelrevision tiny-hub -n models --type merge -p '{"spec":{"prestage":{"nodes":2}}}' >/dev/null
# hub_budget_cut: the hub's SourceBudget has counted throttled requests (the 429s) or cut.
hub_budget_cut() {
  kubectl get sourcebudgets -o json | python3 -c '
import json, sys
sys.exit(0 if any(b["spec"]["source"].startswith("hub/") and
                  ((b.get("status") or {}).get("throttledRequests", 0) > 0 or
                   (b.get("status") or {}).get("phase") == "Cut")
                  for b in json.load(sys.stdin)["items"]) else 1)'
}
hub_ready() {
  hub_budget_cut && touch "$state/hub-budget-cut"
  [[ $(kubectl get modelrevision tiny-hub -n models -o jsonpath='{.status.phase}/{.status.readyNodes}') == Ready/2 ]]
}
wait_for 240 "tiny-hub Ready on 2 nodes" hub_ready
python3 - "$state/hub-requests.jsonl" "$state/hub-model" >"$state/hub-requests.txt" <<'PY' ||
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
cdn = [line for line in lines if line["origin"] == "cdn"]
hub = [line for line in lines if line["origin"] == "hub"]
leaked = [line for line in cdn if line["authorization"] or line.get("cookie")]
if leaked:
    sys.exit(f"the token reached the CDN: {leaked[0]['path']}")
if not any(line["authorization"] for line in hub if "/resolve/" in line["path"]):
    sys.exit("no resolve call carried the token")
if not any(line["status"] == 206 for line in cdn):
    sys.exit("no ranged read from the CDN")
throttled = sum(1 for line in hub if line["status"] == 429)
if not throttled:
    sys.exit("the hub answered no 429: the burst did not reach its limit")
print(f"{len(hub)} hub requests ({throttled} answered 429), {len(cdn)} CDN requests, none with the token")
PY
  fail "$(cat "$state/hub-requests.txt")"
[[ -f $state/hub-budget-cut ]] || hub_budget_cut ||
  fail "the hub's 429s never reached its SourceBudget (no throttled requests counted)"
pass "tiny-hub (hf://scenario/tiny at $(cut -c1-12 <<<"$hub_commit"), main moved since) Ready 2/2: $(cat "$state/hub-requests.txt"); the hub's SourceBudget counted the 429s"

say "Bad input"
sed -e 's/name: "llama-r1"/name: "llama-bad"/' -e '0,/sha256: "sha256:[0-9a-f]*"/s//sha256: "sha256:nothex"/' \
  "$state/llama-r1.yaml" >"$state/llama-bad.yaml"
if kubectl apply -n models -f "$state/llama-bad.yaml" >"$state/bad-apply.txt" 2>&1; then
  invalid_reason() {
    [[ $(kubectl get modelrevision llama-bad -n models -o jsonpath='{.status.conditions[?(@.type=="Valid")].status}') == False ]]
  }
  wait_for 60 "Valid=False on llama-bad" invalid_reason
  pass "llama-bad: Valid=False, reason $(kubectl get modelrevision llama-bad -n models -o jsonpath='{.status.conditions[?(@.type=="Valid")].reason}')"
else
  pass "llama-bad refused at admission: $(head -c 200 "$state/bad-apply.txt")"
fi
# Valid, but its signature lists other bytes than its files: a swapped shard.
sed -e 's/name: "llama-r1"/name: "llama-forged"/' \
  -e '0,/sha256: "sha256:[0-9a-f]*"/s//sha256: "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"/' \
  "$state/llama-r1.yaml" >"$state/llama-forged.yaml"
if kubectl apply -n models -f "$state/llama-forged.yaml" >"$state/forged-apply.txt" 2>&1; then
  fail "the validating webhook let llama-forged (a file its signature does not list) in"
fi
grep -q "SignatureFilesMismatch" "$state/forged-apply.txt" ||
  fail "llama-forged refused without the signature's reason: $(cat "$state/forged-apply.txt")"
pass "llama-forged refused at admission: $(grep -o 'SignatureFilesMismatch.*' "$state/forged-apply.txt" | head -c 160)"
# Valid to the API server's schema but not to the operator: a shared-filesystem path with "..".
python3 - "$state/llama-r1.yaml" >"$state/llama-escape.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read().replace('name: "llama-r1"', 'name: "llama-escape"')
start, end = text.index("  sources:"), text.index("  files:")
text = text[:start] + """  sources:
  - name: nfs
    type: sharedFilesystem
    sharedFilesystem:
      path: /models/../etc
""" + text[end:]
print(text, end="")
PY
if kubectl apply -n models -f "$state/llama-escape.yaml" >"$state/escape-apply.txt" 2>&1; then
  fail "the validating webhook let llama-escape (a path with '..') in"
fi
grep -q "must not contain" "$state/escape-apply.txt" || fail "llama-escape refused without the reason: $(cat "$state/escape-apply.txt")"
pass "llama-escape refused at admission: $(grep -o 'modelplane: .*' "$state/escape-apply.txt" | head -c 160)"
# Valid, but the source policy allows no revision to read the node's secrets.
sed -e 's|name: "llama-escape"|name: "llama-secrets"|' -e 's|path: /models/../etc|path: /var/run/secrets/kubernetes.io|' \
  "$state/llama-escape.yaml" >"$state/llama-secrets.yaml"
if kubectl apply -n models -f "$state/llama-secrets.yaml" >"$state/secrets-apply.txt" 2>&1; then
  fail "the source policy let llama-secrets (/var/run/secrets) in"
fi
grep -q "below no sharedFilesystems root" "$state/secrets-apply.txt" ||
  fail "llama-secrets refused without the rule: $(cat "$state/secrets-apply.txt")"
pass "llama-secrets refused by the source policy: $(grep -o 'source "nfs".*' "$state/secrets-apply.txt" | head -c 160)"
if kubectl patch modelrevision llama-r1 -n models --type=json \
  -p '[{"op":"replace","path":"/spec/files/0/size","value":1}]' >"$state/immutable.txt" 2>&1; then
  fail "the API server accepted a change to the file set"
fi
pass "a file-set change is refused: $(grep -o 'Invalid value.*' "$state/immutable.txt" | head -n 1 | cut -c1-160)"

say "kubectl get modelrevisions,modelcaches"
kubectl get modelrevisions -A
kubectl get modelcaches

say "Timeline of llama-r1 per node (tier, stage timestamps, bytes-to-ready)"
kubectl get modelcaches -o json | python3 e2e/timeline.py "$digest"
kubectl get modelrevision llama-r1 -n models -o jsonpath='{.status.bytesToReadySeconds}{"\n"}' | sed 's/^/  bytes-to-ready seconds: /'

say "kubectl modelplane: the revision and a node as the operator and the agents report them"
plugin=$bin/kubectl-plugin
PATH=$plugin:$PATH kubectl modelplane status llama-r1 -n models >"$state/plugin-status.txt" ||
  fail "kubectl modelplane status failed: $(cat "$state/plugin-status.txt")"
sed 's/^/  /' "$state/plugin-status.txt"
grep -c "Ready" "$state/plugin-status.txt" >/dev/null || fail "kubectl modelplane status shows no Ready node"
PATH=$plugin:$PATH kubectl modelplane cache "${holders[0]}" >"$state/plugin-cache.txt" ||
  fail "kubectl modelplane cache failed: $(cat "$state/plugin-cache.txt")"
sed 's/^/  /' "$state/plugin-cache.txt"
grep -c "llama-r" "$state/plugin-cache.txt" >/dev/null || fail "kubectl modelplane cache lists no revision"
pass "kubectl modelplane status and cache read what the operator and agents wrote"

if ((keep == 0)); then
  say "Revocation by digest: a ModelRevocation of llama-r1's digest (force: its pods use it)"
  # Real peer requests answered 404, the pods' weights-ready False, its unique blobs gone from
  # every store, and status reporting 0 nodes holding it, within 90 s (docs/eviction.md).
  "$python" e2e/revocation_check.py --state "$state" --namespace models --revision llama-r1 \
    --agent-binary "$bin/node-agent/modelplane-node-agent" --timeout 90 ||
    fail "llama-r1 was not revoked everywhere in time (above)"
  pass "llama-r1 revoked by digest: withheld from peers, pods not ready, purged from every node"
else
  # The demo keeps llama-r1 serving; a revocation that covers nothing still shows the operator
  # reporting one.
  say "A ModelRevocation of a digest no revision has"
  cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: modelplane.io/v1alpha1
kind: ModelRevocation
metadata: {name: e2e-nothing-covered}
spec:
  digest: "sha256:$(printf 'modelplane e2e: no revision has this digest' | sha256sum | cut -d' ' -f1)"
  reason: "e2e: covers no revision"
YAML
  revocation_purged() {
    [[ $(kubectl get modelrevocation e2e-nothing-covered -o jsonpath='{.status.phase}') == Purged ]]
  }
  wait_for 60 "the operator to report e2e-nothing-covered Purged" revocation_purged
  kubectl delete modelrevocation e2e-nothing-covered >/dev/null
  pass "e2e-nothing-covered: Purged, covering no revision"
fi

say "A Node that goes away takes its ModelCache with it"
node_gone_started=$SECONDS
cat <<YAML | kubectl apply -f - >/dev/null
apiVersion: v1
kind: Node
metadata: {name: gpu-node-gone, labels: {modelplane.io/e2e: short-lived}}
spec: {unschedulable: true}
YAML
wait_for 60 "the operator to create ModelCache gpu-node-gone" kubectl get modelcache gpu-node-gone
# Orphan: the garbage collector would otherwise race the operator for the cache (the operator
# makes the Node its owner), and the operator's own clean-up is what is checked here.
kubectl delete node gpu-node-gone --cascade=orphan >/dev/null
cache_gone() { ! kubectl get modelcache gpu-node-gone >/dev/null 2>&1; }
wait_for 60 "the operator to delete ModelCache gpu-node-gone" cache_gone
pass "the operator made gpu-node-gone's ModelCache and deleted it with the Node ($((SECONDS - node_gone_started)) s)"

say "Metrics: what the chart's alerts and dashboard name, scraped from the running binaries"
e2e/monitoring/check_scraped.sh "$state/logs" "$state/metrics" | sed 's/^/  /' ||
  fail "the chart's alerts or dashboard name a metric the binaries do not export (above; expositions in $state/metrics)"
pass "every metric the alerts and the dashboard name is exported"

say "RBAC: what each component's ServiceAccount asked for, against what the chart grants it"
# From kube-apiserver's audit log of the whole run: every request allowed, every grant used (or
# listed in e2e/rbac_audit.py with the reason the scenario cannot use it).
rbac_started=$SECONDS
if ! "$python" e2e/rbac_audit.py check --rendered "$state/chart-defaults.yaml" \
  --audit-log "$state/logs/audit.log" >"$state/rbac-audit.txt" 2>&1; then
  sed 's/^/  /' "$state/rbac-audit.txt"
  fail "a component's requests and the chart's RBAC differ (above; audit log $state/logs/audit.log)"
fi
sed 's/^/  /' "$state/rbac-audit.txt"
pass "each component used exactly what the chart grants it ($((SECONDS - rbac_started)) s)"

say "scenario passed"
if ((keep)); then
  cat <<TEXT
The cluster and modelplane stay up. Explore with:
  export MODELPLANE_E2E_STATE=$state
  eval "\$(e2e/cluster.sh env)"
  kubectl get modelrevisions -A; kubectl get modelcaches; kubectl get pods -n models -o wide
  export PATH=$bin/kubectl-plugin:\$PATH; kubectl modelplane status llama-r1 -n models
  ls $state/logs/
Take it down with:  $0 down
TEXT
fi
