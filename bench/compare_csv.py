#!/usr/bin/env python3
"""Compares two of bfly-bench's CSVs point by point: for every (algorithm, type, K, M) in both, the median time of
the old and the new run and new / old (above 1: the new run is slower). Points in one CSV only are not listed.

  python3 bench/compare_csv.py OLD.csv NEW.csv [--algorithms bfly-auto,bfly-split-w32] [--min-k 8192]

Both runs should come from the same device (the read ceilings of both are printed, so a slower device shows).
"""
import argparse
import csv


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ceiling = next((r["gbps"] for r in rows if r["algorithm"] == "read-ceiling"), "?")
    points = {(r["algorithm"], r["type"], int(r["K"]), int(r["M"])): r for r in rows if r.get("K")}
    return ceiling, points


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--algorithms", default="", help="comma-separated; default every algorithm in both")
    parser.add_argument("--min-k", type=int, default=0, help="only K >= this")
    args = parser.parse_args()
    wanted = set(filter(None, args.algorithms.split(",")))
    old_ceiling, old = read(args.old)
    new_ceiling, new = read(args.new)
    print(f"read ceiling: old {old_ceiling} GB/s, new {new_ceiling} GB/s")
    print(f"{'algorithm':<22} {'type':<5} {'K':>7} {'M':>10} {'old ms':>10} {'new ms':>10} {'new/old':>8}  ctas_per_row")
    for key in sorted(set(old) & set(new), key=lambda k: (k[1], k[0], k[2], k[3])):
        algorithm, type_name, K, M = key
        if (wanted and algorithm not in wanted) or K < args.min_k:
            continue
        o, n = float(old[key]["median_ms"]), float(new[key]["median_ms"])
        ctas = new[key].get("ctas_per_row") or "-"
        print(f"{algorithm:<22} {type_name:<5} {K:>7} {M:>10} {o:>10.5f} {n:>10.5f} {n / o:>8.3f}  {ctas}")


if __name__ == "__main__":
    main()
