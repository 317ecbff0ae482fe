// The generated LDA baselines (Algorithm 1 with 3, Algorithm 4 with 6 and 3) draw for draw: every baseline test
// spec's source, run on the CPU on a small random corpus (empty documents, lengths that differ within a warp, a
// partial last warp, zeros in theta and phi, a document and a word whose weights are all zero, row strides above
// K), against the reference sampler over the rounded products with the same uniforms. alg1 and alg4 add the same
// products in the same order, so they must also agree with each other exactly, topics and table p alike.
#include "cpu_kernels.hpp"
#include "reference_sampler.hpp"

#include "bfly/spec/spec_catalog.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using bfly::gen::ElementType;
using bfly::gen::LdaBaseline;
using bfly::test::CpuLdaBaselineKernel;

constexpr long long kDocs = 131;  // two 128-thread CTAs; the last warp has 3 documents
constexpr int kVocabulary = 37;
constexpr long long kZeroDocument = 40;  // theta row all zeros: every token of it is invalid
constexpr int kZeroWord = 5;             // phi row all zeros: every token of this word is invalid
constexpr int kPoison = 0x7eadbeef;

template <typename T>
struct Corpus {
  int K = 0;
  long long ld_theta = 0, ld_phi = 0;
  std::vector<long long> offsets{0};
  std::vector<int> words;
  std::vector<T> theta, phi;
  unsigned long long seed = 0;
  unsigned int iteration = 0;
};

template <typename T>
Corpus<T> make_corpus(int K, std::mt19937_64& rng) {
  Corpus<T> c;
  c.K = K;
  c.ld_theta = K + 1;
  c.ld_phi = K + 2;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (long long d = 0; d < kDocs; ++d) {
    const int length = d % 17 == 3 ? 0 : static_cast<int>(rng() % 12);  // some empty documents
    for (int i = 0; i < length; ++i) c.words.push_back(static_cast<int>(rng() % kVocabulary));
    c.offsets.push_back(static_cast<long long>(c.words.size()));
  }
  // NaN past column K - 1: a kernel reading outside a row's K topics makes its draws wrong.
  c.theta.assign(static_cast<std::size_t>(kDocs * c.ld_theta), std::numeric_limits<T>::quiet_NaN());
  c.phi.assign(static_cast<std::size_t>(kVocabulary * c.ld_phi), std::numeric_limits<T>::quiet_NaN());
  for (long long d = 0; d < kDocs; ++d)
    for (int k = 0; k < K; ++k)
      c.theta[d * c.ld_theta + k] =
          d == kZeroDocument || unit(rng) < 0.3 ? T(0) : static_cast<T>(unit(rng) + 0.01);
  for (int v = 0; v < kVocabulary; ++v)
    for (int k = 0; k < K; ++k)
      c.phi[v * c.ld_phi + k] = v == kZeroWord || unit(rng) < 0.3 ? T(0) : static_cast<T>(unit(rng) * 1e-3);
  c.seed = rng();
  c.iteration = static_cast<unsigned int>(rng() % 100);
  return c;
}

template <typename T>
struct Run {
  std::vector<int> z;
  std::vector<T> p;
  unsigned long long invalid[2] = {0, ~0ull};
};

template <typename T>
Run<T> run(const CpuLdaBaselineKernel& kernel, const Corpus<T>& c) {
  Run<T> r;
  r.z.assign(c.words.size(), kPoison);
  r.p.assign(static_cast<std::size_t>(kDocs * c.K), std::numeric_limits<T>::quiet_NaN());
  run_on_cpu(kernel, {c.theta.data(), c.ld_theta, c.phi.data(), c.ld_phi, c.offsets.data(), c.words.data(), r.z.data(),
                kDocs, r.p.data(), r.invalid, c.seed, c.iteration});
  return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every token against the reference; the invalid-token counters; p holding each document's last token's running
// sums in column m (p[k * D + m]), and nothing written for an empty document.
template <typename T>
void check_against_reference(const CpuLdaBaselineKernel& kernel, const Corpus<T>& c, const Run<T>& r,
                             long long& boundary_total) {
  const int K = c.K;
  long long expected_invalid = 0, first_invalid = -1, boundary = 0;
  std::vector<T> weights(static_cast<std::size_t>(K));
  for (long long d = 0; d < kDocs; ++d) {
    for (long long token = c.offsets[d]; token < c.offsets[d + 1]; ++token) {
      const T* const phi_row = &c.phi[static_cast<std::size_t>(c.words[token] * c.ld_phi)];
      for (int k = 0; k < K; ++k) weights[k] = c.theta[d * c.ld_theta + k] * phi_row[k];
      const T u = bfly::uniform_from_bits(
          bfly::philox_bits(c.seed, static_cast<unsigned long long>(token), 0u, c.iteration), T());
      const auto ref = bfly::test::reference_draw(weights.data(), K, u);
      if (ref.draw < 0 && first_invalid < 0) first_invalid = token;
      expected_invalid += ref.draw < 0;
      std::string why;
      const auto verdict = bfly::test::check_draw(weights.data(), K, r.z[token], ref, &why);
      ASSERT_NE(verdict, bfly::test::DrawCheck::wrong)
          << kernel.name << " document " << d << " token " << token << ": " << why;
      boundary += verdict == bfly::test::DrawCheck::boundary;
    }
    const bool empty = c.offsets[d + 1] == c.offsets[d];
    T sum = T(0);  // the last token's running sums, as the kernel adds them
    for (int k = 0; k < K; ++k) {
      const T stored = r.p[static_cast<std::size_t>(k * kDocs + d)];
      if (empty) {
        ASSERT_TRUE(std::isnan(stored)) << kernel.name << ": p written for the empty document " << d;
        continue;
      }
      sum += weights[k];
      ASSERT_TRUE(same_bits(stored, sum)) << kernel.name << ": p[" << k << " * D + " << d << "] = " << stored
                                          << ", the running sum of the document's last token is " << sum;
    }
  }
  EXPECT_GE(expected_invalid, 1) << "the corpus must have invalid tokens";
  EXPECT_EQ(static_cast<long long>(r.invalid[0]), expected_invalid) << kernel.name;
  EXPECT_EQ(static_cast<long long>(r.invalid[1]), expected_invalid > 0 ? first_invalid : -1ll) << kernel.name;
  EXPECT_LE(boundary, 2) << kernel.name;
  boundary_total += boundary;
}

template <typename T>
void check_pair(const CpuLdaBaselineKernel& alg1, const CpuLdaBaselineKernel& alg4, std::mt19937_64& rng,
                long long& tokens, long long& boundary) {
  const Corpus<T> corpus = make_corpus<T>(alg1.spec.K, rng);
  const Run<T> run1 = run(alg1, corpus), run4 = run(alg4, corpus);
  check_against_reference(alg1, corpus, run1, boundary);
  if (testing::Test::HasFatalFailure()) return;
  check_against_reference(alg4, corpus, run4, boundary);
  if (testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(run1.z, run4.z) << alg1.name << " and " << alg4.name << " draw different topics";
  for (std::size_t i = 0; i < run1.p.size(); ++i)
    ASSERT_TRUE(same_bits(run1.p[i], run4.p[i]) || (std::isnan(run1.p[i]) && std::isnan(run4.p[i])))
        << alg1.name << " and " << alg4.name << " differ in p[" << i << "]";
  tokens += static_cast<long long>(corpus.words.size());
}

TEST(LdaBaselines, DrawLikeTheReferenceAndAgreeWithEachOther) {
  std::mt19937_64 rng(bfly::test::run_seed() ^ 0x1da'ba5e11e5ull);
  const std::vector<CpuLdaBaselineKernel>& kernels = bfly::test::cpu_lda_baseline_kernels();
  long long tokens = 0, boundary = 0;
  int pairs = 0;
  for (const CpuLdaBaselineKernel& alg1 : kernels) {
    if (alg1.spec.algorithm != LdaBaseline::alg1) continue;
    const CpuLdaBaselineKernel* alg4 = nullptr;
    for (const CpuLdaBaselineKernel& k : kernels)
      if (k.spec.algorithm == LdaBaseline::alg4 && k.spec.K == alg1.spec.K && k.spec.type == alg1.spec.type) alg4 = &k;
    ASSERT_NE(alg4, nullptr) << "no alg4 kernel beside " << alg1.name;
    if (alg1.spec.type == ElementType::f32) check_pair<float>(alg1, *alg4, rng, tokens, boundary);
    else check_pair<double>(alg1, *alg4, rng, tokens, boundary);
    if (HasFatalFailure()) return;
    ++pairs;
  }
  EXPECT_EQ(2 * pairs, static_cast<int>(bfly::gen::lda_baseline_test_specs().size()));
  std::printf("LDA baselines: %d alg1/alg4 pairs, %lld tokens (each drawn by both), %lld boundary cases\n", pairs,
              tokens, boundary);
}

}  // namespace
