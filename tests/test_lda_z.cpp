// The lda_z operation draw for draw: every lda-test spec's generated source, run on the CPU on a small random
// corpus (empty documents, lengths that differ within a group, zeros in theta and phi), against the
// reference sampler over the rounded products theta[doc][k] * phi[word][k] with the same uniforms; and the same
// for the collapsed z-step, whose weights lower each token's own current topic (written out here on its own).
#include "cpu_kernels.hpp"
#include "reference_sampler.hpp"

#include "bfly/spec/spec_catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>


namespace {

using bfly::gen::ElementType;
using bfly::test::CpuLdaKernel;

constexpr long long kDocs = 131;  // two 128-thread CTAs, not a multiple of any W
constexpr int kVocabulary = 37;
constexpr int kPoison = 0x7eadbeef;

// The collapsed z-step's weight of a token's own topic with the token left out of the counts behind theta and phi
// (docs/LDA.md): (theta - 1 / (N + alpha_sum)) * (phi * (n_k + v_beta) - 1) / (n_k + v_beta - 1), each factor in
// double, kept >= 0 and rounded to T; the kernels lower the rounded product theta * phi to it.
template <typename T>
T weight_without_token(T theta, T phi, long long doc_tokens, double alpha_sum, int topic_count, double v_beta) {
  const double theta_without = static_cast<double>(theta) - 1.0 / (static_cast<double>(doc_tokens) + alpha_sum);
  const double denominator = topic_count + v_beta;
  const double phi_without =
      denominator > 1.0 ? (static_cast<double>(phi) * denominator - 1.0) / (denominator - 1.0) : static_cast<double>(phi);
  const T without = static_cast<T>(std::max(theta_without, 0.0)) * static_cast<T>(std::max(phi_without, 0.0));
  return std::min(without, theta * phi);
}


// `collapsed`: every token has a current topic in z, the kernel gets topic counts and priors, and the expected
// weights lower each token's own topic to weight_without_token.
template <typename T>
void check_lda_kernel(const CpuLdaKernel& kernel, bool collapsed, long long& tokens_checked, long long& boundary_total,
                      long long& lowered_draws) {
  const int K = kernel.spec.K;
  const long long ld_theta = K + 1, ld_phi = K + 2;
  std::mt19937_64 rng(bfly::test::run_seed() ^ std::hash<std::string_view>{}(kernel.name));
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  std::vector<long long> offsets{0};
  std::vector<int> words;
  for (long long d = 0; d < kDocs; ++d) {
    const int length = d % 17 == 3 ? 0 : static_cast<int>(rng() % 12);  // some empty documents
    for (int i = 0; i < length; ++i) words.push_back(static_cast<int>(rng() % kVocabulary));
    offsets.push_back(static_cast<long long>(words.size()));
  }
  // Collapsed: phi * (n_k + v_beta) spans 0 .. 8, so that leaving a token out lowers its topic's phi to 0 or not.
  const double phi_scale = collapsed ? 0.2 : 1e-3;
  std::vector<T> theta(static_cast<std::size_t>(kDocs * ld_theta), std::numeric_limits<T>::quiet_NaN());
  std::vector<T> phi(static_cast<std::size_t>(kVocabulary * ld_phi), std::numeric_limits<T>::quiet_NaN());
  for (long long d = 0; d < kDocs; ++d)
    for (int k = 0; k < K; ++k) theta[d * ld_theta + k] = unit(rng) < 0.3 ? T(0) : static_cast<T>(unit(rng) + 0.01);
  for (int v = 0; v < kVocabulary; ++v)
    for (int k = 0; k < K; ++k) phi[v * ld_phi + k] = unit(rng) < 0.3 ? T(0) : static_cast<T>(unit(rng) * phi_scale);

  std::vector<int> z(words.size(), kPoison);
  std::vector<int> topic_counts(static_cast<std::size_t>(K));
  const double alpha_sum = 0.1 * K + 0.3, v_beta = 0.37;
  if (collapsed) {
    for (int& own : z) own = static_cast<int>(rng() % K);
    for (int& n : topic_counts) n = 1 + static_cast<int>(rng() % 40);
  }
  const std::vector<int> own_topics = z;
  unsigned long long invalid[2] = {0, ~0ull};
  const unsigned long long seed = rng();
  const unsigned int iteration = static_cast<unsigned int>(rng() % 100);
  run_on_cpu(kernel, {theta.data(), ld_theta, phi.data(), ld_phi, offsets.data(), words.data(), z.data(), kDocs,
                      collapsed ? topic_counts.data() : nullptr, alpha_sum, v_beta, invalid, seed, iteration});

  long long expected_invalid = 0, boundary = 0;
  std::vector<T> weights(static_cast<std::size_t>(K));
  for (long long d = 0; d < kDocs; ++d)
    for (long long token = offsets[d]; token < offsets[d + 1]; ++token) {
      for (int k = 0; k < K; ++k)
        weights[k] = theta[d * ld_theta + k] * phi[static_cast<long long>(words[token]) * ld_phi + k];
      if (collapsed) {
        const int own = own_topics[token];
        const T lowered = weight_without_token(theta[d * ld_theta + own],
                                               phi[static_cast<long long>(words[token]) * ld_phi + own],
                                               offsets[d + 1] - offsets[d], alpha_sum, topic_counts[own], v_beta);
        lowered_draws += z[token] == own && lowered > T(0) && lowered < weights[own];
        weights[own] = lowered;
      }
      const T u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(token), 0u, iteration),
                                          T());
      const auto ref = bfly::test::reference_draw(weights.data(), K, u);
      expected_invalid += ref.draw < 0;
      std::string why;
      const auto verdict = bfly::test::check_draw(weights.data(), K, z[token], ref, &why);
      ASSERT_NE(verdict, bfly::test::DrawCheck::wrong) << kernel.name << " document " << d << " token " << token
                                                       << ": " << why;
      boundary += verdict == bfly::test::DrawCheck::boundary;
    }
  EXPECT_EQ(static_cast<long long>(invalid[0]), expected_invalid) << kernel.name;
  EXPECT_LE(boundary, 2) << kernel.name;
  tokens_checked += static_cast<long long>(words.size());
  boundary_total += boundary;
}

void check_every_kernel(bool collapsed) {
  long long tokens = 0, boundary = 0, lowered = 0;
  int kernels = 0;
  for (const CpuLdaKernel& kernel : bfly::test::cpu_lda_kernels()) {
    if (kernel.spec.type == ElementType::f32) check_lda_kernel<float>(kernel, collapsed, tokens, boundary, lowered);
    else check_lda_kernel<double>(kernel, collapsed, tokens, boundary, lowered);
    if (::testing::Test::HasFatalFailure()) return;
    ++kernels;
  }
  EXPECT_EQ(kernels, static_cast<int>(bfly::gen::lda_test_specs().size()));
  EXPECT_GE(kernels, 100);
  std::printf("lda_z%s: %d kernels, %lld tokens, %lld boundary cases, %lld draws of a lowered own topic\n",
              collapsed ? " (collapsed)" : "", kernels, tokens, boundary, lowered);
  if (collapsed) {
    EXPECT_GT(lowered, tokens / 50) << "the own topic's lowered weight was hardly ever drawn";
  }
}

TEST(LdaZ, EveryTokenMatchesTheReferenceExceptBoundaryCases) { check_every_kernel(false); }

// The collapsed z-step: each kernel finds the draw among its unlowered sums, searching twice where the first search
// lands on the token's own topic or later; the expected draws come from the lowered weights directly.
TEST(LdaZ, CollapsedDrawsMatchTheLoweredWeightsExceptBoundaryCases) { check_every_kernel(true); }

}  // namespace
