// choose_sample_spec and choose_lda_z_spec: the measured rules behind the runtime's automatic kernel choice.
#include "bfly/spec/choose.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace bfly::gen {
namespace {

// lda_z_doc: the smallest K given W = 32 (below: the sampling rule, W = 16 from K = 16 on). From the K = 4..1024
// sweeps on the paper-shaped corpus (H100, bench/results/h100-80gb-hbm3-2026-11-23-lda-sweep-f{32,64}.csv): in f32
// W = 16 was faster at 212 of the 253 K >= 16 and W = 32 only at large multiples of 32 (K = 1024: 2.02 ms
// against 2.39); this threshold leaves the choice within 1.2% of the better of the two on average (17% at worst).
// In f64 W = 16 falls behind from K ~ 600 (K = 768: 6.06 ms against 3.14); threshold 512: within 1.5% on average.
constexpr int doc_w32_from_k(ElementType type) { return type == ElementType::f32 ? 1024 : 512; }

// With fewer than kSplitBelowRows rows, sample_split from this K on. On an H100 (1 GiB of weights,
// bench/results/h100-80gb-hbm3-2026-11-23-pass1-experiments.md) f32 K = 4096 (65536 rows, 0.65 of a wave of the row
// kernel) read 0.918 of the ceiling split against 0.776 in rows, while f64 K = 4096 (32768 rows) kept the row kernel
// ahead, 0.911 against 0.869. With pass 1 staged in a deep ring (bench/results/h100-80gb-hbm3-2026-11-27-split-vs-row-
// e8.csv) f32 stays split (K = 4096: 0.909 against 0.868, 8192: 0.924 against 0.892), while f64 reads K = 4097 at
// 0.818 in rows against 0.770 split and ties at 8192 and 16384 (0.904 / 0.900, 0.888 / 0.890).
int split_few_rows_from_k(ElementType type) { return size_of(type) == 8 ? 8192 : 4096; }

// 16-bit weights that the shape rule splits below kSplitFromK keep the row kernel over pairs (staged) from this many
// rows on. At 1 GiB on the H100 (bench/results/h100-80gb-hbm3-2026-11-27-split-pairs-large-k.csv) bf16 K = 8192
// (65536 rows) read 0.827 of the read ceiling in the row kernel over pairs against 0.794 split over pairs (0.698 split
// over single weights), while from K = 16384 on (32768 rows) the split kernel over pairs led, 0.856 against 0.766.
// Odd K too, since its rows take the staged loads over pairs (kNarrowOddSplitFromK below); over single 16-bit weights
// K = 4097 had read 0.119 in rows against 0.264 split (-2026-11-27-k-range-final-*.csv).
constexpr long long kNarrowRowKernelFromRows = 32768;

// 16-bit weights whose rows are off 16 bytes (K odd, or even but not a multiple of 8: the row kernel stages them
// anywhere) from this K up to 4096: sample_split_pairs when they are fewer than kFewRowsSplitBelowRows. At 1 GiB on
// the H100 (bench/results/h100-80gb-hbm3-2026-11-27-odd-row-pairs-staged-sampling.csv) bf16 K = 3001 and 4095 had
// read 0.817 and 0.845 of the read ceiling split in pairs against 0.759 and 0.782 in the row kernel over pairs
// (staged), and even K off 16 bytes from K = 3300 the same (-2026-11-27-anywhere-split-threshold-sampling.csv: K =
// 3300, 3700, 4002 and 4094 0.786-0.862 split against 0.718-0.806), so they were split whatever M. The row kernel
// has since passed the split kernel: on the H100 at 1 GiB (-2026-12-07-s21c2-{bf16,f16}.csv, two runs each in turn;
// -s21c1-fast-bf16.csv at every 53rd K) bf16 K = 3001-4095 off 16 bytes read 0.873-0.898 in rows against
// 0.802-0.873 split, f16 0.859-0.899 against 0.808-0.870 (K = 3300: 0.804 -> 0.889 bf16, 0.811 -> 0.887 f16); over
// M (-s21c2-m.csv: bf16 K = 3300, 3701, 3900, 4095 at 4096-131072 rows) the row kernel led from 8192 rows on (+0.03 to
// +0.15) and the split kernel with 4096 rows (0.42-0.45 against 0.32-0.36), where the row kernel's 128 CTAs leave SMs
// idle. Past 4096 they follow the rule of rows on 16 bytes, the row kernel over pairs from kNarrowRowKernelFromRows
// rows on (-2026-11-27-odd-row-pairs-final-rows-sampling.csv).
constexpr int kNarrowOddSplitFromK = 3001;
constexpr int kNarrowOffLinesSplitFromK = 3300;

// f32 weights (one draw) are split from kF32SplitFromK, not from split_few_rows_from_k, below kSplitBelowRows rows,
// and from kF32FewRowsSplitFromK below kFewRowsSplitBelowRows. At 1 GiB on the H100 the split kernel had read K =
// 3300-4095 at 0.867-0.907 against 0.744-0.872 in rows (bench/results/h100-80gb-hbm3-2026-11-27-anywhere-split-
// threshold-sampling.csv), so from K = 3300 fewer than 131072 rows were split. Against the row kernel of 2026-12-07
// (-2026-12-07-s21c2-f32.csv, two runs each in turn; -s21c1-fast-f32.csv, one run, another H100) K = 3300-3567 read
// 0.881-0.923 in rows against 0.836-0.877 split at every K measured (3300: 0.853 -> 0.896; 3500 +0.006, the least),
// while K = 3600-4095 went either way by machine and K (3700, 3900, 4001, 4095: 0.875, 0.861, 0.868, 0.876 in rows
// against 0.895, 0.906, 0.908, 0.907 split on one; 3620-3885 +0.000 to +0.033 in rows on the other). Over M at K =
// 3300 (-s21c2-m.csv) the row kernel led from 8192 rows on (+0.02 to +0.10) and the split kernel with 4096 (0.53
// against 0.39). The forms (logits, several draws) keep rows_split_by_shape: not measured.
constexpr int kF32SplitFromK = 3600;
constexpr int kF32FewRowsSplitFromK = 3300;

// A device with fast memory (DeviceBalance::fast_memory: the H200, 18.4 bytes an SM and SM cycle) reads the split
// kernel far under the row kernel where the H100 (12.8) had read it ahead. At 1 GiB on the H200
// (bench/results/h200-2026-11-28-s7c2-rs{32,64,16}.csv, 23 K from 3001 to 4095) the row kernel led at every K: f32
// 0.804-0.885 of the read ceiling against 0.637-0.801 split, bf16 over pairs 0.720-0.895 against 0.638-0.723, f64
// 0.739-0.899 against 0.676-0.756; from K = 4096 (-s7c3-big{32,64,16}.csv) f32 kept the row kernel ahead up to
// K = 5001 (0.822-0.835 against 0.663-0.823) and split led from 6000 (0.810 against 0.763; 7001, 8193, 10000, 12001
// and 16383 by 0.04-0.12; 8191 and 8192 within 0.02 either way), f64 kept it ahead to 12001 (K = 8192-12001:
// 0.860-0.880 against 0.686-0.841; 6000 and 7001, the row kernel's rows 2.1 and 1.9 waves, split by 0.03 and 0.11).
// Few rows split (-s7c3-few{32,64,16}.csv): with 4096 rows the split kernel led in every type at K = 3001/3305, 4096
// and 8192 (f32 0.428-0.639 against 0.251-0.330), with 16384 rows the row kernel (f32 0.738-0.850 against
// 0.592-0.809, f64 0.825-0.890 against 0.664-0.836, bf16 0.537-0.774 against 0.474-0.640); in between, f64 K = 16383
// (8193 rows) split led, 0.735 against 0.672 (0.760 against 0.672 in -s7c4-ab-table.txt), and f64 K = 12001 (11184
// rows) the row kernel, 0.875 against 0.686: kFastMemorySplitBelowRows lies between. f16 takes bf16's kernels and
// rule (not measured). The threshold of fast memory lies between the two devices measured (DeviceBalance::fast_memory).
constexpr int kFastMemoryFewRowsSplitFromK = 3000;
constexpr int kFastMemoryF32SplitFromK = 5500;

// The row kernel over pairs of 16-bit weights (sample_pairs) in place of `row` (W = 16), where it was faster. On an
// H100 at 1 GiB (bench/results/h100-80gb-hbm3-2026-11-24-pairs-*.csv) bf16 read 0.67-0.81 of the read ceiling at
// K = 16, 32, 100, 128, 200, 256, 512, 1024 and 2048 against 0.33-0.64 in the row kernel, 0.47-0.70 against 0.15-0.40
// at K = 2000, 3000 and 4094, and f16 the same within 0.05; f32 and f64 pairs lost at nearly every K; odd K (rows
// paired by their phase) read 0.52-0.83 from K = 17 to 3001 against 0.18-0.57 over single weights
// (-2026-11-27-odd-row-pairs-*.csv). Pairs with an odd number of blocks after the first four (K = 1000 and 1002 with
// their remnant searched linearly, 31 blocks; K = 1500, 47) read 0.33-0.43, so the remnant is padded or searched
// linearly, whichever leaves an even number of blocks (K = 1000 padded: 0.62 against 0.58). A row loaded whole (at most
// kWholeRowBlocks blocks with its remnant searched linearly) keeps it searched linearly: padding it lost there
// (-2026-11-27-odd-row-pairs-remnant-sampling.csv: bf16 K = 33, 34 and 100 read 0.41, 0.34 and 0.75 padded against
// 0.83, 0.92 and 0.84, K = 99 and 101 0.78 and 0.77 against 0.76 and 0.75). Rows of odd K that take the staged loads do
// not lose to an odd number of blocks: there the remnant stays searched linearly and the row keeps its pairs
// (-2026-11-27-odd-row-pairs-staged-sampling.csv: bf16 K = 999, 1001 and 1499 read 0.853, 0.847 and 0.817 so against
// 0.814, 0.810 and 0.809 padded). R forced by the caller is kept as it is.
KernelSpec pairs_when_faster(const KernelSpec& row, bool keep_R) {
  KernelSpec pairs = row;
  pairs.operation = Operation::sample_pairs;
  KernelSpec linear = pairs;  // the remnant searched linearly
  linear.R = std::max(pairs.R, pairs.remnant());
  const bool odd_blocks_fast = stages_rows_anywhere(linear);
  if (!keep_R && pairs.remnant() > 0) {
    const int linear_blocks = pairs.columns() / pairs.W;
    if (linear_blocks % 2 == 0)
      pairs.R = std::max(pairs.R, pairs.remnant());
    else if (linear_blocks > kWholeRowBlocks && !odd_blocks_fast)
      pairs.R = std::min(pairs.R, pairs.remnant() - 1);
  }
  pairs.validate();
  // Every row keeps its pairs, whatever its blocks. Odd K: single 16-bit weights at odd K read 0.21-0.30 from K = 101
  // to 255 (-2026-11-27-odd-row-pairs-single-sampling.csv). Staged rows (staged anywhere, or with an odd number of
  // blocks that no remnant can make even, K a multiple of 32): bf16 K = 4000, 125 blocks, read 0.141 over single
  // weights (-2026-11-27-anywhere-split-threshold-sampling.csv). Rows of 5 and 7 blocks with no remnant (K = 160 and
  // 224), which load through the row slots: bf16 0.827 and 0.806 over pairs against 0.274 and 0.279 over single
  // weights, f16 0.675 and 0.807 (-2026-11-27-odd-short-rows-pairs-160-224-sampling.csv). The odd numbers of blocks
  // that lost were those of rows built block by block, which no row kernel over pairs takes any more.
  return pairs;
}

// One draw from f32 weights takes W = 32 from this K to kF32OneBlockToK: a row in one block of 32 (K = 23-31 with
// padding on the left, K = 33-40 with a remnant of up to 8 searched linearly) rather than W = 16's two blocks, of
// which K = 25-31 pad 1-7 columns. On an H100 at 1 GiB (bench/results/h100-80gb-hbm3-2026-11-28-short-w-*.csv, every
// K from 17 to 64) K = 25-31 read 0.72-0.88 of the read ceiling at W = 16 and 0.94 at W = 32, K = 24 and 34-40
// 0.896-0.914 against 0.927-0.951, K = 23, 32 and 33 about 0.01 more; W = 32 lost below (K = 21: 0.905 against 0.924)
// and above, where its remnant is padded to a second block (K = 41: 0.550 against 0.944). f64 stays at W = 16
// (0.93-0.96 there but K = 24, 0.908). The forms (logits, several draws) and the LDA z-step force the operation and
// keep W = 16.
constexpr int kF32OneBlockFromK = 23;
constexpr int kF32OneBlockToK = 40;

// The row kernel for K and type: W = 16 (8 for K >= 8, else 4; 32 for one draw from f32 weights of 23-40), the
// variant and R of the rule, and for f16 and bf16, unless the caller forced the operation or W, the pairs kernel
// where it was faster.
KernelSpec row_kernel_spec(int K, ElementType type, const SampleChoice& forced, Operation operation) {
  KernelSpec spec;
  spec.K = K;
  spec.type = type;
  spec.W = K >= 16 ? 16 : K >= 8 ? 8 : 4;  // W = 16 held up best over K on an H100 (bench/results, 2026-11-22)
  if (type == ElementType::f32 && !forced.operation && K >= kF32OneBlockFromK && K <= kF32OneBlockToK) spec.W = 32;
  if (forced.W) spec.W = *forced.W;
  // addsub (the paper's faster build) for f32; for f64 the swap build matched or beat it at every K of the H100
  // sweep and addsub fell to 0.77 and 0.85 of the read ceiling at K = 16 and 1024 (swap: 0.87, 0.93).
  spec.variant = forced.variant.value_or(type == ElementType::f64 ? Variant::swap : Variant::addsub);
  spec.R = forced.R.value_or(std::min(8, spec.W - 1));
  spec.operation = operation;  // sample, or sample_pairs (the same table over pairs of weights)
  spec.validate();
  if (forced.operation || forced.W || !is_narrow(type)) return spec;
  return pairs_when_faster(spec, forced.R.has_value());
}

// Short rows on a device with fast memory. The rules above came from the H100, where rows of 16 to 128 weights read
// 0.90-0.95 of the read ceiling in f32 and f64; on the H200 (1.4 times the H100's bytes an SM cycle) the same kernels
// read 0.71-0.89 at many K from 16 to 72 (sample_small 0.46-0.65 at f32 K = 6-15) while another of bfly's kernels
// read 0.86-0.95 there. At 1 GiB on the H200, every K from 2 to 64 and every fourth from 68 to 128, each candidate
// in one process (bench/results/
// h200-2026-11-29-s11c7-sweep-{f32,f64}.log, -s11c8-sweep-{bf16,f16}.log; the fractions in their CSVs):
// - f32: over pairs of weights at W = 16, K = 6-15 read 0.56-0.88 against sample_small's 0.46-0.65 (K = 12: 0.882
//   against 0.600), K = 24-38 0.86-0.92 against W = 32's 0.77-0.90 (K = 24: 0.905 against 0.766); K = 23 reads 0.865
//   at W = 16 against 0.748 at W = 32; over pairs at W = 32, K = 48-56 read 0.89-0.92 against 0.73-0.77 and the even K
//   of 40-72 0.90-0.92 against 0.78-0.89 (K = 64: 0.923 against 0.805), while odd K of 41-47 and 57-63 keep W = 16
//   (pairs 0.76-0.91 there against 0.82-0.92). From K = 76 the row kernel led (0.90-0.94).
// - f64: K = 5 and 6 read 0.88 in the row kernel against sample_small's 0.78 and 0.81; sample_small read K = 16-24
//   at 0.90-0.92 against the row kernel's 0.78-0.90; over pairs at W = 16, K = 25-34 and 40 read 0.89-0.93 against
//   0.75-0.88; the row kernel at W = 32, K = 35-39 0.85-0.92 against 0.81-0.88; over pairs at W = 32, K = 48, 64 and
//   80 0.90-0.95 against 0.86-0.88 (other even K there: +0.01 at most). Elsewhere within 0.02 of the best.
// - bf16 and f16: over pairs at W = 16, K = 6-15 read 0.28-0.61 against sample_small's 0.23-0.32; over pairs at
//   W = 32, K = 49-72 read 0.59-0.84 against W = 16's 0.49-0.74 (K = 64: 0.836 against 0.694); K = 16-48 and from 76
//   kept their kernels (within 0.01, or ahead).
// Rows kept in registers (the row kernel over pairs whose whole row is its remnant, K / 2 <= R, loads its row 8 or 16
// bytes at a time and searches it there; docs/DESIGN.md section 12): f32 K = 16 over pairs at W = 16 read 0.903
// against the row kernel's 0.809, K = 18 and 20 at W = 32 with R = 31 0.877 and 0.907 against 0.811 and 0.832, K = 22
// over pairs at W = 16 0.865 against 0.854; bf16 and f16 K = 32-56 of K = 0 mod 4 at W = 32 with R = 31 read 0.77-0.89
// against 0.70-0.80 (K = 48: 0.891 against 0.699; bench/results/h200-2026-11-29-s12c3-sweep-{f32,bf16,f16}.csv), and
// K = 34-58 of K = 2 mod 4, their rows off 8 bytes loaded in the 16-byte pieces that hold them, 0.74-0.85 against
// 0.69-0.81 (K = 50: 0.847 against 0.689; -s12c7-sweep-{bf16,f16}.csv); K = 60 and 62 kept their kernels (0.78-0.80
// with R = 31 against 0.80-0.83). Rows of odd K kept by their phase (from 60 bytes): bf16 odd K = 31-61 at W = 32
// with R = 31 read 0.71-0.85 against 0.56-0.70 (K = 49: 0.852 against 0.576), f16 0.69-0.83 against 0.57-0.72; f32
// odd K = 17-25 and K = 22 at W = 16 with R = 15 0.854-0.898 against 0.80-0.85 (K = 17: 0.897 against 0.802), while
// K = 24-30 at W = 16, R = 15 lost 0.04-0.13 (bench/results/h200-2026-12-03-s13c2-ab-table.txt, -s13c3-, -s13c2-sweep-
// f32.csv).
// Forms, LDA and a caller's forced operation or W keep the rules above.
struct ShortRowKernel {
  Operation operation;
  int W;
  std::optional<int> R = std::nullopt;  // the row kernel's own (min(8, W - 1)) unless set
};
constexpr int kWholeRowR = 31;  // W = 32 with every row of up to 62 weights its remnant, kept in registers
constexpr int kHalfRowR = 15;   // W = 16 with every row of up to 30 weights its remnant, kept in registers
std::optional<ShortRowKernel> fast_memory_short_rows(int K, ElementType type) {
  const bool even = K % 2 == 0;
  switch (type) {
    case ElementType::f32:
      if (K >= 6 && K <= 16) return ShortRowKernel{Operation::sample_pairs, 16};
      if (K == 18 || K == 20) return ShortRowKernel{Operation::sample_pairs, 32, kWholeRowR};
      if ((!even && K >= 17 && K <= 25) || K == 22) return ShortRowKernel{Operation::sample_pairs, 16, kHalfRowR};
      if (K >= 24 && K <= 38) return ShortRowKernel{Operation::sample_pairs, 16};
      if ((even && K >= 40 && K <= 72) || (K >= 48 && K <= 56)) return ShortRowKernel{Operation::sample_pairs, 32};
      return std::nullopt;
    case ElementType::f64:
      if (K == 5 || K == 6) return ShortRowKernel{Operation::sample, 16};
      if (K >= 16 && K <= 24) return ShortRowKernel{Operation::sample_small, 32};
      if ((K >= 25 && K <= 34) || K == 40) return ShortRowKernel{Operation::sample_pairs, 16};
      if (K >= 35 && K <= 39) return ShortRowKernel{Operation::sample, 32};
      if (K == 48 || K == 64 || K == 80) return ShortRowKernel{Operation::sample_pairs, 32};
      return std::nullopt;
    case ElementType::bf16:
    case ElementType::f16:
      if (K >= 6 && K <= 15) return ShortRowKernel{Operation::sample_pairs, 16};
      if (K >= 31 && K <= 61 && K != 60) return ShortRowKernel{Operation::sample_pairs, 32, kWholeRowR};
      if (K >= 49 && K <= 72) return ShortRowKernel{Operation::sample_pairs, 32};
      return std::nullopt;
  }
  return std::nullopt;
}

// Short rows of 16-bit weights on a device without fast memory (the H100). The row kernel over pairs at W = 16 read
// bf16 K = 31-63 at 0.69-0.92 of the read ceiling, the rows of two blocks the least (K = 47-59: 0.69-0.87). At 1 GiB
// on an H100, every K from 16 to 65 over every kernel that may draw them, one run in one process (bench/results/
// h100-80gb-hbm3-2026-12-07-s23c1-short-bf16-sampling.csv), over pairs at W = 32 with every row its remnant (R = 31,
// kept in registers) K = 31-43 and 46-49 read 0.893-0.932 against 0.693-0.921 (K = 31 0.831 -> 0.924, 47 0.772 ->
// 0.893, 49 0.693 -> 0.895), odd K = 51-59 0.864-0.902 against 0.717-0.812; over pairs at W = 32 with R = 8, the even
// K = 50-64 and K = 61 and 63 0.895-0.948 against 0.769-0.934 (K = 63 0.852 -> 0.942), where R = 31 read 0.854-0.916;
// K = 16 at W = 32 0.866 against 0.836. K = 44 and 45 lost at W = 32 (-0.019, -0.010), K = 17-30 moved within 0.01
// and K = 65 lost 0.038: they keep their kernels. f16 takes the same rule, as it does on fast memory.
std::optional<ShortRowKernel> slow_memory_short_rows(int K, ElementType type) {
  if (!is_narrow(type)) return std::nullopt;
  const bool odd = K % 2 != 0;
  if (K == 16 || (K >= 31 && K <= 43) || (K >= 46 && K <= 49) || (odd && K >= 51 && K <= 59))
    return ShortRowKernel{Operation::sample_pairs, 32, kWholeRowR};
  if (K >= 50 && K <= 64) return ShortRowKernel{Operation::sample_pairs, 32};
  return std::nullopt;
}

// Rows that a device with fast memory draws faster without their warps' copies (KernelSpec::warp_copies = false:
// the staged ring or the register loads instead). The copies of the longest rows their rule takes hold 4 or 5
// one-warp CTAs an SM, their pass 1 bound by its own latency (below); the ring holds more warps and copies ahead of
// them. On the H200 at 1 GiB (bench/results/h200-2026-12-03-s14c4-switches-*.csv, -s14c6-switches-*.csv: the same
// binary with copies and without, by an experimental switch), without copies:
// - f32 K = 335-359 read 0.80-0.92 against the copies' 0.65-0.84 (K = 337 0.673 -> 0.895, 339 0.659 -> 0.893; with
//   the remnant padded, below, 0.81-0.83), while K = 326-334 lost 0.01-0.14;
// - bf16 and f16 odd K = 433-447 read 0.90-0.91 against 0.80-0.81, odd K from 477 0.83-0.91 against 0.60-0.82 (K =
//   561 0.675 -> 0.900, 693 0.601 -> 0.896), even K from 642 0.81-0.89 against 0.67-0.82 (K = 678 0.674 -> 0.874);
//   even K under 642 keep them: even K = 498-552 read 0.87-0.95 with copies against 0.75-0.82 (a few even K of
//   486-666 read 0.01-0.05 more without, not taken), and even K of 196-640 every eighth with their remnant padded
//   (below) 0.83-0.94 against 0.58-0.91 without (-s18c6-copies-bf16-even-196-640.csv: bfly-bench's bfly-auto and
//   bfly-auto-nocopy-r0). Odd K from 337 go without copies and pad their remnant (below) but in three bands of K
//   where the copies read more: every odd K of 333-481, the tree without copies from K = 337 beside the one before it
//   (-s18c7-variants-{bf16,f16}.csv, one run each), read +0.010 to +0.071 at K = 337-361, 367-381, 399-431 and 459-475
//   (bf16 K = 349 0.840 -> 0.877, 429 0.830 -> 0.900, 473 0.875 -> 0.913; f16 the same), but lost up to 0.027 at K =
//   363-365, 383-397 and 449-457, where the copies read 0.89-0.91 (f16 K = 363 0.893 -> 0.866, 385 0.901 -> 0.878),
//   so those keep them (K = 433-447 went without them before, within 0.003 either way). Odd K of 191-335 read
//   0.85-0.92 with copies against 0.57-0.80 without (-s18c6-copies-{bf16,f16}-odd-*.csv, bf16 every fourth odd K,
//   f16 every eighth: bfly-auto against bfly-auto-nocopy and bfly-auto-nocopy-r0);
// - f64 keeps its copies (K = 61-177: 0.88-0.95 against 0.77-0.81).
constexpr int kF32UncopiedFromK = 335;
constexpr int kNarrowOddUncopiedFromK = 337;
struct KBand {
  int from, to;
  bool holds(int K) const { return K >= from && K <= to; }
};
constexpr KBand kNarrowOddCopiedBands[] = {{363, 365}, {383, 397}, {449, 457}};  // odd K from 337 that keep copies
constexpr int kNarrowEvenUncopiedFromK = 642;
bool skips_warp_copies(const KernelSpec& spec) {
  if (!copies_warp_rows(spec)) return false;
  const int K = spec.K;
  switch (spec.type) {
    case ElementType::f32:
      return K >= kF32UncopiedFromK;
    case ElementType::bf16:
    case ElementType::f16:
      if (K % 2 == 0) return K >= kNarrowEvenUncopiedFromK;
      if (K < kNarrowOddUncopiedFromK) return false;
      return std::ranges::none_of(kNarrowOddCopiedBands, [K](KBand band) { return band.holds(K); });
    case ElementType::f64:
      return false;
  }
  return false;
}

// Rows whose remnant a device with fast memory pads to a block (R = 0) rather than searching it linearly, judged on the
// kernel the rules give at the row kernel's own R; the chooser then derives the kernel again with R = 0 (its copies and
// ring rules asked anew; for every K below that is the kernel measured with R = 0 forced).
// - f32 rows copied by their warps (K up to kF32UncopiedFromK). The copies hold 4 or 5 one-warp CTAs an SM, whose pass
//   1 on the copy is bound by its own latency (ncu: 75-85 % of the stall samples there, 13-17 % waiting for the copy;
//   bench/results/h200-2026-12-03-s14c3-ncu-*), and a remnant searched linearly costs them more than the padded block:
//   f32 K = 337 (remnant 1) issued 96 M instructions against K = 345's 83 M (padded). On the H200 at 1 GiB the 66 f32 K
//   measured of the copies with a remnant of 1-8 columns (K = 65-358) read 0.81-0.96 of the read ceiling with R = 0
//   against 0.65-0.94, none lower (+0.004 to +0.17: K = 71 0.796 -> 0.856, 97 0.810 -> 0.928, 280 0.734 -> 0.904, 325
//   0.784 -> 0.935; K = 337 0.672 -> 0.808, where no copy reads 0.895 and is taken, above), the 65 padded K within
//   0.006 either way (-s14c4-switches-f32.csv, -s14c5-switches-f32.csv: the same binary with and without R = 0).
// - f32 rows staged without copies (from K = 335) of K = 8 mod 16 up to K = 904, and K = 338, 342, 370 and 374 (K mod
//   32 = 18 or 22). bfly-bench's bfly-auto beside bfly-auto-r0 on the H200 at 1 GiB, two runs each
//   (bench/results/h200-2026-12-04-s18c10-ab-f32-rep{1,2}.csv): K = 8 mod 16 +0.004 to +0.070 from 344 to 904 but
//   0.000 to -0.002 at K = 760, 824 (K = 344 0.82 -> 0.89, 408 0.86 -> 0.92, 440 0.88 -> 0.92), within 0.005 from 920
//   and -0.022 at K = 1032; K = 338, 342, 370 +0.05 to +0.07 (338 0.84 -> 0.91), 374 +0.009, while K mod 32 = 18 or 22
//   past 400 moved -0.008 to +0.006, and K = 354 and 358 lost 0.01 (-s18c9-variants-f32-335-420.csv, where odd K lost
//   up to 0.065 and K = 4 mod 8, staged anywhere, moved 0.01 at most).
// - f64 rows at W = 16 up to K = 300 outside the short rows' kernels (copies up to K = 180, the ring past it). Compiled
//   on the H200 for sm_90 (bench/results/h200-2026-12-04-s18c1-call.log.gz), the odd K read in row order took 240-254
//   registers at R = 8 against 160-162 at R = 0; the even K of the ring took 255 either way (with 488-1400 B of
//   stack), so registers do not explain all of the gain. On the H200 at 1 GiB, bfly-bench's bfly-auto beside
//   bfly-auto-r0 (bench/results/h200-2026-12-04-s18c1-ab-f64-*.csv: every K of K mod 16 = 1-8 from 17 to 400, every
//   fifth to 4096; -s18c4-ab-f64-rule.csv: every K the rule takes, one run each), and the tree with this rule beside
//   the one before it (-s18c5-variants-f64.csv): the 125 K the rule takes +0.017 at the median, -0.010 (K = 167) to
//   +0.161 (K = 131 0.79 -> 0.95; under 0.90 31 -> 3), the copies +0.025, the ring +0.013 (in row order at odd K as
//   well). K = 181, 183 and 199 (row order) lost 0.006-0.021 in each run and keep R = 8; past K = 300 even K gained up
//   to 0.02 and odd K lost up to 0.015, and from K = 400 the medians were within 0.006 either way with -0.042 at worst,
//   so those keep R = 8; the short rows' kernels (K = 33-40 at W = 32 or over pairs) lost 0.3-0.46.
// - bf16 and f16 rows over pairs copied by their warps, even K from 190 (to 641, where the copies end on fast memory,
//   above), and odd K of 337-700 whose copies fast memory skips, but K = 334 and 556. On the H200 at 1 GiB, the tree
//   with this rule beside the one before it at every K the rule took then (-s18c5-variants-{bf16,f16}.csv, one run
//   each; odd K from 477): the 139 even K +0.056 at the median in bf16 and +0.058 in f16, none lower (K = 600 0.75 ->
//   0.89; under 0.90 91 -> 23 and 103 -> 29), the 78 odd K +0.014 and +0.016, -0.004 at worst (K = 477 0.82 -> 0.91;
//   77 -> 34 and 78 -> 54); the same in bfly-auto beside bfly-auto-r0 (-s18c4-ab-bf16-rule.csv). Odd K of 337-475
//   were measured with their copies off and R = 0 together (above). K = 334 lost 0.025-0.029 in both types in five
//   runs (-s18c3-ab-16bit-300-380-rep*.csv), its neighbours gaining, and K = 556 0.010-0.013 in three. Elsewhere the
//   sign went with the compiler's registers more than with the remnant (-s18c1-ab-{bf16,f16}-*.csv, bf16 every fifth
//   K of 190-4096, f16 every eleventh): odd copied K -0.117 to +0.101 (bf16 K = 335 lost the most), the rings past
//   K = 642 (984 K) -0.058 to +0.051 with a median of -0.001, so those keep their R.
// A caller's forced R keeps its own; the forms (rt::draws_spec) force their operation and LDA has its own kernels.
constexpr int kFastMemoryF32StagedPaddedToK = 904;
constexpr int kFastMemoryF32StagedPaddedK[] = {338, 342, 370, 374};
constexpr int kFastMemoryF64PaddedToK = 300;
constexpr int kFastMemoryF64LinearK[] = {181, 183, 199};  // R = 8 read more in every run
constexpr int kFastMemoryNarrowEvenPaddedFromK = 190;
constexpr int kFastMemoryNarrowLinearK[] = {334, 556};  // R = 8 read more in every run, both types
constexpr int kFastMemoryNarrowOddPaddedToK = 700;
template <std::size_t N>
bool listed(int K, const int (&list)[N]) {
  return std::ranges::find(list, K) != std::end(list);
}
bool pads_remnant_on_fast_memory(const KernelSpec& spec, bool short_row_kernel) {
  if (!spec.linear_remnant()) return false;
  const int K = spec.K;
  switch (spec.type) {
    case ElementType::f32:
      if (copies_warp_rows(spec)) return true;
      if (spec.operation != Operation::sample || spec.W != 16 || K < kF32UncopiedFromK) return false;
      return (K % 16 == 8 && K <= kFastMemoryF32StagedPaddedToK) || listed(K, kFastMemoryF32StagedPaddedK);
    case ElementType::f64:
      if (listed(K, kFastMemoryF64LinearK)) return false;
      return !short_row_kernel && spec.operation == Operation::sample && spec.W == 16 && K <= kFastMemoryF64PaddedToK;
    case ElementType::bf16:
    case ElementType::f16:
      if (short_row_kernel || spec.operation != Operation::sample_pairs) return false;
      if (listed(K, kFastMemoryNarrowLinearK)) return false;
      if (K % 2 == 0) return K >= kFastMemoryNarrowEvenPaddedFromK && copies_warp_rows(spec);
      return K >= kNarrowOddUncopiedFromK && K <= kFastMemoryNarrowOddPaddedToK && !spec.warp_copies;
  }
  return false;
}

// Rows on 16 bytes but off 32-byte sectors (f64 K = 2 mod 4, f32 K = 4 mod 8, 16-bit K = 8 mod 16 over pairs), and rows
// that step 32 bytes past 64-byte lines (below), that the ring would read at one place (every row of a tile at the same
// place) are staged anywhere (KernelSpec::ring_anywhere; first on the H200, since on every device but where the H100
// lost, below). At one place a row's copies land in the ring rotated by its phase, and where the phases of neighbouring
// rows differ by an odd number of 16-byte pieces a warp's 16-byte copies conflict in shared memory and ask L2 again for
// the sectors they share: ncu on the H200 (bench/results/h200-2026-12-03-s15c1-ncu-f64-*) counted 24 L2 sectors and
// 10-12 shared-memory wavefronts a copy instruction at f64 K = 182 and 190 against 16 and 4-6 at K = 184 and 192 (L2
// hit rate 37 % against 6-8 %: the copies served twice). Staged anywhere, memory's lines land in place and each row is
// read at its own phase, whose 16-byte steps keep the tile's reads free of conflicts. On the H200 at 1 GiB, the same
// binary with and without (an experimental switch; -s15c2-switches-{f64-short,f32}.csv, -s15c3-switches-{bf16,f16}.csv):
// - f64 K = 182-390 of K = 2 mod 4 read 0.867-0.934 against 0.843-0.886 (median 0.870 -> 0.916, every K up: K = 202
//   0.878 -> 0.925, 366 0.861 -> 0.918), while K = 0 mod 4 and odd K stayed within 0.007 (rule not taken there);
// - f32 K = 340-388 of K = 4 mod 8 (the uncopied rows): +0.028 to +0.044 at 340, 356, 364, 372 and 388, -0.022 at 348
//   and -0.004 at 380 (K = 340 0.798 -> 0.842); from K = 392 f32 and f64 were staged anywhere already;
// - bf16 K = 984-2040 of K = 8 mod 16 over pairs +0.028 to +0.056 (median 0.864 -> 0.907; K = 1096 0.874 -> 0.930),
//   f16 K = 984-4088 +0.026 to +0.056 (and bf16 K = 2056-4088 +0.032 to +0.045), while K = 648-968 went either way
//   (bf16 -0.029 to +0.049, f16 -0.023 to +0.028) and keep the ring at one place, as do K = 0 mod 16 (median 0.000 and
//   -0.005 staged anywhere).
// f64 rows of K = 4 mod 8 lie on sectors but step 32 bytes, so that neighbouring rows land 32 bytes apart at one place
// (ncu: 6 wavefronts a copy at K = 184 against 4 at 192, the same sectors). Staged anywhere, the 67 f64 K = 492-1020
// of K = 4 mod 8 read a median of 0.875 -> 0.905 (+0.006 to +0.062, K = 1020 0.860 -> 0.922; -s15c6-switches-f64.csv,
// two runs each in turn), and on another H200 0.892 -> 0.903 (-0.004 to +0.042; -s15c2-switches-f64-long.csv), while
// K = 404-484 went either way (-0.011 to +0.025), f64 K = 8 mod 16 lost (median -0.006), and f32 K = 8 mod 16 and
// 16-bit K = 16 mod 32 over pairs moved either way (medians +0.001 and +0.006; -0.016 to +0.017 and -0.053 to +0.022):
// only f64 K = 4 mod 8 from 492 to 1020 took it then.
// The rule against main's head, one run each (-s15c4-variants-*.csv): f64 K = 182-390 of K = 2 mod 4 median 0.871 ->
// 0.916 (under 0.90: 53 -> 6 K), bf16 K = 984-4088 of K = 8 mod 16 0.862 -> 0.908 (70 -> 12), f16 0.861 -> 0.905
// (24 -> 9), f32 K = 340-388 0.845 -> 0.870 (348 -0.023 again), every other K within 0.006.
// The H100 had measured single weights staged anywhere only from K = 392 (kernel_spec.cpp, rows_off_sectors: f64 K =
// 182-262 lost there on 2026-11-28); measured again on the kernels of 2026-12-07 they gained (below). The forms and LDA
// never stage this way.
// Longer f64 rows of K = 4 mod 8 (the nineteenth session, bfly-bench's bfly-auto beside bfly-auto-anywhere on two
// H200s): every 24th such K of 1028-4092, two runs, median +0.020 (116 of 128 K up; -s19c5-f64-anywhere-rep{1,2}.csv),
// and every such K on the second H200, one run, +0.038 (K = 2044 0.838 -> 0.917; -s19c6-f64-anywhere-all.csv, K =
// 1868-2140 and 3044-3236 a second time in -bands.csv). K = 3092, 3124 and 3156 lost on both machines (-0.007 to
// -0.031), K = 1940 and 2084 on one (-0.022, -0.008) and gained nothing on the other. The rule against main on a
// third H200 (every 24th K, one run each in turn; -s19c7-variants-f64.csv): median +0.016 (under 0.90 121 -> 103 of
// 125 K; K = 2732 0.846 -> 0.905), but K = 1964, 3140 and 3188 -0.010 to -0.016, as on the first machine (the second
// gained 0.02-0.03 there). Those eight keep the ring at one place; the rule stops at 4092, the last such K measured.
// f32 rows of K = 8 mod 16 and 16-bit rows of K = 16 mod 32 over pairs step 32 bytes past 64-byte lines as those f64
// rows do (the twentieth session, bfly-auto beside bfly-auto-anywhere, every such K, two runs on one H200;
// -s20c{1,2}-{f32,bf16,f16}-anywhere-all.csv): f32 K = 1032-4088 median +0.012 (157 of 192 K up by more than 0.005;
// K = 3512 0.810 -> 0.860), but K = 4008 and 4040 down 0.012 and 0.007 over the two runs; bf16 K = 1040-4080 +0.010
// (82 of 96 up, none down), f16 +0.007 (61 up, none down). Below K = 1020 the fifteenth session found them either
// way (above), so they keep the ring at one place there.
// The H100 (the twenty-third session, one H100 at 1 GiB: the same kernels first forced through bfly-bench's
// bfly-auto-anywhere beside bfly-auto, two runs, then main against main with these rules on every device, one run each
// in turn, twice; bench/results/h100-80gb-hbm3-2026-12-07-s23c2-rules-*.csv and -s23c4-ab-*.csv) gained as the H200
// where single weights lie off sectors and where 16-bit rows of K = 8 mod 16 do: f64 K = 186-386 of K = 2 mod 4 read
// +0.020 to +0.046 (median +0.037; under 0.90: 17 -> 0 of 26 K), f32 K = 364 and 380 +0.032 (K = 140-348 within
// 0.003), bf16 K = 984-4056 of K = 8 mod 16 +0.019 to +0.032 (median +0.025, all 33 K up), f16 +0.017 to +0.029;
// f64 K = 4 mod 8 of 492-4092 median +0.007 (46 of 76 K up, K = 3132 -0.027, beside the H200's band of losses at
// 3092-3188, and so kept at one place). It lost where rows step 32 bytes past 64-byte lines in f32 and 16-bit weights
// (f32 K = 1032-3528 of K = 8 mod 16 median -0.004, 9 of 27 K down; 16-bit K = 16 mod 32 -0.003, 8 of 36 down) and
// at f64 K = 138-178 of K = 2 mod 4 (-0.001 to -0.004, 6 K): those keep the ring at one place on a device without
// fast memory.
constexpr int kSectorBytes = 32, kHalfLineBytes = 32, kLineBytes = 64;
constexpr int kPairsAnywhereFromK = 984;
constexpr int kSlowMemoryOffSectorsFromK = 182;  // single weights off sectors, without fast memory
constexpr int kF64HalfLinesFromK = 492, kF64HalfLinesToK = 4092;  // f64 K = 4 mod 8
constexpr int kF64HalfLinesAtOnePlaceK[] = {1940, 1964, 2084, 3092, 3124, 3132, 3140, 3156, 3188};
constexpr int kF32HalfLinesFromK = 1032, kF32HalfLinesToK = 4088;  // f32 K = 8 mod 16, fast memory only
constexpr int kF32HalfLinesAtOnePlaceK[] = {4008, 4040};
constexpr int kPairsHalfLinesFromK = 1040, kPairsHalfLinesToK = 4080;  // 16-bit K = 16 mod 32, fast memory only
bool stages_half_lines_anywhere(const KernelSpec& spec, bool fast_memory) {
  const int K = spec.K;
  if (static_cast<long long>(K) * size_of(spec.type) % kLineBytes != kHalfLineBytes) return false;
  switch (spec.type) {
    case ElementType::f64:
      return spec.weights_per_column() == 1 && K >= kF64HalfLinesFromK && K <= kF64HalfLinesToK &&
             !listed(K, kF64HalfLinesAtOnePlaceK);
    case ElementType::f32:
      return fast_memory && spec.weights_per_column() == 1 && K >= kF32HalfLinesFromK && K <= kF32HalfLinesToK &&
             !listed(K, kF32HalfLinesAtOnePlaceK);
    case ElementType::bf16:
    case ElementType::f16:
      return fast_memory && spec.operation == Operation::sample_pairs && K >= kPairsHalfLinesFromK &&
             K <= kPairsHalfLinesToK;
  }
  return false;
}
bool stages_off_sectors_anywhere(const KernelSpec& spec, bool fast_memory) {
  if (!ring_reads_rows_at_one_place(spec)) return false;
  if (static_cast<long long>(spec.K) * size_of(spec.type) % kSectorBytes != 0) {
    if (spec.weights_per_column() == 1) return fast_memory || spec.K >= kSlowMemoryOffSectorsFromK;
    return spec.K >= kPairsAnywhereFromK;
  }
  return stages_half_lines_anywhere(spec, fast_memory);
}

// f64 rows of odd K staged anywhere at W = 16 are read in row order on every device (KernelSpec::ring_row_order). In
// the permuted order lane r = 4q + j of a load reads slot s's row s ^ j at 8-byte bank (r + place) mod 16, and the four
// rows s ^ j miss each other's banks only if their places mod 4 differ as j does; rows of odd K alternate the parity of
// their place (the ring moves a row by whole 16-byte copies), so every load conflicts 2- or 4-way. In row order a load
// reads one row's consecutive columns, at the cost of selects in every level of block_total. ncu on the H200 at f64 K =
// 181 (bench/results/h200-2026-12-03-s16c1-ncu-f64-k181-row.txt against -s15c1-ncu-f64-details.txt): 27.0 M
// shared-memory wavefronts (0.47 M excess) in row order against 43 M (17 M excess) permuted. On the H200 at 1 GiB, the
// same binary with and without (an experimental switch, two runs each in turn; -s16c1-switches-f64.csv): every sixth
// odd K of 181-997 read 0.879-0.939 in row order against 0.769-0.895 (+0.02 to +0.11: K = 181 0.769 -> 0.880, 211 0.798
// -> 0.911, 847 0.821 -> 0.897), K = 1001-2001 (row order either way) the same. Row order for every other ring staged
// anywhere at W = 16 gained nothing (-s16c2-switches-*.csv, two runs each): f32 K = 4 mod 8 from 340 median 0.000
// (-0.021 to +0.044), bf16 K = 721-4095 over pairs -0.004 to 0.000 by K mod 8 (odd K down to -0.098), f64 K = 2 mod 4
// -0.002. The rule against the kernels before it, one run each (-s16c3-ab-table.txt): the 205 odd K of 181-999 (every
// fourth) a median of 0.863 -> 0.904 (under 0.90: 202 -> 57 K; -0.002 to +0.125). The H100 of 2026-11-27 had lost
// 0.016-0.031 at f64 K = 199-257 in row order (kernel_spec.cpp, kRingInRowOrderF64FromK), but on the kernels of
// 2026-12-07 an H100 gained: every 16th odd K of 181-997 +0.004 to +0.055 (median +0.011, 51 of 52 K up, under 0.90 9
// -> 1; two runs each in turn, bench/results/h100-80gb-hbm3-2026-12-07-s23c4-ab-f64.csv, -s23c5-ab-f64.csv), so every
// device takes it.
constexpr int kF64RowOrderFromK = 181;
bool reads_f64_odd_rows_in_row_order(const KernelSpec& spec) {
  return spec.type == ElementType::f64 && spec.K % 2 == 1 && spec.K >= kF64RowOrderFromK &&
         ring_reads_slots_permuted(spec);
}

// 16-bit rows over pairs at odd K of 8-15 lines of blocks take the deep ring on a device without fast memory
// (KernelSpec::ring_deep: 8 lines a row in one-warp CTAs, as every other staged row from 8 lines, where the ring's own
// rule keeps 4 lines a row in CTAs of two warps until 16; kernel_spec.cpp, staged_ring). That rule was measured on the
// H100 of 2026-11-27 (bf16 K = 901 and 1001 lost 0.01-0.03 in the deep ring), before the ring staged rows anywhere
// by their phases; on the kernels of 2026-12-07 an H100 read these rows 0.03-0.09 faster in the deep ring. At 1 GiB,
// bfly-bench's bfly-auto beside bfly-auto-deep in one process (bench/results/h100-80gb-hbm3-2026-12-07-s24c2-deep-
// dense-{bf16,f16}.csv: every odd bf16 K of 721-1015, every fourth f16 K; -s24c1-deep-{bf16,f16}-rep{1,2}.csv: every
// eighth and sixteenth, two runs): the 122 bf16 K of the rule +0.010 to +0.095, median 0.880 -> 0.929 of the read
// ceiling, under 0.90 122 -> 7 (K = 929 0.852 -> 0.945); the 60 f16 K -0.003 to +0.086, median 0.881 -> 0.912, under
// 0.90 60 -> 14; both runs of the sparser lists the same within 0.008. K = 721-733 lost 0.016-0.042 in both types
// and K = 769-797 moved -0.023 to +0.012 (bf16 781-797 and f16 773-797 down): those keep the shallow ring. From
// K = 1009 the rows fill 16 lines and take the deep ring anyway; below K = 720 the warps' copy takes packed rows. The
// H200 (fast memory) has not measured it: its rule is unchanged.
constexpr int kSlowMemoryDeepOddPairsFromK = 735;
constexpr KBand kSlowMemoryShallowOddPairsBand = {769, 797};
bool deepens_odd_pairs_on_slow_memory(const KernelSpec& spec) {
  if (!is_narrow(spec.type) || spec.K < kSlowMemoryDeepOddPairsFromK) return false;
  if (kSlowMemoryShallowOddPairsBand.holds(spec.K)) return false;
  return ring_deepens_odd_pairs(spec);
}
}  // namespace

bool DeviceBalance::fast_memory() const { return memory_bytes_per_sm_cycle >= kFastMemoryBytesPerSmCycle; }

bool rows_split_by_shape(int K, ElementType type, long long M, DeviceBalance device) {
  if (K >= kSplitFromK) return true;
  if (M <= 0) return false;
  if (device.fast_memory()) return K >= kFastMemoryFewRowsSplitFromK && M < kFastMemorySplitBelowRows;
  return K >= split_few_rows_from_k(type) && M < kSplitBelowRows;
}

KernelSpec choose_sample_spec(int K, ElementType type, const SampleChoice& forced, long long M, DeviceBalance device) {
  const bool fast_memory = device.fast_memory();
  const bool few_rows = M > 0 && M < kFewRowsSplitBelowRows;
  const bool narrow_off_lines_split =
      !fast_memory && few_rows && is_narrow(type) && tight_rows_off_16_bytes(K, type) &&
      K >= (K % 2 != 0 ? kNarrowOddSplitFromK : kNarrowOffLinesSplitFromK) && K < split_few_rows_from_k(type) &&
      !forced.operation;
  const bool f32_split =
      type == ElementType::f32 && M > 0 &&
      (fast_memory ? K >= kFastMemoryF32SplitFromK && M < kSplitBelowRows
                   : (K >= kF32SplitFromK && M < kSplitBelowRows) || (K >= kF32FewRowsSplitFromK && few_rows));
  // The caller's split_rows replaces the whole rule (operation unforced).
  const bool split_forced = forced.split_rows.has_value() && !forced.operation;
  const bool split_by_shape = split_forced ? *forced.split_rows
                                           : rows_split_by_shape(K, type, M, device) || narrow_off_lines_split ||
                                                 f32_split;
  if (split_by_shape && !split_forced && is_narrow(type) && K < kSplitFromK && !narrow_off_lines_split &&
      M >= kNarrowRowKernelFromRows && !forced.operation) {
    const KernelSpec pairs = row_kernel_spec(K, type, forced, Operation::sample);
    if (pairs.operation == Operation::sample_pairs) return pairs;
  }
  Operation by_shape =
      split_by_shape ? Operation::sample_split : K < kSmallBelowK ? Operation::sample_small : Operation::sample;
  SampleChoice chosen = forced;  // the caller's choices, and W where the short rows' rule sets it
  bool short_row_kernel = false;  // the short rows' rule chose the kernel
  if (!forced.operation && !forced.W && !split_by_shape)
    if (const std::optional<ShortRowKernel> kernel =
            fast_memory ? fast_memory_short_rows(K, type) : slow_memory_short_rows(K, type)) {
      short_row_kernel = true;
      by_shape = kernel->operation;
      chosen.W = kernel->W;
      if (!forced.R && kernel->R) chosen.R = kernel->R;
      // The rule's kernel as measured: its operation kept (row_kernel_spec leaves a forced operation as it is).
      if (kernel->operation != Operation::sample_small) chosen.operation = kernel->operation;
    }
  const Operation operation = forced.operation.value_or(by_shape);
  if (operation != Operation::sample && !splits_rows(operation) && operation != Operation::sample_small &&
      operation != Operation::sample_pairs)
    throw Error(fmt::format("the sampler's operation = {} is not a sampling kernel; use sample, sample_pairs, "
                            "sample_small, sample_split or sample_split_pairs", name_of(operation)));
  if (operation == Operation::sample_small) {
    // Several short rows per lane, no table: W = 32 (a warp stages 32 * ROWS_PER_LANE rows), R = 0 and addsub (the
    // variant is not used), whatever the caller forced for the row kernel's table.
    KernelSpec spec;
    spec.K = K;
    spec.type = type;
    spec.W = forced.W.value_or(32);
    spec.variant = Variant::addsub;
    spec.R = 0;
    spec.operation = Operation::sample_small;
    spec.validate();
    return spec;
  }
  if (splits_rows(operation)) {
    // One row over several CTAs: W = 32 loads 128 contiguous bytes of f32 per step and keeps level 1 (one total per
    // W weights) at 1/32 of the row; the variant as for the row kernel. R has no meaning (no remnant): 0. 16-bit
    // weights take the same kernel over pairs (sample_split_pairs, odd K too), unless the caller forced the
    // operation: one 2-byte weight per lane read 64 bytes per warp and step, so that bf16 at K = 32000-262144 read
    // only 0.40-0.74 of the read ceiling (bench/results/h100-80gb-hbm3-2026-11-27-k-range-final-sampling.csv).
    KernelSpec spec;
    spec.K = K;
    spec.type = type;
    spec.W = forced.W.value_or(32);
    spec.variant = forced.variant.value_or(type == ElementType::f64 ? Variant::swap : Variant::addsub);
    spec.R = 0;
    spec.operation = forced.operation || !is_narrow(type) ? operation : Operation::sample_split_pairs;
    spec.validate();
    return spec;
  }
  // The rules below were measured on the kernels the rules above give; a caller's forced W or operation keeps its
  // kernel as those give it. The staging rules (rows staged anywhere, f64 odd rows read in row order) hold on every
  // device measured, the others on fast memory only.
  const bool staging_rules = !forced.W && !forced.operation;
  const bool fast_memory_rules = fast_memory && staging_rules;
  const auto row_kernel_by_rules = [&](const SampleChoice& choice) {
    KernelSpec spec = row_kernel_spec(K, type, choice, operation);
    if (forced.warp_copies)
      spec.warp_copies = *forced.warp_copies;
    else if (fast_memory_rules && skips_warp_copies(spec))
      spec.warp_copies = false;
    if (forced.ring_anywhere)  // where the ring would read the rows at one place; elsewhere there is nothing to change
      spec.ring_anywhere = *forced.ring_anywhere && ring_reads_rows_at_one_place(spec);
    else if (staging_rules && stages_off_sectors_anywhere(spec, fast_memory))
      spec.ring_anywhere = true;
    if (forced.ring_row_order)  // where the ring would read a tile's rows into permuted slots; else nothing changes
      spec.ring_row_order = *forced.ring_row_order && ring_reads_slots_permuted(spec);
    else if (staging_rules && reads_f64_odd_rows_in_row_order(spec))
      spec.ring_row_order = true;
    if (forced.ring_deep)  // where the ring of odd K over pairs would be the shallow one; else nothing changes
      spec.ring_deep = *forced.ring_deep && ring_deepens_odd_pairs(spec);
    else if (staging_rules && !fast_memory && deepens_odd_pairs_on_slow_memory(spec))
      spec.ring_deep = true;
    spec.validate();
    return spec;
  };
  KernelSpec spec = row_kernel_by_rules(chosen);
  // A remnant that fast memory pads: the kernel derived again at R = 0, its copies and ring asked anew.
  if (fast_memory_rules && !forced.R && pads_remnant_on_fast_memory(spec, short_row_kernel)) {
    chosen.R = 0;
    spec = row_kernel_by_rules(chosen);
  }
  return spec;
}

KernelSpec fit_to_rows(KernelSpec spec, const void* weights, long long ld) {
  if (!rows_on_pairs_required(family_of(spec), spec.K) || (starts_on_pair(weights, spec.type) && ld % 2 == 0))
    return spec;
  spec.operation = spec.operation == Operation::sample_pairs ? Operation::sample : Operation::sample_split;
  return spec;
}

// The last wave's rule (rows_past_last_wave), from the H200 at chosen M (bench/results/h200-2026-11-29-s9c1-rows.csv,
// -s9c2-rows.csv: bench/run_rows.sh, the row kernel at whole waves and 100-8448 rows past them, and sample_split over
// those rows alone). Past one whole wave, 200 rows more cost f64 K = 3925 67 us (0.132 -> 0.199 ms), f64 K = 2042
// 33 us, f32 K = 4096 21 us and bf16 K = 4096 12 us; past two, f64 K = 3925 53 us for 404 rows and K = 2042 24 us,
// but f32 and bf16 K = 4096 3-4 us; past three, f64 K = 2042 15 us, f32 K = 4096 1.5 us. sample_split took 100-200
// rows in 8-10 us, 404 rows of f64 K = 3925 in 11.8 us, 1024 in 18.1, 4096 in 51.0 and 8448 (half a wave) in 94.0
// against the row kernel's 78 us for them. The f64 kernels above hold 4 one-warp CTAs an SM, one warp a scheduler;
// f32 and bf16 K = 4096 hold 5, so one scheduler runs two warps, its CTAs end later and the waves spread out after
// the first. The same held across f64 K = 2600-4096 at 1 GiB (-s9c3-ab-table.txt, the rule then by type: up to 3
// waves for 8-byte rows): K = 3545-3950 (4 CTAs an SM, 2.01-2.24 waves) gained 0.03-0.14 and K = 2627 (3.03 waves)
// 0.05, while K = 3086-3167 (5 CTAs an SM, 2.01-2.06 waves) lost 0.02-0.04.
// Overlapped (docs/DESIGN.md section 16; -s10c2-ab-table.txt, f64 K = 2400-4074 at 1 GiB against the rule above,
// sample_split given the last wave's CTAs and 0, 1/8 or 1/4 of a wave more): where the waves stay together, a last
// wave of 0.27-0.48 of one gained 0.02-0.10 given to sample_split as it is (K = 3453, 2.30 waves: 0.765 -> 0.865), one
// of at most a quarter 0.01-0.06 with an eighth of a wave more (K = 3588: 0.792 -> 0.842), and one of 0.59 or more
// lost 0.02-0.10 (sample_split reads a whole wave's rows more slowly than the row kernel). Where the waves spread out
// (5 warps an SM: f32 K = 2048-4096, f64 K = 3102-3183) the overlap gained at most 0.01 (-s10c1-ab-table.txt): the
// row kernel's last CTA still lives its whole time at its own pace, so those keep the rule above.
constexpr long long kTailMinCtaBytes = 256 * 1024;
constexpr int kTailWaveFraction = 4;         // the last wave holds at most 1 / kTailWaveFraction of a wave's CTAs
constexpr int kTailOverlappedWaveFraction = 2;  // ... 1 / 2 of one where the launches overlap and the waves stay together
constexpr int kTailOverlappedExtra = 8;      // and 1 / 8 of a wave more where the last wave is at most a quarter
constexpr int kTailMaxWavesTogether = 3;     // whole waves before it where every warp has a scheduler to itself
constexpr int kSchedulersPerSm = 4;          // warp schedulers of an SM (sm_70 to sm_90)

long long rows_past_last_wave(const KernelSpec& spec, long long M, int ctas_per_sm, int sms, bool overlapped) {
  if (spec.operation != Operation::sample && spec.operation != Operation::sample_pairs) return 0;
  if (spec.input != InputKind::weights || spec.draws != Draws::one || ctas_per_sm <= 0 || sms <= 0 || M <= 0) return 0;
  const LaunchGeometry g = launch_geometry(spec);
  const long long cta_bytes = static_cast<long long>(g.rows_per_cta) * spec.K * size_of(spec.type);
  if (cta_bytes < kTailMinCtaBytes) return 0;
  const long long wave = static_cast<long long>(ctas_per_sm) * sms, ctas = g.grid_for_rows(M);
  const long long whole_waves = ctas / wave, last_wave = ctas % wave;
  const int warps_per_sm = ctas_per_sm * ((g.threads_per_cta + 31) / 32);
  const bool together = warps_per_sm <= kSchedulersPerSm;
  const int max_waves = together ? kTailMaxWavesTogether : 1;
  if (whole_waves < 1 || whole_waves > max_waves || last_wave == 0) return 0;
  long long tail_ctas = last_wave;
  if (overlapped && together) {
    if (last_wave * kTailOverlappedWaveFraction > wave) return 0;
    if (last_wave * kTailWaveFraction <= wave) tail_ctas += wave / kTailOverlappedExtra;
  } else if (last_wave * kTailWaveFraction > wave) {
    return 0;
  }
  const long long first_row = (ctas - tail_ctas) * g.rows_per_cta;
  if (first_row > std::numeric_limits<int>::max()) return 0;  // sample_split numbers its rows from an int first_row
  return M - first_row;
}

KernelSpec tail_split_spec(const KernelSpec& row) {
  SampleChoice split;
  split.operation = is_narrow(row.type) ? Operation::sample_split_pairs : Operation::sample_split;
  return choose_sample_spec(row.K, row.type, split);
}

KernelSpec choose_lda_z_spec(int K, ElementType type, const LdaZChoice& forced) {
  const Operation operation = forced.operation.value_or(Operation::lda_z_doc);
  if (!is_lda(operation))
    throw Error(fmt::format("the LDA z-step's operation = {} is not an LDA z-step; use lda_z_doc or lda_z",
                            name_of(operation)));
  SampleChoice sample;  // the row kernel's choices that the LDA z-step may force
  sample.W = forced.W;
  sample.variant = forced.variant;
  sample.R = forced.R;
  sample.operation = Operation::sample;
  if (operation == Operation::lda_z_doc) {
    // One document per group: W = 32 from doc_w32_from_k(type) on, and addsub in both types (quick run of
    // 2026-11-23, K = 1024: f64 4.07 ms against 4.49 for swap; f32 2.02 against 2.22).
    if (!sample.W && K >= doc_w32_from_k(type)) sample.W = 32;
    if (!sample.variant) sample.variant = Variant::addsub;
    // Short documents leave most lanes of a group idle in their one round: on the WordNet glosses (7 tokens a
    // document, H100, bench/results/h100-80gb-hbm3-2026-11-23-wordnet-k1024-gpu.log) K = 64 ran its z-step in
    // 0.112 ms with W = 8 against 0.180 ms with the default 16, and K = 1024 in 1.53 ms with W = 16 against 2.00 ms
    // with 32 (W = 8 there: 1.84 ms, so the width is halved once).
    if (!forced.W && forced.mean_document_length > 0) {
      const int W = choose_sample_spec(K, type, sample).W;
      if (W > 8 && forced.mean_document_length < W / 2.0) sample.W = W / 2;
    }
  } else {
    // One document per lane (the paper's Algorithm 7): W = 32 beat W = 16 from K = 256 on (2026-11-22; f32
    // K = 1024: 12.1 ms against 18.8 ms; f64: 20.1 against 66.9), while W = 16 stayed ahead below.
    if (!sample.W && K >= 256) sample.W = 32;
  }
  KernelSpec spec = choose_sample_spec(K, type, sample);
  spec.operation = operation;
  return spec;
}

}  // namespace bfly::gen
