"""bfly.LDA: LDA topic models in the style of scikit-learn's LatentDirichletAllocation, trained by bfly-lda's
trainer (lda/): uncollapsed Gibbs iterations whose z-step is the generated butterfly kernel, on the GPU when one
can be used, else the same kernel on the CPU (compiled at run time, bfly._cpu)."""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from pathlib import Path

import numpy as np

from . import _bfly, _cpu

logger = logging.getLogger("bfly")

_DTYPES = {"float32": "f32", "f32": "f32", "float64": "f64", "f64": "f64"}
_FORMAT = "bfly.LDA 1"


def _cpu_kernel_for(spec):
    return _cpu.kernel(spec)


def _tokens_of(X, vocabulary):
    """(doc lengths, word ids, vocabulary) of a document-term matrix or of token lists. With token lists and
    vocabulary None, the vocabulary is built: words by decreasing frequency, ties alphabetical."""
    if isinstance(X, (list, tuple)):
        if vocabulary is None:
            counts = Counter(word for doc in X for word in doc)
            vocabulary = sorted(counts, key=lambda word: (-counts[word], word))
        index = {word: i for i, word in enumerate(vocabulary)}
        docs = []
        for m, doc in enumerate(X):
            if isinstance(doc, str):
                raise TypeError(f"X[{m}] is a string; X must be a list of token lists (e.g. text.split()), or a "
                                "document-term matrix")
            docs.append([index[word] for word in doc if word in index])
        lengths = np.array([len(doc) for doc in docs], dtype=np.int64)
        words = np.fromiter((w for doc in docs for w in doc), dtype=np.int32, count=int(lengths.sum()))
        return lengths, words, list(vocabulary)
    try:
        import scipy.sparse as sparse
    except ImportError:  # dense matrices work without SciPy
        sparse = None
    if sparse is not None and sparse.issparse(X):
        csr = sparse.csr_matrix(X, copy=True)  # sum_duplicates below must not touch the caller's matrix
    elif isinstance(X, np.ndarray) and X.ndim == 2:
        if sparse is None:
            rows, cols = np.nonzero(X)
            return _from_entries(X.shape, rows, cols, X[rows, cols], vocabulary)
        csr = sparse.csr_matrix(X)
    else:
        raise TypeError(f"X must be a scipy.sparse document-term matrix, a 2-D NumPy array of counts, or a list of "
                        f"token lists, not {type(X).__name__}")
    csr.sum_duplicates()
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    return _from_entries(csr.shape, rows, csr.indices, csr.data, vocabulary)


def _from_entries(shape, rows, cols, values, vocabulary):
    D, V = shape
    values = np.asarray(values)
    if values.size and (np.any(values < 0) or np.any(values != np.round(values))):
        raise ValueError("X must hold non-negative integer counts")
    counts = values.astype(np.int64)
    if vocabulary is None:
        vocabulary = [str(i) for i in range(V)]
    elif len(vocabulary) != V:
        raise ValueError(f"vocabulary has {len(vocabulary)} words, but X has {V} columns")
    lengths = np.bincount(rows, weights=counts, minlength=D).astype(np.int64)
    words = np.repeat(np.asarray(cols, dtype=np.int32), counts)  # entries are in row order (CSR)
    return lengths, words, list(vocabulary)


class LDA:
    """Latent Dirichlet allocation with `n_topics` topics, trained by Gibbs sampling with bfly's kernels.

    Parameters (scikit-learn's names in brackets): alpha [doc_topic_prior] and beta [topic_word_prior], the
    symmetric Dirichlet priors (bfly-lda's defaults); iterations [max_iter]; seed [random_state] (every draw of
    a run is fixed by the seed and the corpus); dtype "float32" or "float64"; device "auto" (the GPU when one can
    be used, else the CPU), "gpu" or "cpu"; estimate "collapsed" (the default, as bfly-lda's: posterior means of
    theta and phi between z-steps, each token left out of the counts behind them as it is drawn, which is collapsed
    Gibbs sampling's conditional), "mean" (the means as they are) or "draw" (Dirichlet draws); "auto", which
    older saved models hold, means "collapsed"; average_last: doc_topic_, top_words, transform and score use the posterior means averaged over
    the last `average_last` iterations of each fit or continue_fit ("auto", the default: the last half of them, as
    bfly-lda --average-last auto; 1: the last iteration's means; components_ stays the last counts; save keeps
    the reported theta and phi, and a loaded model reports them until it trains on); threads for the CPU parts (0: all cores);
    callback(iteration, ll_per_token), called every `progress_every` iterations (also logged on the "bfly" logger
    at INFO).

    After fit: components_ (n_topics x V: word-topic counts plus beta, scikit-learn's meaning), topic_word_
    (components_ normalised per topic), doc_topic_ (D x n_topics, input order), vocabulary_, engine_ (what ran:
    "gpu ..." or "cpu ..."), device_ ("gpu" or "cpu"), estimate_ ("collapsed", "mean" or "draw"), loglik_
    (ll per token after each iteration).
    """

    def __init__(self, n_topics=10, *, alpha=0.1, beta=0.01, iterations=200, seed=1, dtype="float32",
                 device="auto", estimate="collapsed", average_last="auto", threads=0, callback=None,
                 progress_every=10):
        if not isinstance(n_topics, int) or isinstance(n_topics, bool) or not 1 <= n_topics <= 65536:
            raise ValueError(f"n_topics = {n_topics!r}; it must be an integer in 1 .. 65536")
        if not alpha > 0 or not beta > 0:
            raise ValueError(f"alpha = {alpha!r} and beta = {beta!r} must both be positive")
        if not isinstance(iterations, int) or iterations < 0:
            raise ValueError(f"iterations = {iterations!r}; it must be an integer >= 0")
        if str(dtype) not in _DTYPES:
            raise ValueError(f"dtype = {dtype!r}; it must be 'float32' or 'float64'")
        if device not in ("auto", "gpu", "cpu"):
            raise ValueError(f"device = {device!r}; it must be 'auto', 'gpu' or 'cpu'")
        if estimate not in ("collapsed", "mean", "draw", "auto"):
            raise ValueError(f"estimate = {estimate!r}; it must be 'collapsed', 'mean' or 'draw'")
        estimate = "collapsed" if estimate == "auto" else estimate  # "auto": the default of older saved models
        if average_last != "auto" and (not isinstance(average_last, int) or isinstance(average_last, bool)
                                       or average_last < 1):
            raise ValueError(f"average_last = {average_last!r}; it must be 'auto' or an integer >= 1")
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable as callback(iteration, ll_per_token)")
        self.n_topics = n_topics
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.iterations = iterations
        self.seed = int(seed)
        self.dtype = str(dtype)
        self.device = device
        self.estimate = estimate
        self.average_last = average_last
        self.threads = threads
        self.callback = callback
        self.progress_every = progress_every
        self._model = None

    # ---- training ------------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, vocabulary=None):
        """Trains on X: a scipy.sparse (or dense) document-term matrix of counts, D x V (vocabulary: its V
        words, default "0".."V-1"), or a list of D token lists (the vocabulary is built from them). Empty
        documents are left out of training; their doc_topic_ rows are uniform."""
        lengths, words, vocabulary = _tokens_of(X, vocabulary)
        if words.size == 0:
            raise ValueError("X has no tokens: every document is empty")
        self._corpus = self._corpus_arrays(lengths, words)
        self.vocabulary_ = vocabulary
        self._model = self._make_model(checkpoint=None)
        self.loglik_ = []
        self._train(self.iterations)
        return self

    def fit_transform(self, X, y=None, *, vocabulary=None):
        """fit(X), then the training documents' topic proportions (doc_topic_)."""
        return self.fit(X, vocabulary=vocabulary).doc_topic_

    def _corpus_arrays(self, lengths, words):
        # Documents sorted by decreasing length (ties in input order), as bfly-lda trains them; doc_ids map back.
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        kept = np.flatnonzero(lengths > 0)
        order = kept[np.argsort(-lengths[kept], kind="stable")]
        sorted_words = np.concatenate([words[offsets[m]:offsets[m + 1]] for m in order]).astype(np.int32)
        doc_offsets = np.concatenate([[0], np.cumsum(lengths[order])]).astype(np.int64)
        return {"doc_offsets": doc_offsets, "words": sorted_words, "doc_ids": order.astype(np.int64),
                "input_documents": np.int64(len(lengths))}

    def _make_model(self, checkpoint):
        c = self._corpus
        model = _bfly.LdaModel(c["doc_offsets"], c["words"], c["doc_ids"], self.vocabulary_,
                               int(c["input_documents"]), _DTYPES[self.dtype], self.n_topics, self.alpha,
                               self.beta, self.seed, self.estimate, self.threads, self.device, checkpoint,
                               _cpu_kernel_for)
        self.engine_ = model.engine
        self.estimate_ = model.estimate
        self.device_ = "gpu" if self.engine_.startswith("gpu") else "cpu"
        if self.device == "auto" and self.device_ == "cpu":
            available, why = _bfly.gpu_available()
            logger.info("bfly.LDA: no GPU (%s); training on the CPU: %s", why, self.engine_)
        else:
            logger.info("bfly.LDA: training on %s", self.engine_)
        return model

    def _train(self, iterations):
        self._model.clear_average()  # each fit or continue_fit averages its own last iterations
        average_last = max(1, iterations // 2) if self.average_last == "auto" else self.average_last
        for done in range(1, iterations + 1):
            iteration, ll, _, _ = self._model.step()
            if average_last > 1 and done > iterations - average_last:
                self._model.add_means_to_average()
            self.loglik_.append(ll)
            if self.progress_every and iteration % self.progress_every == 0:
                logger.info("bfly.LDA: iteration %d  ll/token %.6f", iteration, ll)
                if self.callback is not None:
                    self.callback(iteration, ll)
        self._read_state()

    def _read_state(self):
        m = self._model
        self.components_ = m.word_topic_counts().T + self.beta
        self.topic_word_ = self.components_ / self.components_.sum(axis=1, keepdims=True)
        self._phi = m.phi()  # V x K, posterior means: the topics transform and score use (the C++ model_of)
        doc_topic = np.full((int(self._corpus["input_documents"]), self.n_topics), 1.0 / self.n_topics)
        doc_topic[self._corpus["doc_ids"]] = m.theta()
        self.doc_topic_ = doc_topic
        self.n_iter_ = m.iteration

    def _check_fitted(self):
        if self._model is None:
            raise RuntimeError("this LDA is not fitted yet: call fit(X) or LDA.load(path) first")

    # ---- results -------------------------------------------------------------------------------------------
    def top_words(self, n=10):
        """The n most probable words of each topic, most probable first: a list of n_topics lists."""
        self._check_fitted()
        return [[self.vocabulary_[w] for w in self._model.top_words(k, n)] for k in range(self.n_topics)]

    def transform(self, X, *, iterations=100, burn_in=None, seed=None):
        """Topic proportions of new documents with the topics fixed: bfly::lda::infer (the C++ inference of
        bfly-lda infer) on X (as for fit; token lists are read with the fitted vocabulary, unknown words dropped).
        `iterations` Gibbs iterations draw each token's topic from theta[doc] * phi[:, word] with the generated
        z-step (on the GPU when the model's device allows, else the same kernel on the CPU) and re-estimate theta;
        the posterior means (n_dk + alpha) / (N_d + K alpha) of the iterations after `burn_in` (default: half)
        are averaged. Reproducible from (model, X, iterations, burn_in, seed); seed defaults to the model's.
        Empty documents get uniform proportions. Returns D x n_topics float64 (rows sum to 1); the z-step that
        ran is in transform_engine_."""
        lengths, words = self._documents(X)
        iterations, burn_in, seed = self._inference_options(iterations, burn_in, seed)
        theta = np.full((len(lengths), self.n_topics), 1.0 / self.n_topics)
        kept = lengths > 0
        if kept.any():
            offsets = np.concatenate([[0], np.cumsum(lengths[kept])]).astype(np.int64)
            theta[kept], self.transform_engine_ = self._model.infer(
                offsets, words, iterations, burn_in, seed, self.threads, self.device, _cpu_kernel_for)
        return theta

    def evaluate(self, X, *, iterations=100, burn_in=None, seed=None, top_n=10):
        """bfly::lda::evaluate on X, as `bfly-lda evaluate` does: held-out perplexity by document completion
        (each document's even-position tokens are observed, theta is inferred from them as in transform, and the
        odd-position tokens are scored) and the NPMI coherence of each topic's top_n words over X's documents.
        Returns a dict: documents (those with at least 2 tokens), scored_tokens, log_likelihood, perplexity,
        topic_npmi, npmi (their mean), top_words, reference_documents, engine, seconds."""
        lengths, words = self._documents(X)
        iterations, burn_in, seed = self._inference_options(iterations, burn_in, seed)
        offsets = self._offsets(lengths)
        if not isinstance(top_n, int) or isinstance(top_n, bool) or not 2 <= top_n <= len(self.vocabulary_):
            raise ValueError(f"top_n = {top_n!r}; it must be an integer in 2 .. {len(self.vocabulary_)} (the words)")
        if not (lengths >= 2).any():
            raise ValueError("X has no document of 2 or more tokens known to the model; document completion "
                             "scores the second half of each document")
        return self._model.evaluate(offsets, words, offsets, words, iterations, burn_in, seed, self.threads, top_n,
                                    self.device, _cpu_kernel_for)

    def score(self, X, **inference_options):
        """The held-out log-likelihood of X by document completion (evaluate(X)'s log_likelihood): the sum over
        the odd-position tokens (m, w) of X's documents of log sum_k theta[m, k] phi[k, w], theta inferred from
        the even-position tokens. Higher is better. Not scikit-learn's score, which is the variational bound of
        all of X's tokens; this one scores tokens the inference did not see. Takes evaluate's options."""
        return self.evaluate(X, **inference_options)["log_likelihood"]

    def perplexity(self, X, **inference_options):
        """exp(-score(X) / scored tokens) (evaluate(X)'s perplexity): per scored token, lower is better.
        scikit-learn's perplexity divides its bound by all of X's tokens instead."""
        return self.evaluate(X, **inference_options)["perplexity"]

    def coherence(self, X=None, *, top_n=10, per_topic=False):
        """NPMI coherence of the topics' top_n words over the documents of X (default: the training corpus):
        NPMI(w, v) = log(P(w, v) / (P(w) P(v))) / -log P(w, v) with document frequencies, averaged over the pairs
        of each topic's words (-1 .. 1, higher is more coherent); documents without a word of the model are left
        out. The mean over topics, or each topic's value (per_topic=True: an array of n_topics). No inference
        runs."""
        self._check_fitted()
        if not isinstance(top_n, int) or isinstance(top_n, bool) or not 2 <= top_n <= len(self.vocabulary_):
            raise ValueError(f"top_n = {top_n!r}; it must be an integer in 2 .. {len(self.vocabulary_)} (the words)")
        if X is None:
            offsets, words = self._corpus["doc_offsets"], self._corpus["words"]
        else:
            lengths, words = self._documents(X)
            offsets = self._offsets(lengths)
        if len(offsets) < 2:
            raise ValueError("X has no document with a word of the model")
        npmi = np.array(self._model.topic_npmi(offsets, words, top_n))
        return npmi if per_topic else float(npmi.mean())

    def _documents(self, X):
        """(lengths, word ids) of X's documents in the model's vocabulary (D entries, documents as given)."""
        self._check_fitted()
        if isinstance(X, (list, tuple)):
            lengths, words, _ = _tokens_of(X, self.vocabulary_)
        else:
            shape = getattr(X, "shape", None)
            if shape is not None and len(shape) == 2 and shape[1] != len(self.vocabulary_):
                raise ValueError(f"X has {shape[1]} columns, but the model has {len(self.vocabulary_)} words")
            lengths, words, _ = _tokens_of(X, self.vocabulary_)
        return lengths, words

    @staticmethod
    def _offsets(lengths):
        """CSR offsets of the documents that are not empty (bfly-lda leaves out documents without a word of
        the model, so they count in no document frequency)."""
        return np.concatenate([[0], np.cumsum(lengths[lengths > 0])]).astype(np.int64)

    def _inference_options(self, iterations, burn_in, seed):
        """(iterations, burn_in, seed) for the C++ inference: burn_in -1 is half; ValueError naming a bad one."""
        if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 1:
            raise ValueError(f"iterations = {iterations!r}; it must be an integer >= 1")
        if burn_in is None:
            burn_in = -1
        elif not isinstance(burn_in, int) or isinstance(burn_in, bool) or not 0 <= burn_in < iterations:
            raise ValueError(f"burn_in = {burn_in!r}; it must be None (half) or an integer in 0 .. iterations - 1")
        seed = self.seed if seed is None else seed
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
            raise ValueError(f"seed = {seed!r}; it must be None (the model's) or an integer in 0 .. 2**63 - 1")
        return iterations, burn_in, seed

    # ---- files ---------------------------------------------------------------------------------------------
    def save(self, path):
        """Writes the model into the directory `path`: checkpoint.bin (bfly-lda's checkpoint: resumable exactly,
        by LDA.load or by bfly-lda --resume on the same corpus), bfly-lda's outputs (phi.bin, vocab.txt,
        topics.txt, theta.bin, documents.txt: the directory is a model for bfly-lda infer/evaluate --model),
        corpus.npz (the training corpus in the trainer's order), outputs.npz (the reported theta and phi, which
        a loaded model reports again) and model.json (the parameters and the vocabulary)."""
        self._check_fitted()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self._model.save_checkpoint(str(path / "checkpoint.bin"))
        self._model.write_outputs(str(path), 10)  # also a bfly-lda model: bfly-lda infer/evaluate --model path
        np.savez(path / "corpus.npz", **self._corpus)
        # The reported theta and phi (averaged over the last iterations by default): the checkpoint holds the
        # chain, not the average, so a loaded model restores them from here.
        np.savez(path / "outputs.npz", theta=self._model.theta(), phi=self._model.phi())
        settings = {"format": _FORMAT, "n_topics": self.n_topics, "alpha": self.alpha, "beta": self.beta,
                    "iterations": self.iterations, "seed": self.seed, "dtype": self.dtype,
                    "estimate": self.estimate, "average_last": self.average_last, "vocabulary": self.vocabulary_,
                    "loglik": self.loglik_}
        temporary = path / "model.json.tmp"
        temporary.write_text(json.dumps(settings))
        os.replace(temporary, path / "model.json")

    @classmethod
    def load(cls, path, *, device="auto", threads=0):
        """The model saved in `path` by save(), resumed on `device` at the iteration it was saved at."""
        path = Path(path)
        settings = json.loads((path / "model.json").read_text())
        if settings.get("format") != _FORMAT:
            raise ValueError(f"{path / 'model.json'} is not a bfly.LDA model (format {settings.get('format')!r})")
        model = cls(settings["n_topics"], alpha=settings["alpha"], beta=settings["beta"],
                    iterations=settings["iterations"], seed=settings["seed"], dtype=settings["dtype"],
                    device=device, estimate=settings["estimate"], average_last=settings.get("average_last", 1),
                    threads=threads)
        with np.load(path / "corpus.npz") as corpus:
            model._corpus = {name: corpus[name] for name in corpus.files}
        model.vocabulary_ = settings["vocabulary"]
        model.loglik_ = list(settings["loglik"])
        model._model = model._make_model(checkpoint=str(path / "checkpoint.bin"))
        if (path / "outputs.npz").is_file():  # models saved before it existed report their last means
            with np.load(path / "outputs.npz") as outputs:
                model._model.restore_average(outputs["theta"], outputs["phi"])
        model._read_state()
        return model

    def continue_fit(self, iterations):
        """Runs `iterations` more iterations of the same run (a loaded model continues where it was saved)."""
        self._check_fitted()
        self._train(iterations)
        return self
