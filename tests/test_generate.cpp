// generate(): determinism, the header comment, named constants, paper references, inline_headers, geometry,
// and golden files for a handful of specs (BFLY_UPDATE_GOLDEN=1 rewrites them; review the diff).
#include "bfly/error.hpp"
#include "bfly/emit/embedded_templates.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/spec/choose.hpp"
#include "bfly/spec/spec_catalog.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using namespace bfly::gen;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Generate, SameSpecGivesByteIdenticalSource) {
  for (const KernelSpec& spec : compile_test_specs()) {
    const Source a = generate(spec), b = generate(spec);
    ASSERT_EQ(a.text, b.text) << kernel_name(spec);
    ASSERT_EQ(a.kernel_name, kernel_name(spec));
  }
  EXPECT_NE(generate(KernelSpec{32, 1024, 8, ElementType::f32, Variant::swap, Operation::sample}).text,
            generate(KernelSpec{32, 1024, 8, ElementType::f32, Variant::addsub, Operation::sample}).text);
}

TEST(Generate, SourceDescribesItselfAndPointsAtThePaper) {
  const Source s = generate(example_spec());
  EXPECT_TRUE(contains(s.text, "// bfly_sample_f32_w32_k1024_r8_addsub\n"));
  EXPECT_TRUE(contains(s.text, "W=32 K=1024 R=8 type=f32 variant=addsub operation=sample"));
  EXPECT_TRUE(contains(s.text, "Do not edit"));
  EXPECT_TRUE(contains(s.text, std::string("bfly ") + std::string(bfly_version())));
  // 32 blocks of 4-byte weights: pass 1 is staged (docs/DESIGN.md section 14) in a deep ring, CTAs of one warp.
  EXPECT_TRUE(
      contains(s.text, "extern \"C\" __global__ void __launch_bounds__(32)\nbfly_sample_f32_w32_k1024_r8_addsub("));
  EXPECT_TRUE(contains(s.text, "constexpr int STAGES = 8;"));
  EXPECT_TRUE(contains(s.text, "constexpr int LINES_PER_STEP = 2;"));
  EXPECT_TRUE(contains(s.text, "stage_line(my_ring, plan, first_line + j + STAGES, r, swizzle)"));
  EXPECT_TRUE(contains(s.text, "running += block_total(a0, r);"));
  for (const char* ref : {"Algorithm 7", "Algorithm 8 lines 18-30", "Algorithm 9 lines 7-12", "Algorithm 10",
                          "Algorithm 5"})
    EXPECT_TRUE(contains(s.text, ref)) << ref;
  for (const char* constant : {"constexpr int W = 32;", "constexpr int K = 1024;", "constexpr int BLOCKS = 32;",
                               "constexpr int LOG2_W = 5;"})
    EXPECT_TRUE(contains(s.text, constant)) << constant;
  EXPECT_EQ(s.headers, (std::vector<std::string>{"bfly/philox.cuh", "bfly/sample_support.cuh"}));
}

TEST(Generate, ShuffleCountsMatchThePaper) {
  // W - 1 __shfl_xor_sync per table build (Section 3, pass 2) and W - 1 in pass 1's block totals (block_total: the
  // same butterflies, keeping only each lane's total); the rows' verdict takes one ballot, no shuffle. The in-block
  // search shuffles W - 1 tree rows (Algorithm 10) and W block indices; a pass 2 that keeps its chunk's blocks
  // (pass2_keeps_chunk: W = 4 and 8 at K = 1024, 4 and 2 blocks a chunk) shuffles each row's chosen block once more,
  // in a loop over the rows.
  for (int W : {4, 8, 16, 32}) {
    const KernelSpec spec{W, 1024, 0, ElementType::f32, Variant::addsub, Operation::sample};
    const Source s = generate(spec);
    const bool kept = bfly::gen::pass2_keeps_chunk(spec);
    EXPECT_EQ(kept, W <= 8) << "W = " << W;
    std::size_t xor_count = 0, idx_count = 0;
    for (std::size_t p = 0; (p = s.text.find("__shfl_xor_sync(", p)) != std::string::npos; ++p) ++xor_count;
    for (std::size_t p = 0; (p = s.text.find("__shfl_sync(", p)) != std::string::npos; ++p) ++idx_count;
    EXPECT_EQ(xor_count, static_cast<std::size_t>(2 * (W - 1))) << "W = " << W;
    EXPECT_TRUE(s.text.find("bfly::group_any(") != std::string::npos) << "W = " << W;
    EXPECT_EQ(idx_count, static_cast<std::size_t>(W - 1 + W + (kept ? 1 : 0))) << "W = " << W;
  }
}

TEST(Generate, InlineHeadersPastesEveryTemplate) {
  const Source s = generate(example_spec());
  const std::string text = inline_headers(s);
  EXPECT_FALSE(contains(text, "#include \"bfly/"));
  EXPECT_TRUE(contains(text, "philox4x32_10"));
  EXPECT_TRUE(contains(text, "sequential_draw"));
  EXPECT_FALSE(embedded_templates_hash().empty());
  EXPECT_THROW(template_source("bfly/none.cuh"), bfly::Error);
}

// A row whose search landed on a zero weight is redrawn by the whole warp from kWarpRedrawFromK weights on (every lane
// of the warp calls bfly::sequential_draw_by_warp), by its own lane below; the other kernels keep their own redraws.
TEST(Generate, LongRowsAreRedrawnByTheWarp) {
  for (const int K : {bfly::gen::kWarpRedrawFromK - 1, bfly::gen::kWarpRedrawFromK, 4097}) {
    for (const ElementType type : {ElementType::f32, ElementType::f64, ElementType::bf16}) {
      const KernelSpec spec = bfly::gen::choose_sample_spec(K, type, {}, 1 << 20);
      const std::string text = generate(spec).text;
      const bool by_warp = K >= bfly::gen::kWarpRedrawFromK && !bfly::gen::splits_rows(spec.operation);
      EXPECT_EQ(bfly::gen::redraws_by_warp(spec), by_warp) << bfly::gen::kernel_name(spec);
      EXPECT_EQ(contains(text, "bfly::sequential_draw_by_warp(again, my_row, K, u, draw);"), by_warp)
          << bfly::gen::kernel_name(spec);
      if (!by_warp) {
        EXPECT_TRUE(contains(text, "sequential_draw(")) << bfly::gen::kernel_name(spec);
      }
    }
  }
}

// The two launches of a batch whose last rows sample_split draws may overlap (docs/DESIGN.md section 16): every row
// kernel lets the next launch start at once, and every split kernel's last CTA waits for the previous launch before
// it draws, so that the split launch ends after the row kernel. Without the wait, what follows on the stream could
// read draws the row kernel has not written yet.
TEST(Generate, SplitLaunchesEndAfterTheRowKernelTheyOverlap) {
  const std::string wait = "  if (blockIdx.x == gridDim.x - 1) bfly::wait_for_previous_launch();\n";
  const std::string let_start = "  bfly::let_next_launch_start();";
  for (const ElementType type : {ElementType::f32, ElementType::f64, ElementType::bf16, ElementType::f16}) {
    const KernelSpec row = bfly::gen::choose_sample_spec(4096, type, {}, 1 << 20);
    ASSERT_FALSE(bfly::gen::splits_rows(row.operation)) << bfly::gen::kernel_name(row);
    const std::string row_text = generate(row).text;
    EXPECT_TRUE(contains(row_text, let_start)) << bfly::gen::kernel_name(row);
    EXPECT_FALSE(contains(row_text, "wait_for_previous_launch();")) << bfly::gen::kernel_name(row);
    const KernelSpec split = bfly::gen::tail_split_spec(row);
    const std::string split_text = generate(split).text;
    EXPECT_TRUE(contains(split_text, wait)) << bfly::gen::kernel_name(split);
    // The wait comes before the CTA's first return: a CTA past the last row still waits.
    EXPECT_LT(split_text.find(wait), split_text.find("if (m >= M) return;")) << bfly::gen::kernel_name(split);
    EXPECT_FALSE(contains(split_text, let_start)) << bfly::gen::kernel_name(split);
  }
}

TEST(Generate, LaunchGeometryBoundsSharedMemory) {
  int staged = 0;
  for (const KernelSpec& spec : draw_test_specs()) {
    const LaunchGeometry g = launch_geometry(spec);
    const int column_bytes = spec.weights_per_column() * bfly::gen::size_of(spec.type);
    const int sum_bytes = bfly::gen::size_of(bfly::gen::accumulator_of(spec.type));
    const int totals = g.chunks * g.threads_per_cta * sum_bytes;
    const bool copies = bfly::gen::copies_warp_rows(spec);
    const int barriers = copies ? g.threads_per_cta / 32 * 8 : 0;  // an mbarrier for each warp's copy
    // Pass 2's chosen tiles (W x (W + 1) columns a group) in an array of their own: a staged kernel keeps them in its
    // ring.
    const int tiles = stashes_chosen_tile(spec) ? g.threads_per_cta / spec.W * spec.W * (spec.W + 1) * column_bytes : 0;
    // Staged pass 1 (docs/DESIGN.md section 14): a ring of 8 lines per row in one-warp CTAs or of 4 lines in
    // two-warp CTAs (32 KiB either way) and up to 64 running totals, within 48 KiB of static shared memory; a step
    // is one 128-byte line of each row. The register loads: 128 threads, at most 32 KiB of running totals.
    if (const int stages = pass1_stages(spec); stages > 0) {
      ++staged;
      // A kernel that copies its warps' rows may take fewer threads, so that its copies fit.
      if (copies)
        EXPECT_LE(g.threads_per_cta, stages == 8 ? 32 : 64) << kernel_name(spec);
      else
        EXPECT_EQ(g.threads_per_cta, stages == 8 ? 32 : 64) << kernel_name(spec);
      EXPECT_TRUE(stages == 4 || stages == 8) << kernel_name(spec);
      EXPECT_LE(g.chunks, 64) << kernel_name(spec);
      // The running totals and pass 1's lines (the ring, or the larger of it and the warps' copies, with their
      // mbarriers).
      EXPECT_EQ(g.static_shared_bytes, totals + bfly::gen::pass1_lines_bytes(spec) + barriers) << kernel_name(spec);
      EXPECT_GE(bfly::gen::pass1_lines_bytes(spec), stages * g.threads_per_cta * 128) << kernel_name(spec);
      EXPECT_LE(g.static_shared_bytes, 48 * 1024) << kernel_name(spec);
      // A step reads one line of each row, or two in the deep ring (docs/DESIGN.md section 14).
      EXPECT_EQ(g.blocks_in_flight * spec.W * column_bytes, bfly::gen::pass1_lines_per_step(spec) * 128)
          << kernel_name(spec);
      // Two lines a step in the deep ring, but for rows over pairs of fewer than 16 lines.
      const bool short_pairs = spec.weights_per_column() == 2 && spec.blocks() * spec.W * column_bytes < 16 * 128;
      EXPECT_EQ(bfly::gen::pass1_lines_per_step(spec), stages == 8 && !short_pairs ? 2 : 1) << kernel_name(spec);
    } else if (copies) {
      // Loaded into registers, else copied by their warps: the running totals, the copies and their mbarriers, and
      // where pass 2 keeps its chosen tiles (rows with ld != K) those, in CTAs of at most 128 threads and 48 KiB.
      EXPECT_LE(g.threads_per_cta, 128) << kernel_name(spec);
      EXPECT_EQ(g.static_shared_bytes, totals + bfly::gen::pass1_lines_bytes(spec) + barriers + tiles)
          << kernel_name(spec);
      EXPECT_EQ(bfly::gen::pass1_lines_bytes(spec),
                g.threads_per_cta / 32 * bfly::gen::warp_copy_words(spec) * bfly::gen::size_of(spec.type))
          << kernel_name(spec);
      EXPECT_LE(g.static_shared_bytes, 48 * 1024) << kernel_name(spec);
    } else {
      // The running totals and, where pass 2 keeps its chosen tiles, those.
      EXPECT_EQ(g.threads_per_cta, 128) << kernel_name(spec);
      EXPECT_EQ(g.static_shared_bytes, totals + tiles) << kernel_name(spec);
      EXPECT_LE(g.static_shared_bytes, 32 * 1024) << kernel_name(spec);
    }
    if (spec.blocks() <= 1) {
      EXPECT_EQ(g.static_shared_bytes, 0) << kernel_name(spec);
      continue;
    }
    EXPECT_GE(g.chunks * g.chunk_blocks, spec.blocks());
    EXPECT_LT((g.chunks - 1) * g.chunk_blocks, spec.blocks());
  }
  EXPECT_GE(staged, 20) << "the catalog must hold staged kernels";
  EXPECT_EQ(launch_geometry(example_spec()).grid_for_rows(129), 5);  // staged in the deep ring: 32 rows per CTA
  EXPECT_THROW(launch_geometry(KernelSpec{5, 10, 0, ElementType::f32, Variant::swap, Operation::sample}),
               bfly::Error);
}

// lda_z_doc: one document per group of W threads in CTAs of 64; the theta rows of the CTA's documents go to
// shared memory when they fit beside the running totals (48 KiB of static shared memory), else stay in global.
TEST(Generate, LdaZDocGeometry) {
  const KernelSpec small{32, 1024, 8, ElementType::f32, Variant::addsub, Operation::lda_z_doc};
  const LaunchGeometry g = launch_geometry(small);
  EXPECT_EQ(g.threads_per_cta, 64);
  EXPECT_EQ(g.rows_per_cta, 2);
  EXPECT_TRUE(g.theta_in_shared);
  EXPECT_EQ(g.static_shared_bytes, 32 * 64 * 4 + 2 * 1024 * 4);  // running totals + two theta rows
  EXPECT_EQ(g.grid_for_rows(5), 3);
  const KernelSpec wide{4, 300, 0, ElementType::f64, Variant::swap, Operation::lda_z_doc};  // 16 documents per CTA
  const LaunchGeometry big = launch_geometry(wide);
  EXPECT_EQ(big.rows_per_cta, 16);
  EXPECT_FALSE(big.theta_in_shared);
  EXPECT_LE(big.static_shared_bytes, 48 * 1024);
  EXPECT_TRUE(contains(generate(small).text, "__shared__ T theta_rows[GROUPS][K];"));
  EXPECT_FALSE(contains(generate(wide).text, "theta_rows"));
  for (const KernelSpec& spec : lda_test_specs()) {
    const LaunchGeometry lg = launch_geometry(spec);
    EXPECT_LE(lg.static_shared_bytes, 48 * 1024) << kernel_name(spec);
    EXPECT_EQ(lg.rows_per_cta * (spec.operation == Operation::lda_z_doc ? spec.W : 1), lg.threads_per_cta)
        << kernel_name(spec);
  }
  EXPECT_EQ(parse_kernel_name("bfly_lda_z_doc_f32_w32_k1024_r8_addsub"), small);
}

// The reviewed file of kernel `name`, compared with `text` (or rewritten with BFLY_UPDATE_GOLDEN=1).
void check_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(BFLY_GOLDEN_DIR) + "/" + name + ".cu";
  if (const char* update = std::getenv("BFLY_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with BFLY_UPDATE_GOLDEN=1)";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text, golden.str()) << "generated source changed; if intended, rerun with BFLY_UPDATE_GOLDEN=1 and "
                                   "review the diff of " << path;
}

class Golden : public testing::TestWithParam<const char*> {};

TEST_P(Golden, GeneratedSourceEqualsTheReviewedFile) {
  check_golden(GetParam(), generate(parse_kernel_name(GetParam())).text);
}

INSTANTIATE_TEST_SUITE_P(Specs, Golden,
                         testing::Values("bfly_sample_f32_w4_k10_r3_addsub", "bfly_sample_f64_w8_k71_r0_swap",
                                         "bfly_sample_f32_w32_k1024_r8_addsub", "bfly_sample_f32_w16_k3_r8_swap",
                                         "bfly_sample_f32_w8_k4097_r7_addsub", "bfly_lda_z_f32_w8_k71_r7_addsub",
                                         "bfly_lda_z_doc_f32_w8_k71_r7_addsub", "bfly_lda_z_doc_f64_w4_k300_r0_swap",
                                         "bfly_sample_logits_f16_w4_k10_r3_addsub",
                                         "bfly_sample_distinct_f32_w4_k150_r3_swap"));

class GoldenBaseline : public testing::TestWithParam<const char*> {};

TEST_P(GoldenBaseline, GeneratedSourceEqualsTheReviewedFile) {
  check_golden(GetParam(), generate_lda_baseline(parse_lda_baseline_name(GetParam())).text);
}

INSTANTIATE_TEST_SUITE_P(LdaBaselines, GoldenBaseline,
                         testing::Values("bfly_lda_alg1_f32_k71", "bfly_lda_alg4_f64_k71", "bfly_lda_alg4_f32_k3"));

// The LDA baselines: names, the header, the paper's steps, K and W compiled in, alg4's sections present only when
// K has them, Figure 2's 80 shuffles, and one thread per document in CTAs of 128.
TEST(GenerateLdaBaseline, SourceDescribesItselfAndFollowsThePaper) {
  const Source alg4 = generate_lda_baseline(LdaBaselineSpec{LdaBaseline::alg4, 1000, ElementType::f32});
  EXPECT_EQ(alg4.kernel_name, "bfly_lda_alg4_f32_k1000");
  EXPECT_EQ(describe(alg4), "baseline=alg4 K=1000 type=f32");
  EXPECT_TRUE(contains(alg4.text, "// bfly_lda_alg4_f32_k1000\n"));
  EXPECT_TRUE(contains(alg4.text, "`bfly-gen show --baseline alg4 --K 1000 --type f32`"));
  EXPECT_TRUE(contains(alg4.text, "Do not edit"));
  EXPECT_TRUE(contains(alg4.text, "extern \"C\" __global__ void __launch_bounds__(128)\nbfly_lda_alg4_f32_k1000("));
  EXPECT_TRUE(contains(alg4.text, "long long D, float* __restrict__ p, unsigned long long* __restrict__ invalid_tokens"));
  for (const char* constant : {"typedef float T;", "constexpr int K = 1000;", "constexpr int W = 32;",
                               "constexpr int REMNANT = 8;", "constexpr int BLOCKS = 31;", "constexpr int THREADS = 128;"})
    EXPECT_TRUE(contains(alg4.text, constant)) << constant;
  for (const char* step : {"Algorithm 4 lines 3-6", "Algorithm 4 lines 9-11", "Algorithm 6 lines 8-12",
                           "Algorithm 6 lines 13-24", "Figure 2", "Algorithm 3"})
    EXPECT_TRUE(contains(alg4.text, step)) << step;
  std::size_t trades = 0;
  for (std::size_t p = 0; (p = alg4.text.find("  trade(a[", p)) != std::string::npos; ++p) ++trades;
  EXPECT_EQ(trades, 80u) << "(W / 2) log2 W exchanges of Figure 2";
  EXPECT_EQ(alg4.headers, (std::vector<std::string>{"bfly/philox.cuh", "bfly/sample_support.cuh"}));

  const std::string remnant_only = generate_lda_baseline(LdaBaselineSpec{LdaBaseline::alg4, 3, ElementType::f64}).text;
  EXPECT_TRUE(contains(remnant_only, "Algorithm 6 lines 8-12"));
  EXPECT_FALSE(contains(remnant_only, "Algorithm 6 lines 13-24"));
  const std::string blocks_only = generate_lda_baseline(LdaBaselineSpec{LdaBaseline::alg4, 64, ElementType::f64}).text;
  EXPECT_FALSE(contains(blocks_only, "Algorithm 6 lines 8-12"));
  EXPECT_TRUE(contains(blocks_only, "Algorithm 6 lines 13-24"));

  const Source alg1 = generate_lda_baseline(LdaBaselineSpec{LdaBaseline::alg1, 71, ElementType::f64});
  EXPECT_EQ(alg1.kernel_name, "bfly_lda_alg1_f64_k71");
  EXPECT_TRUE(contains(alg1.text, "typedef double T;"));
  EXPECT_TRUE(contains(alg1.text, "constexpr int K = 71;"));
  EXPECT_TRUE(contains(alg1.text, "Algorithm 1 lines 6-13"));
  EXPECT_FALSE(contains(alg1.text, "__shfl")) << "Algorithm 1 has no warp cooperation";
  EXPECT_EQ(alg1.text, generate_lda_baseline(LdaBaselineSpec{LdaBaseline::alg1, 71, ElementType::f64}).text);

  for (const LdaBaselineSpec& spec : lda_baseline_test_specs()) {
    const LaunchGeometry g = launch_geometry(spec);
    EXPECT_EQ(g.threads_per_cta, 128);
    EXPECT_EQ(g.rows_per_cta, 128) << "one document per thread";
    EXPECT_EQ(g.static_shared_bytes, 0);
  }
  EXPECT_EQ(launch_geometry(LdaBaselineSpec{}).grid_for_rows(129), 2);
  EXPECT_THROW(generate_lda_baseline(LdaBaselineSpec{LdaBaseline::alg1, 0, ElementType::f32}), bfly::Error);
}

}  // namespace
