// The CPU reference of the LDA iteration against independent, straightforward computations: the z-step draw for
// draw (same uniforms), counts, theta and phi, the Gamma draws, and the log-likelihood formula.
#include "lda_test_util.hpp"
#include "bfly/lda/reference.hpp"
#include "reference_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

// The uniforms of the kernels, compiled here on their own (not through the library).
#define __device__
#define __forceinline__ inline
#include "bfly/philox.cuh"
#undef __device__
#undef __forceinline__

namespace {

using bfly::lda::Corpus;
using namespace bfly::lda::test;

// Random theta (D x K) and phi (V x K) with about a quarter of the weights exactly zero, so that zero-weight
// topics are present everywhere (they must never be drawn).
template <typename T>
void random_model(const Corpus& c, int K, std::uint32_t seed, std::vector<T>& theta, std::vector<T>& phi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  auto fill = [&](std::vector<T>& v, std::size_t n) {
    v.resize(n);
    for (T& x : v) x = value(rng) < 0.25 ? T(0) : static_cast<T>(value(rng));
  };
  fill(theta, static_cast<std::size_t>(c.num_docs()) * K);
  fill(phi, static_cast<std::size_t>(c.vocab_size()) * K);
  for (std::int64_t m = 0; m < c.num_docs(); ++m) theta[m * K] = T(0.5);  // every token has a positive total
  for (int w = 0; w < c.vocab_size(); ++w) phi[static_cast<std::size_t>(w) * K] = T(0.5);
}

// Algorithms 1 and 2 written out plainly: products rounded to T, running sums in T, linear search.
template <typename T>
int straightforward_draw(const T* theta, const T* phi, int K, std::uint64_t seed, std::uint64_t token,
                         std::uint32_t iteration) {
  std::vector<T> prefix(static_cast<std::size_t>(K));
  T sum = 0;
  for (int k = 0; k < K; ++k) {
    const T product = theta[k] * phi[k];
    sum = sum + product;
    prefix[k] = sum;
  }
  const T u = bfly::uniform_from_bits(bfly::philox_bits(seed, token, 0u, iteration), T());
  T target = u * sum;
  if (!(target < sum)) target = std::nextafter(sum, T(0));
  for (int k = 0; k < K; ++k)
    if (target < prefix[k]) return k;
  return K - 1;
}

template <typename T>
class CpuZStepTest : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuZStepTest, Types);

TYPED_TEST(CpuZStepTest, DrawsEqualStraightforwardReference) {
  using T = TypeParam;
  const Corpus c = random_corpus(37, 23, 19, 11);
  for (const int K : {1, 5, 33, 64, 200}) {
    std::vector<T> theta, phi;
    random_model(c, K, 100 + K, theta, phi);
    std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()), -7);
    const std::uint64_t seed = 0x1234'5678'9abcull;
    const std::uint32_t iteration = 3;
    bfly::lda::CpuZStep<T> zstep(2);
    const auto report = zstep.run(c, K, theta, phi, z, seed, iteration);
    EXPECT_EQ(report.invalid_tokens, 0);
    long long boundary = 0;
    for (std::int64_t m = 0; m < c.num_docs(); ++m)
      for (std::int64_t i = c.doc_offsets[m]; i < c.doc_offsets[m + 1]; ++i) {
        const T* th = theta.data() + m * K;
        const T* ph = phi.data() + static_cast<std::int64_t>(c.words[i]) * K;
        ASSERT_EQ(z[i], straightforward_draw(th, ph, K, seed, static_cast<std::uint64_t>(i), iteration))
            << "K " << K << " token " << i;
        // Against the exact (long double) reference sampler of the GPU tests: equal up to boundary cases.
        std::vector<T> weights(static_cast<std::size_t>(K));
        for (int k = 0; k < K; ++k) weights[k] = th[k] * ph[k];
        const T u = bfly::lda::token_uniform<T>(seed, static_cast<std::uint64_t>(i), iteration);
        const auto ref = bfly::test::reference_draw(weights.data(), K, u);
        std::string why;
        const auto check = bfly::test::check_draw(weights.data(), K, z[i], ref, &why);
        ASSERT_NE(check, bfly::test::DrawCheck::wrong) << "K " << K << " token " << i << ": " << why;
        boundary += check == bfly::test::DrawCheck::boundary;
      }
    EXPECT_LE(boundary, 2) << "K " << K;
  }
}

TYPED_TEST(CpuZStepTest, ThreadCountDoesNotChangeDraws) {
  using T = TypeParam;
  const Corpus c = random_corpus(700, 50, 30, 5);  // several 256-document chunks
  const int K = 17;
  std::vector<T> theta, phi;
  random_model(c, K, 9, theta, phi);
  std::vector<std::int32_t> one(static_cast<std::size_t>(c.num_tokens())), three(one.size());
  bfly::lda::CpuZStep<T>(1).run(c, K, theta, phi, one, 42, 1);
  bfly::lda::CpuZStep<T>(3).run(c, K, theta, phi, three, 42, 1);
  EXPECT_EQ(one, three);
  bfly::lda::CpuZStep<T>(3).run(c, K, theta, phi, three, 42, 2);
  EXPECT_NE(one, three) << "the iteration must enter the counter";
}

TYPED_TEST(CpuZStepTest, InvalidTotalsGiveMinusOneAndAreReported) {
  using T = TypeParam;
  const Corpus c = random_corpus(6, 8, 5, 3);
  const int K = 4;
  std::vector<T> theta, phi;
  random_model(c, K, 1, theta, phi);
  std::fill_n(theta.begin() + 2 * K, K, T(0));                        // document 2: total 0
  theta[4 * K + 1] = std::numeric_limits<T>::quiet_NaN();            // document 4: NaN
  std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()));
  const auto report = bfly::lda::CpuZStep<T>(2).run(c, K, theta, phi, z, 1, 1);
  EXPECT_EQ(report.invalid_tokens, c.doc_length(2) + c.doc_length(4));
  EXPECT_EQ(report.first_invalid, c.doc_offsets[2]);
  for (std::int64_t m = 0; m < c.num_docs(); ++m)
    for (std::int64_t i = c.doc_offsets[m]; i < c.doc_offsets[m + 1]; ++i)
      EXPECT_EQ(z[i] == -1, m == 2 || m == 4) << "token " << i;
}

// own_topic_excess lowers the rounded product theta * phi of a token's own topic to that topic's weight with the
// token left out of the counts, (n_mk - 1 + alpha)(n_wk - 1 + beta) / ((N_m + A)(n_k - 1 + V beta)), up to rounding.
TYPED_TEST(CpuZStepTest, OwnTopicExcessLeavesTheTokenOutOfTheCounts) {
  using T = TypeParam;
  // theta and phi come rounded to T, and leaving a count of 1 out cancels all but alpha (beta) of it: the
  // rounding of (1 + alpha) / (N + A) grows by (1 + alpha) / alpha = 11, that of phi by (1 + beta) / beta = 101.
  const double tolerance = std::is_same_v<T, float> ? 11 * 101 * 1.2e-7 : 1e-12;
  const double alpha = 0.1, beta = 0.01, A = 6.4, v_beta = 339.0;  // K = 64, V = 33900
  for (const int doc_tokens : {1, 7, 300})
    for (int n_mk = 1; n_mk <= std::min(doc_tokens, 5); ++n_mk)
      for (const int n_wk : {1, 2, 40})
        for (const int n_k : {n_wk, 1000, 200000}) {
          const T theta = static_cast<T>((n_mk + alpha) / (doc_tokens + A));
          const T phi = static_cast<T>((n_wk + beta) / (n_k + v_beta));
          const T excess = bfly::lda::own_topic_excess(theta, phi, doc_tokens, A, n_k, v_beta);
          const double without = (n_mk - 1 + alpha) / (doc_tokens + A) * (n_wk - 1 + beta) / (n_k - 1 + v_beta);
          EXPECT_NEAR(static_cast<double>(theta * phi - excess) / without, 1.0, tolerance)
              << "N " << doc_tokens << " n_mk " << n_mk << " n_wk " << n_wk << " n_k " << n_k;
        }
  EXPECT_EQ(bfly::lda::own_topic_excess(T(0.25), T(0.5), 1, 1.0, 3, 2.0), T(0.125))
      << "a factor that would fall below zero is kept at zero: the whole weight is the excess";
}

// The collapsed z-step's draws follow collapsed Gibbs sampling's conditional, computed here from the counts
// directly: p(k) proportional to (n_mk - [k = z_i] + alpha)(n_wk - [k = z_i] + beta) / (n_k - [k = z_i] + V beta).
// Each token is drawn 4000 times from the same state (iterations 1 .. 4000 of the uniforms); chi-square over its
// categories, cells expected below 5 pooled. The same tallies against theta * phi (the mean z-step's weights) are
// far off: short documents and small priors make a token's own count decide much of its weight.
TYPED_TEST(CpuZStepTest, CollapsedDrawsFollowTheCollapsedConditional) {
  using T = TypeParam;
  const Corpus c = random_corpus(8, 6, 5, 21);
  const int K = 4;
  const bfly::lda::Priors priors{.alpha = 0.1, .beta = 0.01};
  const CollapsedState<T> state(c, K, priors, 5);
  const bfly::lda::CollapsedTerms terms = state.terms();
  const int runs = 4000;
  std::vector<long long> tally(static_cast<std::size_t>(c.num_tokens()) * K, 0);
  bfly::lda::CpuZStep<T> zstep(1);
  for (int t = 1; t <= runs; ++t) {
    std::vector<std::int32_t> z = state.z;
    ASSERT_EQ(zstep.run(c, K, state.theta, state.phi, z, 77, static_cast<std::uint32_t>(t), &terms).invalid_tokens, 0);
    for (std::size_t i = 0; i < z.size(); ++i) ++tally[i * K + static_cast<std::size_t>(z[i])];
  }
  // Pearson's statistic of one token's tallies against probabilities p, cells expected below 5 pooled.
  const auto chi_square = [&](const long long* observed, const std::vector<long double>& p, int& df) {
    long double statistic = 0, pooled_observed = 0, pooled_expected = 0;
    int cells = 0;
    for (int k = 0; k < K; ++k) {
      const long double expected = p[k] * runs;
      if (expected < 5) {
        pooled_observed += observed[k];
        pooled_expected += expected;
        continue;
      }
      statistic += (observed[k] - expected) * (observed[k] - expected) / expected;
      ++cells;
    }
    if (pooled_expected >= 5) {
      statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
      ++cells;
    } else if (pooled_observed > 5 + 10 * pooled_expected) {
      statistic += 1e9;  // draws where (almost) none are expected
    }
    df += std::max(cells - 1, 0);
    return statistic;
  };
  const double V = c.vocab_size();
  long double collapsed_statistic = 0, plain_statistic = 0;
  int collapsed_df = 0, plain_df = 0;
  for (std::int64_t m = 0; m < c.num_docs(); ++m)
    for (std::int64_t i = c.doc_offsets[m]; i < c.doc_offsets[m + 1]; ++i) {
      const int own = state.z[i], w = c.words[i];
      std::vector<long double> conditional(K), plain(K);
      long double conditional_sum = 0, plain_sum = 0;
      for (int k = 0; k < K; ++k) {
        const int left_out = k == own ? 1 : 0;
        conditional[k] = (state.counts.doc_topic[m * K + k] - left_out + priors.alpha) *
                         (state.counts.word_topic[static_cast<std::size_t>(w) * K + k] - left_out + priors.beta) /
                         (state.counts.topic[k] - left_out + V * priors.beta);
        plain[k] = static_cast<long double>(state.theta[m * K + k]) * state.phi[static_cast<std::size_t>(w) * K + k];
        conditional_sum += conditional[k];
        plain_sum += plain[k];
      }
      for (int k = 0; k < K; ++k) {
        conditional[k] /= conditional_sum;
        plain[k] /= plain_sum;
      }
      collapsed_statistic += chi_square(&tally[static_cast<std::size_t>(i) * K], conditional, collapsed_df);
      plain_statistic += chi_square(&tally[static_cast<std::size_t>(i) * K], plain, plain_df);
    }
  ASSERT_GT(collapsed_df, 20);
  // The 99.9th percentile of chi-square is below df + 5 sqrt(2 df) for these df.
  EXPECT_LT(collapsed_statistic, collapsed_df + 5 * std::sqrt(2.0 * collapsed_df))
      << "df " << collapsed_df << ": the draws do not follow the collapsed conditional";
  EXPECT_GT(plain_statistic, 10 * (plain_df + 5 * std::sqrt(2.0 * plain_df)))
      << "df " << plain_df << ": the collapsed draws look like the mean z-step's; the test would not see the difference";
}

TEST(Counts, MatchAssignment) {
  const Corpus c = random_corpus(20, 9, 10, 2);
  const int K = 3;
  std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()));
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<std::int32_t>(i * 7 % K);
  const auto counts = bfly::lda::count_topics(c, K, z, 2);
  for (std::int64_t m = 0; m < c.num_docs(); ++m) {
    int row = 0;
    for (int k = 0; k < K; ++k) row += counts.doc_topic[m * K + k];
    EXPECT_EQ(row, c.doc_length(m));
  }
  std::int64_t word0 = 0, expected0 = 0;
  for (int k = 0; k < K; ++k) word0 += counts.word_topic[k];
  for (const std::int32_t w : c.words) expected0 += w == 0;
  EXPECT_EQ(word0, expected0);
  EXPECT_EQ(std::accumulate(counts.topic.begin(), counts.topic.end(), std::int64_t{0}), c.num_tokens());
  z[0] = K;
  EXPECT_THROW(bfly::lda::count_topics(c, K, z), bfly::Error);
}

TEST(Estimates, MeansFollowTheFormulaAndDrawsAreReproducibleDistributions) {
  const Corpus c = random_corpus(30, 40, 25, 4);
  const int K = 6;
  std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()));
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<std::int32_t>((i * 5 + i / 3) % K);
  const auto counts = bfly::lda::count_topics(c, K, z);
  const bfly::lda::Priors priors{.alpha = 0.3, .beta = 0.02};
  std::vector<double> theta(static_cast<std::size_t>(c.num_docs()) * K), phi(static_cast<std::size_t>(40) * K);
  bfly::lda::estimate_theta<double>(c, counts, priors, bfly::lda::Estimate::mean, 1, 0, theta);
  bfly::lda::estimate_phi<double>(c, counts, priors, bfly::lda::Estimate::mean, 1, 0, phi);
  EXPECT_DOUBLE_EQ(theta[5 * K + 2], (counts.doc_topic[5 * K + 2] + 0.3) / (c.doc_length(5) + K * 0.3));
  EXPECT_DOUBLE_EQ(phi[7 * K + 4], (counts.word_topic[7 * K + 4] + 0.02) / (counts.topic[4] + 40 * 0.02));

  std::vector<float> a(theta.size()), b(theta.size()), pa(phi.size()), pb(phi.size());
  bfly::lda::estimate_theta<float>(c, counts, priors, bfly::lda::Estimate::draw, 9, 4, a, 1);
  bfly::lda::estimate_theta<float>(c, counts, priors, bfly::lda::Estimate::draw, 9, 4, b, 3);
  EXPECT_EQ(a, b) << "draws depend only on (seed, index, iteration)";
  bfly::lda::estimate_theta<float>(c, counts, priors, bfly::lda::Estimate::draw, 9, 5, b, 1);
  EXPECT_NE(a, b);
  bfly::lda::estimate_phi<float>(c, counts, priors, bfly::lda::Estimate::draw, 9, 4, pa, 1);
  bfly::lda::estimate_phi<float>(c, counts, priors, bfly::lda::Estimate::draw, 9, 4, pb, 2);
  EXPECT_EQ(pa, pb);
  for (std::int64_t m = 0; m < c.num_docs(); ++m) {
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += a[m * K + k];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  for (int k = 0; k < K; ++k) {
    double sum = 0;
    for (int w = 0; w < 40; ++w) sum += pa[static_cast<std::size_t>(w) * K + k];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(GammaDraw, MomentsMatchShape) {
  for (const double shape : {0.05, 0.5, 1.0, 3.5, 40.0}) {
    constexpr int kDraws = 40000;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < kDraws; ++i) {
      const double g = bfly::lda::gamma_draw(shape, 77, static_cast<std::uint64_t>(i), 1, 0);
      ASSERT_GE(g, 0.0);
      sum += g;
      sum2 += g * g;
    }
    const double mean = sum / kDraws, variance = sum2 / kDraws - mean * mean;
    // Gamma(a, 1): mean a, variance a; the standard error of the mean is sqrt(a / n).
    EXPECT_NEAR(mean, shape, 5 * std::sqrt(shape / kDraws)) << "shape " << shape;
    EXPECT_NEAR(variance / shape, 1.0, shape < 0.1 ? 0.35 : 0.1) << "shape " << shape;
  }
  EXPECT_EQ(bfly::lda::gamma_draw(2.0, 1, 5, 1, 3), bfly::lda::gamma_draw(2.0, 1, 5, 1, 3));
  EXPECT_NE(bfly::lda::gamma_draw(2.0, 1, 5, 1, 3), bfly::lda::gamma_draw(2.0, 1, 5, 2, 3));
}

// The stream layout the GPU's gamma_draw shares: below shape 1 the variate is Gamma(shape + 1), drawn from the same
// attempts, times U^(1/shape), U from the last word of attempt 0's block (the block both parts read).
TEST(GammaDraw, ShapeBelowOneBoostsTheDrawOfShapePlusOne) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> shapes(0.01, 0.99);
  for (int i = 0; i < 2000; ++i) {
    const double shape = shapes(rng);
    const std::uint64_t seed = rng(), index = rng() >> 8;
    const std::uint32_t stream = 1 + static_cast<std::uint32_t>(rng() % 2);
    const std::uint32_t iteration = static_cast<std::uint32_t>(rng());
    const bfly::Philox4x32 first = bfly::philox4x32_10(
        bfly::Philox4x32{{static_cast<unsigned>(index), static_cast<unsigned>(index >> 32), stream << 24, iteration}},
        static_cast<unsigned>(seed), static_cast<unsigned>(seed >> 32));
    const double u = (static_cast<double>(first.v[3]) + 0.5) * 2.3283064365386962890625e-10;
    const double expected =
        bfly::lda::gamma_draw(shape + 1.0, seed, index, stream, iteration) * std::pow(u, 1.0 / shape);
    const double got = bfly::lda::gamma_draw(shape, seed, index, stream, iteration);
    ASSERT_NEAR(got, expected, 1e-12 * expected) << "shape " << shape << ", index " << index;
  }
}

TEST(LogLikelihood, EqualsTheCollapsedJointFormula) {
  const Corpus c = random_corpus(12, 15, 9, 8);
  const int K = 4;
  const double alpha = 0.2, beta = 0.05;
  std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()));
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<std::int32_t>((i * i + 3) % K);
  const auto counts = bfly::lda::count_topics(c, K, z);
  // log p(w, z | alpha, beta) with every term written out, zero counts included.
  const int V = c.vocab_size();
  long double expected = 0;
  for (std::int64_t m = 0; m < c.num_docs(); ++m) {
    expected += std::lgamma(K * alpha) - std::lgamma(c.doc_length(m) + K * alpha);
    for (int k = 0; k < K; ++k) expected += std::lgamma(counts.doc_topic[m * K + k] + alpha) - std::lgamma(alpha);
  }
  for (int k = 0; k < K; ++k) {
    expected += std::lgamma(V * beta) - std::lgamma(counts.topic[k] + V * beta);
    for (int w = 0; w < V; ++w)
      expected += std::lgamma(counts.word_topic[static_cast<std::size_t>(w) * K + k] + beta) - std::lgamma(beta);
  }
  const double got = bfly::lda::log_likelihood(c, counts, {.alpha = alpha, .beta = beta}, 2);
  EXPECT_NEAR(got, static_cast<double>(expected), 1e-9 * std::abs(static_cast<double>(expected)));
}

}  // namespace
