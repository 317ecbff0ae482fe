#!/usr/bin/env python3
"""Log-likelihood per token against wall-clock seconds: bfly-lda on the GPU vs tomotopy (collapsed Gibbs, CPU) on
the same tokens (a UCI corpus written by `bfly-lda --save-corpus`), the same K and the same fixed priors.

Both report the collapsed log p(w, z | alpha, beta) per token (lda/include/bfly/lda/reference.hpp: tomotopy's
ll_per_word with optim_interval = 0). bfly-lda's seconds are its loglik.csv train_seconds (iterations only, after
the corpus upload and kernel compilation); tomotopy's are the wall clock of its train() calls, initialisation
included. Writes <out-dir>/<device>-<date>-lda-vs-tomotopy.csv (system,seconds,iteration,ll_per_token) and .png.

    bench/lda/tomotopy_compare.py --docword DIR/docword.txt --vocab DIR/vocab.txt --bfly-lda build/.../bfly-lda
"""
import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time


def read_uci(docword, vocab):
    words = [line.rstrip("\n") for line in open(vocab)]
    docs = []
    with open(docword) as f:
        D, _, _ = (int(f.readline()) for _ in range(3))
        docs = [[] for _ in range(D)]
        for line in f:
            d, w, n = line.split()
            docs[int(d) - 1].extend([words[int(w) - 1]] * int(n))
    return [d for d in docs if d]


def run_bfly(args, work):
    out = os.path.join(work, "bfly")
    command = [args.bfly_lda, "--docword", args.docword, "--vocab", args.vocab, "--topics", str(args.topics),
               "--alpha", str(args.alpha), "--beta", str(args.beta), "--iterations", str(args.bfly_iterations),
               "--device", args.bfly_device, "--quiet", "--show-topics", "5", "--seed", "1", "--out", out]
    if args.bfly_device == "cpu":
        command += ["--cpu-zstep", "reference"]  # the fast CPU z-step (the generated kernel's CPU run is a check)
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)
    rows = list(csv.DictReader(open(os.path.join(out, "loglik.csv"))))
    return [(float(r["train_seconds"]), int(r["iteration"]), float(r["ll_per_token"])) for r in rows]


def run_tomotopy(args, docs):
    import tomotopy as tp
    model = tp.LDAModel(k=args.topics, alpha=args.alpha, eta=args.beta, seed=1, min_cf=0, rm_top=0)
    for d in docs:
        model.add_doc(d)
    model.optim_interval = 0  # fixed priors, as bfly-lda's
    points = []
    start = time.perf_counter()
    model.train(0, workers=args.workers)  # initialisation
    iterations = 0
    points.append((time.perf_counter() - start, 0, model.ll_per_word))
    while time.perf_counter() - start < args.seconds:
        model.train(args.tomotopy_step, workers=args.workers)
        iterations += args.tomotopy_step
        points.append((time.perf_counter() - start, iterations, model.ll_per_word))
        print(f"tomotopy: {iterations:5d} iterations, {points[-1][0]:7.2f} s, ll/token {points[-1][2]:.5f}",
              flush=True)
    print(f"tomotopy {tp.__version__} ({tp.isa}), {args.workers} workers")
    return points


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docword", required=True)
    parser.add_argument("--vocab", required=True)
    parser.add_argument("--bfly-lda", required=True, help="the bfly-lda executable")
    parser.add_argument("--bfly-device", default="gpu")
    parser.add_argument("--bfly-iterations", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=64)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--beta", type=float, default=0.01)
    parser.add_argument("--seconds", type=float, default=60, help="tomotopy's time budget")
    parser.add_argument("--tomotopy-step", type=int, default=5, help="iterations per train() call")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--device-name", default=None, help="for the file name (default: nvidia-smi's)")
    parser.add_argument("--out-dir", default="bench/results")
    args = parser.parse_args()

    device = args.device_name
    if device is None:
        try:
            name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                  text=True).stdout.splitlines()[0]
            device = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-").removeprefix("nvidia-")
        except Exception:
            device = "cpu"
    date = datetime.date.today().isoformat()
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, f"{device}-{date}-lda-vs-tomotopy")

    with tempfile.TemporaryDirectory() as work:
        bfly = run_bfly(args, work)
    docs = read_uci(args.docword, args.vocab)
    print(f"tomotopy: {len(docs)} documents, {sum(map(len, docs))} tokens", flush=True)
    tomo = run_tomotopy(args, docs)

    with open(stem + ".csv", "w") as f:
        f.write("system,seconds,iteration,ll_per_token\n")
        for s, i, ll in bfly:
            f.write(f"bfly-lda-{args.bfly_device},{s:.6f},{i},{ll:.9g}\n")
        for s, i, ll in tomo:
            f.write(f"tomotopy-cpu{args.workers},{s:.6f},{i},{ll:.9g}\n")
    print(f"wrote {stem}.csv")

    def at(points, seconds):  # the last value reached by `seconds`
        reached = [ll for s, _, ll in points if s <= seconds]
        return reached[-1] if reached else float("nan")

    print(f"\n{'seconds':>8} {'bfly-lda':>10} {'tomotopy':>10}")
    for seconds in (0.5, 1, 2, 5, 10, 30, 60):
        print(f"{seconds:8.1f} {at(bfly, seconds):10.4f} {at(tomo, seconds):10.4f}")
    print(f"bfly-lda: {bfly[-1][1]} iterations in {bfly[-1][0]:.2f} s, final ll/token {bfly[-1][2]:.4f}")
    print(f"tomotopy: {tomo[-1][1]} iterations in {tomo[-1][0]:.2f} s, final ll/token {tomo[-1][2]:.4f}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: skipping the PNG")
        return 0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in ((f"bfly-lda ({args.bfly_device})", bfly), (f"tomotopy (CPU, {args.workers} workers)", tomo)):
        points = [p for p in points if p[0] > 0]
        ax.plot([p[0] for p in points], [p[2] for p in points], marker=".", markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("wall-clock seconds of training")
    ax.set_ylabel("log-likelihood per token")
    ax.set_title(f"K = {args.topics}, alpha = {args.alpha}, beta = {args.beta}, {device} ({date})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(stem + ".png", dpi=120)
    print(f"wrote {stem}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
