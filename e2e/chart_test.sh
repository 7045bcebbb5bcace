#!/usr/bin/env bash
# Tests charts/modelplane: lint with the values schema (good and bad values), render and validate
# against the real API server (kubectl apply --dry-run=server), then a real helm install --wait
# and uninstall on the local control plane (e2e/cluster.sh, KWOK nodes).
#
#   e2e/chart_test.sh       brings a private cluster up, runs the checks, brings it down
#
# Environment: MODELPLANE_E2E_REUSE=1 runs against the cluster already up at
# MODELPLANE_E2E_STATE (and leaves it up). Each check prints PASS/FAIL; the last line is
# "N passed, N failed" and the exit status is non-zero on any failure.
set -Eeuo pipefail

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "${E2E_DIR}/.." && pwd)"
CLUSTER="${E2E_DIR}/cluster.sh"
CHART="${REPO_DIR}/charts/modelplane"
REUSE="${MODELPLANE_E2E_REUSE:-0}"
WORK="$(mktemp -d /tmp/modelplane-chart.XXXXXX)"
[[ "${REUSE}" == 1 ]] || export MODELPLANE_E2E_STATE="${WORK}/cluster"
NS="modelplane-chart-test"
RELEASE="mpchart"

PASSED=0
FAILED=0

finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ "${REUSE}" == 1 ]]; then
    helm uninstall "${RELEASE}" --namespace "${NS}" >/dev/null 2>&1 || true
    kubectl delete namespace "${NS}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  else
    "${CLUSTER}" down >/dev/null 2>&1 || true
  fi
  rm -rf "${WORK}"
  exit "${rc}"
}
trap finish EXIT
trap 'exit 130' INT TERM

# Under pipefail a reader that stops early (grep -q, head) can fail the pipeline with its
# writer's SIGPIPE; checks read whole outputs (here-strings, grep -c, sed -n 1p) instead.
check() {
  local name="$1" fn="$2" out="${WORK}/check.out" rc start=${SECONDS}
  set +e
  ( set -Eeuo pipefail; "${fn}" ) >"${out}" 2>&1
  rc=$?
  set -e
  if (( rc == 0 )); then
    PASSED=$((PASSED + 1)); echo "PASS ${name} ($((SECONDS - start))s)"
  else
    FAILED=$((FAILED + 1)); echo "FAIL ${name} ($((SECONDS - start))s)"
    sed 's/^/    | /' "${out}" | tail -n 40 >&2
  fi
}

wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    (( SECONDS < deadline )) || { echo "timed out: $*" >&2; return 1; }
    sleep 0.5
  done
}

server_version() {
  kubectl get --raw /version | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])'
}

# --- checks ---------------------------------------------------------------------------------

check_lint() {
  helm lint --strict "${CHART}"
  helm lint --strict "${CHART}" --set operator.enabled=false --set extender.enabled=false \
    --set scheduler.enabled=false --set nodeAgent.enabled=false --set rbac.create=false
}

# must_reject ARGS...: helm lint fails, naming the schema.
must_reject() {
  local out
  if out="$(helm lint --strict "${CHART}" "$@" 2>&1)"; then
    echo "accepted: $*"; return 1
  fi
  grep -q "at '/" <<<"${out}" || { echo "${out}"; echo "not a schema error: $*"; return 1; }
  echo "rejected $*: $(grep "at '/" <<<"${out}" | sed -n 1p)"
}

check_schema_rejects() {
  must_reject --set extender.port=70000
  must_reject --set operator.enabld=false
  must_reject --set log.level=verbose
  must_reject --set nodeAgent.cacheRoot=relative/path
  must_reject --set nodeAgent.csi.kubeletDir=relative/kubelet
  # The node-driver-registrar sidecar is gone (the agent registers itself): its old key fails loudly.
  must_reject --set nodeAgent.csi.registrar.image.tag=v1
  must_reject --set scheduler.extender.nodeCacheCapable=maybe
  must_reject --set scheduler.extender.prioritize=sometimes
  must_reject --set image.pullPolicy=Sometimes
  must_reject --set-string extender.replicas=two
  must_reject --set operator.webhook.url=http://127.0.0.1:9443
  must_reject --set operator.webhook.certificate.source=vault
  must_reject --set operator.webhook.volumeMode=nfs
  must_reject --set operator.kubernetes.qps=0
  must_reject --set 'sourcePolicy.sharedFilesystems[0].root=relative'
  must_reject --set 'sourcePolicy.objectStores[0].endpoint=http://minio:9000'
  must_reject --set 'sourcePolicy.httpOrigins[0].url=http://models.internal/' \
    --set 'sourcePolicy.httpOrigins[0].addresses[0]=models.internal'
  # A signer is a key or CAs with identities, never neither or a key with identities.
  must_reject --set 'sourcePolicy.signatures.signers[0].name=release'
  must_reject --set 'sourcePolicy.signatures.signers[0].name=release' \
    --set 'sourcePolicy.signatures.signers[0].publicKey=not a key'
  must_reject --set 'sourcePolicy.signatures.signers[0].name=release' \
    --set-file "sourcePolicy.signatures.signers[0].publicKey=${REPO_DIR}/tests/core/signing/fixtures/key-p256.pub.pem" \
    --set 'sourcePolicy.signatures.signers[0].identities[0]=release@corp.example'
}

# Peers over plain HTTP only with the test-only switch; the source policy reaches both configs.
check_render_guards() {
  local out
  local no_certs=(--set nodeAgent.peerCertificates.enabled=false)
  if out="$(helm template t "${CHART}" "${no_certs[@]}" --set nodeAgent.peerTokenSecret=k 2>&1)"; then
    echo "rendered plain-HTTP peers without insecurePlainHttpPeersForTesting"; return 1
  fi
  grep -q "plain HTTP" <<<"${out}" || { echo "${out}"; return 1; }
  helm template t "${CHART}" "${no_certs[@]}" --set nodeAgent.peerTokenSecret=k \
    --set nodeAgent.insecurePlainHttpPeersForTesting=true >/dev/null
  # By default, per-node certificates: mutual TLS, the CA's key in the operator's pod only.
  out="$(helm template t "${CHART}")"
  grep -q "certificateDirectory: /var/run/modelplane/peer-identity" <<<"${out}" || {
    echo "default peers do not use per-node certificates"; return 1; }
  # ... and peer scope: a node reads from peers only what its operator-signed ticket covers.
  grep -q "requireTickets: true" <<<"${out}" || {
    echo "default peers do not require the operator's tickets"; return 1; }
  # Rendered first, then searched: `helm template | grep -q` fails under pipefail whenever grep
  # stops reading before helm has written everything.
  out="$(helm template t "${CHART}" --set nodeAgent.peerCertificates.requireTickets=false)"
  grep -q "requireTickets: false" <<<"${out}" ||
    { echo "requireTickets=false did not reach the agents"; return 1; }
  if grep -q "plainHttp: true" <<<"${out}"; then echo "default peers over plain HTTP"; return 1; fi
  [[ $(grep -c "secretName: t-modelplane-peer-ca" <<<"${out}") == 2 ]] || {
    echo "the peer CA Secret is not mounted into exactly the operator and the agents"; return 1; }
  [[ $(grep -B1 -A3 "secretName: t-modelplane-peer-ca" <<<"${out}" | grep -c "key: tls.crt") == 1 ]] || {
    echo "the agents must get only the CA's certificate"; return 1; }
  if helm template t "${CHART}" --set nodeAgent.peerTlsSecret=s >/dev/null 2>&1; then
    echo "rendered a shared peer certificate and per-node certificates together"; return 1
  fi
  helm template t "${CHART}" "${no_certs[@]}" --set nodeAgent.peerTlsSecret=s >/dev/null
  out="$(helm template t "${CHART}" --set 'sourcePolicy.sharedFilesystems[0].root=/mnt/models')"
  [[ $(grep -c "root: /mnt/models" <<<"${out}") == 2 ]] || { echo "policy not in both configs"; return 1; }
  out="$(helm template t "${CHART}" --set 'sourcePolicy.objectStores[0].buckets[0]=models' \
    --set 'sourcePolicy.objectStores[0].endpoint=http://minio.modelplane:9000' \
    --set 'sourcePolicy.objectStores[0].addresses[0]=10.96.0.0/12')"
  [[ $(grep -c -- "- 10.96.0.0/12" <<<"${out}") == 2 ]] || { echo "addresses not in both configs"; return 1; }
  out="$(helm template t "${CHART}" --set 'sourcePolicy.signatures.required[0]=team-a' \
    --set 'sourcePolicy.signatures.signers[0].name=release' \
    --set-file "sourcePolicy.signatures.signers[0].publicKey=${REPO_DIR}/tests/core/signing/fixtures/key-p256.pub.pem")"
  [[ $(grep -c "BEGIN PUBLIC KEY" <<<"${out}") == 2 ]] || { echo "signers not in both configs"; return 1; }
  grep -q "kind: ValidatingWebhookConfiguration" <<<"${out}"
}

# render NAME ARGS...: helm template into WORK/NAME.yaml for the server's version.
render() {
  local name="$1"; shift
  helm template "${RELEASE}" "${CHART}" --namespace "${NS}" --include-crds \
    --kube-version "$(server_version)" "$@" >"${WORK}/${name}.yaml"
}

check_server_dry_run() {
  kubectl create namespace "${NS}" --dry-run=client -o yaml | kubectl apply -f -
  render defaults
  render no-operator --set operator.enabled=false
  render names --set scheduler.extender.nodeCacheCapable=false --set nodeAgent.ownCacheOnly=false
  render no-csi --set nodeAgent.csi.enabled=false
  # The operator may read Secrets only in the listed namespaces: a Role in each.
  render secret-namespaces --set 'operator.credentials.secretNamespaces={default}'
  grep -q "name: ${RELEASE}-modelplane-operator-credentials" "${WORK}/secret-namespaces.yaml" ||
    { echo "operator.credentials.secretNamespaces renders no Role"; return 1; }
  local kinds
  kinds="$(grep '^kind:' "${WORK}/defaults.yaml" | sort | uniq -c)"
  echo "${kinds}"
  for kind in CustomResourceDefinition DaemonSet Deployment Service ClusterRole Role \
      ValidatingAdmissionPolicy ServiceAccount ConfigMap; do
    grep -q "^kind: ${kind}$" "${WORK}/defaults.yaml" || { echo "no ${kind} rendered"; return 1; }
  done
  # Objects only: the agents' config still names the operator's Lease (modelplane-operator).
  ! grep -q "name: ${RELEASE}-modelplane-operator$" "${WORK}/no-operator.yaml" ||
    { echo "operator.enabled=false still renders the operator"; return 1; }
  # The operator's client rate limit reaches its config file, above the binary's 50 / 100.
  grep -qx '      qps: 200' <<<"$(grep -A2 '^    kubernetes:$' "${WORK}/defaults.yaml")" ||
    { echo "the operator's config does not carry operator.kubernetes.qps"; return 1; }
  # CSI on (the default): the CSIDriver and a privileged agent; off: neither.
  grep -q "^kind: CSIDriver$" "${WORK}/defaults.yaml" || { echo "no CSIDriver rendered"; return 1; }
  ! grep -qE "^kind: CSIDriver$|privileged: true|mountPropagation" "${WORK}/no-csi.yaml" ||
    { echo "nodeAgent.csi.enabled=false still renders CSI parts"; return 1; }
  # CRDs first, so the dry run of everything else sees them.
  kubectl apply --server-side -f "${REPO_DIR}/crds/"
  local f
  for f in defaults no-operator names no-csi secret-namespaces; do
    kubectl apply --dry-run=server -f "${WORK}/${f}.yaml" >/dev/null
    echo "server dry run of ${f}: ok"
  done
}

scheduler_config() {
  kubectl -n "${NS}" get configmap "${RELEASE}-modelplane-scheduler" \
    -o jsonpath='{.data.config\.yaml}'
}

# The second scheduler's config as kube-scheduler itself loads it: validated, its extender
# built, then written back out (--write-config-to exits there), with and without the prioritize
# verb. Rendered with extender.tls.enabled=false: the client certificate exists only in the pod.
check_scheduler_config_loads() {
  local verbs
  for verbs in true false; do
    helm template "${RELEASE}" "${CHART}" --namespace "${NS}" --show-only templates/scheduler.yaml \
      --set extender.tls.enabled=false --set scheduler.extender.prioritize="${verbs}" \
      >"${WORK}/scheduler-${verbs}.yaml"
    kubectl create --dry-run=client -f "${WORK}/scheduler-${verbs}.yaml" \
      -o jsonpath='{.data.config\.yaml}' >"${WORK}/scheduler-config-${verbs}.yaml"
    echo "clientConnection: {kubeconfig: ${KUBECONFIG}}" >>"${WORK}/scheduler-config-${verbs}.yaml"
    kube-scheduler --config "${WORK}/scheduler-config-${verbs}.yaml" \
      --write-config-to "${WORK}/scheduler-loaded-${verbs}.yaml" >"${WORK}/scheduler-${verbs}.log" 2>&1 ||
      { cat "${WORK}/scheduler-${verbs}.log"; return 1; }
    local loaded
    loaded="$(cat "${WORK}/scheduler-loaded-${verbs}.yaml")"
    grep -q "filterVerb: filter" <<<"${loaded}"
    if [[ ${verbs} == true ]]; then
      grep -q "prioritizeVerb: prioritize" <<<"${loaded}"
    else
      ! grep -q "prioritizeVerb" <<<"${loaded}" || { echo "prioritize=false still calls it"; return 1; }
    fi
    echo "kube-scheduler loaded the chart's config, prioritize=${verbs}"
  done
}

check_install() {
  helm install "${RELEASE}" "${CHART}" --namespace "${NS}" --create-namespace --wait \
    --timeout 120s
  kubectl -n "${NS}" get deploy,ds,svc,sa,role,rolebinding,configmap -o wide
  local nodes ready
  nodes="$(kubectl get nodes -l type=kwok -o name | grep -c .)"
  ready="$(kubectl -n "${NS}" get ds "${RELEASE}-modelplane-node-agent" -o jsonpath='{.status.numberReady}')"
  echo "node agents ready: ${ready} of ${nodes} KWOK nodes"
  [[ "${ready}" == "${nodes}" ]]
  local d
  for d in operator extender scheduler; do
    [[ "$(kubectl -n "${NS}" get deploy "${RELEASE}-modelplane-${d}" -o jsonpath='{.status.readyReplicas}')" == 1 ]]
  done
  # The second scheduler calls this release's extender Service, at the Service's port.
  scheduler_config | grep -F "urlPrefix: \"https://${RELEASE}-modelplane-extender.${NS}.svc:8888/scheduler\""
  [[ "$(kubectl -n "${NS}" get svc "${RELEASE}-modelplane-extender" -o jsonpath='{.spec.ports[?(@.name=="extender")].port}')" == 8888 ]]
  # Agents know their node (downward API) and mount the cache root from the host.
  local pod
  pod="$(kubectl -n "${NS}" get pods -l app.kubernetes.io/component=node-agent -o name | sed -n 1p)"
  kubectl -n "${NS}" get "${pod}" -o jsonpath='{.spec.containers[0].env[?(@.name=="NODE_NAME")].valueFrom.fieldRef.fieldPath}' | grep -qx spec.nodeName
  kubectl -n "${NS}" get "${pod}" -o jsonpath='{.spec.volumes[?(@.name=="cache")].hostPath.path}' | grep -qx /var/lib/modelplane/cache
  # The CSI plugin: the driver object as kubelet reads it, the agent alone in its pod with
  # kubelet's plugins_registry mounted (it registers itself), and the pods folder shared both ways.
  [[ "$(kubectl get csidriver csi.modelplane.io -o jsonpath='{.spec.podInfoOnMount} {.spec.attachRequired} {.spec.volumeLifecycleModes[*]}')" == "true false Ephemeral" ]]
  [[ "$(kubectl -n "${NS}" get "${pod}" -o jsonpath='{.spec.containers[*].name}')" == node-agent ]]
  kubectl -n "${NS}" get "${pod}" -o jsonpath='{.spec.containers[0].volumeMounts[?(@.name=="csi-registration")].mountPath}' | grep -qx /var/lib/kubelet/plugins_registry
  kubectl -n "${NS}" get configmap "${RELEASE}-modelplane-node-agent" -o jsonpath='{.data.node-agent\.yaml}' |
    grep -q 'registrationSocketPath: /var/lib/kubelet/plugins_registry/csi.modelplane.io-reg.sock'
  kubectl -n "${NS}" get "${pod}" -o jsonpath='{.spec.containers[0].volumeMounts[?(@.name=="kubelet-pods")].mountPropagation}' | grep -qx Bidirectional
}

# can SA VERB RESOURCE [-n NS]: kubectl auth can-i as the component's ServiceAccount.
can() {
  local sa="$1"; shift
  echo "can ${sa} $*"
  kubectl auth can-i 2>/dev/null --as="system:serviceaccount:${NS}:${RELEASE}-modelplane-${sa}" "$@"
}
cannot() { ! can "$@"; }
# tenant_can VERB RESOURCE [-n NS]: the same as user tenant-a (bound to Kubernetes' edit role).
tenant_can() {
  echo "tenant-a can $*"
  kubectl auth can-i 2>/dev/null --as=tenant-a "$@"
}
tenant_cannot() { ! tenant_can "$@"; }

check_least_privilege() {
  can extender list modelrevisions.modelplane.io --all-namespaces
  can extender watch modelcaches.modelplane.io
  cannot extender update modelcaches.modelplane.io
  cannot extender list pods --all-namespaces
  cannot extender get secrets -n "${NS}"
  can operator patch modelrevisions.modelplane.io --subresource=status -n default
  can operator create modelcaches.modelplane.io
  cannot operator patch modelcaches.modelplane.io --subresource=status
  can operator create leases.coordination.k8s.io -n "${NS}"
  cannot operator create leases.coordination.k8s.io -n default
  # The credentials endpoint gets a Secret by name; it never lists or watches them.
  can operator get secrets -n default
  cannot operator list secrets --all-namespaces
  cannot operator watch secrets -n default
  can operator create tokenreviews.authentication.k8s.io
  cannot node-agent get secrets -n default
  # The agent reads the revisions its node needs by name and watches none (docs/architecture.md).
  can node-agent get modelrevisions.modelplane.io -n default
  cannot node-agent list modelrevisions.modelplane.io --all-namespaces
  cannot node-agent watch modelrevisions.modelplane.io --all-namespaces
  can operator watch deployments.apps --all-namespaces
  can operator list controllerrevisions.apps --all-namespaces
  cannot operator update deployments.apps -n default
  cannot operator update modelcaches.modelplane.io
  can operator get pods -n "${NS}"
  can node-agent patch modelcaches.modelplane.io --subresource=status
  can node-agent create modelcaches.modelplane.io
  cannot node-agent update modelcaches.modelplane.io
  can node-agent create events.events.k8s.io -n default
  cannot node-agent create events.events.k8s.io -n "${NS}"
  can node-agent patch pods --subresource=status -n default
  cannot node-agent delete pods -n default
  can node-agent get nodes
  cannot node-agent list nodes
  # The operator's Lease, read only: whether to keep waiting for a grant (docs/admission.md).
  can node-agent get leases.coordination.k8s.io/modelplane-operator -n "${NS}"
  cannot node-agent get leases.coordination.k8s.io/other -n "${NS}"
  cannot node-agent update leases.coordination.k8s.io/modelplane-operator -n "${NS}"
  can scheduler create bindings -n default
  can scheduler update leases.coordination.k8s.io/"${RELEASE}-modelplane-scheduler" -n "${NS}"
  cannot scheduler update leases.coordination.k8s.io/other -n "${NS}"
  cannot scheduler list modelcaches.modelplane.io
  can operator patch modelquotas.modelplane.io --subresource=status -n default
  cannot operator update modelquotas.modelplane.io -n default
  # Tenants, through Kubernetes' aggregated edit role bound in one namespace: revisions and
  # quotas of that namespace read, revisions written, quotas and caches not.
  kubectl create namespace quota-tenant --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl -n quota-tenant create rolebinding tenant-edit --clusterrole=edit --user=tenant-a \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  tenant_can create modelrevisions.modelplane.io -n quota-tenant
  tenant_can list modelquotas.modelplane.io -n quota-tenant
  tenant_cannot update modelquotas.modelplane.io -n quota-tenant
  tenant_cannot patch modelquotas.modelplane.io --subresource=status -n quota-tenant
  tenant_cannot list modelrevisions.modelplane.io -n default
  tenant_cannot list modelcaches.modelplane.io
  kubectl delete namespace quota-tenant --wait=false >/dev/null
}

# A token of the agent's ServiceAccount bound to one agent pod, as kubelet would mount it:
# kube-apiserver adds that pod's node to the user's extra info. Sets AGENT_NODE, OTHER_NODE (a
# node without that pod) and the as_agent function (kubectl with that token only).
bind_agent_token() {
  local pod server ca
  pod="$(kubectl -n "${NS}" get pods -l app.kubernetes.io/component=node-agent -o jsonpath='{.items[0].metadata.name}')"
  AGENT_NODE="$(kubectl -n "${NS}" get pod "${pod}" -o jsonpath='{.spec.nodeName}')"
  OTHER_NODE="$(kubectl get nodes -l type=kwok -o name | sed 's|node/||' | grep -vx "${AGENT_NODE}" | sed -n 1p)"
  AGENT_TOKEN="$(kubectl -n "${NS}" create token "${RELEASE}-modelplane-node-agent" \
    --bound-object-kind=Pod --bound-object-name="${pod}" --duration=10m)"
  server="$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')"
  ca="$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')"
  AGENT_SERVER=${server} AGENT_CA=${ca}
}
as_agent() {
  kubectl --kubeconfig=/dev/null --server="${AGENT_SERVER}" --certificate-authority="${AGENT_CA}" \
    --token="${AGENT_TOKEN}" "$@"
}

# api_patch TOKEN PATH BODY CONTENT_TYPE: PATCH as TOKEN, the way the agent does it (kubectl
# patch would GET the object first, which the agent's role does not grant). Fails on a non-2xx
# answer. Needs bind_agent_token's AGENT_SERVER and AGENT_CA.
api_patch() {
  local token=$1 path=$2 body=$3 type=$4 code
  code="$(curl -sS -o "${WORK}/patch.out" -w '%{http_code}' --cacert "${AGENT_CA}" \
    -H "Authorization: Bearer ${token}" -X PATCH -H "Content-Type: ${type}" --data "${body}" \
    "${AGENT_SERVER}${path}")"
  cat "${WORK}/patch.out"; echo
  [[ ${code} == 2* ]]
}
# cache_status_patch TOKEN NODE: sets the ModelCache's status.capacityBytes to 1.
cache_status_patch() {
  api_patch "$1" "/apis/modelplane.io/v1alpha1/modelcaches/$2/status" \
    '{"status":{"capacityBytes":1}}' application/merge-patch+json
}

check_own_cache_policy() {
  # The policy binds and its CEL compiles (the API server type-checks it on admission).
  kubectl get validatingadmissionpolicy "${RELEASE}-modelplane-node-agent-own-cache" \
    -o jsonpath='{.status.typeChecking}' ; echo
  [[ -z "$(kubectl get validatingadmissionpolicy "${RELEASE}-modelplane-node-agent-own-cache" \
      -o jsonpath='{.status.typeChecking.expressionWarnings}')" ]]
  bind_agent_token
  local node=${AGENT_NODE} other=${OTHER_NODE} out unbound
  # A write with a token of the agent's ServiceAccount bound to no pod (so to no node) is
  # denied by the policy.
  kubectl apply -f - <<'YAML'
apiVersion: modelplane.io/v1alpha1
kind: ModelCache
metadata: {name: gpu-node-0}
spec: {}
YAML
  unbound="$(kubectl -n "${NS}" create token "${RELEASE}-modelplane-node-agent" --duration=10m)"
  if out="$(cache_status_patch "${unbound}" gpu-node-0 2>&1)"; then
    echo "an agent without a node-bound token wrote a ModelCache: ${out}"
    kubectl delete modelcache gpu-node-0; return 1
  fi
  echo "${out}"
  grep -q "only write the ModelCache named after its own node" <<<"${out}"
  kubectl delete modelcache gpu-node-0

  # With a real token bound to an agent pod (kube-apiserver adds the pod's node to it), the
  # agent may create and write its own node's ModelCache and no other.
  kubectl delete modelcache "${node}" "${other}" --ignore-not-found
  # Not with entries of its own choosing: they decide which Secrets the operator hands it.
  if out="$(as_agent create -f - 2>&1 <<YAML
apiVersion: modelplane.io/v1alpha1
kind: ModelCache
metadata: {name: ${node}}
spec: {revisions: [{revision: {namespace: team-a, name: llama}, digest: "sha256:$(printf '%064d' 0)"}]}
YAML
  )"; then
    echo "the agent on ${node} created its ModelCache naming a revision"
    kubectl delete modelcache "${node}"; return 1
  fi
  echo "${out}"
  grep -q "may only create its ModelCache empty" <<<"${out}"
  as_agent create -f - <<YAML
apiVersion: modelplane.io/v1alpha1
kind: ModelCache
metadata: {name: ${node}}
spec: {}
YAML
  if out="$(as_agent create -f - 2>&1 <<YAML
apiVersion: modelplane.io/v1alpha1
kind: ModelCache
metadata: {name: ${other}}
spec: {}
YAML
  )"; then
    echo "the agent on ${node} created ${other}'s ModelCache"; return 1
  fi
  echo "${out}"
  grep -q "only write the ModelCache named after its own node" <<<"${out}"
  kubectl apply -f - <<YAML
apiVersion: modelplane.io/v1alpha1
kind: ModelCache
metadata: {name: ${other}}
spec: {}
YAML
  as_agent auth whoami -o jsonpath='{.status.userInfo.extra}'; echo
  cache_status_patch "${AGENT_TOKEN}" "${node}"
  [[ "$(kubectl get modelcache "${node}" -o jsonpath='{.status.capacityBytes}')" == 1 ]]
  if out="$(cache_status_patch "${AGENT_TOKEN}" "${other}" 2>&1)"; then
    echo "the agent on ${node} wrote ${other}'s ModelCache"; return 1
  fi
  echo "${out}"
  kubectl delete modelcache "${node}" "${other}" --ignore-not-found
  grep -q "only write the ModelCache named after its own node" <<<"${out}"
}

# The agent may set the weights-ready condition of pods on its own node, and nothing else in
# any pod's status. agent_patch_pod_status POD BODY: PATCH its status as the agent's token.
agent_patch_pod_status() {
  api_patch "${AGENT_TOKEN}" "/api/v1/namespaces/${NS}/pods/$1/status" "$2" \
    application/strategic-merge-patch+json
}

check_own_pods_policy() {
  [[ -z "$(kubectl get validatingadmissionpolicy "${RELEASE}-modelplane-node-agent-own-pods" \
      -o jsonpath='{.status.typeChecking.expressionWarnings}')" ]]
  bind_agent_token
  local n out ready='{"status":{"conditions":[{"type":"modelplane.io/weights-ready","status":"True","reason":"WeightsVerified"}]}}'
  for n in "${AGENT_NODE}" "${OTHER_NODE}"; do
    kubectl -n "${NS}" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata: {name: policy-${n}}
spec:
  nodeName: ${n}
  automountServiceAccountToken: false
  containers: [{name: server, image: example.com/vllm:1}]
YAML
  done
  agent_patch_pod_status "policy-${AGENT_NODE}" "${ready}"
  [[ "$(kubectl -n "${NS}" get pod "policy-${AGENT_NODE}" \
      -o jsonpath='{.status.conditions[?(@.type=="modelplane.io/weights-ready")].status}')" == True ]]
  local failures=0
  if out="$(agent_patch_pod_status "policy-${OTHER_NODE}" "${ready}" 2>&1)"; then
    echo "the agent on ${AGENT_NODE} wrote the status of a pod on ${OTHER_NODE}"; failures=1
  fi
  echo "${out}"
  grep -q "only write the status of pods on its own node" <<<"${out}" || failures=1
  if out="$(agent_patch_pod_status "policy-${AGENT_NODE}" '{"status":{"phase":"Failed"}}' 2>&1)"; then
    echo "the agent changed a pod's phase"; failures=1
  fi
  echo "${out}"
  grep -q "only change the pod condition modelplane.io/weights-ready" <<<"${out}" || failures=1
  kubectl -n "${NS}" delete pod "policy-${AGENT_NODE}" "policy-${OTHER_NODE}" --wait=false
  (( failures == 0 ))
}

# A pod's revision annotation is fixed at creation (the pod-revision policy): an edit that
# adds, changes or removes it is refused by the API server; other edits pass. The release's
# namespace is outside the mutating webhook's scope, so these pods are created as they are.
check_pod_revision_policy() {
  local name="${RELEASE}-modelplane-pod-revision" out failures=0
  [[ -z "$(kubectl get validatingadmissionpolicy "${name}" \
      -o jsonpath='{.status.typeChecking.expressionWarnings}')" ]]
  kubectl -n "${NS}" apply -f - <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: revision-fixed
  annotations: {modelplane.io/revision: llama-r1}
spec:
  automountServiceAccountToken: false
  containers: [{name: server, image: example.com/vllm:1}]
---
apiVersion: v1
kind: Pod
metadata: {name: revision-none}
spec:
  automountServiceAccountToken: false
  containers: [{name: server, image: example.com/vllm:1}]
YAML
  local edit
  for edit in "revision-fixed modelplane.io/revision=other-team/llama-r1 --overwrite" \
      "revision-fixed modelplane.io/revision-" \
      "revision-none modelplane.io/revision=llama-r1"; do
    # shellcheck disable=SC2086  # the edit's words are separate arguments
    if out="$(kubectl -n "${NS}" annotate pod ${edit} 2>&1)"; then
      echo "allowed: kubectl annotate pod ${edit}"; failures=1
    else
      grep -q "cannot be added, changed or removed after a pod is created" <<<"${out}" ||
        { echo "${out}"; failures=1; }
    fi
  done
  [[ "$(kubectl -n "${NS}" get pod revision-fixed \
      -o jsonpath='{.metadata.annotations.modelplane\.io/revision}')" == llama-r1 ]] || failures=1
  kubectl -n "${NS}" annotate pod revision-fixed example.com/owner=team-a || failures=1
  kubectl -n "${NS}" delete pod revision-fixed revision-none --wait=false
  (( failures == 0 ))
}

# The admission webhook as installed: its configuration trusts the CA of the generated Secret,
# whose certificate names the Service; an upgrade keeps the certificate (Helm's lookup).
check_webhook() {
  local name="${RELEASE}-modelplane-webhook" config crt
  config="$(kubectl get mutatingwebhookconfiguration "${name}" -o json)"
  python3 - "${config}" "${NS}" "${name}" <<'PY'
import json, sys
config, namespace, name = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
hook = config["webhooks"][0]
assert hook["failurePolicy"] == "Fail", hook["failurePolicy"]
assert hook["sideEffects"] == "None"
assert hook["clientConfig"]["service"] == {"name": name, "namespace": namespace,
                                           "path": "/mutate-pods", "port": 443}, hook["clientConfig"]
assert "'modelplane.io/revision' in object.metadata.annotations" in hook["matchConditions"][0]["expression"]
assert hook["rules"][0]["operations"] == ["CREATE"] and hook["rules"][0]["resources"] == ["pods"]
assert namespace in hook["namespaceSelector"]["matchExpressions"][0]["values"]
print("webhook configuration:", hook["clientConfig"]["service"], hook["matchConditions"][0]["name"])
PY
  kubectl get mutatingwebhookconfiguration "${name}" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' |
    base64 -d >"${WORK}/webhook-ca.crt"
  kubectl -n "${NS}" get secret "${name}-tls" -o jsonpath='{.data.tls\.crt}' | base64 -d >"${WORK}/webhook.crt"
  openssl verify -CAfile "${WORK}/webhook-ca.crt" "${WORK}/webhook.crt"
  openssl x509 -in "${WORK}/webhook.crt" -noout -ext subjectAltName | grep -F "DNS:${name}.${NS}.svc"
  # The operator mounts it and serves the webhook port the Service targets.
  kubectl -n "${NS}" get deploy "${RELEASE}-modelplane-operator" \
    -o jsonpath='{.spec.template.spec.volumes[?(@.name=="webhook-tls")].secret.secretName}' | grep -qx "${name}-tls"
  grep -A3 "^webhook:" <<<"$(kubectl -n "${NS}" get configmap "${RELEASE}-modelplane-operator" \
    -o jsonpath='{.data.operator\.yaml}')" | grep -c "enabled: true" >/dev/null
  crt="$(sha256sum <"${WORK}/webhook.crt")"
  helm upgrade "${RELEASE}" "${CHART}" --namespace "${NS}" --reuse-values --wait --timeout 60s >/dev/null
  [[ "$(kubectl -n "${NS}" get secret "${name}-tls" -o jsonpath='{.data.tls\.crt}' | base64 -d | sha256sum)" == "${crt}" ]] ||
    { echo "helm upgrade replaced the webhook certificate"; return 1; }
  echo "helm upgrade kept the certificate"
}

# The scheduler-extender link as installed: mutual TLS from one CA (the extender's serving
# certificate names its Service; the scheduler's client certificate carries the one common name
# the extender accepts), the scheduler configured for HTTPS with that client certificate, the
# verbs on the pod's own address, and a NetworkPolicy that admits only the scheduler's pods.
check_extender_tls() {
  local extender="${RELEASE}-modelplane-extender" scheduler="${RELEASE}-modelplane-scheduler"
  kubectl -n "${NS}" get secret "${extender}-tls" -o jsonpath='{.data.ca\.crt}' | base64 -d >"${WORK}/extender-ca.crt"
  kubectl -n "${NS}" get secret "${extender}-tls" -o jsonpath='{.data.tls\.crt}' | base64 -d >"${WORK}/extender.crt"
  kubectl -n "${NS}" get secret "${scheduler}-extender-client" -o jsonpath='{.data.tls\.crt}' | base64 -d >"${WORK}/scheduler-client.crt"
  openssl verify -CAfile "${WORK}/extender-ca.crt" "${WORK}/extender.crt" "${WORK}/scheduler-client.crt"
  openssl x509 -in "${WORK}/extender.crt" -noout -ext subjectAltName | grep -F "DNS:${extender}.${NS}.svc"
  openssl x509 -in "${WORK}/scheduler-client.crt" -noout -subject -nameopt RFC2253 | grep -qx "subject=CN=${scheduler}"
  grep -q "enableHTTPS: true" <<<"$(scheduler_config)"
  grep -q "caFile: /etc/kubernetes/modelplane-scheduler-tls/ca.crt" <<<"$(scheduler_config)"
  kubectl -n "${NS}" get deploy "${scheduler}" \
    -o jsonpath='{.spec.template.spec.volumes[?(@.name=="extender-client")].secret.secretName}' | grep -qx "${scheduler}-extender-client"
  local config
  config="$(kubectl -n "${NS}" get configmap "${extender}" -o jsonpath='{.data.extender\.yaml}')"
  # toYaml sorts keys: each check is one line of the server section.
  grep -qx '  address: ""' <<<"${config}"
  grep -qx '  bodyLimit: 1Mi' <<<"${config}"
  grep -qx '  maxConcurrentBodies: 8' <<<"${config}"
  grep -qx '    clientCAFile: /etc/modelplane/tls/ca.crt' <<<"${config}"
  grep -qx "    - ${scheduler}" <<<"$(grep -A1 -x '    clientNames:' <<<"${config}")"
  echo "extender server config: pod address, 1Mi bodies, 8 at once, client CN ${scheduler}"
  kubectl -n "${NS}" get deploy "${extender}" \
    -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="POD_IP")].valueFrom.fieldRef.fieldPath}' | grep -qx status.podIP
  local policy
  policy="$(kubectl -n "${NS}" get networkpolicy "${extender}" -o json)"
  python3 - "${policy}" <<'PY'
import json, sys
spec = json.loads(sys.argv[1])["spec"]
verbs, admin = spec["ingress"]
assert verbs["ports"] == [{"port": "extender", "protocol": "TCP"}], verbs
assert verbs["from"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "scheduler", verbs
assert admin == {"ports": [{"port": "admin", "protocol": "TCP"}]}, admin
print("extender NetworkPolicy: verbs from the scheduler only; admin port open")
PY
  local crt
  crt="$(sha256sum <"${WORK}/scheduler-client.crt")"
  helm upgrade "${RELEASE}" "${CHART}" --namespace "${NS}" --reuse-values --wait --timeout 60s >/dev/null
  [[ "$(kubectl -n "${NS}" get secret "${scheduler}-extender-client" -o jsonpath='{.data.tls\.crt}' | base64 -d | sha256sum)" == "${crt}" ]] ||
    { echo "helm upgrade replaced the scheduler's client certificate"; return 1; }
  # Off: plain HTTP, no Secrets, no tlsConfig.
  render no-tls --set extender.tls.enabled=false
  grep -qF "urlPrefix: \"http://${extender}.${NS}.svc:8888/scheduler\"" "${WORK}/no-tls.yaml"
  ! grep -qE "tlsConfig|extender-client|${extender}-tls" "${WORK}/no-tls.yaml" ||
    { echo "extender.tls.enabled=false still renders TLS parts"; return 1; }
}

# The operator's ports: credentials on a listener of their own that only the release's node
# agents may reach (so no other pod can fill it with bad tokens), the webhook and admin ports
# open, the agents' credentials URL on the Service port of that listener.
check_operator_network_policy() {
  local operator="${RELEASE}-modelplane-operator" policy
  policy="$(kubectl -n "${NS}" get networkpolicy "${operator}" -o json)"
  python3 - "${policy}" <<'PY'
import json, sys
spec = json.loads(sys.argv[1])["spec"]
rules = {rule["ports"][0]["port"]: rule.get("from") for rule in spec["ingress"]}
assert set(rules) == {"admin", "webhook", "credentials"}, rules
assert rules["admin"] is None and rules["webhook"] is None, rules
(agents,) = rules["credentials"]
assert agents["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "node-agent", agents
print("operator NetworkPolicy: credentials from the node agents only; webhook and admin open")
PY
  # Each answer read whole before it is searched (grep -q in a pipe fails under pipefail when it
  # stops reading first).
  local config service agents
  config="$(kubectl -n "${NS}" get configmap "${operator}" -o jsonpath='{.data.operator\.yaml}')"
  grep -qx '  port: 8445' <<<"${config}" ||
    { echo "the operator's credentials listener is not on 8445"; return 1; }
  service="$(kubectl -n "${NS}" get svc "${RELEASE}-modelplane-webhook" \
    -o jsonpath='{.spec.ports[?(@.name=="credentials")].port}')"
  [[ ${service} == 8445 ]] || { echo "the webhook Service has no credentials port"; return 1; }
  agents="$(kubectl -n "${NS}" get configmap "${RELEASE}-modelplane-node-agent" -o yaml)"
  grep -qF "url: https://${RELEASE}-modelplane-webhook.${NS}.svc:8445" <<<"${agents}" ||
    { echo "the agents do not call the credentials port"; return 1; }
  # An operator outside the cluster (webhook.url): credentials stay on the webhook's port.
  render external-operator --set operator.webhook.url=https://operator.example:9443
  ! grep -q "8445" "${WORK}/external-operator.yaml" ||
    { echo "webhook.url still renders a credentials listener"; return 1; }
}

check_uninstall() {
  helm uninstall "${RELEASE}" --namespace "${NS}" --wait --timeout 60s
  [[ -z "$(kubectl get clusterrole,clusterrolebinding,validatingadmissionpolicy,mutatingwebhookconfiguration -o name | grep "${RELEASE}-modelplane" || true)" ]]
  [[ -z "$(kubectl -n "${NS}" get deploy,ds,svc,configmap -l app.kubernetes.io/instance="${RELEASE}" -o name)" ]]
}

# --- run ------------------------------------------------------------------------------------
if [[ "${REUSE}" != 1 ]]; then
  "${E2E_DIR}/tools.sh" build >/dev/null
  "${CLUSTER}" up >"${WORK}/up.log" 2>&1 || { cat "${WORK}/up.log"; exit 1; }
fi
eval "$("${CLUSTER}" env)"
check "helm lint --strict (defaults; every component off)" check_lint
check "values.schema.json rejects bad values" check_schema_rejects
check "plain-HTTP peers need the test-only switch; the source policy reaches both configs" check_render_guards
check "rendered manifests pass kubectl apply --dry-run=server" check_server_dry_run
check "kube-scheduler loads the chart's scheduler config (with and without prioritize)" check_scheduler_config_loads
check "helm install --wait: deployments and daemonset ready on KWOK" check_install
check "per-component RBAC is least privilege (kubectl auth can-i)" check_least_privilege
check "node agents may write only their own ModelCache (admission policy)" check_own_cache_policy
check "node agents may set only weights-ready, only on their node's pods" check_own_pods_policy
check "a pod's revision annotation cannot change after creation (admission policy)" check_pod_revision_policy
check "the admission webhook: configuration, certificate, kept on upgrade" check_webhook
check "scheduler to extender: mutual TLS, pod address, NetworkPolicy" check_extender_tls
check "the operator's ports: credentials from the node agents only" check_operator_network_policy
check "helm uninstall removes the release" check_uninstall
echo "${PASSED} passed, ${FAILED} failed"
(( FAILED == 0 ))
