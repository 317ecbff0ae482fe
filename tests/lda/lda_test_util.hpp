// Helpers of the bfly-lda tests (CPU and GPU): scratch directories, small files, small corpora built in memory,
// corpora from known topics and the matching that scores their recovery.
#pragma once

#include "bfly/lda/corpus.hpp"
#include "bfly/lda/reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace bfly::lda::test {

// A fresh directory under the test's temp dir, named after the running test.
inline std::filesystem::path scratch_dir(const std::string& tag = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name() + tag;
  for (char& c : name)
    if (c == '/') c = '_';
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "bfly-lda-tests" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

// Word w's name in a made corpus: "w" and its number.
inline std::string word_name(int w) {
  std::string name = "w";
  name += std::to_string(w);
  return name;
}

// A corpus of `docs` documents with 1..max_length tokens of uniformly random words.
inline Corpus random_corpus(std::int64_t docs, int vocab, int max_length, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Corpus corpus;
  for (int w = 0; w < vocab; ++w) corpus.vocab.push_back(word_name(w));
  std::uniform_int_distribution<int> length(1, max_length), word(0, vocab - 1);
  for (std::int64_t m = 0; m < docs; ++m) {
    const int n = length(rng);
    for (int i = 0; i < n; ++i) corpus.words.push_back(word(rng));
    corpus.doc_offsets.push_back(static_cast<std::int64_t>(corpus.words.size()));
    corpus.doc_ids.push_back(m);
  }
  corpus.input_documents = docs;
  corpus.check();
  return corpus;
}

// The body of a UCI docword file for `corpus` (one line per token, count 1) and its vocabulary file.
inline std::string docword_text(const Corpus& corpus) {
  std::string text = std::to_string(corpus.num_docs()) + "\n" + std::to_string(corpus.vocab_size()) + "\n" +
                     std::to_string(corpus.num_tokens()) + "\n";
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m)
    for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i)
      text += std::to_string(m + 1) + " " + std::to_string(corpus.words[i] + 1) + " 1\n";
  return text;
}
inline std::string vocab_text(const Corpus& corpus) {
  std::string text;
  for (const std::string& w : corpus.vocab) text += w + "\n";
  return text;
}


// A corpus generated from known topics by LDA's generative process. True topics: each puts 97 % of its mass on
// its own vocab/topics words (Zipf-like within them) and spreads the rest over the whole vocabulary; each
// document draws theta ~ Dir(0.3) (or Dir(alpha) for a given asymmetric alpha, one value per topic), then a topic
// and a word per token.
struct KnownTopics {
  Corpus corpus;                            // documents in generation order (not sorted)
  std::vector<std::vector<double>> topics;  // topics x vocab
};

inline KnownTopics known_topics_corpus(int topics, int vocab, int docs, int length, std::uint64_t seed,
                                       const std::vector<double>& alpha = {}) {
  std::mt19937_64 rng(seed);
  KnownTopics g;
  g.topics.assign(static_cast<std::size_t>(topics), std::vector<double>(static_cast<std::size_t>(vocab), 0.03 / vocab));
  const int own = vocab / topics;
  double zipf_total = 0;
  for (int r = 0; r < own; ++r) zipf_total += 1.0 / (r + 1);
  for (int k = 0; k < topics; ++k)
    for (int r = 0; r < own; ++r) g.topics[k][k * own + r] += 0.97 / (r + 1) / zipf_total;
  for (int w = 0; w < vocab; ++w) g.corpus.vocab.push_back(word_name(w));
  std::gamma_distribution<double> gamma(0.3, 1.0);
  std::vector<std::discrete_distribution<int>> word_of;
  for (const auto& t : g.topics) word_of.emplace_back(t.begin(), t.end());
  for (int m = 0; m < docs; ++m) {
    std::vector<double> theta(static_cast<std::size_t>(topics));
    for (std::size_t k = 0; k < theta.size(); ++k)
      theta[k] = (alpha.empty() ? gamma(rng) : std::gamma_distribution<double>(alpha[k], 1.0)(rng)) + 1e-12;
    std::discrete_distribution<int> topic_of(theta.begin(), theta.end());
    for (int i = 0; i < length; ++i) g.corpus.words.push_back(word_of[topic_of(rng)](rng));
    g.corpus.doc_offsets.push_back(static_cast<std::int64_t>(g.corpus.words.size()));
    g.corpus.doc_ids.push_back(m);
  }
  g.corpus.input_documents = docs;
  g.corpus.check();
  return g;
}

// The L1 distances of the true topics to the trained ones (phi: vocab x topics, row-major) under the one-to-one
// matching with the smallest total (all permutations: keep `topics` small).
template <typename T>
std::vector<double> best_matching(const std::vector<std::vector<double>>& truth, const std::vector<T>& phi) {
  const int topics = static_cast<int>(truth.size()), vocab = static_cast<int>(truth[0].size());
  std::vector<std::vector<double>> distance(topics, std::vector<double>(topics, 0.0));
  for (int a = 0; a < topics; ++a)
    for (int b = 0; b < topics; ++b)
      for (int w = 0; w < vocab; ++w) distance[a][b] += std::abs(truth[a][w] - phi[w * topics + b]);
  std::vector<int> perm(topics), best;
  std::iota(perm.begin(), perm.end(), 0);
  double best_total = 1e300;
  do {
    double total = 0;
    for (int a = 0; a < topics; ++a) total += distance[a][perm[a]];
    if (total < best_total) {
      best_total = total;
      best = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  std::vector<double> matched(topics);
  for (int a = 0; a < topics; ++a) matched[a] = distance[a][best[a]];
  return matched;
}

// A state of the collapsed z-step: random topics z of `corpus`, their counts, and theta and phi as the posterior
// means of those counts under `priors` (what Estimate::collapsed hands the z-step), with n_k as the z-step takes it.
template <typename T>
struct CollapsedState {
  std::vector<std::int32_t> z;
  Counts counts;
  std::vector<T> theta, phi;
  std::vector<std::int32_t> topic_counts;
  double alpha_sum = 0, v_beta = 0;

  CollapsedState(const Corpus& corpus, int K, const Priors& priors, std::uint32_t seed) {
    std::mt19937 rng(seed);
    z.resize(static_cast<std::size_t>(corpus.num_tokens()));
    for (std::int32_t& k : z) k = static_cast<std::int32_t>(rng() % static_cast<unsigned>(K));
    counts = count_topics(corpus, K, z, 1);
    theta.resize(static_cast<std::size_t>(corpus.num_docs()) * K);
    phi.resize(static_cast<std::size_t>(corpus.vocab_size()) * K);
    estimate_theta<T>(corpus, counts, priors, Estimate::collapsed, 1, 0, theta, 1);
    estimate_phi<T>(corpus, counts, priors, Estimate::collapsed, 1, 0, phi, 1);
    topic_counts.assign(counts.topic.begin(), counts.topic.end());
    alpha_sum = priors.alpha_sum(K);
    v_beta = static_cast<double>(corpus.vocab_size()) * priors.beta;
  }
  CollapsedTerms terms() const { return CollapsedTerms{topic_counts, alpha_sum, v_beta}; }
};

}  // namespace bfly::lda::test
