// Held-out perplexity by document completion and NPMI coherence (see evaluation.hpp).
#include "bfly/lda/evaluation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <unordered_map>

// The held-out split's uniforms: the kernels' Philox, compiled for the CPU.
#define __device__
#define __forceinline__ inline
#include "bfly/philox.cuh"
#undef __device__
#undef __forceinline__

namespace bfly::lda {
namespace {

// The documents of `corpus` for which keep(m) holds, with their doc_ids, same vocabulary.
template <typename Keep>
Corpus select_documents(const Corpus& corpus, Keep keep) {
  Corpus part;
  part.vocab = corpus.vocab;
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    if (!keep(m)) continue;
    part.words.insert(part.words.end(), corpus.words.begin() + corpus.doc_offsets[m],
                      corpus.words.begin() + corpus.doc_offsets[m + 1]);
    part.doc_offsets.push_back(static_cast<std::int64_t>(part.words.size()));
    part.doc_ids.push_back(corpus.doc_ids[m]);
  }
  part.input_documents = part.num_docs();
  return part;
}

}  // namespace

DocumentSplit split_documents(const Corpus& corpus, double fraction, std::uint64_t seed) {
  if (!(fraction >= 0 && fraction < 1))
    throw Error(fmt::format("the held-out fraction must be in [0, 1), got {}", fraction));
  std::vector<char> held(static_cast<std::size_t>(corpus.num_docs()), 0);
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    const auto id = static_cast<std::uint64_t>(corpus.doc_ids.empty() ? m : corpus.doc_ids[m]);
    const double u = bfly::uniform_from_bits(bfly::philox_bits(seed, id, kStreamHoldout << 24, 0u), 0.0);
    held[m] = u < fraction;
  }
  DocumentSplit split{select_documents(corpus, [&](std::int64_t m) { return !held[m]; }),
                      select_documents(corpus, [&](std::int64_t m) { return held[m] != 0; })};
  split.training.input_documents = corpus.input_documents;
  if (split.training.num_docs() == 0)
    throw Error(fmt::format("holding out {} of {} documents leaves none to train on", split.heldout.num_docs(),
                            corpus.num_docs()));
  return split;
}

CompletionSplit split_for_completion(const Corpus& documents) {
  CompletionSplit split;
  split.observed.vocab = split.scored.vocab = documents.vocab;
  for (std::int64_t m = 0; m < documents.num_docs(); ++m) {
    if (documents.doc_length(m) < 2) continue;
    for (std::int64_t i = documents.doc_offsets[m]; i < documents.doc_offsets[m + 1]; ++i)
      ((i - documents.doc_offsets[m]) % 2 == 0 ? split.observed : split.scored).words.push_back(documents.words[i]);
    for (Corpus* part : {&split.observed, &split.scored}) {
      part->doc_offsets.push_back(static_cast<std::int64_t>(part->words.size()));
      part->doc_ids.push_back(documents.doc_ids.empty() ? m : documents.doc_ids[m]);
    }
  }
  split.observed.input_documents = split.scored.input_documents = split.observed.num_docs();
  return split;
}

double log_predictive(const Model& model, std::span<const double> theta, const Corpus& documents) {
  const int K = model.topics();
  if (theta.size() != static_cast<std::size_t>(documents.num_docs()) * K || model.phi.size() != model.vocab.size() * K)
    throw Error(fmt::format("log_predictive: theta has {} entries for {} documents x K = {}, phi {} for V = {}",
                            theta.size(), documents.num_docs(), K, model.phi.size(), model.vocab.size()));
  double sum = 0;
  for (std::int64_t m = 0; m < documents.num_docs(); ++m) {
    const double* row = theta.data() + m * K;
    for (std::int64_t i = documents.doc_offsets[m]; i < documents.doc_offsets[m + 1]; ++i) {
      const std::int32_t w = documents.words[i];
      if (w < 0 || w >= model.vocab_size())
        throw Error(fmt::format("log_predictive: token {} has word id {}, outside the model's V = {}", i, w,
                                model.vocab_size()));
      const double* phi_row = model.phi.data() + static_cast<std::size_t>(w) * K;
      double p = 0;
      for (int k = 0; k < K; ++k) p += row[k] * phi_row[k];
      sum += std::log(p);
    }
  }
  return sum;
}

std::vector<std::vector<std::int32_t>> top_words(const Model& model, int count) {
  const int K = model.topics();
  const std::int32_t V = model.vocab_size();
  const auto n = static_cast<std::size_t>(std::clamp(count, 0, static_cast<int>(V)));
  std::vector<std::vector<std::int32_t>> topics(static_cast<std::size_t>(K));
  std::vector<std::int32_t> ids(static_cast<std::size_t>(V));
  for (int k = 0; k < K; ++k) {
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                      [&](std::int32_t a, std::int32_t b) {
                        const double pa = model.phi[static_cast<std::size_t>(a) * K + k];
                        const double pb = model.phi[static_cast<std::size_t>(b) * K + k];
                        return pa != pb ? pa > pb : a < b;
                      });
    topics[k].assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return topics;
}

std::vector<double> topic_npmi(const std::vector<std::vector<std::int32_t>>& topics, const Corpus& reference) {
  const std::int64_t D = reference.num_docs();
  if (D == 0) throw Error("topic_npmi: the reference corpus has no documents");
  // The documents of each word that some topic lists, as sorted posting lists.
  std::unordered_map<std::int32_t, std::vector<std::int64_t>> postings;
  for (const auto& topic : topics) {
    if (topic.size() < 2) throw Error(fmt::format("topic_npmi: a topic with {} word(s); NPMI needs pairs", topic.size()));
    for (const std::int32_t w : topic) postings.try_emplace(w);
  }
  for (std::int64_t m = 0; m < D; ++m)
    for (std::int64_t i = reference.doc_offsets[m]; i < reference.doc_offsets[m + 1]; ++i)
      if (const auto it = postings.find(reference.words[i]); it != postings.end() &&
                                                            (it->second.empty() || it->second.back() != m))
        it->second.push_back(m);
  const double documents = static_cast<double>(D);
  std::vector<double> coherence;
  coherence.reserve(topics.size());
  for (const auto& topic : topics) {
    double sum = 0;
    int pairs = 0;
    for (std::size_t a = 0; a < topic.size(); ++a)
      for (std::size_t b = a + 1; b < topic.size(); ++b, ++pairs) {
        const std::vector<std::int64_t>& x = postings.at(topic[a]);
        const std::vector<std::int64_t>& y = postings.at(topic[b]);
        std::int64_t both = 0;
        for (auto i = x.begin(), j = y.begin(); i != x.end() && j != y.end();) {
          if (*i < *j) ++i;
          else if (*j < *i) ++j;
          else ++both, ++i, ++j;
        }
        if (both == 0) {
          sum += -1.0;
          continue;
        }
        const double p_both = static_cast<double>(both) / documents;
        if (p_both >= 1.0) {
          sum += 1.0;
          continue;
        }
        const double p_x = static_cast<double>(x.size()) / documents, p_y = static_cast<double>(y.size()) / documents;
        sum += std::log(p_both / (p_x * p_y)) / -std::log(p_both);
      }
    coherence.push_back(sum / pairs);
  }
  return coherence;
}

template <typename T>
Evaluation evaluate_with(const Model& model, const Corpus& heldout, const Corpus& reference,
                         const EvaluationOptions& options, FixedPhiZStep<T>& zstep) {
  const auto start = std::chrono::steady_clock::now();
  Evaluation result;
  const CompletionSplit split = split_for_completion(heldout);
  result.documents = split.observed.num_docs();
  result.scored_tokens = split.scored.num_tokens();
  if (result.documents > 0) {
    const Inference inference = infer_with<T>(model, split.observed, options.inference, zstep);
    result.engine = inference.engine;
    result.log_likelihood = log_predictive(model, inference.theta, split.scored);
    result.perplexity = std::exp(-result.log_likelihood / static_cast<double>(result.scored_tokens));
  }
  result.top_words = options.top_words;
  result.reference_documents = reference.num_docs();
  result.topic_npmi = topic_npmi(top_words(model, options.top_words), reference);
  result.npmi = std::accumulate(result.topic_npmi.begin(), result.topic_npmi.end(), 0.0) /
                static_cast<double>(result.topic_npmi.size());
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    else out += c;
  }
  return out + "\"";
}

std::string to_json(const Evaluation& e, const std::vector<std::pair<std::string, std::string>>& context) {
  std::string json = "{\n";
  for (const auto& [name, value] : context) json += fmt::format("  \"{}\": {},\n", name, value);
  json += fmt::format(
      "  \"heldout_documents\": {},\n  \"scored_tokens\": {},\n  \"heldout_log_likelihood\": {:.17g},\n"
      "  \"heldout_ll_per_token\": {:.17g},\n  \"heldout_perplexity\": {:.17g},\n  \"npmi\": {:.17g},\n"
      "  \"npmi_top_words\": {},\n  \"npmi_reference_documents\": {},\n  \"evaluation_seconds\": {:.6f},\n"
      "  \"inference_engine\": {},\n  \"topic_npmi\": [",
      e.documents, e.scored_tokens, e.log_likelihood,
      e.scored_tokens > 0 ? e.log_likelihood / static_cast<double>(e.scored_tokens) : 0.0, e.perplexity, e.npmi,
      e.top_words, e.reference_documents, e.seconds, json_string(e.engine));
  for (std::size_t k = 0; k < e.topic_npmi.size(); ++k) json += fmt::format("{}{:.6g}", k ? ", " : "", e.topic_npmi[k]);
  return json + "]\n}\n";
}

std::string summary(const Evaluation& e) {
  const std::string perplexity =
      e.documents > 0 ? fmt::format("held-out perplexity {:.1f} (ll/token {:.4f}, {} tokens of {} documents)",
                                    e.perplexity, e.log_likelihood / static_cast<double>(e.scored_tokens),
                                    e.scored_tokens, e.documents)
                      : std::string("held-out perplexity: no held-out document with 2 or more tokens");
  return fmt::format("{}; NPMI {:.4f} (top {} words, over {} documents)", perplexity, e.npmi, e.top_words,
                     e.reference_documents);
}

template Evaluation evaluate_with<float>(const Model&, const Corpus&, const Corpus&, const EvaluationOptions&,
                                         FixedPhiZStep<float>&);
template Evaluation evaluate_with<double>(const Model&, const Corpus&, const Corpus&, const EvaluationOptions&,
                                          FixedPhiZStep<double>&);

}  // namespace bfly::lda
