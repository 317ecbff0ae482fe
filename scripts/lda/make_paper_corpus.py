#!/usr/bin/env python3
"""Writes a seeded synthetic corpus shaped like the paper's Wikipedia set, in UCI bag-of-words format.

Shape (Steele & Tristan 2019, Section 7): 43,556 documents, 37,286 words, 3,072,662 tokens, document lengths
around 70 (gamma-distributed) with a maximum of exactly 307, word frequencies following Zipf's law
(p(rank r) proportional to 1 / (r + 1) ** s, s = 1.0 by default).

Only the standard library is used, so the same seed gives byte-identical files on every machine (numpy's
generators differ from Python's). It takes about 10 s.

    scripts/lda/make_paper_corpus.py --out DIR [--seed 2019]
    bfly-lda --docword DIR/docword.paper.txt --vocab DIR/vocab.paper.txt ...
"""
import argparse
import bisect
import itertools
import os
import random
import sys
from collections import Counter


def document_lengths(rng, docs, tokens, max_length, shape):
    """Gamma-distributed lengths in [1, max_length] summing to exactly `tokens`, one of them max_length."""
    mean = tokens / docs
    lengths = [min(max_length, max(1, round(rng.gammavariate(shape, mean / shape)))) for _ in range(docs)]
    longest = max(range(docs), key=lengths.__getitem__)
    lengths[longest] = max_length
    others = [m for m in range(docs) if m != longest]
    # Nudge random other documents by one token until the total is exact, staying inside [1, max_length - 1].
    diff = tokens - sum(lengths)
    while diff != 0:
        m = rng.choice(others)
        step = 1 if diff > 0 else -1
        if 1 <= lengths[m] + step <= max_length - 1:
            lengths[m] += step
            diff -= step
    return lengths


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="directory for docword.paper.txt and vocab.paper.txt")
    parser.add_argument("--seed", type=int, default=2019)
    parser.add_argument("--docs", type=int, default=43556)
    parser.add_argument("--vocab", type=int, default=37286)
    parser.add_argument("--tokens", type=int, default=3072662)
    parser.add_argument("--max-length", type=int, default=307)
    parser.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent s (default 1.0)")
    parser.add_argument("--length-shape", type=float, default=3.0,
                        help="gamma shape of the document lengths (default 3: lengths mostly 20-150)")
    args = parser.parse_args()
    if not (1 <= args.docs and 1 <= args.vocab and args.docs <= args.tokens <= args.docs * args.max_length):
        sys.exit("make_paper_corpus.py: need docs >= 1, vocab >= 1 and docs <= tokens <= docs * max-length")

    rng = random.Random(args.seed)
    lengths = document_lengths(rng, args.docs, args.tokens, args.max_length, args.length_shape)
    cumulative = list(itertools.accumulate(1.0 / (r + 1) ** args.zipf for r in range(args.vocab)))
    total = cumulative[-1]
    last = args.vocab - 1
    draw = rng.random

    os.makedirs(args.out, exist_ok=True)
    docword = os.path.join(args.out, "docword.paper.txt")
    entries = []
    used = Counter()
    for m, n in enumerate(lengths, start=1):
        counts = Counter(min(last, bisect.bisect(cumulative, draw() * total)) for _ in range(n))
        used.update(counts)
        entries.append("".join(f"{m} {w + 1} {c}\n" for w, c in sorted(counts.items())))
    nnz = sum(chunk.count("\n") for chunk in entries)
    with open(docword + ".tmp", "w") as f:
        f.write(f"{args.docs}\n{args.vocab}\n{nnz}\n")
        f.writelines(entries)
    os.replace(docword + ".tmp", docword)
    vocab = os.path.join(args.out, "vocab.paper.txt")
    with open(vocab + ".tmp", "w") as f:
        f.writelines(f"word{r:05d}\n" for r in range(args.vocab))
    os.replace(vocab + ".tmp", vocab)

    print(f"wrote {docword} and {vocab}: {args.docs} documents, {args.vocab} words ({len(used)} used), "
          f"{sum(lengths)} tokens, mean length {sum(lengths) / args.docs:.2f}, max {max(lengths)}, "
          f"{nnz} docword entries, most frequent word {100.0 * used[0] / sum(lengths):.1f}% of tokens")


if __name__ == "__main__":
    main()
