#!/usr/bin/env python3
"""Writes a small corpus generated from known topics (LDA's generative process), for recovery checks.

Topic k puts `--own-share` of its mass on its own block of V / K words (Zipf-like inside the block) and spreads
the rest evenly over the whole vocabulary; each document draws theta ~ Dirichlet(--alpha), then for each token a
topic from theta and a word from that topic. Standard library only; the same seed gives the same files.

Files in --out: docword.topics.txt and vocab.topics.txt (UCI format for bfly-lda), true_phi.tsv (V lines of K
tab-separated probabilities p(word | topic), like bfly-lda's phi.bin) and true_topics.txt (top words per topic).

    scripts/lda/make_topic_corpus.py --out DIR
    bfly-lda --docword DIR/docword.topics.txt --vocab DIR/vocab.topics.txt --topics 6 --alpha 0.3 --beta 0.05 \
             --iterations 150 --out RUN
    scripts/lda/check_recovery.py --truth DIR/true_phi.tsv --phi RUN/phi.bin
"""
import argparse
import bisect
import itertools
import os
import random


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--topics", type=int, default=6)
    parser.add_argument("--vocab", type=int, default=60)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--length", type=int, default=80, help="tokens per document")
    parser.add_argument("--alpha", type=float, default=0.3, help="Dirichlet prior of the documents' topic mixtures")
    parser.add_argument("--own-share", type=float, default=0.97, help="mass of a topic on its own word block")
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    K, V = args.topics, args.vocab
    if not (1 <= K <= V and 0 < args.own_share <= 1):
        parser.error("need 1 <= topics <= vocab and 0 < own-share <= 1")

    rng = random.Random(args.seed)
    block = V // K
    zipf = [1.0 / (r + 1) for r in range(block)]
    phi = [[(1 - args.own_share) / V] * V for _ in range(K)]
    for k in range(K):
        for r in range(block):
            phi[k][k * block + r] += args.own_share * zipf[r] / sum(zipf)
    cumulative = [list(itertools.accumulate(p)) for p in phi]

    os.makedirs(args.out, exist_ok=True)
    lines = []
    for m in range(1, args.docs + 1):
        theta = [rng.gammavariate(args.alpha, 1.0) + 1e-12 for _ in range(K)]
        topic_cumulative = list(itertools.accumulate(theta))
        counts = {}
        for _ in range(args.length):
            k = min(K - 1, bisect.bisect(topic_cumulative, rng.random() * topic_cumulative[-1]))
            w = min(V - 1, bisect.bisect(cumulative[k], rng.random() * cumulative[k][-1]))
            counts[w] = counts.get(w, 0) + 1
        lines.extend(f"{m} {w + 1} {c}\n" for w, c in sorted(counts.items()))
    with open(os.path.join(args.out, "docword.topics.txt"), "w") as f:
        f.write(f"{args.docs}\n{V}\n{len(lines)}\n")
        f.writelines(lines)
    words = [f"t{min(w // block, K - 1)}w{w:03d}" for w in range(V)]  # the word's own topic in its name
    with open(os.path.join(args.out, "vocab.topics.txt"), "w") as f:
        f.writelines(w + "\n" for w in words)
    with open(os.path.join(args.out, "true_phi.tsv"), "w") as f:
        f.writelines("\t".join(f"{phi[k][w]:.9g}" for k in range(K)) + "\n" for w in range(V))
    with open(os.path.join(args.out, "true_topics.txt"), "w") as f:
        for k in range(K):
            top = sorted(range(V), key=lambda w: (-phi[k][w], w))[:10]
            f.write(f"topic {k}: " + " ".join(words[w] for w in top) + "\n")
    print(f"wrote {args.out}: {args.docs} documents of {args.length} tokens, {V} words, {K} true topics")


if __name__ == "__main__":
    main()
