// KernelSpec: validation messages, derived facts, and kernel names (make, parse, round trip); LdaBaselineSpec names.
#include "bfly/emit/generate.hpp"
#include "bfly/error.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/spec_catalog.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using namespace bfly::gen;

// A spec of the row kernels' tests at W = 16, validated.
KernelSpec w16_spec(int K, ElementType type, Operation operation = Operation::sample, int R = 8) {
  KernelSpec s;
  s.K = K;
  s.W = 16;
  s.R = R;
  s.type = type;
  s.operation = operation;
  s.validate();
  return s;
}

std::string validation_message(const KernelSpec& spec) {
  try {
    spec.validate();
  } catch (const bfly::Error& e) {
    return e.what();
  }
  return "";
}

TEST(KernelSpec, RejectsBadFieldsNamingFieldValueAndAllowed) {
  KernelSpec s;
  s.W = 12;
  EXPECT_NE(validation_message(s).find("W = 12"), std::string::npos);
  EXPECT_NE(validation_message(s).find("4, 8, 16 or 32"), std::string::npos);
  s = KernelSpec{};
  s.K = 0;
  EXPECT_NE(validation_message(s).find("K = 0"), std::string::npos);
  EXPECT_NE(validation_message(s).find("[1, 1048576]"), std::string::npos);
  s = KernelSpec{};
  s.K = KernelSpec::kMaxK + 1;
  EXPECT_NE(validation_message(s).find("K = 1048577"), std::string::npos);
  s = KernelSpec{};
  s.W = 8;
  s.R = 8;
  EXPECT_NE(validation_message(s).find("R = 8"), std::string::npos);
  EXPECT_NE(validation_message(s).find("[0, 7]"), std::string::npos);
  s.R = -1;
  EXPECT_NE(validation_message(s).find("R = -1"), std::string::npos);
  EXPECT_EQ(validation_message(KernelSpec{}), "");
  EXPECT_EQ(validation_message(KernelSpec{4, 65536, 0, ElementType::f64, Variant::swap, Operation::sample}), "");
}

TEST(KernelSpec, ParsesTypeAndVariantOrListsAllowed) {
  EXPECT_EQ(parse_element_type("f64"), ElementType::f64);
  EXPECT_EQ(parse_element_type("bf16"), ElementType::bf16);
  EXPECT_EQ(parse_variant("swap"), Variant::swap);
  try {
    parse_element_type("f8");
    FAIL() << "f8 accepted";
  } catch (const bfly::Error& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: f32, f64, f16, bf16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_variant("xor"), bfly::Error);
}

TEST(KernelSpec, RemnantPolicyFollowsTheThreshold) {
  KernelSpec s{32, 71, 8, ElementType::f32, Variant::addsub, Operation::sample};  // 71 mod 32 = 7 <= 8
  EXPECT_TRUE(s.linear_remnant());
  EXPECT_EQ(s.blocks(), 2);
  EXPECT_EQ(s.first_block_column(), 7);
  s.K = 75;  // remnant 11 > 8: padded into block 0, which starts 21 columns left of column 0
  EXPECT_TRUE(s.padded());
  EXPECT_EQ(s.blocks(), 3);
  EXPECT_EQ(s.first_block_column(), -21);
  s.K = 64;
  EXPECT_FALSE(s.padded());
  EXPECT_FALSE(s.linear_remnant());
  EXPECT_EQ(s.blocks(), 2);
  s = KernelSpec{16, 3, 8, ElementType::f32, Variant::swap, Operation::sample};  // K < W, searched linearly
  EXPECT_EQ(s.blocks(), 0);
  EXPECT_EQ(s.log2_w(), 4);
}

TEST(KernelSpec, NamesRoundTripForTheWholeCatalog) {
  EXPECT_EQ(kernel_name(example_spec()), "bfly_sample_f32_w32_k1024_r8_addsub");
  for (const KernelSpec& spec : draw_test_specs()) EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  for (const KernelSpec& spec : sample_draws_test_specs()) EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  for (const KernelSpec& spec : split_test_specs()) EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  for (const KernelSpec& spec : pairs_test_specs()) EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  EXPECT_EQ(parse_kernel_name("bfly_sample_split_pairs_bf16_w32_k50257_r0_addsub").operation,
            Operation::sample_split_pairs);
}

// The input kind and draws of a sample kernel: named by its family, described, and validated.
TEST(KernelSpec, SampleFormsNameTheirFamily) {
  KernelSpec spec{16, 1000, 8, ElementType::f16, Variant::addsub, Operation::sample};
  spec.input = InputKind::logits;
  spec.draws = Draws::without_replacement;
  EXPECT_EQ(kernel_name(spec), "bfly_sample_logits_distinct_f16_w16_k1000_r8_addsub");
  EXPECT_EQ(parse_kernel_name("bfly_sample_logits_distinct_f16_w16_k1000_r8_addsub"), spec);
  EXPECT_EQ(describe(spec),
            "W=16 K=1000 R=8 type=f16 variant=addsub operation=sample input=logits draws=without_replacement");
  EXPECT_EQ(describe(KernelSpec{}), "W=32 K=1024 R=8 type=f32 variant=addsub operation=sample");
  spec.type = ElementType::f64;
  EXPECT_THROW(spec.validate(), bfly::Error);  // logits are f32, f16 or bf16
  KernelSpec lda{16, 100, 8, ElementType::f32, Variant::addsub, Operation::lda_z};
  lda.draws = Draws::with_replacement;
  EXPECT_THROW(lda.validate(), bfly::Error);
  EXPECT_EQ(parse_input_kind("logits"), InputKind::logits);
  EXPECT_EQ(parse_draws("with_replacement"), Draws::with_replacement);
  EXPECT_THROW(parse_draws("twice"), bfly::Error);
  EXPECT_THROW(parse_kernel_name("bfly_sample_logits_f64_w16_k100_r8_addsub"), bfly::Error);
}

TEST(KernelSpec, ParseKernelNameRejectsWhatIsNotAName) {
  for (const char* bad : {"bfly_sample_f32_w32_k1024_r8", "bfly_sample_f32_w33_k1024_r8_addsub",
                          "bfly_sample_f32_w32_k01024_r8_addsub", "cub_sample_f32_w32_k1024_r8_addsub",
                          "bfly_sample_f32_w32_kx_r8_addsub", "bfly_sample_f32_w32_k1024_r8_swap_x"}) {
    EXPECT_THROW(parse_kernel_name(bad), bfly::Error) << bad;
  }
}

TEST(KernelSpec, CatalogIsValidAndDuplicateFree) {
  const auto specs = draw_test_specs();
  EXPECT_GT(specs.size(), 300u);
  for (std::size_t i = 0; i < specs.size(); ++i)
    for (std::size_t j = i + 1; j < specs.size(); ++j) ASSERT_FALSE(specs[i] == specs[j]) << kernel_name(specs[i]);
  EXPECT_EQ(remnant_thresholds_for(4), (std::vector<int>{0, 3}));
  EXPECT_EQ(remnant_thresholds_for(32), (std::vector<int>{0, 8, 31}));
}

// Pass 1 of the plain sample kernel loads a short row whole (at most four blocks and 256 bytes) and asks for an
// occupancy; longer rows, f64 rows of more than two blocks, the forms and the LDA z-steps keep two blocks in flight
// and no hint.
TEST(KernelSpec, ShortRowsAreLoadedWholeWithAnOccupancyHint) {
  EXPECT_EQ(launch_geometry(w16_spec(64, ElementType::f32)).blocks_in_flight, 4);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(64, ElementType::f32)), 6);
  EXPECT_EQ(launch_geometry(w16_spec(71, ElementType::bf16)).blocks_in_flight, 4);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(48, ElementType::f16)), 6);
  EXPECT_EQ(launch_geometry(w16_spec(48, ElementType::f16)).blocks_in_flight, 3);
  EXPECT_EQ(launch_geometry(w16_spec(32, ElementType::f64)).blocks_in_flight, 2);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(16, ElementType::f64)), 4);
  // Over 256 bytes or over four blocks: the general rule.
  EXPECT_EQ(launch_geometry(w16_spec(64, ElementType::f64)).blocks_in_flight, 2);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(64, ElementType::f64)), 0);
  EXPECT_EQ(launch_geometry(w16_spec(128, ElementType::f32)).blocks_in_flight, 2);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(128, ElementType::f32)), 0);
  EXPECT_EQ(launch_geometry(w16_spec(1024, ElementType::f32)).blocks_in_flight, 4);  // two lines a step: deep ring
  EXPECT_EQ(min_ctas_per_sm(w16_spec(1024, ElementType::f32)), 0);
  // Longer rows of 16-bit weights: 7 CTAs per SM.
  EXPECT_EQ(min_ctas_per_sm(w16_spec(1024, ElementType::bf16)), 7);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(256, ElementType::f16)), 7);
  EXPECT_EQ(launch_geometry(w16_spec(1024, ElementType::bf16)).blocks_in_flight, 2);
  // 16-bit pairs through the row slots: 6 CTAs of 128 threads, here 12 of 64 (their warps' copies need it).
  EXPECT_EQ(launch_geometry(w16_spec(200, ElementType::bf16, Operation::sample_pairs)).threads_per_cta, 64);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(200, ElementType::bf16, Operation::sample_pairs)), 12);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(199, ElementType::f16, Operation::sample_pairs)), 12);
  // Staged: none, but 16-bit pairs in CTAs of 64 threads (the ring of 4 lines) 6; one-warp CTAs of a copy none.
  EXPECT_EQ(min_ctas_per_sm(w16_spec(512, ElementType::bf16, Operation::sample_pairs)), 0);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(256, ElementType::bf16, Operation::sample_pairs)), 6);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(258, ElementType::f16, Operation::sample_pairs)), 6);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(2048, ElementType::bf16, Operation::sample_pairs)), 0);  // one-warp CTAs
  EXPECT_EQ(min_ctas_per_sm(w16_spec(258, ElementType::f32)), 0);
  // Not the plain sample kernel.
  EXPECT_EQ(min_ctas_per_sm(w16_spec(64, ElementType::f32, Operation::lda_z_doc)), 0);
  EXPECT_EQ(launch_geometry(w16_spec(64, ElementType::f32, Operation::lda_z_doc)).blocks_in_flight, 2);
  KernelSpec draws = w16_spec(64, ElementType::f32);
  draws.draws = Draws::with_replacement;
  EXPECT_EQ(min_ctas_per_sm(draws), 0);
  // Logits, one draw or several with replacement: 6 CTAs per SM; without replacement none (it would spill).
  KernelSpec logits = w16_spec(1024, ElementType::bf16);
  logits.input = InputKind::logits;
  EXPECT_EQ(min_ctas_per_sm(logits), 6);
  logits.draws = Draws::with_replacement;
  EXPECT_EQ(min_ctas_per_sm(logits), 6);
  logits.draws = Draws::without_replacement;
  EXPECT_EQ(min_ctas_per_sm(logits), 0);
  EXPECT_EQ(launch_geometry(draws).blocks_in_flight, 2);
}

// sample_split of 8-byte weights with one draw is held to 128 registers (so many CTAs per SM that the register file
// allows no more); its forms and narrower types are not.
TEST(KernelSpec, OneDrawSplitOfEightByteWeightsIsHeldTo128Registers) {
  const auto split = [](int K, ElementType type) {
    KernelSpec s;
    s.K = K;
    s.W = 32;
    s.R = 0;
    s.type = type;
    s.variant = Variant::swap;
    s.operation = Operation::sample_split;
    s.validate();
    return s;
  };
  for (int K : {4097, 32000, 262144}) {
    const KernelSpec spec = split(K, ElementType::f64);
    const int threads = launch_geometry(spec).threads_per_cta;
    const int ctas = min_ctas_per_sm(spec);
    ASSERT_GT(ctas, 0) << "K = " << K;
    EXPECT_GE(65536 / (ctas * threads), 128) << "K = " << K;
    EXPECT_LT(65536 / ((ctas + 1) * threads), 128) << "K = " << K;
    EXPECT_NE(bfly::gen::generate(spec).text.find(fmt::format("__launch_bounds__({}, {})", threads, ctas)),
              std::string::npos);
  }
  EXPECT_EQ(min_ctas_per_sm(split(32000, ElementType::f32)), 0);
  KernelSpec distinct = split(32000, ElementType::f64);
  distinct.draws = Draws::without_replacement;
  distinct.validate();
  EXPECT_EQ(min_ctas_per_sm(distinct), 0);
}

// sample_split_pairs of odd K in CTAs of 256 threads is held to 3 CTAs per SM (80 registers); even K and smaller CTAs
// are not.
TEST(KernelSpec, OddSplitPairsInWholeCtasAreHeldToThreeCtasPerSm) {
  const auto pairs = [](int K) {
    KernelSpec s;
    s.K = K;
    s.W = 32;
    s.R = 0;
    s.type = ElementType::bf16;
    s.operation = Operation::sample_split_pairs;
    s.validate();
    return s;
  };
  for (int K : {50257, 131071, 262143}) {
    ASSERT_EQ(launch_geometry(pairs(K)).threads_per_cta, 256) << "K = " << K;
    EXPECT_EQ(min_ctas_per_sm(pairs(K)), 3) << "K = " << K;
    EXPECT_NE(bfly::gen::generate(pairs(K)).text.find("__launch_bounds__(256, 3)"), std::string::npos);
  }
  EXPECT_EQ(min_ctas_per_sm(pairs(50256)), 0);
  EXPECT_EQ(min_ctas_per_sm(pairs(16385)), 0) << "5 warps a CTA: the cap spilled";
}

// LDA baseline names: every catalog spec round-trips; what is not a canonical baseline name is rejected; baseline
// names and KernelSpec names are never taken for one another.
TEST(LdaBaselineSpec, NamesRoundTripAndStayApartFromKernelSpecNames) {
  EXPECT_EQ(kernel_name(LdaBaselineSpec{LdaBaseline::alg1, 1024, ElementType::f32}), "bfly_lda_alg1_f32_k1024");
  EXPECT_EQ(kernel_name(LdaBaselineSpec{LdaBaseline::alg4, 71, ElementType::f64}), "bfly_lda_alg4_f64_k71");
  EXPECT_EQ(describe(LdaBaselineSpec{LdaBaseline::alg4, 71, ElementType::f64}), "baseline=alg4 K=71 type=f64");
  const std::vector<LdaBaselineSpec> specs = lda_baseline_test_specs();
  EXPECT_EQ(specs.size(), 24u);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string name = kernel_name(specs[i]);
    EXPECT_EQ(parse_lda_baseline_name(name), specs[i]) << name;
    EXPECT_THROW(parse_kernel_name(name), bfly::Error) << name;
    for (std::size_t j = i + 1; j < specs.size(); ++j) EXPECT_NE(name, kernel_name(specs[j]));
  }
  for (const KernelSpec& spec : lda_test_specs())
    EXPECT_THROW(parse_lda_baseline_name(kernel_name(spec)), bfly::Error) << kernel_name(spec);
  for (const char* bad : {"bfly_lda_alg2_f32_k1024", "bfly_lda_alg4_f16_k1024", "bfly_lda_alg4_f32_k0",
                          "bfly_lda_alg4_f32_k01024", "bfly_lda_alg4_f32_1024", "bfly_lda_alg4_f32_k", "bfly_lda_alg4_f32",
                          "bfly_lda_alg4_f32_k1024_x", "bfly_sample_alg4_f32_k1024", "bfly_lda_alg4_f32_k2000000"}) {
    EXPECT_THROW(parse_lda_baseline_name(bad), bfly::Error) << bad;
  }
  EXPECT_EQ(parse_lda_baseline("alg1"), LdaBaseline::alg1);
  try {
    parse_lda_baseline("alg7");
    FAIL() << "alg7 accepted";
  } catch (const bfly::Error& error) {
    EXPECT_NE(std::string(error.what()).find("alg1"), std::string::npos) << error.what();
  }
}

}  // namespace

// f16 and bf16 (storage types summed in f32): the host conversions are exact where the value is representable,
// round to nearest even otherwise, and the LDA kernels refuse them.
TEST(NarrowTypes, HostConversionsAndTheTableRows) {
  using bfly::gen::ElementType;
  EXPECT_EQ(bfly::gen::accumulator_of(ElementType::f16), ElementType::f32);
  EXPECT_EQ(bfly::gen::accumulator_of(ElementType::bf16), ElementType::f32);
  EXPECT_EQ(bfly::gen::size_of(ElementType::bf16), 2);
  EXPECT_TRUE(bfly::gen::is_narrow(ElementType::f16));
  EXPECT_FALSE(bfly::gen::is_narrow(ElementType::f64));
  for (const float x : {0.0f, 1.0f, 0.5f, 65504.0f, 5.9604644775390625e-8f, 6.103515625e-5f, 1.5f, 1024.0f})
    EXPECT_EQ(bfly::to_float(bfly::to_half(x)), x) << x;
  EXPECT_EQ(bfly::to_half(1.0f).bits, 0x3c00);
  EXPECT_EQ(bfly::to_half(65520.0f).bits, 0x7c00);                   // rounds to infinity
  EXPECT_EQ(bfly::to_half(1.0f + 1.0f / 2048).bits, 0x3c00);         // a tie goes to even
  EXPECT_EQ(bfly::to_half(1.0f + 3.0f / 2048).bits, 0x3c02);         // a tie goes to even
  EXPECT_EQ(bfly::to_half(-2.0f).bits, 0xc000);
  EXPECT_TRUE(std::isnan(bfly::to_float(bfly::to_half(std::nanf("")))));
  EXPECT_EQ(bfly::to_half(2.9802322387695312e-8f).bits, 0);          // half the smallest subnormal: to even, 0
  EXPECT_EQ(bfly::to_half(8.940696716308594e-8f).bits, 2);           // 1.5 units: to even, 2
  for (const float x : {0.0f, 1.0f, 3.0e38f, 1e-30f, 0.15625f})
    EXPECT_EQ(bfly::to_float(bfly::to_bf16(x)), bfly::to_float(bfly::bf16_bits{static_cast<unsigned short>(
                                                     (std::bit_cast<std::uint32_t>(x) + 0x7fffu +
                                                      ((std::bit_cast<std::uint32_t>(x) >> 16) & 1u)) >> 16)}));
  EXPECT_EQ(bfly::to_bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfly::to_bf16(1.0f + 1.0f / 256).bits, 0x3f80);          // a tie goes to even
  EXPECT_EQ(bfly::to_bf16(1.0f + 3.0f / 256).bits, 0x3f82);
  EXPECT_EQ(bfly::to_float(bfly::bf16_bits{0x7f80}), std::numeric_limits<float>::infinity());
  EXPECT_THROW((bfly::gen::KernelSpec{16, 100, 8, ElementType::bf16, bfly::gen::Variant::addsub,
                                      bfly::gen::Operation::lda_z})
                   .validate(),
               bfly::Error);
  EXPECT_NO_THROW((bfly::gen::KernelSpec{16, 100, 8, ElementType::f16, bfly::gen::Variant::addsub,
                                         bfly::gen::Operation::sample})
                      .validate());
}

// Staged pass 1 (docs/DESIGN.md section 14): the plain sample kernel over 4- or 8-byte columns from 9 blocks on (8 for
// pairs); a ring of 8 lines in one-warp CTAs for rows of at least 8 lines of blocks, else 4 lines in two-warp CTAs;
// everything else keeps the register loads. Rows that packed tightly would not start on 16 bytes, or whose block 0 is
// not on the first column of a 16-byte copy, are staged anywhere (memory's own 16 bytes a copy).
TEST(KernelSpec, StagedPassOneRule) {
  EXPECT_EQ(pass1_stages(w16_spec(1024, ElementType::f32)), 8);                // 32 lines of blocks: the deep ring
  EXPECT_EQ(pass1_stages(w16_spec(256, ElementType::f32)), 8);                 // 8 lines
  EXPECT_EQ(pass1_stages(w16_spec(248, ElementType::f32)), 4);                 // 7.75 lines
  EXPECT_EQ(pass1_stages(w16_spec(144, ElementType::f32)), 4);                 // 9 blocks
  EXPECT_EQ(pass1_stages(w16_spec(128, ElementType::f32)), 0);                 // 8 blocks
  EXPECT_EQ(pass1_stages(w16_spec(1000, ElementType::f32)), 8);                // remnant of 8 columns searched linearly
  EXPECT_EQ(pass1_stages(w16_spec(1000, ElementType::f32, Operation::sample, 7)), 8);             // ... or padded by 8
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(1000, ElementType::f32)));       // rows of 4000 bytes, block 0 at column 8
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(1000, ElementType::f32, Operation::sample, 7)));    // ... or at column -8
  EXPECT_EQ(pass1_stages(w16_spec(1001, ElementType::f32)), 8);                // padded by 7 columns ...
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(1001, ElementType::f32)));        // ... and rows of 4004 bytes: anywhere
  EXPECT_EQ(pass1_stages(w16_spec(1007, ElementType::f32, Operation::sample, 0)), 8);             // padded by 1 column
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(1007, ElementType::f32, Operation::sample, 0)));
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(1002, ElementType::f32)));        // rows of 4008 bytes
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(128, ElementType::f32)));        // not staged at all
  // Odd K stages shorter rows of single f32 (from 6 blocks) and f64 weights (from 5 whole blocks), anywhere.
  EXPECT_EQ(pass1_stages(w16_spec(127, ElementType::f32)), 4);                 // 8 blocks, a remnant of 15 padded
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(127, ElementType::f32)));
  EXPECT_FALSE(loads_row_by_slots(w16_spec(127, ElementType::f32)));
  EXPECT_EQ(pass1_stages(w16_spec(89, ElementType::f32)), 4);                  // 6 blocks, a remnant of 9 padded
  // Rows packed tightly off 16 bytes stage from 5 blocks (f32 and f64), where the warp's copy reads them.
  EXPECT_EQ(pass1_stages(w16_spec(87, ElementType::f32)), 4);                  // 5 blocks, a remnant of 7 searched
  EXPECT_FALSE(loads_row_by_slots(w16_spec(87, ElementType::f32)));
  EXPECT_EQ(pass1_stages(w16_spec(126, ElementType::f32)), 4);                 // even K off 16 bytes, 8 blocks
  EXPECT_EQ(pass1_stages(w16_spec(71, ElementType::f32)), 0);                  // 4 blocks: row slots
  EXPECT_TRUE(loads_row_by_slots(w16_spec(71, ElementType::f32)));
  EXPECT_EQ(pass1_stages(w16_spec(112, ElementType::f32)), 0);                 // rows on 16 bytes, 7 blocks
  EXPECT_EQ(pass1_stages(w16_spec(81, ElementType::f64)), 4);                  // 5 whole blocks
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(81, ElementType::f64)));
  EXPECT_EQ(pass1_stages(w16_spec(79, ElementType::f64)), 4);                  // 4 whole blocks and one padded
  EXPECT_EQ(pass1_stages(w16_spec(71, ElementType::f64)), 0);                  // 4 blocks and a remnant searched
  EXPECT_EQ(pass1_stages(w16_spec(127, ElementType::bf16, Operation::sample_pairs)), 0);  // pairs: from 8 blocks
  EXPECT_EQ(pass1_stages(w16_spec(1024, ElementType::f64)), 8);                // 8-byte columns, 2 a copy
  EXPECT_EQ(pass1_stages(w16_spec(200, ElementType::f64)), 8);                 // remnant of 8: 12 lines of blocks
  EXPECT_EQ(pass1_stages(w16_spec(111, ElementType::f64)), 4);                 // 7 lines (odd K, a remnant padded)
  EXPECT_EQ(pass1_stages(w16_spec(1001, ElementType::f64)), 8);                // padded by 7 columns (odd) ...
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(1001, ElementType::f64)));        // ... anywhere
  EXPECT_EQ(pass1_stages(w16_spec(1002, ElementType::f64, Operation::sample, 7)), 8);             // padded by 6
  // Single weights from K = 392 in rows not a multiple of a 32-byte sector: 8016 bytes (f64 K = 2 mod 4), whatever
  // the remnant; shorter rows keep the ring in row order.
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(1002, ElementType::f64, Operation::sample, 7)));
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(394, ElementType::f64)));         // rows of 3152 bytes
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(390, ElementType::f64)));        // 3120 bytes, but shorter
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(392, ElementType::f64)));        // 3136 bytes: on sectors
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(364, ElementType::f64)));        // 2912 bytes, block 0 at column -4
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(1004, ElementType::f32)));        // rows of 4016 bytes (K = 4 mod 8)
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(396, ElementType::f32)));         // 1584 bytes
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(388, ElementType::f32)));        // 1552 bytes, but shorter
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(2048, ElementType::f32)));
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(2000, ElementType::f32, Operation::sample, 0)));  // 8000 bytes
  EXPECT_EQ(pass1_stages(w16_spec(2008, ElementType::bf16, Operation::sample_pairs)), 8);
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(2008, ElementType::bf16, Operation::sample_pairs)));  // pairs keep it
  KernelSpec wide = w16_spec(1024, ElementType::f64);
  wide.W = 32;  // a block of W 8-byte columns is wider than a line
  EXPECT_EQ(pass1_stages(wide), 0);
  EXPECT_EQ(pass1_stages(w16_spec(1024, ElementType::bf16)), 0);               // 2-byte columns
  EXPECT_EQ(pass1_stages(w16_spec(256, ElementType::bf16, Operation::sample_pairs)), 4);  // 8 blocks of pairs
  EXPECT_EQ(pass1_stages(w16_spec(200, ElementType::bf16, Operation::sample_pairs)), 0);  // 6 blocks of pairs
  EXPECT_EQ(pass1_stages(w16_spec(2048, ElementType::bf16, Operation::sample_pairs)), 8);  // 1024 columns of pairs
  EXPECT_EQ(pass1_stages(w16_spec(2047, ElementType::bf16, Operation::sample_pairs)), 8);  // the same at odd K
  EXPECT_EQ(pass1_stages(w16_spec(2001, ElementType::bf16, Operation::sample_pairs)), 8);  // block 0 off a copy: odd K
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(2001, ElementType::bf16, Operation::sample_pairs)));
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(2047, ElementType::bf16, Operation::sample_pairs)));  // every odd K
  EXPECT_EQ(pass1_stages(w16_spec(2002, ElementType::bf16, Operation::sample_pairs)), 8);  // even K off a copy too
  EXPECT_TRUE(stages_rows_anywhere(w16_spec(2002, ElementType::bf16, Operation::sample_pairs)));
  EXPECT_FALSE(stages_rows_anywhere(w16_spec(2048, ElementType::bf16, Operation::sample_pairs)));
  EXPECT_EQ(pass1_stages(w16_spec(1024, ElementType::f32, Operation::lda_z_doc)), 0);
  KernelSpec logits = w16_spec(1024, ElementType::f32);
  logits.input = InputKind::logits;
  logits.draws = Draws::with_replacement;
  EXPECT_EQ(pass1_stages(logits), 0);
  // A staged kernel in the deep ring: one-warp CTAs, 64 running totals at most, a step of two 128-byte lines of each
  // row.
  const LaunchGeometry g = launch_geometry(w16_spec(2048, ElementType::f32));
  EXPECT_EQ(g.threads_per_cta, 32);
  EXPECT_EQ(g.chunks, 64);
  EXPECT_EQ(g.chunk_blocks, 2);
  EXPECT_EQ(g.blocks_in_flight, 4);
  EXPECT_EQ(g.static_shared_bytes, 8 * 32 * 128 + 64 * 32 * 4);
  EXPECT_EQ(min_ctas_per_sm(w16_spec(2048, ElementType::f32)), 0);
  // In the shallow ring (blocks of less than 1 KiB a row): two-warp CTAs (W = 8, whose rows no warp copies); f64 from
  // 1 KiB in the deep ring, one block a line and two lines a step (rows too long for a warp's copy).
  KernelSpec w8 = w16_spec(200, ElementType::f32, Operation::sample, 7);
  w8.W = 8;
  const LaunchGeometry shallow = launch_geometry(w8);
  EXPECT_EQ(pass1_stages(w8), 4);
  EXPECT_EQ(shallow.threads_per_cta, 64);
  EXPECT_EQ(shallow.static_shared_bytes, 4 * 64 * 128 + 25 * 64 * 4);
  const LaunchGeometry f64 = launch_geometry(w16_spec(200, ElementType::f64));
  EXPECT_EQ(pass1_stages(w16_spec(200, ElementType::f64)), 8);
  EXPECT_EQ(f64.threads_per_cta, 32);
  EXPECT_EQ(f64.blocks_in_flight, 2);
  EXPECT_EQ(f64.static_shared_bytes, 8 * 32 * 128 + 12 * 32 * 8);
}

// Pass 1's slots hold row s ^ (r & 3) (block_total's first two levels without selects), or row s for rows loaded whole
// at W = 16 that are not whole 128-byte lines: 16-bit pairs of 3-4 blocks, f32 of 2-3 blocks.
TEST(KernelSpec, SlotsInRowOrderRule) {
  EXPECT_EQ(permuted_slot_rows(w16_spec(100, ElementType::bf16, Operation::sample_pairs)), 1);   // 3 blocks, 200 bytes
  EXPECT_EQ(permuted_slot_rows(w16_spec(99, ElementType::f16, Operation::sample_pairs)), 1);     // odd K too
  EXPECT_EQ(permuted_slot_rows(w16_spec(140, ElementType::bf16, Operation::sample_pairs)), 1);   // 4 blocks
  EXPECT_EQ(permuted_slot_rows(w16_spec(128, ElementType::bf16, Operation::sample_pairs)), 4);   // whole lines
  EXPECT_EQ(permuted_slot_rows(w16_spec(64, ElementType::bf16, Operation::sample_pairs)), 4);    // 2 blocks
  EXPECT_EQ(permuted_slot_rows(w16_spec(200, ElementType::bf16, Operation::sample_pairs)), 4);   // not loaded whole
  EXPECT_EQ(permuted_slot_rows(w16_spec(33, ElementType::f32)), 1);                              // 2 blocks
  EXPECT_EQ(permuted_slot_rows(w16_spec(56, ElementType::f32)), 1);                              // 3 blocks
  EXPECT_EQ(permuted_slot_rows(w16_spec(32, ElementType::f32)), 4);                              // whole lines
  EXPECT_EQ(permuted_slot_rows(w16_spec(64, ElementType::f32)), 4);                              // 4 blocks
  EXPECT_EQ(permuted_slot_rows(w16_spec(100, ElementType::f32)), 4);                             // not loaded whole
  EXPECT_EQ(permuted_slot_rows(w16_spec(33, ElementType::f64)), 4);                              // 8-byte columns
  EXPECT_EQ(permuted_slot_rows(w16_spec(1024, ElementType::f32)), 4);                            // staged
  KernelSpec w8 = w16_spec(33, ElementType::f32);
  w8.W = 8;
  EXPECT_EQ(permuted_slot_rows(w8), 4);  // measured at W = 16 only
}

// The ring of rows staged anywhere (docs/DESIGN.md section 14): read in row order at W = 16 for rows that step an odd
// number of 4-byte columns (f32 odd K, 16-bit pairs of K = 2 mod 4) and f64 odd K from 1000; placed by the rows'
// phases for 4-byte columns, f64 keeping the swizzle g W.
TEST(KernelSpec, RingOfRowsStagedAnywhereRule) {
  const KernelSpec f32_odd = w16_spec(1001, ElementType::f32), f32_even = w16_spec(1002, ElementType::f32);
  const KernelSpec bf16_2 = w16_spec(810, ElementType::bf16, Operation::sample_pairs);
  const KernelSpec f16_2 = w16_spec(2046, ElementType::f16, Operation::sample_pairs);
  const KernelSpec bf16_0 = w16_spec(812, ElementType::bf16, Operation::sample_pairs);
  const KernelSpec bf16_odd = w16_spec(1001, ElementType::bf16, Operation::sample_pairs);
  const KernelSpec f64_odd = w16_spec(1001, ElementType::f64), f64_short = w16_spec(601, ElementType::f64);
  for (const KernelSpec* spec : {&f32_odd, &f32_even, &bf16_2, &f16_2, &bf16_0, &bf16_odd, &f64_odd, &f64_short})
    ASSERT_TRUE(stages_rows_anywhere(*spec)) << spec->K;
  EXPECT_TRUE(ring_in_row_order(f32_odd));
  EXPECT_FALSE(ring_in_row_order(f32_even));
  EXPECT_TRUE(ring_in_row_order(bf16_2));   // 405 columns a row
  EXPECT_TRUE(ring_in_row_order(f16_2));
  EXPECT_FALSE(ring_in_row_order(bf16_0));  // 406 columns
  EXPECT_FALSE(ring_in_row_order(bf16_odd));
  EXPECT_TRUE(ring_in_row_order(f64_odd));
  EXPECT_FALSE(ring_in_row_order(f64_short));
  EXPECT_EQ(permuted_slot_rows(bf16_2), 1);
  EXPECT_EQ(permuted_slot_rows(bf16_0), 4);
  for (const KernelSpec* spec : {&f32_odd, &f32_even, &bf16_2, &f16_2, &bf16_0, &bf16_odd})
    EXPECT_TRUE(swizzles_by_row_phase(*spec)) << spec->K;
  EXPECT_FALSE(swizzles_by_row_phase(f64_odd));
  EXPECT_FALSE(swizzles_by_row_phase(f64_short));
  EXPECT_FALSE(swizzles_by_row_phase(w16_spec(1024, ElementType::f32)));  // rows on 16 bytes: the ring of block 0
  KernelSpec w8 = bf16_2;
  w8.W = 8;
  EXPECT_FALSE(ring_in_row_order(w8));  // measured at W = 16 only
}

// A plain sample kernel with its warps' copies turned off (KernelSpec::warp_copies = false, the rule of fast memory):
// named with _nocopy and described so, never copies whatever its size, and only the plain kernels take it.
TEST(KernelSpec, WarpCopiesOffIsNamedAndNeverCopies) {
  KernelSpec spec = w16_spec(561, ElementType::bf16, Operation::sample_pairs);
  ASSERT_TRUE(copies_warp_rows(spec));
  const int copied_threads = launch_geometry(spec).threads_per_cta;
  spec.warp_copies = false;
  EXPECT_FALSE(copies_warp_rows(spec));
  EXPECT_GT(launch_geometry(spec).threads_per_cta, copied_threads);  // the ring's CTA, not the copies' one warp
  EXPECT_EQ(kernel_name(spec), "bfly_sample_pairs_bf16_w16_k561_r8_addsub_nocopy");
  EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  EXPECT_TRUE(parse_kernel_name("bfly_sample_pairs_bf16_w16_k561_r8_addsub").warp_copies);
  EXPECT_EQ(describe(spec), "W=16 K=561 R=8 type=bf16 variant=addsub operation=sample_pairs warp_copies=off");
  KernelSpec f32 = w16_spec(337, ElementType::f32);
  ASSERT_TRUE(copies_warp_rows(f32));
  f32.warp_copies = false;
  EXPECT_FALSE(copies_warp_rows(f32));
  EXPECT_NO_THROW(f32.validate());
  for (const char* bad :
       {"bfly_lda_z_f32_w16_k100_r8_addsub_nocopy", "bfly_sample_split_f32_w32_k5000_r0_addsub_nocopy",
        "bfly_sample_logits_f32_w16_k337_r8_addsub_nocopy", "bfly_sample_f32_w16_k337_r8_nocopy"})
    EXPECT_THROW(parse_kernel_name(bad), bfly::Error) << bad;
}

// A plain sample kernel whose ring stages rows on 16 bytes anywhere (KernelSpec::ring_anywhere = true, the rule of fast
// memory for rows off 32-byte sectors): named with _anywhere (after _nocopy) and described so, staged anywhere, and
// allowed only where the ring would read the rows of a tile at one place.
TEST(KernelSpec, RingAnywhereIsNamedAndStagesAnywhere) {
  KernelSpec spec = w16_spec(182, ElementType::f64);
  spec.variant = Variant::swap;
  ASSERT_GT(pass1_stages(spec), 0);
  ASSERT_FALSE(stages_rows_anywhere(spec));  // rows of 1456 bytes: on 16 bytes, read at one place
  spec.ring_anywhere = true;
  EXPECT_TRUE(stages_rows_anywhere(spec));
  EXPECT_EQ(kernel_name(spec), "bfly_sample_f64_w16_k182_r8_swap_anywhere");
  EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  EXPECT_FALSE(parse_kernel_name("bfly_sample_f64_w16_k182_r8_swap").ring_anywhere);
  EXPECT_EQ(describe(spec), "W=16 K=182 R=8 type=f64 variant=swap operation=sample ring=anywhere");
  KernelSpec both = w16_spec(340, ElementType::f32);
  both.warp_copies = false;
  both.ring_anywhere = true;
  EXPECT_EQ(kernel_name(both), "bfly_sample_f32_w16_k340_r8_addsub_nocopy_anywhere");
  EXPECT_EQ(parse_kernel_name(kernel_name(both)), both);
  KernelSpec pairs = w16_spec(1032, ElementType::bf16, Operation::sample_pairs);
  ASSERT_FALSE(stages_rows_anywhere(pairs));
  pairs.ring_anywhere = true;
  EXPECT_NO_THROW(pairs.validate());
  EXPECT_TRUE(stages_rows_anywhere(pairs));
  // Not where it would change nothing: rows staged anywhere already (odd K), rows not staged, the forms, the split
  // kernel; and the suffixes only in their order.
  for (KernelSpec bad : {w16_spec(181, ElementType::f64), w16_spec(128, ElementType::f32),
                         w16_spec(1001, ElementType::bf16, Operation::sample_pairs)}) {
    bad.ring_anywhere = true;
    EXPECT_THROW(bad.validate(), bfly::Error) << kernel_name(bad);
  }
  KernelSpec logits = w16_spec(182, ElementType::f32);
  logits.input = InputKind::logits;
  logits.draws = Draws::with_replacement;
  ASSERT_NO_THROW(logits.validate());
  logits.ring_anywhere = true;
  EXPECT_THROW(logits.validate(), bfly::Error);
  for (const char* bad :
       {"bfly_sample_split_f64_w32_k5000_r0_swap_anywhere", "bfly_sample_f64_w16_k181_r8_swap_anywhere",
        "bfly_sample_f32_w16_k340_r8_addsub_anywhere_nocopy", "bfly_sample_f64_w16_k182_r8_anywhere"})
    EXPECT_THROW(parse_kernel_name(bad), bfly::Error) << bad;
}

// A ring of rows staged anywhere at W = 16 read in row order (KernelSpec::ring_row_order = true, the rule of fast
// memory for f64 rows of odd K): named with _roworder (after _nocopy and _anywhere) and described so, its slots in
// row order, and allowed only where the ring would read a tile's rows into permuted slots.
TEST(KernelSpec, RingRowOrderIsNamedAndReadsInRowOrder) {
  KernelSpec spec = w16_spec(181, ElementType::f64);
  spec.variant = Variant::swap;
  ASSERT_TRUE(stages_rows_anywhere(spec));  // 1448-byte rows: off 16 bytes
  ASSERT_FALSE(ring_in_row_order(spec));    // f64 below K = 1000: permuted by the rule of every device
  EXPECT_EQ(permuted_slot_rows(spec), kPermutedSlotRows);
  EXPECT_TRUE(ring_reads_slots_permuted(spec));
  spec.ring_row_order = true;
  EXPECT_TRUE(ring_in_row_order(spec));
  EXPECT_EQ(permuted_slot_rows(spec), 1);
  EXPECT_TRUE(ring_reads_slots_permuted(spec)) << "asked of the spec without the switch";
  EXPECT_EQ(kernel_name(spec), "bfly_sample_f64_w16_k181_r8_swap_roworder");
  EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  EXPECT_FALSE(parse_kernel_name("bfly_sample_f64_w16_k181_r8_swap").ring_row_order);
  EXPECT_EQ(describe(spec), "W=16 K=181 R=8 type=f64 variant=swap operation=sample ring_slots=row_order");
  KernelSpec all = w16_spec(340, ElementType::f32);  // even f32 rows staged anywhere are permuted by the rule
  all.warp_copies = false;
  all.ring_anywhere = true;
  all.ring_row_order = true;
  EXPECT_NO_THROW(all.validate());
  EXPECT_EQ(kernel_name(all), "bfly_sample_f32_w16_k340_r8_addsub_nocopy_anywhere_roworder");
  EXPECT_EQ(parse_kernel_name(kernel_name(all)), all);
  // Not where it would change nothing: rows in row order by the rule (f32 odd K, f64 odd K from 1000, 16-bit pairs of
  // K = 2 mod 4), rows read at one place (f64 K = 182) or not staged, W = 32, the forms.
  for (KernelSpec bad : {w16_spec(181, ElementType::f32), w16_spec(1001, ElementType::f64),
                         w16_spec(182, ElementType::f64), w16_spec(128, ElementType::f32),
                         w16_spec(1002, ElementType::bf16, Operation::sample_pairs)}) {
    bad.ring_row_order = true;
    EXPECT_THROW(bad.validate(), bfly::Error) << kernel_name(bad);
  }
  KernelSpec w32{32, 181, 8, ElementType::f64, Variant::swap, Operation::sample};
  w32.ring_row_order = true;
  EXPECT_THROW(w32.validate(), bfly::Error);
  for (const char* bad :
       {"bfly_sample_f64_w16_k1001_r8_swap_roworder", "bfly_sample_f64_w16_k181_r8_swap_roworder_nocopy",
        "bfly_sample_f32_w16_k340_r8_addsub_nocopy_roworder_anywhere"})
    EXPECT_THROW(parse_kernel_name(bad), bfly::Error) << bad;
}

// The deep ring for rows over pairs at odd K of 8-15 lines of blocks (KernelSpec::ring_deep = true, a device's rule):
// one-warp CTAs with 8 lines a row, as every other staged row takes from 8 lines, where the rule keeps the shallow ring
// (4 lines a row, CTAs of two warps) until 16 lines.
TEST(KernelSpec, RingDeepIsNamedAndTakesTheDeepRing) {
  KernelSpec spec = w16_spec(721, ElementType::bf16, Operation::sample_pairs);  // 361 columns: 23 blocks, 1472 bytes
  spec.warp_copies = false;  // the rule's copy (rows up to 719 weights) does not reach K = 721 anyway
  ASSERT_EQ(pass1_stages(spec), 4);
  ASSERT_EQ(launch_geometry(spec).threads_per_cta, 64);
  EXPECT_TRUE(ring_deepens_odd_pairs(spec));
  spec.warp_copies = true;
  spec.ring_deep = true;
  EXPECT_NO_THROW(spec.validate());
  EXPECT_EQ(pass1_stages(spec), 8);
  EXPECT_EQ(launch_geometry(spec).threads_per_cta, 32);
  EXPECT_TRUE(ring_deepens_odd_pairs(spec)) << "asked of the spec without the switch";
  EXPECT_TRUE(stages_rows_anywhere(spec));
  EXPECT_EQ(kernel_name(spec), "bfly_sample_pairs_bf16_w16_k721_r8_addsub_deep");
  EXPECT_EQ(parse_kernel_name(kernel_name(spec)), spec);
  EXPECT_FALSE(parse_kernel_name("bfly_sample_pairs_bf16_w16_k721_r8_addsub").ring_deep);
  EXPECT_EQ(describe(spec), "W=16 K=721 R=8 type=bf16 variant=addsub operation=sample_pairs ring=deep");
  KernelSpec f16 = w16_spec(1001, ElementType::f16, Operation::sample_pairs);  // 501 columns, 31 blocks: 1984 bytes
  f16.ring_deep = true;
  EXPECT_NO_THROW(f16.validate());
  EXPECT_EQ(launch_geometry(f16).threads_per_cta, 32);
  // Not where it would change nothing or where the copy takes the rows: even K (the deep ring from 8 lines already),
  // 16 lines of blocks or more (K = 1017: 32 blocks, its remnant padded), fewer than 8 (K = 481: 15 blocks), the
  // warps' copy (K = 709), single weights, the split kernel over pairs.
  KernelSpec short_rows = w16_spec(481, ElementType::bf16, Operation::sample_pairs);
  short_rows.warp_copies = false;
  ASSERT_EQ(pass1_stages(short_rows), 4);
  for (KernelSpec bad : {w16_spec(722, ElementType::bf16, Operation::sample_pairs),
                         w16_spec(1017, ElementType::bf16, Operation::sample_pairs), short_rows,
                         w16_spec(709, ElementType::bf16, Operation::sample_pairs), w16_spec(721, ElementType::f32)}) {
    bad.ring_deep = true;
    EXPECT_THROW(bad.validate(), bfly::Error) << kernel_name(bad);
  }
  KernelSpec split{32, 721, 0, ElementType::bf16, Variant::addsub, Operation::sample_split_pairs};
  split.ring_deep = true;
  EXPECT_THROW(split.validate(), bfly::Error);
  EXPECT_THROW(parse_kernel_name("bfly_sample_pairs_bf16_w16_k1017_r8_addsub_deep"), bfly::Error);
}

// A step of the deep ring reads two lines of each row (but rows over pairs of fewer than 16 lines), one of the shallow
// ring one (docs/DESIGN.md section 14, "Steps of two lines in the deep ring"): the blocks a step builds, and what the
// generated kernel waits for and refills.
TEST(KernelSpec, DeepRingStepsTwoLinesShallowRingOne) {
  struct Case {
    KernelSpec spec;
    int stages, lines_per_step, blocks_in_flight, lines;
  };
  KernelSpec shallow = w16_spec(200, ElementType::f32);  // 12 blocks of f32, 6 lines: the shallow ring
  shallow.warp_copies = false;
  const Case cases[] = {
      {w16_spec(2048, ElementType::f32), 8, 2, 4, 65},                          // 2 blocks a line
      {w16_spec(2117, ElementType::f32), 8, 2, 4, 67},                          // 132 blocks, rows off their lines
      {w16_spec(1000, ElementType::f64), 8, 2, 2, 63},                          // 62 blocks, 1 a line
      {w16_spec(4096, ElementType::bf16, Operation::sample_pairs), 8, 2, 4, 65},  // 2048 pairs
      {w16_spec(1000, ElementType::bf16, Operation::sample_pairs), 8, 1, 2, 17},  // pairs under 16 lines: one
      {shallow, 4, 1, 2, 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(kernel_name(c.spec));
    ASSERT_EQ(pass1_stages(c.spec), c.stages);
    EXPECT_EQ(pass1_lines_per_step(c.spec), c.lines_per_step);
    EXPECT_EQ(launch_geometry(c.spec).blocks_in_flight, c.blocks_in_flight);
    const std::string text = bfly::gen::generate(c.spec).text;
    EXPECT_NE(text.find(fmt::format("constexpr int LINES_PER_STEP = {};", c.lines_per_step)), std::string::npos);
    EXPECT_NE(text.find(fmt::format("constexpr int LINES = {};", c.lines)), std::string::npos);
    EXPECT_NE(text.find("bfly::wait_copies<STAGES - LINES_PER_STEP - 1>();"), std::string::npos);
  }
  // A kernel that loads into registers only has no steps of lines.
  KernelSpec registers = w16_spec(100, ElementType::f32);
  registers.warp_copies = false;
  ASSERT_EQ(pass1_stages(registers), 0);
  EXPECT_EQ(pass1_lines_per_step(registers), 0);
}

// The deep ring waits for the line past a step's own whatever the rows; only the shallow ring of rows read at one
// place tests at run time whether every row starts on a line and then waits for its own lines alone (docs/DESIGN.md
// section 14, "One wait in the deep ring").
TEST(KernelSpec, OnlyTheShallowRingWaitsLessForRowsOnTheirLines) {
  KernelSpec shallow = w16_spec(200, ElementType::f32);  // 800-byte rows on 16 bytes: the shallow ring, one place
  shallow.warp_copies = false;
  KernelSpec shallow_anywhere = w16_spec(201, ElementType::f32);  // rows off 16 bytes: staged anywhere
  shallow_anywhere.warp_copies = false;
  const struct {
    KernelSpec spec;
    int stages;
    bool waits_less;
  } cases[] = {
      {shallow, 4, true},
      {shallow_anywhere, 4, false},
      {w16_spec(2048, ElementType::f32), 8, false},  // rows that may lie on their lines, in the deep ring
      {w16_spec(2128, ElementType::f32), 8, false},
      {w16_spec(1024, ElementType::f64), 8, false},
      {w16_spec(4096, ElementType::bf16, Operation::sample_pairs), 8, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(kernel_name(c.spec));
    ASSERT_EQ(pass1_stages(c.spec), c.stages);
    EXPECT_EQ(pass1_waits_less_on_lines(c.spec), c.waits_less);
    const std::string text = bfly::gen::generate(c.spec).text;
    EXPECT_EQ(text.find("if (on_lines) bfly::wait_copies<STAGES - LINES_PER_STEP>();") != std::string::npos,
              c.waits_less);
    EXPECT_EQ(text.find("on_lines") != std::string::npos, c.waits_less);
    EXPECT_NE(text.find("bfly::wait_copies<STAGES - LINES_PER_STEP - 1>();"), std::string::npos);
  }
  KernelSpec registers = w16_spec(100, ElementType::f32);
  registers.warp_copies = false;
  EXPECT_FALSE(pass1_waits_less_on_lines(registers));  // no ring
}

// Rows packed tightly and copied whole, one bulk copy per warp (docs/DESIGN.md section 14, "Short rows in one copy"):
// the plain sample kernel at W = 16, one weight (f32, f64) or one 16-bit pair a column, rows of at least 3 blocks (2
// over pairs), staged or not, f64 rows of whole 128-byte lines excepted, whose warps' copies are at most 45 KiB; the
// CTA is the largest, up to the kernel's own, whose copies fit the static shared memory beside the running totals. A
// staged kernel's copies and ring share pass 1's lines.
TEST(KernelSpec, WarpRowsCopyRule) {
  EXPECT_TRUE(copies_warp_rows(w16_spec(127, ElementType::f32)));   // 8 blocks, 508 bytes a row: within the ring
  EXPECT_TRUE(copies_warp_rows(w16_spec(48, ElementType::f32)));    // 3 blocks, loaded whole into registers otherwise
  EXPECT_FALSE(copies_warp_rows(w16_spec(40, ElementType::f32)));   // 2 blocks
  EXPECT_TRUE(copies_warp_rows(w16_spec(128, ElementType::f32)));   // rows on 16 bytes too
  EXPECT_TRUE(copies_warp_rows(w16_spec(350, ElementType::f32)));   // 43.8 KiB a warp
  EXPECT_FALSE(copies_warp_rows(w16_spec(360, ElementType::f32)));  // 45.0 KiB and a granule a warp
  EXPECT_TRUE(copies_warp_rows(w16_spec(63, ElementType::f64)));    // 4 blocks of 8-byte weights, one padded
  EXPECT_FALSE(copies_warp_rows(w16_spec(64, ElementType::f64)));   // rows of whole lines
  EXPECT_FALSE(copies_warp_rows(w16_spec(128, ElementType::f64)));
  EXPECT_TRUE(copies_warp_rows(w16_spec(175, ElementType::f64)));   // 43.8 KiB a warp
  EXPECT_TRUE(copies_warp_rows(w16_spec(63, ElementType::bf16, Operation::sample_pairs)));   // 2 blocks of pairs
  EXPECT_TRUE(copies_warp_rows(w16_spec(255, ElementType::f16, Operation::sample_pairs)));   // odd K, staged
  EXPECT_TRUE(copies_warp_rows(w16_spec(700, ElementType::bf16, Operation::sample_pairs)));  // 43.8 KiB a warp
  EXPECT_FALSE(copies_warp_rows(w16_spec(720, ElementType::bf16, Operation::sample_pairs)));
  EXPECT_FALSE(copies_warp_rows(w16_spec(255, ElementType::bf16)));  // single 16-bit weights
  EXPECT_FALSE(copies_warp_rows(w16_spec(128, ElementType::f32, Operation::sample_pairs)));  // pairs of f32
  EXPECT_EQ(warp_copy_words(w16_spec(127, ElementType::f32)), 32 * 127 + 8);  // 4064 words and two granules' slack
  // The CTA: the ring's two warps while their copies fit beside the ring (f32 K = 127) or in its place (K = 129),
  // one warp past that (K = 255); 128 threads for rows loaded into registers (K = 48), fewer where the copies need
  // it (f64 K = 120: 30 KiB a warp).
  EXPECT_EQ(pass1_lines_bytes(w16_spec(127, ElementType::f32)), 4 * 64 * 128);  // the ring's 32 KiB hold the copies
  EXPECT_EQ(pass1_lines_bytes(w16_spec(129, ElementType::f32)), 2 * (32 * 129 + 8) * 4);  // the copies are larger
  EXPECT_EQ(launch_geometry(w16_spec(129, ElementType::f32)).threads_per_cta, 64);
  EXPECT_EQ(launch_geometry(w16_spec(255, ElementType::f32)).threads_per_cta, 32);
  EXPECT_EQ(launch_geometry(w16_spec(48, ElementType::f32)).threads_per_cta, 128);
  EXPECT_EQ(pass1_lines_bytes(w16_spec(48, ElementType::f32)), 4 * (32 * 48 + 8) * 4);
  const LaunchGeometry f64 = launch_geometry(w16_spec(120, ElementType::f64));
  EXPECT_EQ(f64.threads_per_cta, 32);
  EXPECT_EQ(f64.static_shared_bytes, f64.chunks * 32 * 8 + (32 * 120 + 2) * 8 + 8);  // totals, the copy, an mbarrier
  KernelSpec w8 = w16_spec(127, ElementType::f32);
  w8.W = 8;
  EXPECT_FALSE(copies_warp_rows(w8));
}

// Pass 2 keeps the tile of the chosen blocks as loaded (docs/DESIGN.md section 13): 16-bit pairs, staged (in the ring,
// no more shared memory) or loaded into registers by row slots (3 blocks or more, tiles of their own); odd K over
// pairs where they are staged and do not copy their warps' rows. Not rows of pairs loaded whole, odd K over pairs that
// copy their warps' rows or load into registers, f32 or f64, or the other forms.
TEST(KernelSpec, ChosenTileStashRule) {
  EXPECT_TRUE(stashes_chosen_tile(w16_spec(1024, ElementType::bf16, Operation::sample_pairs)));   // staged
  EXPECT_TRUE(stashes_chosen_tile(w16_spec(1002, ElementType::f16, Operation::sample_pairs)));    // staged anywhere
  EXPECT_TRUE(stashes_chosen_tile(w16_spec(200, ElementType::bf16, Operation::sample_pairs)));    // 6 blocks, row slots
  EXPECT_TRUE(stashes_chosen_tile(w16_spec(150, ElementType::f16, Operation::sample_pairs)));     // 4 blocks, row slots
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(128, ElementType::bf16, Operation::sample_pairs)));   // 4 blocks, whole row
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(100, ElementType::bf16, Operation::sample_pairs)));   // 3 blocks, whole row
  EXPECT_TRUE(stashes_chosen_tile(w16_spec(2047, ElementType::bf16, Operation::sample_pairs)));   // odd K, staged
  EXPECT_TRUE(stashes_chosen_tile(w16_spec(1001, ElementType::f16, Operation::sample_pairs)));    // odd K, staged
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(301, ElementType::bf16, Operation::sample_pairs)));   // odd K, copied
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(143, ElementType::bf16, Operation::sample_pairs)));   // odd K, registers
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(1024, ElementType::f32)));                           // staged f32
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(1001, ElementType::f64)));
  EXPECT_FALSE(stashes_chosen_tile(w16_spec(1024, ElementType::bf16)));                          // single 16-bit weights
  KernelSpec split = w16_spec(32000, ElementType::bf16, Operation::sample_pairs);
  split.operation = Operation::sample_split_pairs;
  split.W = 32;
  EXPECT_FALSE(stashes_chosen_tile(split));
  KernelSpec logits = w16_spec(1024, ElementType::bf16);
  logits.input = InputKind::logits;
  logits.draws = Draws::with_replacement;
  EXPECT_FALSE(stashes_chosen_tile(logits));
  // Tiles of their own beside the running totals (W x (W + 1) pairs a group, here 4 groups in CTAs of 64 threads,
  // beside the warps' copies and their mbarriers); a staged kernel's ring holds them without more shared memory.
  const KernelSpec pairs = w16_spec(200, ElementType::bf16, Operation::sample_pairs);
  const LaunchGeometry g = launch_geometry(pairs);
  EXPECT_EQ(g.static_shared_bytes, g.chunks * 64 * 4 + 2 * warp_copy_words(pairs) * 2 + 2 * 8 + 4 * 16 * 17 * 4);
  EXPECT_EQ(launch_geometry(w16_spec(4096, ElementType::bf16, Operation::sample_pairs)).static_shared_bytes,
            8 * 32 * 128 + 64 * 32 * 4);
}

// Pass 2 loads the chosen chunk's blocks together and keeps them when the chunk has 2 or more blocks that fit in
// kPass2ChunkWords accumulators a lane: f32 W = 16 up to 4 blocks a chunk (K <= 4096 and its remnant), f64 up to 2.
TEST(KernelSpec, PassTwoKeepsTheChunkRule) {
  EXPECT_FALSE(pass2_keeps_chunk(w16_spec(1024, ElementType::f32)));  // one block a chunk
  EXPECT_TRUE(pass2_keeps_chunk(w16_spec(1500, ElementType::f32)));   // 2 blocks a chunk
  EXPECT_TRUE(pass2_keeps_chunk(w16_spec(4096, ElementType::f32)));   // 4 blocks of 16 floats: 64 words
  EXPECT_TRUE(pass2_keeps_chunk(w16_spec(4097, ElementType::f32)));   // the remnant searched linearly
  EXPECT_FALSE(pass2_keeps_chunk(w16_spec(5000, ElementType::f32)));  // 5 blocks
  EXPECT_TRUE(pass2_keeps_chunk(w16_spec(2048, ElementType::f64)));   // 2 blocks of 16 doubles: 64 words
  EXPECT_FALSE(pass2_keeps_chunk(w16_spec(3000, ElementType::f64)));
  EXPECT_TRUE(pass2_keeps_chunk(w16_spec(8192, ElementType::bf16, Operation::sample_pairs)));  // 4 blocks of pairs
  EXPECT_FALSE(pass2_keeps_chunk(w16_spec(12001, ElementType::bf16, Operation::sample_pairs)));
  // Single 16-bit weights under their register cap (7 CTAs of 128 threads, 73 registers) keep one block after another.
  EXPECT_FALSE(pass2_keeps_chunk(w16_spec(2048, ElementType::bf16)));
  KernelSpec lda = w16_spec(4096, ElementType::f32);
  lda.operation = Operation::lda_z_doc;
  EXPECT_FALSE(pass2_keeps_chunk(lda));
  KernelSpec logits = w16_spec(4096, ElementType::f32);
  logits.input = InputKind::logits;
  logits.draws = Draws::with_replacement;
  EXPECT_FALSE(pass2_keeps_chunk(logits));
  // The CPU draw tests run both ways of pass 2, and the kept chunk with and without a stashed tile (16-bit pairs).
  int kept = 0, one_by_one = 0, kept_stashed = 0;
  std::vector<KernelSpec> specs = draw_test_specs();
  for (const KernelSpec& spec : pairs_test_specs()) specs.push_back(spec);
  for (const KernelSpec& spec : specs) {
    if (launch_geometry(spec).chunk_blocks <= 1) continue;
    if (!pass2_keeps_chunk(spec)) ++one_by_one;
    else if (stashes_chosen_tile(spec)) ++kept_stashed;
    else ++kept;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(one_by_one, 0);
  EXPECT_GT(kept_stashed, 0);
}
