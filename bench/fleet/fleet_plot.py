"""Plots of the fleet matrix (docs/fleet.md explains them), drawn from fleet.csv:

  time-to-ready.png  pod created -> Ready p50 (marker) with p95..p99 (bar), per tier and replicas
  origin-bytes.png   what the origin served, in copies of the model, per tier and replicas
  bytes-by-tier.png  where the replicas' bytes came from (object store, shared fs, peers)
  memory.png         each agent's host-memory peak during the cell (largest and median)

  fleet_plot.py fleet.csv OUTPUT_FOLDER
"""

import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file-only backend)

TIER_NAMES = {"cold": "remote cold miss", "sharedfs": "shared-fs hit", "local": "node-local hit",
              "peer": "peer hit", "fallback": "fallback (origin dies)"}
MIB = 1 << 20


def number(text):
    return float(text) if text not in ("", None) else float("nan")


def load(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def grouped(rows):
    tiers = list(dict.fromkeys(row["tier"] for row in rows))
    replicas = sorted({int(row["replicas"]) for row in rows})
    cell = {(row["tier"], int(row["replicas"])): row for row in rows}
    return tiers, replicas, cell


def bar_positions(tiers, replicas):
    width = 0.8 / len(replicas)
    return width, {(tier, count): t + (r - (len(replicas) - 1) / 2) * width
                   for t, tier in enumerate(tiers) for r, count in enumerate(replicas)}


def grouped_figure(rows):
    """The rows by cell, one bar slot per tier and replica count, and an empty figure."""
    tiers, replicas, cell = grouped(rows)
    width, position = bar_positions(tiers, replicas)
    figure, axes = plt.subplots(figsize=(9, 4.5))
    return tiers, replicas, cell, width, position, figure, axes


def save(axes, figure, title, ylabel, path, log_scale=False, legend_title=None):
    axes.set_title(title)
    axes.set_ylabel(ylabel)
    if log_scale:
        axes.set_yscale("log")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(title=legend_title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def finish(axes, figure, tiers, title, ylabel, path, log_scale=False):
    """Labels a grouped figure's tiers and saves it."""
    axes.set_xticks(range(len(tiers)), [TIER_NAMES.get(t, t) for t in tiers], rotation=15)
    save(axes, figure, title, ylabel, path, log_scale, legend_title="replicas at once")


def time_to_ready(rows, folder):
    tiers, replicas, cell, width, position, figure, axes = grouped_figure(rows)
    for count in replicas:
        xs, p50s, lows, highs = [], [], [], []
        for tier in tiers:
            row = cell.get((tier, count))
            if not row:
                continue
            xs.append(position[(tier, count)])
            p50s.append(number(row["pod_to_ready_p50_s"]))
            lows.append(number(row["pod_to_ready_p95_s"]))
            highs.append(number(row["pod_to_ready_p99_s"]))
        bars = axes.bar(xs, p50s, width * 0.9, label=str(count), alpha=0.75)
        # p95 to p99 as a whisker above the p50 bar.
        axes.vlines(xs, lows, highs, color=bars.patches[0].get_facecolor() if bars.patches else None,
                    linewidth=3)
        axes.scatter(xs, highs, marker="_", color="black", s=60, zorder=3)
    finish(axes, figure, tiers, "Pod created to Ready (bar: p50; line: p95 to p99; tick: p99)",
           "seconds (log scale)", os.path.join(folder, "time-to-ready.png"), log_scale=True)


def origin_bytes(rows, folder):
    tiers, replicas, cell, width, position, figure, axes = grouped_figure(rows)
    for count in replicas:
        present = [tier for tier in tiers if (tier, count) in cell]
        axes.bar([position[(tier, count)] for tier in present],
                 [number(cell[(tier, count)]["origin_copies"]) for tier in present],
                 width * 0.9, label=str(count))
    axes.axhline(2, color="grey", linestyle="--", linewidth=1)
    axes.text(len(tiers) - 0.5, 2, " one copy per zone", va="bottom", ha="right", color="grey")
    finish(axes, figure, tiers, "What the origin served, in copies of the model",
           "copies (origin bytes / model bytes)", os.path.join(folder, "origin-bytes.png"))


def bytes_by_tier(rows, folder):
    tiers, replicas, cell = grouped(rows)
    labels, stacks = [], {"object store": [], "shared filesystem": [], "peers": []}
    for tier in tiers:
        for count in replicas:
            row = cell.get((tier, count))
            if not row:
                continue
            labels.append(f"{tier}\nx{count}")
            needed = number(row["model_bytes"]) * count
            stacks["object store"].append(number(row["object_store_bytes"]) / needed)
            stacks["shared filesystem"].append(number(row["shared_filesystem_bytes"]) / needed)
            stacks["peers"].append(number(row["peer_bytes"]) / needed)
    figure, axes = plt.subplots(figsize=(11, 4.5))
    bottom = [0.0] * len(labels)
    for name, values in stacks.items():
        axes.bar(range(len(labels)), values, 0.7, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    axes.set_xticks(range(len(labels)), labels, fontsize=8)
    save(axes, figure, "Where the replicas' bytes came from (read amplification = bar height)",
         "bytes read / bytes the replicas needed", os.path.join(folder, "bytes-by-tier.png"))


def memory(rows, folder):
    tiers, replicas, cell, width, position, figure, axes = grouped_figure(rows)
    for count in replicas:
        present = [tier for tier in tiers if (tier, count) in cell]
        xs = [position[(tier, count)] for tier in present]
        axes.bar(xs, [number(cell[(t, count)]["agent_memory_peak_max_bytes"]) / MIB for t in present],
                 width * 0.9, label=str(count), alpha=0.75)
        axes.scatter(xs, [number(cell[(t, count)]["agent_memory_peak_p50_bytes"]) / MIB for t in present],
                     marker="o", color="black", s=12, zorder=3)
    finish(axes, figure, tiers, "Node agent host-memory peak in the cell (bar: largest; dot: median)",
           "MiB", os.path.join(folder, "memory.png"))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = load(sys.argv[1])
    if not rows:
        print("no rows", file=sys.stderr)
        return 1
    os.makedirs(sys.argv[2], exist_ok=True)
    for draw in (time_to_ready, origin_bytes, bytes_by_tier, memory):
        draw(rows, sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
