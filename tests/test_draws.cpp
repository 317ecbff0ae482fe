// Draw for draw: the generated source of every draw-test spec, run on the CPU, against the reference sampler
// given the same uniforms (docs/DESIGN.md section 6, test level 2).
#include "cpu_kernels.hpp"
#include "draw_inputs.hpp"
#include "reference_sampler.hpp"

#include "bfly/spec/spec_catalog.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>


namespace {

using bfly::gen::ElementType;
using bfly::gen::KernelSpec;
using bfly::gen::Variant;
using bfly::test::CpuKernel;

constexpr long long kRows = 131;  // not a multiple of any W, and more than one 128-thread CTA
constexpr int kPoison = 0x7eadbeef;

// Rows planted as invalid in every input: a negative weight, a NaN, an infinity, and all zeros. Row kNegativeZeroRow
// gets weights of -0.0, which are usable (zeros) but fail pass 1's screen, so its group takes the per-weight test.
constexpr long long kNegativeRow = 1, kNaNRow = 40, kInfRow = 77, kZeroRow = 100, kNegativeZeroRow = 53;

using bfly::test::Input;
using bfly::test::kInputs;
using bfly::test::name_of;

// The inputs of draw_inputs.hpp with the invalid rows planted.
template <typename T>
std::vector<T> weights_with_invalid_rows(Input input, int K, long long ld, std::mt19937_64& rng) {
  using bfly::test::from_double;
  std::vector<T> w = bfly::test::make_weights<T>(input, kRows, K, ld, rng);
  const auto plant = [&](long long row, double value) {
    if (row < kRows) w[static_cast<std::size_t>(row * ld + rng() % K)] = from_double<T>(value);
  };
  plant(kNegativeRow, -0.5);
  plant(kNaNRow, std::numeric_limits<double>::quiet_NaN());
  plant(kInfRow, std::numeric_limits<double>::infinity());
  for (int k = 0; k < K; ++k) w[static_cast<std::size_t>(kZeroRow * ld + k)] = from_double<T>(0.0);
  for (int i = 0; i < 3; ++i) plant(kNegativeZeroRow, -0.0);
  return w;
}

struct Counts {
  long long draws = 0, boundary = 0, invalid = 0;
};

// The row strides of a kernel's inputs: K + 3, whose rows start off 16 bytes (but for K % 4 == 1), and those of
// bfly::test::pass1_path_strides, so that every pass-1 path runs: the three of a staged kernel (a kernel staged anywhere
// takes its staged loads at both; its register loads, off 16 bytes, run in
// RowsStagedAnywherePackedTightlyDrawAsTheReference) and the warp's copy at ld = K.
std::vector<long long> strides(const KernelSpec& spec) {
  std::vector<long long> lds = {spec.K + 3};
  for (const long long ld : bfly::test::pass1_path_strides(spec)) lds.push_back(ld);
  return lds;
}

template <typename T>
void check_kernel(const CpuKernel& kernel, Counts& counts) {
  const KernelSpec& spec = kernel.spec;
  std::mt19937_64 rng(bfly::test::run_seed() ^ std::hash<std::string_view>{}(kernel.name));
  for (const long long ld : strides(spec)) {
    for (Input input : kInputs) {
      SCOPED_TRACE(std::string(kernel.name) + " input " + name_of(input) + " ld " + std::to_string(ld));
      const std::vector<T> w = weights_with_invalid_rows<T>(input, spec.K, ld, rng);
      const unsigned long long seed = rng();
      const unsigned int iteration = static_cast<unsigned int>(rng() % 5);
      std::vector<int> out(static_cast<std::size_t>(kRows), kPoison);
      unsigned long long invalid[2] = {0, ~0ull};
      bfly::test::run_on_cpu(kernel, {w.data(), kRows, ld, out.data(), invalid, seed, iteration});

      long long expected_invalid = 0, first_invalid = -1, boundary = 0;
      for (long long row = 0; row < kRows; ++row) {
        const T* x = &w[static_cast<std::size_t>(row * ld)];
        using S = bfly::test::AccumulatorOf<T>;  // the uniform is drawn in the accumulator, as in the kernels
        const S u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(row), 0u, iteration),
                                            S());
        const auto ref = bfly::test::reference_draw(x, spec.K, u);
        if (ref.draw < 0) {
          ++expected_invalid;
          if (first_invalid < 0) first_invalid = row;
        }
        std::string why;
        const auto verdict = bfly::test::check_draw(x, spec.K, out[static_cast<std::size_t>(row)], ref, &why);
        ASSERT_NE(verdict, bfly::test::DrawCheck::wrong) << "row " << row << ": " << why;
        if (verdict == bfly::test::DrawCheck::boundary) ++boundary;
      }
      EXPECT_EQ(static_cast<long long>(invalid[0]), expected_invalid) << "invalid-row count reported by the kernel";
      EXPECT_EQ(static_cast<long long>(invalid[1]), first_invalid < 0 ? -1ll : first_invalid)
          << "first invalid row reported by the kernel";
      EXPECT_GE(expected_invalid, 4) << "the planted invalid rows must be invalid";
      // Boundary cases need u' within rounding distance of a category boundary: rare, never a pattern.
      EXPECT_LE(boundary, 2) << "too many draws differ from the reference";
      counts.draws += kRows;
      counts.boundary += boundary;
      counts.invalid += expected_invalid;
    }
  }
}

struct Group {
  int W;
  ElementType type;
  Variant variant;
};

std::string group_name(const testing::TestParamInfo<Group>& info) {
  return fmt::format("W{}_{}_{}", info.param.W, bfly::gen::name_of(info.param.type),
                     bfly::gen::name_of(info.param.variant));
}

class DrawForDraw : public testing::TestWithParam<Group> {};

TEST_P(DrawForDraw, EveryDrawMatchesTheReferenceExceptBoundaryCases) {
  const Group g = GetParam();
  Counts counts;
  int kernels = 0;
  for (const CpuKernel& kernel : bfly::test::cpu_kernels()) {
    if (kernel.spec.W != g.W || kernel.spec.type != g.type || kernel.spec.variant != g.variant) continue;
    ++kernels;
    bfly::gen::visit_element_type(g.type, [&](auto tag) { check_kernel<typename decltype(tag)::type>(kernel, counts); });
    if (HasFatalFailure()) return;
  }
  int expected = 0;
  for (const KernelSpec& spec : bfly::gen::draw_test_specs())
    expected += spec.W == g.W && spec.type == g.type && spec.variant == g.variant;
  EXPECT_EQ(kernels, expected) << "every K and R of the catalog must be tested";
  EXPECT_GE(kernels, bfly::gen::is_narrow(g.type) ? 10 : 20);  // f16 and bf16 keep to a smaller set
  std::printf("W=%d %s %s: %d kernels, %lld draws, %lld invalid rows, %lld boundary cases\n", g.W,
              std::string(bfly::gen::name_of(g.type)).c_str(), std::string(bfly::gen::name_of(g.variant)).c_str(),
              kernels, counts.draws, counts.invalid, counts.boundary);
}

// Every (W, type, variant) of the draw-test catalog: every element type of the table (f16 and bf16 without W = 4).
std::vector<Group> all_groups() {
  std::vector<Group> groups;
  for (int W : {4, 8, 16, 32})
    for (const bfly::gen::ElementTypeInfo& element : bfly::gen::kElementTypes)
      for (Variant variant : {Variant::swap, Variant::addsub}) {
        const Group group{W, element.type, variant};
        for (const KernelSpec& spec : bfly::gen::draw_test_specs())
          if (spec.W == W && spec.type == element.type && spec.variant == variant) {
            groups.push_back(group);
            break;
          }
      }
  return groups;
}

INSTANTIATE_TEST_SUITE_P(Catalog, DrawForDraw, testing::ValuesIn(all_groups()), group_name);

}  // namespace
