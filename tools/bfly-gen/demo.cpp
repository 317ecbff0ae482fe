// `bfly-gen demo` (see demo.hpp).
#include "demo.hpp"

#include "bfly/emit/generate.hpp"
#include "bfly/spec/spec_catalog.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/environment.hpp"
#include "bfly/ops/sampler.hpp"
#include "chi_square.hpp"
#include "bfly/cpu/table_kernels.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <ostream>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace bfly::cli {
namespace {

constexpr long long kRowsPerBatch = 4000;  // each row of a batch is the same distribution; one seed per batch
constexpr int kTopCategories = 6;          // categories printed per distribution

struct Distribution {
  std::string name;
  std::function<float(int j)> weight;  // weight of category j in [0, K)
};

std::vector<Distribution> example_distributions() {
  return {
      {"skewed: Zipf weights, weight(j) = 1/(j+1)", [](int j) { return 1.0f / static_cast<float>(j + 1); }},
      {"mostly zeros: weights 1..16 at categories 5, 66, 127, ... (every 61st), 1008 zeros",
       [](int j) { return j % 61 == 5 ? static_cast<float>(j / 61 + 1) : 0.0f; }},
      {"one-hot: only category 777", [](int j) { return j == 777 ? 1.0f : 0.0f; }},
      {"uniform: every weight 1", [](int) { return 1.0f; }},
      {"huge range: 1e30 at 3, 3e30 at 1000, 1e-30 everywhere else",
       [](int j) { return j == 3 ? 1e30f : j == 1000 ? 3e30f : 1e-30f; }},
      {"geometric: weight(j) = 2^-j (denormals past j = 126, zeros past j = 149)",
       [](int j) { return std::ldexp(1.0f, -j); }},
      {"invalid: uniform, but weight(5) = -1 (every row must come back as -1)",
       [](int j) { return j == 5 ? -1.0f : 1.0f; }},
  };
}

// One batch of rows through the generated kernel: on the GPU (Sampler) or on the CPU (lockstep execution).
class Backend {
 public:
  virtual ~Backend() = default;
  // Draws for `rows` rows of K weights (row stride K); returns the number of invalid rows reported.
  virtual long long sample(std::span<const float> weights, long long rows, int K, std::span<int> out,
                           std::uint64_t seed) = 0;
};

class GpuBackend final : public Backend {
  // The demo spec's W, variant and R; the operation as the Sampler chooses it.
  static rt::SamplerOptions forced_table(const gen::KernelSpec& spec) {
    rt::SamplerOptions options;
    options.W = spec.W;
    options.variant = spec.variant;
    options.R = spec.R;
    return options;
  }

 public:
  explicit GpuBackend(const gen::KernelSpec& spec) : sampler_(forced_table(spec)) {}
  long long sample(std::span<const float> weights, long long rows, int K, std::span<int> out,
                   std::uint64_t seed) override {
    return sampler_.sample_host(weights, rows, K, K, out, seed).invalid_rows;
  }

 private:
  rt::Sampler sampler_;
};

class CpuBackend final : public Backend {
 public:
  long long sample(std::span<const float> weights, long long rows, int K, std::span<int> out,
                   std::uint64_t seed) override {
    unsigned long long invalid[2] = {0, ~0ull};
    const cpu::CpuKernel& kernel = tables::example_kernel();
    gen::PackedArgs args(gen::family(kernel.family), gen::ElementType::f32, "bfly-gen demo",
                         {weights.data(), rows, K, out.data(), invalid, seed, 0u}, K);
    cpu::run(kernel, args);
    return static_cast<long long>(invalid[0]);
  }
};

struct Fit {
  double chi_square = 0;
  int degrees_of_freedom = 0;  // 0: a single category, nothing to test
  double p_value = 1;
  double total_variation = 0;
};

// Pearson's chi-square over the categories expected at least 5 times, the others pooled into one bin.
Fit goodness_of_fit(const std::vector<double>& expected, const std::vector<long long>& counts, long long n) {
  Fit fit;
  double pooled_expected = 0, pooled_observed = 0;
  int bins = 0;
  for (std::size_t j = 0; j < expected.size(); ++j) {
    fit.total_variation += 0.5 * std::abs(static_cast<double>(counts[j]) / n - expected[j]);
    const double e = expected[j] * n;
    if (e >= 5) {
      fit.chi_square += (counts[j] - e) * (counts[j] - e) / e;
      ++bins;
    } else {
      pooled_expected += e;
      pooled_observed += counts[j];
    }
  }
  if (pooled_expected > 0) {
    fit.chi_square += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++bins;
  }
  fit.degrees_of_freedom = bins - 1;
  if (fit.degrees_of_freedom > 0) fit.p_value = bfly::stats::chi_square_p(fit.chi_square, fit.degrees_of_freedom);
  return fit;
}

std::uint64_t batch_seed(std::uint64_t base, std::size_t distribution, long long batch) {
  std::uint64_t z = base + 0x9e3779b97f4a7c15ull * (distribution * 1000003ull + static_cast<std::uint64_t>(batch) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;  // splitmix64: distinct, well-spread seeds
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Draws options.draws times from `d`; prints the table and the fit. Returns false when a check failed.
bool run_distribution(const Distribution& d, std::size_t index, std::size_t count, int K, const DemoOptions& options,
                      Backend& backend, std::ostream& out) {
  std::vector<float> row(K);
  for (int j = 0; j < K; ++j) row[j] = d.weight(j);
  const bool invalid = std::any_of(row.begin(), row.end(), [](float w) { return !(w >= 0) || std::isinf(w); });
  double total = 0;
  for (float w : row) total += w;
  std::vector<double> expected(K);
  for (int j = 0; j < K; ++j) expected[j] = invalid ? 0.0 : row[j] / total;

  std::vector<long long> counts(K, 0);
  long long minus_one = 0, out_of_range = 0, reported_invalid = 0;
  const long long batch_rows = std::min(kRowsPerBatch, options.draws);
  std::vector<float> weights(static_cast<std::size_t>(batch_rows) * K);
  for (long long r = 0; r < batch_rows; ++r) std::copy(row.begin(), row.end(), weights.begin() + r * K);
  std::vector<int> draws(batch_rows);
  for (long long done = 0, batch = 0; done < options.draws; done += batch_rows, ++batch) {
    const long long rows = std::min(batch_rows, options.draws - done);
    reported_invalid += backend.sample(std::span<const float>(weights.data(), rows * K), rows, K,
                                       std::span<int>(draws.data(), rows), batch_seed(options.seed, index, batch));
    for (long long r = 0; r < rows; ++r) {
      const int c = draws[r];
      if (c == -1) ++minus_one;
      else if (c < 0 || c >= K) ++out_of_range;
      else ++counts[c];
    }
  }

  out << fmt::format("\n[{}/{}] {}\n", index + 1, count, d.name);
  const long long n = options.draws;
  if (invalid) {
    const bool ok = minus_one == n && reported_invalid == n;
    out << fmt::format("  {} of {} draws are -1 and {} invalid rows were reported: {}\n", minus_one, n,
                       reported_invalid, ok ? "as expected" : "WRONG");
    return ok;
  }

  std::vector<int> order(K);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return expected[a] > expected[b]; });
  const int nonzero = static_cast<int>(std::count_if(expected.begin(), expected.end(), [](double p) { return p > 0; }));
  const int shown = std::min(kTopCategories, nonzero);
  out << fmt::format("  {:>8}  {:>10}  {:>10}  {:>10}\n", "category", "weight", "expected", "observed");
  for (int i = 0; i < shown; ++i) {
    const int j = order[i];
    out << fmt::format("  {:>8}  {:>10.4g}  {:>10.5f}  {:>10.5f}\n", j, row[j], expected[j],
                       static_cast<double>(counts[j]) / n);
  }
  if (nonzero > shown) out << fmt::format("  ... {} more categories with non-zero weight\n", nonzero - shown);

  long long zero_weight_draws = 0;
  for (int j = 0; j < K; ++j)
    if (row[j] == 0) zero_weight_draws += counts[j];
  const Fit fit = goodness_of_fit(expected, counts, n);
  const std::string chi = fit.degrees_of_freedom == 0
                              ? std::string("chi-square n/a (one category)")
                              : fmt::format("chi-square {:.1f} on {} degrees of freedom, p = {:.3f}", fit.chi_square,
                                            fit.degrees_of_freedom, fit.p_value);
  out << fmt::format("  {}; total variation {:.4f}; zero-weight categories drawn {} times; invalid draws {}\n", chi,
                     fit.total_variation, zero_weight_draws, minus_one + out_of_range);
  return zero_weight_draws == 0 && minus_one == 0 && out_of_range == 0 && reported_invalid == 0;
}

}  // namespace

int run_demo(const DemoOptions& given, std::ostream& out) {
  DemoOptions options = given;
  const gen::KernelSpec spec = gen::example_spec();
  const std::string name = gen::kernel_name(spec);
  out << fmt::format("bfly demo: kernel {} ({})\n", name, gen::describe(spec));

  std::string why;
  const bool gpu = !options.force_cpu && rt::gpu_available(&why);
  std::unique_ptr<Backend> backend;
  if (gpu) {
    out << "running on the GPU through bfly::rt::Sampler (generated, compiled by NVRTC and cached at run time)\n";
    backend = std::make_unique<GpuBackend>(spec);
  } else {
    const std::string reason = options.force_cpu ? std::string("--cpu given") : "no GPU found (" + why + ")";
    out << fmt::format("{}: running the generated source on the CPU\n(compiled into bfly-gen at build time, run by "
                       "bfly/lockstep.hpp on {} threads)\n",
                       reason, rt::environment().lockstep_threads);
    backend = std::make_unique<CpuBackend>();
  }
  if (options.draws == 0) options.draws = gpu ? kGpuDraws : kCpuDraws;
  const std::vector<Distribution> distributions = example_distributions();
  out << fmt::format("{} distributions of K = {} categories, {} draws each ({} rows per batch, one seed per batch;\n"
                     "the same seeds draw the same categories on the GPU and on the CPU)\n",
                     distributions.size(), spec.K, options.draws, std::min(kRowsPerBatch, options.draws));

  const auto start = std::chrono::steady_clock::now();
  int failed = 0;
  for (std::size_t i = 0; i < distributions.size(); ++i)
    if (!run_distribution(distributions[i], i, distributions.size(), spec.K, options, *backend, out)) ++failed;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const long long total_draws = options.draws * static_cast<long long>(distributions.size());
  out << fmt::format("\n{} draws in {:.1f} s on the {}. {}\n", total_draws, seconds, gpu ? "GPU" : "CPU",
                     failed == 0 ? "Every check held: no zero-weight category was drawn and invalid rows came back "
                                   "as -1."
                                 : fmt::format("{} distribution(s) FAILED a check (see above).", failed));
  return failed == 0 ? 0 : 1;
}

}  // namespace bfly::cli
