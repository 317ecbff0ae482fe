// Sampler on a machine without a GPU: the spec rule, argument validation before any driver call, the no-driver
// error, and gpu_available().
#include "bfly/ops/sampler.hpp"
#include "bfly/ops/lda_z_step.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <tuple>
#include <vector>

namespace bfly::rt {
namespace {

// The message of the bfly::Error `call` throws ("" when it throws none).
template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(Sampler, ChooseSpecRule) {
  const SamplerOptions none;
  SamplerOptions rows;
  rows.operation = gen::Operation::sample;
  EXPECT_EQ(gen::choose_sample_spec(1, gen::ElementType::f32, rows).W, 4);
  EXPECT_EQ(gen::choose_sample_spec(7, gen::ElementType::f32, rows).W, 4);
  EXPECT_EQ(gen::choose_sample_spec(8, gen::ElementType::f32, rows).W, 8);
  // Short rows: several per lane; K from 16 on: the row kernel; long rows: split over CTAs (K >= 16384, or
  // K >= 4096 with fewer rows than an H100 holds threads, K >= 8192 in f64), over pairs for 16-bit weights (any K);
  // but below K = 16384 16-bit weights keep the row kernel from 32768 rows on.
  for (int K : {1, 2, 7, 15}) {
    const gen::KernelSpec small = gen::choose_sample_spec(K, gen::ElementType::f64, none);
    EXPECT_EQ(small.operation, gen::Operation::sample_small) << K;
    EXPECT_EQ(small.R, 0);
  }
  EXPECT_EQ(gen::choose_sample_spec(16, gen::ElementType::f32, none).operation, gen::Operation::sample);
  // f32 weights split with few rows from K = 3600 on, and with fewer still from K = 3300 (the forms from K = 4096).
  EXPECT_EQ(gen::choose_sample_spec(3299, gen::ElementType::f32, none, 1).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(3300, gen::ElementType::f32, none, 1).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(3599, gen::ElementType::f32, none, gen::kFewRowsSplitBelowRows - 1).operation,
            gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(3599, gen::ElementType::f32, none, gen::kFewRowsSplitBelowRows).operation,
            gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(3300, gen::ElementType::f32, none, 65536).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(3600, gen::ElementType::f32, none, 65536).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(4095, gen::ElementType::f32, none, 1).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(4095, gen::ElementType::f32, none, 0).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(3300, gen::ElementType::f32, none, 131072).operation, gen::Operation::sample);
  EXPECT_FALSE(gen::rows_split_by_shape(3300, gen::ElementType::f32, 65536));
  EXPECT_EQ(gen::choose_sample_spec(4096, gen::ElementType::f32, none, 0).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(4096, gen::ElementType::f32, none, 65536).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(4096, gen::ElementType::bf16, none, 32767).operation,
            gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::choose_sample_spec(8192, gen::ElementType::bf16, none, 65536).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(16000, gen::ElementType::f16, none, 32768).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(16384, gen::ElementType::f16, none, 32768).operation,
            gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::choose_sample_spec(4097, gen::ElementType::bf16, none, 131056).operation,  // odd K as even K
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(4097, gen::ElementType::bf16, none, 1024).operation,
            gen::Operation::sample_split_pairs);
  // Odd K of 16-bit weights: the row kernel over pairs, as for even K, below K = 3001, split in pairs from there to
  // 4096 when they are few, and as even K past 4096.
  EXPECT_EQ(gen::choose_sample_spec(71, gen::ElementType::bf16, none, 1 << 20).operation, gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(1499, gen::ElementType::f16, none, 1 << 18).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(2047, gen::ElementType::bf16, none, 1 << 18).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(3001, gen::ElementType::bf16, none, gen::kFewRowsSplitBelowRows - 1).operation,
            gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::choose_sample_spec(3001, gen::ElementType::bf16, none, gen::kFewRowsSplitBelowRows).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(4095, gen::ElementType::f16, none, 1 << 18).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(4095, gen::ElementType::f16, none, 0).operation, gen::Operation::sample_pairs);
  // Even K of 16-bit weights off 16 bytes (not a multiple of 8) split in pairs from K = 3300 to 4096 when they are
  // few; a staged row with an odd number of blocks that no remnant can make even keeps its pairs (K = 4000: 125
  // blocks).
  EXPECT_EQ(gen::choose_sample_spec(3298, gen::ElementType::bf16, none, 4096).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(3300, gen::ElementType::bf16, none, 4096).operation,
            gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::choose_sample_spec(3300, gen::ElementType::bf16, none, 1 << 18).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(4094, gen::ElementType::f16, none, 1).operation,
            gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::choose_sample_spec(4094, gen::ElementType::f16, none, 0).operation, gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(3304, gen::ElementType::bf16, none, 1 << 18).operation,
            gen::Operation::sample_pairs);
  const gen::KernelSpec pairs_4000 = gen::choose_sample_spec(4000, gen::ElementType::bf16, none, 134218);
  EXPECT_EQ(pairs_4000.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(pairs_4000.blocks(), 125);
  // Staged rows of odd K keep their remnant searched linearly and their pairs, whatever the parity of their blocks.
  const gen::KernelSpec odd_1001 = gen::choose_sample_spec(1001, gen::ElementType::bf16, none, 1 << 19);
  EXPECT_EQ(odd_1001.operation, gen::Operation::sample_pairs);
  EXPECT_TRUE(odd_1001.linear_remnant());
  EXPECT_EQ(odd_1001.blocks(), 31);
  EXPECT_EQ(gen::choose_sample_spec(2048, gen::ElementType::bf16, none, 1 << 18).operation,
            gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(2047, gen::ElementType::f32, none, 1 << 18).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(71, gen::ElementType::f32, none, 1 << 20).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(4096, gen::ElementType::f64, none, 32768).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(4097, gen::ElementType::f64, none, 32761).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(8192, gen::ElementType::f64, none, 16384).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(4097, gen::ElementType::f32, none, 0).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(4097, gen::ElementType::f32, none, 64).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(8192, gen::ElementType::f32, none, gen::kSplitBelowRows).operation,
            gen::Operation::sample);
  const gen::KernelSpec vocabulary = gen::choose_sample_spec(128256, gen::ElementType::bf16, none, 256);
  EXPECT_EQ(vocabulary.operation, gen::Operation::sample_split_pairs);
  const gen::KernelSpec odd = gen::choose_sample_spec(128257, gen::ElementType::bf16, none, 256);
  EXPECT_EQ(odd.operation, gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::choose_sample_spec(128256, gen::ElementType::f32, none, 256).operation, gen::Operation::sample_split);
  gen::SampleChoice split_forced;
  split_forced.operation = gen::Operation::sample_split;
  EXPECT_EQ(gen::choose_sample_spec(128256, gen::ElementType::bf16, split_forced, 256).operation,
            gen::Operation::sample_split);
  // Rows that do not start on a pair draw with sample_split (the same W, variant and scratch).
  alignas(16) static const unsigned short row_data[8] = {};
  EXPECT_EQ(gen::fit_to_rows(vocabulary, row_data, 128256).operation, gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::fit_to_rows(vocabulary, row_data, 128257).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::fit_to_rows(vocabulary, row_data + 1, 128256).operation, gen::Operation::sample_split);
  // Rows of odd K pair up from the even address at or before their start: any rows.
  EXPECT_EQ(gen::fit_to_rows(odd, row_data + 1, 128257), odd);
  EXPECT_EQ(vocabulary.W, 32);
  EXPECT_EQ(vocabulary.R, 0);
  EXPECT_EQ(gen::choose_sample_spec(16, gen::ElementType::f32, none).W, 16);
  // One draw from f32 weights of 23-40: one block of W = 32 (padded on the left below 32, a remnant of up to 8 above);
  // W = 16 on either side, and for f64, for a forced operation (the forms, the LDA z-step) and under a forced W.
  EXPECT_EQ(gen::choose_sample_spec(22, gen::ElementType::f32, none).W, 16);
  for (int K : {23, 31, 32, 40}) {
    const gen::KernelSpec one_block = gen::choose_sample_spec(K, gen::ElementType::f32, none);
    EXPECT_EQ(one_block.W, 32) << "K = " << K;
    EXPECT_EQ(one_block.blocks(), 1) << "K = " << K;
    EXPECT_EQ(one_block.operation, gen::Operation::sample) << "K = " << K;
  }
  EXPECT_TRUE(gen::choose_sample_spec(31, gen::ElementType::f32, none).padded());
  EXPECT_EQ(gen::choose_sample_spec(40, gen::ElementType::f32, none).remnant(), 8);
  EXPECT_EQ(gen::choose_sample_spec(41, gen::ElementType::f32, none).W, 16);
  EXPECT_EQ(gen::choose_sample_spec(31, gen::ElementType::f64, none).W, 16);
  EXPECT_EQ(gen::choose_sample_spec(31, gen::ElementType::f32, rows).W, 16) << "a forced operation keeps W = 16";
  gen::SampleChoice w16;
  w16.W = 16;
  EXPECT_EQ(gen::choose_sample_spec(31, gen::ElementType::f32, w16).W, 16);
  EXPECT_EQ(gen::choose_lda_z_spec(31, gen::ElementType::f32).W, 16) << "the LDA z-step keeps its own rule";
  const gen::KernelSpec big = gen::choose_sample_spec(1000, gen::ElementType::f64, none);
  EXPECT_EQ(big.W, 16);
  EXPECT_EQ(big.R, 8);
  EXPECT_EQ(big.variant, gen::Variant::swap) << "f64 takes the swap build";
  EXPECT_EQ(gen::choose_sample_spec(1000, gen::ElementType::f32, none).variant, gen::Variant::addsub);
  EXPECT_EQ(big.type, gen::ElementType::f64);
  EXPECT_EQ(big.K, 1000);
  EXPECT_EQ(gen::choose_sample_spec(5, gen::ElementType::f32, rows).R, 3) << "R clamped to W - 1";

  // 16-bit weights take sample_pairs (odd K too), with the remnant padded or searched linearly so that the row has
  // an even number of blocks where it can, and over pairs whatever its blocks; f32 and f64, and a forced W keep the
  // row kernel.
  const gen::KernelSpec pairs_1000 = gen::choose_sample_spec(1000, gen::ElementType::bf16, none);
  EXPECT_EQ(pairs_1000.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(pairs_1000.blocks(), 32) << "500 columns: the remnant of 4 padded to a block";
  const gen::KernelSpec pairs_1500 = gen::choose_sample_spec(1500, gen::ElementType::f16, none);
  EXPECT_EQ(pairs_1500.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(pairs_1500.blocks(), 46) << "750 columns: the remnant of 14 searched linearly";
  EXPECT_TRUE(pairs_1500.linear_remnant());
  EXPECT_EQ(gen::choose_sample_spec(16, gen::ElementType::bf16, none).operation, gen::Operation::sample_pairs);
  for (int K : {160, 224}) {
    const gen::KernelSpec odd_blocks = gen::choose_sample_spec(K, gen::ElementType::bf16, none);
    EXPECT_EQ(odd_blocks.operation, gen::Operation::sample_pairs) << K << ": an odd number of blocks, no remnant";
    EXPECT_EQ(odd_blocks.blocks() % 2, 1) << K;
    EXPECT_TRUE(gen::loads_row_by_slots(odd_blocks)) << K;
  }
  EXPECT_EQ(gen::choose_sample_spec(96, gen::ElementType::bf16, none).operation, gen::Operation::sample_pairs)
      << "3 blocks, loaded whole";
  // A row loaded whole keeps its remnant searched linearly, whatever the parity of its blocks.
  for (int K : {66, 100}) {
    const gen::KernelSpec whole = gen::choose_sample_spec(K, gen::ElementType::bf16, none);
    EXPECT_EQ(whole.operation, gen::Operation::sample_pairs) << K;
    EXPECT_TRUE(whole.linear_remnant()) << K;
    EXPECT_EQ(whole.R, 8) << K;
  }
  EXPECT_EQ(gen::choose_sample_spec(66, gen::ElementType::bf16, none).blocks(), 2);
  EXPECT_EQ(gen::choose_sample_spec(100, gen::ElementType::bf16, none).blocks(), 3);
  EXPECT_EQ(gen::choose_sample_spec(17, gen::ElementType::bf16, none).blocks(), 0)
      << "9 columns, all searched linearly";
  const gen::KernelSpec pairs_1001 = gen::choose_sample_spec(1001, gen::ElementType::bf16, none);
  EXPECT_EQ(pairs_1001.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(pairs_1001.blocks(), 31) << "501 columns: odd K, staged, the remnant of 5 searched linearly";
  EXPECT_EQ(gen::choose_sample_spec(159, gen::ElementType::bf16, none).operation, gen::Operation::sample_pairs)
      << "80 columns at odd K: 5 blocks, but single weights at odd K are slower still";
  // So do even K whose rows are staged anywhere (rows of 2004 bytes, off 16 bytes).
  const gen::KernelSpec pairs_1002 = gen::choose_sample_spec(1002, gen::ElementType::bf16, none);
  EXPECT_EQ(pairs_1002.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(pairs_1002.blocks(), 31) << "501 columns: staged anywhere, the remnant of 5 searched linearly";
  EXPECT_TRUE(gen::stages_rows_anywhere(pairs_1002));
  EXPECT_EQ(gen::choose_sample_spec(1000, gen::ElementType::f32, none).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(1000, gen::ElementType::f64, none).operation, gen::Operation::sample);
  SamplerOptions width;
  width.W = 16;
  EXPECT_EQ(gen::choose_sample_spec(1000, gen::ElementType::bf16, width).operation, gen::Operation::sample);

  SamplerOptions forced;
  forced.W = 8;
  forced.variant = gen::Variant::swap;
  forced.R = 2;
  const gen::KernelSpec spec = gen::choose_sample_spec(1000, gen::ElementType::f32, forced);
  EXPECT_EQ(spec.W, 8);
  EXPECT_EQ(spec.variant, gen::Variant::swap);
  EXPECT_EQ(spec.R, 2);
}

// SampleChoice::split_rows replaces the whole choice between the row kernel and sample_split: false keeps the row
// kernel the rules choose for K (the M-unknown choice below K = 16384) at any K and M and on any device, true splits
// every call (over pairs for 16-bit weights), the forms follow it, and a forced operation wins over it.
TEST(Sampler, SplitRowsReplacesTheRule) {
  SamplerOptions rows;
  rows.split_rows = false;
  SamplerOptions split;
  split.split_rows = true;
  const gen::DeviceBalance h100{12.8};
  const gen::DeviceBalance h200{18.4};
  for (const gen::DeviceBalance device : {h100, h200}) {
    for (gen::ElementType type :
         {gen::ElementType::f32, gen::ElementType::f64, gen::ElementType::bf16, gen::ElementType::f16}) {
      for (int K : {1000, 3301, 3705, 4096, 8192}) {
        const gen::KernelSpec unknown = gen::choose_sample_spec(K, type, {}, 0, device);
        ASSERT_FALSE(gen::splits_rows(unknown.operation)) << K;
        for (long long M : {1LL, 4096LL, 16384LL, 1LL << 20}) {
          EXPECT_EQ(gen::kernel_name(gen::choose_sample_spec(K, type, rows, M, device)), gen::kernel_name(unknown))
              << gen::name_of(type) << " K = " << K << " M = " << M;
          const gen::KernelSpec always = gen::choose_sample_spec(K, type, split, M, device);
          EXPECT_EQ(always.operation,
                    gen::is_narrow(type) ? gen::Operation::sample_split_pairs : gen::Operation::sample_split)
              << gen::name_of(type) << " K = " << K << " M = " << M;
        }
      }
    }
  }
  // Where the rule splits, false is what changes the choice; where it keeps rows, true.
  EXPECT_EQ(gen::choose_sample_spec(3705, gen::ElementType::f32, {}, 16384, h100).operation,
            gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(1000, gen::ElementType::f32, {}, 1 << 20, h100).operation, gen::Operation::sample);
  // Beyond the split's own range too: K = 20000 in the row kernel, K = 8 split (not sample_small).
  EXPECT_EQ(gen::choose_sample_spec(20000, gen::ElementType::f32, rows, 100).operation, gen::Operation::sample);
  EXPECT_EQ(gen::choose_sample_spec(20000, gen::ElementType::bf16, rows, 100).operation, gen::Operation::sample_pairs);
  EXPECT_EQ(gen::choose_sample_spec(8, gen::ElementType::f32, split, 1 << 20).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::choose_sample_spec(8, gen::ElementType::f32, {}, 1 << 20).operation, gen::Operation::sample_small);
  // A forced operation wins.
  SamplerOptions forced = rows;
  forced.operation = gen::Operation::sample_split;
  EXPECT_EQ(gen::choose_sample_spec(1000, gen::ElementType::f32, forced, 1 << 20).operation,
            gen::Operation::sample_split);
  // The forms (several draws here; logits take the same path) split or not as split_rows says, whatever the shape.
  const DrawRequest draws{.num_samples = 4};
  EXPECT_TRUE(gen::splits_rows(draws_spec(20000, gen::ElementType::f32, draws, {}, 100).operation));
  EXPECT_FALSE(gen::splits_rows(draws_spec(20000, gen::ElementType::f32, draws, rows, 100).operation));
  EXPECT_FALSE(gen::splits_rows(draws_spec(1000, gen::ElementType::f32, draws, {}, 1 << 20).operation));
  EXPECT_TRUE(gen::splits_rows(draws_spec(1000, gen::ElementType::f32, draws, split, 1 << 20).operation));
}

// On a device with fast memory (the H200's balance) rows below K = 16384 split only when few: f32 keeps the row kernel
// up to K = 5499 and splits from 5500 below kSplitBelowRows rows; f64 and 16-bit weights keep it to K = 16383 from
// kFastMemorySplitBelowRows rows on; 16-bit rows off 16 bytes are split only when the shape rule splits them. An
// H100's balance, or none, keeps the rules above.
TEST(Sampler, ChooseSpecRuleOnFastMemory) {
  const SamplerOptions none;
  // The balance from a device's attributes: an H100 SXM (2619 MHz memory over 5120 bits, 132 SMs at 1980 MHz).
  EXPECT_NEAR(memory_bytes_per_sm_cycle(2619000, 5120, 132, 1980000), 12.83, 0.01);
  EXPECT_EQ(memory_bytes_per_sm_cycle(2619000, 5120, 0, 1980000), 0);
  const gen::DeviceBalance h100{12.8}, h200{18.4}, unknown{};
  EXPECT_FALSE(h100.fast_memory());
  EXPECT_FALSE(unknown.fast_memory());
  EXPECT_TRUE(h200.fast_memory());
  EXPECT_TRUE(gen::DeviceBalance{gen::kFastMemoryBytesPerSmCycle}.fast_memory());
  EXPECT_FALSE(gen::DeviceBalance{gen::kFastMemoryBytesPerSmCycle - 0.1}.fast_memory());
  const auto operation = [&](int K, gen::ElementType type, long long M, gen::DeviceBalance device) {
    return gen::choose_sample_spec(K, type, none, M, device).operation;
  };
  using gen::ElementType, gen::Operation;
  for (int K : {3300, 3600, 4095, 4097, 5499}) {
    EXPECT_EQ(operation(K, ElementType::f32, 65536, h200), Operation::sample) << K;
    EXPECT_EQ(operation(K, ElementType::f32, 65536, h100), K < 3600 ? Operation::sample : Operation::sample_split)
        << K;
    EXPECT_EQ(operation(K, ElementType::f32, gen::kFastMemorySplitBelowRows - 1, h200), Operation::sample_split) << K;
  }
  EXPECT_EQ(operation(5500, ElementType::f32, 65536, h200), Operation::sample_split);
  EXPECT_EQ(operation(5500, ElementType::f32, gen::kSplitBelowRows, h200), Operation::sample);
  EXPECT_EQ(operation(2999, ElementType::f32, 1, h200), Operation::sample);
  EXPECT_EQ(operation(3000, ElementType::f64, 1, h200), Operation::sample_split);
  for (int K : {8192, 12001, 16383}) {
    EXPECT_EQ(operation(K, ElementType::f64, 16384, h200), Operation::sample) << K;
    EXPECT_EQ(operation(K, ElementType::f64, gen::kFastMemorySplitBelowRows - 1, h200), Operation::sample_split) << K;
    EXPECT_EQ(operation(K, ElementType::f64, 16384, h100), Operation::sample_split) << K;
    EXPECT_EQ(operation(K, ElementType::bf16, gen::kFastMemorySplitBelowRows, h200), Operation::sample_pairs) << K;
    EXPECT_EQ(operation(K, ElementType::bf16, gen::kFastMemorySplitBelowRows, h100), Operation::sample_split_pairs)
        << K;
  }
  EXPECT_EQ(operation(16384, ElementType::f64, 1 << 20, h200), Operation::sample_split);
  EXPECT_EQ(operation(16384, ElementType::bf16, 1 << 20, h200), Operation::sample_split_pairs);
  // 16-bit rows off 16 bytes (odd K from 3001, even from 3300) keep the row kernel over pairs on fast memory.
  for (int K : {3001, 3300, 4094, 4095}) {
    EXPECT_EQ(operation(K, ElementType::bf16, 1 << 18, h200), Operation::sample_pairs) << K;
    EXPECT_EQ(operation(K, ElementType::f16, 0, h200), Operation::sample_pairs) << K;
    EXPECT_EQ(operation(K, ElementType::bf16, 4096, h100), Operation::sample_split_pairs) << K;
    EXPECT_EQ(operation(K, ElementType::bf16, 1 << 18, h100), Operation::sample_pairs) << K;
  }
  // The shape rule the forms follow is the H100's unless a balance is given.
  EXPECT_TRUE(gen::rows_split_by_shape(8192, ElementType::f64, 16384));
  EXPECT_FALSE(gen::rows_split_by_shape(8192, ElementType::f64, 16384, h200));
  EXPECT_TRUE(gen::rows_split_by_shape(8192, ElementType::f64, 4096, h200));
}

// Short rows on a device with fast memory (the H200's balance) take the kernel that read fastest there at their K:
// f32 over pairs at W = 16 (K = 6-16, 22, 24-38) or W = 32 (even K of 40-72, every K of 48-56; K = 18 and 20 with
// R = 31, the whole row kept in registers), W = 16 at K = 23; f64 sample_small at K = 16-24, pairs at W = 16 (25-34,
// 40) or 32 (48, 64, 80), the row kernel at W = 16 (5, 6) or 32 (35-39); bf16 and f16 over pairs at W = 16 (6-15) or
// 32 (49-72; even K of 32-58 with R = 31). Every other K, an H100's balance or none, and a caller's forced
// operation or W keep the rules before it.
TEST(Sampler, ChooseShortRowsOnFastMemory) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType, gen::Operation;
  const auto chosen = [&](int K, ElementType type, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, options, 1 << 20, device);
    return std::pair{spec.operation, spec.W};
  };
  // Whether K keeps the kernel an H100's balance chooses.
  const auto unchanged = [&](int K, ElementType type) { return chosen(K, type, h200) == chosen(K, type, h100); };
  using Kernel = std::pair<Operation, int>;
  const Kernel pairs16{Operation::sample_pairs, 16}, pairs32{Operation::sample_pairs, 32},
      row16{Operation::sample, 16}, row32{Operation::sample, 32}, small32{Operation::sample_small, 32};
  // R = 31 at W = 32: the whole row (up to 62 weights) is the remnant, kept in registers.
  const auto whole_row = [&](int K, ElementType type) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, {}, 1 << 20, h200);
    return spec.operation == Operation::sample_pairs && spec.W == 32 && spec.R == 31;
  };
  for (int K : {6, 12, 15, 16, 22, 24, 31, 38}) EXPECT_EQ(chosen(K, ElementType::f32, h200), pairs16) << K;
  for (int K : {18, 20}) EXPECT_TRUE(whole_row(K, ElementType::f32)) << K;
  // R = 15 at W = 16: rows of up to 30 weights whole in the remnant (odd K by their phase).
  const auto half_row = [&](int K, ElementType type) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, {}, 1 << 20, h200);
    return spec.operation == Operation::sample_pairs && spec.W == 16 && spec.R == 15;
  };
  for (int K : {17, 19, 21, 22, 23, 25}) EXPECT_TRUE(half_row(K, ElementType::f32)) << K;
  for (int K : {15, 16, 24, 27}) EXPECT_FALSE(half_row(K, ElementType::f32)) << K;
  for (int K : {40, 42, 48, 49, 55, 56, 58, 64, 72}) EXPECT_EQ(chosen(K, ElementType::f32, h200), pairs32) << K;
  EXPECT_EQ(chosen(23, ElementType::f32, h100), row32);  // the H100's one-block rule
  for (int K : {39, 41, 47, 57, 63, 76, 128}) EXPECT_TRUE(unchanged(K, ElementType::f32)) << K;
  EXPECT_EQ(chosen(5, ElementType::f32, h200).first, Operation::sample_small);
  EXPECT_EQ(chosen(5, ElementType::f64, h200), row16);
  EXPECT_EQ(chosen(6, ElementType::f64, h200), row16);
  for (int K : {16, 20, 24}) EXPECT_EQ(chosen(K, ElementType::f64, h200), small32) << K;
  for (int K : {25, 30, 34, 40}) EXPECT_EQ(chosen(K, ElementType::f64, h200), pairs16) << K;
  for (int K : {35, 37, 39}) EXPECT_EQ(chosen(K, ElementType::f64, h200), row32) << K;
  for (int K : {48, 64, 80}) EXPECT_EQ(chosen(K, ElementType::f64, h200), pairs32) << K;
  for (int K : {7, 13, 41, 63, 96, 128}) EXPECT_TRUE(unchanged(K, ElementType::f64)) << K;
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {6, 9, 15}) EXPECT_EQ(chosen(K, type, h200), pairs16) << K;
    for (int K : {49, 60, 64, 72}) EXPECT_EQ(chosen(K, type, h200), pairs32) << K;
    for (int K : {31, 32, 33, 34, 36, 45, 46, 48, 49, 50, 56, 58, 59, 61}) EXPECT_TRUE(whole_row(K, type)) << K;
    for (int K : {30, 60, 62, 63}) EXPECT_FALSE(whole_row(K, type)) << K;
    for (int K : {5, 17, 30, 76}) EXPECT_TRUE(unchanged(K, type)) << K;
    EXPECT_EQ(chosen(12, type, h100).first, Operation::sample_small);
  }
  // The H100's balance keeps its rules; a forced operation or W is the caller's.
  EXPECT_EQ(chosen(12, ElementType::f32, h100).first, Operation::sample_small);
  EXPECT_EQ(chosen(64, ElementType::f32, h100), row16);
  SamplerOptions forced_w;
  forced_w.W = 8;
  EXPECT_EQ(chosen(12, ElementType::f32, h200, forced_w).second, 8);
  EXPECT_EQ(chosen(64, ElementType::f32, h200, forced_w), (Kernel{Operation::sample, 8}));
  SamplerOptions forced_operation;
  forced_operation.operation = Operation::sample;
  EXPECT_EQ(chosen(64, ElementType::f32, h200, forced_operation), row16);
  // The rule's pairs at W = 32 keep R = 8, as measured, and f64's swap variant.
  const gen::KernelSpec f64_64 = gen::choose_sample_spec(64, ElementType::f64, {}, 1 << 20, h200);
  EXPECT_EQ(f64_64.R, 8);
  EXPECT_EQ(f64_64.variant, gen::Variant::swap);
}

// Short rows of 16-bit weights on a device without fast memory (the H100, and a balance unknown): over pairs at
// W = 32 with the whole row in registers (R = 31) at K = 16, 31-43, 46-49 and odd K of 51-59, over pairs at W = 32
// with R = 8 at even K of 50-64 and K = 61 and 63; K = 17-30, 44, 45 and from 65 keep the row kernel over pairs at
// W = 16. f32 and f64, and a caller's forced W or operation, keep their kernels.
TEST(Sampler, ChooseShortSixteenBitRowsWithoutFastMemory) {
  const gen::DeviceBalance h100{12.8};
  using gen::ElementType, gen::Operation;
  const auto chosen = [&](int K, ElementType type, const SamplerOptions& options = {}) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, options, 1 << 20, h100);
    return std::tuple{spec.operation, spec.W, spec.R};
  };
  const std::tuple whole_row{Operation::sample_pairs, 32, 31}, pairs32{Operation::sample_pairs, 32, 8};
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {16, 31, 34, 43, 46, 48, 49, 51, 53, 59}) EXPECT_EQ(chosen(K, type), whole_row) << K;
    for (int K : {50, 52, 58, 60, 61, 62, 63, 64}) EXPECT_EQ(chosen(K, type), pairs32) << K;
    for (int K : {17, 30, 44, 45, 65, 72}) {
      EXPECT_EQ(std::get<0>(chosen(K, type)), Operation::sample_pairs) << K;
      EXPECT_EQ(std::get<1>(chosen(K, type)), 16) << K;
    }
    EXPECT_EQ(gen::choose_sample_spec(49, type, {}).R, 31) << "a balance unknown takes the H100's rules";
    SamplerOptions w16, row;
    w16.W = 16;
    row.operation = Operation::sample;
    EXPECT_EQ(std::get<1>(chosen(49, type, w16)), 16);
    EXPECT_EQ(chosen(49, type, row), std::tuple(Operation::sample, 16, 8));
  }
  for (ElementType type : {ElementType::f32, ElementType::f64})
    for (int K : {49, 56}) EXPECT_EQ(std::get<1>(chosen(K, type)), 16) << K;
}

// f32 rows copied by their warps pad their remnant to a block on a device with fast memory (R = 0); the H100 keeps
// R = 8, and so do rows not copied, rows already padded, and a caller's forced R.
TEST(Sampler, CopiedF32RowsPadTheirRemnantOnFastMemory) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType, gen::Operation;
  const auto spec_at = [](int K, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    return gen::choose_sample_spec(K, ElementType::f32, options, 1 << 20, device);
  };
  for (int K : {65, 71, 97, 131, 280, 325}) {
    const gen::KernelSpec fast = spec_at(K, h200), slow = spec_at(K, h100);
    ASSERT_EQ(fast.operation, Operation::sample) << K;
    EXPECT_TRUE(gen::copies_warp_rows(fast)) << K;
    EXPECT_EQ(fast.R, 0) << K;
    EXPECT_TRUE(fast.padded()) << K;
    EXPECT_EQ(slow.R, 8) << K;
    EXPECT_TRUE(slow.linear_remnant()) << K;
  }
  // Padded already (remnant > 8), no remnant, or not copied (K = 360 on: the copy would exceed its limit).
  for (int K : {345, 352, 256, 361, 1001}) EXPECT_EQ(spec_at(K, h200).R, 8) << K;
  EXPECT_FALSE(gen::copies_warp_rows(spec_at(361, h200)));
  SamplerOptions forced_r;
  forced_r.R = 8;
  EXPECT_EQ(spec_at(325, h200, forced_r).R, 8);
  // Rows not copied on fast memory (K = 337, below) keep R = 8 but at K = 8 mod 16 up to 904 and K = 338, 342, 370
  // and 374; bf16 K = 335 (odd, copied) keeps its pairs' R (R = 0 was measured there and not taken).
  EXPECT_EQ(spec_at(337, h200).R, 8);
  for (int K : {338, 342, 344, 374, 408, 904}) {
    EXPECT_FALSE(gen::copies_warp_rows(spec_at(K, h200))) << K;
    EXPECT_EQ(spec_at(K, h200).R, 0) << K;
    EXPECT_EQ(spec_at(K, h100).R, 8) << K;
  }
  for (int K : {354, 358, 402, 920, 1032}) EXPECT_EQ(spec_at(K, h200).R, 8) << K;
  EXPECT_NE(gen::choose_sample_spec(335, ElementType::bf16, {}, 1 << 20, h200).R, 0);
}

// On a device with fast memory f64 rows at W = 16 up to K = 300 pad their remnant (R = 0) but for K = 181, 183 and
// 199, and so do 16-bit rows over pairs that keep their copies at even K from 190 or skip them at odd K of 337-700
// (but K = 334 and 556); the kernel is derived again at R = 0 (f64 K = 130 is then staged anywhere, as measured).
// The H100 keeps the row kernel's R, and so do the short rows' kernels, longer rows, and a caller's forced R or W.
TEST(Sampler, F64AndPairsPadTheirRemnantOnFastMemory) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType, gen::Operation;
  const auto spec_at = [](int K, ElementType type, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    return gen::choose_sample_spec(K, type, options, 1 << 20, device);
  };
  for (int K : {72, 119, 130, 133, 198, 231, 296}) {
    const gen::KernelSpec fast = spec_at(K, ElementType::f64, h200), slow = spec_at(K, ElementType::f64, h100);
    ASSERT_EQ(fast.operation, Operation::sample) << K;
    EXPECT_EQ(fast.R, 0) << K;
    EXPECT_TRUE(fast.padded()) << K;
    EXPECT_EQ(slow.R, 8) << K;
    EXPECT_TRUE(slow.linear_remnant()) << K;
  }
  SamplerOptions r0;
  r0.R = 0;
  EXPECT_EQ(spec_at(130, ElementType::f64, h200), spec_at(130, ElementType::f64, h200, r0));
  EXPECT_TRUE(spec_at(130, ElementType::f64, h200).ring_anywhere);
  EXPECT_TRUE(spec_at(231, ElementType::f64, h200).ring_row_order);
  for (int K : {37, 181, 183, 199, 305, 402}) EXPECT_EQ(spec_at(K, ElementType::f64, h200).R, 8) << K;
  EXPECT_TRUE(spec_at(181, ElementType::f64, h200).ring_row_order);
  SamplerOptions forced_r, forced_w;
  forced_r.R = 8;
  forced_w.W = 16;
  EXPECT_EQ(spec_at(133, ElementType::f64, h200, forced_r).R, 8);
  EXPECT_EQ(spec_at(133, ElementType::f64, h200, forced_w).R, 8);

  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {200, 520, 586, 600}) {
      const gen::KernelSpec fast = spec_at(K, type, h200);
      ASSERT_EQ(fast.operation, Operation::sample_pairs) << K;
      EXPECT_TRUE(gen::copies_warp_rows(fast)) << K;
      EXPECT_EQ(fast.R, 0) << K;
      EXPECT_TRUE(spec_at(K, type, h100).linear_remnant()) << K;
    }
    for (int K : {339, 423, 461, 487, 495}) {
      const gen::KernelSpec fast = spec_at(K, type, h200);
      EXPECT_FALSE(fast.warp_copies) << K;
      EXPECT_EQ(fast.R, 0) << K;
    }
    // Odd K copied (K = 335, and 385 in a band that keeps its copies), odd K past 700, even K of the ring, the short
    // rows' kernel at W = 32 (K = 55), shorter even rows, and K = 334 and 556.
    for (int K : {335, 385, 705, 740, 55, 150, 334, 556}) EXPECT_TRUE(spec_at(K, type, h200).linear_remnant()) << K;
    EXPECT_EQ(spec_at(520, type, h200, forced_r).R, 8);
  }
}

// The copies of the longest rows their rule takes are turned off on a device with fast memory (f32 K from 335, 16-bit
// odd K from 337 but three bands, even K from 642); the H100 and f64 keep them, and so does a forced W or operation.
TEST(Sampler, LongCopiedRowsGoWithoutCopiesOnFastMemory) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType;
  const auto copies = [](int K, ElementType type, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, options, 1 << 20, device);
    return spec.warp_copies && gen::copies_warp_rows(spec);
  };
  const auto copy_off = [&](int K, ElementType type) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, {}, 1 << 20, h200);
    return !spec.warp_copies;
  };
  for (int K : {335, 337, 346, 359}) {
    EXPECT_TRUE(copy_off(K, ElementType::f32)) << K;
    EXPECT_TRUE(copies(K, ElementType::f32, h100)) << K;
  }
  for (int K : {255, 326, 334}) EXPECT_TRUE(copies(K, ElementType::f32, h200)) << K;
  EXPECT_FALSE(copy_off(360, ElementType::f32));  // past the copies' limit: nothing to turn off
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {337, 361, 367, 381, 399, 423, 433, 441, 447, 459, 475, 477, 561, 693, 719, 642, 678, 718}) {
      EXPECT_TRUE(copy_off(K, type)) << K;
      EXPECT_TRUE(copies(K, type, h100)) << K;
    }
    for (int K : {191, 335, 363, 365, 383, 397, 449, 457, 432, 504, 640}) EXPECT_TRUE(copies(K, type, h200)) << K;
  }
  for (int K : {99, 150}) EXPECT_TRUE(copies(K, ElementType::f64, h200)) << K;
  SamplerOptions forced_pairs;
  forced_pairs.operation = gen::Operation::sample_pairs;
  EXPECT_TRUE(copies(561, ElementType::bf16, h200, forced_pairs));
}

// Rows on 16 bytes but off 32-byte sectors that the ring would read at one place are staged anywhere
// (KernelSpec::ring_anywhere): f64 K = 2 mod 4 and f32 K = 4 mod 8 wherever the ring stages them (from K = 182 on a
// device without fast memory), 16-bit K = 8 mod 16 over pairs from K = 984, and rows that step 32 bytes past 64-byte
// lines: f64 K = 4 mod 8 from 492 to 4092 (but nine K) on every device, and on fast memory only f32 K = 8 mod 16 from
// 1032 to 4088 (but two K) and 16-bit K = 16 mod 32 over pairs from 1040 to 4080. Rows on whole lines, rows staged
// anywhere already and a forced W or operation keep their kernels; a caller may force it either way where the ring
// would read the rows at one place.
TEST(Sampler, OffSectorRowsStageAnywhere) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType;
  const auto anywhere = [](int K, ElementType type, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, options, 1 << 20, device);
    EXPECT_EQ(spec.ring_anywhere, spec.ring_anywhere && gen::stages_rows_anywhere(spec)) << K;
    return spec.ring_anywhere;
  };
  for (int K : {182, 202, 366, 390}) {
    EXPECT_TRUE(anywhere(K, ElementType::f64, h200)) << K;
    EXPECT_TRUE(anywhere(K, ElementType::f64, h100)) << K;
  }
  for (int K : {138, 178}) {  // the ring at one place, off sectors: fast memory only below K = 182
    EXPECT_TRUE(anywhere(K, ElementType::f64, h200)) << K;
    EXPECT_FALSE(anywhere(K, ElementType::f64, h100)) << K;
  }
  for (int K : {492, 700, 1020, 1028, 2044, 3060, 4092}) {  // K = 4 mod 8: rows on sectors whose phases step 32 bytes
    EXPECT_TRUE(anywhere(K, ElementType::f64, h200)) << K;
    EXPECT_TRUE(anywhere(K, ElementType::f64, h100)) << K;
  }
  for (gen::DeviceBalance device : {h100, h200})
    for (int K : {180, 184, 192, 181, 183, 398, 1002, 484, 704, 712, 1032, 1940, 2084, 3092, 3124, 3132, 3156, 3188})
      EXPECT_FALSE(anywhere(K, ElementType::f64, device)) << K;
  for (int K : {340, 356, 388}) {
    EXPECT_TRUE(anywhere(K, ElementType::f32, h200)) << K;
    EXPECT_TRUE(anywhere(K, ElementType::f32, h100)) << K;
  }
  for (int K : {336, 344, 404, 1004}) EXPECT_FALSE(anywhere(K, ElementType::f32, h200)) << K;
  for (int K : {1032, 2056, 3512, 4088}) {  // K = 8 mod 16: rows step 32 bytes past 64-byte lines
    EXPECT_TRUE(anywhere(K, ElementType::f32, h200)) << K;
    EXPECT_FALSE(anywhere(K, ElementType::f32, h100)) << K;
  }
  for (int K : {1016, 1024, 2064, 4008, 4040}) EXPECT_FALSE(anywhere(K, ElementType::f32, h200)) << K;
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {984, 1032, 2040, 3016, 4088}) {  // K = 8 mod 16
      EXPECT_TRUE(anywhere(K, type, h200)) << K;
      EXPECT_TRUE(anywhere(K, type, h100)) << K;
    }
    for (int K : {1040, 2064, 4080}) {  // K = 16 mod 32
      EXPECT_TRUE(anywhere(K, type, h200)) << K;
      EXPECT_FALSE(anywhere(K, type, h100)) << K;
    }
    for (int K : {968, 648, 1024, 1008, 2048, 1033, 1034}) EXPECT_FALSE(anywhere(K, type, h200)) << K;
  }
  SamplerOptions forced_w;
  forced_w.W = 16;
  EXPECT_FALSE(anywhere(182, ElementType::f64, h200, forced_w));
  SamplerOptions off, on;
  off.ring_anywhere = false;
  on.ring_anywhere = true;
  EXPECT_FALSE(anywhere(182, ElementType::f64, h200, off));
  EXPECT_FALSE(anywhere(182, ElementType::f64, h100, off));
  EXPECT_TRUE(anywhere(138, ElementType::f64, h100, on));
  EXPECT_TRUE(anywhere(1024, ElementType::f32, h100, on));  // rows on whole lines, forced
  EXPECT_FALSE(anywhere(181, ElementType::f64, h100, on));  // staged anywhere already: nothing to change
  EXPECT_FALSE(anywhere(16, ElementType::f32, h100, on));   // not staged
  EXPECT_NO_THROW(Sampler{on});
}

// f64 rows of odd K from 181 staged anywhere at W = 16 are read in row order on every device
// (KernelSpec::ring_row_order); from K = 1000 every device reads them so by its rule (nothing to switch). Even K, the
// copies (K < 181), W = 32 forced and the forms keep their kernels; a caller may force it either way where the ring
// would read the rows into permuted slots.
TEST(Sampler, F64OddRowsReadInRowOrder) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType;
  const auto row_order = [](int K, ElementType type, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, options, 1 << 20, device);
    EXPECT_EQ(spec.ring_row_order, spec.ring_row_order && gen::ring_in_row_order(spec)) << K;
    return spec.ring_row_order;
  };
  for (int K : {181, 183, 501, 847, 999}) {
    EXPECT_TRUE(row_order(K, ElementType::f64, h200)) << K;
    EXPECT_TRUE(row_order(K, ElementType::f64, h100)) << K;
  }
  const gen::KernelSpec k1001 = gen::choose_sample_spec(1001, ElementType::f64, {}, 1 << 20, h200);
  EXPECT_FALSE(k1001.ring_row_order);
  EXPECT_TRUE(gen::ring_in_row_order(k1001)) << "row order by the rule of every device";
  for (int K : {179, 182, 184, 340}) EXPECT_FALSE(row_order(K, ElementType::f64, h200)) << K;
  for (int K : {340, 341, 1001}) EXPECT_FALSE(row_order(K, ElementType::f32, h200)) << K;
  EXPECT_FALSE(row_order(1001, ElementType::bf16, h200));
  SamplerOptions forced_w;
  forced_w.W = 16;
  EXPECT_FALSE(row_order(181, ElementType::f64, h200, forced_w));
  SamplerOptions off, on;
  off.ring_row_order = false;
  on.ring_row_order = true;
  EXPECT_FALSE(row_order(501, ElementType::f64, h200, off));
  EXPECT_FALSE(row_order(501, ElementType::f64, h100, off));
  EXPECT_TRUE(row_order(501, ElementType::f64, h100, on));
  EXPECT_FALSE(row_order(1001, ElementType::f64, h100, on));  // in row order already: nothing to change
  EXPECT_FALSE(row_order(16, ElementType::f32, h100, on));    // not staged
  EXPECT_NO_THROW(Sampler{on});
  const gen::KernelSpec draws = rt::draws_spec(501, ElementType::f64, rt::DrawRequest{}, on, 1 << 20);
  EXPECT_FALSE(draws.ring_row_order) << "the forms keep the rule's order";
}

// 16-bit rows over pairs at odd K of 8-15 lines of blocks take the deep ring without fast memory (KernelSpec::ring_deep:
// K = 735-1007 but 769-797); the H200 keeps the shallow ring, and so do K = 721-733, the band 769-797, rows of 16 lines
// (K = 1009 on), the rows the warps' copy takes (K < 720), even K, f32 and a forced W; forced either way it holds where
// the ring would be the shallow one, and the forms keep the rule's ring.
TEST(Sampler, OddPairsTakeTheDeepRingWithoutFastMemory) {
  const gen::DeviceBalance h100{12.8}, h200{18.4};
  using gen::ElementType;
  const auto deep = [](int K, ElementType type, gen::DeviceBalance device, const SamplerOptions& options = {}) {
    const gen::KernelSpec spec = gen::choose_sample_spec(K, type, options, 1 << 20, device);
    if (spec.ring_deep) {
      EXPECT_EQ(gen::pass1_stages(spec), 8) << K;
    }
    return spec.ring_deep;
  };
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {735, 767, 799, 861, 929, 1001, 1007}) {
      EXPECT_TRUE(deep(K, type, h100)) << K;
      EXPECT_FALSE(deep(K, type, h200)) << K;
    }
    for (int K : {701, 721, 733, 769, 781, 797, 1009, 1017, 930}) EXPECT_FALSE(deep(K, type, h100)) << K;
  }
  EXPECT_TRUE(gen::choose_sample_spec(929, ElementType::bf16, {}).ring_deep) << "a balance unknown takes the H100's";
  EXPECT_FALSE(deep(929, ElementType::f32, h100));
  SamplerOptions forced_w, off, on;
  forced_w.W = 16;
  off.ring_deep = false;
  on.ring_deep = true;
  EXPECT_FALSE(deep(929, ElementType::bf16, h100, forced_w));
  EXPECT_FALSE(deep(929, ElementType::bf16, h100, off));
  EXPECT_TRUE(deep(929, ElementType::bf16, h200, on));
  EXPECT_TRUE(deep(781, ElementType::bf16, h100, on));
  EXPECT_FALSE(deep(1017, ElementType::bf16, h100, on));  // 16 lines: the deep ring already, nothing to change
  EXPECT_FALSE(deep(930, ElementType::bf16, h100, on));   // even K: the deep ring from 8 lines by every device's rule
  EXPECT_NO_THROW(Sampler{on});
  rt::DrawRequest request;
  request.num_samples = 4;
  const gen::KernelSpec draws = rt::draws_spec(929, ElementType::bf16, request, on, 1 << 20);
  EXPECT_FALSE(draws.ring_deep) << "the forms keep the rule's ring";
}

// gen::rows_past_last_wave: the rows past the row kernel's last whole wave that sample_split draws instead.
TEST(Sampler, RowsPastTheLastWaveRule) {
  using gen::rows_past_last_wave;
  const gen::KernelSpec f32 = gen::choose_sample_spec(4096, gen::ElementType::f32, {}, 65536, gen::DeviceBalance{18.4});
  const gen::KernelSpec f64 = gen::choose_sample_spec(3925, gen::ElementType::f64, {}, 34196, gen::DeviceBalance{18.4});
  ASSERT_EQ(f32.operation, gen::Operation::sample);
  ASSERT_EQ(f64.operation, gen::Operation::sample);
  const long long rows = gen::launch_geometry(f32).rows_per_cta;
  ASSERT_EQ(rows, 32);
  ASSERT_EQ(gen::launch_geometry(f64).rows_per_cta, 32);
  ASSERT_EQ(gen::launch_geometry(f64).threads_per_cta, 32) << "one warp a CTA";
  // The H200 (132 SMs): f32 K = 4096 5 CTAs an SM (660 a wave), f64 K = 3925 4 (528, one warp a scheduler).
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows + 200, 5, 132), 200) << "one wave and 7 CTAs";
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows, 5, 132), 0) << "whole waves";
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows - 5, 5, 132), 0) << "under one wave";
  EXPECT_EQ(rows_past_last_wave(f32, 2 * 660 * rows + 200, 5, 132), 0) << "5 warps an SM: waves spread out";
  EXPECT_EQ(rows_past_last_wave(f32, 2 * 528 * rows + 200, 4, 132), 200) << "4 warps an SM: waves stay together";
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows + 165 * rows, 5, 132), 165 * rows) << "a quarter of a wave";
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows + 166 * rows, 5, 132), 0) << "more than a quarter";
  EXPECT_EQ(rows_past_last_wave(f64, 34196, 4, 132), 34196 - 2 * 528 * 32) << "f64 K = 3925 at 1 GiB: 2 waves, 13 CTAs";
  EXPECT_EQ(rows_past_last_wave(f64, 34196, 5, 132), 0) << "5 CTAs an SM: 2.02 waves spread out";
  EXPECT_EQ(rows_past_last_wave(f64, 3 * 528 * 32 + 1, 4, 132), 1);
  EXPECT_EQ(rows_past_last_wave(f64, 4 * 528 * 32 + 1, 4, 132), 0) << "four whole waves";
  EXPECT_EQ(rows_past_last_wave(f64, 34196, 0, 132), 0) << "a device unknown";
  EXPECT_EQ(rows_past_last_wave(f64, 34196, 4, 0), 0) << "a device unknown";
  // Where sample_split's launch overlaps the row kernel's end (sm_90 on) and the waves stay together: a last wave of
  // up to half of one, and an eighth of a wave (66 CTAs) more where it is at most a quarter of one.
  const long long two_waves = 2 * 528 * 32;
  EXPECT_EQ(rows_past_last_wave(f64, 34196, 4, 132, true), 34196 - (2 * 528 - 66) * 32) << "13 CTAs and 66 more";
  EXPECT_EQ(rows_past_last_wave(f64, two_waves + 132 * 32, 4, 132, true), (132 + 66) * 32) << "a quarter of a wave";
  EXPECT_EQ(rows_past_last_wave(f64, two_waves + 133 * 32, 4, 132, true), 133 * 32) << "more than a quarter";
  EXPECT_EQ(rows_past_last_wave(f64, two_waves + 133 * 32, 4, 132), 0) << "more than a quarter, not overlapped";
  EXPECT_EQ(rows_past_last_wave(f64, two_waves + 264 * 32, 4, 132, true), 264 * 32) << "half a wave";
  EXPECT_EQ(rows_past_last_wave(f64, two_waves + 264 * 32 + 1, 4, 132, true), 0) << "more than half";
  EXPECT_EQ(rows_past_last_wave(f64, 528 * 32 + 1, 4, 132, true), 32 * 66 + 1) << "one wave: 7/8 of it stay";
  EXPECT_EQ(rows_past_last_wave(f64, 4 * 528 * 32 + 1, 4, 132, true), 0) << "four whole waves";
  EXPECT_EQ(rows_past_last_wave(f64, two_waves, 4, 132, true), 0) << "whole waves";
  EXPECT_EQ(rows_past_last_wave(f64, 34196, 5, 132, true), 0) << "waves spread out: the rule without the overlap";
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows + 200, 5, 132, true), 200) << "one wave and 7 CTAs, as before";
  EXPECT_EQ(rows_past_last_wave(f32, 660 * rows + 166 * rows, 5, 132, true), 0) << "more than a quarter, spread";
  // Short rows (a CTA under 256 KB) and other kernels keep one launch.
  const gen::KernelSpec short_rows = gen::choose_sample_spec(1024, gen::ElementType::f32, {}, 0, {});
  EXPECT_EQ(rows_past_last_wave(short_rows, 660 * rows + 200, 5, 132), 0);
  gen::SampleChoice split;
  split.operation = gen::Operation::sample_split;
  EXPECT_EQ(rows_past_last_wave(gen::choose_sample_spec(4096, gen::ElementType::f32, split), 660 * rows + 200, 5, 132),
            0);
  gen::KernelSpec draws = f32;
  draws.draws = gen::Draws::with_replacement;
  EXPECT_EQ(rows_past_last_wave(draws, 660 * rows + 200, 5, 132), 0);
  // 16-bit rows over pairs go to sample_split over pairs; f32 and f64 to sample_split.
  const gen::KernelSpec bf16 =
      gen::choose_sample_spec(4096, gen::ElementType::bf16, {}, 131072, gen::DeviceBalance{18.4});
  ASSERT_EQ(bf16.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(rows_past_last_wave(bf16, 660 * rows + 200, 5, 132), 200);
  EXPECT_EQ(gen::tail_split_spec(bf16).operation, gen::Operation::sample_split_pairs);
  EXPECT_EQ(gen::tail_split_spec(f32).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::tail_split_spec(f64).operation, gen::Operation::sample_split);
  EXPECT_EQ(gen::tail_split_spec(f64).K, 3925);
}

TEST(Sampler, EverySamplingOperationCanBeForced) {
  for (gen::Operation operation :
       {gen::Operation::sample, gen::Operation::sample_small, gen::Operation::sample_split}) {
    SamplerOptions forced;
    forced.operation = operation;
    const Sampler sampler(forced);  // validates the options, needs no GPU
    EXPECT_EQ(sampler.spec_for(5, gen::ElementType::f32).operation, operation);
  }
  SamplerOptions lda;
  lda.operation = gen::Operation::lda_z;
  EXPECT_NE(error_of([&] { Sampler sampler(lda); }).find("not a sampling kernel"), std::string::npos);
}

// sample_pairs loads two weights at once: for K even rows must start on a pair (the pointer aligned to two elements,
// ld even), else the call takes the row kernel with the same W, R and variant; rows of odd K pair up from the even
// address at or before their start, wherever they start.
TEST(Sampler, PairsNeedRowsThatStartOnAPair) {
  SamplerOptions pairs;
  pairs.operation = gen::Operation::sample_pairs;
  const Sampler sampler(pairs);
  alignas(16) static const unsigned char buffer[64] = {};
  const gen::KernelSpec bf16 = sampler.spec_for(1000, gen::ElementType::bf16);
  ASSERT_EQ(bf16.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(bf16.columns(), 500);
  EXPECT_EQ(gen::fit_to_rows(bf16, buffer, 1000), bf16);
  EXPECT_EQ(gen::fit_to_rows(bf16, buffer + 4, 1000), bf16) << "bf16 pairs take 4 bytes";
  gen::KernelSpec row = bf16;
  row.operation = gen::Operation::sample;
  EXPECT_EQ(gen::fit_to_rows(bf16, buffer, 1001), row) << "an odd ld";
  EXPECT_EQ(gen::fit_to_rows(bf16, buffer + 2, 1000), row) << "a pointer off a pair";
  const gen::KernelSpec f32 = sampler.spec_for(1000, gen::ElementType::f32);
  EXPECT_EQ(gen::fit_to_rows(f32, buffer + 4, 1000).operation, gen::Operation::sample) << "f32 pairs take 8 bytes";
  EXPECT_EQ(gen::fit_to_rows(f32, buffer + 8, 1000).operation, gen::Operation::sample_pairs);
  EXPECT_EQ(gen::fit_to_rows(row, buffer + 2, 1001), row) << "other kernels are left as they are";
  const gen::KernelSpec odd = sampler.spec_for(999, gen::ElementType::bf16);
  ASSERT_EQ(odd.operation, gen::Operation::sample_pairs);
  EXPECT_EQ(odd.columns(), 500);
  EXPECT_EQ(gen::fit_to_rows(odd, buffer + 2, 999), odd) << "odd K: any address and ld";
}

TEST(Sampler, BadForcedOptionsFailAtConstruction) {
  SamplerOptions bad_w;
  bad_w.W = 12;
  EXPECT_NE(error_of([&] { Sampler sampler(bad_w); }).find("12"), std::string::npos);
  SamplerOptions bad_r;
  bad_r.W = 8;
  bad_r.R = 8;
  EXPECT_FALSE(error_of([&] { Sampler sampler(bad_r); }).empty());
}

TEST(Sampler, ValidatesArgumentsBeforeTouchingTheDriver) {
  Sampler sampler;
  // Fake device pointers: validation must reject every call before anything dereferences or launches.
  const auto* weights = reinterpret_cast<const float*>(0x1000);
  auto* out = reinterpret_cast<int*>(0x2000);
  EXPECT_NE(error_of([&] { sampler.sample(weights, 10, 0, 10, out, 1); }).find("K = 0 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sampler.sample(weights, 10, gen::KernelSpec::kMaxK + 1, gen::KernelSpec::kMaxK + 1, out,
                                          1); })
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sampler.sample(weights, 10, 64, 63, out, 1); }).find("ld = 63 is less than K = 64"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sampler.sample(weights, -1, 64, 64, out, 1); }).find("M = -1 is negative"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sampler.sample(static_cast<const float*>(nullptr), 10, 64, 64, out, 1); })
                .find("weights is null"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sampler.sample(reinterpret_cast<const double*>(0x1000), 10, 64, 64, nullptr, 1); })
                .find("out is null"),
            std::string::npos);
}

// The iteration of sample() is the kernel's `iteration` argument (the Philox counter's last word), next to the seed.
TEST(Sampler, IterationReachesTheKernelArguments) {
  const gen::KernelSpec spec = gen::choose_sample_spec(64, gen::ElementType::f32, SamplerOptions{});
  const auto* weights = reinterpret_cast<const float*>(0x1000);
  auto* out = reinterpret_cast<int*>(0x2000);
  const gen::PackedArgs args = sample_arguments(spec, weights, 10, 64, out, 42, 7);
  EXPECT_EQ(args.integer("seed"), 42);
  EXPECT_EQ(args.integer("iteration"), 7);
  EXPECT_EQ(args.integer("M"), 10);
  EXPECT_EQ(args.pointer("out"), out);
  EXPECT_EQ(sample_arguments(spec, weights, 10, 64, out, 42, 0xffffffffu).integer("iteration"), 0xffffffffLL);
  // sample() checks with the same function, iteration included, before it needs a GPU.
  Sampler sampler;
  EXPECT_EQ(sampler.sample(weights, 0, 64, 64, out, 42, 3).spec.K, 64);
  EXPECT_NE(error_of([&] { sampler.sample(weights, 10, 64, 63, out, 42, 3); }).find("ld = 63 is less than K = 64"),
            std::string::npos);
}

TEST(Sampler, EmptyBatchIsANoOpWithoutAGpu) {
  Sampler sampler;
  const SampleReport report = sampler.sample(static_cast<const float*>(nullptr), 0, 64, 64, nullptr, 1);
  EXPECT_EQ(report.invalid_rows, 0);
  EXPECT_EQ(report.first_invalid_row, -1);
  EXPECT_EQ(report.spec.K, 64);
  std::vector<double> weights;
  std::vector<int> out;
  EXPECT_EQ(sampler.sample_host(std::span<const double>(weights), 0, 3, 3, std::span<int>(out), 1).spec.K, 3);
}

TEST(Sampler, HostOverloadChecksArraySizes) {
  Sampler sampler;
  std::vector<float> weights(2 * 10 + 5);
  std::vector<int> out(3);
  EXPECT_NE(error_of([&] { sampler.sample_host(std::span<const float>(weights), 3, 8, 10, out, 1); })
                .find("need (M - 1) * ld + K = 28"),
            std::string::npos);
  std::vector<int> short_out(2);
  weights.resize(28);
  EXPECT_NE(error_of([&] { sampler.sample_host(std::span<const float>(weights), 3, 8, 10, short_out, 1); })
                .find("fewer than M = 3"),
            std::string::npos);
}

// Logits and several draws: the temperature, num_samples and the element type are checked before any GPU is
// needed, each with a message that names the argument.
TEST(Sampler, DrawsValidatesTheRequestBeforeTouchingTheDriver) {
  Sampler sampler;
  const auto* logits = reinterpret_cast<const float*>(0x1000);
  auto* out = reinterpret_cast<int*>(0x2000);
  const auto message = [&](double temperature, int num_samples, bool replacement, int K = 100) {
    return error_of([&] { sampler.sample_logits(logits, 10, K, K, temperature, num_samples, replacement, out, 1); });
  };
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
    EXPECT_NE(message(bad, 1, true).find("temperature = "), std::string::npos) << bad;
  EXPECT_NE(message(1.0, 0, true).find("num_samples = 0 is not allowed"), std::string::npos);
  EXPECT_NE(message(1.0, 65, false).find("num_samples = 65 without replacement is above the most distinct draws per "
                                         "row, 64"),
            std::string::npos);
  EXPECT_NE(message(1.0, 6, false, 5).find("num_samples = 6 distinct categories (replacement = false) cannot come "
                                           "from K = 5"),
            std::string::npos);
  EXPECT_NE(message(1.0, (1 << 24) + 1, true).find("above the most draws per row"), std::string::npos);
  EXPECT_NE(error_of([&] {
              sampler.sample_draws(reinterpret_cast<const double*>(0x1000), gen::ElementType::f64, 10, 100, 100,
                                   DrawRequest{gen::InputKind::logits, 1.0, 2, true}, out, 1);
            }).find("logits of type f64 are not supported"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sampler.sample_logits(logits, 10, 100, 99, 1.0, 2, true, out, 1); })
                .find("ld = 99 is less than K = 100"),
            std::string::npos);
  // An empty batch needs no GPU and reports the spec it would use.
  const SampleReport report = sampler.sample_logits(logits, 0, 100, 100, 0.5, 3, false, out, 1);
  EXPECT_EQ(gen::kernel_name(report.spec).rfind("bfly_sample_logits_distinct_f32_", 0), 0u)
      << gen::kernel_name(report.spec);
}

// The packed arguments of several draws from logits: the temperature as a double and num_samples, then the
// single-draw kernel's out, counters, seed and iteration.
TEST(Sampler, DrawsArgumentsFollowTheFamily) {
  const DrawRequest request{gen::InputKind::logits, 0.25, 7, true};
  const gen::KernelSpec spec = draws_spec(1000, gen::ElementType::bf16, request);
  EXPECT_EQ(gen::kernel_name(spec), "bfly_sample_logits_bf16_w16_k1000_r8_addsub");
  auto* out = reinterpret_cast<int*>(0x2000);
  gen::PackedArgs args = draws_arguments(spec, reinterpret_cast<const void*>(0x1000), 10, 1000, request, out, 42, 9);
  EXPECT_EQ(args.integer("num_samples"), 7);
  EXPECT_EQ(args.integer("iteration"), 9);
  EXPECT_EQ(*static_cast<const double*>(args.data()[gen::family_of(spec).index_of("temperature")]), 0.25);
  EXPECT_EQ(args.pointer("out"), out);
  const gen::KernelSpec weights = draws_spec(71, gen::ElementType::f64, DrawRequest{.num_samples = 3});
  EXPECT_EQ(gen::kernel_name(weights), "bfly_sample_draws_f64_w16_k71_r8_swap");
}

// Long rows, or few rows of K >= 4096: several draws take sample_split's forms where one draw takes sample_split
// (gen::choose_sample_spec's rule), with and without replacement; elsewhere the row kernel's forms. The split
// forms' packing adds the scratch after the counters.
TEST(Sampler, DrawsSplitLongRows) {
  const DrawRequest logits{gen::InputKind::logits, 0.7, 2, true};
  EXPECT_EQ(gen::kernel_name(draws_spec(131072, gen::ElementType::bf16, logits, {}, 16)),
            "bfly_sample_split_logits_bf16_w32_k131072_r0_addsub");
  EXPECT_EQ(gen::kernel_name(draws_spec(32768, gen::ElementType::f32, logits)),  // M unknown: K decides
            "bfly_sample_split_logits_f32_w32_k32768_r0_addsub");
  EXPECT_EQ(gen::kernel_name(draws_spec(8192, gen::ElementType::f32, DrawRequest{.num_samples = 4}, {}, 488)),
            "bfly_sample_split_draws_f32_w32_k8192_r0_addsub");
  EXPECT_EQ(draws_spec(8192, gen::ElementType::f32, DrawRequest{.num_samples = 4}, {}, 1 << 20).operation,
            gen::Operation::sample);  // many rows of K < 16384: the row kernel
  EXPECT_EQ(gen::kernel_name(draws_spec(131072, gen::ElementType::f32,
                                        DrawRequest{.num_samples = 4, .replacement = false}, {}, 16)),
            "bfly_sample_split_distinct_f32_w32_k131072_r0_addsub");  // distinct draws split too
  gen::SampleChoice row_kernel;
  row_kernel.operation = gen::Operation::sample;
  EXPECT_EQ(draws_spec(131072, gen::ElementType::f32, logits, row_kernel, 16).operation, gen::Operation::sample);

  const gen::KernelSpec spec = draws_spec(131072, gen::ElementType::f32, logits, {}, 16);
  auto* out = reinterpret_cast<int*>(0x2000);
  auto* parts = reinterpret_cast<void*>(0x3000);
  auto* arrivals = reinterpret_cast<unsigned long long*>(0x4000);
  gen::PackedArgs args =
      draws_arguments(spec, reinterpret_cast<const void*>(0x1000), 16, 131072, logits, out, 42, 9, parts, arrivals);
  EXPECT_EQ(args.pointer("part_totals"), parts);
  EXPECT_EQ(args.pointer("arrivals"), arrivals);
  EXPECT_EQ(args.integer("num_samples"), 2);
  // Logits keep each CTA's maximum after the part totals.
  const gen::LaunchGeometry g = gen::launch_geometry(spec);
  EXPECT_EQ(gen::part_totals_per_row(spec), g.parts_per_row + g.ctas_per_row);
  gen::KernelSpec weights = spec;
  weights.input = gen::InputKind::weights;
  EXPECT_EQ(gen::part_totals_per_row(weights), g.parts_per_row);
  EXPECT_THROW(draws_arguments(spec, reinterpret_cast<const void*>(0x1000), 16, 131072, logits, out, 42, 9),
               Error);  // no scratch
}

TEST(Driver, GpuAvailableExplainsWhyNot) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "this machine has a GPU; the test is for machines without one";
  EXPECT_TRUE(why.find("no CUDA driver found (libcuda.so.1 could not be opened") != std::string::npos ||
              why.find("no CUDA device") != std::string::npos)
      << why;
  // A valid call then fails with the same clear reason, not a crash.
  Sampler sampler;
  const std::string error =
      error_of([&] { sampler.sample(reinterpret_cast<const float*>(0x1000), 10, 64, 64, reinterpret_cast<int*>(0x2000), 1); });
  EXPECT_EQ(error, why);
}

}  // namespace
}  // namespace bfly::rt

namespace bfly::rt {
namespace {

TEST(LdaZStep, ChooseSpecRule) {
  const LdaZOptions none;
  const gen::KernelSpec small = gen::choose_lda_z_spec(100, gen::ElementType::f32, none);
  EXPECT_EQ(small.operation, gen::Operation::lda_z_doc);
  EXPECT_EQ(small.W, 16);
  EXPECT_EQ(gen::choose_lda_z_spec(256, gen::ElementType::f32, none).W, 16);
  EXPECT_EQ(gen::choose_lda_z_spec(512, gen::ElementType::f32, none).W, 16);
  EXPECT_EQ(gen::choose_lda_z_spec(1024, gen::ElementType::f32, none).W, 32);
  EXPECT_EQ(gen::choose_lda_z_spec(512, gen::ElementType::f64, none).W, 32);
  EXPECT_EQ(gen::choose_lda_z_spec(1024, gen::ElementType::f64, none).variant, gen::Variant::addsub);
  LdaZOptions paper;
  paper.operation = gen::Operation::lda_z;
  EXPECT_EQ(gen::choose_lda_z_spec(256, gen::ElementType::f32, paper).W, 32);
  EXPECT_EQ(gen::choose_lda_z_spec(1024, gen::ElementType::f64, paper).variant, gen::Variant::swap);
  LdaZOptions forced;
  forced.W = 8;
  forced.operation = gen::Operation::lda_z;
  const gen::KernelSpec spec = gen::choose_lda_z_spec(1024, gen::ElementType::f32, forced);
  EXPECT_EQ(spec.W, 8);
  EXPECT_EQ(spec.operation, gen::Operation::lda_z);
  LdaZOptions short_documents;  // 7 tokens a document on average: half the width, never below 8
  short_documents.mean_document_length = 7.1;
  EXPECT_EQ(gen::choose_lda_z_spec(64, gen::ElementType::f32, short_documents).W, 8);
  EXPECT_EQ(gen::choose_lda_z_spec(1024, gen::ElementType::f32, short_documents).W, 16);
  EXPECT_EQ(gen::choose_lda_z_spec(8, gen::ElementType::f32, short_documents).W, 8);
  short_documents.mean_document_length = 70;  // the paper's corpus: unchanged
  EXPECT_EQ(gen::choose_lda_z_spec(64, gen::ElementType::f32, short_documents).W, 16);
  EXPECT_EQ(gen::choose_lda_z_spec(1024, gen::ElementType::f32, short_documents).W, 32);
  LdaZOptions not_lda;
  not_lda.operation = gen::Operation::sample;
  EXPECT_THROW(gen::choose_lda_z_spec(64, gen::ElementType::f32, not_lda), Error);
}

}  // namespace
}  // namespace bfly::rt
