// The lda_z operation draw for draw: every lda-test spec's generated source, run on the CPU on a small random
// corpus (empty documents, lengths that differ within a group, zeros in theta and phi), against the
// reference sampler over the rounded products theta[doc][k] * phi[word][k] with the same uniforms.
#include "cpu_kernels.hpp"
#include "reference_sampler.hpp"

#include "bfly/spec/spec_catalog.hpp"

#include <gtest/gtest.h>

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


template <typename T>
void check_lda_kernel(const CpuLdaKernel& kernel, long long& tokens_checked, long long& boundary_total) {
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
  std::vector<T> theta(static_cast<std::size_t>(kDocs * ld_theta), std::numeric_limits<T>::quiet_NaN());
  std::vector<T> phi(static_cast<std::size_t>(kVocabulary * ld_phi), std::numeric_limits<T>::quiet_NaN());
  for (long long d = 0; d < kDocs; ++d)
    for (int k = 0; k < K; ++k) theta[d * ld_theta + k] = unit(rng) < 0.3 ? T(0) : static_cast<T>(unit(rng) + 0.01);
  for (int v = 0; v < kVocabulary; ++v)
    for (int k = 0; k < K; ++k) phi[v * ld_phi + k] = unit(rng) < 0.3 ? T(0) : static_cast<T>(unit(rng) * 1e-3);

  std::vector<int> z(words.size(), kPoison);
  unsigned long long invalid[2] = {0, ~0ull};
  const unsigned long long seed = rng();
  const unsigned int iteration = static_cast<unsigned int>(rng() % 100);
  run_on_cpu(kernel, {theta.data(), ld_theta, phi.data(), ld_phi, offsets.data(), words.data(), z.data(), kDocs, invalid,
                seed, iteration});

  long long expected_invalid = 0, boundary = 0;
  std::vector<T> weights(static_cast<std::size_t>(K));
  for (long long d = 0; d < kDocs; ++d)
    for (long long token = offsets[d]; token < offsets[d + 1]; ++token) {
      for (int k = 0; k < K; ++k)
        weights[k] = theta[d * ld_theta + k] * phi[static_cast<long long>(words[token]) * ld_phi + k];
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

TEST(LdaZ, EveryTokenMatchesTheReferenceExceptBoundaryCases) {
  long long tokens = 0, boundary = 0;
  int kernels = 0;
  for (const CpuLdaKernel& kernel : bfly::test::cpu_lda_kernels()) {
    if (kernel.spec.type == ElementType::f32) check_lda_kernel<float>(kernel, tokens, boundary);
    else check_lda_kernel<double>(kernel, tokens, boundary);
    if (HasFatalFailure()) return;
    ++kernels;
  }
  EXPECT_EQ(kernels, static_cast<int>(bfly::gen::lda_test_specs().size()));
  EXPECT_GE(kernels, 100);
  std::printf("lda_z: %d kernels, %lld tokens, %lld boundary cases\n", kernels, tokens, boundary);
}

}  // namespace
