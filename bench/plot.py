#!/usr/bin/env python3
"""Plots bfly-bench's CSVs (with peers' rows when given).

Against K (the default for a CSV with one M per point, like Figure 11 of Steele & Tristan 2019): the fraction of
the read ceiling, log2-scale K, one line per algorithm, one PNG per element type, or with --one-figure one PNG with
one line per type and algorithm (colour: algorithm; line style: type):

  python3 bench/plot.py bench/results/h100-80gb-hbm3-2026-11-23-k-range-sampling.csv --one-figure

writes <out-dir>/<stem>-sampling-<type>.png, or <stem>-sampling.png with --one-figure, where <stem> is the name of
the CSV without "-sampling.csv" (so it keeps the device and date of the data).

Against M (the LLM shapes, chosen automatically for a CSV with several M per K, or with --against M): the time of
one launch in microseconds, log-log, one panel per K, one line per algorithm, one PNG per element type of the bfly
CSV; peers' rows (torch's peers.py CSV with median_ms, FlashInfer's with median_us) from --peers:

  python3 bench/plot.py bench/results/h100-80gb-hbm3-2026-11-23-llm-sampling.csv \\
      --peers bench/results/h100-80gb-hbm3-2026-11-23-llm-peers.csv \\
      --peers bench/results/h100-80gb-hbm3-2026-11-23-flashinfer-peer.csv

writes <out-dir>/<stem>-us-vs-m-<type>.png. Rows without K (the ceilings bfly-bench records) are not plotted; peers'
rows of other types, K or devices than the bfly CSV's are left out. The out-dir defaults to the CSV's folder.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TYPE_STYLES = ["-", "--", ":", "-."]


def read_rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("K")]


def median_us(row):
    """The time of one launch in microseconds, from median_us or median_ms."""
    if row.get("median_us"):
        return float(row["median_us"])
    return 1000.0 * float(row["median_ms"])


def style(algorithm):
    """bfly solid, the paper's baselines dashed, peers dotted; bfly-auto thick."""
    if algorithm == "bfly-auto":
        return dict(linestyle="-", linewidth=2.8, marker="o", markersize=4, color="black")
    if algorithm.startswith("bfly-"):
        return dict(linestyle="-", linewidth=1.2, marker=".", markersize=4)
    if algorithm.startswith(("alg", "warp-per-row")):
        return dict(linestyle="--", linewidth=1.2, marker="s", markersize=3)
    return dict(linestyle=":", linewidth=1.5, marker="^", markersize=4)


def algorithm_order(algorithms):
    return sorted(algorithms, key=lambda a: (not a.startswith("bfly"), a != "bfly-auto", a))


def stem_of(path):
    base = os.path.basename(path)
    return base[: -len("-sampling.csv")] if base.endswith("-sampling.csv") else os.path.splitext(base)[0]


def save(fig, out_dir, name):
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def plot_against_k(rows, out_dir, stem, goal, one_figure):
    device, date = rows[0]["device"], rows[0]["date"]
    ceiling = float(rows[0]["read_ceiling_gbps"])
    types = sorted({r["type"] for r in rows})
    groups = [types] if one_figure else [[t] for t in types]
    colors = plt.get_cmap("tab10" if one_figure else "tab20").colors
    for group in groups:
        series = defaultdict(list)
        for r in rows:
            if r["type"] in group:
                series[(r["algorithm"], r["type"])].append((int(r["K"]), float(r["fraction_of_read_ceiling"])))
        algorithms = algorithm_order({a for a, _ in series})
        fig, ax = plt.subplots(figsize=(11, 6.5))
        for (algorithm, type_name), points in sorted(series.items(),
                                                     key=lambda s: (algorithms.index(s[0][0]), s[0][1])):
            points.sort()
            kwargs = dict(color=colors[algorithms.index(algorithm) % len(colors)])
            kwargs.update(style(algorithm))
            if len(group) > 1:  # the type by line style, the algorithm by colour
                kwargs["linestyle"] = TYPE_STYLES[group.index(type_name) % len(TYPE_STYLES)]
                if algorithm == "bfly-auto":
                    kwargs["color"] = "black"
            label = algorithm if len(group) == 1 else f"{type_name} {algorithm}"
            ax.plot([k for k, _ in points], [f for _, f in points], label=label, **kwargs)
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.axhline(goal, color="tab:red", linewidth=0.8, linestyle="--")
        ax.text(ax.get_xlim()[0], goal, f" goal {goal}", color="tab:red", va="bottom", fontsize=8)
        ax.set_xlabel("K (categories per row), log2 scale")
        ax.set_ylabel("fraction of the read ceiling (weights read once, in their own bytes)")
        ax.set_ylim(0, max(1.1, max(f for pts in series.values() for _, f in pts) * 1.05))
        ax.set_title(f"{', '.join(group)} weights, one draw per row, M x K x size >= 1 GiB: {device}, {date}\n"
                     f"read ceiling {ceiling:.0f} GB/s (grid-stride float4 read, same process)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2 if len(series) > 12 else 1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        save(fig, out_dir, f"{stem}-sampling.png" if one_figure else f"{stem}-sampling-{group[0]}.png")


def plot_against_m(rows, peers, out_dir, stem):
    device, date = rows[0]["device"], rows[0]["date"]
    colors = plt.get_cmap("tab10").colors
    for type_name in sorted({r["type"] for r in rows}):
        mine = [r for r in rows if r["type"] == type_name]
        Ks = sorted({int(r["K"]) for r in mine})
        theirs = [r for r in peers
                  if r["type"] == type_name and int(r["K"]) in Ks and r.get("device", device) == device]
        everything = mine + theirs
        algorithms = algorithm_order({r["algorithm"] for r in everything})
        fig, axes = plt.subplots(1, len(Ks), figsize=(5.2 * len(Ks) + 2.5, 5.2), sharey=True, squeeze=False)
        for ax, K in zip(axes[0], Ks):
            for i, algorithm in enumerate(algorithms):
                points = sorted((int(r["M"]), median_us(r)) for r in everything
                                if r["algorithm"] == algorithm and int(r["K"]) == K)
                if not points:
                    continue
                kwargs = dict(color=colors[i % len(colors)])
                kwargs.update(style(algorithm))
                ax.plot([m for m, _ in points], [t for _, t in points], label=algorithm, **kwargs)
                if algorithm == "bfly-auto":  # the CTAs per row the launch chose, where bfly-bench recorded them
                    for r in everything:
                        if r["algorithm"] == algorithm and int(r["K"]) == K and r.get("ctas_per_row"):
                            ax.annotate(r["ctas_per_row"], (int(r["M"]), median_us(r)), fontsize=7,
                                        textcoords="offset points", xytext=(3, -10))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"K = {K}", fontsize=10)
            ax.set_xlabel("M (rows)")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].set_ylabel("time of one launch (us, median), log scale")
        handles, labels = [], []
        for ax in axes[0]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h)
                    labels.append(l)
        fig.legend(handles, labels, fontsize=8, loc="center right")
        fig.suptitle(f"{type_name} weights, one draw per row, few rows of LLM vocabularies: {device}, {date}",
                     fontsize=10)
        fig.tight_layout(rect=(0, 0, 1 - 2.3 / fig.get_figwidth(), 1))
        save(fig, out_dir, f"{stem}-us-vs-m-{type_name}.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sampling_csv", help="bfly-bench's CSV")
    parser.add_argument("--peers", action="append", default=[], help="a peers' CSV (repeatable)")
    parser.add_argument("--against", choices=["auto", "K", "M"], default="auto",
                        help="x axis: K (fraction of the read ceiling) or M (microseconds); auto: M when the CSV "
                             "has several M per K")
    parser.add_argument("--one-figure", action="store_true", help="against K: every type in one figure")
    parser.add_argument("--out-dir", default=None, help="default: the folder of the sampling CSV")
    parser.add_argument("--goal", type=float, default=0.85, help="against K: horizontal line, the goal")
    args = parser.parse_args()

    rows = read_rows(args.sampling_csv)
    if not rows:
        sys.exit(f"plot.py: no points in {args.sampling_csv}")
    peers = []
    for path in args.peers:
        if os.path.exists(path):
            peers += read_rows(path)
        else:
            print(f"plot.py: warning: {path} not found; plotting without it", file=sys.stderr)
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(args.sampling_csv))
    os.makedirs(out_dir, exist_ok=True)
    stem = stem_of(args.sampling_csv)
    against = args.against
    if against == "auto":
        ms_per_k = defaultdict(set)
        for r in rows:
            ms_per_k[(r["type"], r["K"])].add(r["M"])
        against = "M" if any(len(ms) > 1 for ms in ms_per_k.values()) else "K"
    if against == "M":
        plot_against_m(rows, peers, out_dir, stem)
    else:
        plot_against_k(rows + [p for p in peers if p.get("fraction_of_read_ceiling")], out_dir, stem, args.goal,
                       args.one_figure)


if __name__ == "__main__":
    main()
