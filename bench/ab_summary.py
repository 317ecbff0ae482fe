#!/usr/bin/env python3
"""The summary of an A/B over many K: for each (type, K), NEW's fraction of the read ceiling minus BASE's, averaged
over every file and repeat that holds both; then the median, the extremes, how many K moved by more than --noise
either way (those that fell listed), and how many K read under --goal before and after.

  python3 bench/ab_summary.py --base bfly-auto --new bfly-auto-anywhere FILE.csv ...        (bfly-bench CSVs)
  python3 bench/ab_summary.py --by build --base s19 --new s19r variants-f64.csv             (run_variants.sh CSVs)

--by algorithm (the default) compares two algorithms of the same run; --by build the builds of bench/run_variants.sh.
The K of --only (a comma-separated list) alone, or all K but those of --skip."""
import argparse
import collections
import csv
import statistics

parser = argparse.ArgumentParser()
parser.add_argument("files", nargs="+")
parser.add_argument("--by", choices=["algorithm", "build"], default="algorithm")
parser.add_argument("--base", required=True)
parser.add_argument("--new", required=True)
parser.add_argument("--noise", type=float, default=0.005)
parser.add_argument("--goal", type=float, default=0.90)
parser.add_argument("--only", default="")
parser.add_argument("--skip", default="")
args = parser.parse_args()
only = {int(k) for k in args.only.split(",") if k}
skip = {int(k) for k in args.skip.split(",") if k}

# (type, K) -> {base or new: [fractions]}; a run_variants.sh CSV holds bfly-auto only, a bfly-bench CSV any algorithm
values = collections.defaultdict(lambda: collections.defaultdict(list))
for path in args.files:
    for row in csv.DictReader(open(path)):
        if not row.get("K") or (args.by == "build" and row["algorithm"] != "bfly-auto"):
            continue
        K = int(row["K"])
        if (only and K not in only) or K in skip:
            continue
        side = row[args.by]
        if side in (args.base, args.new):
            values[(row["type"], K)][side].append(float(row["fraction_of_read_ceiling"]))

for type_name in sorted({t for t, _ in values}):
    changes = []  # (K, new - base, base, new)
    for (t, K), sides in sorted(values.items()):
        if t != type_name or not sides[args.base] or not sides[args.new]:
            continue
        base = statistics.mean(sides[args.base])
        new = statistics.mean(sides[args.new])
        changes.append((K, new - base, base, new))
    if not changes:
        continue
    deltas = sorted(d for _, d, _, _ in changes)
    fell = [(K, round(d, 3)) for K, d, _, _ in changes if d < -args.noise]
    best = max(changes, key=lambda c: c[1])
    print(f"{type_name}: {len(changes)} K, {args.new} against {args.base}: median {statistics.median(deltas):+.4f}, "
          f"{deltas[0]:+.3f} to {deltas[-1]:+.3f}; up by more than {args.noise}: "
          f"{sum(d > args.noise for d in deltas)}, down: {len(fell)}")
    print(f"  median {statistics.median(b for _, _, b, _ in changes):.3f} -> "
          f"{statistics.median(n for _, _, _, n in changes):.3f}; under {args.goal}: "
          f"{sum(b < args.goal for _, _, b, _ in changes)} -> {sum(n < args.goal for _, _, _, n in changes)}; "
          f"best K = {best[0]} {best[2]:.3f} -> {best[3]:.3f}")
    if fell:
        print("  fell:", ", ".join(f"{K} ({d:+.3f})" for K, d in fell))
