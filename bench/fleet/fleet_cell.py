"""One cell of the fleet matrix: a tier and a number of replicas. A fresh checkpoint (its own
seed, so no cell finds another's bytes), a ModelRevision whose sources and prestaging make the
tier, then a Deployment of that many replicas carrying only the revision annotation, timed from
its apply until every pod is Ready through the weights-ready gate.

Tiers:
  cold      remote cold miss: the only copy is in the object store (the capped origin);
            admission and fan-out on, as shipped: one seeder per zone, the rest from peers
  sharedfs  shared-filesystem hit: the revision's only source is a shared filesystem
  local     node-local hit: prestaged on the replicas' nodes before the Deployment
  peer      peer hit: prestaged on one seed node per zone; replicas read from those peers
  fallback  the preferred origin goes down (connections cut mid-response) once a quarter of
            the model has come from it; the revision's second source is another origin
"""

import json
import math
import os
import statistics
import subprocess
import threading
import time
from datetime import datetime

from prometheus_client.parser import text_string_to_metric_families

from fleet_cluster import REPLICA_ROLE, ROLE_LABEL, ROOT, SEED_ROLE, kubectl, run, wait_until
from pod_watch import PodWatch

TIERS = ("cold", "sharedfs", "local", "peer", "fallback")
PYTHON = os.path.join(ROOT, ".venv/bin/python")
GENERATE = os.path.join(ROOT, "e2e/checkpoint/generate.py")


def percentile(values, fraction):
    """Nearest-rank percentile; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def metric_sums(text):
    """The agent metrics the matrix needs, summed over their labels (fetch bytes by tier)."""
    sums = {"fetch_bytes": {}, "fetch_errors": 0.0, "fetch_requests": 0.0, "peer_served": 0.0}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "modelplane_fetch_bytes_total":
                tier = sample.labels.get("tier", "")
                sums["fetch_bytes"][tier] = sums["fetch_bytes"].get(tier, 0.0) + sample.value
            elif sample.name == "modelplane_fetch_errors_total":
                sums["fetch_errors"] += sample.value
            elif sample.name == "modelplane_fetch_request_duration_seconds_count":
                sums["fetch_requests"] += sample.value
            elif sample.name == "modelplane_peer_bytes_served_total":
                sums["peer_served"] += sample.value
    return sums


def metric_delta(after, before):
    delta = {key: after[key] - before[key] for key in ("fetch_errors", "fetch_requests", "peer_served")}
    delta["fetch_bytes"] = {tier: value - before["fetch_bytes"].get(tier, 0.0)
                            for tier, value in after["fetch_bytes"].items()}
    return delta


class Cell:
    def __init__(self, fleet, tier, replicas, size, index, timeout_seconds):
        if tier not in TIERS:
            raise ValueError(f"unknown tier {tier}; known: {', '.join(TIERS)}")
        self.fleet = fleet
        self.tier = tier
        self.replicas = replicas
        self.size = size
        self.name = f"{tier}-{replicas}"
        self.seed = 1000 + index
        self.timeout = timeout_seconds
        self.folder = os.path.join(fleet.state, "cells", self.name)
        os.makedirs(self.folder, exist_ok=True)

    # --- the revision -----------------------------------------------------------------------
    def _checkpoint(self):
        if self.tier == "sharedfs":
            self.checkpoint = os.path.join(self.fleet.share, self.name)
            upload = []
        else:
            self.checkpoint = os.path.join(self.folder, "checkpoint")
            upload = ["--upload", f"s3://{os.environ['MODELPLANE_S3_BUCKET']}/fleet/{self.name}/"]
        common = ["--out", self.checkpoint, "--size", self.size, "--shards", "4", "--seed", str(self.seed)]
        run([PYTHON, GENERATE, *common, *upload])
        manifest = run([PYTHON, GENERATE, *common, "--modelrevision", self.name,
                        "--bucket", os.environ["MODELPLANE_S3_BUCKET"], "--prefix", f"fleet/{self.name}",
                        "--endpoint", self.fleet.primary.url])
        start, end = manifest.index("  sources:"), manifest.index("  files:")
        manifest = manifest[:start] + self._sources() + manifest[end:]
        self.model_bytes = sum(os.path.getsize(os.path.join(self.checkpoint, f))
                               for f in os.listdir(self.checkpoint))
        return manifest

    def _sources(self):
        def object_store(name, origin):
            return f"""  - name: {name}
    type: objectStore
    objectStore:
      endpoint: "{origin.url}"
      bucket: "{os.environ['MODELPLANE_S3_BUCKET']}"
      prefix: "fleet/{self.name}"
      region: us-east-1
"""
        if self.tier == "sharedfs":
            return f"""  sources:
  - name: share
    type: sharedFilesystem
    sharedFilesystem:
      path: "{self.checkpoint}"
"""
        sources = "  sources:\n" + object_store("primary", self.fleet.primary)
        if self.tier == "fallback":
            sources += object_store("secondary", self.fleet.fallback)
        return sources

    def _prestage(self, manifest):
        """local and peer: the revision goes to its nodes before the clock starts."""
        if self.tier == "local":
            nodes, role = self.replicas, REPLICA_ROLE
        elif self.tier == "peer":
            nodes, role = len(self.fleet.seeds), SEED_ROLE
        else:
            return manifest
        manifest += f"""  prestage:
    nodes: {nodes}
    nodeSelector:
      {ROLE_LABEL}: {role}
"""
        kubectl("apply", "-n", "fleet", "-f", "-", stdin=manifest)
        wait_until(self.timeout, f"{self.name} prestaged on {nodes} nodes",
                   lambda: kubectl("get", "modelrevision", self.name, "-n", "fleet", "-o",
                                   "jsonpath={.status.readyNodes}") == str(nodes))
        return manifest

    def _deployment(self):
        return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {self.name}, namespace: fleet}}
spec:
  replicas: {self.replicas}
  selector: {{matchLabels: {{app: {self.name}}}}}
  template:
    metadata:
      labels: {{app: {self.name}}}
      annotations: {{modelplane.io/revision: {self.name}}}
    spec:
      tolerations: [{{operator: Exists}}]
      nodeSelector: {{{ROLE_LABEL}: {REPLICA_ROLE}}}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {{matchLabels: {{app: {self.name}}}}}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: server
        image: vllm/vllm-openai:v0.11.0
"""

    # --- measuring --------------------------------------------------------------------------
    def _take_down_primary_after_a_quarter(self, stop):
        """fallback: the preferred origin dies once it has served a quarter of the model."""
        while not stop.is_set():
            if self.fleet.primary.stats()["bytes_served"] >= self.model_bytes // 4:
                self.fleet.primary.down()
                self.primary_down_at = time.monotonic()
                return
            time.sleep(0.2)

    def run(self):
        fleet = self.fleet
        fleet.start_agents()
        restarts_before = fleet.operator_restarts
        manifest = self._prestage(self._checkpoint())
        if self.tier not in ("local", "peer"):
            kubectl("apply", "-n", "fleet", "-f", "-", stdin=manifest)
        nodes = fleet.nodes
        before = {node: metric_sums(fleet.agent_metrics(node)) for node in nodes}
        for origin in (fleet.primary, fleet.fallback):
            origin.reset()
        for node in nodes:
            fleet.processes.reset_peak_memory(f"agent-{node}")
        # Reads come from the origin's disk or the share, not from pages the upload left.
        subprocess.run(["sync"])
        if os.geteuid() == 0:
            with open("/proc/sys/vm/drop_caches", "w") as handle:
                handle.write("3")
        watch = PodWatch("fleet", f"app={self.name}")
        stop = threading.Event()
        self.primary_down_at = None
        killer = None
        if self.tier == "fallback":
            killer = threading.Thread(target=self._take_down_primary_after_a_quarter, args=(stop,))
            killer.start()
        applied = time.monotonic()
        applied_wall = time.time()
        kubectl("apply", "-f", "-", stdin=self._deployment())
        deadline = applied + self.timeout
        while watch.ready_count() < self.replicas and time.monotonic() < deadline:
            time.sleep(0.2)
        finished = time.monotonic()
        stop.set()
        if killer:
            killer.join()
        time.sleep(1.5)  # the agents' last status and metric updates
        created, ready, placed = watch.snapshot()
        watch.stop()
        result = self._collect(before, created, ready, placed, applied, applied_wall, finished)
        result["operator_restarts"] = fleet.operator_restarts - restarts_before
        self._clean_up()
        return result

    def _collect(self, before, created, ready, placed, applied, applied_wall, finished):
        fleet = self.fleet
        after = {node: metric_sums(fleet.agent_metrics(node)) for node in fleet.nodes}
        deltas = [metric_delta(after[node], before[node]) for node in fleet.nodes]
        peaks = [fleet.processes.peak_memory_bytes(f"agent-{node}") for node in fleet.nodes]
        origin_bytes = sum(o.stats()["bytes_served"] for o in (fleet.primary, fleet.fallback))
        origin_refused = sum(o.stats()["requests_refused"] for o in (fleet.primary, fleet.fallback))
        digest = kubectl("get", "modelrevision", self.name, "-n", "fleet", "-o",
                         "jsonpath={.status.digest}")
        caches = json.loads(kubectl("get", "modelcaches", "-o", "json"))["items"]
        staged, failed = [], 0
        for cache in caches:
            for entry in (cache.get("status") or {}).get("revisions", []):
                if entry.get("digest") != digest:
                    continue
                if entry.get("state") == "Failed":
                    failed += 1
                stamps = entry.get("timestamps") or {}
                if stamps.get("queued") and stamps.get("published") and \
                        parse_time(stamps["queued"]) >= applied_wall - 1:
                    staged.append(parse_time(stamps["published"]) - parse_time(stamps["queued"]))
        to_ready = [ready[pod] - created[pod] for pod in ready if pod in created]
        fetched = {}
        for delta in deltas:
            for tier, value in delta["fetch_bytes"].items():
                fetched[tier] = fetched.get(tier, 0.0) + value
        backend = sum(fetched.values())
        requests = sum(d["fetch_requests"] for d in deltas)
        errors = sum(d["fetch_errors"] for d in deltas)
        needed = self.model_bytes * self.replicas
        row = {
            "tier": self.tier, "replicas": self.replicas, "model_bytes": self.model_bytes,
            "pods_ready": len(ready), "apply_to_all_ready_s": round(finished - applied, 2),
            "pod_to_ready_p50_s": percentile(to_ready, 0.50),
            "pod_to_ready_p95_s": percentile(to_ready, 0.95),
            "pod_to_ready_p99_s": percentile(to_ready, 0.99),
            "stagings": len(staged),
            "bytes_to_ready_p50_s": percentile(staged, 0.50),
            "bytes_to_ready_p95_s": percentile(staged, 0.95),
            "bytes_to_ready_p99_s": percentile(staged, 0.99),
            "read_amplification": backend / needed,
            "backend_bytes": int(backend),
            "origin_bytes": origin_bytes,
            "origin_copies": origin_bytes / self.model_bytes,
            "object_store_bytes": int(fetched.get("objectStore", 0)),
            "shared_filesystem_bytes": int(fetched.get("sharedFilesystem", 0)),
            "peer_bytes": int(fetched.get("peer", 0)),
            "peer_bytes_served": int(sum(d["peer_served"] for d in deltas)),
            "agent_memory_peak_max_bytes": max(peaks),
            "agent_memory_peak_p50_bytes": int(statistics.median(peaks)),
            "fetch_requests": int(requests), "fetch_errors": int(errors),
            "error_rate": errors / (requests + errors) if requests + errors else 0.0,
            "failed_stagings": failed, "origin_slowdowns": origin_refused,
            "primary_down_after_s": round(self.primary_down_at - applied, 2) if self.primary_down_at else None,
        }
        for key, value in row.items():
            if isinstance(value, float):
                row[key] = round(value, 3)
        return row

    def _clean_up(self):
        kubectl("delete", "deployment", self.name, "-n", "fleet", "--wait=true", "--timeout=120s")
        wait_until(120, f"{self.name}'s pods to go",
                   lambda: kubectl("get", "pods", "-n", "fleet", "-l", f"app={self.name}", "-o", "name") == "")
        kubectl("delete", "modelrevision", self.name, "-n", "fleet", "--wait=true", "--timeout=120s")
        if self.tier == "fallback":
            self.fleet.primary.up()
        subprocess.run(["rm", "-rf", self.checkpoint])
