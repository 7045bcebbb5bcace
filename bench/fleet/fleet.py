"""The fleet benchmark's driver (bench/fleet/run.sh calls it): brings the fleet up once, runs
every cell of tiers x replica counts (fresh agents and a fresh checkpoint per cell), appends one
row per cell to the CSV as it finishes, then draws the plots. docs/fleet.md says how to read
them."""

import argparse
import csv
import json
import os
import re
import signal
import sys
import time
import traceback

from fleet_cell import TIERS, Cell
from fleet_cluster import FleetCluster


def byte_count(text):
    match = re.fullmatch(r"(\d+)\s*([KMG])i?B?", text) or re.fullmatch(r"(\d+)()", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a byte count: {text}")
    return int(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiers", default=",".join(TIERS))
    parser.add_argument("--replicas", default="1,8,32")
    parser.add_argument("--size", default="256MiB", help="checkpoint size per cell")
    parser.add_argument("--cap", default="64MiB", type=byte_count,
                        help="each origin's byte cap per second")
    parser.add_argument("--max-concurrent", default=16, type=int,
                        help="requests in flight each origin takes before answering 503 SlowDown")
    parser.add_argument("--timeout", default=600, type=int, help="seconds a cell may take")
    parser.add_argument("--build", required=True)
    parser.add_argument("--state", default="/tmp/modelplane-fleet")
    parser.add_argument("--out", required=True, help="folder for fleet.csv (and the plots)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless every cell kept the promises of broken_promises()")
    parser.add_argument("--keep", action="store_true", help="leave the cluster up afterwards")
    arguments = parser.parse_args()
    # A TERM (timeout, Ctrl-C's cousin) still takes the fleet down through the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tiers = arguments.tiers.split(",")
    replica_counts = [int(r) for r in arguments.replicas.split(",")]
    # Two seed nodes (one per zone) besides the replicas' nodes: the peer tier's first copies.
    nodes = max(replica_counts) + 2
    fleet = FleetCluster(arguments.state, arguments.build, nodes, arguments.cap, arguments.max_concurrent)
    os.makedirs(arguments.out, exist_ok=True)
    table = os.path.join(arguments.out, "fleet.csv")
    rows = []
    started = time.monotonic()
    try:
        print(f"fleet: {nodes} KWOK nodes in 2 zones, checkpoint {arguments.size} per cell, "
              f"origins capped at {arguments.cap} B/s", flush=True)
        fleet.up()
        index = 0
        for tier in tiers:
            for replicas in replica_counts:
                index += 1
                cell_started = time.monotonic()
                print(f"cell {tier} x {replicas}: running", flush=True)
                row = Cell(fleet, tier, replicas, arguments.size, index, arguments.timeout).run()
                row["cell_seconds"] = round(time.monotonic() - cell_started, 1)
                rows.append(row)
                print("  " + json.dumps(row), flush=True)
                write_table(table, rows)
    except Exception:
        traceback.print_exc()
        print(f"fleet: failed; component logs in {arguments.state}-logs", file=sys.stderr)
        return 1
    finally:
        if not arguments.keep:
            fleet.down()
    print(f"fleet: {len(rows)} cells in {time.monotonic() - started:.0f} s; table {table}", flush=True)
    if arguments.check:
        problems = [problem for row in rows for problem in broken_promises(row)]
        for problem in problems:
            print("FAIL:", problem, file=sys.stderr)
        return 1 if problems else 0
    return 0


def broken_promises(row):
    """What --check holds every cell to: every pod Ready, no failed staging, and the origin read
    at most 1.1 copies of the model per zone (2 zones), whatever the tier."""
    cell = f"{row['tier']} x {row['replicas']}"
    if row["pods_ready"] != row["replicas"]:
        yield f"{cell}: {row['pods_ready']} of {row['replicas']} pods Ready"
    if row["failed_stagings"]:
        yield f"{cell}: {row['failed_stagings']} failed stagings"
    if row["origin_copies"] > 1.1 * min(2, row["replicas"]):
        yield f"{cell}: the origin served {row['origin_copies']} copies of the model"


def write_table(path, rows):
    keys = list(rows[0])
    temporary = path + ".tmp"
    with open(temporary, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: "" if row.get(key) is None else row[key] for key in keys})
    os.replace(temporary, path)


if __name__ == "__main__":
    sys.exit(main())
