// The spec catalog: fixed, ordered lists of specs for tests and examples.
#include "bfly/spec/spec_catalog.hpp"

#include <algorithm>

namespace bfly::gen {
namespace {
constexpr int kWidths[] = {4, 8, 16, 32};
constexpr Variant kVariants[] = {Variant::swap, Variant::addsub};
}  // namespace

std::vector<int> remnant_thresholds_for(int W) {
  std::vector<int> out;
  for (int R : {0, 8, W - 1}) {
    R = std::min(R, W - 1);
    if (std::find(out.begin(), out.end(), R) == out.end()) out.push_back(R);
  }
  return out;
}

// f32 and f64 at every point; the narrow types (f16, bf16: loads widened to f32 sums) on a smaller set that
// still covers the remnant, padding, one block, several chunks and a K past 4096, so the CPU tests stay short.
std::vector<KernelSpec> draw_test_specs() {
  std::vector<KernelSpec> specs;
  const auto narrow_point = [](int W, int K) {
    return (W == 8 || W == 16 || W == 32) && (K == 1 || K == 3 || K == 71 || K == 1000 || K == 4097);
  };
  for (int W : kWidths)
    for (int K : {1, 2, 3, W - 1, W, W + 1, 71, 100, 1000, 1024, 4097})
      for (int R : remnant_thresholds_for(W))
        for (const ElementTypeInfo& element : kElementTypes)
          for (Variant variant : kVariants) {
            if (element.narrow() && !narrow_point(W, K)) continue;
            const KernelSpec spec{W, K, R, element.type, variant, Operation::sample};
            spec.validate();
            if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
          }
  // Short rows of odd K staged anywhere at W = 16 (f32 from 6 blocks, f64 from 5 whole ones): a remnant padded, and
  // one searched linearly; an f32 row loaded whole with its slots in row order (gen::permuted_slot_rows). K = 127 and
  // the two after it copy their warps' rows when packed tightly (gen::copies_warp_rows): within the ring's shared
  // memory, and larger than the ring (f32 K = 141 padded, f64 K = 85 with a remnant searched linearly); f32 K = 83, 5
  // blocks and a remnant of 3, is staged only for the copy. f32 K = 255 copies in one-warp CTAs beside its ring, and
  // f64 K = 120 copies without a ring (rows on 16 bytes, loaded into registers otherwise). f32 K = 61 pads its 4
  // blocks' remnant of 13 and keeps pass 1's loads from the copy by selects (the loop unrolled whole). Last, rows
  // on 16 bytes but not a multiple of a 32-byte sector, staged anywhere (f64 K = 2 mod 4: 398 padded, 422 with a
  // remnant of 6; f32 K = 4 mod 8: 404 with a remnant of 4, 1004 padded and redrawn by the warp); kept last, so that
  // the kernels before them keep their parts and seeds in the GPU draw test.
  for (const KernelSpec& spec : {KernelSpec{16, 127, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 99, 8, ElementType::f64, Variant::swap, Operation::sample},
                                 KernelSpec{16, 45, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 141, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 85, 8, ElementType::f64, Variant::swap, Operation::sample},
                                 KernelSpec{16, 83, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 255, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 120, 8, ElementType::f64, Variant::swap, Operation::sample},
                                 KernelSpec{16, 61, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 398, 8, ElementType::f64, Variant::swap, Operation::sample},
                                 KernelSpec{16, 422, 8, ElementType::f64, Variant::swap, Operation::sample},
                                 KernelSpec{16, 404, 8, ElementType::f32, Variant::addsub, Operation::sample},
                                 KernelSpec{16, 1004, 8, ElementType::f32, Variant::addsub, Operation::sample}}) {
    spec.validate();
    specs.push_back(spec);
  }
  // f32 K = 337 (a remnant of 1 and 21 blocks) with its warps' copies turned off (KernelSpec::warp_copies, the rule of
  // fast memory): staged anywhere whatever the stride.
  KernelSpec uncopied{16, 337, 8, ElementType::f32, Variant::addsub, Operation::sample};
  uncopied.warp_copies = false;
  uncopied.validate();
  specs.push_back(uncopied);
  // Rows on 16 bytes but off 32-byte sectors staged anywhere (KernelSpec::ring_anywhere, the rule of fast memory):
  // f64 K = 182 (a remnant of 6, 11 blocks) and f32 K = 340 without copies (a remnant of 4, 21 blocks), whose ring
  // would otherwise read at one place; and f32 K = 1032 (a remnant of 8, 64 blocks), rows that step 32 bytes past
  // 64-byte lines.
  KernelSpec anywhere_f64{16, 182, 8, ElementType::f64, Variant::swap, Operation::sample};
  anywhere_f64.ring_anywhere = true;
  KernelSpec anywhere_f32{16, 340, 8, ElementType::f32, Variant::addsub, Operation::sample};
  anywhere_f32.warp_copies = false;
  anywhere_f32.ring_anywhere = true;
  KernelSpec half_lines_f32{16, 1032, 8, ElementType::f32, Variant::addsub, Operation::sample};
  half_lines_f32.ring_anywhere = true;
  for (const KernelSpec& spec : {anywhere_f64, anywhere_f32, half_lines_f32}) {
    spec.validate();
    specs.push_back(spec);
  }
  // f64 rows of odd K staged anywhere read in row order (KernelSpec::ring_row_order, the rule of fast memory): K = 181
  // (a remnant of 5, 11 blocks) and K = 191 (a remnant of 15 padded, 12 blocks), whose ring would otherwise read them
  // into permuted slots.
  for (int K : {181, 191}) {
    KernelSpec row_order{16, K, 8, ElementType::f64, Variant::swap, Operation::sample};
    row_order.ring_row_order = true;
    row_order.validate();
    specs.push_back(row_order);
  }
  return specs;
}

std::vector<KernelSpec> split_test_specs() {
  std::vector<KernelSpec> specs;
  const auto add = [&](int W, int K, ElementType type, Variant variant) {
    const KernelSpec spec{W, K, 0, type, variant, Operation::sample_split};
    spec.validate();
    if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
  };
  for (const ElementTypeInfo& element : kElementTypes) {
    for (int K : {2, 3, 5, 16, 1000, 4097, 65536, 262144}) add(32, K, element.type, Variant::addsub);
    for (int K : {5, 100}) add(8, K, element.type, Variant::addsub);
  }
  for (ElementType type : {ElementType::f32, ElementType::f64})
    for (int K : {1000, 65536}) add(32, K, type, Variant::swap);
  add(32, 20000, ElementType::f32, Variant::addsub);  // two CTAs, the second one's slice partly past the last tile
  // sample_split_pairs: one column (K = 2), a padded tile (6, 1000, 4098), whole CTAs (65536, 262144), groups of 8,
  // the swap table, and pairs of f32 (8-byte loads).
  const auto add_pairs = [&](int W, int K, ElementType type, Variant variant) {
    const KernelSpec spec{W, K, 0, type, variant, Operation::sample_split_pairs};
    spec.validate();
    specs.push_back(spec);
  };
  for (ElementType type : {ElementType::bf16, ElementType::f16}) {
    for (int K : {2, 6, 1000, 4098, 65536, 262144}) add_pairs(32, K, type, Variant::addsub);
    add_pairs(8, 100, type, Variant::addsub);
  }
  add_pairs(32, 1000, ElementType::bf16, Variant::swap);
  add_pairs(32, 40002, ElementType::f32, Variant::addsub);  // two CTAs, the second one's slice partly past the last tile
  // Odd K: rows paired from the even address at or before their start, one column with a weight outside the row.
  for (int K : {1, 3, 1001, 2047, 4097, 65537}) add_pairs(32, K, ElementType::bf16, Variant::addsub);
  add_pairs(8, 99, ElementType::f16, Variant::swap);
  add_pairs(32, 20001, ElementType::f32, Variant::addsub);
  return specs;
}

std::vector<KernelSpec> small_test_specs() {
  std::vector<KernelSpec> specs;
  for (int W : {8, 32})
    for (int K : {1, 2, 3, 5, 16, 31})
      for (const ElementTypeInfo& element : kElementTypes) {
        const KernelSpec spec{W, K, 0, element.type, Variant::addsub, Operation::sample_small};
        spec.validate();
        specs.push_back(spec);
      }
  return specs;
}

std::vector<KernelSpec> pairs_test_specs() {
  struct Geometry {
    int W, K, R;
    Variant variant;
    bool warp_copies = true;
    bool ring_anywhere = false;  // where the type's ring would read the rows at one place; else as the rule stages
    bool ring_deep = false;      // where the type's ring of odd K would be the shallow one; else as the rule stages
  };
  constexpr Geometry kGeometries[] = {
      {16, 2, 8, Variant::addsub},     // one column, searched linearly
      {16, 16, 8, Variant::swap},      // 8 columns, the whole row searched linearly from registers (16-byte loads)
      {16, 12, 8, Variant::addsub},    // 6 columns: f32, f64 from registers (16-byte loads), 16-bit from memory
      {32, 44, 31, Variant::addsub},   // 22 columns from registers at W = 32: 8-byte loads of 16-bit rows, else 16
      {32, 34, 31, Variant::swap},     // 17 columns from the 16-byte pieces that hold a row off 8 bytes (lead 0-3)
      {16, 34, 8, Variant::swap},      // a remnant of 1 column and one block
      {16, 142, 8, Variant::addsub},   // a remnant of 7 columns and 4 blocks
      {32, 200, 0, Variant::swap},     // a remnant of 4 columns padded to a block
      {16, 2000, 8, Variant::addsub},  // remnant 8, 62 blocks in chunks of 2
      {8, 8194, 7, Variant::swap},     // remnant 1, 512 blocks in chunks of 16
      {4, 64, 0, Variant::addsub},     // 8 blocks of 4 columns
      {16, 1002, 8, Variant::addsub},  // rows of 501 columns, off 16 bytes: staged anywhere, a remnant of 5
      {16, 514, 0, Variant::swap},     // rows of 257 columns, a remnant of 1 padded: block 0 off a copy
      {16, 200, 8, Variant::swap},     // a remnant of 4 and 6 blocks: row slots, the chosen tiles kept
      {16, 56, 8, Variant::addsub},    // a remnant of 12 padded, 2 blocks: copied, pass 1's loads kept by selects
      // Odd K: rows paired from the even address at or before their start, so one column of each row holds a weight
      // outside it (column 0 of a row of phase 1, the last column of a row of phase 0).
      {16, 1, 8, Variant::addsub},     // one column, both ways outside the row, searched linearly
      {32, 45, 31, Variant::addsub},   // 23 columns kept in registers from the 16-byte pieces that hold the row
      {16, 31, 8, Variant::swap},      // one block holding column 0 and the last column
      {16, 33, 8, Variant::addsub},    // column 0 in the remnant of 1, the last column in the one block
      {16, 55, 8, Variant::addsub},    // a remnant of 12 padded: column 0 in block 0 after 4 padding columns
      {16, 143, 8, Variant::swap},     // a remnant of 8 and 4 blocks
      {16, 2001, 8, Variant::addsub},  // a remnant of 9 padded, 63 blocks in chunks (the register loads)
      {16, 301, 8, Variant::addsub},   // a remnant of 7 and 9 blocks: staged anywhere, its warps' rows copied
      {8, 8193, 7, Variant::swap},     // remnant 1, 512 blocks in chunks of 16
      // 16-bit rows that the copies' rule would take, with the copies turned off (KernelSpec::warp_copies, the rule
      // of fast memory): the staged ring for rows packed tightly too.
      {16, 561, 8, Variant::addsub, false},  // odd: a remnant of 9 padded, 18 blocks
      // 16-bit rows of K = 8 mod 16 (on 16 bytes, off 32-byte sectors) staged anywhere (KernelSpec::ring_anywhere, the
      // rule of fast memory); f32 pairs the same, f64 pairs (16-byte columns) are not staged.
      {16, 1032, 8, Variant::swap, true, true},  // a remnant of 4, 32 blocks
      // 16-bit rows of K = 16 mod 32, 32 bytes past 64-byte lines, the same (f32 pairs on whole lines, forced).
      {16, 1040, 8, Variant::addsub, true, true},  // a remnant of 8, 32 blocks
      // 16-bit rows of odd K in the deep ring from 8 lines of blocks (KernelSpec::ring_deep), where the rule keeps the
      // shallow ring until 16 (f32 and f64 pairs take the deep ring by their bytes already).
      {16, 721, 8, Variant::addsub, true, false, true},   // 361 columns: a remnant of 9 padded, 23 blocks
      {16, 1001, 8, Variant::swap, true, false, true},    // a remnant of 5 searched linearly, 31 blocks
  };
  std::vector<KernelSpec> specs;
  for (const ElementTypeInfo& element : kElementTypes)
    for (const Geometry& g : kGeometries) {
      KernelSpec spec{g.W, g.K, g.R, element.type, g.variant, Operation::sample_pairs};
      spec.warp_copies = g.warp_copies;
      spec.ring_anywhere = g.ring_anywhere && ring_reads_rows_at_one_place(spec);
      spec.ring_deep = g.ring_deep && ring_deepens_odd_pairs(spec);
      spec.validate();
      specs.push_back(spec);
    }
  return specs;
}

std::vector<KernelSpec> sample_draws_test_specs() {
  struct Geometry {
    int W, K, R;
    Variant variant;
    bool every_type;  // also in the second and third type of its input kind
  };
  constexpr Geometry kGeometries[] = {
      {4, 3, 3, Variant::addsub, false},    // K <= R: the whole row is a remnant
      {16, 16, 8, Variant::swap, false},    // one block, searched by every draw as pass 1 built it
      {16, 71, 8, Variant::addsub, true},   // a linear remnant of 7 and 4 blocks
      {32, 100, 0, Variant::swap, true},    // a remnant of 4 padded to a block
      {16, 1000, 8, Variant::addsub, true}, // remnant 8, 62 blocks in chunks of 2
      {8, 4097, 7, Variant::swap, false},   // 512 blocks in chunks of 16
  };
  constexpr struct {
    InputKind input;
    ElementType types[3];
  } kInputs[] = {{InputKind::weights, {ElementType::f32, ElementType::f64, ElementType::bf16}},
                 {InputKind::logits, {ElementType::f32, ElementType::f16, ElementType::bf16}}};
  std::vector<KernelSpec> specs;
  for (const auto& input : kInputs)
    for (Draws draws : {Draws::with_replacement, Draws::without_replacement})
      for (const Geometry& g : kGeometries)
        for (int t = 0; t < (g.every_type ? 3 : 1); ++t) {
          KernelSpec spec{g.W, g.K, g.R, input.types[t], g.variant, Operation::sample};
          spec.input = input.input;
          spec.draws = draws;
          spec.validate();
          specs.push_back(spec);
        }
  // sample_split's forms (with and without replacement): one padded tile (K = 5), two CTAs of W = 32 (K = 20000:
  // slices of 16 and 4 tiles), and three CTAs of W = 8 groups (K = 10000); one type of each input kind per geometry.
  struct SplitGeometry {
    int W, K;
    ElementType weights_type, logits_type;
    Variant variant;
  };
  constexpr SplitGeometry kSplitGeometries[] = {
      {32, 5, ElementType::f64, ElementType::f16, Variant::addsub},
      {32, 20000, ElementType::f32, ElementType::f32, Variant::addsub},
      {8, 10000, ElementType::bf16, ElementType::bf16, Variant::swap},
  };
  for (InputKind input : {InputKind::weights, InputKind::logits})
    for (Draws draws : {Draws::with_replacement, Draws::without_replacement})
      for (const SplitGeometry& g : kSplitGeometries) {
        KernelSpec spec{g.W, g.K, 0, input == InputKind::logits ? g.logits_type : g.weights_type, g.variant,
                        Operation::sample_split};
        spec.input = input;
        spec.draws = draws;
        spec.validate();
        specs.push_back(spec);
      }
  return specs;
}

std::vector<KernelSpec> lda_test_specs() {
  std::vector<KernelSpec> specs;
  for (int W : kWidths)
    for (int K : {1, 3, W + 1, 71, 300})
      for (int R : {0, W - 1})
        for (const ElementTypeInfo& element : kElementTypes)
          for (Variant variant : kVariants)
            for (Operation operation : {Operation::lda_z, Operation::lda_z_doc}) {
              if (element.narrow()) continue;  // the LDA kernels take f32 or f64
              const KernelSpec spec{W, K, R, element.type, variant, operation};
              spec.validate();
              if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
            }
  return specs;
}

std::vector<LdaBaselineSpec> lda_baseline_test_specs() {
  std::vector<LdaBaselineSpec> specs;
  for (LdaBaseline algorithm : {LdaBaseline::alg1, LdaBaseline::alg4})
    for (int K : {1, 3, 33, 64, 71, 300})
      for (const ElementTypeInfo& element : kElementTypes)
        if (!element.narrow()) specs.push_back(LdaBaselineSpec{algorithm, K, element.type});
  return specs;
}

std::vector<KernelSpec> compile_test_specs() {
  std::vector<KernelSpec> specs;
  for (int W : kWidths)
    for (const ElementTypeInfo& element : kElementTypes)
      for (Variant variant : kVariants) {
        for (int K : {1, 71, 1024, 4097})
          specs.push_back(KernelSpec{W, K, std::min(8, W - 1), element.type, variant, Operation::sample});
        if (element.narrow()) continue;  // the LDA kernels take f32 or f64
        specs.push_back(KernelSpec{W, 1024, std::min(8, W - 1), element.type, variant, Operation::lda_z});
        specs.push_back(KernelSpec{W, 1024, std::min(8, W - 1), element.type, variant, Operation::lda_z_doc});
      }
  // The forms of sample (logits, several draws) at K = 1024, W = 16: f32 each, and bf16 logits.
  for (InputKind input : {InputKind::weights, InputKind::logits})
    for (Draws draws : {Draws::with_replacement, Draws::without_replacement})
      for (ElementType type : {ElementType::f32, ElementType::bf16}) {
        if (type == ElementType::bf16 && (input == InputKind::weights || draws == Draws::without_replacement))
          continue;
        KernelSpec spec{16, 1024, 8, type, Variant::addsub, Operation::sample};
        spec.input = input;
        spec.draws = draws;
        specs.push_back(spec);
      }
  return specs;
}

KernelSpec example_spec() { return KernelSpec{32, 1024, 8, ElementType::f32, Variant::addsub, Operation::sample}; }

}  // namespace bfly::gen
