// KernelSpec validation, the type/variant tables, and kernel names (make and parse).
#include "bfly/spec/kernel_spec.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <vector>

namespace bfly::gen {
namespace {

constexpr std::array kVariantNames = {std::pair{Variant::swap, std::string_view("swap")},
                                      std::pair{Variant::addsub, std::string_view("addsub")}};
struct OperationRow {
  Operation operation;
  const KernelFamily* family;
  bool per_group;
};
constexpr OperationRow kOperations[] = {
#define BFLY_OPERATION_ROW(operation, family, per_group) {Operation::operation, &family, per_group},
    BFLY_OPERATIONS(BFLY_OPERATION_ROW)
#undef BFLY_OPERATION_ROW
};

struct SampleForm {
  Operation operation;
  InputKind input;
  Draws draws;
  const KernelFamily* family;
};
constexpr SampleForm kSampleForms[] = {
#define BFLY_SAMPLE_FORM_ROW(operation, input, draws, family) \
  {Operation::operation, InputKind::input, Draws::draws, &family},
    BFLY_SAMPLE_FORMS(BFLY_SAMPLE_FORM_ROW)
#undef BFLY_SAMPLE_FORM_ROW
};
constexpr std::array kInputKindNames = {std::pair{InputKind::weights, std::string_view("weights")},
                                        std::pair{InputKind::logits, std::string_view("logits")}};
constexpr std::array kDrawsNames = {std::pair{Draws::one, std::string_view("one")},
                                    std::pair{Draws::with_replacement, std::string_view("with_replacement")},
                                    std::pair{Draws::without_replacement, std::string_view("without_replacement")}};

// Whether `operation` has forms beyond one draw per row of weights (rows of BFLY_SAMPLE_FORMS).
bool has_forms(Operation operation) {
  for (const SampleForm& form : kSampleForms)
    if (form.operation == operation && (form.input != InputKind::weights || form.draws != Draws::one)) return true;
  return false;
}

// The sample form named `family_name`, or null.
const SampleForm* sample_form(std::string_view family_name) {
  for (const SampleForm& form : kSampleForms)
    if (form.family->name == family_name) return &form;
  return nullptr;
}

const OperationRow& row(Operation operation) {
  for (const OperationRow& entry : kOperations)
    if (entry.operation == operation) return entry;
  throw Error(fmt::format("unknown operation {}", static_cast<int>(operation)));
}

template <typename Table>
std::string allowed_names(const Table& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    if constexpr (requires { entry.tag; }) out += entry.tag; else out += entry.second;
  }
  return out;
}

constexpr int kThreadsPerCta = 128;
// lda_z_doc: CTAs of 64 threads (2 to 16 documents), so that a theta row per group fits in static shared memory
// beside the running totals up to K = 1024 in f64.
constexpr int kDocThreadsPerCta = 64;
constexpr int kMaxStaticShared = 48 * 1024;
constexpr int kMaxRegisterKernelShared = 32 * 1024;  // a kernel that loads into registers: totals and tiles
constexpr int kMaxChunks = 32;  // shared memory per CTA: kMaxChunks * kThreadsPerCta * sizeof(T) <= 32 KiB
// The plain sample kernel loads a row of at most kWholeRowBlocks blocks and kWholeRowBytes bytes whole, and is
// compiled for 6 CTAs per SM (4 in f64). Measured on an H100 (bench/results/h100-80gb-hbm3-2026-11-23-pass1-
// experiments.md): f32 K = 16, 64, 71 went from 0.894, 0.885, 0.836 of the read ceiling to 0.917, 0.946, 0.903, f64
// K = 16 from 0.874 to 0.939 (the landed sweep: 0.916, 0.934, 0.882 and 0.940). Four blocks in flight for longer
// rows fell to 0.32-0.62 (ptxas interleaves the later tiles' loads with the first tile's shuffles), and so did f64
// K = 64 and 71 (four f64 blocks: 0.78 and 0.71), and the occupancy hint alone lost at K = 128 and 1000, so both
// stay with short rows.
constexpr int kWholeRowBytes = 256;
// The plain sample kernel: explicit weights, one draw per row (not the logits or several-draws forms).
// sample_pairs is the plain kernel over pairs of weights.
bool plain_sample(const KernelSpec& spec) {
  return (spec.operation == Operation::sample && spec.input == InputKind::weights && spec.draws == Draws::one) ||
         spec.operation == Operation::sample_pairs;
}
bool loads_whole_row(const KernelSpec& spec) {
  return plain_sample(spec) && spec.blocks() >= 1 && spec.blocks() <= kWholeRowBlocks &&
         spec.blocks() * spec.W * spec.weights_per_column() * size_of(spec.type) <= kWholeRowBytes;
}
// Staged pass 1 (pass1_stages, docs/DESIGN.md section 14): 16-byte copies of the 128-byte lines that hold a row's
// blocks into a ring of STAGES lines per row, columns of 4 bytes (f32, pairs of 16-bit weights) or 8 (f64, pairs of
// f32), so block 0 must start on a copy's first column (padding of whole copies is written as zeros). Rows of at
// least 9 blocks (8 for pairs): on an H100 at 1 GiB (bench/results/h100-80gb-hbm3-2026-11-25-staged-*-sampling.csv)
// f32 lost staged at K = 100 and 128 (7 and 8 blocks: 0.88 -> 0.86, 0.93 -> 0.91) and gained from K = 200 (13
// blocks) on; bf16 pairs gained from K = 256 (8 blocks) on and lost at K = 200 (6 blocks); staging from 2 blocks on
// lost again with the lighter loop of 2026-11-27 (f32 K = 32 0.93 -> 0.73, 64 0.93 -> 0.89, 100 0.88 -> 0.85;
// -2026-11-27-variants-f32.csv, build e3).
// Single f32 and f64 weights at odd K stage from fewer blocks: f32 from 6 blocks (its remnant padded or not), f64 from
// 5 whole blocks (K >= 5 W). Rows packed tightly then start on every 4-byte (8-byte) place, and the register loads'
// blocks share their edge sectors with the next step's and the next row's, which L2 had let go by then: ncu on the H100
// counted 1.32 GB read from DRAM for the 1.07 GB of f32 K = 127 (1.07 GB at K = 128). The staged loads read each line
// once, whole. At 1 GiB on the H100 (bench/results/h100-80gb-hbm3-2026-11-27-odd-short-rows-*.csv) that took f32
// K = 93-135 of odd K from 0.62-0.79 of the read ceiling to 0.78-0.88 (K = 97: 0.79 either way) and f64 K = 81-129
// from 0.77-0.87 to 0.86-0.93, while shorter rows lost (f32 K = 81-87, 5 blocks: -0.01 to -0.03; f64 K = 73-79,
// 4 whole blocks and one padded: up to -0.02; f64 K = 33-69: up to -0.27), as did f32 rows of even K off 16 bytes
// (K = 90-134: -0.07 to +0.04).
// Rows packed tightly off 16 bytes stage from 5 blocks at W = 16 (f32 and f64) since the warp's copy reads them
// (copies_warp_rows, docs/DESIGN.md section 14, "Short rows in one copy"): on the H100 at 1 GiB, the same call, twice
// in turn (bench/results/h100-80gb-hbm3-2026-11-27-warp-rows-copy-stage5-sampling.csv), f32 K = 73-106 of 5 to 7
// blocks went from 0.73-0.87 of the read ceiling (row slots) to 0.91-0.97 and f64 K = 73-79 from 0.87 to 0.96 (f64
// K = 57-71, 4 blocks, 0.86-0.93 -> 0.95-0.96 too, but there the ring that rows with ld != K now take had lost up to
// 0.27). Rows with ld != K take the ring at these K, which lost 0.01-0.07 against the register loads (above).
constexpr int kCopiedFromBlocks = 5;
constexpr int kStagedFromBlocks = 9;
constexpr int kStagedPairsFromBlocks = 8;
constexpr int kStagedOddF32FromBlocks = 6;
constexpr int kStagedOddF64FromWholeBlocks = 5;
constexpr int kStagePieceBytes = 16;  // one cp.async copy
int column_bytes(const KernelSpec& spec) { return spec.weights_per_column() * size_of(spec.type); }
bool long_enough_to_stage(const KernelSpec& spec) {
  if (spec.operation == Operation::sample && spec.W == 16 && tight_rows_off_16_bytes(spec.K, spec.type) &&
      (spec.type == ElementType::f32 || spec.type == ElementType::f64) && spec.blocks() >= kCopiedFromBlocks)
    return true;
  if (spec.operation == Operation::sample_pairs) return spec.blocks() >= kStagedPairsFromBlocks;
  if (spec.K % 2 != 0 && spec.type == ElementType::f32 && spec.blocks() >= kStagedOddF32FromBlocks) return true;
  if (spec.K % 2 != 0 && spec.type == ElementType::f64 && spec.K / spec.W >= kStagedOddF64FromWholeBlocks) return true;
  return spec.blocks() >= kStagedFromBlocks;
}
// Block 0 may start anywhere in a copy: where it does not start on one, or rows packed tightly do not start on 16
// bytes, the copies are memory's own 16 bytes (stages_rows_anywhere, docs/DESIGN.md section 14).
bool stages_blocks(const KernelSpec& spec) {
  const int bytes = column_bytes(spec);
  return plain_sample(spec) && long_enough_to_stage(spec) && (bytes == 4 || bytes == 8) &&
         spec.W * bytes <= kStageRowBytes;
}
// The ring's depth. Rows whose blocks fill at least kDeepRingLines lines take a deep ring of 8 lines in CTAs of one
// warp (32 KiB of rings), shorter rows a ring of 4 lines in CTAs of two warps (also 32 KiB): on the H100 at 1 GiB,
// same binary but for the ring (bench/results/h100-80gb-hbm3-2026-11-27-variants-*.csv, builds e4 and e5), the deep
// ring read f32 K = 512-2048 at 0.94-0.95 of the read ceiling against 0.90-0.93, f64 K = 256-4096 at 0.93-0.97
// against 0.90-0.94 and bf16 K = 1000-3000 at 0.87-0.93 against 0.82-0.91, and lost on short rows (f32 K = 200, 7
// lines: 0.88 against 0.93; bf16 K = 256, 4 lines: 0.78 against 0.89), where 5 warps an SM leave too little in flight
// for the other work of a row. The threshold was 16 lines until rows short enough for a warp's copy
// (copies_warp_rows) took the copy: from 8 lines the deep ring read f32 K = 360-500 at 0.90-0.97 against 0.85-0.93,
// f64 K = 180-224 at 0.95-0.97 against 0.91-0.93 and bf16 K = 720, 800 and 1002 at 0.90-0.95 against 0.86-0.90
// (bench/results/h100-80gb-hbm3-2026-11-27-deep-ring-lines-*-sampling.csv, the same binary and a switch, twice in
// turn). Either way the rings and at most 64 running totals per row (32 in f64 with 2 warps) fit
// kMaxStaticShared. Odd K over pairs keeps the threshold of 16 lines: from 8, bf16 K = 1001 read 0.82-0.83 against
// 0.84-0.85 (-deep-ring-lines-bf16-sampling.csv, -2026-11-27-odd-pairs-ring-sampling.csv), unless the spec asks for
// the deep ring from 8 lines (KernelSpec::ring_deep, a device's rule: gen::choose_sample_spec).
// The 64 running totals a row hold a one-warp CTA of f32 to 36.9-41 KB, 4-5 CTAs an SM. At most 32 or 16 (6 CTAs an
// SM) lost on the H200 at 1 GiB, the same binary but for the cap, twice in turn
// (bench/results/h200-2026-11-28-s5c7-ab-sampling.csv, every 61st K from 515 to 4096): f32 a median of -0.028 and
// -0.092, bf16 -0.03 and -0.10, f64 -0.02 and -0.06 (-0.14 to +0.09): pass 2 walks longer chunks.
constexpr int kDeepRingLines = 8;
// A step of the deep ring reads two lines of each row (4 tiles of f32 or 16-bit pairs at W = 16, 2 of f64) between
// one wait for its copies and the next, so that a warp waits half as often and the tiles' shuffles overlap, with 5
// lines still in flight after each wait; one-warp CTAs are held by shared memory, so the registers cost nothing. On
// an H100 at 1 GiB, main against this rule, two runs each in turn
// (bench/results/h100-80gb-hbm3-2026-12-07-s25c2-ab-*.csv): f32 K = 256-4096 a median of +0.006 (K under 0.90:
// 57 -> 34 of 82, worst -0.005), f64 K = 128-4096 +0.004 (45 -> 29 of 85; K = 1024-2047 +0.017; worst -0.014 at
// K = 2337), 16-bit pairs of 16 lines or more +0.001 (bf16) and +0.002 (f16), none under -0.010; shorter rows over
// pairs lost up to 0.032 (bf16 K = 989, f16 K = 738) and keep one line a step. Steps of four lines lost up to 0.086
// in bf16 (-s25c1-lps-*.csv).
constexpr int kDeepRingLinesPerStep = 2;
constexpr int kPairsTwoLineStepsFromLines = 16;  // rows over pairs of fewer lines of blocks keep one line a step
constexpr int kDeepRingLinesOddPairs = 16;
constexpr int kStagedMaxChunks = 64;
constexpr int kShallowRingLines = 4;
struct StagedRing {
  int stages;          // lines per row: a power of two, the ring is indexed with a mask
  int threads;         // threads per CTA
  int max_chunks;      // running totals per row that fit beside the rings
  int lines_per_step;  // lines of each row a step of pass 1 reads
};
int row_block_bytes(const KernelSpec& spec) { return spec.blocks() * spec.W * column_bytes(spec); }
StagedRing staged_ring(const KernelSpec& spec) {
  const int block_bytes = row_block_bytes(spec);
  const int deep_lines = spec.pairs_by_phase() && !spec.ring_deep ? kDeepRingLinesOddPairs : kDeepRingLines;
  StagedRing ring = block_bytes >= deep_lines * kStageRowBytes ? StagedRing{8, 32, 0, kDeepRingLinesPerStep}
                                                                 : StagedRing{kShallowRingLines, 64, 0, 1};
  if (spec.weights_per_column() == 2 && block_bytes < kPairsTwoLineStepsFromLines * kStageRowBytes)
    ring.lines_per_step = 1;
  const int ring_bytes = ring.stages * ring.threads * kStageRowBytes;
  const int total_bytes = ring.threads * size_of(accumulator_of(spec.type));  // one running total of every row
  ring.max_chunks = std::min(kStagedMaxChunks, (kMaxStaticShared - ring_bytes) / total_bytes);
  return ring;
}
static_assert(8 * 32 * kStageRowBytes + 64 * 32 * int(sizeof(double)) <= kMaxStaticShared);
static_assert(4 * 64 * kStageRowBytes + 32 * 64 * int(sizeof(double)) <= kMaxStaticShared);
// sample_split: CTAs of up to 256 threads (8 groups of W = 32), each group loading kSplitTilesPerGroup W x W tiles
// before it builds their tables, so that one CTA covers 8 * 2 tiles (64 KiB of f32 weights at W = 32) and a row of
// K weights spreads over ceil(K / (16 W^2)) CTAs: 16 CTAs for a row of 262144 weights, so 8 rows already give the
// H100's 132 SMs a CTA each. A row of fewer tiles takes a smaller CTA (whole warps), so no group idles.
constexpr int kSplitMaxThreadsPerCta = 256;
constexpr int kSplitTilesPerGroup = 2;
constexpr int kRegistersPerSm = 65536;  // 32-bit registers of one SM (sm_80 and sm_90)

int parse_int(std::string_view text, std::string_view what) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw Error(fmt::format("{} must be an integer, got '{}'", what, text));
  return value;
}

}  // namespace

const ElementTypeInfo& info(ElementType type) {
  for (const ElementTypeInfo& entry : kElementTypes)
    if (entry.type == type) return entry;
  throw Error(fmt::format("unknown element type {}", static_cast<int>(type)));
}
std::string_view name_of(ElementType type) { return info(type).tag; }
std::string_view cuda_type(ElementType type) { return info(type).cuda_type; }
int size_of(ElementType type) { return info(type).size; }
ElementType accumulator_of(ElementType type) { return info(type).accumulator; }
bool is_narrow(ElementType type) { return info(type).narrow(); }

std::string_view name_of(Variant variant) {
  for (const auto& [v, name] : kVariantNames)
    if (v == variant) return name;
  throw Error("unknown variant");
}

std::string_view name_of(Operation operation) { return row(operation).family->name; }
const KernelFamily& family_of(Operation operation) { return *row(operation).family; }
bool item_per_group(Operation operation) { return row(operation).per_group; }

std::string_view name_of(InputKind input) {
  for (const auto& [value, name] : kInputKindNames)
    if (value == input) return name;
  throw Error("unknown input kind");
}
std::string_view name_of(Draws draws) {
  for (const auto& [value, name] : kDrawsNames)
    if (value == draws) return name;
  throw Error("unknown draws");
}
InputKind parse_input_kind(std::string_view text) {
  for (const auto& [value, name] : kInputKindNames)
    if (name == text) return value;
  throw Error(fmt::format("input kind '{}' is not supported; allowed: {}", text, allowed_names(kInputKindNames)));
}
Draws parse_draws(std::string_view text) {
  for (const auto& [value, name] : kDrawsNames)
    if (name == text) return value;
  throw Error(fmt::format("draws '{}' is not supported; allowed: {}", text, allowed_names(kDrawsNames)));
}

ElementType parse_element_type(std::string_view text) {
  for (const ElementTypeInfo& entry : kElementTypes)
    if (entry.tag == text) return entry.type;
  throw Error(fmt::format("element type '{}' is not supported; allowed: {}", text, allowed_names(kElementTypes)));
}

Variant parse_variant(std::string_view text) {
  for (const auto& [v, name] : kVariantNames)
    if (name == text) return v;
  throw Error(fmt::format("variant '{}' is not supported; allowed: {}", text, allowed_names(kVariantNames)));
}

Operation parse_operation(std::string_view text) {
  std::string allowed;
  for (const OperationRow& entry : kOperations) {
    if (entry.family->name == text) return entry.operation;
    allowed += (allowed.empty() ? "" : ", ") + std::string(entry.family->name);
  }
  throw Error(fmt::format("operation '{}' is not supported; allowed: {}", text, allowed));
}

void KernelSpec::validate() const {
  if (W != 4 && W != 8 && W != 16 && W != 32)
    throw Error(fmt::format("W = {} is not allowed: the group width must be 4, 8, 16 or 32 (a power of two "
                            "that fits in a warp)", W));
  if (K < 1 || K > kMaxK)
    throw Error(fmt::format("K = {} is not allowed: the number of categories must be in [1, {}]", K, kMaxK));
  if (R < 0 || R > W - 1)
    throw Error(fmt::format("R = {} is not allowed: the remnant threshold must be in [0, W-1] = [0, {}] "
                            "(remnants of up to R elements are searched linearly, larger ones padded)", R, W - 1));
  if (info(type).narrow() && is_lda(operation))
    throw Error(fmt::format("element type {} is not allowed for {}: the LDA kernels take f32 or f64", name_of(type),
                            name_of(operation)));
  if (operation == Operation::sample_small && K > kMaxSmallK)
    throw Error(fmt::format("K = {} is not allowed for sample_small: it stages whole rows in shared memory and takes "
                            "K <= {}; use sample or sample_split", K, kMaxSmallK));
  if (operation == Operation::sample_small && (R != 0 || variant != Variant::addsub))
    throw Error(fmt::format("R = {}, variant = {} is not allowed for sample_small: it builds no table; use R = 0 and "
                            "variant addsub", R, name_of(variant)));
  if (splits_rows(operation) && R != 0)
    throw Error(fmt::format("R = {} is not allowed for {}: its rows are split into whole W x W tiles, padded with "
                            "zero weights at the end, and have no remnant; use R = 0", R, name_of(operation)));
  name_of(variant);
  name_of(operation);
  name_of(input);
  name_of(draws);
  if (!has_forms(operation) && (input != InputKind::weights || draws != Draws::one))
    throw Error(fmt::format("input = {} and draws = {} are not allowed for {}: only sample and sample_split kernels "
                            "take logits or draw several categories per row", name_of(input), name_of(draws),
                            name_of(operation)));
  if (!warp_copies && !plain_sample(*this))
    throw Error(fmt::format("warp_copies = false is not allowed for {}{}: only the plain sample kernels (sample, "
                            "sample_pairs; weights, one draw) copy their warps' rows", name_of(operation),
                            has_forms(operation) ? fmt::format(" with input = {}, draws = {}", name_of(input),
                                                               name_of(draws))
                                                 : std::string()));
  if (ring_anywhere && !ring_reads_rows_at_one_place(*this))
    throw Error(fmt::format("ring_anywhere = true is not allowed for {} K = {} {}: only a plain sample kernel (sample, "
                            "sample_pairs; weights, one draw) whose pass-1 ring would read every row of a tile at one "
                            "place takes it (rows on 16 bytes, long enough to stage)",
                            name_of(operation), K, name_of(type)));
  if (ring_row_order && !ring_reads_slots_permuted(*this))
    throw Error(fmt::format("ring_row_order = true is not allowed for {} K = {} {} at W = {}: only a kernel whose "
                            "pass-1 ring stages its rows anywhere at W = 16 and would read a tile's rows into permuted "
                            "slots takes it (f32 rows of odd K and f64 rows of odd K from 1000 are read in row order "
                            "already)", name_of(operation), K, name_of(type), W));
  if (ring_deep && !ring_deepens_odd_pairs(*this))
    throw Error(fmt::format("ring_deep = true is not allowed for {} K = {} {}: only a kernel over pairs at odd K whose "
                            "pass-1 ring would be the shallow one at 8 to 15 lines of blocks a row, and that does not "
                            "copy its warps' rows, takes it (the deep ring is every other staged row's from 8 lines)",
                            name_of(operation), K, name_of(type)));
  if (input == InputKind::logits && accumulator_of(type) != ElementType::f32)
    throw Error(fmt::format("element type {} is not allowed for logits: logits are f32, f16 or bf16 (summed in "
                            "f32)", name_of(type)));
  family_of(*this);  // a form without a family (logits with one draw) throws here
}

int KernelSpec::log2_w() const { return std::countr_zero(static_cast<unsigned>(W)); }

std::string kernel_name(const KernelSpec& spec) {
  std::string name = fmt::format("bfly_{}_{}_w{}_k{}_r{}_{}", family_of(spec).name, name_of(spec.type), spec.W, spec.K,
                                 spec.R, name_of(spec.variant));
  for (const KernelSwitch& s : kKernelSwitches)
    if (is_set(spec, s)) name += s.suffix;
  return name;
}

KernelSpec parse_kernel_name(std::string_view name) {
  const auto fail = [&](std::string_view why) {
    return Error(fmt::format("'{}' is not a bfly kernel name ({}); expected the form "
                             "bfly_<operation>_<type>_w<W>_k<K>_r<R>_<variant>{}, e.g. "
                             "bfly_sample_f32_w32_k1024_r8_addsub", name, why, [] {
                               std::string suffixes;
                               for (const KernelSwitch& s : kKernelSwitches) suffixes += fmt::format("[{}]", s.suffix);
                               return suffixes;
                             }()));
  };
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = name.find('_', start);
    fields.push_back(name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  // bfly_<operation>_<type>_w<W>_k<K>_r<R>_<variant> and the switches' suffixes; the operation may itself contain '_'
  // (lda_z_doc). The suffixes are taken from the last field back, in the table's reverse order: one out of order stays
  // a field, and the name fails below.
  constexpr std::size_t kSwitches = std::size(kKernelSwitches);
  bool switched[kSwitches] = {};
  for (std::size_t i = kSwitches; i-- > 0;) {
    switched[i] = fields.size() > 7 && fields.back() == kKernelSwitches[i].suffix.substr(1);
    if (switched[i]) fields.pop_back();
  }
  if (fields.size() < 7 || fields[0] != "bfly") throw fail("it must have at least 7 fields separated by '_'");
  std::string operation(fields[1]);
  for (std::size_t i = 2; i + 5 < fields.size(); ++i) {
    operation += '_';
    operation += fields[i];
  }
  fields.erase(fields.begin() + 2, fields.end() - 5);
  const auto tagged = [&](std::string_view field, char tag, std::string_view what) {
    if (field.size() < 2 || field[0] != tag) throw fail(fmt::format("field '{}' must start with '{}'", field, tag));
    return parse_int(field.substr(1), what);
  };
  KernelSpec spec;
  try {
    if (const SampleForm* form = sample_form(operation)) {
      spec.operation = form->operation;
      spec.input = form->input;
      spec.draws = form->draws;
    } else {
      spec.operation = parse_operation(operation);
    }
    spec.type = parse_element_type(fields[2]);
    spec.W = tagged(fields[3], 'w', "W");
    spec.K = tagged(fields[4], 'k', "K");
    spec.R = tagged(fields[5], 'r', "R");
    spec.variant = parse_variant(fields[6]);
    for (std::size_t i = 0; i < kSwitches; ++i)
      spec.*kKernelSwitches[i].field = switched[i] ? kKernelSwitches[i].set_to : !kKernelSwitches[i].set_to;
  } catch (const Error& e) {
    throw fail(e.what());
  }
  spec.validate();
  if (kernel_name(spec) != name) throw fail("it is not in canonical form");
  return spec;
}

const KernelFamily& family_of(const KernelSpec& spec) {
  if (!has_forms(spec.operation)) return family_of(spec.operation);
  for (const SampleForm& form : kSampleForms)
    if (form.operation == spec.operation && form.input == spec.input && form.draws == spec.draws) return *form.family;
  throw Error(fmt::format("input = {} with draws = {} is not a {} kernel: logits are drawn with draws = "
                          "with_replacement (num_samples = 1 draws once){}", name_of(spec.input),
                          name_of(spec.draws), name_of(spec.operation),
                          spec.operation == Operation::sample ? " or without_replacement" : ""));
}

int part_totals_per_row(const KernelSpec& spec) {
  if (!splits_rows(spec.operation)) return 0;
  const LaunchGeometry g = launch_geometry(spec);
  return g.parts_per_row + (spec.input == InputKind::logits ? g.ctas_per_row : 0);
}

namespace {
// Pass 2's chosen tiles (stashes_chosen_tile): W x (W + 1) columns per group, in pass 1's ring for a staged kernel,
// else in an array of their own beside the running totals, within the 32 KiB of shared memory that a kernel loading
// into registers keeps to. For 16-bit pairs only, whose first weight picks within the drawn pair: two dependent trips
// to memory fewer. On the H100 at 1 GiB (bench/results/h100-80gb-hbm3-2026-11-27-stash-*-sampling.csv, 83a9c70
// against 5623159, which kept the tiles for every staged kernel and for pairs of 3 blocks or more) they gained for
// staged pairs (bf16 K = 256 0.89 -> 0.92, 1024 0.83 -> 0.88, 3002 0.77 -> 0.84, 8192 0.84 -> 0.90) and for pairs
// loaded into registers by row slots (K = 130, 140 and 200: +0.05 to +0.08, -stash-whole-rows-*); rows loaded whole
// went either way (K = 100 +0.03, 102 and 110 -0.00 to -0.03, 128 -0.02) and go without, and f32 and f64, which save
// one trip only, moved within 0.02 either way and go without too. Odd K over pairs, staged and not copying their warps'
// rows, on the H200 at 1 GiB (bench/results/h200-2026-12-03-s13c4-ab-table.txt, twice in turn): bf16 and f16 K =
// 721-3001 +0.04 to +0.12 (bf16 K = 1201 0.776 -> 0.892, 2047 0.806 -> 0.886), K = 1000 unchanged.
bool stash_eligible(const KernelSpec& spec) {
  return plain_sample(spec) && is_narrow(spec.type) && spec.weights_per_column() == 2 &&
         (!spec.pairs_by_phase() || stages_blocks(spec)) && spec.blocks() >= 3 && !loads_whole_row(spec);
}
int stash_bytes(const KernelSpec& spec, int threads) {
  return threads / spec.W * spec.W * (spec.W + 1) * column_bytes(spec);
}
bool stash_fits(const KernelSpec& spec, const LaunchGeometry& g) {
  const int totals = g.chunks * g.threads_per_cta * size_of(accumulator_of(spec.type));
  return totals + stash_bytes(spec, g.threads_per_cta) <= kMaxRegisterKernelShared;
}
// The shared memory of the chosen tiles that a kernel loading into registers keeps in an array of their own (a staged
// kernel keeps them in its ring), in the CTA of `g`; 0 for a kernel that keeps none.
int own_stash_bytes(const KernelSpec& spec, const LaunchGeometry& g) {
  return !stages_blocks(spec) && stash_eligible(spec) && stash_fits(spec, g) ? stash_bytes(spec, g.threads_per_cta) : 0;
}
}  // namespace

namespace {
// The bytes of one row's running total in shared memory (two for logits: the total and the row maximum's scale).
int running_total_bytes(const KernelSpec& spec) {
  return size_of(accumulator_of(spec.type)) * (spec.input == InputKind::logits ? 2 : 1);
}
// The kernels that may copy their warps' rows (copies_warp_rows, docs/DESIGN.md section 14, "Short rows in one copy"):
// the plain sample kernel at W = 16, one weight a column (f32, f64) or 16-bit pairs, whose warps' copies are at most
// kMaxWarpCopyBytes. Measured on the H100 at 1 GiB against the rule before it (copies for rows staged anywhere only;
// bench/results/h100-80gb-hbm3-2026-11-27-copy-rule-*-sampling.csv, the same binary and a switch, twice in turn): rows
// of at least 3 blocks (2 over pairs) gained, f32 and f64 rows of 2 blocks lost up to 0.07 (f32 K = 31-40), f64 rows of
// whole 128-byte lines lost 0.02-0.03 (K = 64 and 128, which the register loads read at the ceiling), and copies of
// more than 45 KiB a warp (4 one-warp CTAs an SM: f32 K = 360, bf16 K = 720) lost 0.01-0.1.
constexpr int kCopiedMinBlocks = 3;       // one weight a column
constexpr int kCopiedPairsMinBlocks = 2;  // 16-bit pairs
constexpr int kMaxWarpCopyBytes = 45 * 1024;
bool warp_copy_eligible(const KernelSpec& spec) {
  if (!spec.warp_copies) return false;
  const bool pairs = spec.weights_per_column() == 2;
  if (!plain_sample(spec) || spec.W != 16 || pairs != is_narrow(spec.type)) return false;  // f32, f64, 16-bit pairs
  if (spec.type == ElementType::f64 && !pairs && spec.K * 8 % kStageRowBytes == 0) return false;  // whole lines
  if (warp_copy_words(spec) * size_of(spec.type) > kMaxWarpCopyBytes) return false;
  return spec.blocks() >= (pairs ? kCopiedPairsMinBlocks : kCopiedMinBlocks);
}
// The ring's bytes in a CTA of `threads`, and the warps' copies'; a staged kernel that copies holds the larger of the
// two (they share their bytes: a launch uses one).
int ring_bytes(const KernelSpec& spec, int threads) { return staged_ring(spec).stages * threads * kStageRowBytes; }
int copies_bytes(const KernelSpec& spec, int threads) {
  return threads / 32 * warp_copy_words(spec) * size_of(spec.type);
}
int ring_or_copies_bytes(const KernelSpec& spec, int threads) {
  return std::max(ring_bytes(spec, threads), copies_bytes(spec, threads));
}
// The shared memory of a kernel that copies its warps' rows in CTAs of `threads`, beyond its running totals: pass 1's
// lines (the copies, or for a staged kernel the larger of the copies and the ring), an mbarrier a warp, and the chosen
// tiles of a kernel that loads into registers and keeps them (stashes_chosen_tile, for rows with ld != K).
int warp_copies_extra_bytes(const KernelSpec& spec, const LaunchGeometry& g) {
  const bool staged = stages_blocks(spec);
  const int lines = staged ? ring_or_copies_bytes(spec, g.threads_per_cta) : copies_bytes(spec, g.threads_per_cta);
  return lines + g.threads_per_cta / 32 * 8 + own_stash_bytes(spec, g);
}

// launch_geometry's row kernels (sample, sample_pairs, lda_z, lda_z_doc); `copies` (if not null) says whether the
// kernel copies its warps' rows.
LaunchGeometry row_kernel_geometry(const KernelSpec& spec, bool* copies) {
  LaunchGeometry g;
  const bool per_group = item_per_group(spec.operation);
  const bool staged = stages_blocks(spec);
  g.threads_per_cta = per_group ? kDocThreadsPerCta : staged ? staged_ring(spec).threads : kThreadsPerCta;
  g.rows_per_cta = per_group ? g.threads_per_cta / spec.W : g.threads_per_cta;
  const int blocks = spec.blocks();  // a row of at most one block keeps no running totals in shared memory
  const int max_chunks = staged ? staged_ring(spec).max_chunks : kMaxChunks;
  g.chunk_blocks = blocks <= 1 ? 0 : (blocks + max_chunks - 1) / max_chunks;
  g.chunks = blocks <= 1 ? 0 : (blocks + g.chunk_blocks - 1) / g.chunk_blocks;
  // The running totals in the accumulator; logits also keep the row maximum each total was summed under.
  g.static_shared_bytes = g.chunks * g.threads_per_cta * running_total_bytes(spec);
  if (per_group) {
    const long long theta_bytes = static_cast<long long>(g.rows_per_cta) * spec.K * size_of(spec.type);
    g.theta_in_shared = g.static_shared_bytes + theta_bytes <= kMaxStaticShared;
    if (g.theta_in_shared) g.static_shared_bytes += static_cast<int>(theta_bytes);
  }
  g.blocks_in_flight = std::clamp(blocks, 1, kRegisterBlocksInFlight);
  if (loads_whole_row(spec)) g.blocks_in_flight = blocks;
  if (staged)  // a step reads lines_per_step lines of kStageRowBytes of each row: the blocks it builds
    g.blocks_in_flight = staged_ring(spec).lines_per_step * kStageRowBytes / (spec.W * column_bytes(spec));
  if (copies != nullptr) *copies = false;
  // A kernel that copies its warps' rows takes the largest CTA, up to its own, whose copies fit the static shared
  // memory beside its running totals (copies_warp_rows; fewer threads, fewer copies a CTA).
  if (warp_copy_eligible(spec)) {
    for (LaunchGeometry c = g; c.threads_per_cta >= 32; c.threads_per_cta /= 2) {
      c.rows_per_cta = c.threads_per_cta;
      c.static_shared_bytes = c.chunks * c.threads_per_cta * running_total_bytes(spec);
      c.static_shared_bytes += warp_copies_extra_bytes(spec, c);
      if (c.static_shared_bytes > kMaxStaticShared) continue;
      if (copies != nullptr) *copies = true;
      return c;
    }
  }
  g.static_shared_bytes += staged ? ring_bytes(spec, g.threads_per_cta) : own_stash_bytes(spec, g);
  return g;
}
}  // namespace

LaunchGeometry launch_geometry(const KernelSpec& spec) {
  spec.validate();
  LaunchGeometry g;
  if (splits_rows(spec.operation)) {
    // W x W tiles of columns (weights, or pairs of them) per row, the last padded
    const int tiles = (spec.columns() + spec.W * spec.W - 1) / (spec.W * spec.W);
    const int groups_needed = (tiles + kSplitTilesPerGroup - 1) / kSplitTilesPerGroup;
    g.threads_per_cta = std::min(kSplitMaxThreadsPerCta, (groups_needed * spec.W + 31) / 32 * 32);
    g.rows_per_cta = 1;  // a CTA never covers more than (a slice of) one row
    g.blocks_in_flight = kSplitTilesPerGroup;
    const int tiles_per_cta = g.threads_per_cta / spec.W * kSplitTilesPerGroup;
    g.ctas_per_row = (tiles + tiles_per_cta - 1) / tiles_per_cta;
    g.parts_per_row = tiles * spec.W;
    // The last CTA's scan of the chunk totals and two flags; per group the uniform, target, chosen part and target
    // within it of one draw; for logits each warp's maximum and each CTA's maximum of the row.
    const int groups = g.threads_per_cta / spec.W, sum_bytes = size_of(accumulator_of(spec.type));
    g.static_shared_bytes = g.threads_per_cta * sum_bytes + 2 * 4 + groups * (3 * sum_bytes + 4);
    if (spec.input == InputKind::logits) g.static_shared_bytes += (g.threads_per_cta / 32 + g.ctas_per_row) * 4;
    return g;
  }
  if (spec.operation == Operation::sample_small) {
    // A lane draws ceil(16 / K) rows (at most 8), so that it has at least 16 weights to load.
    const int rows_per_lane = std::min(8, (16 + spec.K - 1) / spec.K);
    g.threads_per_cta = kThreadsPerCta;
    g.rows_per_cta = kThreadsPerCta * rows_per_lane;
    g.static_shared_bytes = g.rows_per_cta * (spec.K | 1) * size_of(accumulator_of(spec.type));
    return g;
  }
  return row_kernel_geometry(spec, nullptr);
}

int pass1_stages(const KernelSpec& spec) { return stages_blocks(spec) ? staged_ring(spec).stages : 0; }
int pass1_lines_per_step(const KernelSpec& spec) {
  return stages_blocks(spec) ? staged_ring(spec).lines_per_step : 0;
}

// A CTA's pass 2 waits on memory while its slot (pass 1's ring) streams nothing. One block after another it waits
// CHUNK_BLOCKS + 1 times (the chunk's blocks have left L2 by then: a CTA of f32 K = 4096 reads 512 KB before it), and
// at K = 4096 pass 2 cost f32 rows on lines 0.07 of the read ceiling at 1 GiB on the H200 (bench/results/
// h200-2026-11-28-s8c3-row-parts-leave.txt: 0.844 with it, 0.915 without). On the H200 at 1 GiB, the chunk loaded
// together against main, twice in turn (-s8c5-ab-*.csv): f32 K = 1500-4096 (2-4 blocks a chunk) +0.007 to +0.03 (K =
// 4096 0.860 -> 0.889, 3072 0.859 -> 0.888), f64 K = 2000-2049 (2) +0.01 to +0.04 (2047 0.872 -> 0.912) but K = 1500
// -0.006, 16-bit pairs K = 2500-8192 (2-4, reloading the chosen tile) -0.004 to +0.047 (bf16 K = 3001 0.722 -> 0.770);
// the landed form on another H200 (-s8c6-ab-*.csv): f32 +0.005 to +0.028, f64 K = 2000-2049 +0.012 to +0.034, 16-bit
// pairs +0.007 to +0.050. Chunks loaded in batches of fewer blocks went either way (f32 K = 5000 -0.037 in batches of
// 4, bf16 K = 12001 -0.09, f64 K = 2500-12001 -0.012 to +0.014 in 2s), so a chunk too large for the registers keeps one
// block after another.
bool pass2_keeps_chunk(const KernelSpec& spec) {
  if (!plain_sample(spec)) return false;  // the LDA z-steps: not measured
  const LaunchGeometry g = launch_geometry(spec);
  if (g.chunk_blocks <= 1) return false;
  int words = kPass2ChunkWords;
  if (const int ctas = min_ctas_per_sm(spec); ctas > 0)
    words = std::min(words, kRegistersPerSm / (ctas * g.threads_per_cta) / 4);
  return g.chunk_blocks * spec.W * (size_of(accumulator_of(spec.type)) / 4) <= words;
}

// One lane walking a row of 3000-4000 weights took 180-250 us on the H100 and held whole launches of 1 GiB for it (one
// CTA: f32 K = 2047 0.815 of the read ceiling, f16 K = 3002 0.76, 4097 0.73; per-CTA times in bench/results/
// h100-80gb-hbm3-2026-11-28-cta-times-bench.log); with the warp reading it they read 0.887, 0.855 and 0.80
// (-2026-11-28-stragglers-sampling.csv). In every kernel, the warp's redraw changed ptxas's registers and spilled some
// (f64 K = 128-256: 84-1108 bytes, 0.04-0.05 of the read ceiling lost; f64 K = 48: 0.956 -> 0.835), so shorter rows,
// whose lane walks them in a few microseconds, keep their lane's redraw.
bool redraws_by_warp(const KernelSpec& spec) { return plain_sample(spec) && spec.K >= kWarpRedrawFromK; }

bool tight_rows_off_16_bytes(int K, ElementType type) {
  return static_cast<long long>(K) * size_of(type) % kStagePieceBytes != 0;
}

// Single weights in rows of at least kSectorsAnywhereFromK weights whose rows packed tightly are not a multiple of 32
// bytes (f32 K = 4 mod 8, f64 K = 2 mod 4; block 0 is then a multiple of 32 bytes from the row's start whatever the
// remnant) are staged anywhere too. The ring in row order copies a row's own 128 bytes from block 0 on, so that such a
// copy starts and ends in the middle of a sector: a warp's copy of 128 bytes reads 5 sectors, and L2 served f64
// K = 362 52.0 M sectors for the 35.1 M of K = 360 (ncu, H100,
// bench/results/h100-80gb-hbm3-2026-11-28-sectors-ncu.txt). Staged anywhere, the copies are memory's own lines. On
// the H100 at 1 GiB (-sector-ab-sampling.csv for f32, -sector-ab-f64-sampling.csv, each build twice in turn), every
// such K staged anywhere against the ring in row order:
// - f64 K = 394-510 read a median of 0.882 -> 0.905 of the read ceiling (-0.002 to +0.034; under 0.90: 30 -> 9 K),
//   K = 1002, 2002, 2046, 3002 and 4094 +0.015 to +0.041 (K = 1502: -0.006);
// - f32 K = 380-508 +0.00 to +0.044 (K = 404: -0.003; K = 508: 0.890 -> 0.934), K = 1004, 2004 and 3004 +0.03;
// - shorter rows lost: f64 K = 182-262 up to -0.064 (K = 194), K = 266-390 gained or lost by K mod 32 (-0.028 to
//   +0.018), f32 K = 372 -0.010. They keep the ring in row order here; on the kernels of 2026-12-07 an H100 read them
//   faster staged anywhere from K = 182 (f64 K = 186-386 +0.020 to +0.046), which the chooser's rule does
//   (KernelSpec::ring_anywhere, gen::choose_sample_spec).
namespace {
constexpr int kSectorsAnywhereFromK = 392;
bool rows_off_sectors(const KernelSpec& spec) {
  constexpr int kSectorBytes = 32;
  return spec.weights_per_column() == 1 && spec.K >= kSectorsAnywhereFromK &&
         static_cast<long long>(spec.K) * size_of(spec.type) % kSectorBytes != 0;
}
}  // namespace

bool stages_rows_anywhere(const KernelSpec& spec) {
  return stages_blocks(spec) && (spec.ring_anywhere || tight_rows_off_16_bytes(spec.K, spec.type) ||
                                 spec.first_block_column() % (kStagePieceBytes / column_bytes(spec)) != 0 ||
                                 rows_off_sectors(spec));
}

// Rows on their lines in the deep ring, waiting for the line past the step like the others (the kernel's test of the
// rows and its branch around each wait gone), against main, on an H100 at 1 GiB, two runs each in turn
// (bench/results/h100-80gb-hbm3-2026-12-07-s26c1-on-lines-*.csv): f32 K = 1024-4096 by 512 +0.000 to +0.011, f64
// +0.009, +0.018 at K = 1024 and 1536, the rest -0.003 to +0.008.
bool pass1_waits_less_on_lines(const KernelSpec& spec) {
  return pass1_stages(spec) == kShallowRingLines && !stages_rows_anywhere(spec);
}

bool ring_reads_rows_at_one_place(const KernelSpec& spec) {
  KernelSpec by_rule = spec;
  by_rule.ring_anywhere = false;
  return stages_blocks(by_rule) && !stages_rows_anywhere(by_rule);
}

bool ring_reads_slots_permuted(const KernelSpec& spec) {
  KernelSpec by_rule = spec;
  by_rule.ring_row_order = false;
  return stages_rows_anywhere(by_rule) && by_rule.W == 16 && !ring_in_row_order(by_rule);
}

bool ring_deepens_odd_pairs(const KernelSpec& spec) {
  KernelSpec by_rule = spec;
  by_rule.ring_deep = false;
  if (!by_rule.pairs_by_phase() || !stages_blocks(by_rule)) return false;
  const int block_bytes = row_block_bytes(by_rule);
  return block_bytes >= kDeepRingLines * kStageRowBytes && block_bytes < kDeepRingLinesOddPairs * kStageRowBytes &&
         !copies_warp_rows(by_rule);
}

int warp_copy_words(const KernelSpec& spec) {
  const int per_granule = kStagePieceBytes / size_of(spec.type);
  return (32 * spec.K + 2 * (per_granule - 1) + per_granule - 1) / per_granule * per_granule;
}

// First for rows staged anywhere: on the H100 at 1 GiB (bench/RESULTS.md, "Short rows in one copy"), f32 K = 89-127
// of odd K read 0.93-0.975 of the read ceiling with the copy against 0.78-0.86 through the ring, f32 K = 129-179
// 0.96-0.98 against 0.82-0.90. For every type and path since (warp_copy_eligible's measurements; bench/RESULTS.md,
// "Short rows in one copy, every type"): bf16 and f16 K = 96-700 0.93-0.99, f32 K = 63-350 0.94-0.99, f64 K = 63-179
// 0.94-0.99.
bool copies_warp_rows(const KernelSpec& spec) {
  if (!warp_copy_eligible(spec)) return false;
  spec.validate();
  bool copies = false;
  row_kernel_geometry(spec, &copies);
  return copies;
}

int pass1_lines_bytes(const KernelSpec& spec) {
  const bool staged = pass1_stages(spec) > 0, copies = copies_warp_rows(spec);
  const int threads = launch_geometry(spec).threads_per_cta;
  if (copies) return staged ? ring_or_copies_bytes(spec, threads) : copies_bytes(spec, threads);
  return staged ? ring_bytes(spec, threads) : 0;
}

bool screens_weights(const KernelSpec& spec) { return plain_sample(spec); }

bool stashes_chosen_tile(const KernelSpec& spec) {
  if (!stash_eligible(spec)) return false;
  // Odd K: only the staged kernels that do not copy their warps' rows (the pick from a copy keeps no tile). Asked here,
  // not in stash_eligible: copies_warp_rows counts the stash's shared memory through stash_eligible.
  if (spec.pairs_by_phase() && copies_warp_rows(spec)) return false;
  if (pass1_stages(spec) > 0) return true;  // the ring holds them
  return stash_fits(spec, launch_geometry(spec));
}

bool loads_row_by_slots(const KernelSpec& spec) {
  return plain_sample(spec) && column_bytes(spec) == 4 && spec.blocks() >= 2 && spec.blocks() <= kSlotRowsMaxBlocks &&
         !stages_blocks(spec);
}

// The ring of rows staged anywhere at W = 16 in row order (slot s = row s, every level of block_total with selects) for
// single f32 weights of odd K, and f64 from kRingInRowOrderF64FromK (from K = 181 by the chooser's rule: KernelSpec::
// ring_row_order, gen::choose_sample_spec). In the permuted order a load's 16 lanes read 4
// rows, and rows that step an odd number of columns put their places on the same banks: ncu counted 42 M shared-memory
// bank conflicts at f32 K = 2047 and 3001 (25 M) against 73 k at K = 2046, and f32 K = 2047 read 0.69 of the DRAM
// throughput against 2046's 0.83 with the same instructions (bench/results/h100-80gb-hbm3-2026-11-27-ncu-under-090-
// 317d4ab-f32.csv); in row order a load reads one row's consecutive columns. On the H100 at 1 GiB, the same binary but
// for the order, twice in turn (-2026-11-27-ring-row-order-sampling.csv): f32 K = 361-3299 of odd K read +0.004 to
// +0.10 of the read ceiling (K = 511 0.871 -> 0.895, 2047 0.837 -> 0.866, 3299 0.747 -> 0.847), f64 K = 1001, 2047,
// 4095 and 4097 +0.014 to +0.019, but f64 K = 199-257 lost 0.016-0.031 and 16-bit pairs gained nothing at odd K (within
// 0.006 but K = 8193, +0.03) and lost at K = 2 mod 4 (bf16 K = 1002 and 2046: -0.023, -0.05); even f32 K off 16 bytes
// (2046) lost 0.008.
//
// 16-bit pairs of K = 2 mod 4 (an odd number of columns a row) in row order since the swizzle by the rows' phases
// (swizzles_by_row_phase): on the H200 at 1 GiB, the same binary but for the order, twice in turn
// (bench/results/h200-2026-11-28-s5c2-ab-sampling.csv), bf16 K = 802-3262 of K = 2 mod 4 read -0.010 to +0.021 of
// the read ceiling over the permuted order (median +0.011; K = 1622 0.884 -> 0.903), and ncu counted bf16 K = 810's
// bank conflicts at 17.4 M permuted, 0.88 M in row order, K = 812's level (-s5c1-ncu.txt).
constexpr int kRingInRowOrderF64FromK = 1000;
bool ring_in_row_order(const KernelSpec& spec) {
  if (!stages_rows_anywhere(spec) || spec.W != 16) return false;
  if (spec.ring_row_order) return true;  // a device's rule (gen::choose_sample_spec) or forced
  if (spec.weights_per_column() == 2) return spec.K % 4 == 2;
  if (spec.K % 2 == 0) return false;
  return spec.type == ElementType::f32 || (spec.type == ElementType::f64 && spec.K >= kRingInRowOrderF64FromK);
}

// With the swizzle g W, the two groups of a warp at W = 16 read the same banks whenever a row steps an odd number of
// 4-byte columns: their row 0s are 16 rows apart, 16 columns (mod a line) by ld, and the swizzle adds 16 more. ncu on
// the H200 (bench/results/h200-2026-11-28-s5c1-ncu.txt): f32 K = 1001 8.7 M bank conflicts with g W, 0.25 M by the
// phases (K = 1002: 0.26 M); bf16 K = 810 33.9 M and 17.4 M. On the H200 at 1 GiB, the same binary but for the
// swizzle, twice in turn (-s5c2-ab-sampling.csv): f32 odd K from 515 to 4096 +0.009 median (-0.002 to +0.034; K = 515
// 0.862 -> 0.896), even K within 0.01, bf16 K = 2 mod 4 +0.083 median (+0.179 at most; with the ring in row order
// above +0.104). f64 moved either way by up to 0.02 (median 0), so it keeps g W.
bool swizzles_by_row_phase(const KernelSpec& spec) { return stages_rows_anywhere(spec) && column_bytes(spec) == 4; }

// Rows loaded whole in row order: on the H100 at 1 GiB, the same binary but for the order, twice in turn
// (bench/results/h100-80gb-hbm3-2026-11-27-row-slots-order-sampling.csv and -row-slots-order-f32-sampling.csv), bf16
// K = 96, 99, 100, 101, 112, 127, 130, 140 and 150 (3-4 blocks of pairs) read 0.03-0.11 more of the read ceiling
// (K = 99 and 101: 0.754 and 0.748 -> 0.855 and 0.856), f16 the same within 0.03, K = 129 0.02 less, and f32 K = 25-56
// (2-3 blocks) 0.01-0.05 more (K = 33: 0.893 -> 0.935; K = 48, whose rows are 192 bytes, -0.002). Rows of whole lines
// lost (bf16 K = 128: -0.06), as did 16-bit rows of 2 blocks (K = 63 and 65: -0.02), f32 rows of 4 blocks went either
// way (K = 60-72: -0.012 to +0.010), and rows of more blocks, loaded 2 blocks a step, lost (bf16 K = 160-200: -0.01
// to -0.32, spilling at K = 176 and 199; f32 K = 81-87: -0.05 to -0.09).
struct BlockRange {
  int least, most;
};
constexpr BlockRange kInRowOrderPairs{3, 4};
constexpr BlockRange kInRowOrderF32{2, 3};
int permuted_slot_rows(const KernelSpec& spec) {
  if (ring_in_row_order(spec)) return 1;
  const long long row_bytes = static_cast<long long>(spec.K) * size_of(spec.type);
  const bool pairs = spec.weights_per_column() == 2 && is_narrow(spec.type);
  const bool f32 = spec.weights_per_column() == 1 && spec.type == ElementType::f32;
  const BlockRange in_order = pairs ? kInRowOrderPairs : kInRowOrderF32;
  if ((pairs || f32) && loads_row_by_slots(spec) && loads_whole_row(spec) && spec.W == 16 &&
      spec.blocks() >= in_order.least && spec.blocks() <= in_order.most && row_bytes % kStageRowBytes != 0)
    return 1;
  return permuted_rows(spec.W);
}

int min_ctas_per_sm(const KernelSpec& spec) {
  // The occupancies below were measured in CTAs of 128 threads; a kernel that copies its warps' rows in smaller CTAs
  // (copies_warp_rows) asks for as many more of them, the same registers a thread.
  const int per_128_threads = plain_sample(spec) ? kThreadsPerCta / launch_geometry(spec).threads_per_cta : 1;
  if (loads_whole_row(spec)) return (size_of(spec.type) == 8 ? 4 : 6) * per_128_threads;
  // Staged pass 1: shared memory bounds the CTAs per SM (5-6 of 34-41 KiB on the H100), not registers, but for 16-bit
  // pairs in CTAs of 64 threads (the ring of 4 lines), held to 6 CTAs (at most 170 registers): ptxas had given f16
  // K = 250 and 258 255 registers (bf16 168, the same instructions), 4 CTAs an SM, and they read 0.70 and 0.71 of the
  // read ceiling against bf16's 0.82 and 0.85. On the H100 at 1 GiB, the same binary but for the cap, twice in turn
  // (bench/results/h100-80gb-hbm3-2026-11-27-staged-cap-sampling.csv), f16 K = 250, 258, 300, 500 and 511 read 0.832,
  // 0.838, 0.877, 0.897 and 0.835 (+0.02 to +0.13), bf16 K = 250, 300 and 511 +0.03 (K = 145-255 of rows not staged or
  // already under 170 registers within 0.002); f32 and f64 spilled under the same cap and lost up to 0.05 (f32 K = 250
  // and 258, f64 K = 200), so they keep none.
  if (stages_blocks(spec)) return is_narrow(spec.type) && launch_geometry(spec).threads_per_cta == 64 ? 6 : 0;
  // 16-bit pairs through the row slots: 6 (at most 80 registers). On the H100 at 1 GiB, the same binary but for the cap
  // (bench/results/h100-80gb-hbm3-2026-11-27-row-slots-hints-cap-sampling.csv), bf16 K = 160, 199, 200 and 224
  // read 0.02-0.07 more of the read ceiling at 6 than at 7 (f16 0.02-0.13), K = 140 and 150 within 0.002; with no
  // cap bf16 K = 160 and 224 gained nothing.
  if (plain_sample(spec) && is_narrow(spec.type) && loads_row_by_slots(spec)) return 6 * per_128_threads;
  // 16-bit weights streamed block by block: 7 CTAs per SM (at most 73 registers instead of 72-80, 6 CTAs). On the
  // H100 at 1 GiB that read bf16 at 0.64 of the read ceiling instead of 0.49 at K = 256 (0.61 against 0.54 at
  // K = 1024); 8 CTAs spilled and gained less, and f32 gained nothing from either (bench/RESULTS.md).
  if (plain_sample(spec) && is_narrow(spec.type) && spec.blocks() >= 1) return 7 * per_128_threads;
  // Logits with one draw or several with replacement (every type): 6 CTAs per SM (at most 80 registers instead of
  // 96-112; their 32 KiB of shared memory per CTA allow no more than 6). H100, 1 GiB: f32 K = 256 0.20 -> 0.35 of
  // the read ceiling, K = 1024 0.24 -> 0.29, bf16 K = 256 0.09 -> 0.15; K = 4096 within 1 % (bench/RESULTS.md).
  // Not without replacement: its drawn categories need registers too, and at 80 it spills 64-156 bytes.
  if (spec.operation == Operation::sample && spec.input == InputKind::logits &&
      spec.draws != Draws::without_replacement)
    return 6;
  // sample_split of 8-byte weights, one draw: at most 128 registers. Its two tiles in flight hold 2 W doubles per
  // lane, and since the forms share its skeleton (several draws in rounds) ptxas gave it 140-156 registers instead
  // of 124-128, and with them up to half of the warps per SM. On the H100 at 1 GiB the cap took f64 K = 32000 from
  // 0.80 to 0.90 of the read ceiling and K = 128256 from 0.85 to 0.91 (bench/RESULTS.md).
  if (spec.operation == Operation::sample_split && size_of(spec.type) == 8 && spec.draws == Draws::one)
    return kRegistersPerSm / (launch_geometry(spec).threads_per_cta * 128);
  // sample_split_pairs of odd K in CTAs of 256 threads: 3 CTAs per SM (at most 80 registers). Without the cap ptxas
  // gave bf16 K = 50257 90 registers and 2 CTAs per SM, and it read 0.757 of the read ceiling on the H100 at 1 GiB
  // where f16 (80 registers) read 0.867 (bench/results/h100-80gb-hbm3-2026-11-27-split-pairs-odd-k.csv). Smaller
  // CTAs (shorter rows) are left alone: for 5 warps (K = 16385) the same cap spilled.
  if (spec.operation == Operation::sample_split_pairs && spec.pairs_by_phase() &&
      launch_geometry(spec).threads_per_cta == kSplitMaxThreadsPerCta)
    return 3;
  return 0;
}

std::string describe(const KernelSpec& spec) {
  std::string text = fmt::format("W={} K={} R={} type={} variant={} operation={}", spec.W, spec.K, spec.R,
                                 name_of(spec.type), name_of(spec.variant), name_of(spec.operation));
  if (spec.input != InputKind::weights || spec.draws != Draws::one)
    text += fmt::format(" input={} draws={}", name_of(spec.input), name_of(spec.draws));
  for (const KernelSwitch& s : kKernelSwitches)
    if (is_set(spec, s)) text += fmt::format(" {}", s.description);
  return text;
}

}  // namespace bfly::gen
