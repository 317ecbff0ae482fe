#!/usr/bin/env python3
"""Where a sampling kernel's warps wait, pass by pass, from Nsight Compute's per-instruction stall samples.

Input: the source page of an ncu report as CSV, SASS only, taken with the SourceCounters section, for example

    ncu -k regex:bfly_sample -c 1 --section WarpStateStats --section SourceCounters -o rep build/bench/bfly-bench ...
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass.csv

Output: one line per file: the share of all stall samples (and of long-scoreboard samples, warps waiting for global
memory or for copies into shared memory) taken in pass 1 and after it (the chunk search, Philox, pass 2's reload of
the chosen tile and the output), then the instructions with the most samples. Pass 1 ends at the last backward branch
before the first SHFL.IDX (pass 2's broadcast of each lane's chosen block), which is how bfly's sample kernels read in
SASS; for other kernels read the top instructions instead.

    python3 bench/stall_phases.py sass-f32-127.csv [more.csv ...] [--top N] [--step]

With --step, also the samples of pass 1's staged step (the smallest loop that holds both the ring's copies, LDGSTS,
and its loads, LDS: the step bench/pass1_step_sass.sh counts) and of everything else, each by stall reason. Files may
be gzipped (.csv.gz); bench/ncu_source.sh takes such CSVs on the device.
"""
import argparse
import collections
import csv
import gzip
import re

ALL = "Warp Stall Sampling (All Samples)"
LONG = "stall_long_sb"


def number(row, index, key):
    try:
        return float(row[index[key]].replace(",", ""))
    except (KeyError, ValueError):
        return 0.0


def staged_step(source, address, base):
    """Pass 1's staged step: the smallest backward-branch loop holding both LDGSTS and LDS, as (first, last) indices."""
    best = None
    for i, text in enumerate(source):
        m = re.search(r"BRA\s+(?:\S+,\s*)?0x([0-9a-f]+)", text)
        if not m or int(m.group(1), 16) - base >= address[i]:
            continue
        first = next((j for j, a in enumerate(address) if a >= int(m.group(1), 16) - base), None)
        body = source[first:i + 1] if first is not None else []
        if any("LDGSTS" in t for t in body) and any(re.search(r"\bLDS\b", t) for t in body):
            if best is None or i - first < best[1] - best[0]:
                best = (first, i)
    return best


def summarize(path, top, step=False):
    with (gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")) as f:
        rows = list(csv.reader(f))
    header_at = next(i for i, r in enumerate(rows) if "Address" in r and "Source" in r)
    index = {name: i for i, name in enumerate(rows[header_at])}
    code = rows[header_at + 1:]
    base = int(code[0][index["Address"]], 16)
    total = sum(number(r, index, ALL) for r in code) or 1.0
    source = [r[index["Source"]] for r in code]
    address = [int(r[index["Address"]], 16) - base for r in code]
    first_idx = next((i for i, s in enumerate(source) if "SHFL.IDX" in s), len(code))
    end = first_idx
    for i in range(first_idx):
        m = re.search(r"BRA\s+(?:\S+,\s*)?0x([0-9a-f]+)", source[i])
        if m and int(m.group(1), 16) - base < address[i]:
            end = i + 1
    def share(part, key):
        return 100.0 * sum(number(r, index, key) for r in part) / total
    print(f"{path}: {int(total)} samples, long scoreboard {share(code, LONG):.1f} %; "
          f"pass 1 (to {address[end - 1]:#x}) {share(code[:end], ALL):.1f} % (long scoreboard "
          f"{share(code[:end], LONG):.1f} %), after it {share(code[end:], ALL):.1f} % (long scoreboard "
          f"{share(code[end:], LONG):.1f} %)")
    reasons = [k for k in index if k.startswith("stall_") and "Not Issued" not in k]
    if step:
        loop = staged_step(source, address, base)
        if loop is None:
            print("  no staged step (no loop holds both LDGSTS and LDS)")
        else:
            inside = code[loop[0]:loop[1] + 1]
            outside = code[:loop[0]] + code[loop[1] + 1:]
            print(f"  pass 1's step: {address[loop[0]]:#x}-{address[loop[1]]:#x} ({len(inside)} instructions, "
                  f"its head executed {int(number(code[loop[0]], index, 'Instructions Executed'))} times)")
            for label, part in (("the step", inside), ("the rest", outside)):
                by = collections.Counter({k[6:]: sum(number(r, index, k) for r in part) for k in reasons})
                whole = sum(by.values()) or 1.0
                print(f"  {label}: {share(part, ALL):.0f} % of the samples; " +
                      ", ".join(f"{k} {100.0 * v / whole:.0f} %" for k, v in by.most_common(7) if v > 0))
    for r in sorted(code, key=lambda r: -number(r, index, ALL))[:top]:
        samples = number(r, index, ALL)
        main = ", ".join(f"{k[6:]} {int(number(r, index, k))}" for k in reasons if number(r, index, k) > 0.1 * samples)
        print(f"  {int(r[index['Address']], 16) - base:#07x} {100.0 * samples / total:5.1f} %  "
              f"{r[index['Source']].strip()[:56]:56}  {main}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="ncu source pages as CSV (--page source --csv --print-source sass)")
    parser.add_argument("--top", type=int, default=8, help="instructions to list per file (default 8)")
    parser.add_argument("--step", action="store_true", help="pass 1's staged step and the rest, by stall reason")
    args = parser.parse_args()
    for path in args.files:
        summarize(path, args.top, args.step)


if __name__ == "__main__":
    main()
