// The emitters: one per piece of the algorithm, each writing CUDA text for a spec into a CodeWriter.
#pragma once

#include "bfly/emit/code_writer.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <functional>
#include <map>
#include <string>

namespace bfly::gen::emit {

// Attempts of one draw without replacement before the exact draw among the categories left (the REDRAWS of the
// row kernel's and of sample_split's distinct forms, docs/DESIGN.md sections 11 and 12).
inline constexpr int kRedraws = 8;

// Rows of a tile whose slots pass 1's staged loads permute by lane (slot s of lane r holds row s ^ (r & 3)), so that
// block_total's first log2(4) levels need no selects (docs/DESIGN.md section 14): gen::permuted_rows(W), as many as
// gen::kPermutedSlotRows, at most W; the rings that gen::ring_in_row_order names hold row s in slot s instead.

// Weight `index` of this lane's own row: from the warp's copy when the kernel copied its rows (copies_warp_rows, rows
// packed tightly), else from global memory.
inline std::string own_weight(const KernelSpec& spec, std::string_view index) {
  const std::string global = "my_row[" + std::string(index) + "]";
  if (!copies_warp_rows(spec)) return global;
  return "(whole_copy ? group_rows[r * K + " + std::string(index) + "] : " + global + ")";
}

// This lane's own row: in the warp's copy when the kernel copied its rows (copies_warp_rows), else in global memory.
// A pointer to either (generic addressing), for the pair loads of the remnant and of pass 2's pick.
inline std::string own_row(const KernelSpec& spec) {
  return copies_warp_rows(spec) ? "(whole_copy ? group_rows + r * K : my_row)" : "my_row";
}

// The row kernel over pairs at odd K (sample_pairs, KernelSpec::pairs_by_phase).
inline bool odd_row_pairs(const KernelSpec& spec) {
  return spec.operation == Operation::sample_pairs && spec.pairs_by_phase();
}

// The row kernel over pairs of an even K whose whole row is its linearly searched remnant (K / 2 <= R): each lane
// loads its row once into registers and both passes read it there (bfly::load_row_pairs: 16 bytes a load where the
// row starts on 16 bytes and fills 16-byte pieces, 8 where it fills 8-byte ones, else, for rows of at least
// kWindowMinRowBytes, the 16-byte pieces that hold it, its pairs picked by selects). f32 and f64 rows always (a pair is
// 8 or 16 bytes); rows of 16-bit weights where their loads are wider than a pair. Measured on the H200
// (bench/results/h200-2026-11-29-s12c4-ab-table.txt, -s12c5-, -s12c7-): bf16 K = 36, 44 and 52 at W = 32, R = 31 read
// 0.80-0.83 of the read ceiling kept (8-byte loads) against 0.50-0.63 loaded a pair at a time, K = 28 (14 pairs,
// W = 16) gained 0.01-0.05; at K = 12 and 20 (6 and 10 pairs) kept in 8-byte loads f16 lost 0.04 and 0.05
// (0.535 -> 0.495, 0.718 -> 0.667), bf16 nothing: rows of 16-bit weights in 8-byte pieces are kept only past
// kKeptRowMinPairs pairs. The 16-byte pieces of rows off 8 bytes (16-bit K = 2 mod 4, f32 K = 2 mod 4) gained where
// the row held 60 bytes or more (bf16 K = 30 0.695 -> 0.755, f16 0.701 -> 0.739, f32 K = 18 0.878 -> 0.904; 16-bit
// K = 34-58 at W = 32, R = 31 0.74-0.85 against bfly-auto's 0.69-0.81) and lost below (16-bit K = 10-22 0.02-0.08,
// f32 K = 10 0.04), where such rows load a pair at a time.
constexpr int kKeptRowMinPairs = 10;
constexpr int kWindowMinRowBytes = 60;
inline bool windows_row_pairs(const KernelSpec& spec) { return spec.K * size_of(spec.type) >= kWindowMinRowBytes; }
// Rows of odd K (paired by their phase) are kept from kWindowMinRowBytes on, from the 16-byte pieces that hold them
// (bfly::load_row_pairs_by_phase; f64 a pair at a time).
inline bool keeps_row_pairs(const KernelSpec& spec) {
  if (spec.operation != Operation::sample_pairs || spec.blocks() != 0 || copies_warp_rows(spec)) return false;
  if (spec.pairs_by_phase()) return windows_row_pairs(spec);
  if (!is_narrow(spec.type)) return true;
  const int row_bytes = spec.K * size_of(spec.type);
  return row_bytes % 16 == 0 || (row_bytes % 8 == 0 && spec.K / 2 > kKeptRowMinPairs) || windows_row_pairs(spec);
}

// "{ const TYPE x = VALUE; screen = bfly::screen_pair(screen, x); a[SLOT] = bfly::pair_sum(x); }": a pair of weights
// (`type` WeightPair<T> or Column) put into slot `slot` of a tile as its sum, screened as loaded (docs/DESIGN.md
// section 6). Every load of a pairs kernel's tiles goes through it.
void screened_pair(std::string_view type, const std::string& value, int slot, CodeWriter& w);

// The first lines of a generated kernel's header comment: its name, the bfly version and spec it was generated
// from, and the bfly-gen command that regenerates it.
void header_preamble(const KernelSpec& spec, std::string_view name, CodeWriter& w);
// The bfly-gen flags of the kernel switches the spec sets (gen::kKernelSwitches: " --no-warp-copies
// --ring-anywhere"), else nothing: with the rest of its flags they regenerate the spec's kernel (the header
// preamble's and the ahead-of-time header's commands).
std::string spec_switch_flags(const KernelSpec& spec);
// `text` as comment lines of at most 114 columns of text, broken at spaces.
void comment_paragraph(std::string_view text, CodeWriter& w);

// Named constants of the kernel (W, K, remnant, blocks, chunks, threads) with a one-line why each.
void constants(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w);

// Algorithm 8 lines 18-30: the butterfly table build of one W x W block held in a[0..W-1] of each lane,
// fully unrolled (swap: Section 3 code / Figure 4; addsub: Algorithm 8 / Figure 8). Emits
// `template <typename V> void build_table(V (&a)[W], int r)`.
void build_table(int W, Variant variant, CodeWriter& w);

// Algorithm 5 / Algorithm 8 lines 13-17: transposed loads of one block (same block for every lane, pass 1,
// checking every weight) and of each lane's chosen block (pass 2).
void load_functions(const KernelSpec& spec, CodeWriter& w);

// Algorithm 10 (addsub) or the add-only search (swap) of each lane's own block in its table.
// S names the type of the table and the sums: "S" for a narrow element type (f16, bf16), else "T". With
// `low_out` the search takes `low` by reference and leaves in it the running total before the column it finds
// (sample_pairs picks between the pair's two weights from there).
void search_block(int W, Variant variant, CodeWriter& w, std::string_view S = "T", bool low_out = false);
// "S" for a narrow element type, whose weights are widened to the accumulator S; "T" for f32 and f64, which are
// their own accumulator (their kernels name only T, as before S existed).
std::string_view sum_type(const KernelSpec& spec);
// `element` widened to the accumulator: bfly::widen(element) for a narrow element type, else `element` itself.
std::string widened(const KernelSpec& spec, std::string_view element);

// What differs between operations in the shared passes: how a weight is read.
struct OperationText {
  std::string remnant_element;  // expression for weight j of this lane's own row (remnant), e.g. "my_row[j]"
  std::string load_block;       // statement loading block {b} into tile {a} (pass 1), waiting for nothing
  std::string prepare_block;    // statement run on tile {a} of block {b} once its loads are needed
  std::string load_chosen;      // statement filling a[] with each lane's block {} (pass 2)
  std::string remnant_guard;    // condition under which this lane has a row to read
  bool remnant_is_sum = false;  // remnant_element is already in the accumulator (a pair's sum): not widened
};

// Everything about one operation that the shared passes and generate() need, in one row per operation, so that
// generate() dispatches through operation_emitters() rather than through chains of ifs.
struct OperationEmitters {
  Operation operation;
  std::string_view algorithms;  // the header comment's "Algorithms 7-10 ..." for this operation
  // Named constants of this operation only, after the shared ones (null: none).
  void (*constants)(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w);
  // The device functions that read this operation's weights (loads, products).
  void (*functions)(const KernelSpec& spec, CodeWriter& w);
  // A skeleton slot and its emitter: the rows' verdict after pass 1 (screen_verdict), or what comes before the passes
  // (cache_theta, stage_theta).
  std::string_view prologue_slot;
  void (*prologue)(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w);
  OperationText (*text)(const KernelSpec& spec);
};
const OperationEmitters& operation_emitters(Operation operation);

// The skeleton values every generated kernel's interface takes from its family: {{kernel_signature}} (the name and
// the parameter list, wrapped, with the body's opening brace),
// {{launch_contract}} (the comment above the kernel) and {{launch_check}} (the trap on another launch); a family
// whose grid is not ceil(items / items_per_cta) CTAs puts its own contract and check in `values` first.
// `items_per_cta` is the constant that names the items one CTA covers (THREADS, or GROUPS for lda_z_doc).
void interface_values(const KernelFamily& family, ElementType type, std::string_view kernel_name,
                      std::string_view items_per_cta,
                      std::map<std::string, std::string>& values);

// Algorithm 5 and Algorithm 8 lines 2-17 for lda_z: theta cached per lane (transposed), products formed in
// registers from theta_local and phi rows gathered with transposed access.
void lda_functions(const KernelSpec& spec, CodeWriter& w);
void cache_theta(const KernelSpec& spec, CodeWriter& w);

// The same for lda_z_doc: one document per group, its theta row staged in shared memory (or read from L1), the
// products of block b formed from theta_row[block start + r] and the gathered phi rows.
void lda_doc_functions(const KernelSpec& spec, CodeWriter& w);
void stage_theta_row(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w);

// The sample_split kernel (docs/DESIGN.md section 12): its own skeleton, constants and level-1 pass, with the
// shared table build and block search (emit/src/generate_sample_split.cpp).
Source generate_sample_split(const KernelSpec& spec);
// The sample_small kernel for short rows (section 12): several rows per lane, staged through shared memory
// (emit/src/generate_sample_small.cpp).
Source generate_sample_small(const KernelSpec& spec);

// Pass 1's walk over a row's blocks, in_flight tiles of registers (a0, a1, ...) at a time: the loads of in_flight
// blocks are issued, then each block is used. `load(a, b)` writes the statements that issue the loads of block b
// into tile a, `use(a, b)` those that check, build and add block b. Block expressions are C++ text ("b + 1", "62").
using BlockStep = std::function<void(const std::string& tile, const std::string& block)>;
// `in_flight_name` names the generated constant that holds in_flight.
void block_loop(int blocks, int in_flight, std::string_view tile_type, const BlockStep& load, const BlockStep& use,
                CodeWriter& w, std::string_view in_flight_name = "BLOCKS_IN_FLIGHT");
// The same walk with the blocks staged through shared memory STAGES steps ahead (docs/DESIGN.md section 14): each
// step waits for its stage, reads in_flight tiles from it, sends the stage the copies of the step STAGES ahead, and
// uses the tiles. Needs the kernel's stage_blocks, load_staged_block, stage[][] and STAGES (pass1_stages > 0).
// Over pairs load_staged_block also screens the tile's weights. For stages_rows_anywhere the rows' places in the ring
// are their own (`shifts`), and over pairs at odd K each slot's phase goes with it.
void staged_block_loop(const KernelSpec& spec, int in_flight, std::string_view tile_type, const BlockStep& use,
                       CodeWriter& w);

// Pass 1's whole-row register loads in block_total's order (loads_row_by_slots): RowSlots, plan_row_slots and
// load_row_block.
void row_slot_functions(const KernelSpec& spec, CodeWriter& w);
// Pass 1's block totals over the staged loads' or the row slots' permuted slots, slot s of lane r holding row
// s ^ (r & (permuted - 1)) of the tile: `template <typename V> V block_total(V (&a)[W], int r)`.
void block_total(int W, CodeWriter& w, int permuted);

// Algorithm 10's tile from the warp's copy of rows packed tightly (copies_warp_rows): load_chosen_from_copy, as
// load_chosen_blocks reads global memory (one weight or one pair a column; over pairs at odd K with the rows' phases).
void load_chosen_from_copy(const KernelSpec& spec, CodeWriter& w);
// Pass 1's blocks from the warp's copy (`if (whole_copy)`): lane r takes column r of block b of every row of its group
// (slot k: row k), as the register loads do, and `use` builds and adds each block.
void copied_block_loop(const KernelSpec& spec, std::string_view tile_type, const BlockStep& use, CodeWriter& w);

// Kernel body sections filled into the skeleton.
void shared_memory(const KernelSpec& spec, CodeWriter& w);
void pass1(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w);
// The logits' per-value test: the group's bits of `bad` combined, and this lane's row's verdict `bad_row`.
void combine_bad(int W, CodeWriter& w);
// The weights' verdict from pass 1's screen (docs/DESIGN.md section 6): `bad_row`, with the per-weight test of the
// rows of a group whose screen did not pass.
void screen_verdict(const KernelSpec& spec, CodeWriter& w);
void pass2(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w);

}  // namespace bfly::gen::emit
