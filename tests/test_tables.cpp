// Table layouts: the generated build, run on symbolic entries on the CPU, equals docs/DESIGN.md section 4 for every
// W and variant, and the paper's Figures 4 and 8 (clean copies from the PPoPP'17 slides) for W = 16.
#include "bfly/cpu/table_kernels.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using bfly::gen::Variant;

std::vector<bfly::Sym> built_table(int W, Variant variant) {
  std::vector<bfly::Sym> table(static_cast<std::size_t>(W * W));
  bfly::tables::run_table_kernel(W, variant, table.data());
  return table;
}

// docs/DESIGN.md section 4: row i, lane j holds L_y^w with m = i xor (i + 1), k = m >> 1, L = (i & ~m) + (j & m),
// w = y + k, y = j & ~m (swap) or j & ~k (addsub).
bfly::Sym formula(int i, int j, Variant variant) {
  const int m = i ^ (i + 1), k = m >> 1;
  const int y = variant == Variant::swap ? (j & ~m) : (j & ~k);
  return bfly::Sym{(i & ~m) + (j & m), y, y + k, true};
}

class Tables : public testing::TestWithParam<std::tuple<int, Variant>> {};

TEST_P(Tables, GeneratedBuildEqualsTheDesignFormula) {
  const auto [W, variant] = GetParam();
  const auto table = built_table(W, variant);
  for (int i = 0; i < W; ++i)
    for (int j = 0; j < W; ++j) {
      const bfly::Sym got = table[static_cast<std::size_t>(i * W + j)], want = formula(i, j, variant);
      ASSERT_TRUE(got.ok) << "row " << i << " lane " << j << " added entries that are not adjacent ranges";
      ASSERT_EQ(got.lane, want.lane) << "row " << i << " lane " << j;
      ASSERT_EQ(got.first, want.first) << "row " << i << " lane " << j;
      ASSERT_EQ(got.last, want.last) << "row " << i << " lane " << j;
    }
  // Row W - 1 holds each lane's own block total.
  for (int j = 0; j < W; ++j) {
    const bfly::Sym s = table[static_cast<std::size_t>((W - 1) * W + j)];
    EXPECT_EQ(s.lane, j);
    EXPECT_EQ(s.first, 0);
    EXPECT_EQ(s.last, W - 1);
  }
}

// Pass 1 keeps only each lane's block total (block_total, docs/DESIGN.md section 14), formed from the staged or
// register loads' permuted slots (or, for the row slots of some rows, slots in row order) without the rest of the
// table. Pass 2 searches the table between running totals made of those block totals, so they must be bit for bit
// the table's row W - 1: the same pairs of weights added in the same nesting (the order of two operands does not
// change a floating-point sum).
TEST_P(Tables, PassOneBlockTotalsAreTheTablesLastRowBitForBit) {
  const auto [W, variant] = GetParam();
  std::vector<bfly::Sym> table(static_cast<std::size_t>(W * W)), totals(static_cast<std::size_t>(2 * W));
  bfly::tables::run_table_kernel(W, variant, table.data(), totals.data());
  for (int order = 0; order < 2; ++order) {  // the staged loads' slots, then the row slots in row order
    SCOPED_TRACE(order == 0 ? "slots permuted by lane" : "slots in row order");
    for (int j = 0; j < W; ++j) {
      const bfly::Sym row = table[static_cast<std::size_t>((W - 1) * W + j)];
      const bfly::Sym total = totals[static_cast<std::size_t>(order * W + j)];
      ASSERT_TRUE(total.ok) << "lane " << j << ": block_total added entries that are not adjacent ranges";
      EXPECT_EQ(total.lane, j);
      EXPECT_EQ(total.first, 0);
      EXPECT_EQ(total.last, W - 1);
      EXPECT_EQ(total.tree, row.tree) << "lane " << j << ": block_total nests its additions unlike build_table";
    }
  }
  // The tree hash tells nestings apart: ((a + b) + c) is not (a + (b + c)).
  const bfly::Sym a = bfly::Sym::element(0, 0), b = bfly::Sym::element(0, 1), c = bfly::Sym::element(0, 2);
  EXPECT_NE(((a + b) + c).tree, (a + (b + c)).tree);
  EXPECT_EQ((a + b).tree, (b + a).tree);
}

INSTANTIATE_TEST_SUITE_P(AllWidths, Tables,
                         testing::Combine(testing::Values(4, 8, 16, 32), testing::Values(Variant::swap, Variant::addsub)));

std::string as_slides(const std::vector<bfly::Sym>& table, int W) {
  std::string out;
  for (int i = 0; i < W; ++i) {
    for (int j = 0; j < W; ++j) {
      const bfly::Sym& s = table[static_cast<std::size_t>(i * W + j)];
      out += fmt::format("{}{}{}:{}", j ? " " : "", static_cast<char>('A' + s.lane), s.first, s.last);
    }
    out += "\n";
  }
  return out;
}

TEST(Tables, W16SwapIsFigure4) {
  const std::string figure4 =
      "A0:0 B0:0 A2:2 B2:2 A4:4 B4:4 A6:6 B6:6 A8:8 B8:8 A10:10 B10:10 A12:12 B12:12 A14:14 B14:14\n"
      "A0:1 B0:1 C0:1 D0:1 A4:5 B4:5 C4:5 D4:5 A8:9 B8:9 C8:9 D8:9 A12:13 B12:13 C12:13 D12:13\n"
      "C0:0 D0:0 C2:2 D2:2 C4:4 D4:4 C6:6 D6:6 C8:8 D8:8 C10:10 D10:10 C12:12 D12:12 C14:14 D14:14\n"
      "A0:3 B0:3 C0:3 D0:3 E0:3 F0:3 G0:3 H0:3 A8:11 B8:11 C8:11 D8:11 E8:11 F8:11 G8:11 H8:11\n"
      "E0:0 F0:0 E2:2 F2:2 E4:4 F4:4 E6:6 F6:6 E8:8 F8:8 E10:10 F10:10 E12:12 F12:12 E14:14 F14:14\n"
      "E0:1 F0:1 G0:1 H0:1 E4:5 F4:5 G4:5 H4:5 E8:9 F8:9 G8:9 H8:9 E12:13 F12:13 G12:13 H12:13\n"
      "G0:0 H0:0 G2:2 H2:2 G4:4 H4:4 G6:6 H6:6 G8:8 H8:8 G10:10 H10:10 G12:12 H12:12 G14:14 H14:14\n"
      "A0:7 B0:7 C0:7 D0:7 E0:7 F0:7 G0:7 H0:7 I0:7 J0:7 K0:7 L0:7 M0:7 N0:7 O0:7 P0:7\n"
      "I0:0 J0:0 I2:2 J2:2 I4:4 J4:4 I6:6 J6:6 I8:8 J8:8 I10:10 J10:10 I12:12 J12:12 I14:14 J14:14\n"
      "I0:1 J0:1 K0:1 L0:1 I4:5 J4:5 K4:5 L4:5 I8:9 J8:9 K8:9 L8:9 I12:13 J12:13 K12:13 L12:13\n"
      "K0:0 L0:0 K2:2 L2:2 K4:4 L4:4 K6:6 L6:6 K8:8 L8:8 K10:10 L10:10 K12:12 L12:12 K14:14 L14:14\n"
      "I0:3 J0:3 K0:3 L0:3 M0:3 N0:3 O0:3 P0:3 I8:11 J8:11 K8:11 L8:11 M8:11 N8:11 O8:11 P8:11\n"
      "M0:0 N0:0 M2:2 N2:2 M4:4 N4:4 M6:6 N6:6 M8:8 N8:8 M10:10 N10:10 M12:12 N12:12 M14:14 N14:14\n"
      "M0:1 N0:1 O0:1 P0:1 M4:5 N4:5 O4:5 P4:5 M8:9 N8:9 O8:9 P8:9 M12:13 N12:13 O12:13 P12:13\n"
      "O0:0 P0:0 O2:2 P2:2 O4:4 P4:4 O6:6 P6:6 O8:8 P8:8 O10:10 P10:10 O12:12 P12:12 O14:14 P14:14\n"
      "A0:15 B0:15 C0:15 D0:15 E0:15 F0:15 G0:15 H0:15 I0:15 J0:15 K0:15 L0:15 M0:15 N0:15 O0:15 P0:15\n";
  EXPECT_EQ(as_slides(built_table(16, Variant::swap), 16), figure4);
}

TEST(Tables, W16AddsubIsFigure8) {
  const std::string figure8 =
      "A0:0 B1:1 A2:2 B3:3 A4:4 B5:5 A6:6 B7:7 A8:8 B9:9 A10:10 B11:11 A12:12 B13:13 A14:14 B15:15\n"
      "A0:1 B0:1 C2:3 D2:3 A4:5 B4:5 C6:7 D6:7 A8:9 B8:9 C10:11 D10:11 A12:13 B12:13 C14:15 D14:15\n"
      "C0:0 D1:1 C2:2 D3:3 C4:4 D5:5 C6:6 D7:7 C8:8 D9:9 C10:10 D11:11 C12:12 D13:13 C14:14 D15:15\n"
      "A0:3 B0:3 C0:3 D0:3 E4:7 F4:7 G4:7 H4:7 A8:11 B8:11 C8:11 D8:11 E12:15 F12:15 G12:15 H12:15\n"
      "E0:0 F1:1 E2:2 F3:3 E4:4 F5:5 E6:6 F7:7 E8:8 F9:9 E10:10 F11:11 E12:12 F13:13 E14:14 F15:15\n"
      "E0:1 F0:1 G2:3 H2:3 E4:5 F4:5 G6:7 H6:7 E8:9 F8:9 G10:11 H10:11 E12:13 F12:13 G14:15 H14:15\n"
      "G0:0 H1:1 G2:2 H3:3 G4:4 H5:5 G6:6 H7:7 G8:8 H9:9 G10:10 H11:11 G12:12 H13:13 G14:14 H15:15\n"
      "A0:7 B0:7 C0:7 D0:7 E0:7 F0:7 G0:7 H0:7 I8:15 J8:15 K8:15 L8:15 M8:15 N8:15 O8:15 P8:15\n"
      "I0:0 J1:1 I2:2 J3:3 I4:4 J5:5 I6:6 J7:7 I8:8 J9:9 I10:10 J11:11 I12:12 J13:13 I14:14 J15:15\n"
      "I0:1 J0:1 K2:3 L2:3 I4:5 J4:5 K6:7 L6:7 I8:9 J8:9 K10:11 L10:11 I12:13 J12:13 K14:15 L14:15\n"
      "K0:0 L1:1 K2:2 L3:3 K4:4 L5:5 K6:6 L7:7 K8:8 L9:9 K10:10 L11:11 K12:12 L13:13 K14:14 L15:15\n"
      "I0:3 J0:3 K0:3 L0:3 M4:7 N4:7 O4:7 P4:7 I8:11 J8:11 K8:11 L8:11 M12:15 N12:15 O12:15 P12:15\n"
      "M0:0 N1:1 M2:2 N3:3 M4:4 N5:5 M6:6 N7:7 M8:8 N9:9 M10:10 N11:11 M12:12 N13:13 M14:14 N15:15\n"
      "M0:1 N0:1 O2:3 P2:3 M4:5 N4:5 O6:7 P6:7 M8:9 N8:9 O10:11 P10:11 M12:13 N12:13 O14:15 P14:15\n"
      "O0:0 P1:1 O2:2 P3:3 O4:4 P5:5 O6:6 P7:7 O8:8 P9:9 O10:10 P11:11 O12:12 P13:13 O14:14 P15:15\n"
      "A0:15 B0:15 C0:15 D0:15 E0:15 F0:15 G0:15 H0:15 I0:15 J0:15 K0:15 L0:15 M0:15 N0:15 O0:15 P0:15\n";
  EXPECT_EQ(as_slides(built_table(16, Variant::addsub), 16), figure8);
}

TEST(Tables, UnknownWidthIsAnError) { EXPECT_THROW(built_table(12, Variant::swap), bfly::Error); }

}  // namespace
