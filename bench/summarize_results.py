#!/usr/bin/env python3
"""Markdown tables for the README from the CSVs in bench/results (standard library only).

  python3 bench/summarize_results.py bench/results/<device>-<date>-sampling.csv bench/results/<device>-<date>-peers.csv \
      [bench/results/<device>-<date>-lda.csv]
"""
import csv
import sys

SAMPLING_K = [16, 32, 64, 71, 128, 256, 512, 1000, 1024, 2048, 4096, 4097]
PEERS = ["torch.multinomial", "torch.cumsum-searchsorted", "torch.gumbel-argmax", "jax.random.categorical"]


def fraction_table(sampling, peers, element_type):
    rows = [r for r in sampling + peers if r["type"] == element_type and r["K"]]
    fraction = {(r["algorithm"], int(r["K"])): float(r["fraction_of_read_ceiling"]) for r in rows}
    best_bfly = {}
    for (algorithm, k), f in fraction.items():
        if algorithm.startswith("bfly-") and algorithm != "bfly-auto":
            best_bfly[k] = max(best_bfly.get(k, 0.0), f)
    columns = ["bfly-auto", "best bfly spec", "alg1", "alg4-regs", "warp-per-row"] + PEERS + ["bfly-auto / torch.multinomial"]
    out = ["| K | " + " | ".join(columns) + " |", "|" + " --- |" * (len(columns) + 1)]
    for k in SAMPLING_K:
        cells = [fraction.get(("bfly-auto", k)), best_bfly.get(k)]
        cells += [fraction.get((a, k)) for a in ["alg1", "alg4-regs", "warp-per-row"] + PEERS]
        text = ["" if c is None else f"{c:.2f}" for c in cells]
        auto, multinomial = fraction.get(("bfly-auto", k)), fraction.get(("torch.multinomial", k))
        text.append("" if not auto or not multinomial else f"{auto / multinomial:.1f}x")
        out.append(f"| {k} | " + " | ".join(text) + " |")
    in_range = [fraction[("bfly-auto", k)] for k in SAMPLING_K if 16 <= k <= 4096 and ("bfly-auto", k) in fraction]
    out.append("")
    out.append(f"Minimum of bfly-auto over K in [16, 4096]: {min(in_range):.3f} of the read ceiling.")
    return "\n".join(out)


def lda_table(lda):
    out = ["| type | K | algorithm | z-step ms | Mtokens/s (z-step) | full iteration ms |", "| --- | --- | --- | --- | --- | --- |"]
    for r in lda:
        if int(r["K"]) in (16, 256, 1024):
            iteration = f"{float(r['iteration_ms']):.2f}" if r["iteration_ms"] else ""
            out.append(f"| {r['type']} | {r['K']} | {r['algorithm']} | {float(r['zstep_ms']):.2f} | "
                       f"{float(r['mtokens_per_s']):.0f} | {iteration} |")
    return "\n".join(out)


def main(argv):
    sampling = list(csv.DictReader(open(argv[1])))
    peers = list(csv.DictReader(open(argv[2])))
    device, date = sampling[0]["device"], sampling[0]["date"]
    ceiling = float(next(r for r in sampling if r["algorithm"] == "read-ceiling")["gbps"])
    print(f"Device {device}, {date}; read ceiling {ceiling:.0f} GB/s measured in the same run.\n")
    for element_type in ("f32", "f64"):
        print(f"**{element_type}**, fraction of the read ceiling:\n")
        print(fraction_table(sampling, peers, element_type))
        print()
    if len(argv) > 3:
        print(lda_table(list(csv.DictReader(open(argv[3])))))


if __name__ == "__main__":
    main(sys.argv)
