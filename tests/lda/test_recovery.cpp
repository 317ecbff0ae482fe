// Topic recovery: a corpus generated from known topics (LDA's generative process) is trained with the CPU
// trainer; its topics, matched one to one with the true ones (best permutation), must be close in L1 distance.
#include "lda_test_util.hpp"
#include "trainer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace {

using bfly::lda::Corpus;

constexpr int kTopics = 6, kVocab = 60, kDocs = 1000, kLength = 80;

// True topics: each puts 97 % of its mass on its own 10 words (Zipf-like within them) and spreads the rest
// over the whole vocabulary. Documents: theta ~ Dir(0.3), then LDA's generative process.
struct Generated {
  Corpus corpus;
  std::vector<std::vector<double>> topics;  // kTopics x kVocab
};

Generated generate(std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  Generated g;
  g.topics.assign(kTopics, std::vector<double>(kVocab, 0.03 / kVocab));
  const int own = kVocab / kTopics;
  double zipf_total = 0;
  for (int r = 0; r < own; ++r) zipf_total += 1.0 / (r + 1);
  for (int k = 0; k < kTopics; ++k)
    for (int r = 0; r < own; ++r) g.topics[k][k * own + r] += 0.97 / (r + 1) / zipf_total;
  for (int w = 0; w < kVocab; ++w) g.corpus.vocab.push_back("w" + std::to_string(w));
  std::gamma_distribution<double> gamma(0.3, 1.0);
  std::vector<std::discrete_distribution<int>> word_of;
  for (const auto& t : g.topics) word_of.emplace_back(t.begin(), t.end());
  for (int m = 0; m < kDocs; ++m) {
    std::vector<double> theta(kTopics);
    for (double& x : theta) x = gamma(rng) + 1e-12;
    std::discrete_distribution<int> topic_of(theta.begin(), theta.end());
    for (int i = 0; i < kLength; ++i) g.corpus.words.push_back(word_of[topic_of(rng)](rng));
    g.corpus.doc_offsets.push_back(static_cast<std::int64_t>(g.corpus.words.size()));
    g.corpus.doc_ids.push_back(m);
  }
  g.corpus.input_documents = kDocs;
  g.corpus.check();
  return g;
}

// The smallest total L1 distance over all one-to-one matchings (6! permutations), and the matched distances.
std::vector<double> best_matching(const std::vector<std::vector<double>>& truth, const std::vector<float>& phi) {
  std::vector<std::vector<double>> distance(kTopics, std::vector<double>(kTopics, 0.0));
  for (int a = 0; a < kTopics; ++a)
    for (int b = 0; b < kTopics; ++b)
      for (int w = 0; w < kVocab; ++w) distance[a][b] += std::abs(truth[a][w] - phi[w * kTopics + b]);
  std::vector<int> perm(kTopics), best;
  std::iota(perm.begin(), perm.end(), 0);
  double best_total = 1e300;
  do {
    double total = 0;
    for (int a = 0; a < kTopics; ++a) total += distance[a][perm[a]];
    if (total < best_total) {
      best_total = total;
      best = perm;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  std::vector<double> matched(kTopics);
  for (int a = 0; a < kTopics; ++a) matched[a] = distance[a][best[a]];
  return matched;
}

class Recovery : public ::testing::TestWithParam<bfly::lda::Estimate> {};

TEST_P(Recovery, KnownTopicsAreFound) {
  const Generated g = generate(2026);
  const Corpus corpus = bfly::lda::sort_by_length(g.corpus);
  bfly::lda::TrainerOptions options;
  options.topics = kTopics;
  options.priors = {0.3, 0.05};
  options.seed = 7;
  options.estimate = GetParam();
  bfly::lda::Trainer<float> trainer(corpus, options, std::make_unique<bfly::lda::CpuZStep<float>>(0));
  const double ll0 = trainer.ll_per_token();
  for (int t = 0; t < 150; ++t) trainer.step();
  EXPECT_GT(trainer.ll_per_token(), ll0 + 0.2) << "the log-likelihood should rise well above the random start";

  const std::vector<double> matched = best_matching(g.topics, trainer.phi());
  double mean = 0;
  for (int k = 0; k < kTopics; ++k) {
    EXPECT_LT(matched[k], 0.15) << "true topic " << k << " is not recovered";
    mean += matched[k] / kTopics;
  }
  EXPECT_LT(mean, 0.10);
  std::printf("recovery (%s): L1 per matched topic:", bfly::lda::name_of(GetParam()));
  for (const double d : matched) std::printf(" %.3f", d);
  std::printf("; ll/token %.4f (start %.4f)\n", trainer.ll_per_token(), ll0);
}

INSTANTIATE_TEST_SUITE_P(Estimates, Recovery,
                         ::testing::Values(bfly::lda::Estimate::mean, bfly::lda::Estimate::draw),
                         [](const auto& info) { return std::string(bfly::lda::name_of(info.param)); });

}  // namespace
