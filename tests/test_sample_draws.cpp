// Draw for draw: the sample forms beyond one draw from weights (several draws per row with and without
// replacement, from weights and from logits with a temperature), of the row kernel and of sample_split, their
// generated source run on the CPU, against a reference in long double given the same uniforms (docs/DESIGN.md
// sections 6, 11 and 12).
#include "cpu_kernels.hpp"
#include "reference_sampler.hpp"

#include "bfly/spec/spec_catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

namespace {

using bfly::gen::Draws;
using bfly::gen::ElementType;
using bfly::gen::InputKind;
using bfly::gen::KernelSpec;
using bfly::test::CpuKernel;

constexpr long long kRows = 131;  // not a multiple of any W, and more than one 128-thread CTA
constexpr int kPoison = 0x7eadbeef;
constexpr int kRedraws = 8;       // the kernels' REDRAWS
constexpr long double kInf = std::numeric_limits<long double>::infinity();

// Rows planted as invalid: for weights a negative weight, a NaN, an infinity and all zeros; for logits a NaN, a
// +inf and all -inf.
constexpr long long kNaNRow = 40, kInfRow = 77, kEmptyRow = 100, kNegativeRow = 1, kNegativeZeroRow = 53;

enum class Values { typical, many_excluded, wide, few_positive };
constexpr Values kValues[] = {Values::typical, Values::many_excluded, Values::wide, Values::few_positive};
const char* name_of(Values v) {
  switch (v) {
    case Values::typical: return "typical";
    case Values::many_excluded: return "many-zeros-or-minus-inf";
    case Values::wide: return "wide";
    default: return "two-positive";
  }
}

template <typename T>
std::vector<T> make_input(const KernelSpec& spec, Values values, long long ld, std::mt19937_64& rng) {
  using bfly::test::from_double;
  const bool logits = spec.input == InputKind::logits;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const double excluded = logits ? -inf : 0.0;  // a category that is never drawn
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  const bool half = spec.type == ElementType::f16;
  std::vector<T> x(static_cast<std::size_t>(kRows * ld), from_double<T>(nan));  // NaN past K
  for (long long row = 0; row < kRows; ++row) {
    T* r = &x[static_cast<std::size_t>(row * ld)];
    for (int k = 0; k < spec.K; ++k) {
      double v = 0;
      switch (values) {
        case Values::typical: v = logits ? 2.0 * normal(rng) : unit(rng) + 1e-3; break;
        case Values::many_excluded: v = unit(rng) < 0.7 ? excluded : (logits ? 2.0 * normal(rng) : unit(rng)); break;
        case Values::wide:  // logits far apart (weights that underflow); weights from 1e-30 to 1e30 (f16: 1e-7, 1e4)
          v = logits ? (half ? 20.0 : 40.0) * normal(rng)
                     : (unit(rng) < 0.5 ? (half ? 1e-7 : 1e-30) : (half ? 1e4 : 1e30)) * (unit(rng) + 0.01);
          break;
        case Values::few_positive: v = excluded; break;
      }
      r[k] = from_double<T>(v);
    }
    if (values == Values::few_positive)
      for (int i = 0; i < 2; ++i) r[rng() % spec.K] = from_double<T>(logits ? normal(rng) : unit(rng) + 0.5);
  }
  const auto plant = [&](long long row, double value) {
    x[static_cast<std::size_t>(row * ld + static_cast<long long>(rng() % spec.K))] = from_double<T>(value);
  };
  plant(kNaNRow, nan);
  plant(kInfRow, inf);
  if (!logits) plant(kNegativeRow, -0.5);
  if (!logits) plant(kNegativeZeroRow, -0.0);  // usable (a zero), but its group takes the per-weight test
  for (int k = 0; k < spec.K; ++k) x[static_cast<std::size_t>(kEmptyRow * ld + k)] = from_double<T>(excluded);
  return x;
}

// One row's weights as the reference sees them, in long double: widened weights, or 2^((x - max) * scale) for logits
// with scale = log2(e) / T rounded to float as the kernels round it. Empty when the row is invalid.
template <typename T>
std::vector<long double> reference_weights(const KernelSpec& spec, const T* row, float scale) {
  using S = bfly::test::AccumulatorOf<T>;
  std::vector<long double> w(static_cast<std::size_t>(spec.K));
  if (spec.input == InputKind::logits) {
    long double top = -kInf;
    for (int k = 0; k < spec.K; ++k) {
      const long double x = bfly::test::widen_host(row[k]);
      if (std::isnan(x) || x == kInf) return {};
      top = std::max(top, x);
    }
    if (top == -kInf) return {};
    for (int k = 0; k < spec.K; ++k) {
      const long double x = bfly::test::widen_host(row[k]);
      w[k] = x == -kInf ? 0.0L : std::exp2((x - top) * static_cast<long double>(scale));
    }
    return w;
  }
  S total_s = 0;  // the total in the accumulator must not overflow either
  long double total = 0;
  for (int k = 0; k < spec.K; ++k) {
    const S x = bfly::test::widen_host(row[k]);
    if (!(x >= S(0) && x <= std::numeric_limits<S>::max())) return {};
    w[k] = x;
    total += x;
    total_s += x;
  }
  if (!(total > 0) || !(total_s <= std::numeric_limits<S>::max())) return {};
  return w;
}

// The categories of `w` outside `drawn`, with their running sums.
struct Left {
  std::vector<int> category;
  std::vector<long double> prefix;
  long double total() const { return prefix.empty() ? 0.0L : prefix.back(); }
};
Left left_of(const std::vector<long double>& w, const std::vector<int>& drawn) {
  Left left;
  long double sum = 0;
  for (int k = 0; k < static_cast<int>(w.size()); ++k) {
    if (std::find(drawn.begin(), drawn.end(), k) != drawn.end()) continue;
    sum += w[k];
    left.category.push_back(k);
    left.prefix.push_back(sum);
  }
  return left;
}

// The category the reference draws for target t among `left`, and how far t lies from category `k`'s interval
// (0 inside it; +inf when k is not among `left`).
int reference_category(const Left& left, long double t) {
  for (std::size_t i = 0; i < left.category.size(); ++i)
    if (t < left.prefix[i] && left.prefix[i] > (i ? left.prefix[i - 1] : 0.0L)) return left.category[i];
  for (std::size_t i = left.category.size(); i-- > 0;)  // rounding past the end: the last positive one
    if (left.prefix[i] > (i ? left.prefix[i - 1] : 0.0L)) return left.category[i];
  return -1;
}
long double distance_to(const Left& left, int k, long double t) {
  for (std::size_t i = 0; i < left.category.size(); ++i) {
    if (left.category[i] != k) continue;
    const long double lo = i ? left.prefix[i - 1] : 0.0L, hi = left.prefix[i];
    return t < lo ? lo - t : (t >= hi ? t - hi : 0.0L);
  }
  return kInf;
}

// unresolved: a draw among categories left whose weights all lie below what the kernels resolve (their total within
// the tolerance's per-weight step): any of them is a fair draw, and it is not counted as a boundary case.
enum class Verdict { equal, boundary, unresolved, wrong };

struct Checker {
  const KernelSpec& spec;
  unsigned long long seed;
  unsigned int iteration;
  mutable long long targets = 0;  // targets compared so far (a draw without replacement compares one per attempt)
  // Sums of at most K weights in float differ from exact ones by about K * eps * total; a logit's weight and the
  // rescaling by a larger maximum add a few rounding errors per weight and per block; weights in the subnormal
  // range (far below the row's maximum) are off by up to one subnormal step each. A logit's weight (at most 1, the
  // row's maximum) below 2^-125 is 0 (bfly::exp2_rounded): one close to it may be kept on one side and not on the
  // other, and sample_split, which sums each slice under the slice's own maximum, keeps some that the row's
  // maximum would make 0. So for logits the step is 2^-125.
  long double tolerance(long double total) const {
    const bool f64 = spec.type == ElementType::f64;
    const long double eps = f64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
    return (spec.input == InputKind::logits ? 2.0L * spec.K + 64 : spec.K + 16.0L) * eps * total + (spec.K + 1) * step();
  }
  long double step() const {
    if (spec.input == InputKind::logits) return std::ldexp(1.0L, -125);
    return spec.type == ElementType::f64 ? std::numeric_limits<double>::denorm_min()
                                         : std::numeric_limits<float>::denorm_min();
  }
  long double uniform(long long row, int d, int attempt) const {
    const unsigned int bits = bfly::philox_bits(seed, static_cast<unsigned long long>(row),
                                                static_cast<unsigned int>(d) | (static_cast<unsigned int>(attempt) << 24),
                                                iteration);
    if (spec.type == ElementType::f64) return bfly::uniform_from_bits(bits, double());
    return bfly::uniform_from_bits(bits, float());
  }

  // Draw d of a valid row, given the row's earlier draws (the kernel's own: a boundary case earlier must not
  // derail the comparison of the later draws).
  Verdict check(const std::vector<long double>& w, long long row, int d, const std::vector<int>& drawn, int draw,
                std::string* why) const {
    const Left all = left_of(w, {});
    const Left rest = left_of(w, drawn);
    const bool distinct = spec.draws == Draws::without_replacement;
    const auto found = [&](int k) { return std::find(drawn.begin(), drawn.end(), k) != drawn.end(); };
    if (draw == -1) {
      if (distinct && rest.total() <= 1e-30L * all.total()) return Verdict::equal;  // nothing (representable) left
      *why = "drew -1 for a valid row with weight left";
      return Verdict::wrong;
    }
    if (draw < 0 || draw >= spec.K || !(w[draw] > 0)) {
      *why = "drew " + std::to_string(draw) + ", not a category of positive weight";
      return Verdict::wrong;
    }
    if (distinct && found(draw)) {
      *why = "drew " + std::to_string(draw) + " a second time without replacement";
      return Verdict::wrong;
    }
    return from_attempt(w, all, rest, row, d, drawn, draw, 0, why);
  }

  // The verdict on `draw` given that the kernel reached attempt `attempt` of draw d (REDRAWS: the exact draw among
  // the rest). An attempt whose target lies well inside one category's interval found that category, so the kernel
  // accepted it (the draw must be it) or, without replacement, redrew if the row had drawn it. A target within rounding
  // distance of an edge is ambiguous: the draw is a boundary case of this attempt, unless a later attempt explains it
  // exactly (in a peaked row the tolerance can reach the small categories next to a drawn one, so a redraw's
  // category often lies within it too).
  Verdict from_attempt(const std::vector<long double>& w, const Left& all, const Left& rest, long long row, int d,
                       const std::vector<int>& drawn, int draw, int attempt, std::string* why) const {
    const bool distinct = spec.draws == Draws::without_replacement;
    if (attempt == (distinct ? kRedraws : 1)) {
      if (!distinct) return Verdict::wrong;  // not reached: one attempt decides a draw with replacement
      ++targets;
      const long double t = uniform(row, d, kRedraws) * rest.total();
      const int expected = reference_category(rest, t);
      if (draw == expected) return Verdict::equal;
      if (distance_to(rest, draw, t) <= tolerance(rest.total()))
        return rest.total() <= (spec.K + 1) * step() ? Verdict::unresolved : Verdict::boundary;
      *why = "drew " + std::to_string(draw) + " (weight " + std::to_string(static_cast<double>(w[draw] / all.total())) +
             " of the row), the reference " + std::to_string(expected) + " among the rest (" +
             std::to_string(static_cast<double>(rest.total() / all.total())) + " of the row)";
      return Verdict::wrong;
    }
    ++targets;
    const long double t = uniform(row, d, attempt) * all.total();
    const int expected = reference_category(all, t);
    if (draw == expected) return Verdict::equal;
    const bool found_before = std::find(drawn.begin(), drawn.end(), expected) != drawn.end();
    const bool near_edge = distance_to(all, expected, t) + tolerance(all.total()) >
                           std::min(distance_to(all, expected - 1, t), distance_to(all, expected + 1, t));
    const bool within = distance_to(all, draw, t) <= tolerance(all.total());
    if (!near_edge && !(distinct && found_before)) {
      *why = "drew " + std::to_string(draw) + ", the reference " + std::to_string(expected) + " (attempt " +
             std::to_string(attempt) + ")";
      return Verdict::wrong;
    }
    if (!distinct) return within ? Verdict::boundary : Verdict::wrong;
    const Verdict later = from_attempt(w, all, rest, row, d, drawn, draw, attempt + 1, why);
    if (later == Verdict::equal || !within) return later;
    return Verdict::boundary;
  }
};

struct Counts {
  long long draws = 0, boundary = 0, unresolved = 0, invalid = 0, ran_out = 0;
};

using bfly::test::SplitScratch;

// Runs `kernel` on the CPU over `x` (kRows rows, ld apart) with the arguments of its family, the split forms with
// `scratch`; with `one_thread_grid_extra` > 0 on one CPU thread with that many CTAs past the launch contract's.
void run_form(const CpuKernel& kernel, const void* x, long long ld, double temperature, int num_samples, int* out,
              unsigned long long* invalid, unsigned long long seed, unsigned int iteration, SplitScratch& scratch,
              unsigned one_thread_grid_extra = 0) {
  const KernelSpec& spec = kernel.spec;
  const bool logits = spec.input == InputKind::logits;
  void* parts = scratch.part_totals();
  unsigned long long* arrivals = scratch.arrivals.data();
  auto args = [&]() -> bfly::gen::PackedArgs {
    const bfly::gen::KernelFamily& family = bfly::gen::family(kernel.cpu.family);
    if (!bfly::gen::splits_rows(spec.operation)) {
      if (logits)
        return {family, spec.type, kernel.name,
                {x, kRows, ld, temperature, num_samples, out, invalid, seed, iteration}, spec.K};
      return {family, spec.type, kernel.name, {x, kRows, ld, num_samples, out, invalid, seed, iteration}, spec.K};
    }
    if (logits)
      return {family, spec.type, kernel.name,
              {x, kRows, 0ll, ld, temperature, num_samples, out, invalid, parts, arrivals, seed, iteration}, spec.K};
    return {family, spec.type, kernel.name,
            {x, kRows, 0ll, ld, num_samples, out, invalid, parts, arrivals, seed, iteration}, spec.K};
  }();
  if (one_thread_grid_extra == 0) {
    bfly::cpu::run(kernel.cpu, args);
    return;
  }
  kernel.cpu.launch(1, static_cast<unsigned>(kernel.cpu.geometry.grid_for_rows(kRows) + one_thread_grid_extra),
                    static_cast<unsigned>(kernel.cpu.geometry.threads_per_cta), args.data());
}

template <typename T>
void check_kernel(const CpuKernel& kernel, Counts& counts) {
  const KernelSpec& spec = kernel.spec;
  const bool logits = spec.input == InputKind::logits;
  const bool distinct = spec.draws == Draws::without_replacement;
  const bool split = bfly::gen::splits_rows(spec.operation);
  SplitScratch scratch(spec, kRows);  // one scratch for every launch: the kernel leaves its counters at zero
  const long long ld = spec.K + 5;
  std::mt19937_64 rng(bfly::test::run_seed() ^ std::hash<std::string_view>{}(kernel.name));
  for (Values values : kValues) {
    SCOPED_TRACE(std::string(kernel.name) + " input " + name_of(values));
    const std::vector<T> x = make_input<T>(spec, values, ld, rng);
    const double temperature = std::vector<double>{0.25, 1.0, 3.7}[rng() % 3];
    const int num_samples = distinct ? 5 : 4;
    const Checker checker{spec, rng(), static_cast<unsigned int>(rng() % 5)};
    std::vector<int> out(static_cast<std::size_t>(kRows * num_samples), kPoison);
    unsigned long long invalid[2] = {0, ~0ull};
    run_form(kernel, x.data(), ld, temperature, num_samples, out.data(), invalid, checker.seed, checker.iteration,
             scratch);
    if (split) {
      for (unsigned long long a : scratch.arrivals) ASSERT_EQ(a, 0ull) << "the last CTA of a row resets its counter";
      // The same draws from a larger grid on one CPU thread: neither the launch nor the threads change a draw.
      std::vector<int> again(out.size(), kPoison);
      run_form(kernel, x.data(), ld, temperature, num_samples, again.data(), nullptr, checker.seed,
               checker.iteration, scratch, 3);
      EXPECT_EQ(again, out) << "a larger grid on one thread drew differently";
    }

    const float scale = static_cast<float>(std::numbers::log2e / temperature);  // the kernels' bfly::kLog2e / T
    long long rows_with_minus_one = 0, first = -1, boundary = 0, unresolved = 0, invalid_rows = 0;
    for (long long row = 0; row < kRows; ++row) {
      const std::vector<long double> w = reference_weights(spec, &x[static_cast<std::size_t>(row * ld)], scale);
      const int* draws = &out[static_cast<std::size_t>(row * num_samples)];
      bool minus_one = false;
      std::vector<int> drawn;
      for (int d = 0; d < num_samples; ++d) {
        minus_one = minus_one || draws[d] == -1;
        if (w.empty()) {
          ASSERT_EQ(draws[d], -1) << "row " << row << " is invalid; draw " << d;
          continue;
        }
        std::string why;
        const Verdict verdict = checker.check(w, row, d, drawn, draws[d], &why);
        ASSERT_NE(verdict, Verdict::wrong) << "row " << row << " draw " << d << ": " << why;
        boundary += verdict == Verdict::boundary;
        unresolved += verdict == Verdict::unresolved;
        drawn.push_back(draws[d]);
      }
      invalid_rows += w.empty();
      counts.ran_out += !w.empty() && minus_one;
      if (minus_one) {
        ++rows_with_minus_one;
        if (first < 0) first = row;
      }
    }
    EXPECT_EQ(static_cast<long long>(invalid[0]), rows_with_minus_one) << "rows with a -1 draw, as counted";
    EXPECT_EQ(static_cast<long long>(invalid[1]), first < 0 ? -1ll : first) << "first row with a -1 draw";
    EXPECT_GE(invalid_rows, logits ? 3 : 4) << "the planted invalid rows must be invalid";
    // Boundary cases need a target within rounding distance of a category boundary: rare, never a pattern. Without
    // replacement a peaked row compares up to REDRAWS targets per draw, most near its drawn categories' edges.
    EXPECT_LE(boundary, 3 + checker.targets / 500) << "too many draws differ from the reference";
    counts.draws += kRows * num_samples;
    counts.boundary += boundary;
    counts.unresolved += unresolved;
    counts.invalid += invalid_rows;
  }
}

std::string form_name(const testing::TestParamInfo<std::pair<InputKind, Draws>>& info) {
  return std::string(bfly::gen::name_of(info.param.first)) + "_" + std::string(bfly::gen::name_of(info.param.second));
}

class SampleForms : public testing::TestWithParam<std::pair<InputKind, Draws>> {};

TEST_P(SampleForms, EveryDrawMatchesTheReferenceExceptBoundaryCases) {
  const auto [input, draws] = GetParam();
  Counts counts;
  int kernels = 0;
  for (const CpuKernel& kernel : bfly::test::cpu_sample_draws_kernels()) {
    if (kernel.spec.input != input || kernel.spec.draws != draws) continue;
    ++kernels;
    bfly::gen::visit_element_type(kernel.spec.type,
                                  [&](auto tag) { check_kernel<typename decltype(tag)::type>(kernel, counts); });
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(kernels, 15) << "six geometries, three of them in three types, and three sample_split geometries";
  if (draws == Draws::without_replacement) {
    EXPECT_GT(counts.ran_out, 0) << "rows with two positive categories";
  }
  std::printf("%s %s: %d kernels, %lld draws, %lld invalid rows, %lld rows ran out, %lld boundary cases, %lld draws "
              "among weights below resolution\n",
              std::string(bfly::gen::name_of(input)).c_str(), std::string(bfly::gen::name_of(draws)).c_str(),
              kernels, counts.draws, counts.invalid, counts.ran_out, counts.boundary, counts.unresolved);
}

INSTANTIATE_TEST_SUITE_P(Catalog, SampleForms,
                         testing::Values(std::pair{InputKind::weights, Draws::with_replacement},
                                         std::pair{InputKind::weights, Draws::without_replacement},
                                         std::pair{InputKind::logits, Draws::with_replacement},
                                         std::pair{InputKind::logits, Draws::without_replacement}),
                         form_name);

const CpuKernel& catalog_kernel(KernelSpec spec) {
  for (const CpuKernel& kernel : bfly::test::cpu_sample_draws_kernels())
    if (kernel.spec == spec) return kernel;
  throw std::logic_error("no catalog kernel " + bfly::gen::kernel_name(spec));
}

// Draw 0 of several draws with replacement takes the single-draw kernel's uniform (Philox word 2 = 0) and the same
// search, so it is that kernel's draw exactly.
TEST(SampleForms, DrawZeroIsTheSingleDrawKernelsDraw) {
  for (int K : {71, 1000}) {
    KernelSpec spec{16, K, 8, ElementType::f32, bfly::gen::Variant::addsub, bfly::gen::Operation::sample};
    const CpuKernel* single = bfly::test::find_cpu_kernel(bfly::gen::kernel_name(spec));
    ASSERT_NE(single, nullptr);
    spec.draws = Draws::with_replacement;
    const CpuKernel& several = catalog_kernel(spec);
    std::mt19937_64 rng(bfly::test::run_seed() + K);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> w(static_cast<std::size_t>(kRows * K));
    for (float& x : w) x = unit(rng) < 0.5f ? 0.0f : unit(rng);
    const unsigned long long seed = rng();
    std::vector<int> one(kRows), three(kRows * 3);
    bfly::test::run_on_cpu(*single, {w.data(), kRows, static_cast<long long>(K), one.data(), nullptr, seed, 2u});
    bfly::test::run_on_cpu(several,
                           {w.data(), kRows, static_cast<long long>(K), 3, three.data(), nullptr, seed, 2u});
    int differ = 0;
    for (long long row = 0; row < kRows; ++row) {
      EXPECT_EQ(three[row * 3], one[row]) << "K = " << K << ", row " << row;
      differ += three[row * 3 + 1] != three[row * 3];
    }
    EXPECT_GT(differ, kRows / 4) << "draws 1 and 0 come from different uniforms";
  }
}

// The same for sample_split: draw 0 of its several-draws form is its one-draw kernel's draw (one padded tile in
// f64; two CTAs per row in f32).
TEST(SampleForms, SplitDrawZeroIsTheSplitKernelsDraw) {
  for (const auto& [K, type] : {std::pair{5, ElementType::f64}, std::pair{20000, ElementType::f32}}) {
    KernelSpec spec{32, K, 0, type, bfly::gen::Variant::addsub, bfly::gen::Operation::sample_split};
    const CpuKernel* single = nullptr;
    for (const CpuKernel& kernel : bfly::test::cpu_split_kernels())
      if (kernel.spec == spec) single = &kernel;
    ASSERT_NE(single, nullptr) << bfly::gen::kernel_name(spec);
    spec.draws = Draws::with_replacement;
    const CpuKernel& several = catalog_kernel(spec);
    std::mt19937_64 rng(bfly::test::run_seed() + K);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    bfly::gen::visit_element_type(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<T> w(static_cast<std::size_t>(kRows * K));
      for (T& x : w) x = bfly::test::from_double<T>(unit(rng) < 0.5 ? 0.0 : unit(rng));
      const unsigned long long seed = rng();
      SplitScratch scratch(spec, kRows);
      std::vector<int> one(kRows, kPoison), three(kRows * 3, kPoison);
      bfly::test::run_on_cpu(*single, {w.data(), kRows, 0ll, static_cast<long long>(K), one.data(), nullptr,
                                       scratch.part_totals(), scratch.arrivals.data(), seed, 2u});
      run_form(several, w.data(), K, 1.0, 3, three.data(), nullptr, seed, 2u, scratch);
      int differ = 0;
      for (long long row = 0; row < kRows; ++row) {
        EXPECT_EQ(three[row * 3], one[row]) << "K = " << K << ", row " << row;
        differ += three[row * 3 + 1] != three[row * 3];
      }
      EXPECT_GT(differ, kRows / 4) << "draws 1 and 0 come from different uniforms";
    });
  }
}

// softmax(logits / T) at two temperatures, many draws of one row of logits: a chi-square test of the counts against
// the f64 softmax at the temperature used (15 degrees of freedom: 50 is the 1e-6 quantile), and against the other
// temperature's, which they must fail by far.
TEST(SampleForms, TemperatureShapesTheDistribution) {
  KernelSpec spec{16, 16, 8, ElementType::f32, bfly::gen::Variant::swap, bfly::gen::Operation::sample};
  spec.input = InputKind::logits;
  spec.draws = Draws::with_replacement;
  const CpuKernel& kernel = catalog_kernel(spec);
  constexpr long long kSameRows = 1024;
  constexpr int kDraws = 16;
  std::mt19937_64 rng(bfly::test::run_seed() + 99);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<float> row(16);
  for (float& x : row) x = static_cast<float>(normal(rng));
  std::vector<float> logits;
  for (long long r = 0; r < kSameRows; ++r) logits.insert(logits.end(), row.begin(), row.end());
  const auto softmax = [&](double T) {
    std::vector<double> p(16);
    const double top = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (int k = 0; k < 16; ++k) sum += p[k] = std::exp((row[k] - top) / T);
    for (double& x : p) x /= sum;
    return p;
  };
  const auto chi_square = [](const std::vector<long long>& counts, const std::vector<double>& p, double n) {
    double chi = 0;
    for (int k = 0; k < 16; ++k) chi += (counts[k] - n * p[k]) * (counts[k] - n * p[k]) / (n * p[k]);
    return chi;
  };
  const double temperatures[2] = {0.5, 2.0};
  std::vector<long long> counts[2];
  for (int i = 0; i < 2; ++i) {
    std::vector<int> out(kSameRows * kDraws, kPoison);
    bfly::test::run_on_cpu(kernel, {logits.data(), kSameRows, 16ll, temperatures[i], kDraws, out.data(), nullptr,
                                    rng(), 0u});
    counts[i].assign(16, 0);
    for (int c : out) {
      ASSERT_TRUE(c >= 0 && c < 16) << c;
      ++counts[i][c];
    }
  }
  const double n = kSameRows * kDraws;
  for (int i = 0; i < 2; ++i) {
    const double fit = chi_square(counts[i], softmax(temperatures[i]), n);
    const double other = chi_square(counts[i], softmax(temperatures[1 - i]), n);
    std::printf("T = %.1f: chi-square %.1f against softmax(x / %.1f), %.1f against softmax(x / %.1f)\n",
                temperatures[i], fit, temperatures[i], other, temperatures[1 - i]);
    EXPECT_LT(fit, 50.0) << "T = " << temperatures[i];
    EXPECT_GT(other, 500.0) << "T = " << temperatures[i] << " drew like T = " << temperatures[1 - i];
  }
}

}  // namespace
