#!/usr/bin/env python3
"""Shared-memory bank conflicts of pass 1's staged reads, by a model of their addresses (docs/DESIGN.md section 14).

The ring of rows staged anywhere: a warp holds 32 / W groups of W lanes; lane r of group g reads, for slot s of its
tile, column `column + r` of row k of its group, where k = s ^ (r & 3) (block_total's permuted order) or k = s (the
ring in row order). Row k has a ring of RING_COLUMNS columns of `column_words` 4-byte words; column c of the row
sits at place (c + line_phase(k) + swizzle) % RING_COLUMNS, line_phase(k) = (base + k * stride) % LINE_COLUMNS for
rows `stride` columns apart in memory. The swizzle of group g is g W ("g W", before 2026-11-28) or the one that puts
the group's row 0 g W columns (mod a line) after the warp's row 0, in whole 16-byte pieces ("phases",
gen::swizzles_by_row_phase). A warp's read of 4-byte columns is served 32 lanes at a time, of 8-byte columns 16.

For each column size, W, stride class, order and swizzle, the script prints the worst and the mean number of distinct
words that one bank serves in one read (1: conflict-free), over every base phase, slot and tile column.

On the H100 the model matched ncu for f32 in the layout before the additive swizzle (K = 1002 and 4094 conflict-free,
K = 1001 about 4 wavefronts a read, K = 2047 about 6); on the H200 (bench/results/h200-2026-11-28-s5c1-ncu.txt) it
matched the drop of bank conflicts from g W to the phases: f32 K = 1001 (row order) 8.7 M -> 0.25 M, bf16 K = 810
(16-bit pairs, permuted) 33.9 M -> 17.4 M, and in row order 0.88 M.

Usage: python3 bench/prototypes/ring_bank_model.py
"""

LINE_BYTES = 128


def worst_ways(W, column_words, ring_columns, stride, base, slot, column, permuted, swizzle_by_phase):
    line_columns = LINE_BYTES // (4 * column_words)
    piece_columns = 16 // (4 * column_words)
    lanes_at_once = 32 // column_words

    def phase(row):
        return (base + row * stride) % line_columns

    worst = 0
    for first in range(0, 32, lanes_at_once):
        banks = {}
        for lane in range(first, first + lanes_at_once):
            group, r = divmod(lane, W)
            k = slot ^ (r & 3) if permuted else slot
            row = group * W + k
            if swizzle_by_phase:
                swizzle = (group * W - phase(group * W) + phase(0)) % line_columns // piece_columns * piece_columns
            else:
                swizzle = group * W
            place = (column + r + phase(row) + swizzle) % ring_columns
            for word in range(column_words):
                address = (row * ring_columns + place) * column_words + word
                banks.setdefault(address % 32, set()).add(address)
        worst = max(worst, max(len(words) for words in banks.values()))
    return worst


def main():
    print("worst / mean words a bank serves per read")
    print(f"{'column':7} {'W':>3} {'strides':8} {'order':9} {'g W':>11} {'phases':>11}")
    for column_words in (1, 2):
        ring_columns = 256 // column_words
        for W in (16, 8):
            for name, stride_class in (("0 mod 4", lambda s: s % 4 == 0), ("2 mod 4", lambda s: s % 4 == 2),
                                       ("odd", lambda s: s % 2 == 1)):
                strides = [s for s in range(64) if stride_class(s)]
                for permuted in (True, False):
                    cells = []
                    for by_phase in (False, True):
                        ways = [worst_ways(W, column_words, ring_columns, stride, base, slot, column, permuted,
                                           by_phase)
                                for stride in strides for base in range(0, 32 // column_words, 3)
                                for slot in range(W) for column in (0, W)]
                        cells.append(f"{max(ways)} / {sum(ways) / len(ways):.2f}")
                    print(f"{4 * column_words:5} B {W:3} {name:8} {'permuted' if permuted else 'rows':9} "
                          f"{cells[0]:>11} {cells[1]:>11}")


if __name__ == "__main__":
    main()
