// The paper's LDA baselines on the GPU (label gpu; skips itself without a device): every baseline test kernel, run
// through rt::LdaBaselineStep (NVRTC, the kernel cache), gives exactly the topics, the table p and the invalid-token
// counters of the CPU execution of the same generated source on the same corpus and seed.
#include "bfly/spec/spec_catalog.hpp"
#include "bfly/ops/lda_baseline_step.hpp"
#include "cpu_kernels.hpp"
#include "gpu_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace bfly::test {
namespace {

template <typename T>
void compare_with_cpu(const CpuLdaBaselineKernel& kernel, std::mt19937_64& rng, long long& tokens_compared) {
  const int K = kernel.spec.K;
  RandomLdaProblem<T> problem = random_lda_problem<T>(K, rng);
  const long long D = problem.D, ld_theta = problem.ld_theta, ld_phi = problem.ld_phi;
  const std::vector<long long>& offsets = problem.offsets;
  const std::vector<int>& words = problem.words;
  std::vector<T>& theta = problem.theta;
  const std::vector<T>& phi = problem.phi;
  for (int k = 0; k < K; ++k) theta[7 * ld_theta + k] = T(0);  // document 7: every token invalid
  const unsigned long long seed = rng();
  const unsigned int iteration = static_cast<unsigned int>(rng() % 1000);
  const std::vector<T> p_poison(static_cast<std::size_t>(D * K), std::numeric_limits<T>::quiet_NaN());
  const std::vector<unsigned long long> counters_preset = {0, ~0ull};

  std::vector<int> cpu_z(words.size(), -7);
  std::vector<T> cpu_p = p_poison;
  std::vector<unsigned long long> cpu_invalid = counters_preset;
  run_on_cpu(kernel, {theta.data(), ld_theta, phi.data(), ld_phi, offsets.data(), words.data(), cpu_z.data(), D,
                cpu_p.data(), cpu_invalid.data(), seed, iteration});

  rt::LdaBaselineStep step(kernel.spec);
  ASSERT_EQ(step.kernel_name(), kernel.name);
  const rt::DeviceBuffer theta_d = upload(theta), phi_d = upload(phi), offsets_d = upload(offsets),
                         words_d = upload(words), p_d = upload(p_poison), invalid_d = upload(counters_preset);
  rt::DeviceBuffer z_d(words.size() * sizeof(int));
  rt::check(rt::driver().MemsetD8(z_d.get(), 0x5a, z_d.size()), "cuMemsetD8");  // poison
  step.run(as<T>(theta_d), ld_theta, as<T>(phi_d), ld_phi, as<long long>(offsets_d), as<int>(words_d),
           reinterpret_cast<int*>(z_d.get()), D, reinterpret_cast<T*>(p_d.get()), seed, iteration, nullptr,
           reinterpret_cast<unsigned long long*>(invalid_d.get()));
  const std::vector<int> gpu_z = download<int>(z_d);
  for (std::size_t t = 0; t < words.size(); ++t)
    ASSERT_EQ(gpu_z[t], cpu_z[t]) << kernel.name << ": token " << t << " differs between the GPU and the CPU";
  const std::vector<T> gpu_p = download<T>(p_d);
  ASSERT_EQ(std::memcmp(gpu_p.data(), cpu_p.data(), cpu_p.size() * sizeof(T)), 0)
      << kernel.name << ": the table p differs between the GPU and the CPU";
  EXPECT_EQ(download<unsigned long long>(invalid_d), cpu_invalid) << kernel.name;
  EXPECT_GT(cpu_invalid[0], 0ull) << kernel.name << ": document 7's tokens must be invalid";
  tokens_compared += static_cast<long long>(words.size());
}

TEST(GpuLdaBaseline, EqualToCpuExecutionOfTheSameSource) {
  BFLY_REQUIRE_GPU();
  std::mt19937_64 rng(20261124);
  long long tokens = 0;
  int kernels = 0;
  for (const CpuLdaBaselineKernel& kernel : cpu_lda_baseline_kernels()) {
    if (kernel.spec.type == gen::ElementType::f32) compare_with_cpu<float>(kernel, rng, tokens);
    else compare_with_cpu<double>(kernel, rng, tokens);
    if (HasFatalFailure()) return;
    ++kernels;
  }
  EXPECT_EQ(kernels, static_cast<int>(gen::lda_baseline_test_specs().size()));
  std::printf("[bfly draws] GpuLdaBaseline.EqualToCpuExecutionOfTheSameSource: %d kernels, %lld tokens\n", kernels,
              tokens);
}

TEST(GpuLdaBaseline, RejectsBadArgumentsBeforeAnyLaunch) {
  BFLY_REQUIRE_GPU();
  rt::LdaBaselineStep step(gen::LdaBaselineSpec{gen::LdaBaseline::alg4, 16, gen::ElementType::f32});
  int dummy = 0;
  float* f = reinterpret_cast<float*>(&dummy);
  double* d = reinterpret_cast<double*>(&dummy);
  const long long* offsets = reinterpret_cast<const long long*>(&dummy);
  EXPECT_THROW(step.run(d, 16, d, 16, offsets, &dummy, &dummy, 4, d, 1, 0), Error);        // f64 for an f32 kernel
  EXPECT_THROW(step.run(f, 8, f, 16, offsets, &dummy, &dummy, 4, f, 1, 0), Error);         // ld_theta < K
  EXPECT_THROW(step.run(f, 16, f, 16, nullptr, &dummy, &dummy, 4, f, 1, 0), Error);        // null offsets
  EXPECT_THROW(step.run(f, 16, f, 16, offsets, &dummy, &dummy, 4, nullptr, 1, 0), Error);  // null p
  EXPECT_THROW(step.run(f, 16, f, 16, offsets, &dummy, &dummy, -1, f, 1, 0), Error);       // D < 0
  EXPECT_NO_THROW(step.run(f, 16, f, 16, nullptr, nullptr, nullptr, 0, nullptr, 1, 0));    // D == 0: nothing
}

}  // namespace
}  // namespace bfly::test
