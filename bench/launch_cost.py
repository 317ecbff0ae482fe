#!/usr/bin/env python3
"""Fits each point's launch time to a fixed cost plus the bytes at a steady pace, over bfly-bench CSVs of the same
types and K at several --min-bytes (e.g. bench/results/h200-2026-12-04-s19c2-bytes-{1,2,4,8}-gib.csv).

    python3 bench/launch_cost.py FILE.csv FILE.csv ...

For each (algorithm, type, K): a least-squares line time = fixed + bytes / rate through the files' medians; prints
the fixed cost (us), the steady rate as a fraction of the read ceiling (the mean of the files' ceilings), the largest
residual (us) and, for each file, the fixed cost's share of that point's time."""
import collections
import csv
import sys

BYTES = {'f32': 4, 'f64': 8, 'bf16': 2, 'f16': 2}
points = collections.defaultdict(list)  # (algorithm, type, K) -> [(bytes, seconds)]
ceilings = []
for path in sys.argv[1:]:
    for row in csv.DictReader(open(path)):
        if not row['K']:
            continue
        ceilings.append(float(row['read_ceiling_gbps']) * 1e9)
        key = (row['algorithm'], row['type'], int(row['K']))
        points[key].append((int(row['M']) * int(row['K']) * BYTES[row['type']], float(row['median_ms']) * 1e-3))
ceiling = sum(ceilings) / len(ceilings)
print(f"{'algorithm':<12} {'type':<5} {'K':>6} {'fixed us':>9} {'steady':>7} {'resid us':>9}  fixed share by size")
for (algorithm, type_name, K), xy in sorted(points.items()):
    if len(xy) < 2:
        continue
    xy.sort()
    n = len(xy)
    mean_x = sum(x for x, _ in xy) / n
    mean_y = sum(y for _, y in xy) / n
    slope = sum((x - mean_x) * (y - mean_y) for x, y in xy) / sum((x - mean_x) ** 2 for x, _ in xy)
    fixed = mean_y - slope * mean_x
    residual = max(abs(y - fixed - slope * x) for x, y in xy)
    shares = ' '.join(f"{fixed / y:.3f}" for _, y in xy)
    print(f"{algorithm:<12} {type_name:<5} {K:>6} {fixed * 1e6:9.1f} {1 / (slope * ceiling):7.3f} {residual * 1e6:9.1f}"
          f"  {shares}")
