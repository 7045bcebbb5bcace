#!/usr/bin/env python3
"""Sums the bytes the node agents fetched, by tier, from their own metrics
(modelplane_fetch_bytes_total{tier,source}), so a step of the scenario can say what it took
from remote sources. The agents' admin ports come from their logs' admin_server_started lines.

    e2e/fetched_bytes.py STATE_DIR            prints {"objectStore": N, "peer": N, ...} as JSON
"""
import glob
import json
import re
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def agent_ports(state):
    for log in sorted(glob.glob(f"{state}/logs/modelplane-node-agent-*.log")):
        with open(log) as handle:
            for line in handle:
                match = re.search(r"event=admin_server_started .*port=(\d+)", line)
                if match:
                    yield int(match.group(1))
                    break


def main():
    totals = {}
    for port in agent_ports(sys.argv[1]):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
        for family in text_string_to_metric_families(text):
            if family.name != "modelplane_fetch_bytes":
                continue
            for sample in family.samples:
                if sample.name == "modelplane_fetch_bytes_total":
                    tier = sample.labels.get("tier", "")
                    totals[tier] = totals.get(tier, 0) + int(sample.value)
    print(json.dumps(totals, sort_keys=True))


if __name__ == "__main__":
    main()
