#!/usr/bin/env python3
"""Shared-memory bank conflicts of pass 1's staged reads, by a model of their addresses (docs/DESIGN.md section 14).

A warp holds 32 / W groups of W lanes; lane r of a group reads, for slot s of its tile, column `column + r` of row
s ^ (r & 3) of its group from that row's ring of RING_COLUMNS 4-byte words, at a place the layout gives; the groups'
places are XOR-ed with (group * W) and the rings of a group's rows lie RING_COLUMNS words apart. Rows of the group
are `stride` columns apart in memory (ld in columns, mod 32), so row k starts line_phase(k) = (base + k * stride) % 32
columns into its 128-byte line. For each layout and stride the script prints the worst and the mean number of
distinct words that one bank serves in one read (1: conflict-free), over every base phase, slot and tile column.

Layouts:
  shared     every row at place c (rows on 16 bytes: the form of section 14's first paragraphs)
  memory     row k at place c + line_phase(k): memory's own 16-byte copies (landed for rows that start anywhere)
  in-copy    row k at place c + line_phase(k) % 4: 16-byte copies rotated by whole copies (measured, not landed)
  8-byte     row k at place c + line_phase(k) % 2: what 8-byte copies would allow (not built)

On the H100 the model matched ncu for f32 (bench/results/h100-80gb-hbm3-2026-11-27-anywhere-ncu.log and
-anywhere-residue-e2-ncu.log): K = 1002 and 4094 (even strides) conflict-free, K = 1001 about 4 wavefronts a read,
K = 2047 and 4095 about 6 in the memory layout and 3 in the in-copy one.

Usage: python3 bench/prototypes/ring_bank_model.py [--W 16] [--ring-columns 256]
"""
import argparse

LINE_COLUMNS = 32  # 4-byte columns per 128-byte line


def ways(place, W, ring_columns, stride, base, slot, column):
    banks = {}
    for lane in range(32):
        group, r = divmod(lane, W)
        row = group * W + (slot ^ (r & 3))
        phase = (base + row * stride) % LINE_COLUMNS
        word = row * ring_columns + ((place(column + r, phase) % ring_columns) ^ (group * W))
        banks.setdefault(word % 32, set()).add(word)
    return max(len(words) for words in banks.values())


LAYOUTS = {
    "shared": lambda c, phase: c,
    "memory": lambda c, phase: c + phase,
    "in-copy": lambda c, phase: c + phase % 4,
    "8-byte": lambda c, phase: c + phase % 2,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--W", type=int, default=16, help="lanes per group (4 to 32)")
    parser.add_argument("--ring-columns", type=int, default=256, help="columns of a row's ring (STAGES * 32)")
    args = parser.parse_args()
    print(f"W = {args.W}, RING_COLUMNS = {args.ring_columns}: worst / mean words a bank serves per read")
    print(f"{'layout':8} {'even strides':>14} {'odd strides':>14}")
    for name, place in LAYOUTS.items():
        per_parity = {0: [], 1: []}
        for stride in range(LINE_COLUMNS):
            for base in range(LINE_COLUMNS):
                for slot in range(args.W):
                    for column in (0, args.W):
                        per_parity[stride % 2].append(
                            ways(place, args.W, args.ring_columns, stride, base, slot, column))
        cells = [f"{max(v)} / {sum(v) / len(v):.2f}" for v in (per_parity[0], per_parity[1])]
        print(f"{name:8} {cells[0]:>14} {cells[1]:>14}")


if __name__ == "__main__":
    main()
