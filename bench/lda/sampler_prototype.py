#!/usr/bin/env python3
"""Four Gibbs samplers for LDA written out plainly (numba, float64, numpy's random numbers), to compare the topic
quality they reach per iteration on the quality bench's corpus, split and scoring (bench/lda/quality_bench.py):

  0  uncollapsed with posterior means: z from theta * phi, theta and phi the means of the last sweep's counts
     (bfly-lda --estimate mean)
  1  synchronous collapsed: every token from the last sweep's counts with itself left out
     (bfly-lda --estimate collapsed)
  2  uncollapsed with Dirichlet draws of theta and phi (bfly-lda --estimate draw)
  3  serial collapsed Gibbs: each token from the current counts, updated token by token (tomotopy's sampler)

Independent of bfly's code: it checks that the synchronous collapsed sweep mixes about as fast per iteration as the
serial one, and is the expectation the GPU runs are held to. At checkpoints 25, 50, 100, ... it prints the held-out
perplexity / NPMI of the last sweep's phi (posterior mean) and of phi averaged since the previous checkpoint
(the last half of the iterations, as bfly-lda's --average-last auto).

    bench/lda/sampler_prototype.py wordnet wordnet-glosses.txt 64 1 1600 --bfly-lda build/tools/bfly-lda/bfly-lda

One sweep at K = 64 on the 748k training tokens of the WordNet glosses takes about 0.2 s on one core (K = 1024:
about 3.5 s). Needs numpy, scipy and numba (pip).
"""
import argparse
import os
import sys
import tempfile
import time

import numba as nb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality_bench as qb  # noqa: E402  the corpus preparation and the scoring of the quality bench


@nb.njit(cache=True)
def sweep(mode, doc_start, words, z, ndk, nwk, nk, theta, phi, alpha, beta, V, uniforms, z_new):
    D, K = len(doc_start) - 1, ndk.shape[1]
    prefix = np.empty(K)
    for d in range(D):
        for i in range(doc_start[d], doc_start[d + 1]):
            w, own = words[i], z[i]
            if mode == 3:  # serial: the token leaves the counts, is drawn, and enters them again
                ndk[d, own] -= 1
                nwk[w, own] -= 1
                nk[own] -= 1
            total = 0.0
            for k in range(K):
                if mode == 0 or mode == 2:
                    weight = theta[d, k] * phi[w, k]
                else:
                    left_out = 1.0 if (mode == 1 and k == own) else 0.0
                    weight = (ndk[d, k] - left_out + alpha) * (nwk[w, k] - left_out + beta) / (nk[k] - left_out + V * beta)
                total += weight
                prefix[k] = total
            target = uniforms[i] * total
            k = 0
            while k < K - 1 and prefix[k] <= target:
                k += 1
            z_new[i] = k
            if mode == 3:
                ndk[d, k] += 1
                nwk[w, k] += 1
                nk[k] += 1


@nb.njit(cache=True)
def count(doc_start, words, z, ndk, nwk, nk):
    ndk[:] = 0
    nwk[:] = 0
    nk[:] = 0
    for d in range(len(doc_start) - 1):
        for i in range(doc_start[d], doc_start[d + 1]):
            ndk[d, z[i]] += 1
            nwk[words[i], z[i]] += 1
            nk[z[i]] += 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name")
    p.add_argument("text", help="the corpus, one document per line")
    p.add_argument("topics", type=int)
    p.add_argument("mode", type=int, choices=[0, 1, 2, 3])
    p.add_argument("iterations", type=int)
    p.add_argument("--bfly-lda", required=True, help="bfly-lda, which tokenises the corpus as the bench does")
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--beta", type=float, default=0.01)
    args = p.parse_args()
    K, alpha, beta = args.topics, args.alpha, args.beta
    with tempfile.TemporaryDirectory() as work:
        corpus = qb.prepare(args.name, args.text, args.bfly_lda, work, 0.1, 1)
    scorer = qb.Scorer(corpus, alpha)
    train, V = corpus["train"], len(corpus["words"])
    lengths = np.array([len(d) for d in train])
    doc_start = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    words = np.concatenate(train).astype(np.int64)
    rng = np.random.default_rng(1)
    z = rng.integers(0, K, len(words)).astype(np.int64)
    z_new = np.empty_like(z)
    ndk, nwk, nk = np.zeros((len(train), K), np.int64), np.zeros((V, K), np.int64), np.zeros(K, np.int64)
    count(doc_start, words, z, ndk, nwk, nk)
    theta, phi = np.zeros((len(train), K)), np.zeros((V, K))
    checkpoints = {c for c in (25, 50, 100, 200, 400, 800, 1600, 3200) if c <= args.iterations}
    summed, averaged, start = np.zeros((V, K)), 0, time.time()
    for it in range(1, args.iterations + 1):
        if args.mode == 0:
            theta = (ndk + alpha) / (lengths[:, None] + K * alpha)
            phi = (nwk + beta) / (nk + V * beta)
        elif args.mode == 2:
            g = rng.gamma(ndk + alpha)
            theta = g / g.sum(1, keepdims=True)
            g = rng.gamma(nwk + beta)
            phi = g / g.sum(0, keepdims=True)
        sweep(args.mode, doc_start, words, z, ndk, nwk, nk, theta, phi, alpha, beta, V, rng.random(len(words)), z_new)
        z, z_new = z_new, z
        count(doc_start, words, z, ndk, nwk, nk)
        mean_phi = (nwk + beta) / (nk + V * beta)
        summed += mean_phi
        averaged += 1
        if it in checkpoints:
            print(f"{args.name} K={K} mode={args.mode} it={it} current {scorer.perplexity(mean_phi):.0f} / "
                  f"{scorer.npmi(mean_phi):.3f}  avg-window {scorer.perplexity(summed / averaged):.0f} / "
                  f"{scorer.npmi(summed / averaged):.3f}  ({time.time() - start:.0f}s)", flush=True)
            summed[:] = 0
            averaged = 0


if __name__ == "__main__":
    main()
