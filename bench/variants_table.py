#!/usr/bin/env python3
"""The table that bench/run_variants.sh and bench/run_switches.sh print last: for each CSV given (one row per
variant, repeat and point, the variant's name in the first column), the range over the repeats of bfly-auto's fraction
of the read ceiling, one row per K and one column per variant, in the order they first appear.

usage: python3 bench/variants_table.py $OUT/variants-f32.csv [...]
"""
import csv
import os
import sys


def table(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        label_column = reader.fieldnames[0]
        rows = [r for r in reader if r["algorithm"] == "bfly-auto"]
    labels, ks, fractions = [], [], {}
    for r in rows:
        if r[label_column] not in labels:
            labels.append(r[label_column])
        if r["K"] not in ks:
            ks.append(r["K"])
        fractions.setdefault((r[label_column], r["K"]), []).append(float(r["fraction_of_read_ceiling"]))
    print(os.path.basename(path))
    print("     K " + " ".join(f"{label:>11}" for label in labels))
    for k in ks:
        cells = []
        for label in labels:
            values = fractions.get((label, k), [])
            cells.append(f"{min(values):5.3f}-{max(values):5.3f}" if values else " " * 11)
        print(f"{k:>6} " + " ".join(cells))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        table(path)
