// GPU tests of the kernels for every K (docs/DESIGN.md section 12; CTest label `gpu`, skipped without a device):
// sample_split, sample_small and sample_pairs through the Sampler, draw for draw against the CPU execution of the
// same generated source, the Sampler's split scratch reused across calls, the row kernel for rows that do not start
// on a pair, and the automatic choice for LLM-shaped batches.
#include "bfly/ops/sampler.hpp"
#include "bfly/spec/spec_catalog.hpp"

#include "cpu_kernels.hpp"
#include "gpu_support.hpp"
#include "reference_sampler.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace bfly::test {
namespace {

using gen::ElementType;

template <typename T>
std::vector<T> random_rows(long long M, int K, long long ld, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> w(static_cast<std::size_t>(M * ld), from_double<T>(0.0));
  for (long long r = 0; r < M; ++r)
    for (int k = 0; k < K; ++k) w[r * ld + k] = from_double<T>(unit(rng) < 0.1 ? 0.0 : unit(rng) * (1 + r % 5));
  if (M > 2) w[2 * ld + rng() % K] = from_double<T>(-1.0);  // an invalid row
  return w;
}

// The CPU run of `kernel` (with its own scratch when it is a split kernel).
template <typename T>
std::vector<int> cpu_draws(const CpuKernel& kernel, const std::vector<T>& w, long long M, long long ld,
                           std::uint64_t seed, unsigned iteration, unsigned long long* invalid) {
  std::vector<int> out(static_cast<std::size_t>(M), -7);
  if (gen::splits_rows(kernel.spec.operation)) {
    std::vector<double> parts(static_cast<std::size_t>(M * kernel.cpu.geometry.parts_per_row));
    std::vector<unsigned long long> arrivals(static_cast<std::size_t>(M), 0);
    run_on_cpu(kernel, {w.data(), M, 0, ld, out.data(), invalid, static_cast<void*>(parts.data()), arrivals.data(),
                        seed, iteration});
  } else {
    run_on_cpu(kernel, {w.data(), M, ld, out.data(), invalid, seed, iteration});
  }
  return out;
}

void compare(const CpuKernel& kernel, long long M, std::uint64_t seed, long long ld);

// The GPU's draws against the CPU execution's, at the catalog's usual row stride, for pairs at odd K on rows packed
// tightly, and for staged loads on 16 bytes.
void compare(const CpuKernel& kernel, long long M, std::uint64_t seed) {
  const gen::KernelSpec& spec = kernel.spec;
  const long long ld = spec.K + (spec.weights_per_column() == 2 ? 2 : 1);  // sample_pairs: rows start on a pair
  compare(kernel, M, seed, ld);
  // Pairs at odd K: also rows packed tightly (ld = K, every other row off a pair, the last pair of the last row at the
  // array's end).
  if (spec.weights_per_column() == 2 && spec.K % 2 != 0) compare(kernel, M, seed, spec.K);
  // Staged loads (docs/DESIGN.md section 14) take their shared-memory path only for rows on 16 bytes, the warp's copy
  // only for rows packed tightly.
  for (const long long path_ld : pass1_path_strides(spec)) compare(kernel, M, seed, path_ld);
}

void compare(const CpuKernel& kernel, long long M, std::uint64_t seed, long long ld) {
  SCOPED_TRACE("ld = " + std::to_string(ld));
  const gen::KernelSpec& spec = kernel.spec;
  rt::Sampler sampler(forcing(spec));
  gen::visit_element_type(spec.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::vector<T> w = random_rows<T>(M, spec.K, ld, seed);
    const rt::DeviceBuffer device_weights = upload(w);
    rt::DeviceBuffer device_out(static_cast<std::size_t>(M) * sizeof(int));
    // Two calls with the same Sampler: the second reuses the split scratch the first left.
    for (unsigned iteration : {0u, 3u}) {
      const rt::SampleReport report = sampler.sample(as<T>(device_weights), M, spec.K, ld,
                                                     reinterpret_cast<int*>(device_out.get()), seed, iteration);
      ASSERT_EQ(report.spec, spec) << "the Sampler ran another kernel than the catalog's";
      unsigned long long invalid[2] = {0, ~0ull};
      const std::vector<int> cpu = cpu_draws(kernel, w, M, ld, seed, iteration, invalid);
      const std::vector<int> gpu = download<int>(device_out);
      long long mismatches = 0, first = -1;
      for (long long r = 0; r < M; ++r)
        if (gpu[r] != cpu[r] && mismatches++ == 0) first = r;
      EXPECT_EQ(mismatches, 0) << kernel.name << " iteration " << iteration << ": first at row " << first;
      EXPECT_EQ(report.invalid_rows, static_cast<long long>(invalid[0])) << kernel.name;
    }
  });
}

// compare() for every kernel of one catalog (`specs`, compiled as `kernels`), at rows(spec) rows, with seeds from
// `first_seed` on.
template <typename Rows>
void compare_catalog(const std::vector<CpuKernel>& kernels, std::size_t specs, Rows rows, std::uint64_t first_seed) {
  std::uint64_t seed = first_seed;
  for (const CpuKernel& kernel : kernels) compare(kernel, rows(kernel.spec), seed++);
  EXPECT_EQ(kernels.size(), specs);
}

TEST(GpuKRange, SplitKernelsDrawWhatTheCpuExecutionDraws) {
  BFLY_REQUIRE_GPU();
  compare_catalog(cpu_split_kernels(), gen::split_test_specs().size(),
                  [](const gen::KernelSpec& spec) { return spec.K >= 65536 ? 5ll : 300ll; }, 0x5b117000u);
}

TEST(GpuKRange, SmallKernelsDrawWhatTheCpuExecutionDraws) {
  BFLY_REQUIRE_GPU();
  compare_catalog(cpu_small_kernels(), gen::small_test_specs().size(), [](const gen::KernelSpec&) { return 2500ll; },
                  0x5a11000u);
}

TEST(GpuKRange, PairsKernelsDrawWhatTheCpuExecutionDraws) {
  BFLY_REQUIRE_GPU();
  compare_catalog(cpu_pairs_kernels(), gen::pairs_test_specs().size(),
                  [](const gen::KernelSpec& spec) { return spec.K >= 8192 ? 600ll : 2500ll; }, 0x9a125000u);
}

// Rows that do not start on a pair (an odd ld, or weights one element past an aligned address) take the row kernel
// with the same W, R and variant, and draw what the CPU execution of that kernel draws.
TEST(GpuKRange, PairsFallBackToTheRowKernelForRowsOffAPair) {
  BFLY_REQUIRE_GPU();
  const int K = 100;  // the row kernel for K = 100 (W = 16, R = 8) is in the CPU draw-test catalog
  const long long M = 700;
  for (const long long ld : {101ll, 102ll}) {
    SCOPED_TRACE("ld = " + std::to_string(ld));
    const std::vector<float> w = random_rows<float>(M + 1, K, ld, 0x0ddu + ld);
    const rt::DeviceBuffer device_weights = upload(w);
    // ld = 102: the rows start one element past the buffer's start, so no row starts on a pair.
    const float* rows = as<float>(device_weights) + (ld % 2 == 0 ? 1 : 0);
    rt::DeviceBuffer device_out(static_cast<std::size_t>(M) * sizeof(int));
    rt::SamplerOptions options;
    options.operation = gen::Operation::sample_pairs;
    rt::Sampler sampler(options);
    const rt::SampleReport report =
        sampler.sample(rows, M, K, ld, reinterpret_cast<int*>(device_out.get()), 0x51u, 0u);
    gen::KernelSpec row_spec = sampler.spec_for(K, ElementType::f32, M);
    ASSERT_EQ(row_spec.operation, gen::Operation::sample_pairs);
    row_spec.operation = gen::Operation::sample;
    ASSERT_EQ(report.spec, row_spec);
    const CpuKernel* kernel = find_cpu_kernel(gen::kernel_name(row_spec));
    ASSERT_NE(kernel, nullptr) << gen::kernel_name(row_spec) << " is not in the CPU catalog";
    const std::vector<float> shifted(w.begin() + (ld % 2 == 0 ? 1 : 0), w.end());
    const std::vector<int> cpu = cpu_draws(*kernel, shifted, M, ld, 0x51u, 0u, nullptr);
    EXPECT_EQ(download<int>(device_out), cpu);
  }
}

// An LLM-shaped batch through the automatic choice: 64 rows of 65536 f32 weights take sample_split, and draw what
// the CPU execution of that kernel draws.
TEST(GpuKRange, AutomaticChoiceSplitsFewLongRows) {
  BFLY_REQUIRE_GPU();
  const long long M = 64;
  const int K = 65536;
  rt::SamplerOptions options;
  rt::Sampler sampler(options);
  const gen::KernelSpec spec = sampler.spec_for(K, ElementType::f32, M);
  ASSERT_EQ(spec.operation, gen::Operation::sample_split);
  const CpuKernel* kernel = nullptr;
  for (const CpuKernel& k : cpu_split_kernels())
    if (k.spec == spec) kernel = &k;
  ASSERT_NE(kernel, nullptr) << gen::kernel_name(spec) << " is not in the CPU catalog";
  compare(*kernel, M, 0x11a);
}

}  // namespace
}  // namespace bfly::test
