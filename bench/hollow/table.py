#!/usr/bin/env python3
"""The hollow-agent results (bench/hollow/results.jsonl) as the Markdown table in
docs/benchmarks.md: per node and second during the rollout, requests by verb, watch events and
bytes (every watcher's), and kube-apiserver's cores and peak RSS.

  table.py [results.jsonl]
"""

import json
import sys


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/hollow/results.jsonl"
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    print("| code | nodes | rollout s | requests /node/s (status writes, spec writes, gets, watches) "
          "| watch events /node/s | watch KB /node/s (ModelCache, ModelRevision) "
          "| watch MB /node over the rollout | kube-apiserver cores, peak RSS MB | agents' CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: (r["nodes"], r["label"] != "before")):
        by = row["requests_per_node_second_by_resource"]
        total = sum(row["requests_per_node_second"].values())
        events = sum(row["watch_events_per_node_second"].values())
        kb = row["watch_bytes_per_node_second"]
        rollout = f'{row["rollout_seconds"]:.0f}'
        if not row.get("completed", True):
            rollout += f' (gave up: {row.get("ready_nodes", 0)} Ready)'
        per_rollout = row["watch_bytes_per_node_second_total"] * row["rollout_seconds"] / 1e6
        print(f'| {row["label"]} | {row["nodes"]} | {rollout} '
              f'| {total:.2f} ({by.get("APPLY modelcaches/status", 0):.2f}, '
              f'{by.get("APPLY modelcaches", 0):.2f}, '
              f'{row["requests_per_node_second"].get("GET", 0):.3f}, '
              f'{row["requests_per_node_second"].get("WATCH", 0):.3f}) '
              f'| {events:.1f} '
              f'| {row["watch_bytes_per_node_second_total"] / 1000:.1f} '
              f'({kb.get("modelcaches", 0) / 1000:.1f}, {kb.get("modelrevisions", 0) / 1000:.1f}) '
              f'| {per_rollout:.2f} '
              f'| {row["apiserver_cpu_cores"]:.2f}, {row["peak_rss_mb"].get("apiserver", 0)} '
              f'| {row["cpu_seconds"].get("hollow_agents", 0):.0f} |')


if __name__ == "__main__":
    main()
