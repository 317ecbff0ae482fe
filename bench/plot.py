#!/usr/bin/env python3
"""Plots the fraction of the read ceiling against K, one line per algorithm, one PNG per element type
(like Figure 11 of Steele & Tristan 2019), from bfly-bench's CSV and, when given, peers.py's CSV.

  python3 bench/plot.py bench/results/h100-80gb-hbm3-2026-11-22-sampling.csv \
      [--peers bench/results/h100-80gb-hbm3-2026-11-22-peers.csv] [--out-dir bench/results]

writes <out-dir>/<device>-<date>-sampling-<type>.png (the name of the sampling CSV without "-sampling.csv").
Rows without K (the ceilings bfly-bench records) are not plotted.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("K")]


def style(algorithm):
    """bfly solid, the paper's baselines dashed, peers dotted; bfly-auto thick."""
    if algorithm == "bfly-auto":
        return dict(linestyle="-", linewidth=2.8, marker="o", markersize=4, color="black")
    if algorithm.startswith("bfly-"):
        return dict(linestyle="-", linewidth=1.2, marker=".", markersize=4)
    if algorithm.startswith(("alg", "warp-per-row")):
        return dict(linestyle="--", linewidth=1.2, marker="s", markersize=3)
    return dict(linestyle=":", linewidth=1.5, marker="^", markersize=4)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sampling_csv")
    parser.add_argument("--peers", help="peers.py's CSV")
    parser.add_argument("--out-dir", default=None, help="default: the folder of the sampling CSV")
    parser.add_argument("--goal", type=float, default=0.85, help="horizontal line: the goal")
    args = parser.parse_args()

    rows = read_rows(args.sampling_csv)
    if args.peers:
        if os.path.exists(args.peers):
            rows += read_rows(args.peers)
        else:
            print(f"plot.py: warning: {args.peers} not found; plotting bfly-bench's algorithms only", file=sys.stderr)
    if not rows:
        sys.exit(f"plot.py: no points in {args.sampling_csv}")
    base = os.path.basename(args.sampling_csv)
    stem = base[: -len("-sampling.csv")] if base.endswith("-sampling.csv") else os.path.splitext(base)[0]
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.sampling_csv))
    os.makedirs(out_dir, exist_ok=True)

    device, date = rows[0]["device"], rows[0]["date"]
    ceiling = float(rows[0]["read_ceiling_gbps"])
    for type_name in sorted({r["type"] for r in rows}):
        series = defaultdict(list)
        for r in rows:
            if r["type"] == type_name:
                series[r["algorithm"]].append((int(r["K"]), float(r["fraction_of_read_ceiling"])))
        fig, ax = plt.subplots(figsize=(11, 6.5))
        order = sorted(series, key=lambda a: (not a.startswith("bfly"), a != "bfly-auto", a))
        colors = plt.get_cmap("tab20").colors
        for i, algorithm in enumerate(order):
            points = sorted(series[algorithm])
            kwargs = dict(color=colors[i % len(colors)])
            kwargs.update(style(algorithm))
            ax.plot([k for k, _ in points], [f for _, f in points], label=algorithm, **kwargs)
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.axhline(args.goal, color="tab:red", linewidth=0.8, linestyle="--")
        ax.text(ax.get_xlim()[0], args.goal, f" goal {args.goal}", color="tab:red", va="bottom", fontsize=8)
        ax.set_xlabel("K (categories per row), log2 scale")
        ax.set_ylabel("fraction of the read ceiling (weights read once)")
        ax.set_ylim(0, max(1.1, max(f for pts in series.values() for _, f in pts) * 1.05))
        ax.set_title(f"{type_name} weights, one draw per row, M x K x size >= 1 GiB: {device}, {date}\n"
                     f"read ceiling {ceiling:.0f} GB/s (grid-stride float4 read, same process)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        path = os.path.join(out_dir, f"{stem}-sampling-{type_name}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
