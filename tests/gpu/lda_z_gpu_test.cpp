// The LDA z-step on the GPU (label gpu): every lda-test catalog kernel, run through rt::LdaZStep, gives
// exactly the topics of the CPU execution of the same generated source on the same corpus and seed, as the plain
// z-step and as the collapsed one (each token's current topic left out of the counts).
#include "bfly/spec/spec_catalog.hpp"
#include "bfly/ops/lda_z_step.hpp"
#include "cpu_kernels.hpp"
#include "gpu_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

namespace bfly::test {
namespace {

// `collapsed`: every token starts with a random current topic, and the kernel gets topic counts and priors whose
// scale lets leaving the token out lower its topic's weight to zero or not.
template <typename T>
void compare_with_cpu(const CpuLdaKernel& kernel, bool collapsed, std::mt19937_64& rng, long long& tokens_compared) {
  const int K = kernel.spec.K;
  RandomLdaProblem<T> problem = random_lda_problem<T>(K, rng);
  const long long D = problem.D, ld_theta = problem.ld_theta, ld_phi = problem.ld_phi;
  const std::vector<long long>& offsets = problem.offsets;
  const std::vector<int>& words = problem.words;
  const std::vector<T>& theta = problem.theta;
  const std::vector<T>& phi = problem.phi;
  const unsigned long long seed = rng();
  const unsigned int iteration = static_cast<unsigned int>(rng() % 1000);
  std::vector<int> own_topics(words.size(), 0x5a5a5a5a), topic_counts(static_cast<std::size_t>(K));
  const double alpha_sum = 0.1 * K, v_beta = 0.5;
  if (collapsed) {
    for (int& own : own_topics) own = static_cast<int>(rng() % K);
    for (int& n : topic_counts) n = 1 + static_cast<int>(rng() % 400);
  }

  std::vector<int> cpu = own_topics;
  unsigned long long cpu_invalid[2] = {0, ~0ull};
  run_on_cpu(kernel, {theta.data(), ld_theta, phi.data(), ld_phi, offsets.data(), words.data(), cpu.data(), D,
                      collapsed ? topic_counts.data() : nullptr, alpha_sum, v_beta, cpu_invalid, seed, iteration});

  rt::LdaZOptions options;
  options.operation = kernel.spec.operation;
  options.W = kernel.spec.W;
  options.variant = kernel.spec.variant;
  options.R = kernel.spec.R;
  rt::LdaZStep step(options);
  const rt::DeviceBuffer theta_d = upload(theta), phi_d = upload(phi), offsets_d = upload(offsets),
                         words_d = upload(words), z_d = upload(own_topics), counts_d = upload(topic_counts);
  const rt::LdaCollapsed terms{collapsed ? as<int>(counts_d) : nullptr, alpha_sum, v_beta};
  const rt::LdaZReport report =
      step.run(as<T>(theta_d), ld_theta, as<T>(phi_d), ld_phi, as<long long>(offsets_d), as<int>(words_d),
               reinterpret_cast<int*>(z_d.get()), D, K, seed, iteration, nullptr, terms);
  ASSERT_EQ(gen::kernel_name(report.spec), kernel.name);
  const std::vector<int> gpu = download<int>(z_d);
  for (std::size_t t = 0; t < words.size(); ++t)
    ASSERT_EQ(gpu[t], cpu[t]) << kernel.name << ": token " << t << " differs between the GPU and the CPU";
  EXPECT_EQ(report.invalid_tokens, static_cast<long long>(cpu_invalid[0])) << kernel.name;
  tokens_compared += static_cast<long long>(words.size());
}

void compare_every_kernel(bool collapsed) {
  std::mt19937_64 rng(collapsed ? 20261125 : 20261122);
  long long tokens = 0;
  int kernels = 0;
  for (const CpuLdaKernel& kernel : cpu_lda_kernels()) {
    if (kernel.spec.type == gen::ElementType::f32) compare_with_cpu<float>(kernel, collapsed, rng, tokens);
    else compare_with_cpu<double>(kernel, collapsed, rng, tokens);
    if (::testing::Test::HasFatalFailure()) return;
    ++kernels;
  }
  EXPECT_EQ(kernels, static_cast<int>(gen::lda_test_specs().size()));
  std::printf("[bfly draws] GpuLdaZ%s: %d kernels, %lld tokens\n", collapsed ? " (collapsed)" : "", kernels, tokens);
}

TEST(GpuLdaZ, EqualToCpuExecutionOfTheSameSource) {
  BFLY_REQUIRE_GPU();
  compare_every_kernel(false);
}

TEST(GpuLdaZ, CollapsedEqualToCpuExecutionOfTheSameSource) {
  BFLY_REQUIRE_GPU();
  compare_every_kernel(true);
}

TEST(GpuLdaZ, RejectsBadArgumentsBeforeAnyLaunch) {
  rt::LdaZStep step;
  int dummy = 0;
  const float* theta = reinterpret_cast<const float*>(&dummy);
  EXPECT_THROW(step.run(theta, 8, theta, 16, nullptr, &dummy, &dummy, 4, 16, 1, 0), Error);  // ld_theta < K
  EXPECT_THROW(step.run(theta, 16, theta, 16, nullptr, &dummy, &dummy, 4, 16, 1, 0), Error);  // null offsets
  EXPECT_THROW(step.run(theta, 16, theta, 16, nullptr, &dummy, &dummy, -1, 16, 1, 0), Error);  // D < 0
  EXPECT_NO_THROW(step.run(theta, 16, theta, 16, nullptr, nullptr, nullptr, 0, 16, 1, 0));     // D == 0: nothing
  // The collapsed z-step divides by its priors: zero or non-finite ones are refused.
  EXPECT_THROW(step.run(theta, 16, theta, 16, nullptr, nullptr, nullptr, 0, 16, 1, 0, nullptr,
                        rt::LdaCollapsed{&dummy, 0.0, 1.0}),
               Error);
}

}  // namespace
}  // namespace bfly::test
