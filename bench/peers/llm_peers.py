#!/usr/bin/env python3
"""PyTorch's samplers at LLM-vocabulary shapes, run by hand beside `bfly-bench --llm` (docs/DESIGN.md section 12).

For each element type, K (vocabulary) and M (rows, the batch of a decoding step), one draw per row:

  torch.multinomial          torch.multinomial(p, 1) on probabilities p (rows of softmax output)
  torch.softmax-multinomial  torch.multinomial(softmax(logits, -1), 1): what a sampler holding logits runs
  torch.gumbel-argmax        argmax(logits + Gumbel noise, -1), the same distribution without normalising

Inputs are fresh random rows; every timed call reads another slice of a pool of about 256 MB per input (more than
five times an H100's 50 MB L2), so the weights come from DRAM as they would in a model, and bytes are the weights
read once (M * K * itemsize). Timing: CUDA events around each call, median of --runs after --warmup. The read
ceiling comes from bfly-bench's CSV (--read-ceiling-csv); without one, torch.sum over 1 GiB gives it, with a
warning. Writes <out-dir>/<device>-<date>-llm-peers.csv with bfly-bench's columns. Needs torch with CUDA; it
takes about a minute on an H100:

  python3 bench/peers/llm_peers.py --read-ceiling-csv bench/results/<device>-<date>-sampling.csv
"""
import argparse
import csv
import datetime
import os
import statistics
import sys

from peers import COLUMNS, device_slug, read_ceiling_from_csv

DEFAULT_K = [32000, 50257, 128256, 262144]
DEFAULT_M = [1, 4, 16, 64, 256]
PEERS = ["torch.multinomial", "torch.softmax-multinomial", "torch.gumbel-argmax"]
POOL_BYTES = 256 << 20


def samplers(torch):
    def multinomial(probabilities, logits):
        return torch.multinomial(probabilities, 1)

    def softmax_multinomial(probabilities, logits):
        return torch.multinomial(torch.softmax(logits, dim=-1), 1)

    def gumbel_argmax(probabilities, logits):
        gumbel = -torch.empty_like(logits).exponential_().log()
        return torch.argmax(logits + gumbel, dim=-1)

    return {"torch.multinomial": multinomial, "torch.softmax-multinomial": softmax_multinomial,
            "torch.gumbel-argmax": gumbel_argmax}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--K", default=",".join(map(str, DEFAULT_K)))
    parser.add_argument("--M", default=",".join(map(str, DEFAULT_M)))
    parser.add_argument("--types", default="f32,bf16,f16")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--read-ceiling-csv", help="bfly-bench's sampling CSV (its read_ceiling_gbps is used)")
    parser.add_argument("--out-dir", default="bench/results")
    args = parser.parse_args()
    Ks = [int(k) for k in args.K.split(",") if k]
    Ms = [int(m) for m in args.M.split(",") if m]
    types = [t for t in args.types.split(",") if t]
    peers = [p for p in args.peers.split(",") if p]
    for p in peers:
        if p not in PEERS:
            parser.error(f"unknown peer {p}; allowed: {', '.join(PEERS)}")

    import torch
    if not torch.cuda.is_available():
        sys.exit("llm_peers.py: no CUDA device visible to torch")
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}
    device = torch.cuda.get_device_name(0)
    read_gbps, date = read_ceiling_from_csv(args.read_ceiling_csv)
    if read_gbps is None:
        x = torch.rand((1 << 30) // 4, device="cuda")
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(10):
            start.record()
            x.sum()
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop))
        read_gbps = (1 << 30) / (statistics.median(times) * 1e6)
        del x
        print(f"WARNING: no bfly-bench CSV; read ceiling from torch.sum: {read_gbps:.1f} GB/s (weaker than "
              f"bfly-bench's, so fractions come out higher)", flush=True)
    date = date or datetime.date.today().isoformat()
    print(f"device {device}, date {date}, read ceiling {read_gbps:.1f} GB/s", flush=True)

    functions = samplers(torch)
    results = []
    for type_name in types:
        dtype = dtypes[type_name]
        itemsize = torch.empty((), dtype=dtype).element_size()
        for K in Ks:
            for M in Ms:
                slices = max(2, POOL_BYTES // (M * K * itemsize))
                logits = torch.randn((slices, M, K), dtype=dtype, device="cuda") * 3
                probabilities = torch.softmax(logits.float(), dim=-1).to(dtype)
                for name in peers:
                    fn = functions[name]
                    draws = fn(probabilities[0], logits[0])
                    lo, hi = int(draws.min()), int(draws.max())
                    if lo < 0 or hi >= K:
                        raise RuntimeError(f"{name} drew outside [0, {K}): {lo} .. {hi}")
                    for i in range(args.warmup):
                        fn(probabilities[i % slices], logits[i % slices])
                    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.runs)]
                    stops = [torch.cuda.Event(enable_timing=True) for _ in range(args.runs)]
                    for i in range(args.runs):
                        s = (args.warmup + i) % slices
                        starts[i].record()
                        fn(probabilities[s], logits[s])
                        stops[i].record()
                    torch.cuda.synchronize()
                    ms = statistics.median(a.elapsed_time(b) for a, b in zip(starts, stops))
                    gbps = M * K * itemsize / (ms * 1e6)
                    results.append((name, type_name, K, M, ms, gbps))
                    print(f"  {type_name:<4} K={K:<6} M={M:<4} {name:<26} {ms * 1e3:9.1f} us {gbps:8.1f} GB/s "
                          f"{gbps / read_gbps:6.3f} of read", flush=True)
                del logits, probabilities
                torch.cuda.empty_cache()

    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, f"{device_slug(device)}-{date}-llm-peers.csv")
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for name, type_name, K, M, ms, gbps in results:
            writer.writerow([device.replace(",", " "), date, name, type_name, K, M, "", "", f"{ms:.5f}", f"{gbps:.2f}",
                             f"{read_gbps:.2f}", f"{gbps / read_gbps:.4f}"])
    print(f"wrote {path} ({len(results)} points)", flush=True)


if __name__ == "__main__":
    main()
