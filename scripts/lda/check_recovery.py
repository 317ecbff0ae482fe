#!/usr/bin/env python3
"""Compares bfly-lda's topics (phi.bin) with the true topics of make_topic_corpus.py (true_phi.tsv).

Topics are matched one to one by the smallest total L1 distance between p(word | topic) columns (all
permutations up to 8 topics, greedy beyond). Prints the distance of each matched pair; exits 1 when one exceeds
--max-l1 or their mean exceeds --max-mean-l1. Standard library only.
"""
import argparse
import itertools
import struct
import sys


def read_matrix(path):
    """bfly-lda's matrix file: b"BFLYMAT1", u32 element size, u32 0, u64 rows, u64 cols, row-major data."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"BFLYMAT1":
        sys.exit(f"{path}: not a bfly-lda matrix file")
    size, _, rows, cols = struct.unpack_from("<IIQQ", data, 8)
    values = struct.unpack_from("<%d%s" % (rows * cols, "f" if size == 4 else "d"), data, 32)
    return [list(values[r * cols:(r + 1) * cols]) for r in range(rows)]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--truth", required=True, help="true_phi.tsv from make_topic_corpus.py")
    parser.add_argument("--phi", required=True, help="phi.bin from bfly-lda --out")
    parser.add_argument("--max-l1", type=float, default=0.15)
    parser.add_argument("--max-mean-l1", type=float, default=0.10)
    args = parser.parse_args()
    with open(args.truth) as f:
        truth = [[float(x) for x in line.split("\t")] for line in f if line.strip()]
    learned = read_matrix(args.phi)
    V, K = len(truth), len(truth[0])
    if len(learned) != V or len(learned[0]) != K:
        sys.exit(f"shapes differ: truth {V} x {K}, phi.bin {len(learned)} x {len(learned[0])}")
    distance = [[sum(abs(truth[w][a] - learned[w][b]) for w in range(V)) for b in range(K)] for a in range(K)]
    if K <= 8:
        match = min(itertools.permutations(range(K)), key=lambda p: sum(distance[a][p[a]] for a in range(K)))
    else:
        match, free = [None] * K, set(range(K))
        for d, a, b in sorted((distance[a][b], a, b) for a in range(K) for b in range(K)):
            if match[a] is None and b in free:
                match[a] = b
                free.discard(b)
    matched = [distance[a][match[a]] for a in range(K)]
    mean = sum(matched) / K
    for a in range(K):
        print(f"true topic {a} <-> learned topic {match[a]}: L1 {matched[a]:.4f}")
    print(f"mean L1 {mean:.4f}")
    if max(matched) > args.max_l1 or mean > args.max_mean_l1:
        print(f"NOT RECOVERED (limits: each <= {args.max_l1}, mean <= {args.max_mean_l1})")
        return 1
    print("recovered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
