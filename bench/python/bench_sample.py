#!/usr/bin/env python3
"""bfly.sample from Python against torch.multinomial and torch.distributions.Categorical, in one process on one
GPU, and the overhead of one bfly.sample call against the same Sampler call made from C++.

1. Throughput: for each element type and K, M rows of fresh random weights in [0.01, 1) (about --megabytes of
   weights), one draw per row:
     bfly.sample            bfly.sample(w, seed=s, offset=i, out=out)
     torch.multinomial      torch.multinomial(w, 1)
     torch.Categorical      torch.distributions.Categorical(probs=w, validate_args=False).sample()
   Each call is timed with CUDA events on the current stream, after warm-up; the median of --runs is reported
   with the rate in GB/s of weights read. f16 and bf16 run for bfly only (torch.multinomial rejects them).
2. Several draws per row and logits (f32, --draws-K, about --megabytes / 4 of weights, --draws draws per row):
     bfly.sample(w, n, replacement=r)        torch.multinomial(w, n, replacement=r)       r = True and False
     bfly.sample_logits(x, temperature=0.7)  torch.multinomial(torch.softmax(x / 0.7, -1), 1)
3. Overhead on small inputs (M rows of K = 16, M in --overhead-rows): --calls back-to-back calls of
   bfly.sample(w, seed=1, offset=i, out=out) from Python (and without out=: the draws allocated by PyTorch),
   against bfly's C++ Sampler::sample called the same number of times from C++ on the same arrays and stream
   (bfly._bfly.time_cpp_calls: an enqueue-only Sampler), and bfly.sample's own C++ launch path (its kernel cache
   and the launch, without the Python call and the checks) called from C++. Reported per call: the host time to enqueue, and the wall
   time until the stream is done. The difference of the enqueue times is what the Python layer adds (target:
   within 10 us). --parts picks the parts (all three by default, overhead first).

Writes <out-dir>/<device>-<date>-python-sample.csv and prints the tables.
"""
import argparse
import csv
import datetime
import os
import re
import statistics
import sys
import time

import torch

import bfly
from bfly import _bfly

TYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}


def device_slug(name):
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[len("nvidia-"):] if slug.startswith("nvidia-") else slug or "gpu"


def time_calls(fn, runs, warmup=3):
    """Median milliseconds of fn() over `runs` calls, each between two CUDA events on the current stream."""
    for i in range(warmup):
        fn(i)
    times = []
    for i in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(warmup + i)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def time_or_skip(fn, runs, name, K, M):
    """time_calls(fn, runs), or None (with a warning) when the candidate runs out of GPU memory at this shape."""
    try:
        return time_calls(fn, runs)
    except torch.cuda.OutOfMemoryError:
        print(f"warning: {name} ran out of memory at K = {K}, M = {M}; skipped", file=sys.stderr)
        torch.cuda.empty_cache()
        return None


def throughput(args, writer, device, date):
    print(f"\n{'type':5} {'K':>6} {'M':>9} {'algorithm':22} {'median ms':>10} {'GB/s':>8}")
    for type_name in args.types:
        dtype = TYPES[type_name]
        for K in args.K:
            itemsize = torch.empty((), dtype=dtype).element_size()
            M = max(1, int(args.megabytes * 1e6) // (K * itemsize))
            w = (torch.rand(M, K, device="cuda") * 0.99 + 0.01).to(dtype)
            out = torch.empty(M, dtype=torch.int32, device="cuda")
            candidates = {"bfly.sample": lambda i: bfly.sample(w, seed=12345, offset=i, out=out)}
            if type_name in ("f32", "f64"):
                candidates["torch.multinomial"] = lambda i: torch.multinomial(w, 1)
                candidates["torch.Categorical"] = (
                    lambda i: torch.distributions.Categorical(probs=w, validate_args=False).sample())
            for name, fn in candidates.items():
                ms = time_or_skip(fn, args.runs, name, K, M)
                if ms is None:
                    continue
                gbps = M * K * itemsize / (ms * 1e-3) / 1e9
                print(f"{type_name:5} {K:6d} {M:9d} {name:22} {ms:10.4f} {gbps:8.1f}")
                writer.writerow(dict(device=device, date=date, part="throughput", algorithm=name, type=type_name,
                                     K=K, M=M, calls="", median_ms=f"{ms:.5f}", gbps=f"{gbps:.2f}",
                                     enqueue_us="", wall_us=""))
            del w, out
            torch.cuda.empty_cache()


def draws(args, writer, device, date):
    print(f"\n{'K':>6} {'M':>9} {'n':>3} {'form':28} {'algorithm':22} {'median ms':>10}")
    for K in args.draws_K:
        M = max(1, int(args.megabytes / 4 * 1e6) // (K * 4))
        w = torch.rand(M, K, device="cuda") * 0.99 + 0.01
        x = torch.randn(M, K, device="cuda")
        n = min(args.draws, K)
        forms = {
            f"{n} with replacement": {
                "bfly.sample": lambda i: bfly.sample(w, n, seed=1, offset=i),
                "torch.multinomial": lambda i: torch.multinomial(w, n, replacement=True)},
            f"{n} without replacement": {
                "bfly.sample": lambda i: bfly.sample(w, n, replacement=False, seed=1, offset=i),
                "torch.multinomial": lambda i: torch.multinomial(w, n, replacement=False)},
            "1 from logits, T = 0.7": {
                "bfly.sample_logits": lambda i: bfly.sample_logits(x, temperature=0.7, seed=1, offset=i),
                "softmax + multinomial": lambda i: torch.multinomial(torch.softmax(x / 0.7, -1), 1)},
        }
        for form, candidates in forms.items():
            for name, fn in candidates.items():
                ms = time_or_skip(fn, args.runs, name, K, M)
                if ms is None:
                    continue
                print(f"{K:6d} {M:9d} {n:3d} {form:28} {name:22} {ms:10.4f}")
                writer.writerow(dict(device=device, date=date, part=f"draws: {form}", algorithm=name, type="f32",
                                     K=K, M=M, calls="", median_ms=f"{ms:.5f}", gbps="", enqueue_us="", wall_us=""))
        del w, x
        torch.cuda.empty_cache()


def overhead(args, writer, device, date):
    print(f"\n{'M':>6} {'K':>4} {'calls':>7} {'caller':28} {'enqueue us/call':>16} {'wall us/call':>13}")
    stream = torch.cuda.current_stream().cuda_stream
    for M in args.overhead_rows:
        K = 16
        w = torch.rand(M, K, device="cuda") + 0.01
        out = torch.empty(M, dtype=torch.int32, device="cuda")
        results = {}
        for repeat in range(args.repeats):
            bfly.sample(w, seed=1, out=out)
            torch.cuda.synchronize()
            start = time.perf_counter()
            for i in range(args.calls):
                bfly.sample(w, seed=1, offset=i, out=out)
            enqueued = time.perf_counter()
            torch.cuda.synchronize()
            done = time.perf_counter()
            python = ((enqueued - start) / args.calls, (done - start) / args.calls)
            start = time.perf_counter()
            for i in range(args.calls):
                bfly.sample(w, seed=1, offset=i)
            enqueued = time.perf_counter()
            torch.cuda.synchronize()
            done = time.perf_counter()
            allocating = ((enqueued - start) / args.calls, (done - start) / args.calls)
            cpp = _bfly.time_cpp_calls(w.data_ptr(), "f32", M, K, K, out.data_ptr(), stream, args.calls)
            cpp_launch = _bfly.time_cpp_calls(w.data_ptr(), "f32", M, K, K, out.data_ptr(), stream, args.calls,
                                              path="launch")
            torch.multinomial(w, 1)
            torch.cuda.synchronize()
            start = time.perf_counter()
            for i in range(args.calls):
                torch.multinomial(w, 1)
            enqueued = time.perf_counter()
            torch.cuda.synchronize()
            done = time.perf_counter()
            multinomial = ((enqueued - start) / args.calls, (done - start) / args.calls)
            for name, value in (("bfly.sample (Python)", python), ("bfly.sample, no out=", allocating),
                                ("Sampler::sample (C++)", cpp), ("bfly.sample's launch (C++)", cpp_launch),
                                ("torch.multinomial", multinomial)):
                results.setdefault(name, []).append(value)
        for name, values in results.items():
            enqueue = statistics.median(v[0] for v in values) * 1e6
            wall = statistics.median(v[1] for v in values) * 1e6
            print(f"{M:6d} {K:4d} {args.calls:7d} {name:28} {enqueue:16.2f} {wall:13.2f}")
            writer.writerow(dict(device=device, date=date, part="overhead", algorithm=name, type="f32", K=K, M=M,
                                 calls=args.calls, median_ms="", gbps="", enqueue_us=f"{enqueue:.3f}",
                                 wall_us=f"{wall:.3f}"))
        python_us = statistics.median(v[0] for v in results["bfly.sample (Python)"]) * 1e6
        cpp_us = statistics.median(v[0] for v in results["Sampler::sample (C++)"]) * 1e6
        print(f"{'':6} {'':4} {'':7} {'Python - C++ (Sampler)':28} {python_us - cpp_us:16.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--types", nargs="+", default=["f32", "f64", "f16", "bf16"], choices=list(TYPES))
    parser.add_argument("--K", nargs="+", type=int, default=[16, 64, 256, 1024, 4096])
    parser.add_argument("--megabytes", type=float, default=256, help="weights per point (default 256 MB)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--draws-K", nargs="+", type=int, default=[1024, 32768])
    parser.add_argument("--draws", type=int, default=16, help="draws per row in the draws part (at most 64)")
    parser.add_argument("--parts", nargs="+", default=["overhead", "throughput", "draws"],
                        choices=["overhead", "throughput", "draws"])
    parser.add_argument("--overhead-rows", nargs="+", type=int, default=[1, 1024])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out-dir", default=os.environ.get("OUT", "bench/results"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_sample.py: PyTorch sees no CUDA device")
    name = torch.cuda.get_device_name()
    device, date = device_slug(name), datetime.date.today().isoformat()
    print(f"device {name}; torch {torch.__version__}; bfly {bfly.__version__}")
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, f"{device}-{date}-python-sample.csv")
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["device", "date", "part", "algorithm", "type", "K", "M", "calls",
                                               "median_ms", "gbps", "enqueue_us", "wall_us"])
        writer.writeheader()
        for part in args.parts:
            {"overhead": overhead, "throughput": throughput, "draws": draws}[part](args, writer, device, date)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
