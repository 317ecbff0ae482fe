#!/usr/bin/env python3
"""What a sampling kernel executes per warp of rows, by SASS opcode, from Nsight Compute's per-instruction counts.

Input: the source page of an ncu report as CSV, SASS only (the SourceCounters section), as for bench/stall_phases.py:

    ncu -k regex:bfly_sample -c 1 --section SourceCounters -o rep build/bench/bfly-bench --K 56 --types bf16 ...
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass-bf16-56.csv

Output: one block per file: the warp instructions executed, those per warp of rows (a warp draws 32 rows; the rows
are 2^30 bytes of weights over K * element bytes, the bench's 1 GiB, unless --rows says otherwise), the opcodes that
take most of them, and the share of the stall samples by opcode. Uniform (U*) and branch bookkeeping (BSSY, BSYNC,
BRA) opcodes are kept apart: many of them mean guarded loads or address arithmetic redone behind branches.

    python3 bench/sass_mix.py sass-bf16-56.csv:56:2 [more.csv:K:bytes ...] [--top N] [--rows M]
"""
import argparse
import collections
import csv
import re


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def summarize(spec, top, rows_override):
    path, K, element_bytes = spec.rsplit(":", 2)
    K, element_bytes = int(K), int(element_bytes)
    table = list(csv.reader(open(path, newline="")))
    header_at = next(i for i, r in enumerate(table) if "Address" in r and "Source" in r)
    index = {name: i for i, name in enumerate(table[header_at])}
    executed, stalls = collections.Counter(), collections.Counter()
    for row in table[header_at + 1:]:
        source = row[index["Source"]].strip()
        match = re.match(r"(@!?U?P\w+\s+)?([A-Z0-9_]+)", source)
        opcode = match.group(2) if match else source
        executed[opcode] += number(row[index["Instructions Executed"]])
        stalls[opcode] += number(row[index["Warp Stall Sampling (All Samples)"]])
    rows = rows_override or (1 << 30) // (K * element_bytes)
    warps = rows / 32
    total, sampled = sum(executed.values()), sum(stalls.values()) or 1.0
    print(f"{path}: K = {K}, {total / 1e6:.1f} M warp instructions, {total / warps:.0f} a warp of 32 rows")
    print("  by opcode (a warp of rows): " +
          ", ".join(f"{op} {n / warps:.0f}" for op, n in executed.most_common(top)))
    branchy = sum(n for op, n in executed.items() if op in ("BSSY", "BSYNC", "BRA"))
    uniform = sum(n for op, n in executed.items() if op.startswith("U"))
    print(f"  branch bookkeeping (BSSY, BSYNC, BRA) {branchy / warps:.0f}, uniform datapath {uniform / warps:.0f}")
    print("  stall samples: " + ", ".join(f"{op} {100 * n / sampled:.0f}%" for op, n in stalls.most_common(8)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="CSV:K:element_bytes")
    parser.add_argument("--top", type=int, default=16)
    parser.add_argument("--rows", type=int, default=0, help="rows of the profiled launch (default: 1 GiB of rows)")
    args = parser.parse_args()
    for spec in args.files:
        summarize(spec, args.top, args.rows)


if __name__ == "__main__":
    main()
