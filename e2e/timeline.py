#!/usr/bin/env python3
"""Prints where one revision is staged and how each node got it: a table of node, state, tier,
stage timestamps and bytes-to-ready, from `kubectl get modelcaches -o json` on stdin.

    kubectl get modelcaches -o json | e2e/timeline.py sha256:...
"""
import json
import sys
from datetime import datetime


def parse(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def main():
    digest = sys.argv[1]
    caches = json.load(sys.stdin)["items"]
    stages = ["queued", "firstByte", "lastByte", "verified", "published"]
    print(f"  {'node':12} {'state':8} {'tier':17} " + " ".join(f"{s:>12}" for s in stages[1:])
          + f" {'to ready':>9}")
    for cache in sorted(caches, key=lambda item: item["metadata"]["name"]):
        for entry in (cache.get("status") or {}).get("revisions", []):
            if entry.get("digest") != digest:
                continue
            times = {stage: parse(entry.get("timestamps", {}).get(stage)) for stage in stages}
            queued = times["queued"]
            # Each stage as seconds after the staging was queued.
            offsets = [f"{(times[s] - queued).total_seconds():11.2f}s" if queued and times[s]
                       else f"{'-':>12}" for s in stages[1:]]
            total = offsets[-1] if queued and times["published"] else f"{'-':>9}"
            print(f"  {cache['metadata']['name']:12} {entry.get('state', ''):8} "
                  f"{entry.get('sourceTier', ''):17} " + " ".join(offsets) + f" {total.strip():>9}")
    print(f"  (stage columns: seconds after the node queued the staging)")


if __name__ == "__main__":
    main()
