// bfly-lda's CPU path against the GPU (label gpu; skips itself without a device): every z-step kernel compiled
// into bfly-lda for the CPU (GeneratedCpuZStep) draws exactly the topics that the GPU draws with the kernel
// LdaZStep chooses for the same K and type, token for token; as the plain z-step on random theta and phi, and as
// the collapsed z-step on the means of the counts of random topics.
#include "bfly/ops/lda_z_step.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "gpu_support.hpp"
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

namespace {

using bfly::lda::CompiledZKernel;
using bfly::lda::Corpus;

template <typename T>
void compare_with_gpu(const CompiledZKernel& kernel, bool collapsed, std::mt19937_64& rng, long long& tokens_compared) {
  const int K = kernel.spec.K;
  const Corpus corpus = bfly::lda::sort_by_length(bfly::lda::test::random_corpus(400, 61, 40, static_cast<std::uint32_t>(rng())));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> theta(static_cast<std::size_t>(corpus.num_docs()) * K), phi(static_cast<std::size_t>(corpus.vocab_size()) * K);
  for (T& x : theta) x = unit(rng) < 0.2 ? T(0) : static_cast<T>(unit(rng));
  for (T& x : phi) x = unit(rng) < 0.2 ? T(0) : static_cast<T>(unit(rng) * 1e-2);
  std::vector<std::int32_t> cpu(static_cast<std::size_t>(corpus.num_tokens()), -7);
  std::vector<std::int32_t> topic_counts;
  bfly::lda::CollapsedTerms terms;
  if (collapsed) {
    const bfly::lda::test::CollapsedState<T> state(corpus, K, {.alpha = 0.1, .beta = 0.01},
                                                   static_cast<std::uint32_t>(rng()));
    theta = state.theta;
    phi = state.phi;
    cpu = state.z;
    topic_counts = state.topic_counts;
    terms = bfly::lda::CollapsedTerms{topic_counts, state.alpha_sum, state.v_beta};
  }
  const std::vector<std::int32_t> z_on_entry = cpu;
  const std::uint64_t seed = rng();
  const std::uint32_t iteration = static_cast<std::uint32_t>(rng() % 1000);

  const bfly::lda::ZStepReport cpu_report = bfly::lda::GeneratedCpuZStep<T>(kernel, 2).run(
      corpus, K, theta, phi, cpu, seed, iteration, collapsed ? &terms : nullptr);

  // The GPU's choice for K and T (for short documents when the kernel is the short-document one), which the
  // compiled kernel must be.
  bfly::rt::LdaZOptions options;
  if (kernel.spec != bfly::lda::gpu_z_spec<T>(K)) options.mean_document_length = 1.0;
  bfly::rt::LdaZStep step(options);
  const std::vector<long long> offsets(corpus.doc_offsets.begin(), corpus.doc_offsets.end());
  const std::vector<int> words(corpus.words.begin(), corpus.words.end());
  const std::vector<int> entry(z_on_entry.begin(), z_on_entry.end());
  const std::vector<int> counts = collapsed ? std::vector<int>(topic_counts.begin(), topic_counts.end())
                                            : std::vector<int>(static_cast<std::size_t>(K), 0);  // unused, not empty
  const bfly::rt::DeviceBuffer theta_d = bfly::test::upload(theta), phi_d = bfly::test::upload(phi),
                               offsets_d = bfly::test::upload(offsets), words_d = bfly::test::upload(words),
                               z_d = bfly::test::upload(entry), counts_d = bfly::test::upload(counts);
  const bfly::rt::LdaCollapsed gpu_terms{collapsed ? bfly::test::as<int>(counts_d) : nullptr, terms.alpha_sum,
                                         terms.v_beta};
  const bfly::rt::LdaZReport report = step.run(bfly::test::as<T>(theta_d), K, bfly::test::as<T>(phi_d), K,
                                               bfly::test::as<long long>(offsets_d), bfly::test::as<int>(words_d),
                                               reinterpret_cast<int*>(z_d.get()), corpus.num_docs(), K, seed, iteration,
                                               nullptr, gpu_terms);
  ASSERT_EQ(bfly::gen::kernel_name(report.spec), kernel.kernel.name);
  const std::vector<int> gpu = bfly::test::download<int>(z_d);
  for (std::size_t t = 0; t < gpu.size(); ++t)
    ASSERT_EQ(gpu[t], cpu[t]) << kernel.kernel.name << ": token " << t << " differs between the GPU and bfly-lda's CPU path";
  EXPECT_EQ(report.invalid_tokens, cpu_report.invalid_tokens) << kernel.kernel.name;
  tokens_compared += corpus.num_tokens();
}

void compare_every_kernel(bool collapsed) {
  std::mt19937_64 rng(collapsed ? 20261125 : 20261123);
  long long tokens = 0;
  for (const CompiledZKernel& kernel : bfly::lda::compiled_z_kernels()) {
    if (kernel.spec.type == bfly::gen::ElementType::f32) compare_with_gpu<float>(kernel, collapsed, rng, tokens);
    else compare_with_gpu<double>(kernel, collapsed, rng, tokens);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::printf("[bfly draws] GpuLdaGeneratedZStep%s: %zu kernels, %lld tokens equal\n", collapsed ? " (collapsed)" : "",
              bfly::lda::compiled_z_kernels().size(), tokens);
}

TEST(GpuLdaGeneratedZStep, CpuPathDrawsWhatTheGpuDraws) {
  BFLY_REQUIRE_GPU();
  compare_every_kernel(false);
}

TEST(GpuLdaGeneratedZStep, CollapsedCpuPathDrawsWhatTheGpuDraws) {
  BFLY_REQUIRE_GPU();
  compare_every_kernel(true);
}

}  // namespace
