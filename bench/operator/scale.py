#!/usr/bin/env python3
"""Creates N ModelRevisions as fast as the API server takes them and waits until the operator
has converged every one: status.observedGeneration == metadata.generation,
status.desiredNodes == spec.prestage.nodes, and that many ModelCaches list it in their spec.

Talks to the API server directly (the admin kubeconfig's client certificate), so neither
kubectl's client-side rate limit nor its start-up is in the numbers. Watches of the
ModelRevisions and the ModelCaches, opened before the first create, timestamp each change as it
arrives. Prints one JSON object: created_seconds (first create to last create answered), converged_seconds (first create to the
last revision converged), converged_p50/p90/p99_seconds (when that share had converged), and
the counts. Standard library only.

  scale.py --kubeconfig FILE --revisions 1000 --namespace models --endpoint URL --bucket B
"""

import argparse
import concurrent.futures
import http.client
import json
import random
import re
import ssl
import sys
import threading
import time
import urllib.parse

GROUP_PATH = "/apis/modelplane.io/v1alpha1"


def read_kubeconfig(path):
    """server, CA, client cert and key of e2e/cluster.sh's kubeconfig (one cluster, one user)."""
    text = open(path, encoding="utf-8").read()

    def field(name):
        match = re.search(r"^\s*" + re.escape(name) + r":\s*(\S+)\s*$", text, re.M)
        if not match:
            raise SystemExit(f"{path}: no {name}")
        return match.group(1)

    return {
        "server": field("server"),
        "ca": field("certificate-authority"),
        "cert": field("client-certificate"),
        "key": field("client-key"),
    }


class Api:
    def __init__(self, config):
        url = urllib.parse.urlparse(config["server"])
        self.host, self.port = url.hostname, url.port or 443
        self.context = ssl.create_default_context(cafile=config["ca"])
        self.context.load_cert_chain(config["cert"], config["key"])
        self.local = threading.local()

    def connect(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                           timeout=timeout)

    def request(self, method, path, body=None, content_type="application/json"):
        """One request on this thread's keep-alive connection; (status, parsed body)."""
        for attempt in range(3):
            connection = getattr(self.local, "connection", None)
            if connection is None:
                connection = self.local.connection = self.connect()
            try:
                payload = json.dumps(body).encode() if body is not None else None
                connection.request(method, path, body=payload,
                                   headers={"Content-Type": content_type,
                                            "Accept": "application/json"})
                response = connection.getresponse()
                data = response.read()
                return response.status, json.loads(data) if data else {}
            except (http.client.HTTPException, OSError):
                self.local.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def sha256(rng):
    return "sha256:" + "".join(rng.choice("0123456789abcdef") for _ in range(64))


def revision(index, namespace, endpoint, bucket, rng):
    shards = 1 + index % 3
    files = [
        {"path": "config.json", "size": rng.randint(500, 4000), "sha256": sha256(rng),
         "role": "config"},
        {"path": "tokenizer.json", "size": rng.randint(1 << 20, 12 << 20), "sha256": sha256(rng),
         "role": "tokenizer"},
    ]
    for shard in range(shards):
        files.append({"path": f"model-{shard + 1:05d}-of-{shards:05d}.safetensors",
                      "size": rng.randint(1 << 30, 5 << 30), "sha256": sha256(rng),
                      "role": "weights"})
    return {
        "apiVersion": "modelplane.io/v1alpha1",
        "kind": "ModelRevision",
        "metadata": {"name": f"scale-{index:05d}", "namespace": namespace,
                     "labels": {"modelplane.io/bench": "operator-scale"}},
        "spec": {
            "modelName": f"bench/model-{index // 4}",
            "repositoryRevision": f"r{index % 4}",
            "format": "safetensors",
            "engine": {"name": "vllm", "version": "0.11.0"},
            "sources": [{"name": "s3", "type": "objectStore",
                         "objectStore": {"endpoint": endpoint, "bucket": bucket,
                                         "prefix": f"scale/{index:05d}/",
                                         "region": "us-east-1"}}],
            "files": files,
            # 2 or 3 nodes each: the operator places every one.
            "prestage": {"nodes": 2 + index % 2},
        },
    }


def revision_done(obj):
    """The operator's status of the revision is up to date and has placed every copy."""
    status = obj.get("status") or {}
    return (status.get("observedGeneration") == obj["metadata"].get("generation")
            and status.get("desiredNodes", 0) == wanted_nodes(obj))


def wanted_nodes(obj):
    return ((obj.get("spec") or {}).get("prestage") or {}).get("nodes", 0)


class Convergence:
    """When each revision last became converged: its status done (revision_done) and as many
    ModelCaches listing it in spec.revisions as it wants copies, so that a status written before
    the entries land does not count."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.lock = threading.Condition()
        self.error = None
        self.events = 0
        self.status_done = {}    # name -> revision_done
        self.wanted = {}         # name -> spec.prestage.nodes
        self.cache_lists = {}    # cache name -> names of the namespace's revisions it lists
        self.listed = {}         # name -> how many caches list it
        self.state = {}          # name -> converged now
        self.converged_at = {}   # name -> monotonic time it last became converged

    def settle(self, name, now):
        done = (self.status_done.get(name, False)
                and self.listed.get(name, 0) == self.wanted.get(name, -1))
        if done and not self.state.get(name):
            self.converged_at[name] = now
        self.state[name] = done

    def revision_event(self, kind, obj, now):
        name = obj["metadata"]["name"]
        with self.lock:
            self.events += 1
            if kind == "DELETED":
                for table in (self.status_done, self.wanted, self.state):
                    table.pop(name, None)
            else:
                self.status_done[name] = revision_done(obj)
                self.wanted[name] = wanted_nodes(obj)
                self.settle(name, now)
            self.lock.notify_all()

    def cache_event(self, kind, obj, now):
        cache = obj["metadata"]["name"]
        names = set()
        if kind != "DELETED":
            for entry in (obj.get("spec") or {}).get("revisions") or []:
                revision = entry.get("revision") or {}
                if revision.get("namespace") == self.namespace and revision.get("name"):
                    names.add(revision["name"])
        with self.lock:
            self.events += 1
            before = self.cache_lists.get(cache, set())
            self.cache_lists[cache] = names
            for name in before - names:
                self.listed[name] = self.listed.get(name, 0) - 1
            for name in names - before:
                self.listed[name] = self.listed.get(name, 0) + 1
            for name in before ^ names:
                if name in self.wanted:
                    self.settle(name, now)
            self.lock.notify_all()

    def fail(self, error):
        with self.lock:
            self.error = error
            self.lock.notify_all()

    def wait(self, count, deadline):
        with self.lock:
            while True:
                if self.error:
                    raise self.error
                done = sum(1 for value in self.state.values() if value)
                if done >= count or time.monotonic() >= deadline:
                    return done
                self.lock.wait(timeout=1)


class Watch(threading.Thread):
    """Follows one resource from a resourceVersion on, handing each change to `on_event`."""

    def __init__(self, api, path, resource_version, on_event, on_error):
        super().__init__(daemon=True)
        self.api, self.path, self.resource_version = api, path, resource_version
        self.on_event, self.on_error = on_event, on_error

    def run(self):
        try:
            while True:
                connection = self.api.connect(timeout=900)
                path = (f"{self.path}?watch=1&resourceVersion={self.resource_version}"
                        "&timeoutSeconds=900&allowWatchBookmarks=true")
                connection.request("GET", path, headers={"Accept": "application/json"})
                response = connection.getresponse()
                if response.status != 200:
                    raise RuntimeError(f"watch: HTTP {response.status} {response.read()[:200]}")
                for line in response:
                    self.apply(json.loads(line))
                connection.close()  # the server ended the watch: resume from the last version
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            self.on_error(error)

    def apply(self, event):
        now = time.monotonic()
        obj = event["object"]
        if event["type"] == "ERROR":
            raise RuntimeError(f"watch error: {obj}")
        self.resource_version = obj["metadata"]["resourceVersion"]
        if event["type"] != "BOOKMARK":
            self.on_event(event["type"], obj, now)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--revisions", type=int, default=1000)
    parser.add_argument("--namespace", default="models")
    parser.add_argument("--endpoint", required=True, help="the objectStore endpoint they name")
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--threads", type=int, default=8, help="creates in flight")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()

    api = Api(read_kubeconfig(args.kubeconfig))
    rng = random.Random(args.seed)
    bodies = [revision(i, args.namespace, args.endpoint, args.bucket, rng)
              for i in range(args.revisions)]
    base = f"{GROUP_PATH}/namespaces/{args.namespace}/modelrevisions"
    for _ in range(60):  # a CRD just applied answers 429 until its storage is ready
        status, listed = api.request("GET", base)
        if status != 429:
            break
        time.sleep(1)
    if status != 200:
        raise SystemExit(f"list: HTTP {status} {listed}")
    if listed.get("items"):
        raise SystemExit(f"{len(listed['items'])} ModelRevisions exist already in {args.namespace}")
    watch = Convergence(args.namespace)
    caches_path = f"{GROUP_PATH}/modelcaches"
    status, caches = api.request("GET", caches_path)
    if status != 200:
        raise SystemExit(f"list ModelCaches: HTTP {status} {caches}")
    for cache in caches.get("items") or []:
        watch.cache_event("ADDED", cache, time.monotonic())
    Watch(api, base, listed["metadata"]["resourceVersion"], watch.revision_event,
          watch.fail).start()
    Watch(api, caches_path, caches["metadata"]["resourceVersion"], watch.cache_event,
          watch.fail).start()

    started = time.monotonic()
    created_at = []
    failures = []

    def create(body):
        code, answer = api.request("POST", base, body)
        if code != 201:
            failures.append(f"{body['metadata']['name']}: HTTP {code} {answer.get('message')}")
        return time.monotonic()

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.threads) as pool:
        created_at = list(pool.map(create, bodies))
    created = time.monotonic()
    if failures:
        print("\n".join(failures[:10]), file=sys.stderr)
        raise SystemExit(f"{len(failures)} creates failed")
    print(f"created {args.revisions} ModelRevisions in {created - started:.1f} s",
          file=sys.stderr, flush=True)

    last_report = time.monotonic()
    deadline = started + args.timeout
    while True:
        done = watch.wait(args.revisions, min(deadline, time.monotonic() + 5))
        if done >= args.revisions or time.monotonic() >= deadline:
            break
        if time.monotonic() - last_report >= 5:
            print(f"  {done}/{args.revisions} converged after {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)
            last_report = time.monotonic()
    times = sorted(at - started for name, at in watch.converged_at.items() if watch.state.get(name))

    def share(fraction):
        index = max(0, int(fraction * args.revisions + 0.999999) - 1)
        return round(times[index], 2) if index < len(times) else None

    print(json.dumps({
        "revisions": args.revisions,
        "converged": done,
        "created_seconds": round(created - started, 2),
        "create_p50_seconds": round(sorted(t - started for t in created_at)[len(created_at) // 2], 2),
        "converged_p50_seconds": share(0.50),
        "converged_p90_seconds": share(0.90),
        "converged_p99_seconds": share(0.99),
        "converged_seconds": round(times[-1], 2) if done >= args.revisions else None,
        "watch_events": watch.events,
    }))
    return 0 if done >= args.revisions else 1


if __name__ == "__main__":
    sys.exit(main())
