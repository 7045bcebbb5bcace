#!/usr/bin/env bash
# modelplane installed as it ships, on a real node (docs/real-node.md), asserted step by step:
#   the local control plane (e2e/cluster.sh, 2 KWOK GPU nodes) and beside it one real node
#   (e2e/node.sh: kubelet, kube-proxy, containerd, runc, CNI bridge, CoreDNS), and an image
#   registry on loopback that receives the three images scripts/images.sh builds (skopeo, as
#   docs/images.md tells users) and a kube-scheduler image built from the same release;
#   `helm install` of the chart with only the values a user sets (image registry, node
#   selectors, source policy): operator, extender and second scheduler as Deployments, the agent
#   as the DaemonSet, the webhook reached through its Service, the agent registering its CSI
#   socket with kubelet itself;
#   a ModelRevision staged from MinIO onto the real node, and a pod whose spec carries only the
#   annotation: kubelet publishes the csi.modelplane.io volume, the container hashes every file
#   of the revision through the mount (byte-exact), a write fails with EROFS, the readiness gate
#   turns it Ready;
#   the agent pod killed while the volume is mounted: the DaemonSet restarts it, the mount stays
#   readable, the lease is rebuilt, the pod stays Ready, nothing is evicted;
#   the pod deleted: kubelet unpublishes the volume and the lease goes; `helm uninstall` leaves
#   no mount, socket or lease behind.
#
#   e2e/real-node.sh            run it and take everything down
#   e2e/real-node.sh --keep     leave the cluster, the node and the release up
#   e2e/real-node.sh up         only bring it up: cluster, node, images, helm install (then as
#                               --keep; bench/serving/run.sh starts from here)
#   e2e/real-node.sh down       take a kept run down
# Environment: MODELPLANE_E2E_STATE (default /tmp/modelplane-real-node), MODELPLANE_BUILD (the
# folder holding the three binaries; default build/release, built here when missing).
# Needs root: containerd, kubelet and the CSI plugin mount.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/modelplane-real-node}
# Two KWOK nodes beside the real one: modelplane's Deployments and DaemonSet must stay off them.
export MODELPLANE_E2E_NODES=${MODELPLANE_E2E_NODES:-2}
state=$MODELPLANE_E2E_STATE
work=$state-work
keep=0
up_only=0
release=modelplane
namespace=modelplane-system

down() {
  if command -v helm >/dev/null && [[ -n ${KUBECONFIG:-} ]]; then
    helm uninstall "$release" -n "$namespace" --wait --timeout 60s >/dev/null 2>&1 || true
  fi
  e2e/node.sh down || true
  e2e/cluster.sh down || true
  # The agent's cache is a hostPath: a DaemonSet's folder outlives its release, as on any node.
  # Unless another run's real node is up (e2e/node.sh keeps one at a time), it goes too.
  [[ -f /run/modelplane-real-node.owner ]] || rm -rf /var/lib/modelplane
  rm -rf "$work"
}

case ${1:-} in
  down) down; exit 0 ;;
  --keep) keep=1 ;;
  up) keep=1 up_only=1 ;;
  "") ;;
  *) echo "usage: $0 [--keep|up|down]" >&2; exit 2 ;;
esac

# say, pass, fail, wait_for
# shellcheck source=e2e/lib/checks.sh
source "$root/e2e/lib/checks.sh"

# The Ready agent pod on the real node (none while the DaemonSet replaces it).
agent_pod() {
  kubectl get pods -n "$namespace" -l app.kubernetes.io/component=node-agent \
    --field-selector spec.nodeName="$MODELPLANE_NODE" \
    -o jsonpath='{range .items[?(@.status.containerStatuses[0].ready==true)]}{.metadata.name}{"\n"}{end}'
}

cleanup() {
  local code=$?
  if ((code != 0)); then
    echo "--- what the cluster shows (logs kept in $state-logs) ---" >&2
    kubectl get pods -A -o wide >&2 2>/dev/null || true
    kubectl get events -A --sort-by=.lastTimestamp 2>/dev/null | tail -n 30 >&2 || true
    for pod in $(kubectl get pods -n "$namespace" -o name 2>/dev/null); do
      echo "# $pod" >&2
      kubectl logs -n "$namespace" "$pod" --all-containers --tail=15 >&2 2>/dev/null || true
    done
    rm -rf "$state-logs"
    mkdir -p "$state-logs"
    cp -r "$state"/logs "$state"/real-node/logs "$state-logs/" 2>/dev/null || true
  fi
  if ((keep == 0)) || ((code != 0)); then
    down >/dev/null 2>&1
  fi
  exit "$code"
}

[[ $(id -u) -eq 0 ]] || fail "a real node needs root"
say "Tools, binaries and images"
scripts/setup.sh >/dev/null
e2e/tools.sh node-build >/dev/null
if [[ -z ${MODELPLANE_BUILD:-} ]]; then
  scripts/release-build.sh build/release modelplane-operator modelplane-scheduler-extender \
    modelplane-node-agent >/dev/null
  export MODELPLANE_BUILD=$root/build/release
fi
scripts/images.sh >/dev/null
version=$(sed -n 's/.*kModelplaneVersion = "\([^"]*\)".*/\1/p' core/runtime/component_main.h)
mapfile -t archives < <(ls -t build/images/modelplane-*-"$version"-*.oci.tar)
tag=$(basename "${archives[0]}" .oci.tar)
tag=${tag#modelplane-node-agent-}
tag=${tag#modelplane-operator-}
tag=${tag#modelplane-scheduler-extender-}
pass "images of $tag: ${#archives[@]} archives"

trap cleanup EXIT
say "The control plane and a real node"
down >/dev/null 2>&1
host_ip=$(e2e/node.sh net-up)
MODELPLANE_E2E_HOST_IP=$host_ip e2e/cluster.sh up
eval "$(e2e/cluster.sh env)"
e2e/node.sh up
eval "$(e2e/node.sh env)"
kubectl get node "$MODELPLANE_NODE" -o wide
pass "node $MODELPLANE_NODE Ready: kubelet $(kubectl get node "$MODELPLANE_NODE" -o jsonpath='{.status.nodeInfo.kubeletVersion}'), $(kubectl get node "$MODELPLANE_NODE" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')"
# A GPU the documented way for nodes without a device plugin: the node status capacity.
kubectl patch node "$MODELPLANE_NODE" --subresource=status --type=json \
  -p '[{"op": "add", "path": "/status/capacity/nvidia.com~1gpu", "value": "1"}]' >/dev/null
wait_for 30 "the fake GPU allocatable" bash -c \
  "[[ \$(kubectl get node $MODELPLANE_NODE -o jsonpath='{.status.allocatable.nvidia\.com/gpu}') == 1 ]]"
pass "nvidia.com/gpu: 1 advertised on $MODELPLANE_NODE (node status patch)"

say "Images pushed to the registry on loopback"
for image in modelplane-operator modelplane-scheduler-extender modelplane-node-agent; do
  e2e/node.sh push "build/images/$image-$tag.oci.tar:$tag" "modelplane/$image:$tag"
done
mkdir -p "$work/kube-scheduler/usr/local/bin" "$work/busybox/bin"
cp "$(dirname "$(command -v kube-apiserver)")/kube-scheduler" "$work/kube-scheduler/usr/local/bin/"
k8s_version=$(kube-scheduler --version | awk '{print $2}')
e2e/node.sh image "$work/kube-scheduler" "modelplane/kube-scheduler:$k8s_version" \
  /usr/local/bin/kube-scheduler 65532:65532
# The serving pods' image: Debian's static busybox (sh, sha256sum, find).
cp /bin/busybox "$work/busybox/bin/busybox"
for tool in sh sha256sum find sleep cat touch stat; do ln -sf busybox "$work/busybox/bin/$tool"; done
e2e/node.sh image "$work/busybox" modelplane/busybox:test /bin/sh 65532:65532
curl -fsS "http://$MODELPLANE_REGISTRY/v2/_catalog"
pass "registry $MODELPLANE_REGISTRY holds the chart's images"

say "helm install, with only the values a user sets"
minio_port=${S3_ENDPOINT_URL##*:}
cat >"$work/values.yaml" <<YAML
image: {repository: $MODELPLANE_REGISTRY/modelplane, tag: "$tag"}
scheduler:
  image: {repository: $MODELPLANE_REGISTRY/modelplane/kube-scheduler, tag: "$k8s_version"}
  nodeSelector: {type: real}
operator: {nodeSelector: {type: real}}
extender: {nodeSelector: {type: real}}
nodeAgent: {nodeSelector: {type: real}}
sourcePolicy:
  objectStores:
    - endpoint: "http://$host_ip:$minio_port"
      buckets: [$MODELPLANE_S3_BUCKET]
      addresses: ["$host_ip/32"]
YAML
installed_at=$SECONDS
helm install "$release" charts/modelplane -n "$namespace" --create-namespace \
  -f "$work/values.yaml" --wait --timeout 5m >/dev/null ||
  fail "helm install did not become ready"
kubectl get pods -n "$namespace" -o wide
# helm's --wait counts a DaemonSet ready with maxUnavailable (1) pods not Ready, so the agent is
# waited for here.
agent_ready() { [[ -n $(agent_pod) ]]; }
wait_for 180 "a Ready agent pod on $MODELPLANE_NODE" agent_ready
agent_pod=$(agent_pod)
pass "installed in $((SECONDS - installed_at)) s: every Deployment and the agent DaemonSet Ready on $MODELPLANE_NODE"
csinode_driver() {
  [[ $(kubectl get csinode "$MODELPLANE_NODE" -o jsonpath='{.spec.drivers[*].name}') == *csi.modelplane.io* ]]
}
wait_for 60 "kubelet to register csi.modelplane.io" csinode_driver
kubectl logs -n "$namespace" "$agent_pod" | grep -q csi_plugin_registered_with_kubelet ||
  fail "the agent did not hear kubelet's registration"
pass "kubelet registered csi.modelplane.io from the agent's own registration socket (CSINode $MODELPLANE_NODE)"
if ((up_only)); then
  trap - EXIT
  # What a caller needs besides `cluster.sh env` and `node.sh env`.
  printf 'REAL_NODE_VALUES=%s\nREAL_NODE_HOST_IP=%s\nREAL_NODE_MINIO_PORT=%s\n' \
    "$work/values.yaml" "$host_ip" "$minio_port" >"$state/real-node.env"
  say "up: eval \"\$(e2e/cluster.sh env)\"; e2e/real-node.sh down takes it away"
  exit 0
fi

say "A ModelRevision staged from MinIO onto the real node"
checkpoint=$work/checkpoint
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size 16MiB --shards 2 --seed 35 \
  --upload "s3://$MODELPLANE_S3_BUCKET/tiny-r1/" >/dev/null
kubectl create namespace models >/dev/null
kubectl create secret generic minio-readonly -n models \
  --from-literal=accessKeyId="$AWS_ACCESS_KEY_ID" --from-literal=secretAccessKey="$AWS_SECRET_ACCESS_KEY" >/dev/null
python3 e2e/checkpoint/generate.py --out "$checkpoint" --size 16MiB --shards 2 --seed 35 \
  --modelrevision tiny-r1 --bucket "$MODELPLANE_S3_BUCKET" --prefix tiny-r1 \
  --endpoint "http://$host_ip:$minio_port" >"$work/tiny-r1.yaml"
sed -i 's|^      region: us-east-1$|&\n    credentialsSecretRef: {name: minio-readonly}|' "$work/tiny-r1.yaml"
cat >>"$work/tiny-r1.yaml" <<YAML
  prestage:
    nodes: 1
    nodeSelector: {type: real}
YAML
applied_at=$SECONDS
kubectl apply -n models -f "$work/tiny-r1.yaml" >/dev/null
revision_ready() {
  [[ $(kubectl get modelrevision tiny-r1 -n models -o jsonpath='{.status.phase}/{.status.readyNodes}') == Ready/1 ]]
}
wait_for 180 "tiny-r1 Ready on $MODELPLANE_NODE" revision_ready
pass "tiny-r1 Ready on $MODELPLANE_NODE $((SECONDS - applied_at)) s after kubectl apply (the agent read MinIO with the namespace's Secret, handed over by the operator's Service)"

say "A Deployment whose template carries only the annotation reads every file through the CSI volume"
cat >"$work/reader.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: reader, namespace: models}
spec:
  replicas: 1
  selector: {matchLabels: {app: reader}}
  template:
    metadata:
      labels: {app: reader}
      annotations: {modelplane.io/revision: tiny-r1}
    spec:
      containers:
      - name: reader
        image: $MODELPLANE_REGISTRY/modelplane/busybox:test
        # The digest it was handed, every file's sha256 as the container reads it, then a write
        # that must fail.
        command: [sh, -c, 'echo "revision-digest=\$MODELPLANE_REVISION_DIGEST";
                           cd /models/tiny-r1 && find . -type f | sort | xargs sha256sum;
                           touch new-file || echo write-refused; sleep 100000']
        resources: {limits: {nvidia.com/gpu: "1"}}
YAML
created_at=$SECONDS
kubectl apply -f "$work/reader.yaml" >/dev/null
# The reader's one pod is Ready (none, or one not Ready, fails).
pod_ready() {
  [[ $(kubectl get pods -n models -l app=reader -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{end}') == "True " ]]
}
reader_pod() { kubectl get pods -n models -l app=reader -o jsonpath='{.items[0].metadata.name}'; }
wait_for 180 "the reader's pod Ready" pod_ready
reader=$(reader_pod)
pass "pod $reader Ready $((SECONDS - created_at)) s after its Deployment was created, on $(kubectl get pod "$reader" -n models -o jsonpath='{.spec.nodeName}')"
kubectl get pod "$reader" -n models -o json | python3 -c '
import json, sys
pod = json.load(sys.stdin)
spec = pod["spec"]
assert spec["schedulerName"] == "modelplane-scheduler", spec["schedulerName"]
assert {"conditionType": "modelplane.io/weights-ready"} in spec["readinessGates"]
volume = [v for v in spec["volumes"] if v["name"] == "modelplane-weights"][0]
assert volume["csi"]["driver"] == "csi.modelplane.io" and volume["csi"]["readOnly"], volume
assert not spec.get("schedulingGates"), spec.get("schedulingGates")
weights = [c for c in pod["status"]["conditions"] if c["type"] == "modelplane.io/weights-ready"][0]
assert weights["status"] == "True", weights
' || fail "the webhook's injection or the gates are not what the pod shows"
pass "the webhook injected scheduler, gates and the csi.modelplane.io volume; the operator ungated it; weights-ready True"
check_sums() {
  python3 - "$work/tiny-r1.yaml" "$1" <<'PY'
import re, sys
manifest = open(sys.argv[1]).read()
want = {p: s for p, s in re.findall(r'path: "([^"]+)"\n\s+size: \d+\n\s+sha256: "sha256:([0-9a-f]{64})"', manifest)}
got = {}
for line in open(sys.argv[2]):
    parts = line.split()
    if len(parts) == 2 and len(parts[0]) == 64:
        got[parts[1].removeprefix("./")] = parts[0]
assert want and got == want, (sorted(want), sorted(got))
print(len(got))
PY
}
kubectl logs -n models "$reader" >"$work/reader.log"
files=$(check_sums "$work/reader.log") || { cat "$work/reader.log"; fail "the container's sha256 of the files differs from the manifest"; }
grep -q 'Read-only file system' "$work/reader.log" && grep -q write-refused "$work/reader.log" ||
  { cat "$work/reader.log"; fail "a write into the volume did not fail with EROFS"; }
pass "the container read all $files files byte-exact (sha256 inside the container) and its write failed: Read-only file system"
r1_digest=$(kubectl get modelrevision tiny-r1 -n models -o jsonpath='{.status.digest}')
grep -qx "revision-digest=$r1_digest" "$work/reader.log" ||
  { grep revision-digest "$work/reader.log"; fail "the container's MODELPLANE_REVISION_DIGEST is not tiny-r1's digest $r1_digest"; }
pass "the container was handed its weights' digest: MODELPLANE_REVISION_DIGEST=${r1_digest:0:19}... (downward API from the pod's annotation)"
kubectl logs -n "$namespace" "$agent_pod" | grep 'csi_volume_published' | grep -q "pod=models/$reader" ||
  fail "the agent logged no publish for models/$reader"
pass "kubelet called NodePublishVolume with the pod's info (agent: csi_volume_published pod=models/$reader)"

# agent_replaced HOW: after HOW (a command that makes the DaemonSet replace the agent pod) a new
# agent comes up while the reader's pod keeps its volume: the mount stays readable byte-exact, the new
# agent rebuilds the lease, kubelet registers it again, the pod never leaves Ready and nothing is
# evicted.
agent_replaced() {
  local old new not_ready_seen=0 deadline=$((SECONDS + 120))
  old=$(agent_pod)
  # Watched while it runs: helm upgrade --wait returns only once the rollout is done.
  "$@" >/dev/null &
  local how=$!
  until new=$(agent_pod) && [[ -n $new && $new != "$old" ]]; do
    pod_ready || not_ready_seen=1
    ((SECONDS < deadline)) || fail "the DaemonSet did not bring a new agent up"
    sleep 0.5
  done
  wait "$how" || fail "'$*' failed"
  ((not_ready_seen == 0)) || fail "pod $reader went not Ready while the agent was replaced"
  kubectl exec -n models "$reader" -- sh -c 'cd /models/tiny-r1 && find . -type f | sort | xargs sha256sum' >"$work/reader-after.log"
  check_sums "$work/reader-after.log" >/dev/null || fail "the mount is not readable byte-exact after the agent was replaced"
  kubectl logs -n "$namespace" "$new" | grep 'csi_leases_recovered' | grep -q 'kept=1' ||
    fail "the new agent did not rebuild the lease ($(kubectl logs -n "$namespace" "$new" | grep csi_leases_recovered))"
  kubectl logs -n "$namespace" "$new" | grep -Eq 'revision_evicted|revision_purged' &&
    fail "the new agent evicted something"
  wait_for 60 "kubelet to register the new agent" csinode_driver
  pod_ready || fail "pod $reader is not Ready after the agent was replaced"
  local digest
  digest=$(kubectl get modelrevision tiny-r1 -n models -o jsonpath='{.status.digest}')
  [[ $(kubectl get modelcache "$MODELPLANE_NODE" -o jsonpath="{.status.revisions[?(@.digest=='$digest')].state}") == Ready ]] ||
    fail "tiny-r1 is no longer Ready in $MODELPLANE_NODE's ModelCache"
  agent_pod=$new
  pass "new agent $new: the mount stayed readable byte-exact, the lease was rebuilt (kept=1), the pod stayed Ready, nothing evicted"
}

say "The agent pod killed while the volume is mounted"
agent_replaced kubectl delete pod -n "$namespace" "$agent_pod" --wait=false

say "helm upgrade rolls the agent DaemonSet while the volume is mounted"
agent_replaced helm upgrade "$release" charts/modelplane -n "$namespace" -f "$work/values.yaml" \
  --set log.level=debug --wait --timeout 3m

# unpublished UID: kubelet unmounted the pod's volume, the agent logged the unpublish and no
# lease record is left.
unpublished() {
  grep -q "/var/lib/kubelet/pods/$1/" /proc/self/mountinfo && fail "pod $1's volume is still mounted"
  kubectl logs -n "$namespace" "$agent_pod" | grep 'csi_volume_unpublished' | grep -q "$1" ||
    fail "the agent logged no unpublish for pod $1"
  local leases
  leases=$(find /var/lib/modelplane/cache/csi/volumes -type f 2>/dev/null | wc -l)
  ((leases == 0)) || fail "$leases lease records left after pod $1 went"
}

say "kubectl drain of the real node"
uid=$(kubectl get pod "$reader" -n models -o jsonpath='{.metadata.uid}')
kubectl drain "$MODELPLANE_NODE" --ignore-daemonsets --delete-emptydir-data --timeout=120s >/dev/null ||
  fail "kubectl drain $MODELPLANE_NODE failed"
kubectl get pod "$reader" -n models >/dev/null 2>&1 && fail "pod $reader survived the drain"
unpublished "$uid"
[[ -n $(agent_pod) ]] || fail "the agent did not stay through the drain (a DaemonSet pod)"
kubectl uncordon "$MODELPLANE_NODE" >/dev/null
deployments_ready() {
  [[ $(kubectl get deployments -n "$namespace" -o jsonpath='{range .items[*]}{.status.readyReplicas}{" "}{end}') == "1 1 1 " ]]
}
wait_for 180 "the release's Deployments back after uncordon" deployments_ready
wait_for 180 "the reader's new pod Ready" pod_ready
reader=$(reader_pod)
kubectl exec -n models "$reader" -- sh -c 'cd /models/tiny-r1 && find . -type f | sort | xargs sha256sum' >"$work/reader-after.log"
check_sums "$work/reader-after.log" >/dev/null || fail "the reader's new pod does not read the files byte-exact"
pass "drained: the reader's pod evicted, its volume unpublished and its lease gone, the agent stayed; uncordoned, the Deployments came back and the reader's new pod $reader reads its weights"

say "The reader scaled to zero: kubelet unpublishes the volume and the lease goes"
uid=$(kubectl get pod "$reader" -n models -o jsonpath='{.metadata.uid}')
kubectl scale deployment reader -n models --replicas=0 >/dev/null
reader_gone() { [[ -z $(kubectl get pods -n models -l app=reader -o name) ]]; }
wait_for 90 "the reader's pod to go" reader_gone
unpublished "$uid"
pass "volume unmounted, lease record gone"

say "helm uninstall leaves no mount, socket or lease behind"
helm uninstall "$release" -n "$namespace" --wait --timeout 120s >/dev/null
agents_gone() { [[ -z $(kubectl get pods -n "$namespace" -o name) ]]; }
wait_for 120 "the release's pods to go" agents_gone
for socket in /var/lib/kubelet/plugins/csi.modelplane.io/csi.sock \
  /var/lib/kubelet/plugins_registry/csi.modelplane.io-reg.sock; do
  [[ -e $socket ]] && fail "$socket is left behind"
done
grep -Eq '/var/lib/kubelet/pods/.*kubernetes.io~csi' /proc/self/mountinfo &&
  fail "a CSI mount is left behind"
csinode_driver && fail "CSINode still lists csi.modelplane.io"
pass "no CSI mount, no socket, no lease; kubelet deregistered the driver"

trap - EXIT
if ((keep)); then
  echo "kept: eval \"\$(e2e/cluster.sh env)\"; e2e/real-node.sh down takes it away"
else
  down >/dev/null 2>&1
fi
say "real node: all checks passed in $SECONDS s"
