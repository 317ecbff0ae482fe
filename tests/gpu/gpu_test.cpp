// GPU tests of the runtime (CTest label `gpu`; each skips with the reason when there is no device):
// draw-for-draw equality with the CPU execution of the same generated source, chi-square goodness of fit,
// adversarial rows where zero weights must never be drawn, and invalid-row reports.
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include "cpu_kernels.hpp"
#include "gpu_support.hpp"
#include "reference_sampler.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace bfly::test {
namespace {

using gen::ElementType;
using gen::Variant;

std::string current_test_name() {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  return fmt::format("{}.{}", info->test_suite_name(), info->name());
}

// M rows of K weights with stride ld: mostly uniform in [0, 1) over a range of magnitudes, some zeros.
template <typename T>
std::vector<T> random_weights(long long M, int K, long long ld, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const T zero = bfly::test::from_double<T>(0.0);
  std::vector<T> weights(static_cast<std::size_t>(M * ld), zero);
  for (long long r = 0; r < M; ++r) {
    const double scale = std::ldexp(1.0, static_cast<int>(generator() % 40) - 20);
    for (int j = 0; j < K; ++j) {
      weights[r * ld + j] = uniform(generator) < 0.1 ? zero : bfly::test::from_double<T>(uniform(generator) * scale);
    }
    if (K > 1 && r % 7 == 0) weights[r * ld + generator() % K] = zero;
  }
  return weights;
}

// Upper regularised incomplete gamma Q(a, x): the chi-square p-value is Q(df / 2, chi2 / 2).
double gamma_q(double a, double x) {
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a;
    double sum = term;
    for (int n = 1; n < 100000 && term > sum * 1e-16; ++n) sum += term *= x / (a + n);
    return 1 - sum * std::exp(log_prefix);
  }
  const double tiny = 1e-300;  // modified Lentz continued fraction
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = std::fabs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = std::fabs(c) < tiny ? tiny : c;
    d = 1 / d;
    h *= d * c;
    if (std::fabs(d * c - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * h;
}

// --- draw for draw ----------------------------------------------------------------------------------------

// Every kernel of the CPU catalog with W in {8, 16, 32}: the GPU draws equal the CPU execution's, row for row. The
// kernels are dealt into kDrawParts tests (kernel i of them to part i mod kDrawParts), so that the shards of the GPU
// suite share them: as one test they took 390-474 s, more than a shard's time in one device call.
constexpr int kDrawParts = 8;
class GpuDrawsPart : public ::testing::TestWithParam<int> {};

TEST_P(GpuDrawsPart, EqualToCpuExecutionOfTheSameSource) {
  BFLY_REQUIRE_GPU();
  long long draws = 0;
  int kernels = 0;   // kernels of W >= 8 met so far, in catalog order
  int compared = 0;  // those of this part
  for (const CpuKernel& kernel : cpu_kernels()) {
    const gen::KernelSpec& spec = kernel.spec;
    if (spec.W < 8) continue;
    const int index = kernels++;  // the kernel's place among them, the same in every part: its part and its seed
    if (index % kDrawParts != GetParam()) continue;
    const long long M = spec.K > 1024 ? 700 : 2500;  // not a multiple of any CTA size
    // K + 3, and for staged loads (docs/DESIGN.md section 14) also rows on 16 bytes and rows on 128-byte lines.
    std::vector<long long> lds = {spec.K + 3};
    for (const long long ld : pass1_path_strides(spec)) lds.push_back(ld);
    for (const long long ld : lds) {
      SCOPED_TRACE("ld = " + std::to_string(ld));
      const std::uint64_t seed = 0x5eed0000u + index;
      std::vector<int> gpu(M), cpu(M);
      unsigned long long cpu_invalid[2] = {0, ~0ull};
      rt::Sampler sampler(forcing(spec));
      rt::SampleReport report;
      const auto run = [&](const auto& weights) {
        const rt::DeviceBuffer device_weights = upload(weights);
        rt::DeviceBuffer device_out(M * sizeof(int));
        using T = typename std::decay_t<decltype(weights)>::value_type;
        report = sampler.sample(as<T>(device_weights), M, spec.K, ld, reinterpret_cast<int*>(device_out.get()), seed);
        gpu = download<int>(device_out);
        run_on_cpu(kernel, {weights.data(), M, ld, cpu.data(), cpu_invalid, seed, 0});
      };
      gen::visit_element_type(spec.type, [&](auto type) {
        using T = typename decltype(type)::type;
        run(random_weights<T>(M, spec.K, ld, seed));
      });
      ASSERT_EQ(report.spec, spec) << "the Sampler ran another kernel than the catalog's";
      long long mismatches = 0;
      long long first = -1;
      for (long long r = 0; r < M; ++r) {
        if (gpu[r] != cpu[r] && mismatches++ == 0) first = r;
      }
      EXPECT_EQ(mismatches, 0) << kernel.name << ": first at row " << first << ": GPU " << gpu[first] << ", CPU "
                               << cpu[first];
      EXPECT_EQ(report.invalid_rows, static_cast<long long>(cpu_invalid[0])) << kernel.name;
      draws += M;
    }
    ++compared;
  }
  ASSERT_GT(compared, 0) << "no kernel of W >= 8 in part " << GetParam() << " of the CPU catalog";
  std::printf("compared %d of the %d kernels\n", compared, kernels);
  report_draws(current_test_name(), draws);
}
INSTANTIATE_TEST_SUITE_P(Parts, GpuDrawsPart, ::testing::Range(0, kDrawParts));

// --- chi-square -------------------------------------------------------------------------------------------

struct FitCase {
  int K;
  ElementType type;
  Variant variant;
};

template <typename T>
double chi_square_p(const FitCase& fit, long long total_draws, std::uint64_t seed, long long* draws_out) {
  // Every row holds the same weights (fixed, in [0.5, 1.5) so every expected count is large); each launch
  // draws once per row with a new seed, and the device counts the draws.
  const int K = fit.K;
  const long long M = std::max<long long>(1024, std::min<long long>(1 << 22, (64ll << 20) / (K * sizeof(T))));
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  std::vector<T> row(K);
  for (T& w : row) w = static_cast<T>(uniform(generator));
  std::vector<T> weights(static_cast<std::size_t>(M * K));
  for (long long r = 0; r < M; ++r) std::copy(row.begin(), row.end(), weights.begin() + r * K);
  const rt::DeviceBuffer device_weights = upload(weights);
  rt::DeviceBuffer out(M * sizeof(int));
  rt::DeviceBuffer counts((K + 1) * sizeof(unsigned long long));
  zero(counts);
  rt::SamplerOptions options;
  options.variant = fit.variant;
  options.report_invalid_rows = false;
  rt::Sampler sampler(options);
  long long draws = 0;
  for (std::uint64_t launch = 0; draws < total_draws; ++launch, draws += M) {
    sampler.sample(as<T>(device_weights), M, K, K, reinterpret_cast<int*>(out.get()), seed * 1000003 + launch);
    DrawChecker::get().histogram(out, M, K, counts);
  }
  const std::vector<unsigned long long> observed = download<unsigned long long>(counts);
  EXPECT_EQ(observed[K], 0u) << "draws outside [0, K)";
  double total_weight = 0;
  for (T w : row) total_weight += static_cast<double>(w);
  double chi2 = 0;
  for (int j = 0; j < K; ++j) {
    const double expected = static_cast<double>(draws) * static_cast<double>(row[j]) / total_weight;
    chi2 += (observed[j] - expected) * (observed[j] - expected) / expected;
  }
  *draws_out = draws;
  return gamma_q((K - 1) / 2.0, chi2 / 2);
}

TEST(GpuDraws, ChiSquareGoodnessOfFit) {
  BFLY_REQUIRE_GPU();
  ASSERT_NEAR(gamma_q(1.5, 7.815 / 2), 0.05, 1e-3) << "p-value function";  // chi2(3) 95% quantile
  const std::vector<FitCase> cases = {
      {2, ElementType::f32, Variant::addsub},    {2, ElementType::f64, Variant::swap},
      {17, ElementType::f32, Variant::swap},     {17, ElementType::f64, Variant::addsub},
      {64, ElementType::f32, Variant::addsub},   {64, ElementType::f64, Variant::swap},
      {1000, ElementType::f32, Variant::swap},   {1000, ElementType::f64, Variant::addsub},
      {4096, ElementType::f32, Variant::addsub}, {4096, ElementType::f64, Variant::swap},
  };
  constexpr long long kDrawsPerCase = 10'000'000;
  long long total = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const FitCase& fit = cases[i];
    long long draws = 0;
    const double p = fit.type == ElementType::f32 ? chi_square_p<float>(fit, kDrawsPerCase, 17 + i, &draws)
                                                  : chi_square_p<double>(fit, kDrawsPerCase, 17 + i, &draws);
    std::printf("K=%d %s %s: %lld draws, p = %.4f\n", fit.K, std::string(gen::name_of(fit.type)).c_str(),
                std::string(gen::name_of(fit.variant)).c_str(), draws, p);
    EXPECT_GT(p, 1e-3) << "K=" << fit.K << " " << gen::name_of(fit.type) << " " << gen::name_of(fit.variant);
    total += draws;
  }
  EXPECT_GE(total, 100'000'000);
  report_draws(current_test_name(), total);
}

// --- adversarial rows -------------------------------------------------------------------------------------

// Rows built to provoke rounding: one non-zero weight, 1e-30 next to 1e30, denormals, almost all zeros.
// Pattern by row index; positions vary by row so every block and the remnant are hit.
template <typename T>
std::vector<T> adversarial_weights(long long M, int K) {
  const T denormal = std::numeric_limits<T>::denorm_min() * T(3);
  std::vector<T> weights(static_cast<std::size_t>(M * K), T(0));
  std::mt19937_64 generator(99);
  for (long long r = 0; r < M; ++r) {
    T* row = weights.data() + r * K;
    const int at = static_cast<int>(generator() % K);
    switch (r % 5) {
      case 0:  // one non-zero weight
        row[at] = T(1);
        break;
      case 1:  // 1e-30 next to 1e30, zeros around them
        row[at] = T(1e30);
        row[(at + 1) % K] = T(1e-30);
        if (K > 4) row[(at + 3) % K] = T(1e30);
        break;
      case 2:  // denormals only, every other one zero
        for (int j = at % 2; j < K; j += 2) row[j] = denormal * T(1 + j % 3);
        break;
      case 3:  // most weights zero: three tiny non-zeros
        row[at] = T(1e-20);
        row[(at * 7 + 1) % K] = T(2e-20);
        row[(at * 13 + 5) % K] = T(1e-20);
        break;
      default:  // huge range in one row: zeros between 1e30, 1, 1e-30 and a denormal
        for (int j = at % 3; j < K; j += 3) row[j] = (j % 4 == 0) ? T(1e30) : (j % 4 == 1) ? T(1) : T(1e-30);
        row[(at + 1) % K] = denormal;
        break;
    }
  }
  return weights;
}

struct AdversarialCase {
  ElementType type;
  Variant variant;
  std::optional<int> W;
};

template <typename T>
long long adversarial_run(const AdversarialCase& adversarial, int K, long long draws_wanted) {
  const long long M = std::max<long long>(4096, std::min<long long>(1 << 22, (256ll << 20) / (K * sizeof(T))));
  const rt::DeviceBuffer weights = upload(adversarial_weights<T>(M, K));
  rt::DeviceBuffer out(M * sizeof(int));
  rt::DeviceBuffer counters(2 * sizeof(unsigned long long));
  zero(counters);
  rt::SamplerOptions options;
  options.W = adversarial.W;
  options.variant = adversarial.variant;
  options.report_invalid_rows = false;
  rt::Sampler sampler(options);
  long long draws = 0;
  gen::KernelSpec spec;  // the kernel the Sampler ran (chosen with M and the device)
  for (std::uint64_t launch = 0; draws < draws_wanted; ++launch, draws += M) {
    spec = sampler.sample(as<T>(weights), M, K, K, reinterpret_cast<int*>(out.get()), 0xadd0000 + launch).spec;
    DrawChecker::get().check_weights<T>(weights, M, K, K, out, counters);
  }
  const std::vector<unsigned long long> result = download<unsigned long long>(counters);
  EXPECT_EQ(result[0], 0u) << gen::kernel_name(spec) << ": draws outside [0, K) (or rows reported invalid)";
  EXPECT_EQ(result[1], 0u) << gen::kernel_name(spec) << ": categories of weight 0 drawn";
  std::printf("%s: %lld draws, %llu out of range, %llu zero-weight\n", gen::kernel_name(spec).c_str(), draws,
              result[0], result[1]);
  return draws;
}

TEST(GpuDraws, AdversarialRowsNeverDrawZeroWeights) {
  BFLY_REQUIRE_GPU();
  const std::vector<AdversarialCase> cases = {
      {ElementType::f32, Variant::addsub, std::nullopt},
      {ElementType::f32, Variant::swap, 8},
      {ElementType::f64, Variant::addsub, 16},
      {ElementType::f64, Variant::swap, std::nullopt},
  };
  // Per case: many cheap draws at small K, fewer at large K (the cost is M * K weights read per draw).
  const std::vector<std::pair<int, long long>> draws_per_K = {
      {17, 100'000'000}, {64, 100'000'000}, {1000, 40'000'000}, {4096, 10'000'000}};
  long long total = 0;
  for (const AdversarialCase& adversarial : cases) {
    for (const auto& [K, draws] : draws_per_K) {
      total += adversarial.type == ElementType::f32 ? adversarial_run<float>(adversarial, K, draws)
                                                    : adversarial_run<double>(adversarial, K, draws);
    }
  }
  EXPECT_GE(total, 1'000'000'000);
  report_draws(current_test_name(), total);
}

// --- invalid rows -----------------------------------------------------------------------------------------

template <typename T>
long long invalid_rows_case(int W, Variant variant) {
  const long long M = 10000;
  const int K = 100;
  const long long ld = 101;
  std::vector<T> clean = random_weights<T>(M, K, ld, 7);
  for (long long r = 0; r < M; ++r) clean[r * ld] = T(1);  // no row of the clean batch is all zeros
  std::vector<T> dirty = clean;
  dirty[137 * ld + 5] = std::numeric_limits<T>::quiet_NaN();
  dirty[5000 * ld + 99] = T(-1);
  std::fill(dirty.begin() + 7000 * ld, dirty.begin() + 7000 * ld + K, T(0));
  dirty[8000 * ld + 50] = std::numeric_limits<T>::infinity();
  const std::vector<long long> invalid = {137, 5000, 7000, 8000};

  rt::SamplerOptions options;
  options.W = W;
  options.variant = variant;
  rt::Sampler sampler(options);
  std::vector<int> clean_out(M), dirty_out(M);
  const rt::SampleReport clean_report = sampler.sample_host(std::span<const T>(clean), M, K, ld, clean_out, 42);
  const rt::SampleReport report = sampler.sample_host(std::span<const T>(dirty), M, K, ld, dirty_out, 42);
  const std::string name = gen::kernel_name(report.spec);
  EXPECT_EQ(clean_report.invalid_rows, 0) << name;
  EXPECT_EQ(clean_report.first_invalid_row, -1) << name;
  EXPECT_EQ(report.invalid_rows, 4) << name;
  EXPECT_EQ(report.first_invalid_row, 137) << name;
  long long changed = 0;
  for (long long r = 0; r < M; ++r) {
    const bool is_invalid = std::find(invalid.begin(), invalid.end(), r) != invalid.end();
    if (is_invalid) {
      EXPECT_EQ(dirty_out[r], -1) << name << " row " << r;
    } else if (dirty_out[r] != clean_out[r]) {
      ++changed;
    }
  }
  EXPECT_EQ(changed, 0) << name << ": valid rows drew differently next to invalid ones";

  // Without the report the rows are still written as -1, and nothing is read back.
  rt::SamplerOptions quiet = options;
  quiet.report_invalid_rows = false;
  rt::Sampler quiet_sampler(quiet);
  const rt::SampleReport quiet_report = quiet_sampler.sample_host(std::span<const T>(dirty), M, K, ld, dirty_out, 42);
  EXPECT_EQ(quiet_report.invalid_rows, 0);
  EXPECT_EQ(quiet_report.first_invalid_row, -1);
  EXPECT_EQ(dirty_out[137], -1);
  return 3 * M;
}

TEST(GpuDraws, InvalidRowsReportedAndTheRestUnaffected) {
  BFLY_REQUIRE_GPU();
  long long draws = 0;
  for (int W : {8, 16, 32}) {
    for (Variant variant : {Variant::swap, Variant::addsub}) {
      draws += invalid_rows_case<float>(W, variant);
      draws += invalid_rows_case<double>(W, variant);
    }
  }
  report_draws(current_test_name(), draws);
}

// --- the Sampler on a device ------------------------------------------------------------------------------

TEST(GpuSampler, SameSeedSameDrawsAndReportsTheSpec) {
  BFLY_REQUIRE_GPU();
  const long long M = 3000;
  const int K = 333;
  const std::vector<float> weights = random_weights<float>(M, K, K, 5);
  rt::Sampler sampler;
  std::vector<int> a(M), b(M), c(M);
  const rt::SampleReport report = sampler.sample_host(std::span<const float>(weights), M, K, K, a, 9);
  sampler.sample_host(std::span<const float>(weights), M, K, K, b, 9);
  sampler.sample_host(std::span<const float>(weights), M, K, K, c, 10);
  EXPECT_EQ(report.spec, gen::choose_sample_spec(K, ElementType::f32, {}));
  EXPECT_EQ(a, b) << "same seed, same draws";
  EXPECT_NE(a, c) << "another seed, other draws";
  // The first half of the batch alone draws what it drew as part of the whole batch.
  std::vector<int> half(M / 2);
  sampler.sample_host(std::span<const float>(weights).first(M / 2 * K), M / 2, K, K, half, 9);
  EXPECT_TRUE(std::equal(half.begin(), half.end(), a.begin())) << "draws must not depend on M";
  report_draws(current_test_name(), 3 * M + M / 2);
}

// The automatic choice is made for the device the Sampler runs on (gen::DeviceBalance): the spec reported is
// choose_sample_spec's with the device's balance, which on fast memory (an H200) keeps 16384 rows of K = 3705 f32
// weights in the row kernel where an H100's rule splits them, and the draws are those of that kernel forced.
TEST(GpuSampler, ChoosesForTheDevicesMemory) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  std::printf("this device's memory: %.1f bytes an SM and cycle (%s)\n", device.memory_bytes_per_sm_cycle,
              device.fast_memory() ? "fast" : "not fast");
  EXPECT_GT(device.memory_bytes_per_sm_cycle, 1.0) << "the driver reports the clock rates, bus width and SMs";
  const long long M = 16384;
  const int K = 3705;  // split below 131072 rows on the H100 (from K = 3600), not on fast memory
  const std::vector<float> weights = random_weights<float>(M, K, K, 7);
  rt::Sampler automatic;
  std::vector<int> chosen(M, -2), forced(M, -3);
  const rt::SampleReport report = automatic.sample_host(std::span<const float>(weights), M, K, K, chosen, 11);
  EXPECT_EQ(report.spec, gen::choose_sample_spec(K, ElementType::f32, {}, M, device));
  EXPECT_EQ(report.spec.operation, device.fast_memory() ? gen::Operation::sample : gen::Operation::sample_split);
  rt::Sampler same(forcing(report.spec));
  EXPECT_EQ(same.sample_host(std::span<const float>(weights), M, K, K, forced, 11).spec, report.spec);
  EXPECT_EQ(chosen, forced) << "the chosen kernel draws what it draws when forced";
  EXPECT_TRUE(std::all_of(chosen.begin(), chosen.end(), [K](int c) { return c >= 0 && c < K; }));
  report_draws(current_test_name(), 2 * M);
}

// Rows take the kernel the device's rule names (gen::choose_sample_spec with its balance; on fast memory the
// short rows' rule: f32 over pairs at W = 16 and 32, f64 sample_small, pairs and W = 32, bf16 over pairs at W = 32,
// whole rows kept in registers at f32 K = 16, 17, 20, 22 and 25 and bf16 K = 16, 31, 36, 45, 48, 50 and 61; odd K
// by their phase; the longest rows the copies take without them, f32 K = 337 and 16-bit K = 561, 642 and 693),
// and draw what that kernel draws when forced: in range, never a zero weight (every seventh row holds one), -1 for a
// row of zeros only (short rows hold one now and then), counted in the report.
template <typename T>
void rows_draw_as_chosen(int K, gen::DeviceBalance device) {
  const long long M = 40000 + K;  // not a whole number of groups or warps
  const std::vector<T> weights = random_weights<T>(M, K, K, 100 + K);
  const ElementType type = gen::element_type_of<T>;
  rt::Sampler automatic;
  std::vector<int> chosen(M, -2), forced(M, -3);
  const rt::SampleReport report = automatic.sample_host(std::span<const T>(weights), M, K, K, chosen, 5);
  const std::string name = gen::kernel_name(report.spec);
  EXPECT_EQ(report.spec, gen::choose_sample_spec(K, type, {}, M, device)) << K;
  rt::Sampler same(forcing(report.spec));
  EXPECT_EQ(same.sample_host(std::span<const T>(weights), M, K, K, forced, 5).spec, report.spec);
  EXPECT_EQ(chosen, forced) << name << ": the chosen kernel draws what it draws when forced";
  const auto weight = [&](long long r, int j) {
    return static_cast<double>(bfly::test::widen_host(weights[r * K + j]));
  };
  // A row is invalid with a zero total or any weight negative, NaN or infinite (docs/DESIGN.md section 6): f16 rows
  // whose scale passes 65504 hold infinities.
  long long bad = 0, invalid = 0;
  for (long long r = 0; r < M; ++r) {
    bool positive = false, valid = true;
    for (int j = 0; j < K; ++j) {
      positive = positive || weight(r, j) > 0.0;
      valid = valid && std::isfinite(weight(r, j)) && weight(r, j) >= 0.0;
    }
    valid = valid && positive;
    const int c = chosen[r];
    invalid += !valid;
    bad += valid ? c < 0 || c >= K || !(weight(r, c) > 0.0) : c != -1;
  }
  EXPECT_EQ(bad, 0) << name << ": draws out of range, of a zero weight, or of an invalid row";
  EXPECT_EQ(report.invalid_rows, invalid) << name;
  std::printf("K = %d %s: %s\n", K, std::string(gen::name_of(type)).c_str(), name.c_str());
}

TEST(GpuSampler, ShortRowsDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  for (int K : {12, 16, 17, 20, 22, 23, 24, 25, 48, 49, 64}) rows_draw_as_chosen<float>(K, device);
  for (int K : {5, 20, 30, 37, 64}) rows_draw_as_chosen<double>(K, device);
  for (int K : {12, 16, 31, 36, 45, 48, 50, 56, 61}) rows_draw_as_chosen<bfly::bf16_bits>(K, device);
  if (device.fast_memory()) {
    EXPECT_EQ(gen::choose_sample_spec(48, ElementType::f32, {}, 1 << 20, device).operation,
              gen::Operation::sample_pairs);
    EXPECT_EQ(gen::choose_sample_spec(20, ElementType::f64, {}, 1 << 20, device).operation,
              gen::Operation::sample_small);
  } else {  // the H100's table of short 16-bit rows: over pairs at W = 32, the whole row in registers to K = 49
    EXPECT_EQ(gen::choose_sample_spec(48, ElementType::bf16, {}, 1 << 20, device).R, 31);
    EXPECT_EQ(gen::choose_sample_spec(56, ElementType::bf16, {}, 1 << 20, device).W, 32);
  }
  report_draws(current_test_name(), 0);
}

// Rows whose warps' copies the device's rule turns off on fast memory (KernelSpec::warp_copies; f32 K = 335-359, 16-bit
// odd K from 337 but three bands, even K from 642) and their neighbours that keep them (f32 K = 325 with its remnant
// padded, bf16 K = 640).
TEST(GpuSampler, LongCopiedRowsDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  for (int K : {325, 337}) rows_draw_as_chosen<float>(K, device);
  for (int K : {561, 640, 642, 693}) rows_draw_as_chosen<bfly::bf16_bits>(K, device);
  rows_draw_as_chosen<bfly::half_bits>(561, device);
  if (device.fast_memory()) {
    EXPECT_FALSE(gen::choose_sample_spec(561, ElementType::bf16, {}, 1 << 20, device).warp_copies);
    EXPECT_EQ(gen::choose_sample_spec(325, ElementType::f32, {}, 1 << 20, device).R, 0);
  }
  report_draws(current_test_name(), 0);
}

// Rows on 16 bytes but off 32-byte sectors that the device's rule stages anywhere (KernelSpec::ring_anywhere; f64 K =
// 2 mod 4, f32 K = 4 mod 8 without copies, from K = 182 without fast memory, 16-bit K = 8 mod 16 from 984), and rows
// that step 32 bytes past 64-byte lines (f64 K = 4 mod 8 from 492; on fast memory f32 K = 8 mod 16 from 1032 and
// 16-bit K = 16 mod 32 from 1040).
TEST(GpuSampler, OffSectorRowsDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  for (int K : {182, 366, 700, 1028}) rows_draw_as_chosen<double>(K, device);
  for (int K : {340, 1032}) rows_draw_as_chosen<float>(K, device);
  for (int K : {1032, 1040}) rows_draw_as_chosen<bfly::bf16_bits>(K, device);
  rows_draw_as_chosen<bfly::half_bits>(1032, device);
  EXPECT_TRUE(gen::choose_sample_spec(182, ElementType::f64, {}, 1 << 20, device).ring_anywhere);
  EXPECT_TRUE(gen::choose_sample_spec(1028, ElementType::f64, {}, 1 << 20, device).ring_anywhere);
  EXPECT_TRUE(gen::choose_sample_spec(1032, ElementType::bf16, {}, 1 << 20, device).ring_anywhere);
  EXPECT_EQ(gen::choose_sample_spec(1032, ElementType::f32, {}, 1 << 20, device).ring_anywhere, device.fast_memory());
  EXPECT_EQ(gen::choose_sample_spec(1040, ElementType::bf16, {}, 1 << 20, device).ring_anywhere, device.fast_memory());
  report_draws(current_test_name(), 0);
}

// Long rows that an H100 once split over CTAs whatever their number and now keeps in the row kernel from
// gen::kFewRowsSplitBelowRows rows on (16-bit rows off 16 bytes at K = 3001-4095 over pairs, f32 K = 3300-3599), as
// fast memory does: drawn as the device's rule chooses (40000 + K rows) and the same when forced.
TEST(GpuSampler, LongRowsOffLinesDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  rows_draw_as_chosen<bfly::bf16_bits>(3301, device);
  rows_draw_as_chosen<bfly::half_bits>(3302, device);
  rows_draw_as_chosen<float>(3305, device);
  EXPECT_EQ(gen::choose_sample_spec(3301, ElementType::bf16, {}, 43301, device).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(3305, ElementType::f32, {}, 43305, device).operation, gen::Operation::sample);
  report_draws(current_test_name(), 0);
}

// f64 rows of odd K from 181 read in row order on every device (KernelSpec::ring_row_order): drawn as the device's
// rule chooses and the same when forced (the draw catalog's f64 K = 181 and 191 in row order are checked draw for draw
// against the CPU execution in GpuDrawsPart).
TEST(GpuSampler, F64OddRowsDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  for (int K : {181, 501, 997}) rows_draw_as_chosen<double>(K, device);
  EXPECT_TRUE(gen::choose_sample_spec(181, ElementType::f64, {}, 1 << 20, device).ring_row_order);
  report_draws(current_test_name(), 0);
}

// 16-bit rows over pairs at odd K of 8-15 lines of blocks that the device's rule gives the deep ring without fast memory
// (KernelSpec::ring_deep; bf16 and f16 K = 735-1007 but 769-797) and a neighbour that keeps the shallow ring (K = 781):
// drawn as the device's rule chooses and the same when forced (the pairs catalog's bf16 K = 721 and f16 K = 1001 in
// the deep ring are checked draw for draw against the CPU execution in the k-range GPU test).
TEST(GpuSampler, OddPairsInTheDeepRingDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  for (int K : {781, 929}) rows_draw_as_chosen<bfly::bf16_bits>(K, device);
  rows_draw_as_chosen<bfly::half_bits>(1001, device);
  EXPECT_EQ(gen::choose_sample_spec(929, ElementType::bf16, {}, 1 << 20, device).ring_deep, !device.fast_memory());
  EXPECT_FALSE(gen::choose_sample_spec(781, ElementType::bf16, {}, 1 << 20, device).ring_deep);
  report_draws(current_test_name(), 0);
}

// Remnants that the device's rule pads on fast memory (R = 0; gen::choose_sample_spec derives the kernel again): f64
// rows copied (K = 72; K = 130, whose ring at R = 0 is staged anywhere), read in row order (K = 231), f32 rows staged
// without copies (K = 344), and 16-bit rows over pairs copied at even K (bf16 K = 520, f16 K = 586) or uncopied at odd
// K (bf16 K = 423 and 495).
TEST(GpuSampler, PaddedRemnantsDrawAsTheDevicesRuleChooses) {
  BFLY_REQUIRE_GPU();
  const gen::DeviceBalance device = rt::current_device_balance();
  for (int K : {72, 130, 231}) rows_draw_as_chosen<double>(K, device);
  rows_draw_as_chosen<float>(344, device);
  for (int K : {423, 495, 520}) rows_draw_as_chosen<bfly::bf16_bits>(K, device);
  rows_draw_as_chosen<bfly::half_bits>(586, device);
  if (device.fast_memory()) {
    EXPECT_EQ(gen::choose_sample_spec(231, ElementType::f64, {}, 1 << 20, device).R, 0);
    EXPECT_EQ(gen::choose_sample_spec(344, ElementType::f32, {}, 1 << 20, device).R, 0);
    EXPECT_EQ(gen::choose_sample_spec(495, ElementType::bf16, {}, 1 << 20, device).R, 0);
  }
  report_draws(current_test_name(), 0);
}

// Where the row kernel's grid ends in a small last wave, the rows of that wave go to sample_split in a second
// launch (gen::rows_past_last_wave, docs/DESIGN.md section 15): the report names both kernels, the rows before the
// last wave draw what the row kernel forced draws over the whole batch, the rest what sample_split forced draws over
// it (first_row narrows its grid, not its draws), and the invalid rows of both launches are counted together. Where
// the second launch overlaps the first (sm_90 on, docs/DESIGN.md section 16), the copy that follows on the stream
// must find both done: sample_split's short CTAs end long before the row kernel's wave, and its last CTA waits.
TEST(GpuSampler, RowsPastTheLastWaveDrawAsSampleSplit) {
  BFLY_REQUIRE_GPU();
  const int K = 2042;  // f64: 32 rows of 16 KB a CTA, 4-5 CTAs an SM
  const gen::DeviceBalance device = rt::current_device_balance();
  const gen::KernelSpec row = gen::choose_sample_spec(K, ElementType::f64, {}, 1 << 20, device);
  ASSERT_EQ(row.operation, gen::Operation::sample);
  const rt::Kernel loaded = rt::load_kernel(row);
  const long long wave = static_cast<long long>(loaded.ctas_per_sm) * loaded.sms;
  ASSERT_GT(wave, 0) << "the driver gives the kernel's occupancy";
  ASSERT_EQ(gen::rows_past_last_wave(row, wave * 32 + 100, loaded.ctas_per_sm, loaded.sms), 100)
      << "one whole wave and 4 CTAs: the rule takes them";
  const long long M = wave * gen::launch_geometry(row).rows_per_cta + 100;
  // Where the launches overlap (sm_90 on) and the waves stay together, sample_split also takes an eighth of a wave.
  const long long tail = gen::rows_past_last_wave(row, M, loaded.ctas_per_sm, loaded.sms, loaded.can_overlap);
  ASSERT_GE(tail, 100);
  std::printf("a wave of %s: %lld CTAs; M = %lld rows, %lld of them drawn by sample_split%s\n",
              gen::kernel_name(row).c_str(), wave, M, tail, loaded.can_overlap ? " (overlapping launches)" : "");
  std::vector<double> weights = random_weights<double>(M, K, K, 12);
  weights[static_cast<std::size_t>(5 * K + 17)] = -1.0;          // an invalid row before the last wave
  weights[static_cast<std::size_t>((M - 3) * K + 1000)] = -2.0;  // and one in it
  rt::Sampler automatic;
  std::vector<int> chosen(M, -9), by_rows(M, -8), by_split(M, -7);
  const rt::SampleReport report = automatic.sample_host(std::span<const double>(weights), M, K, K, chosen, 21, 4);
  ASSERT_EQ(report.spec, row);
  ASSERT_EQ(report.tail_rows, tail);
  EXPECT_EQ(report.tail_overlapped, loaded.can_overlap);
  EXPECT_EQ(report.tail_spec.operation, gen::Operation::sample_split);
  EXPECT_EQ(report.invalid_rows, 2);
  EXPECT_EQ(report.first_invalid_row, 5);
  rt::Sampler rows_only(forcing(row)), split_only(forcing(report.tail_spec));
  EXPECT_EQ(rows_only.sample_host(std::span<const double>(weights), M, K, K, by_rows, 21, 4).tail_rows, 0)
      << "a forced kernel draws every row";
  split_only.sample_host(std::span<const double>(weights), M, K, K, by_split, 21, 4);
  EXPECT_TRUE(std::equal(chosen.begin(), chosen.end() - tail, by_rows.begin())) << "the rows of the whole waves";
  EXPECT_TRUE(std::equal(chosen.end() - tail, chosen.end(), by_split.end() - tail)) << "the rows of the last wave";
  EXPECT_EQ(chosen[5], -1);
  EXPECT_EQ(chosen[M - 3], -1);
  // split_rows = false: the rule's row kernel draws every row, as the forced one did.
  rt::SamplerOptions whole;
  whole.split_rows = false;
  std::vector<int> by_whole_rows(M, -6);
  const rt::SampleReport whole_report =
      rt::Sampler(whole).sample_host(std::span<const double>(weights), M, K, K, by_whole_rows, 21, 4);
  EXPECT_EQ(whole_report.spec, row);
  EXPECT_EQ(whole_report.tail_rows, 0) << "split_rows = false gives no rows to sample_split";
  EXPECT_EQ(by_whole_rows, by_rows);
  report_draws(current_test_name(), 4 * M);
}

TEST(GpuSampler, AnotherIterationDrawsAgainFromTheSameWeights) {
  BFLY_REQUIRE_GPU();
  const long long M = 3000;
  const int K = 333;
  const std::vector<float> weights = random_weights<float>(M, K, K, 6);
  rt::Sampler sampler;
  std::vector<int> first(M), again(M), next(M), fresh(M);
  sampler.sample_host(std::span<const float>(weights), M, K, K, first, 9);  // iteration 0 by default
  sampler.sample_host(std::span<const float>(weights), M, K, K, again, 9, 0);
  sampler.sample_host(std::span<const float>(weights), M, K, K, next, 9, 1);
  sampler.sample_host(std::span<const float>(weights), M, K, K, fresh, 9, 1);
  EXPECT_EQ(first, again) << "iteration 0 is the default";
  EXPECT_NE(first, next) << "another iteration, fresh uniforms";
  EXPECT_EQ(next, fresh) << "the same (seed, iteration), the same draws";
  report_draws(current_test_name(), 4 * M);
}

}  // namespace
}  // namespace bfly::test
