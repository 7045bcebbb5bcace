"""When each pod of a workload was first seen and when it went Ready, timed on this host as the
API server's watch reports them (creationTimestamp and condition times have whole seconds only).

A pod counts as Ready when both its Ready condition and modelplane's readiness gate
(modelplane.io/weights-ready) are True."""

import json
import subprocess
import threading
import time

WEIGHTS_READY = "modelplane.io/weights-ready"


def is_ready(pod):
    conditions = {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions", [])}
    return conditions.get("Ready") == "True" and conditions.get(WEIGHTS_READY) == "True"


class PodWatch:
    """Follows `kubectl get pods --watch -o json` for a label selector in a thread."""

    def __init__(self, namespace, selector):
        self.lock = threading.Lock()
        self.created = {}   # pod name -> monotonic seconds when first seen
        self.ready = {}     # pod name -> monotonic seconds when first seen Ready
        self.node = {}      # pod name -> node it was bound to
        self.process = subprocess.Popen(
            ["kubectl", "get", "pods", "-n", namespace, "-l", selector, "--watch",
             "--output-watch-events", "-o", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self):
        decoder = json.JSONDecoder()
        buffer = ""
        for line in self.process.stdout:
            buffer += line
            stripped = buffer.lstrip()
            try:
                event, end = decoder.raw_decode(stripped)
            except json.JSONDecodeError:
                continue
            buffer = stripped[end:]
            now = time.monotonic()
            pod = event.get("object") or {}
            name = (pod.get("metadata") or {}).get("name")
            if not name or event.get("type") == "DELETED":
                continue
            with self.lock:
                self.created.setdefault(name, now)
                if (pod.get("spec") or {}).get("nodeName"):
                    self.node[name] = pod["spec"]["nodeName"]
                if is_ready(pod):
                    self.ready.setdefault(name, now)

    def ready_count(self):
        with self.lock:
            return len(self.ready)

    def snapshot(self):
        with self.lock:
            return dict(self.created), dict(self.ready), dict(self.node)

    def stop(self):
        self.process.terminate()
        self.process.wait()
        self.thread.join(timeout=5)
