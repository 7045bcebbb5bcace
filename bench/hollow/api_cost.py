#!/usr/bin/env python3
"""What a rollout cost kube-apiserver, per node and per second, from two scrapes of its own
/metrics (before the revision was created, after every node was Ready): requests by verb and
resource (watches counted as they start), watch events and their bytes by kind (everything sent
to every watcher), open watches at the end, and the CPU seconds and peak RSS given on the
command line. Prints one JSON object. Standard library only.

  api_cost.py --before A --after B --nodes N --seconds S [--cpu NAME=BEFORE:AFTER]...
              [--rss NAME=MB]... [--label L] [--size BYTES] [--files F] [--rate R]
"""

import argparse
import datetime
import json
import os
import re

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
OURS = {"modelcaches", "modelrevisions", "pods", "nodes", "leases", "events", "ModelCache",
        "ModelRevision", "Pod", "Node", "Lease", "Event"}


def samples(path):
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            continue
        match = LINE.match(line)
        if match:
            yield match.group(1), dict(LABEL.findall(match.group(2) or "")), float(match.group(3))


def totals(path):
    requests, events, event_bytes, watches = {}, {}, {}, {}
    for name, labels, value in samples(path):
        if name == "apiserver_request_total":
            resource = labels.get("resource", "")
            if labels.get("subresource"):
                resource += "/" + labels["subresource"]
            key = f'{labels.get("verb", "")} {resource}'
            requests[key] = requests.get(key, 0) + value
        elif name in ("apiserver_watch_events_total", "apiserver_watch_events_sizes_sum"):
            kind = labels.get("kind") or labels.get("resource") or "?"
            target = events if name == "apiserver_watch_events_total" else event_bytes
            target[kind] = target.get(kind, 0) + value
        elif name == "apiserver_longrunning_requests" and labels.get("verb") == "WATCH":
            resource = labels.get("resource", "")
            watches[resource] = watches.get(resource, 0) + value
    return requests, events, event_bytes, watches


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--cpu", action="append", default=[])
    parser.add_argument("--rss", action="append", default=[])
    parser.add_argument("--label", default="")
    parser.add_argument("--size", type=int, default=0)
    parser.add_argument("--files", type=int, default=0)
    parser.add_argument("--rate", type=int, default=0)
    parser.add_argument("--ready", type=int, default=0)
    parser.add_argument("--completed", default="true")
    args = parser.parse_args()
    before = totals(args.before)
    after = totals(args.after)
    per = args.nodes * args.seconds

    def delta(index, keep=lambda key: True):
        out = {}
        for key, value in after[index].items():
            change = value - before[index].get(key, 0)
            if change > 0 and keep(key):
                out[key] = change
        return out

    requests = delta(0, lambda key: key.split(" ")[1].split("/")[0] in OURS)
    events = delta(1, lambda kind: kind in OURS)
    event_bytes = delta(2, lambda kind: kind in OURS)
    by_verb = {}
    for key, value in requests.items():
        verb = key.split(" ")[0]
        by_verb[verb] = by_verb.get(verb, 0) + value
    cpu = {}
    for item in args.cpu:
        name, span = item.split("=")
        start, end = span.split(":")
        cpu[name] = round(float(end) - float(start), 2)
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "label": args.label, "nodes": args.nodes, "rollout_seconds": args.seconds,
        "completed": args.completed == "true", "ready_nodes": args.ready,
        "files": args.files, "file_size": args.size, "rate": args.rate,
        "cpus": os.cpu_count(), "load_average": round(os.getloadavg()[0], 2),
        "requests_per_node_second": {k: round(v / per, 4) for k, v in sorted(by_verb.items())},
        "requests_per_node_second_by_resource": {k: round(v / per, 4)
                                                 for k, v in sorted(requests.items())},
        "watch_events_per_node_second": {k: round(v / per, 3) for k, v in sorted(events.items())},
        "watch_bytes_per_node_second": {k: round(v / per) for k, v in sorted(event_bytes.items())},
        "watch_bytes_per_node_second_total": round(sum(event_bytes.values()) / per),
        "open_watches_per_node": {k: round(v / args.nodes, 2)
                                  for k, v in sorted(after[3].items()) if k in OURS},
        "cpu_seconds": cpu,
        "apiserver_cpu_cores": round(cpu.get("apiserver", 0) / args.seconds, 3),
        "peak_rss_mb": {item.split("=")[0]: int(item.split("=")[1]) for item in args.rss},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
