// Evaluating a topic model: held-out perplexity by document completion and topic coherence (NPMI of each topic's
// top words over document co-occurrence), plus the document split of a training run's held-out part.
//
// Document completion (Wallach et al. 2009, "Evaluation methods for topic models"): each held-out document's
// tokens alternate between an observed half (even positions 0, 2, 4, ...) and a scored half (odd positions); theta
// is inferred from the observed half with phi fixed (inference.hpp), and the scored tokens' log-likelihood is
//   sum_{scored token (m, w)} log sum_k theta[m][k] phi[w][k],  perplexity = exp(-that / scored tokens).
//
// NPMI (Bouma 2009; as used for topic coherence by Lau et al. 2014), with document frequencies of a reference
// corpus of D documents, P(w) = D(w) / D and P(w, v) = D(w, v) / D:
//   NPMI(w, v) = log(P(w, v) / (P(w) P(v))) / -log P(w, v),  -1 when w and v never share a document,
//                1 when they are in every document;
// a topic's coherence is the mean over the pairs of its top N words, the model's the mean over topics.
#pragma once

#include "bfly/lda/corpus.hpp"
#include "bfly/lda/inference.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bfly::lda {

// The Philox stream of the held-out split (see reference.hpp for the others): document with input position i is
// held out when uniform(seed; counter = (i, 0, kStreamHoldout << 24, 0)) < fraction.
inline constexpr std::uint32_t kStreamHoldout = 4;

struct DocumentSplit {
  Corpus training, heldout;  // both keep the corpus' vocabulary, document order and doc_ids
};
// Splits `corpus` by document (see kStreamHoldout); fraction in [0, 1). Throws bfly::Error for another fraction
// or when no document would be left to train on.
DocumentSplit split_documents(const Corpus& corpus, double fraction, std::uint64_t seed);

struct CompletionSplit {
  Corpus observed, scored;  // the same documents (those with at least 2 tokens), tokens alternating
};
CompletionSplit split_for_completion(const Corpus& documents);

// sum over the tokens of `documents` of log sum_k theta[m][k] phi[w][k] (theta: D x K of those documents).
// Throws bfly::Error when the sizes disagree.
double log_predictive(const Model& model, std::span<const double> theta, const Corpus& documents);

// The `count` most probable words of each topic (ids, most probable first, ties: smaller id first).
std::vector<std::vector<std::int32_t>> top_words(const Model& model, int count);

// Each topic's NPMI coherence (mean over the pairs of its words) over the documents of `reference`, whose word
// ids are the model's. Throws bfly::Error when `reference` has no documents or a topic has fewer than 2 words.
std::vector<double> topic_npmi(const std::vector<std::vector<std::int32_t>>& topics, const Corpus& reference);

struct EvaluationOptions {
  InferenceOptions inference;  // for the observed halves
  int top_words = 10;          // words per topic in NPMI
};

struct Evaluation {
  std::int64_t documents = 0;       // held-out documents scored (those with at least 2 tokens)
  std::int64_t scored_tokens = 0;
  double log_likelihood = 0;        // of the scored tokens
  double perplexity = 0;            // exp(-log_likelihood / scored_tokens)
  int top_words = 0;
  std::int64_t reference_documents = 0;  // the NPMI corpus' documents
  std::vector<double> topic_npmi;   // per topic
  double npmi = 0;                  // mean over topics
  double seconds = 0;               // wall clock of the evaluation
  std::string engine;               // the inference z-step's name
};

// Document completion on `heldout` and NPMI over `reference` (both in the model's vocabulary) with `zstep`.
template <typename T>
Evaluation evaluate_with(const Model& model, const Corpus& heldout, const Corpus& reference,
                         const EvaluationOptions& options, FixedPhiZStep<T>& zstep);

// The evaluation as JSON (one object; the per-topic NPMI as an array), with `context` (e.g. the run's iteration
// and training seconds) as extra members: pairs of a name and an already formatted JSON value.
std::string to_json(const Evaluation& evaluation,
                    const std::vector<std::pair<std::string, std::string>>& context = {});
// `text` as a JSON string literal, quotes included (", \ and control characters escaped).
std::string json_string(std::string_view text);
// "held-out perplexity 1234.5 (ll/token -7.118, 5000 tokens of 800 documents); NPMI 0.081 (top 10 words, over
// 117468 documents)"
std::string summary(const Evaluation& evaluation);

}  // namespace bfly::lda
