// The rules that choose a kernel spec for a K and element type, with whatever the caller forces: the Sampler's and
// the LDA z-step's. They live with the spec, so that build-time emitters, tools and tests can ask which kernel a
// call will use without the runtime (or NVRTC). The rules were measured on an H100, and those that depend on how fast
// the device's memory is (DeviceBalance) on an H200 too; bench/RESULTS.md has the data.
#pragma once

#include "bfly/spec/kernel_spec.hpp"

#include <optional>

namespace bfly::gen {

// What a sampling caller may force; anything left empty is chosen by choose_sample_spec.
struct SampleChoice {
  std::optional<int> W;            // 4, 8, 16 or 32
  std::optional<Variant> variant;
  std::optional<int> R;            // remnant threshold, 0 .. W-1 (the row kernel's; sample_split has none)
  // Operation::sample (one row per lane), Operation::sample_pairs (the same over pairs of weights),
  // Operation::sample_small (several short rows per lane), Operation::sample_split (one row over several CTAs) or
  // Operation::sample_split_pairs (the same over pairs of weights).
  std::optional<Operation> operation;
  // Whether the plain sample kernel may copy its warps' rows into shared memory (KernelSpec::warp_copies; false:
  // never). Unset: the device's rule (on fast memory the longest rows the copies' rule takes go without them).
  std::optional<bool> warp_copies;
  // Whether the plain sample kernel's ring stages rows on 16 bytes as rows that start anywhere (KernelSpec::
  // ring_anywhere; true: wherever its ring would read them at one place, other kernels being left as they are; false:
  // never). Unset: the device's rule (on fast memory rows off 32-byte sectors are staged anywhere).
  std::optional<bool> ring_anywhere;
  // Whether the plain sample kernel's ring of rows staged anywhere at W = 16 reads a tile's rows in row order
  // (KernelSpec::ring_row_order; true: wherever its ring would read them into permuted slots, other kernels being left
  // as they are; false: never). Unset: the device's rule (on fast memory f64 rows of odd K from 181 are read in row
  // order).
  std::optional<bool> ring_row_order;
  // Whether the plain sample kernel over pairs at odd K takes the deep ring from 8 lines of blocks (KernelSpec::
  // ring_deep; true: wherever its ring would be the shallow one there, other kernels being left as they are; false:
  // never). Unset: the device's rule.
  std::optional<bool> ring_deep;
  // Whether one draw's rows are split over several CTAs (sample_split, over pairs for 16-bit weights). Unset: the
  // rule by K, M and the device (choose_sample_spec below); false: never, at any K and M (the row kernel the rules
  // choose for K, and Sampler::sample gives no rows past a last wave to sample_split, so the kernel and the draws no
  // longer depend on M); true: always. Ignored where the operation is forced.
  std::optional<bool> split_rows;
};

// What the choice knows of the device that will run the kernel: how fast its memory is against its SMs, as the bytes
// its memory reads at peak per SM and SM clock cycle (bandwidth / (SMs x SM clock)); 0 when unknown. An H100 SXM
// has 12.8 by its data sheet (3.35 TB/s, 132 SMs at 1980 MHz), the H200 measured 18.4 by its driver's attributes
// (about 4.8 TB/s, the same SMs). Where the memory is fast
// (kFastMemoryBytesPerSmCycle and up) the row kernel keeps rows that the H100's rules split: the split kernel reads
// at a rate of its own, which is near the H100's bandwidth and well under the H200's (docs/DESIGN.md section 12).
// The runtime fills it from the device (bfly::rt::current_device_balance); unknown is taken as the H100's.
struct DeviceBalance {
  double memory_bytes_per_sm_cycle = 0;
  bool fast_memory() const;
};
inline constexpr double kFastMemoryBytesPerSmCycle = 16;

// The sampling spec for K and type. Rule, from the H100 sweep (bench/results, 2026-11-22): W = 16 for K >= 16 (the
// steadiest fraction of the read ceiling over K for f32 and f64; W = 32 needs about twice the registers and ran
// erratically for K not a multiple of 32; but W = 32, one block, for one draw from f32 weights at K = 23-40, where
// W = 16 padded or took two blocks: 2026-11-28), 8 for K >= 8, else 4; variant addsub for f32 (the paper's faster
// build) and swap for f64 (faster there on the H100); R = min(8, W - 1), so remnants of up to 8 leading elements are
// searched linearly and larger ones padded. Forced fields replace the chosen ones; the result is validated
// (bfly::Error names a bad forced value).
//
// K below kSmallBelowK takes sample_small (several short rows per lane, W = 32). M, the rows of the call (0: unknown),
// picks between the row kernel and sample_split (docs/DESIGN.md section 12): sample_split from K = 16384 on, where
// the row kernel's one lane per row cannot keep the device busy even with a GiB of weights, and when
// 0 < M < kSplitBelowRows from K = 4096 (K = 8192 in f64; for one draw from f32 weights from K = 3600, and from 3300
// when 0 < M < kFewRowsSplitBelowRows); but 16-bit weights with K below 16384 keep the row kernel (over pairs) from
// 32768 rows on, and 16-bit rows off 16 bytes are split from K = 3001 (odd K) or 3300 (even K) to 4095 when
// 0 < M < kFewRowsSplitBelowRows. On a device with fast memory
// (device.fast_memory(), the H200) rows below K = 16384 are split only when they are few, 0 < M <
// kFastMemorySplitBelowRows from K = 3000, one draw from f32 weights from K = 5500 when 0 < M < kSplitBelowRows, and
// short rows (K = 5 to 80) take the kernel that read fastest at their K on the H200 (sample_pairs at W = 16 or 32,
// at W = 32 with R = 31 or W = 16 with R = 15 where the whole row kept in registers led, sample_small for f64
// K = 16-24, the row kernel at W = 32 or 16: docs/DESIGN.md section 12) unless the caller forced the operation or W.
// A caller's split_rows, where set, replaces the whole choice between the row kernel and sample_split.
// A split spec has W = 32 and R = 0, and for 16-bit weights it is sample_split_pairs unless the operation was forced.
// Draws depend on the spec; a row whose u' lies within rounding distance of a category boundary may draw its
// neighbour under the other kernel, so a caller that needs the same draws whatever M or device forces the operation
// (whatever M on one device: split_rows = false).
KernelSpec choose_sample_spec(int K, ElementType type, const SampleChoice& forced = {}, long long M = 0,
                              DeviceBalance device = {});

// The shape part of that rule: whether M rows of K weights of `type` (M = 0: unknown) are split over CTAs, before
// the exceptions of 16-bit weights in pairs (one draw from weights only). The forms (logits, several draws) follow it
// with the device unknown: the fast-memory rule was measured for one draw.
bool rows_split_by_shape(int K, ElementType type, long long M, DeviceBalance device = {});

// The spec to launch for rows that start at `weights`, `ld` elements apart: `spec` itself, except that sample_pairs
// and sample_split_pairs of K even load two weights at once and so need every row to start on a pair (weights
// aligned to two elements, ld even); for rows that do not, the same kernel over single weights with the same W, R
// and variant (Operation::sample, Operation::sample_split) draws instead. (At K odd both pair each row from the even
// address at or before its start and take any rows.)
KernelSpec fit_to_rows(KernelSpec spec, const void* weights, long long ld);

// The rows at the end of a one-draw launch of the row kernel `spec` (sample or sample_pairs) over M rows that
// sample_split should draw instead, in a second launch from row M - rows on; 0: none. The device holds `ctas_per_sm`
// CTAs of `spec` on each of its `sms` SMs at once (0: unknown, then none). A CTA of a row kernel draws its rows on
// one warp, at a pace its own loads and instructions set, so a last wave of a few CTAs takes as long as a CTA alone
// where the waves before it end together (docs/DESIGN.md section 15): those rows go to sample_split, which spreads
// each over a CTA of several warps. The rule: at least one whole wave, a last wave of at most a quarter of one, CTAs
// of at least kTailMinCtaBytes, and one whole wave before it, or up to three where every warp has an SM's scheduler
// to itself (at most 4 warps an SM: every CTA keeps the same pace, so the waves stay together).
// With `overlapped` (the device starts sample_split's CTAs while the row kernel's last wave runs: programmatic
// dependent launch, docs/DESIGN.md section 16), grids whose waves stay together give sample_split a last wave of up to
// half of one, and where it is at most a quarter, an eighth of a wave more from the row kernel's last whole wave.
long long rows_past_last_wave(const KernelSpec& spec, long long M, int ctas_per_sm, int sms, bool overlapped = false);
// The kernel that draws them: sample_split for K and the row kernel's type (over pairs for 16-bit weights), the
// chooser's own W and variant; fit_to_rows applies as to any spec.
KernelSpec tail_split_spec(const KernelSpec& row);

// Below this many rows a row kernel (one lane per row) has fewer threads than an H100 holds in flight (132 SMs x
// 1024), so from K = 4096 (K = 8192 in f64) the chooser splits rows instead.
inline constexpr long long kSplitBelowRows = 131072;
// On other devices, below this many rows the chooser splits one draw from f32 weights from K = 3300 (from 3600 below
// kSplitBelowRows) and 16-bit rows off 16 bytes from K = 3001 (odd) or 3300 (even) to 4095: on the H100 the split
// kernel led there with 4096 rows and the row kernel from 8192 on (bench/results/h100-80gb-hbm3-2026-12-07-s21c2-m.csv).
inline constexpr long long kFewRowsSplitBelowRows = 8192;
// On a device with fast memory, below this many rows the chooser splits rows of K = 3000 to 16383: on the H200 the
// split kernel led in every type with 4096 rows, and f64 K = 16383 with 8193; the row kernel with 11184 rows (f64
// K = 12001) and from 16384 in every type (fewer rows than a wave of its CTAs holds, 5 CTAs of 32 rows an SM).
inline constexpr long long kFastMemorySplitBelowRows = 10240;
// Below this K the chooser packs several rows per lane (sample_small).
inline constexpr int kSmallBelowK = 16;
// From this K on, the chooser always splits rows.
inline constexpr int kSplitFromK = 16384;

// What an LDA z-step caller may force or tell; anything left empty is chosen by choose_lda_z_spec.
struct LdaZChoice {
  // Operation::lda_z_doc (one document per group of W lanes) or Operation::lda_z (the paper's Algorithm 7, one
  // document per lane). Both take the same arguments and draw the same topics up to rounding at a boundary.
  std::optional<Operation> operation;
  std::optional<int> W;  // 4, 8, 16 or 32
  std::optional<Variant> variant;
  std::optional<int> R;  // remnant threshold, 0 .. W-1
  // Tokens per document of the corpus on average (0: unknown). lda_z_doc gives each document a group of W lanes,
  // so for short documents (fewer than W / 2 tokens on average) the rule halves its W, down to 8.
  double mean_document_length = 0;
};

// The z-step spec for K and type: operation lda_z_doc unless forced to lda_z; the sampling rule for W and R, except
// W = 32 from K = 1024 on in f32 and from K = 512 in f64 (lda_z_doc; from K = 256 for lda_z), halved once for
// lda_z_doc when mean_document_length is below W / 2, and the addsub variant for lda_z_doc in both types.
KernelSpec choose_lda_z_spec(int K, ElementType type, const LdaZChoice& forced = {});

}  // namespace bfly::gen
