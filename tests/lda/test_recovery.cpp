// Topic recovery: a corpus generated from known topics (LDA's generative process) is trained with the CPU
// trainer; its topics, matched one to one with the true ones (best permutation), must be close in L1 distance.
#include "lda_test_util.hpp"
#include "bfly/lda/trainer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace {

using bfly::lda::Corpus;

constexpr int kTopics = 6, kVocab = 60, kDocs = 1000, kLength = 80;

using bfly::lda::test::best_matching;

bfly::lda::test::KnownTopics generate(std::uint32_t seed) {
  return bfly::lda::test::known_topics_corpus(kTopics, kVocab, kDocs, kLength, seed);
}

class Recovery : public ::testing::TestWithParam<bfly::lda::Estimate> {};

TEST_P(Recovery, KnownTopicsAreFound) {
  const bfly::lda::test::KnownTopics g = generate(2026);
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
