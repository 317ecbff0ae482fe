#!/usr/bin/env python3
"""The LDA z-step as a PyTorch user would write it, on the same corpus as lda-bench: for every token, gather
theta[doc] * phi[word] (a tokens x K matrix, formed in chunks that fit in memory) and draw with torch.multinomial.

Appends rows `device,date,torch,type,K,tokens,zstep_ms,,mtokens_per_s,read_ceiling_gbps` to --csv (the columns of
lda-bench's CSV; iteration_ms is left empty). Times are medians of CUDA-event-timed runs after one warm-up.

    bench/lda/torch_zstep.py --docword DIR/docword.paper.txt --csv bench/results/h100-...-lda.csv --quick
"""
import argparse
import datetime
import os
import re
import statistics
import sys

import numpy as np
import torch


def read_docword(path):
    """UCI docword -> (doc id per token, word id per token), 0-based."""
    with open(path, "rb") as f:
        head = [int(f.readline()) for _ in range(3)]
        data = np.array(f.read().split(), dtype=np.int64).reshape(-1, 3)
    docs, words, counts = data[:, 0] - 1, data[:, 1] - 1, data[:, 2]
    return np.repeat(docs, counts), np.repeat(words, counts), head[0], head[1]


def device_slug(name):
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[len("nvidia-"):] if slug.startswith("nvidia-") else (slug or "gpu")


def zstep(theta, phi, docs, words, chunk, out, generator):
    for start in range(0, docs.numel(), chunk):
        end = min(start + chunk, docs.numel())
        weights = theta.index_select(0, docs[start:end]) * phi.index_select(0, words[start:end])
        out[start:end] = torch.multinomial(weights, 1, generator=generator).squeeze(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docword", required=True)
    parser.add_argument("--csv", required=True, help="lda-bench's CSV, to append to (created if absent)")
    parser.add_argument("--quick", action="store_true", help="K in {16, 64, 256, 1024}")
    parser.add_argument("--K", help="comma-separated K values (default: 4, 8, ..., 1024)")
    parser.add_argument("--types", default="f32,f64")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chunk-bytes", type=float, default=2**30, help="bytes of weights formed at once")
    parser.add_argument("--read-ceiling-gbps", type=float, default=None)
    args = parser.parse_args()

    Ks = [int(k) for k in args.K.split(",")] if args.K else ([16, 64, 256, 1024] if args.quick else
                                                              list(range(4, 1025, 4)))
    docs_np, words_np, D, V = read_docword(args.docword)
    dev = torch.device("cuda")
    docs = torch.from_numpy(docs_np).to(dev)
    words = torch.from_numpy(words_np).to(dev)
    tokens = docs.numel()
    name = device_slug(torch.cuda.get_device_name(0))
    date = datetime.date.today().isoformat()
    read_ceiling = args.read_ceiling_gbps
    if read_ceiling is None and os.path.exists(args.csv):  # take lda-bench's measurement
        with open(args.csv) as f:
            rows = [line.strip().split(",") for line in f.readlines()[1:] if line.strip()]
        read_ceiling = float(rows[0][9]) if rows else 0.0
    new = not os.path.exists(args.csv)
    out_file = open(args.csv, "a")
    if new:
        out_file.write("device,date,algorithm,type,K,tokens,zstep_ms,iteration_ms,mtokens_per_s,read_ceiling_gbps\n")
    generator = torch.Generator(device=dev)
    generator.manual_seed(2019)
    print(f"torch {torch.__version__}, {tokens} tokens, {D} documents, {V} words, device {name}", flush=True)
    for type_name in args.types.split(","):
        dtype = torch.float32 if type_name == "f32" else torch.float64
        for K in Ks:
            theta = torch.rand(D, K, device=dev, dtype=dtype, generator=generator) + 1e-3
            theta /= theta.sum(1, keepdim=True)
            phi = torch.rand(V, K, device=dev, dtype=dtype, generator=generator) + 1e-3
            phi /= phi.sum(0, keepdim=True)
            chunk = max(1, int(args.chunk_bytes // (K * theta.element_size())))
            z = torch.empty(tokens, dtype=torch.int64, device=dev)
            zstep(theta, phi, docs, words, chunk, z, generator)  # warm-up
            times = []
            for _ in range(args.runs):
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                zstep(theta, phi, docs, words, chunk, z, generator)
                stop.record()
                stop.synchronize()
                times.append(start.elapsed_time(stop))
            assert int(z.min()) >= 0 and int(z.max()) < K
            ms = statistics.median(times)
            out_file.write(f"{name},{date},torch,{type_name},{K},{tokens},{ms:.5f},,{tokens / ms * 1e-3:.2f},"
                           f"{read_ceiling or 0:.1f}\n")
            out_file.flush()
            print(f"torch {type_name} K={K:5d} z-step {ms:9.3f} ms {tokens / ms * 1e-3:8.1f} Mtok/s", flush=True)
            del theta, phi, z
            torch.cuda.empty_cache()
    out_file.close()


if __name__ == "__main__":
    sys.exit(main())
