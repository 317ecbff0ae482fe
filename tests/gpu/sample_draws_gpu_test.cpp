// GPU tests of logits and several draws per row (CTest label `gpu`; each skips with the reason without a device):
// every kernel of the CPU catalog of these forms (gen::sample_draws_test_specs: weights and logits, with and
// without replacement, f32, f64, f16, bf16, the row kernel's forms and sample_split's) draws on the GPU, through Sampler::sample_draws, exactly what the CPU
// execution of the same source draws, and counts the same rows with a -1.
#include "bfly/ops/sampler.hpp"
#include "bfly/spec/spec_catalog.hpp"

#include "cpu_kernels.hpp"
#include "gpu_support.hpp"
#include "reference_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace bfly::test {
namespace {

using gen::Draws;
using gen::InputKind;

// M rows of K values with stride ld: weights in [0, 1) with one in five zero, or normal logits (scale 3) with one
// in five -inf; a few rows hold only two positive categories (runs out without replacement) and one row is
// invalid (a NaN).
template <typename T>
std::vector<T> random_input(const gen::KernelSpec& spec, long long M, long long ld, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 3.0);
  const bool logits = spec.input == InputKind::logits;
  const double excluded = logits ? -std::numeric_limits<double>::infinity() : 0.0;
  std::vector<T> x(static_cast<std::size_t>(M * ld), from_double<T>(excluded));
  for (long long r = 0; r < M; ++r) {
    if (r % 97 == 5) {  // two positive categories at most
      for (int i = 0; i < 2; ++i) x[r * ld + rng() % spec.K] = from_double<T>(logits ? normal(rng) : unit(rng) + 0.5);
      continue;
    }
    for (int k = 0; k < spec.K; ++k)
      x[r * ld + k] = from_double<T>(unit(rng) < 0.2 ? excluded : (logits ? normal(rng) : unit(rng)));
  }
  x[(M / 2) * ld + rng() % spec.K] = from_double<T>(std::numeric_limits<double>::quiet_NaN());
  return x;
}

TEST(GpuSampleDraws, EqualToCpuExecutionOfTheSameSource) {
  BFLY_REQUIRE_GPU();
  int kernels = 0;
  long long draws = 0;
  for (const CpuKernel& kernel : cpu_sample_draws_kernels()) {
    const gen::KernelSpec& spec = kernel.spec;
    const long long M = spec.K > 1024 ? 700 : 2500;  // not a multiple of any CTA size
    const long long ld = spec.K + 3;
    const std::uint64_t seed = 0xd4a55000u + kernels;
    rt::DrawRequest request;
    request.input = spec.input;
    request.temperature = 0.8;
    request.replacement = spec.draws == Draws::with_replacement;
    request.num_samples = request.replacement ? 3 : std::min(spec.K, 5);
    std::vector<int> gpu(M * request.num_samples), cpu(M * request.num_samples);
    unsigned long long cpu_invalid[2] = {0, ~0ull};
    rt::SamplerOptions options;
    options.W = spec.W;
    options.variant = spec.variant;
    options.R = spec.R;
    options.operation = spec.operation;  // the row kernel too: K = 4097 with 700 rows would split
    rt::Sampler sampler(options);
    // sample_split's scratch for the CPU execution: part totals in the accumulator, arrival counters at zero.
    std::vector<double> part_totals(static_cast<std::size_t>(M * gen::part_totals_per_row(spec)));
    std::vector<unsigned long long> arrivals(static_cast<std::size_t>(M), 0ull);
    rt::SampleReport report;
    gen::visit_element_type(spec.type, [&](auto type) {
      using T = typename decltype(type)::type;
      const std::vector<T> input = random_input<T>(spec, M, ld, seed);
      report = sampler.sample_draws_host(input, M, spec.K, ld, request, gpu, seed, 3);
      const bool split = gen::splits_rows(spec.operation);
      if (request.input == InputKind::logits && split)
        run_on_cpu(kernel, {input.data(), M, 0, ld, request.temperature, request.num_samples, cpu.data(), cpu_invalid,
                            part_totals.data(), arrivals.data(), seed, 3u});
      else if (request.input == InputKind::logits)
        run_on_cpu(kernel, {input.data(), M, ld, request.temperature, request.num_samples, cpu.data(), cpu_invalid,
                            seed, 3u});
      else if (split)
        run_on_cpu(kernel, {input.data(), M, 0, ld, request.num_samples, cpu.data(), cpu_invalid, part_totals.data(),
                            arrivals.data(), seed, 3u});
      else
        run_on_cpu(kernel, {input.data(), M, ld, request.num_samples, cpu.data(), cpu_invalid, seed, 3u});
    });
    ASSERT_EQ(report.spec, spec) << "the Sampler ran another kernel than the catalog's";
    long long mismatches = 0, first = -1;
    for (std::size_t i = 0; i < gpu.size(); ++i)
      if (gpu[i] != cpu[i] && mismatches++ == 0) first = static_cast<long long>(i);
    EXPECT_EQ(mismatches, 0) << kernel.name << ": first at row " << first / request.num_samples << " draw "
                             << first % request.num_samples << ": GPU " << gpu[first] << ", CPU " << cpu[first];
    EXPECT_EQ(report.invalid_rows, static_cast<long long>(cpu_invalid[0])) << kernel.name;
    EXPECT_GE(report.invalid_rows, 1) << kernel.name << ": the NaN row";
    draws += static_cast<long long>(gpu.size());
    ++kernels;
  }
  ASSERT_EQ(kernels, static_cast<int>(gen::sample_draws_test_specs().size()));
  std::printf("compared %d kernels, %lld draws\n", kernels, draws);
}

}  // namespace
}  // namespace bfly::test
