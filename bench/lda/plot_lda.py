#!/usr/bin/env python3
"""Plots lda-bench's CSV like the paper's Figure 11: z-step time against K, one line per algorithm, one panel per
element type, plus the full iteration (z-step + counts + theta/phi + log-likelihood) with the fastest of bfly's
one-document-per-group kernels (bfly-doc-*) at each K as a dashed line.

    bench/lda/plot_lda.py bench/results/h100-2026-11-22-lda.csv [more CSVs] [--out FILE.png]
"""
import argparse
import collections
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="lda-bench CSVs (e.g. one per element type)")
    parser.add_argument("--out", help="PNG path (default: the first CSV's name with .png)")
    args = parser.parse_args()
    rows = [r for path in args.csv for r in csv.DictReader(open(path))]
    if not rows:
        sys.exit(f"{', '.join(args.csv)}: no rows")
    types = sorted({r["type"] for r in rows})
    fig, axes = plt.subplots(1, len(types), figsize=(7 * len(types), 5), squeeze=False)
    for ax, type_name in zip(axes[0], types):
        series = collections.defaultdict(list)
        iteration = {}  # K -> the fastest bfly-doc kernel's full iteration
        for r in rows:
            if r["type"] != type_name:
                continue
            series[r["algorithm"]].append((int(r["K"]), float(r["zstep_ms"])))
            if r["algorithm"].startswith("bfly-doc-") and r["iteration_ms"]:
                K = int(r["K"])
                iteration[K] = min(iteration.get(K, float("inf")), float(r["iteration_ms"]))
        for name in sorted(series, key=lambda n: (not n.startswith("bfly"), n)):
            points = sorted(series[name])
            ax.plot([k for k, _ in points], [t for _, t in points], marker="." if len(points) < 40 else None,
                    label=name, linewidth=1.2)
        if iteration:
            points = sorted(iteration.items())
            ax.plot([k for k, _ in points], [t for _, t in points], "k--", linewidth=1,
                    label="full iteration (fastest bfly-doc kernel)")
        ax.set_xlabel("K (topics)")
        ax.set_ylabel("time per iteration (ms)")
        ax.set_yscale("log")
        ax.set_title(f"LDA z-step, {type_name}, {rows[0]['tokens']} tokens, {rows[0]['device']} ({rows[0]['date']})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    out = args.out or os.path.splitext(args.csv[0])[0] + ".png"
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
