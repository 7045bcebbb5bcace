#!/usr/bin/env python3
"""The extender inside kube-scheduler's scheduling cycle, on a real control plane.

  cycle.py load --kubeconfig FILE --fleet DIR
      creates the fleet extender_fleet_objects wrote (ModelRevisions, then one ModelCache per
      node), each object's status written through its status subresource, as the operator and
      the agents would;
  cycle.py run --kubeconfig FILE --fleet DIR --pods N --profile NAME=SCHEDULER_METRICS_URL ...
      --extender-metrics URL
      for each profile in turn: creates N pods held by a scheduling gate, each naming a
      revision picked by the fleet's popularity, lifts the gates all at once, and waits until
      the scheduler bound every one; then deletes them. Scrapes the profile's scheduler and the
      extender before and after, and prints one JSON object per profile: pods per second from
      the first gate lifted to the last pod bound, and the mean and p50/p99 (histogram
      buckets) of the scheduling attempt, of each extension point of the cycle, and of the
      extender's filter and prioritize as it timed them.
      --unmanaged NAME=URL (repeatable) then runs a profile again with pods that name no
      revision: the extender answers them without a decision (every candidate passes, every
      score 0, the same answer sizes), so the scheduler's extra wait there is what calling any
      extender with that many candidates costs it, the floor under the managed profile's.
      --narrowed NAME=URL (repeatable) then runs a profile again with managed pods as the
      operator lets them go (operator/gating/gate_patch.h): the required node affinity
      narrowed to the nodes whose ModelCache holds the revision Ready, one term per node,
      `metadata.name In [node]`. kube-scheduler's NodeAffinity PreFilter turns such terms
      into the only nodes the cycle evaluates, so the extender is asked about those alone.
      --narrow-limits 100,0 runs each of them once per limit: at most that many nodes per
      pod, chosen as the operator's gate planner chooses them (kMaxNarrowedNodes in
      operator/gating/gate_planner.h: the nodes the fewest pods of the run are narrowed to,
      zones in turn, then by name); 0 narrows to every holder.

Talks to the API server with the admin kubeconfig's client certificate (bench/operator/scale.py).
"""

import argparse
import concurrent.futures
import json
import os
import random
import ssl
import sys
import threading
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "operator"))
from scale import Api, Watch, read_kubeconfig  # noqa: E402

GROUP_PATH = "/apis/modelplane.io/v1alpha1"
GATE = "modelplane.io/bench-cycle"
LABEL = "bench-cycle"
EMPTY = {"le": {}, "sum": 0.0, "count": 0.0}  # a histogram with no observations


def read_lines(path):
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def check(status, body, what, allowed=(200, 201)):
    if status not in allowed:
        raise SystemExit(f"{what}: HTTP {status} {json.dumps(body)[:300]}")


def create_with_status(api, collection, obj):
    """POST the object without its status, then its status through the subresource."""
    status = obj.pop("status", None)
    code, body = api.request("POST", collection, obj)
    if code == 409:  # a rerun with --keep: the object is there, its status is rewritten
        code = 200
    check(code, body, f"create {obj['metadata']['name']}")
    if status is not None:
        name = obj["metadata"]["name"]
        code, body = api.request("PATCH", f"{collection}/{name}/status", {"status": status},
                                 content_type="application/merge-patch+json")
        check(code, body, f"status of {name}")


def load(args):
    api = Api(read_kubeconfig(args.kubeconfig))
    revisions = read_lines(os.path.join(args.fleet, "revisions.jsonl"))
    caches = read_lines(os.path.join(args.fleet, "caches.jsonl"))
    for namespace in sorted({r["metadata"]["namespace"] for r in revisions}):
        code, body = api.request("POST", "/api/v1/namespaces",
                                 {"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": namespace}})
        check(code, body, f"namespace {namespace}", (201, 409))
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda r: create_with_status(
            api, f"{GROUP_PATH}/namespaces/{r['metadata']['namespace']}/modelrevisions", r),
            revisions))
        list(pool.map(lambda c: create_with_status(api, f"{GROUP_PATH}/modelcaches", c), caches))
    print(json.dumps({"revisions": len(revisions), "caches": len(caches),
                      "load_seconds": round(time.monotonic() - started, 1)}))


def scrape(url):
    """The text of a /metrics page; kube-scheduler's is HTTPS with its self-signed certificate."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with urllib.request.urlopen(url, timeout=30, context=context) as response:
        return response.read().decode()


def histograms(text, names, match):
    """{(name, labels...): {"le": {bound: count}, "sum": s, "count": n}} for the histograms
    named, keeping the samples whose labels `match` accepts, keyed by the labels it returns."""
    out = {}
    for family in text_string_to_metric_families(text):
        if family.name not in names:
            continue
        for sample in family.samples:
            key = match(family.name, sample.labels)
            if key is None:
                continue
            entry = out.setdefault(key, {"le": {}, "sum": 0.0, "count": 0.0})
            if sample.name.endswith("_bucket"):
                bound = float(sample.labels["le"])
                entry["le"][bound] = entry["le"].get(bound, 0.0) + sample.value
            elif sample.name.endswith("_sum"):
                entry["sum"] += sample.value
            elif sample.name.endswith("_count"):
                entry["count"] += sample.value
    return out


def delta(after, before):
    out = {}
    for key, entry in after.items():
        old = before.get(key, EMPTY)
        out[key] = {"le": {b: c - old["le"].get(b, 0.0) for b, c in entry["le"].items()},
                    "sum": entry["sum"] - old["sum"], "count": entry["count"] - old["count"]}
    return out


def quantile(entry, q):
    """Prometheus's histogram_quantile: linear within the bucket the rank falls in."""
    count = entry["count"]
    if count <= 0:
        return None
    rank = q * count
    lower, below = 0.0, 0.0
    for bound in sorted(entry["le"]):
        cumulative = entry["le"][bound]
        if cumulative >= rank:
            if bound == float("inf"):
                return lower
            inside = cumulative - below
            return lower + (bound - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = bound, cumulative
    return lower


def summary(entry):
    if entry["count"] <= 0:
        return None
    ms = lambda seconds: None if seconds is None else round(seconds * 1000, 3)  # noqa: E731
    return {"count": int(entry["count"]), "mean_ms": ms(entry["sum"] / entry["count"]),
            "p50_ms": ms(quantile(entry, 0.5)), "p99_ms": ms(quantile(entry, 0.99))}


SCHEDULER_HISTOGRAMS = {"scheduler_scheduling_attempt_duration_seconds",
                        "scheduler_scheduling_algorithm_duration_seconds",
                        "scheduler_framework_extension_point_duration_seconds"}
EXTENDER_HISTOGRAMS = {"modelplane_extender_request_duration_seconds"}


def scheduler_key(profile):
    def match(name, labels):
        if name == "scheduler_scheduling_algorithm_duration_seconds":
            # No profile label: the process's, which runs one profile's pods at a time.
            return ("algorithm",)
        if labels.get("profile") != profile:
            return None
        if name == "scheduler_scheduling_attempt_duration_seconds":
            return ("attempt", labels.get("result", ""))
        return ("extension_point", labels.get("extension_point", ""), labels.get("status", ""))
    return match


def extender_key(_, labels):
    return ("extender", labels.get("verb", ""))


class Pods:
    """Which bench pods the scheduler has bound, and when (a watch of the pods)."""

    def __init__(self):
        self.lock = threading.Condition()
        self.bound = {}
        self.error = None

    def event(self, kind, obj, now):
        name = obj["metadata"]["name"]
        if kind != "DELETED" and obj["spec"].get("nodeName"):
            with self.lock:
                self.bound.setdefault(name, now)
                self.lock.notify_all()

    def fail(self, error):
        with self.lock:
            self.error = error
            self.lock.notify_all()

    def wait(self, names, deadline):
        with self.lock:
            while True:
                if self.error:
                    raise SystemExit(f"pod watch failed: {self.error}")
                if all(name in self.bound for name in names):
                    return max(self.bound[name] for name in names)
                if time.monotonic() > deadline:
                    missing = [name for name in names if name not in self.bound]
                    raise SystemExit(f"{len(missing)} pods not bound in time, e.g. {missing[:3]}")
                self.lock.wait(timeout=1)


def ready_holders(fleet):
    """{(namespace, revision): [node, ...]}: the nodes whose ModelCache, itself Ready, lists
    the revision's digest Ready; what the operator's gate planner lets a pod go to."""
    by_digest = {r["status"]["digest"]: (r["metadata"]["namespace"], r["metadata"]["name"])
                 for r in read_lines(os.path.join(fleet, "revisions.jsonl"))}
    holders = {}
    for cache in read_lines(os.path.join(fleet, "caches.jsonl")):
        status = cache.get("status", {})
        if not any(c["type"] == "Ready" and c["status"] == "True"
                   for c in status.get("conditions", [])):
            continue
        for entry in status.get("revisions", []):
            if entry["state"] == "Ready" and entry["digest"] in by_digest:
                holders.setdefault(by_digest[entry["digest"]], []).append(
                    cache["metadata"]["name"])
    return holders


def zones_of_nodes(api):
    """{node: its topology.kubernetes.io/zone label}."""
    code, listed = api.request("GET", "/api/v1/nodes")
    check(code, listed, "list nodes")
    return {node["metadata"]["name"]:
            node["metadata"].get("labels", {}).get("topology.kubernetes.io/zone", "")
            for node in listed["items"]}


def choose_narrowing(holders, zones, narrowed_pods, limit):
    """The gate planner's choice (ChooseNarrowing in operator/gating/gate_planner.cc): at most
    LIMIT of HOLDERS (0: all), those the fewest pods are narrowed to (NARROWED_PODS, which it
    updates), zones in turn, then by name; sorted."""
    if not limit or len(holders) <= limit:
        chosen = sorted(holders)
    else:
        turns, keys = {}, []
        for node in sorted(holders):  # a node's turn counts the names before it in its group
            pods, zone = narrowed_pods.get(node, 0), zones.get(node, "")
            turn = turns.get((pods, zone), 0)
            turns[(pods, zone)] = turn + 1
            keys.append((pods, turn, zone, node))
        chosen = sorted(key[3] for key in sorted(keys)[:limit])
    for node in chosen:
        narrowed_pods[node] = narrowed_pods.get(node, 0) + 1
    return chosen


def pod(name, namespace, revision, profile, nodes=None):
    """A pod naming REVISION, or no revision when it is None; narrowed to NODES when given, as
    the operator's ungate patch narrows a pod without affinity of its own."""
    annotations = {"modelplane.io/revision": revision} if revision is not None else {}
    spec = {
        "schedulerName": profile,
        "schedulingGates": [{"name": GATE}],
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "serve", "image": "registry.invalid/serve:bench",
                        "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
    }
    if nodes is not None:
        terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                 for node in nodes]
        spec["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": LABEL},
                     "annotations": annotations},
        "spec": spec,
    }


def process_cpu_seconds(pid):
    """User plus system CPU time of a process, all its threads, so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # the name may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds():
    """(busy, total) CPU seconds of every CPU so far; iowait counts as idle."""
    with open("/proc/stat", encoding="ascii") as stat:
        ticks = [int(v) for v in stat.readline().split()[1:9]]
    idle = ticks[3] + ticks[4]
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / ticks_per_second, sum(ticks) / ticks_per_second


class CpuMeter:
    """CPU seconds of named processes and the machine's busy share between start and stop."""

    def __init__(self, processes):
        self.processes = processes  # {name: pid}

    def start(self):
        self.before = {name: process_cpu_seconds(pid) for name, pid in self.processes.items()}
        self.machine_before = machine_cpu_seconds()

    def stop(self, count):
        after = {name: process_cpu_seconds(pid) for name, pid in self.processes.items()}
        busy, total = (a - b for a, b in zip(machine_cpu_seconds(), self.machine_before))
        return {"cpu_ms_per_pod": {name: round(1000 * (after[name] - self.before[name]) / count, 2)
                                   for name in self.processes},
                "machine_busy": round(busy / total, 3) if total > 0 else None}


def run_profile(api, pods, profile, scheduler_url, extender_url, revisions, count, rng,
                cpu, managed=True, narrowing=None, pace=0.0):
    """One profile's run; NARROWING, (holders from ready_holders, zones, limit), narrows each
    managed pod; PACE > 0 lets one pod go every PACE seconds instead of all at once."""
    picks = rng.choices(revisions, weights=[r["weight"] for r in revisions], k=count)
    # Names differ between runs: the pod watch keeps the bind time of every name it has seen.
    kind = f"n{narrowing[2]}-" if narrowing is not None else "m" if managed else "u"
    names = [f"{profile}-{kind}{i}" for i in range(count)]
    scheduler_before = histograms(scrape(scheduler_url), SCHEDULER_HISTOGRAMS,
                                  scheduler_key(profile))
    extender_before = histograms(scrape(extender_url), EXTENDER_HISTOGRAMS, extender_key)
    narrowed = [None] * count
    if narrowing is not None:
        holders, zones, limit = narrowing
        narrowed_pods = {}  # per revision: every pod of the run is let go in one pass
        narrowed = [choose_narrowing(holders[(r["namespace"], r["name"])], zones,
                                     narrowed_pods.setdefault((r["namespace"], r["name"]), {}),
                                     limit) for r in picks]
    bodies = [pod(name, r["namespace"], r["name"] if managed else None, profile, nodes)
              for name, r, nodes in zip(names, picks, narrowed)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for (code, body), obj in zip(pool.map(
                lambda b: api.request("POST", f"/api/v1/namespaces/{b['metadata']['namespace']}/pods",
                                      b), bodies), bodies):
            check(code, body, f"create pod {obj['metadata']['name']}")
        # Every pod is queued behind its gate; lifting the gates all at once keeps the
        # scheduler's queue full, so pods per second is what the scheduler takes, not the
        # rate of creates. Paced, each pod meets a scheduler (and a machine) that is done
        # with the one before: the cycle's parts without the run's own contention.
        started = time.monotonic()
        cpu.start()

        def ungate(indexed):
            index, b = indexed
            if pace > 0:
                time.sleep(max(0.0, started + index * pace - time.monotonic()))
            return api.request("PATCH", f"/api/v1/namespaces/{b['metadata']['namespace']}/pods/"
                               f"{b['metadata']['name']}", {"spec": {"schedulingGates": None}},
                               content_type="application/merge-patch+json")
        for (code, body), obj in zip(pool.map(ungate, enumerate(bodies)), bodies):
            check(code, body, f"ungate pod {obj['metadata']['name']}")
    last_bound = pods.wait(names, time.monotonic() + 600)
    seconds = last_bound - started
    cpu_used = cpu.stop(count)  # to the last bind seen, give or take the watch's delay
    scheduler = delta(histograms(scrape(scheduler_url), SCHEDULER_HISTOGRAMS,
                                 scheduler_key(profile)), scheduler_before)
    extender = delta(histograms(scrape(extender_url), EXTENDER_HISTOGRAMS, extender_key),
                     extender_before)
    for namespace in sorted({b["metadata"]["namespace"] for b in bodies}):
        code, body = api.request("DELETE", f"/api/v1/namespaces/{namespace}/pods"
                                 f"?labelSelector=app%3D{LABEL}&gracePeriodSeconds=0")
        check(code, body, f"delete pods in {namespace}")
    result = {"profile": profile, "pods": count, "pods_name_a_revision": managed,
              "narrowed_to_ready_nodes": narrowing is not None,
              "narrow_limit": narrowing[2] if narrowing is not None else None,
              "narrowed_nodes_mean": (round(sum(map(len, narrowed)) / count, 1)
                                      if narrowing is not None else None),
              "pace_seconds": pace or None,
              "seconds": round(seconds, 3),
              "pods_per_second": round(count / seconds, 1) if seconds > 0 else None,
              "attempt": summary(scheduler.get(("attempt", "scheduled"), EMPTY)),
              "algorithm": summary(scheduler.get(("algorithm",), EMPTY)),
              "extension_points": {}, "extender": {}, **cpu_used}
    for key, entry in sorted(scheduler.items()):
        if key[0] == "extension_point" and key[2] == "Success" and summary(entry):
            result["extension_points"][key[1]] = summary(entry)
    for key, entry in sorted(extender.items()):
        if summary(entry):
            result["extender"][key[1]] = summary(entry)
    return result


def run(args):
    api = Api(read_kubeconfig(args.kubeconfig))
    revisions = [r for r in read_lines(os.path.join(args.fleet, "popularity.jsonl"))
                 if not r["revoked"]]  # a revoked one is placed nowhere: it would never bind
    pods = Pods()
    code, listed = api.request("GET", f"/api/v1/pods?labelSelector=app%3D{LABEL}&limit=1")
    check(code, listed, "list pods")
    Watch(api, f"/api/v1/pods", listed["metadata"]["resourceVersion"], pods.event,
          pods.fail).start()
    rng = random.Random(args.seed)
    cpu = CpuMeter(dict(entry.split("=", 1) for entry in args.process or []))
    runs = [(entry, True, None) for entry in args.profile]
    runs += [(entry, False, None) for entry in args.unmanaged or []]
    if args.narrowed:
        holders, zones = ready_holders(args.fleet), zones_of_nodes(api)
        for limit in (int(value) for value in args.narrow_limits.split(",")):
            runs += [(entry, True, (holders, zones, limit)) for entry in args.narrowed]
    for entry, managed, narrowing in runs:
        profile, url = entry.split("=", 1)
        result = run_profile(api, pods, profile, url, args.extender_metrics, revisions,
                             args.pods, rng, cpu, managed, narrowing, args.pace)
        print(json.dumps(result), flush=True)
        time.sleep(2)  # the deletes settle before the next profile's pods


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    load_parser = sub.add_parser("load")
    load_parser.add_argument("--kubeconfig", required=True)
    load_parser.add_argument("--fleet", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--kubeconfig", required=True)
    run_parser.add_argument("--fleet", required=True)
    run_parser.add_argument("--pods", type=int, default=200)
    run_parser.add_argument("--seed", type=int, default=7)
    run_parser.add_argument("--profile", action="append", default=[],
                            help="NAME=URL of the scheduler process's /metrics")
    run_parser.add_argument("--unmanaged", action="append",
                            help="NAME=URL: the profile again, with pods that name no revision")
    run_parser.add_argument("--narrowed", action="append",
                            help="NAME=URL: the profile again, with managed pods narrowed to "
                                 "the nodes holding their revision Ready, as the operator does")
    run_parser.add_argument("--narrow-limits", default="100",
                            help="comma-separated: run the --narrowed profiles once per limit "
                                 "on the nodes per pod (0: every holder)")
    run_parser.add_argument("--pace", type=float, default=0.0,
                            help="let one pod go every PACE seconds (default: all at once)")
    run_parser.add_argument("--extender-metrics", required=True)
    run_parser.add_argument("--process", action="append",
                            help="NAME=PID: a process whose CPU time per pod is recorded")
    args = parser.parse_args()
    (load if args.command == "load" else run)(args)


if __name__ == "__main__":
    main()
