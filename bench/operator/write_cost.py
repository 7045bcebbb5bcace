#!/usr/bin/env python3
"""What one write of a ModelCache's spec.revisions costs kube-apiserver, by how it is sent.

The operator writes each node's spec entries whole (an atomic list) with the resourceVersion it
read as precondition. This sends the same change (append or drop one entry) to every
ModelCache of a running cluster, once per method, and reads the CPU seconds kube-apiserver and
etcd used for each batch from /proc:

  apply   server-side apply (application/apply-patch+yaml), field manager and force as the
          operator sends it
  merge   JSON merge patch (application/merge-patch+json) of spec.revisions and
          metadata.resourceVersion
  update  PUT of the whole object, as a finalizer update is sent

Run it against a cluster whose writers are stopped (bench/operator/run.sh --keep leaves 500
ModelCaches with the operator's entries and no operator). Prints one JSON object per method per
round. Standard library only.

  write_cost.py --kubeconfig FILE --apiserver-pid PID --etcd-pid PID [--rounds 2] [--threads 4]
"""

import argparse
import concurrent.futures
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale import Api, read_kubeconfig  # noqa: E402  (this folder's own module)

CACHES = "/apis/modelplane.io/v1alpha1/modelcaches"
CONTENT_TYPES = {
    "apply": "application/apply-patch+yaml",
    "merge": "application/merge-patch+json",
    "update": "application/json",
}
MARK = {"revision": {"namespace": "write-cost", "name": "entry"}, "reason": "prestage",
        "pinned": False, "digest": "sha256:" + "0" * 64}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def toggled(entries):
    """spec.revisions with the bench's entry dropped if present, appended if not."""
    kept = [entry for entry in entries if entry.get("revision") != MARK["revision"]]
    return kept if len(kept) != len(entries) else entries + [MARK]


def write(api, method, cache):
    name = cache["metadata"]["name"]
    entries = toggled((cache.get("spec") or {}).get("revisions") or [])
    version = cache["metadata"]["resourceVersion"]
    if method == "apply":
        body = {"apiVersion": "modelplane.io/v1alpha1", "kind": "ModelCache",
                "metadata": {"name": name, "resourceVersion": version},
                "spec": {"revisions": entries}}
        return api.request("PATCH",
                           f"{CACHES}/{name}?fieldManager=modelplane-operator&force=true", body,
                           CONTENT_TYPES[method])
    if method == "merge":
        body = {"metadata": {"resourceVersion": version}, "spec": {"revisions": entries}}
        return api.request("PATCH", f"{CACHES}/{name}?fieldManager=modelplane-operator", body,
                           CONTENT_TYPES[method])
    body = dict(cache)
    body["spec"] = dict(cache.get("spec") or {}, revisions=entries)
    return api.request("PUT", f"{CACHES}/{name}?fieldManager=modelplane-operator", body,
                       CONTENT_TYPES[method])


def batch(api, method, threads, pids):
    status, listed = api.request("GET", CACHES)
    if status != 200:
        raise SystemExit(f"listing ModelCaches answered {status}")
    caches = listed["items"]
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        answers = list(pool.map(lambda cache: write(api, method, cache)[0], caches))
    elapsed = time.monotonic() - started
    used = {name: cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    failed = sum(1 for answer in answers if answer != 200)
    return {"method": method, "writes": len(caches), "failed": failed,
            "seconds": round(elapsed, 2),
            "apiserver_cpu_ms_per_write": round(1000 * used["apiserver"] / len(caches), 3),
            "etcd_cpu_ms_per_write": round(1000 * used["etcd"] / len(caches), 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--apiserver-pid", type=int, required=True)
    parser.add_argument("--etcd-pid", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    arguments = parser.parse_args()
    api = Api(read_kubeconfig(arguments.kubeconfig))
    pids = {"apiserver": arguments.apiserver_pid, "etcd": arguments.etcd_pid}
    # Each method writes every cache twice per round (append, then drop), so every round leaves
    # the caches as it found them; the order turns over between rounds.
    for round_index in range(arguments.rounds):
        methods = list(CONTENT_TYPES) if round_index % 2 == 0 else list(reversed(CONTENT_TYPES))
        for method in methods:
            for _ in range(2):
                row = batch(api, method, arguments.threads, pids)
                row["round"] = round_index + 1
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
