#!/usr/bin/env python3
"""Topic quality against wall-clock seconds: bfly-lda (posterior-mean, draw and collapsed estimates) against tomotopy
(collapsed Gibbs, all CPU threads) and scikit-learn's LatentDirichletAllocation (online variational Bayes, all
CPU threads), on the same tokens, the same held-out documents and the same fixed priors.

For each corpus (plain text, one document per line) the tokens are bfly-lda's (`bfly-lda --text FILE --save-corpus`);
a seeded tenth of the documents is held out and the vocabulary is cut to the words of the training documents (the
CSV's `split` column, a hash of the training and held-out tokens, is the same in every run on the same corpus).
Every system trains on the rest; at checkpoints along its run, spaced about 2x (--growth) apart in training seconds
up to its budget (bfly-lda: one run continued with --resume from checkpoint to checkpoint, timed by loglik.csv's
train_seconds; tomotopy: train() calls; scikit-learn: partial_fit over mini-batches, the batches doubling), its
topic-word matrix phi is scored by one method for all:
  - held-out perplexity by document completion: each held-out document's even tokens fix theta (30 fixed-point
    fold-in steps theta <- alpha + theta * sum_w n_w phi_w / (theta . phi_w), phi fixed), its odd tokens are scored:
    exp(-sum log(theta . phi_w) / scored tokens);
  - NPMI of each topic's 10 most probable words over document co-occurrence in the training documents (-1 for a
    pair that never co-occurs), averaged over pairs and topics.
The seconds are training seconds only (scoring is not counted). bfly-lda's own Gibbs evaluation
(`bfly-lda evaluate`) of its last model is recorded too, in the column bfly_evaluate_perplexity.

One invocation may run one piece of the bench (a corpus, a K, a system) and writes its own CSV (or appends to
--csv with --append); bench/lda/quality_summary.py merges the pieces, writes the table and the plots:

    bench/lda/quality_bench.py --bfly-lda build/tools/bfly-lda/bfly-lda \\
        --corpus wordnet=wordnet-glosses.txt --topics 64 --systems tomotopy --seconds 300 --label h100-...
    bench/lda/quality_bench.py --bfly-lda build/tools/bfly-lda/bfly-lda --corpus wordnet=wordnet-glosses.txt \\
        --corpus kjv=kjv-chapters.txt --topics 64,1024 --systems bfly-lda-collapsed,bfly-lda-mean --bfly-seconds 5 ...
"""
import argparse
import concurrent.futures
import csv
import datetime
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FIELDS = ["corpus", "K", "system", "step", "train_seconds", "wall_seconds", "heldout_perplexity", "npmi",
          "ll_per_token", "bfly_evaluate_perplexity", "device", "split"]


# ---------------------------------------------------------------------------------------------------- corpus
def read_uci(docword, vocab):
    words = [line.rstrip("\n") for line in open(vocab)]
    with open(docword) as f:
        D, _, _ = (int(f.readline()) for _ in range(3))
        rows = np.loadtxt(f, dtype=np.int64, ndmin=2)
    docs = [[] for _ in range(D)]
    for d, w, n in rows:
        docs[d - 1].extend([w - 1] * int(n))
    return [np.array(d, dtype=np.int64) for d in docs if d], words


def write_uci(path_docword, path_vocab, docs, words):
    with open(path_docword, "w") as f:
        entries = []
        for m, doc in enumerate(docs):
            ids, counts = np.unique(doc, return_counts=True)
            entries.extend(f"{m + 1} {w + 1} {n}" for w, n in zip(ids, counts))
        f.write(f"{len(docs)}\n{len(words)}\n{len(entries)}\n")
        f.write("\n".join(entries) + "\n")
    with open(path_vocab, "w") as f:
        f.write("\n".join(words) + "\n")


def prepare(name, text, bfly_lda, work, heldout_fraction, seed):
    """bfly-lda's tokens, a held-out split, the vocabulary of the training part; UCI files for every system."""
    saved = os.path.join(work, name, "saved")
    subprocess.run([bfly_lda, "--text", text, "--save-corpus", saved], check=True, stdout=subprocess.DEVNULL)
    docs, words = read_uci(os.path.join(saved, "docword.txt"), os.path.join(saved, "vocab.txt"))
    rng = np.random.default_rng(seed)
    held = rng.random(len(docs)) < heldout_fraction
    train = [d for d, h in zip(docs, held) if not h]
    test = [d for d, h in zip(docs, held) if h]
    used = np.unique(np.concatenate(train))
    new_id = np.full(len(words), -1, dtype=np.int64)
    new_id[used] = np.arange(len(used))
    words = [words[w] for w in used]
    train = [new_id[d] for d in train]
    test = [t for t in (new_id[d][new_id[d] >= 0] for d in test) if len(t) >= 2]
    base = os.path.join(work, name)
    write_uci(os.path.join(base, "train.docword.txt"), os.path.join(base, "vocab.txt"), train, words)
    write_uci(os.path.join(base, "test.docword.txt"), os.path.join(base, "test.vocab.txt"), test, words)
    tokens = sum(len(d) for d in train)
    print(f"{name}: {len(train)} training documents ({tokens} tokens, {tokens / len(train):.1f} per document), "
          f"{len(test)} held-out documents, {len(words)} words", flush=True)
    return {"name": name, "train": train, "test": test, "words": words, "dir": base}


# --------------------------------------------------------------------------------------------------- scoring
class Scorer:
    """Held-out perplexity by document completion and NPMI over the training documents, for any phi (V x K)."""

    def __init__(self, corpus, alpha, fold_in_steps=30, max_test_docs=2000):
        test = corpus["test"][:max_test_docs]
        self.alpha = alpha
        self.steps = fold_in_steps
        obs_doc, obs_word, obs_count, self.scored_doc, self.scored_word = [], [], [], [], []
        for m, d in enumerate(test):
            ids, counts = np.unique(d[0::2], return_counts=True)
            obs_doc.append(np.full(len(ids), m))
            obs_word.append(ids)
            obs_count.append(counts)
            self.scored_doc.append(np.full(len(d[1::2]), m))
            self.scored_word.append(d[1::2])
        self.obs_doc, self.obs_word = np.concatenate(obs_doc), np.concatenate(obs_word)
        self.obs_count = np.concatenate(obs_count).astype(np.float64)
        self.obs_starts = np.flatnonzero(np.r_[True, np.diff(self.obs_doc) != 0])  # one per document
        self.scored_doc, self.scored_word = np.concatenate(self.scored_doc), np.concatenate(self.scored_word)
        self.D = len(test)
        try:  # rows of the observed entries summed per document: a sparse product (3x np.add.reduceat's speed)
            from scipy.sparse import csr_matrix
            entries = len(self.obs_doc)
            by_document = csr_matrix((np.ones(entries), (self.obs_doc, np.arange(entries))), shape=(self.D, entries))
            self.sum_per_document = lambda rows: by_document @ rows
        except ImportError:
            self.sum_per_document = lambda rows: np.add.reduceat(rows, self.obs_starts, axis=0)
        # Posting lists of the training documents: for word w, the documents that contain it.
        pair_doc = np.concatenate([np.full(len(u), m) for m, u in enumerate(np.unique(d) for d in corpus["train"])])
        pair_word = np.concatenate([np.unique(d) for d in corpus["train"]])
        order = np.argsort(pair_word, kind="stable")
        self.post_doc = pair_doc[order]
        self.post_start = np.searchsorted(pair_word[order], np.arange(len(corpus["words"]) + 1))
        self.train_docs = len(corpus["train"])

    def perplexity(self, phi):
        phi = np.asarray(phi, dtype=np.float64)
        K = phi.shape[1]
        P = phi[self.obs_word]  # observed (document, word) entries x K, grouped by document
        theta = np.full((self.D, K), 1.0 / K)
        for _ in range(self.steps):
            weight = self.obs_count / np.maximum(np.einsum("ij,ij->i", theta[self.obs_doc], P), 1e-300)
            theta = self.alpha + theta * self.sum_per_document(P * weight[:, None])
            theta /= theta.sum(axis=1, keepdims=True)
        p = np.einsum("ij,ij->i", theta[self.scored_doc], phi[self.scored_word])
        return math.exp(-np.log(np.maximum(p, 1e-300)).sum() / len(self.scored_doc))

    def npmi(self, phi, top=10):
        top_words = top_word_sets(phi, top)  # K x top
        used, row = np.unique(top_words, return_inverse=True)
        row = row.reshape(top_words.shape)
        # The training documents of each top word as a bitset; a pair's co-occurrences are the bits of an AND.
        present = np.zeros(self.train_docs, dtype=bool)
        bitsets = np.empty((len(used), (self.train_docs + 7) // 8), dtype=np.uint8)
        for i, w in enumerate(used):
            docs = self.post_doc[self.post_start[w]:self.post_start[w + 1]]
            present[docs] = True
            bitsets[i] = np.packbits(present)
            present[docs] = False
        single = (self.post_start[used + 1] - self.post_start[used]).astype(np.float64)  # documents holding each
        a, b = np.triu_indices(top, 1)
        both = np.empty((len(top_words), len(a)))
        for first in range(0, len(top_words), 32):  # 32 topics' pairs at a time
            r = row[first:first + 32]
            both[first:first + 32] = popcount(bitsets[r[:, a]] & bitsets[r[:, b]]).sum(axis=2)
        D = float(self.train_docs)
        p_both, p_a, p_b = both / D, single[row[:, a]] / D, single[row[:, b]] / D
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(both == 0, -1.0,
                             np.where(p_both >= 1, 1.0, np.log(p_both / (p_a * p_b)) / -np.log(p_both)))
        return float(np.mean(value.mean(axis=1)))


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def popcount(x):
    """Set bits of each byte of a uint8 array."""
    return np.bitwise_count(x) if hasattr(np, "bitwise_count") else _BYTE_BITS[x]


def top_word_sets(phi, top):
    """K x top: for each topic (column of phi, V x K) the indices of its `top` most probable words, the set a stable
    sort by decreasing probability would give (ties go to the lower word index), in no particular order. A
    partition, not a sort: sorting a 33759 x 1024 phi took 4 s of the scoring's 7."""
    rows = np.ascontiguousarray(np.asarray(phi).T)  # K x V
    V = rows.shape[1]
    if top >= V:
        return np.tile(np.arange(V), (rows.shape[0], 1))
    threshold = np.partition(rows, V - top, axis=1)[:, V - top]  # each topic's top-th largest probability
    result = np.empty((rows.shape[0], top), dtype=np.int64)
    for k, (row, cut) in enumerate(zip(rows, threshold)):
        above = np.flatnonzero(row > cut)
        result[k] = np.concatenate([above, np.flatnonzero(row == cut)[:top - len(above)]])
    return result


# ---------------------------------------------------------------------------------------------------- systems
def read_matrix(path):
    with open(path, "rb") as f:
        header = f.read(32)
    size = int.from_bytes(header[8:12], "little")
    rows, cols = int.from_bytes(header[16:24], "little"), int.from_bytes(header[24:32], "little")
    return np.fromfile(path, dtype=np.float32 if size == 4 else np.float64, offset=32).reshape(rows, cols)


def checkpoints_in_time(budget, growth=2.0):
    """The iteration counts of a run's checkpoints, spaced about `growth` times apart in training seconds up to
    `budget`: a generator told, after each checkpoint, (iterations done, seconds so far); it yields the next total.
    The last one aims a little past the budget, so that a slower iteration than predicted does not leave a sliver."""
    done, seconds = yield
    last_done, last_seconds = 0, 0.0
    while seconds < 0.95 * budget:
        target = min(1.03 * budget, seconds * growth)
        # Seconds per iteration from the last stretch (the first one also holds start-up costs).
        rate = max(seconds - last_seconds, 1e-9) / max(done - last_done, 1)
        last_done, last_seconds = done, seconds
        done, seconds = yield done + max(1, round((target - seconds) / rate))


def average_last(text):
    """--bfly-average-last: a count of iterations (>= 1) or 'half'."""
    if text == "half" or (text.isdigit() and int(text) >= 1):
        return text
    raise argparse.ArgumentTypeError(f"expected a count of iterations (>= 1) or 'half', got {text!r}")


def run_bfly(args, corpus, K, estimate, emit):
    """One training run, continued (--resume, which continues exactly) from checkpoint to checkpoint: the seconds
    are the run's own (loglik.csv's train_seconds, the iterations only), phi is scored at each checkpoint. wall_seconds
    adds up the processes' wall clock (corpus upload, kernel compilation, writing the outputs included)."""
    base = corpus["dir"]
    out = os.path.join(base, f"bfly-{estimate}-k{K}")
    corpus_args = ["--docword", os.path.join(base, "train.docword.txt"), "--vocab", os.path.join(base, "vocab.txt")]
    run_args = ["--quiet", "--show-topics", "0", "--device", args.bfly_device]
    if args.bfly_device == "cpu":
        run_args += ["--cpu-zstep", "reference"]
    if args.bfly_iterations:
        schedule = iter(args.bfly_iterations)
    else:
        schedule = checkpoints_in_time(args.bfly_seconds, args.growth)
        next(schedule)
    iterations, wall, first = args.bfly_first if not args.bfly_iterations else next(schedule), 0.0, True
    while iterations is not None:
        if first:
            command = [args.bfly_lda, *corpus_args, "--topics", str(K), "--alpha", str(args.alpha), "--beta",
                       str(args.beta), "--estimate", estimate, "--seed", "1", "--out", out]
        else:
            command = [args.bfly_lda, *corpus_args, "--resume", out]
        start = time.perf_counter()
        average = iterations // 2 if args.bfly_average_last == "half" else int(args.bfly_average_last)
        if average > 1:
            command += ["--average-last", str(average)]
        subprocess.run(command + ["--iterations", str(iterations)] + run_args, check=True, stdout=subprocess.DEVNULL)
        wall += time.perf_counter() - start
        first = False
        last = list(csv.DictReader(open(os.path.join(out, "loglik.csv"))))[-1]
        seconds, done = float(last["train_seconds"]), iterations
        try:
            iterations = next(schedule) if args.bfly_iterations else schedule.send((done, seconds))
        except StopIteration:
            iterations = None
        own = ""
        if iterations is None:  # bfly-lda's own Gibbs evaluation of its last model
            subprocess.run([args.bfly_lda, "evaluate", "--model", out, "--docword",
                            os.path.join(base, "test.docword.txt"), "--vocab", os.path.join(base, "vocab.txt"),
                            "--device", args.bfly_device, "--out", out], check=True, stdout=subprocess.DEVNULL)
            own = json.load(open(os.path.join(out, "metrics.json")))["heldout_perplexity"]
        averaged = "" if args.bfly_average_last == "1" else f"-average{args.bfly_average_last}"
        emit(f"bfly-lda-{estimate}{averaged}", done, seconds, wall, read_matrix(os.path.join(out, "phi.bin")),
             float(last["ll_per_token"]), own)


def run_tomotopy(args, corpus, K, emit):
    import tomotopy as tp
    words = corpus["words"]
    model = tp.LDAModel(k=K, alpha=args.alpha, eta=args.beta, seed=1, min_cf=0, rm_top=0)
    for d in corpus["train"]:
        model.add_doc([words[w] for w in d])
    model.optim_interval = 0  # fixed priors, as bfly-lda's
    start = time.perf_counter()
    model.train(0, workers=args.workers)  # initialisation, counted in the seconds
    seconds = time.perf_counter() - start
    column = None
    schedule = checkpoints_in_time(args.seconds, args.growth)
    next(schedule)
    done, target = 0, 10
    while target is not None:
        start = time.perf_counter()
        model.train(target - done, workers=args.workers)
        seconds += time.perf_counter() - start
        done = target
        if column is None:
            index = {w: i for i, w in enumerate(model.used_vocabs)}
            column = np.array([index[w] for w in words])
        phi = np.stack([np.asarray(model.get_topic_word_dist(k))[column] for k in range(K)], axis=1)
        emit("tomotopy", done, seconds, seconds, phi, model.ll_per_word, "")
        try:
            target = schedule.send((done, seconds))
        except StopIteration:
            target = None


def run_sklearn(args, corpus, K, emit):
    from scipy.sparse import csr_matrix
    from sklearn.decomposition import LatentDirichletAllocation
    rows, cols, vals = [], [], []
    for m, d in enumerate(corpus["train"]):
        ids, counts = np.unique(d, return_counts=True)
        rows.append(np.full(len(ids), m))
        cols.append(ids)
        vals.append(counts)
    X = csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                   shape=(len(corpus["train"]), len(corpus["words"])), dtype=np.float64)
    lda = LatentDirichletAllocation(n_components=K, doc_topic_prior=args.alpha, topic_word_prior=args.beta,
                                    learning_method="online", batch_size=args.sklearn_batch, n_jobs=-1,
                                    random_state=1, total_samples=X.shape[0])
    order = np.random.default_rng(1).permutation(X.shape[0])
    seconds, batches, next_score = 0.0, 0, 1
    while seconds < args.seconds:
        for s in range(0, X.shape[0], args.sklearn_batch):
            start = time.perf_counter()
            lda.partial_fit(X[order[s:s + args.sklearn_batch]])
            seconds += time.perf_counter() - start
            batches += 1
            if batches == next_score or seconds >= args.seconds:
                phi = (lda.components_ / lda.components_.sum(axis=1, keepdims=True)).T
                emit("sklearn", batches, seconds, seconds, phi, "", "")
                next_score *= 2
            if seconds >= args.seconds:
                break


def split_fingerprint(corpus):
    """A short hash of the training and held-out tokens: equal in every CSV row scored on the same split."""
    digest = hashlib.sha1()
    for part in ("train", "test"):
        for doc in corpus[part]:
            digest.update(np.asarray(doc, dtype=np.int64).tobytes())
            digest.update(b"|")
        digest.update(b"#")
    return digest.hexdigest()[:12]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bfly-lda", required=True, help="bfly-lda binary (it also tokenises the corpora)")
    p.add_argument("--corpus", action="append", required=True, help="NAME=TEXTFILE (one document per line)")
    p.add_argument("--topics", default="64,1024")
    p.add_argument("--systems", default="bfly-lda-collapsed,bfly-lda-mean,bfly-lda-draw,tomotopy,sklearn")
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--beta", type=float, default=0.01)
    p.add_argument("--heldout", type=float, default=0.1)
    p.add_argument("--seconds", type=float, default=30, help="training seconds of tomotopy and of scikit-learn each")
    p.add_argument("--bfly-seconds", type=float, default=5, help="training seconds of each bfly-lda run")
    p.add_argument("--bfly-first", type=int, default=10, help="iterations of bfly-lda's first checkpoint")
    p.add_argument("--bfly-iterations", default="",
                   help="bfly-lda's checkpoints as iteration counts (e.g. 30,100,300), instead of --bfly-seconds")
    p.add_argument("--bfly-device", default="gpu", choices=["gpu", "cpu", "auto"])
    p.add_argument("--bfly-average-last", type=average_last, default="1",
                   help="bfly-lda --average-last: its outputs average the posterior means of each run's last N "
                        "iterations; 'half': the last half of the iterations up to each checkpoint")
    p.add_argument("--growth", type=float, default=2.0,
                   help="ratio of the training seconds of successive checkpoints (tomotopy and bfly-lda)")
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--sklearn-batch", type=int, default=4096)
    p.add_argument("--max-docs", type=int, default=0, help="use only the first N documents of each corpus")
    p.add_argument("--out-dir", default="bench/results")
    p.add_argument("--label", default=None, help="file name prefix (default: the bfly-lda device and the date)")
    p.add_argument("--csv", default=None, help="the CSV to write (default: <out-dir>/<label>-lda-quality-"
                   "<corpora>-k<topics>-<systems>.csv, one file per piece of the bench)")
    p.add_argument("--append", action="store_true", help="append to the CSV instead of replacing it")
    args = p.parse_args()
    args.bfly_iterations = [int(x) for x in args.bfly_iterations.split(",") if x]
    systems = args.systems.split(",")
    known = ("bfly-lda-mean", "bfly-lda-draw", "bfly-lda-collapsed", "tomotopy", "sklearn")
    unknown = [s for s in systems if s not in known]
    if unknown:
        sys.exit(f"--systems: unknown system {unknown[0]} ({', '.join(known)})")
    topics = [int(k) for k in args.topics.split(",")]
    corpora = [spec.partition("=") for spec in args.corpus]
    label = args.label or f"{args.bfly_device}-{datetime.date.today().isoformat()}"
    os.makedirs(args.out_dir, exist_ok=True)
    csv_path = args.csv or os.path.join(
        args.out_dir, f"{label}-lda-quality-{'+'.join(name for name, _, _ in corpora)}-k"
                      f"{'+'.join(map(str, topics))}-{'+'.join(systems)}"
                      f"{'' if args.bfly_average_last == '1' else '-average' + args.bfly_average_last}.csv")
    append = args.append and os.path.exists(csv_path) and os.path.getsize(csv_path) > 0
    with tempfile.TemporaryDirectory() as work, open(csv_path, "a" if append else "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=FIELDS)
        if not append:
            writer.writeheader()
        for name, _, text in corpora:
            if args.max_docs:
                head = os.path.join(work, f"{name}.head.txt")
                with open(text) as src, open(head, "w") as dst:
                    for i, line in enumerate(src):
                        if i == args.max_docs:
                            break
                        dst.write(line)
                text = head
            corpus = prepare(name, text, args.bfly_lda, work, args.heldout, seed=1)
            split = split_fingerprint(corpus)
            scorer = Scorer(corpus, args.alpha)
            for K in topics:
                def emit(system, step, train_seconds, wall, phi, ll, own):
                    start = time.perf_counter()
                    row = {"corpus": name, "K": K, "system": system, "step": step,
                           "train_seconds": f"{train_seconds:.4f}", "wall_seconds": f"{wall:.3f}",
                           "heldout_perplexity": f"{scorer.perplexity(phi):.3f}", "npmi": f"{scorer.npmi(phi):.5f}",
                           "ll_per_token": ll if ll == "" else f"{ll:.6f}",
                           "bfly_evaluate_perplexity": own if own == "" else f"{own:.3f}",
                           "device": args.bfly_device if system.startswith("bfly") else f"cpu x{args.workers}",
                           "split": split}
                    writer.writerow(row)
                    out.flush()  # a run cut short by a time limit keeps its checkpoints so far
                    print(f"  {name} K={K} {system:16} step {step:>6}  {train_seconds:8.3f} s  perplexity "
                          f"{row['heldout_perplexity']:>10}  NPMI {row['npmi']}  (scored in "
                          f"{time.perf_counter() - start:.1f} s)", flush=True)
                    return row
                for system in systems:
                    try:
                        if system.startswith("bfly-lda-"):
                            # Scored on another thread while the GPU trains to the next checkpoint (numpy releases
                            # the GIL); training on the CPU, and the CPU systems, are scored between their steps.
                            threads = 0 if args.bfly_device == "cpu" else 1
                            with concurrent.futures.ThreadPoolExecutor(max_workers=max(threads, 1)) as scoring:
                                pending = []
                                later = lambda *row: pending.append(scoring.submit(emit, *row))
                                run_bfly(args, corpus, K, system[len("bfly-lda-"):], later if threads else emit)
                                for row in pending:
                                    row.result()  # in order; raises what scoring raised
                        elif system == "tomotopy":
                            run_tomotopy(args, corpus, K, emit)
                        else:
                            run_sklearn(args, corpus, K, emit)
                    except ImportError as e:
                        print(f"  {system}: skipped ({e})", flush=True)
    print(f"wrote {csv_path}")


if __name__ == "__main__":
    main()
