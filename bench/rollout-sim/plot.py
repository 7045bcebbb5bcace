"""Plots of the rollout simulator's sweep (docs/scale.md) from the CSV files run.sh writes.

    plot.py OUT_DIR    reads OUT_DIR/sweep.csv and OUT_DIR/sweep-700.csv, writes PNGs there
"""

import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file-only backend)


def rows(folder):
    found = []
    for name in ("sweep.csv", "sweep-700.csv"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path) as handle:
                found += [row for row in csv.DictReader(handle) if row["complete"] == "1"]
    return found


def series(data, model, nic, zones, column):
    points = sorted(
        (int(row["nodes"]), float(row[column]))
        for row in data
        if float(row["model_gb"]) == model
        and float(row["nic_gbps"]) == nic
        and int(row["zones"]) == zones
    )
    return [p[0] for p in points], [p[1] for p in points]


def grid(data, folder, column, ylabel, filename, goal=None, log_y=False):
    models = sorted({float(row["model_gb"]) for row in data})
    zones_list = sorted({int(row["zones"]) for row in data})
    nics = sorted({float(row["nic_gbps"]) for row in data})
    figure, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4), sharey=True)
    if len(models) == 1:
        axes = [axes]
    for axis, model in zip(axes, models):
        for nic in nics:
            for zones in zones_list:
                x, y = series(data, model, nic, zones, column)
                if x:
                    axis.plot(x, y, marker="o", label=f"{nic:g} Gb/s, {zones} zone(s)")
        if goal is not None:
            axis.axhline(goal, color="black", linestyle="--", linewidth=1)
        axis.set_xscale("log")
        if log_y:
            axis.set_yscale("log")
        axis.set_title(f"{model:g} GB model")
        axis.set_xlabel("nodes")
        axis.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[-1].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(os.path.join(folder, filename), dpi=110)
    plt.close(figure)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    data = rows(folder)
    grid(data, folder, "p99_over_single", "p99 time-to-ready / one node's time",
         "p99-over-single.png", goal=1.5)
    grid(data, folder, "p99_s", "p99 time-to-ready, s", "p99-seconds.png", log_y=True)
    grid(data, folder, "origin_copies_per_zone", "origin copies per zone", "origin-copies.png",
         goal=1.1)
    grid(data, folder, "peak_peer_upload_gbps", "busiest node's peer upload, Gb/s",
         "peak-peer-upload.png")


if __name__ == "__main__":
    main()
