#!/usr/bin/env python3
"""What users would pick instead of bfly, timed on the shapes bfly-bench uses (docs/DESIGN.md section 8).

For each element type and K: M = ceil(min_bytes / (K * itemsize)) rows of fresh random weights in [0.01, 1),
two input buffers (alternated, so that L2 cannot serve a run from the previous one), one draw per row:

  torch.multinomial          torch.multinomial(w, 1)
  torch.cumsum-searchsorted  c = cumsum(w, 1); searchsorted(c, rand * c[:, -1:], right=True)
  torch.gumbel-argmax        argmax(log w + Gumbel noise, 1)
  jax.random.categorical     jax.random.categorical(key, log w, axis=-1) under jit

torch is timed with CUDA events around each call, jax with a host clock around each call and
block_until_ready; both after warm-up, median of --runs. The read ceiling comes from bfly-bench's CSV
(--read-ceiling-csv), measured in its process on the same device; without it, torch.sum over the same bytes
is used and a warning says so. Writes <out-dir>/<device>-<date>-peers.csv with bfly-bench's columns
(W and variant empty). A point that runs out of memory is skipped with a warning.
"""
import argparse
import csv
import datetime
import os
import re
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # torch and jax share the GPU in one process

COLUMNS = ["device", "date", "algorithm", "type", "K", "M", "W", "variant", "median_ms", "gbps",
           "read_ceiling_gbps", "fraction_of_read_ceiling"]
DEFAULT_K = [16, 32, 64, 71, 128, 256, 512, 1000, 1024, 2048, 4096, 4097]
PEERS = ["torch.multinomial", "torch.cumsum-searchsorted", "torch.gumbel-argmax", "jax.random.categorical"]


def device_slug(name):
    """'NVIDIA H100 80GB HBM3' -> 'h100-80gb-hbm3' (as bfly-bench names its CSV)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if slug.startswith("nvidia-"):
        slug = slug[len("nvidia-"):]
    return slug or "gpu"


def rows_for(K, itemsize, min_bytes):
    return (min_bytes + K * itemsize - 1) // (K * itemsize)


def is_oom(error):
    text = str(error)
    return "out of memory" in text.lower() or "RESOURCE_EXHAUSTED" in text


def read_ceiling_from_csv(path):
    """(read ceiling GB/s, date) from a bfly-bench CSV, or (None, None)."""
    if not path or not os.path.exists(path):
        return None, None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("read_ceiling_gbps"):
                return float(row["read_ceiling_gbps"]), row.get("date")
    return None, None


def time_torch(torch, fn, buffers, warmup, runs):
    for i in range(warmup):
        fn(buffers[i % 2])
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        starts[i].record()
        fn(buffers[(warmup + i) % 2])
        stops[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, stops))


def check_range(draws, K, name):
    lo, hi = int(draws.min()), int(draws.max())
    if lo < 0 or hi >= K:
        raise RuntimeError(f"{name} drew outside [0, {K}): min {lo}, max {hi}")


def torch_peers(torch, K):
    def multinomial(w):
        return torch.multinomial(w, 1)

    def cumsum_searchsorted(w):
        c = torch.cumsum(w, dim=1)
        u = torch.rand((w.shape[0], 1), dtype=w.dtype, device=w.device) * c[:, -1:]
        return torch.searchsorted(c, u, right=True).clamp_(max=K - 1)

    def gumbel_argmax(w):
        gumbel = -torch.empty_like(w).exponential_().log()
        return torch.argmax(w.log() + gumbel, dim=1)

    return {"torch.multinomial": multinomial, "torch.cumsum-searchsorted": cumsum_searchsorted,
            "torch.gumbel-argmax": gumbel_argmax}


def run_torch(args, results, read_gbps):
    import torch
    wanted = [p for p in PEERS if p.startswith("torch.") and p in args.peers]
    if not wanted:
        return
    for type_name in args.types:
        dtype = {"f32": torch.float32, "f64": torch.float64}[type_name]
        itemsize = 4 if type_name == "f32" else 8
        for K in args.K:
            M = rows_for(K, itemsize, args.min_bytes)
            try:
                buffers = [torch.rand((M, K), dtype=dtype, device="cuda").mul_(0.99).add_(0.01) for _ in range(2)]
            except Exception as error:  # noqa: BLE001 - OOM surfaces as RuntimeError subclasses
                if not is_oom(error):
                    raise
                print(f"WARNING: {type_name} K={K}: no memory for the inputs; skipped", flush=True)
                torch.cuda.empty_cache()
                continue
            peers = torch_peers(torch, K)
            for name in wanted:
                try:
                    check_range(peers[name](buffers[0]), K, name)
                    ms = time_torch(torch, peers[name], buffers, args.warmup, args.runs)
                except Exception as error:  # noqa: BLE001
                    if not is_oom(error):
                        raise
                    print(f"WARNING: {name} {type_name} K={K} M={M}: out of memory; point skipped", flush=True)
                    torch.cuda.empty_cache()
                    continue
                record(results, name, type_name, K, M, itemsize, ms, read_gbps)
            del buffers
            torch.cuda.empty_cache()


def run_jax(args, results, read_gbps):
    if "jax.random.categorical" not in args.peers:
        return
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # f64 weights

    @jax.jit
    def categorical(key, w):
        return jax.random.categorical(key, jnp.log(w), axis=-1)

    for type_name in args.types:
        dtype = {"f32": jnp.float32, "f64": jnp.float64}[type_name]
        itemsize = 4 if type_name == "f32" else 8
        for K in args.K:
            M = rows_for(K, itemsize, args.min_bytes)
            name = "jax.random.categorical"
            try:
                keys = jax.random.split(jax.random.PRNGKey(K * 8 + itemsize), args.warmup + args.runs + 2)
                buffers = [jax.random.uniform(keys[i], (M, K), dtype=dtype, minval=0.01, maxval=1.0)
                           for i in range(2)]
                draws = categorical(keys[2], buffers[0]).block_until_ready()  # compiles for this shape
                check_range(draws, K, name)
                times = []
                for i in range(args.warmup + args.runs):
                    start = time.perf_counter()
                    categorical(keys[i + 2], buffers[i % 2]).block_until_ready()
                    if i >= args.warmup:
                        times.append((time.perf_counter() - start) * 1e3)
                ms = statistics.median(times)
            except Exception as error:  # noqa: BLE001
                if not is_oom(error):
                    raise
                print(f"WARNING: {name} {type_name} K={K} M={M}: out of memory; point skipped", flush=True)
                continue
            finally:
                buffers = None
            record(results, name, type_name, K, M, itemsize, ms, read_gbps)


def record(results, name, type_name, K, M, itemsize, ms, read_gbps):
    gbps = M * K * itemsize / (ms * 1e6)
    results.append({"algorithm": name, "type": type_name, "K": K, "M": M, "median_ms": ms, "gbps": gbps})
    print(f"  {type_name} K={K:<5} {name:<26} {ms:9.4f} ms {gbps:8.1f} GB/s {gbps / read_gbps:6.3f} of read",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--K", default=",".join(map(str, DEFAULT_K)), help="comma-separated K values")
    parser.add_argument("--types", default="f32,f64")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of " + ",".join(PEERS))
    parser.add_argument("--min-bytes", type=int, default=1 << 30)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--read-ceiling-csv", help="bfly-bench's sampling CSV (its read_ceiling_gbps is used)")
    parser.add_argument("--out-dir", default="bench/results")
    args = parser.parse_args()
    args.K = [int(k) for k in args.K.split(",") if k]
    args.types = [t for t in args.types.split(",") if t]
    args.peers = [p for p in args.peers.split(",") if p]
    for p in args.peers:
        if p not in PEERS:
            parser.error(f"unknown peer {p}")

    import torch
    if not torch.cuda.is_available():
        sys.exit("peers.py: no CUDA device visible to torch")
    device = torch.cuda.get_device_name(0)
    read_gbps, date = read_ceiling_from_csv(args.read_ceiling_csv)
    if read_gbps is None:
        x = torch.rand(args.min_bytes // 4, device="cuda")
        y = torch.rand(args.min_bytes // 4, device="cuda")
        ms = time_torch(torch, lambda b: b.sum(), [x, y], args.warmup, args.runs)
        read_gbps = args.min_bytes / (ms * 1e6)
        del x, y
        torch.cuda.empty_cache()
        print(f"WARNING: no bfly-bench CSV ({args.read_ceiling_csv}); read ceiling from torch.sum: "
              f"{read_gbps:.1f} GB/s (weaker than bfly-bench's, so fractions come out higher)", flush=True)
    date = date or datetime.date.today().isoformat()
    print(f"device {device}, date {date}, read ceiling {read_gbps:.1f} GB/s", flush=True)

    results = []
    start = time.perf_counter()
    run_torch(args, results, read_gbps)
    import gc
    gc.collect()
    torch.cuda.empty_cache()  # give the cached blocks back before jax allocates
    run_jax(args, results, read_gbps)

    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, f"{device_slug(device)}-{date}-peers.csv")
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for r in results:
            writer.writerow([device.replace(",", " "), date, r["algorithm"], r["type"], r["K"], r["M"], "", "",
                             f"{r['median_ms']:.5f}", f"{r['gbps']:.2f}", f"{read_gbps:.2f}",
                             f"{r['gbps'] / read_gbps:.4f}"])
    print(f"wrote {path} ({len(results)} points in {time.perf_counter() - start:.0f} s)", flush=True)

    # Table: fraction of the read ceiling, rows K, columns peers, per type.
    for type_name in args.types:
        names = [p for p in PEERS if any(r["algorithm"] == p and r["type"] == type_name for r in results)]
        if not names:
            continue
        print(f"\n{type_name}: fraction of the read ceiling ({read_gbps:.0f} GB/s)")
        print(f"{'K':>6}" + "".join(f" {n[-22:]:>22}" for n in names))
        for K in args.K:
            cells = []
            for n in names:
                hit = [r for r in results if r["algorithm"] == n and r["type"] == type_name and r["K"] == K]
                cells.append(f" {hit[0]['gbps'] / read_gbps:>22.3f}" if hit else f" {'-':>22}")
            print(f"{K:>6}" + "".join(cells))


if __name__ == "__main__":
    main()
