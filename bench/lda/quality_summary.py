#!/usr/bin/env python3
"""Merges the CSVs of bench/lda/quality_bench.py (one per piece of the bench) and, per corpus and K, compares
bfly-lda's curves with tomotopy's end: tomotopy's held-out perplexity and NPMI at its last checkpoint (and its
training seconds), the first checkpoint at which each bfly-lda estimate is at least as good on each measure (its
training seconds, or "not reached"), and bfly-lda's last checkpoint; "start-up" is the wall clock of bfly-lda's
first checkpoint less its training seconds (reading the corpus, the device, compiling or loading the kernels,
writing the outputs), which a user's one run pays on top of the training seconds. scikit-learn's last checkpoint is
listed beside tomotopy's. Writes a markdown table (stdout, and --table FILE), the merged CSV (--merged FILE) and one plot
per corpus and K, held-out perplexity and NPMI against training seconds on a log axis
(<out-dir>/<label>-lda-quality-<corpus>-k<K>.png).

    bench/lda/quality_summary.py bench/results/h100-...-lda-quality-*.csv --label h100-... --out-dir bench/results

A run (corpus, K, system) in several files: the file given last wins, all of its rows. Rows of one corpus scored
on different held-out splits (the `split` column, where the CSVs have it) are an error.
"""
import argparse
import csv
import os
import sys

FIELDS = ["corpus", "K", "system", "step", "train_seconds", "wall_seconds", "heldout_perplexity", "npmi",
          "ll_per_token", "bfly_evaluate_perplexity", "device", "split"]
REFERENCE = "tomotopy"


def read_rows(paths):
    merged = {}  # (corpus, K, system) -> that run's rows, from the last file that has it
    for path in paths:
        runs = {}
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                row = {field: row.get(field, "") or "" for field in FIELDS}
                runs.setdefault((row["corpus"], int(row["K"]), row["system"]), []).append(row)
        merged.update(runs)
    rows = [row for run in merged.values() for row in run]
    splits = {}
    for row in rows:
        if row["split"]:
            splits.setdefault(row["corpus"], set()).add(row["split"])
    for corpus, seen in splits.items():
        if len(seen) > 1:
            sys.exit(f"{corpus}: rows from different held-out splits ({', '.join(sorted(seen))}); "
                     "the CSVs come from different tokens or --heldout")
    return sorted(rows, key=lambda r: (r["corpus"], int(r["K"]), r["system"], int(r["step"])))


def curves(rows):
    """{(corpus, K): {system: [(seconds, perplexity, npmi, step, wall seconds), ...] in order of steps}}"""
    result = {}
    for r in rows:
        result.setdefault((r["corpus"], int(r["K"])), {}).setdefault(r["system"], []).append(
            (float(r["train_seconds"]), float(r["heldout_perplexity"]), float(r["npmi"]), int(r["step"]),
             float(r["wall_seconds"] or "nan")))
    return result


def first_reaching(curve, better):
    """Seconds of the first checkpoint for which better(perplexity, npmi) holds, or None."""
    return next((seconds for seconds, perplexity, npmi, *_ in curve if better(perplexity, npmi)), None)


def summary_table(by_case):
    seconds = lambda s: "not reached" if s is None else f"{s:.3g}"
    lines = ["| corpus | K | tomotopy end: s (iterations) | perplexity | NPMI | bfly-lda | perplexity reached at s | "
             "NPMI reached at s | bfly-lda end: s (iterations) | perplexity | NPMI | bfly-lda start-up s |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    others = []
    for (corpus, K), systems in sorted(by_case.items(), key=lambda item: (item[0][0] != "wordnet", item[0])):
        reference = systems.get(REFERENCE)
        if not reference:
            print(f"{corpus}, K = {K}: no {REFERENCE} rows, no comparison", file=sys.stderr)
            continue
        ref_s, ref_p, ref_n, ref_step, _ = reference[-1]
        bfly = sorted(system for system in systems if system.startswith("bfly-lda"))
        for i, system in enumerate(bfly or ["(none)"]):
            head = (f"| {corpus} | {K} | {ref_s:.3g} ({ref_step}) | {ref_p:.0f} | {ref_n:.3f} |" if i == 0
                    else "| | | | | |")
            if system == "(none)":
                lines.append(head + " no bfly-lda rows | | | | | | |")
                continue
            curve = systems[system]
            end_s, end_p, end_n, end_step, _ = curve[-1]
            first_s, _, _, _, first_wall = curve[0]  # the first process: its wall clock less its iterations
            lines.append(f"{head} {system[len('bfly-lda-'):]} | "
                         f"{seconds(first_reaching(curve, lambda p, n: p <= ref_p))} | "
                         f"{seconds(first_reaching(curve, lambda p, n: n >= ref_n))} | "
                         f"{end_s:.3g} ({end_step}) | {end_p:.0f} | {end_n:.3f} | {first_wall - first_s:.2g} |")
        for system in sorted(systems):
            if system != REFERENCE and not system.startswith("bfly-lda"):
                s, p, n, step, _ = systems[system][-1]
                others.append(f"| {corpus} | {K} | {system} | {s:.3g} ({step}) | {p:.0f} | {n:.3f} |")
    if others:
        lines += ["", "| corpus | K | other system | end: s (checkpoint) | perplexity | NPMI |",
                  "| --- | ---: | --- | ---: | ---: | ---: |"] + others
    return "\n".join(lines) + "\n"


def plot(by_case, out_dir, label):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: skipping the plots", file=sys.stderr)
        return []
    written = []
    for (corpus, K), systems in sorted(by_case.items()):
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
        for system, curve in sorted(systems.items()):
            x = [max(point[0], 1e-3) for point in curve]
            line, = left.plot(x, [point[1] for point in curve], "o-", markersize=3, label=system)
            right.plot(x, [point[2] for point in curve], "o-", markersize=3, color=line.get_color())
            if system == REFERENCE:  # the level to reach
                left.axhline(curve[-1][1], color=line.get_color(), linestyle=":", linewidth=1)
                right.axhline(curve[-1][2], color=line.get_color(), linestyle=":", linewidth=1)
        for axis, what in ((left, "held-out perplexity (lower is better)"),
                           (right, "NPMI, top 10 words (higher is better)")):
            axis.set_xscale("log")
            if axis is left:
                axis.set_yscale("log")
            axis.set_xlabel("training seconds")
            axis.set_ylabel(what)
            axis.grid(True, which="both", alpha=0.3)
        left.legend(fontsize=8)
        fig.suptitle(f"{corpus}, K = {K} ({label}; dotted: {REFERENCE}'s last checkpoint)")
        fig.tight_layout()
        path = os.path.join(out_dir, f"{label}-lda-quality-{corpus}-k{K}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", nargs="+", help="CSVs of quality_bench.py (pieces or merged ones)")
    p.add_argument("--label", required=True, help="file name prefix of the plots")
    p.add_argument("--out-dir", default="bench/results")
    p.add_argument("--table", help="also write the markdown table to this file")
    p.add_argument("--merged", help="write the merged rows to this CSV")
    p.add_argument("--no-plots", action="store_true")
    args = p.parse_args()
    rows = read_rows(args.csv)
    if args.merged:
        with open(args.merged, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    by_case = curves(rows)
    table = summary_table(by_case)
    sys.stdout.write(table)
    if args.table:
        with open(args.table, "w") as f:
            f.write(table)
    if not args.no_plots:
        os.makedirs(args.out_dir, exist_ok=True)
        for path in plot(by_case, args.out_dir, args.label):
            print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
