// KernelSpec: the plain description of one generated kernel, its validation, and its self-describing name.
#pragma once

#include "bfly/spec/element_type.hpp"
#include "bfly/spec/families.hpp"
#include "bfly/spec/kernel_family.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace bfly::gen {

// Butterfly replacement: swap is Figure 4 ([a b; c d] -> [a c; a+b c+d]); addsub is Figure 8
// ([a b; c d] -> [a d; a+b c+d]) and searches with add-or-subtract steps (Algorithm 10).
enum class Variant { swap, addsub };

// What the kernel does around the table build and search; one row of BFLY_OPERATIONS (bfly/spec/families.hpp)
// each, named after its family: `sample` draws one category per row of explicit weights; `lda_z` draws a topic per
// token from theta[doc] * phi[word] (the paper's LDA z-step, one document per lane, Algorithm 7); `lda_z_doc` draws
// the same topics with one document per group: the W lanes take W tokens of one document at a time, so theta[doc]
// is one row shared by the group instead of W rows cached per lane. `sample_small` and `sample_split` draw what
// `sample` draws, for the ends of the K range (docs/DESIGN.md section 12): several short rows per lane (K <= 32,
// R = 0, no table), and one long row over several CTAs with a two-level table (R = 0). `sample_pairs` is `sample`
// with two adjacent weights per table entry: each lane loads both at once (4 bytes of f16/bf16, 8 of f32) and the
// table is built over their sums, then one comparison picks between the two (K even, rows aligned to a pair).
// `sample_split_pairs` is `sample_split` over the same pairs: a part of the row is W pairs, and each lane's load is
// one 4-byte word of f16/bf16 (docs/DESIGN.md section 13); a row of odd K pairs up from the even address at or before
// its start, and the one pair that holds a weight outside the row counts only the row's weight.
enum class Operation {
#define BFLY_OPERATION_ENUM(operation, family, per_group) operation,
  BFLY_OPERATIONS(BFLY_OPERATION_ENUM)
#undef BFLY_OPERATION_ENUM
};

// The family of an operation's kernels, and whether one item (row, document) takes a group of W lanes (else one
// lane).
const KernelFamily& family_of(Operation operation);
bool item_per_group(Operation operation);

// True for the operations that split a row over several CTAs (sample_split, sample_split_pairs): they take the
// scratch part_totals and arrivals, and a grid of M * CTAS_PER_ROW CTAs.
constexpr bool splits_rows(Operation operation) {
  return operation == Operation::sample_split || operation == Operation::sample_split_pairs;
}

// True for the LDA z-step operations (lda_z, lda_z_doc), which share one kernel ABI.
constexpr bool is_lda(Operation operation) {
  return operation == Operation::lda_z || operation == Operation::lda_z_doc;
}

// What the rows of a `sample` kernel hold: non-negative weights, or logits drawn from through softmax(logits / T)
// (the maximum and the exponentials formed inside the passes, never stored).
enum class InputKind { weights, logits };

// How many categories a `sample` kernel draws per row: one (the kernel of Algorithm 7), or num_samples (a kernel
// argument) from one table per row, with replacement or without (distinct categories, at most kMaxDistinctDraws).
enum class Draws { one, with_replacement, without_replacement };

// The most draws per row without replacement: each lane keeps the categories it has drawn (in local memory) and
// redraws until it finds a new one (docs/DESIGN.md section 11).
inline constexpr int kMaxDistinctDraws = 64;
// The most draws per row with replacement: draw d is the Philox counter word d, below the redraw field (2^24).
inline constexpr int kMaxDraws = 1 << 24;

std::string_view name_of(InputKind input);     // "weights", "logits"
std::string_view name_of(Draws draws);         // "one", "with_replacement", "without_replacement"
InputKind parse_input_kind(std::string_view text);
Draws parse_draws(std::string_view text);

std::string_view name_of(Variant variant);     // "addsub"
std::string_view name_of(Operation operation); // its family's name: "sample", "lda_z", "lda_z_doc"
Variant parse_variant(std::string_view text);
Operation parse_operation(std::string_view text);

struct KernelSpec {
  int W = 32;                  // lanes per group: 4, 8, 16 or 32 (width of the shuffles)
  int K = 1024;                // categories per distribution, 1 .. kMaxK
  int R = 8;                   // largest remnant (K mod W) searched linearly; larger remnants are padded
  ElementType type = ElementType::f32;
  Variant variant = Variant::addsub;
  Operation operation = Operation::sample;
  // The form of a `sample` or `sample_split` kernel (the others keep the defaults); a row of BFLY_SAMPLE_FORMS each.
  InputKind input = InputKind::weights;
  Draws draws = Draws::one;
  // Whether the plain sample kernel (sample, sample_pairs) may copy its warps' rows into shared memory where the rule
  // allows (gen::copies_warp_rows, docs/DESIGN.md section 14); false keeps the ring or register loads for every
  // stride. The chooser turns copies off where a device's memory outruns them (gen::choose_sample_spec); the name of
  // such a kernel ends in _nocopy.
  bool warp_copies = true;
  // Whether pass 1's ring stages rows that start on 16 bytes as it stages rows that start anywhere: memory's lines
  // copied in place, each row read at its own phase (gen::stages_rows_anywhere, docs/DESIGN.md section 14), where the
  // rule would read every row of a tile at one place. Only for a plain sample kernel whose ring would read its rows at
  // one place. The chooser sets it for rows off 32-byte sectors on a device whose memory outruns the ring at one place
  // (gen::choose_sample_spec); the name of such a kernel ends in _anywhere.
  bool ring_anywhere = false;
  // Whether pass 1's ring of rows staged anywhere at W = 16 puts row s of a tile in slot s (gen::ring_in_row_order:
  // every level of block_total with selects, a load's lanes on one row's consecutive columns) where the rule would
  // permute the slots (slot s of lane r holding row s ^ (r & 3)). Only for a kernel whose ring stages rows anywhere at
  // W = 16 and reads them permuted (gen::ring_reads_slots_permuted). The chooser sets it for f64 rows of odd K on a
  // device whose memory outruns the permuted reads' bank conflicts (gen::choose_sample_spec); the name of such a
  // kernel ends in _roworder.
  bool ring_row_order = false;
  // Whether pass 1's ring of rows over pairs at odd K (pairs_by_phase) takes the deep ring (8 lines a row in one-warp
  // CTAs) from 8 lines of blocks, as every other staged row does, where the rule waits for 16 (gen::staged_ring,
  // docs/DESIGN.md section 14). Only for a kernel whose ring would be the shallow one at 8-15 lines of blocks
  // (gen::ring_deepens_odd_pairs). The chooser sets it for 16-bit rows of odd K on a device whose rule measured it
  // faster (gen::choose_sample_spec); the name of such a kernel ends in _deep.
  bool ring_deep = false;

  static constexpr int kMaxK = 1 << 20;
  static constexpr int kMaxSmallK = 32;  // sample_small stages whole rows: K <= 32

  // Throws bfly::Error naming the field, the value and what is allowed.
  void validate() const;

  // Derived facts, computed from the fields (the spec must be valid). A column is one table entry of a row: one
  // weight, or for sample_pairs and sample_split_pairs two adjacent weights (ceil(K / 2) columns: a row of odd K
  // pairs up from the even address at or before its start, so one of its pairs holds a weight of it and one outside
  // it); remnants and blocks count columns.
  int log2_w() const;
  int weights_per_column() const {
    return operation == Operation::sample_pairs || operation == Operation::sample_split_pairs ? 2 : 1;
  }
  // Over pairs at odd K a row pairs up from the even address at or before its start (its phase, 0 or 1), so one
  // column of it holds a weight outside it, and the kernel takes rows at any address (docs/DESIGN.md section 13).
  bool pairs_by_phase() const { return weights_per_column() == 2 && K % 2 != 0; }
  int columns() const { return (K + weights_per_column() - 1) / weights_per_column(); }
  int remnant() const { return columns() % W; }                   // leading columns outside whole blocks
  bool padded() const { return remnant() > R; }                    // remnant padded to a whole block
  bool linear_remnant() const { return remnant() > 0 && !padded(); }
  int blocks() const { return padded() ? columns() / W + 1 : columns() / W; }  // W x W blocks per row
  int first_block_column() const { return columns() - blocks() * W; }  // column of block 0 (negative when padded)

  friend bool operator==(const KernelSpec&, const KernelSpec&) = default;
};

// "bfly_sample_f32_w32_k1024_r8_addsub", "bfly_lda_z_f64_w16_k256_r8_swap": each field a tag and its value; the
// first field is the family's name ("bfly_sample_logits_f16_w16_k1000_r8_addsub").
// bfly_<operation>_<type>_w<W>_k<K>_r<R>_<variant>, then the suffix of each kernel switch the spec sets
// (kKernelSwitches: _nocopy, _anywhere, _roworder, _deep), in the table's order.
std::string kernel_name(const KernelSpec& spec);

// The plain sample kernel's switches: choices of how pass 1 reads the rows that change the kernel but not what it
// draws, made by a device's rule (gen::choose_sample_spec) or forced (SampleChoice, bfly-gen's flags). Each is a bool
// field of KernelSpec whose default is the rule of every device; a spec that sets a switch names it in its kernel's
// name (the suffix), in describe() and in the bfly-gen command that regenerates it (the flag). KernelSpec::validate
// says where each is allowed. Adding one: its field, a row here, its rule in choose_sample_spec and its SampleChoice
// (which rt::draws_spec clears for the forms and the tests' `forcing` copies from a spec).
struct KernelSwitch {
  bool KernelSpec::*field;
  bool set_to;                   // the field's value when the switch is set (its default is the other)
  std::string_view suffix;       // of the kernel's name: "_nocopy"
  std::string_view flag;         // bfly-gen's: "--no-warp-copies"
  std::string_view description;  // describe()'s: "warp_copies=off"
};
inline constexpr KernelSwitch kKernelSwitches[] = {
    {&KernelSpec::warp_copies, false, "_nocopy", "--no-warp-copies", "warp_copies=off"},
    {&KernelSpec::ring_anywhere, true, "_anywhere", "--ring-anywhere", "ring=anywhere"},
    {&KernelSpec::ring_row_order, true, "_roworder", "--ring-row-order", "ring_slots=row_order"},
    {&KernelSpec::ring_deep, true, "_deep", "--ring-deep", "ring=deep"},
};
inline bool is_set(const KernelSpec& spec, const KernelSwitch& s) { return spec.*s.field == s.set_to; }

// The inverse of kernel_name; throws bfly::Error when `name` is not a bfly kernel name.
KernelSpec parse_kernel_name(std::string_view name);

// The family of the spec: its operation's, or for `sample` and `sample_split` the family of its form (operation,
// input kind and draws: the rows of BFLY_SAMPLE_FORMS, e.g. sample_logits or sample_split_draws).
const KernelFamily& family_of(const KernelSpec& spec);

// How the kernel of `spec` is launched: the generated text embeds the same numbers, and the runtime, the
// ahead-of-time header and the CPU execution all take their grids from here.
LaunchGeometry launch_geometry(const KernelSpec& spec);

// The sample_split (and sample_split_pairs) kernels' scratch `part_totals` per row, in accumulators: the parts of the
// row (level 1 of the table, LaunchGeometry::parts_per_row), and for logits each CTA's maximum after them; 0 for other
// operations.
int part_totals_per_row(const KernelSpec& spec);

// The occupancy a kernel is compiled for: the second argument of its __launch_bounds__ (CTAs per SM), or 0 for
// none. The plain sample kernel (weights, one draw) of a row of at most kWholeRowBlocks blocks and 256 bytes of
// blocks loads its whole row at once and asks for 6 CTAs of 128 threads per SM (4 in f64), which caps its registers
// at 80 (128); the one of a longer row of 16-bit weights (bf16, f16) asks for 7 (73 registers), and a logits
// kernel drawing with replacement (one draw or several) for 6 (80 registers). A kernel that copies its warps' rows in
// CTAs of fewer than 128 threads (copies_warp_rows) asks for as many more CTAs, the same registers a thread.
int min_ctas_per_sm(const KernelSpec& spec);
// Rows of at most this many W x W blocks are loaded whole by the plain sample kernel before any block is built.
inline constexpr int kWholeRowBlocks = 4;
// Tiles of W x W blocks whose register loads pass 1 issues before it builds the first (longer rows, and the register
// loads of a staged kernel). On an H100 (bench/results, 2026-11-22) two beat one and four for W = 16 and 32, f32 and
// f64 (four tiles of W = 16 f32 ran at a third of the bandwidth).
inline constexpr int kRegisterBlocksInFlight = 2;

// Pass 1 of the plain sample kernel (weights, one draw; sample or sample_pairs) over columns of 4 bytes (f32
// weights, or pairs of f16/bf16) and rows of at least 9 blocks (8 for pairs; f32 and f64 at odd K from 6 and 5
// blocks, whose rows start off 8 and 16 bytes) copies the kStageRowBytes-byte lines
// that hold its rows' blocks into a ring of STAGES lines per row in shared memory ahead of their use (cp.async), so
// that loads stay in flight while the group builds its tables and cost no registers (docs/DESIGN.md section 14).
// Returns STAGES, or 0 for a kernel that loads into registers only. The staged kernel keeps the register loads for
// rows that do not start on 16 bytes (a weights pointer or ld * sizeof(T) not a multiple of 16), chosen at run time;
// both draw the same.
int pass1_stages(const KernelSpec& spec);
inline constexpr int kStageRowBytes = 128;
// Lines of each row that one step of a staged pass 1 reads (LINES_PER_STEP): the tiles it builds between one wait for
// its copies and the next. Two in the deep ring (8 lines a row, one-warp CTAs, whose registers cost no occupancy) but
// for rows over pairs of fewer than 16 lines, which measured faster with one; one in the shallow ring of 4 lines,
// where a second line would leave one line in flight; 0 for a kernel that loads into registers only (docs/DESIGN.md
// section 14, "Steps of two lines in the deep ring").
int pass1_lines_per_step(const KernelSpec& spec);
// Whether a step of a staged pass 1 tells rows that start on their lines (block 0 on a line, ld a whole number of
// lines) from the others at run time and, for them, waits for the copies of its own lines alone (on_lines) rather than
// for the line past them too: only in the shallow ring of rows read at one place. Rows staged anywhere start on their
// lines only by chance, and the deep ring waits for the line past the step whatever the rows: without the test (a
// branch around each step's wait) rows on their lines read faster on the H100 (docs/DESIGN.md section 14, "One wait
// in the deep ring").
bool pass1_waits_less_on_lines(const KernelSpec& spec);
// Whether pass 2 of the plain sample kernel (sample or sample_pairs of weights, one draw) loads the chosen chunk's
// blocks together and keeps them, to find the block whose running total first exceeds u' (Algorithm 9): when the
// chunk has 2 or more blocks and they fit in kPass2ChunkWords accumulators a lane (fewer under a register cap,
// min_ctas_per_sm). The chosen block's tile is then put together from them (row k from lane k's choice) instead of
// loaded again, but in a kernel that keeps the chosen tile as loaded (stashes_chosen_tile), which loads it again
// (from L2). Otherwise, and in the LDA z-steps, pass 2 loads one block after another and the chosen one again. Both
// sum the same and draw the same.
bool pass2_keeps_chunk(const KernelSpec& spec);
inline constexpr int kPass2ChunkWords = 64;
// Whether the plain sample kernel redraws a row whose butterfly search landed on a zero weight with the whole warp
// reading the row (bfly::sequential_draw_by_warp) rather than its own lane alone (bfly::sequential_draw): rows of
// kWarpRedrawFromK weights or more. Both draw the same.
bool redraws_by_warp(const KernelSpec& spec);
inline constexpr int kWarpRedrawFromK = 1000;
// Whether a staged kernel (pass1_stages > 0) copies memory's own 16 bytes and reads each row at its own place in the
// ring, so that its rows may start anywhere (any ld; the weights pointer on 16 bytes): the kernels whose rows packed
// tightly (ld = K) would not all start on 16 bytes with block 0 on a copy's first column, that is K * sizeof(T) not
// a multiple of 16 or block 0 off a copy (odd K over pairs among them), and for single weights from K = 392 rows not
// a multiple of a 32-byte sector (f32 K = 4 mod 8, f64 K = 2 mod 4), and every staged kernel of ring_anywhere = true.
// The other staged kernels read every row of a tile at one place, and take their register loads for rows off 16 bytes
// (docs/DESIGN.md section 14).
bool stages_rows_anywhere(const KernelSpec& spec);
// Whether the kernel's ring, ring_anywhere aside, reads every row of a tile at one place: a staged kernel whose rows
// stages_rows_anywhere would not take. Only there does KernelSpec::ring_anywhere change the kernel (and validate()
// allow it).
bool ring_reads_rows_at_one_place(const KernelSpec& spec);
// Whether the kernel's ring, ring_row_order aside, stages rows anywhere at W = 16 and reads a tile's rows into
// permuted slots (slot s of lane r holding row s ^ (r & 3); ring_in_row_order false). Only there does
// KernelSpec::ring_row_order change the kernel (and validate() allow it).
bool ring_reads_slots_permuted(const KernelSpec& spec);
// Whether the kernel's ring, ring_deep aside, is the shallow ring of a row over pairs at odd K with 8 to 15 lines of
// blocks (the deep ring waits for 16 there, 8 for every other row) and the kernel does not copy its warps' rows. Only
// there does KernelSpec::ring_deep change the kernel (and validate() allow it).
bool ring_deepens_odd_pairs(const KernelSpec& spec);
// Whether the plain sample kernel reads tightly packed rows (ld = K, chosen at run time) with one bulk copy per warp
// (docs/DESIGN.md section 14, "Short rows in one copy"): a warp's 32 rows are one span of memory, which one lane copies
// into shared memory (cp.async.bulk on sm_90), and pass 1, pass 2's chosen tile, the remnant and the drawn weight's
// check all read that copy; rows with ld != K keep the kernel's other loads (staged or into registers). At W = 16, one
// weight a column (f32, f64) or 16-bit pairs, rows of at least 3 blocks (2 over pairs) whose warps' copies are at most
// 45 KiB (f32 K up to 359, f64 up to 179, bf16 and f16 up to 719), but f64 rows of whole 128-byte lines. The CTA is the
// largest, up to the kernel's own, whose copies fit the static shared memory beside its running totals; a staged
// kernel's copies and ring share their bytes (pass1_lines_bytes).
bool copies_warp_rows(const KernelSpec& spec);
// The words (elements) of a warp's copy: its 32 rows, and room for the 16-byte granules at either end.
int warp_copy_words(const KernelSpec& spec);
// The bytes of pass 1's lines in shared memory: the ring's, the warps' copies' (copies_warp_rows), or for a staged
// kernel that copies the larger of the two; 0 for a kernel that neither stages nor copies.
int pass1_lines_bytes(const KernelSpec& spec);

// Whether rows of K weights of `type` packed tightly (ld = K) leave some rows off 16 bytes (K * sizeof(T) not a
// multiple of 16).
bool tight_rows_off_16_bytes(int K, ElementType type);

// Whether pass 1 screens the weights (one integer max each, a per-weight test only for a group that fails the screen;
// docs/DESIGN.md section 6) rather than testing every weight: the plain sample kernel (weights, one draw; sample and
// sample_pairs). The forms with several draws keep the per-weight test (their pass 1 measured slower screened).
bool screens_weights(const KernelSpec& spec);

// Whether pass 1 of the plain sample kernel (weights, one draw) loads its registers through per-lane row pointers
// worked out once, in the order of its block totals (docs/DESIGN.md section 14): rows of 2 to kSlotRowsMaxBlocks blocks
// of 4-byte columns (f32, 16-bit pairs) that are not staged (f32 at odd K: 2 to 5 blocks). A row of one block keeps the
// table that pass 2 searches; longer rows, 8-byte columns and the register loads of a staged kernel load block by block
// as the paper does.
bool loads_row_by_slots(const KernelSpec& spec);
inline constexpr int kSlotRowsMaxBlocks = 8;

// The order of a tile's rows in the slots from which pass 1 forms its block totals (docs/DESIGN.md section 14): slot
// s of lane r holds row s ^ (r & (P - 1)) of the group, so that block_total's first log2(P) levels need no selects.
// P = kPermutedSlotRows (at most W), or 1, slot s holding row s, every level with selects, for rows loaded whole at
// W = 16 (16-bit pairs of 3 or 4 blocks, f32 of 2 or 3) whose rows packed tightly are not whole 128-byte lines: a load
// of the row slots then reads one row of each group of a warp, not four; and 1 for the ring of rows staged anywhere
// that step an odd number of columns (ring_in_row_order: W = 16, single f32 weights, f64 from K = 1000, 16-bit pairs
// of K = 2 mod 4, and every kernel of ring_row_order = true), where the permuted order put a load's four rows on the
// same banks.
int permuted_slot_rows(const KernelSpec& spec);
bool ring_in_row_order(const KernelSpec& spec);
inline constexpr int kPermutedSlotRows = 4;
// Whether the ring of rows staged anywhere places each group of a warp by its rows' line phases (docs/DESIGN.md
// section 14, "A swizzle by the rows' phases"): group g's row 0 lands g W columns (mod a line) after the warp's row 0,
// whatever ld puts between them, so that the groups read different banks. For 4-byte columns (f32, 16-bit pairs); the
// 8-byte columns of f64 keep the swizzle g W (a half-warp, one group, is served at a time: the groups share no
// cycle).
bool swizzles_by_row_phase(const KernelSpec& spec);
// The default order's P for a width: kPermutedSlotRows, at most W (the staged loads take it but where
// ring_in_row_order reads the ring in row order).
inline int permuted_rows(int W) { return W < kPermutedSlotRows ? W : kPermutedSlotRows; }

// Whether pass 2 of the plain sample kernel over 16-bit pairs (rows of at least 3 blocks not loaded whole, not odd K)
// keeps the tile of the blocks its lanes chose in shared memory as loaded (a staged kernel in pass 1's ring, free once
// pass 1 ends): the drawn pair's weights are then read from there instead of loaded again from the row after the
// search, two dependent trips to memory fewer (the first weight picks within the pair, the drawn one is checked for
// zero; docs/DESIGN.md section 13).
bool stashes_chosen_tile(const KernelSpec& spec);

// "W=32 K=1024 R=8 type=f32 variant=addsub operation=sample", then " input=logits draws=with_replacement" for a
// form other than one draw from weights.
std::string describe(const KernelSpec& spec);

}  // namespace bfly::gen
