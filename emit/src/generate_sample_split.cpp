// generate_sample_split(): the sample_split kernels, one row split over several CTAs with a two-level table
// (docs/DESIGN.md section 12), in their forms: one draw per row of weights, num_samples draws with and without
// replacement, and draws from softmax(logits / T); and sample_split_pairs, one draw per row with two adjacent
// weights per table entry (section 13). The table build and the block search are the shared emitters';
// the constants, the tile loads, level 1's pass and what differs between the forms are this file's, the rest is
// templates/bfly/sample_split_kernel.skeleton.cuh.
#include "bfly/emit/code_writer.hpp"
#include "bfly/emit/generate.hpp"
#include "emitters.hpp"
#include "template_fill.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace bfly::gen::emit {
namespace {

bool logits(const KernelSpec& spec) { return spec.input == InputKind::logits; }
bool distinct(const KernelSpec& spec) { return spec.draws == Draws::without_replacement; }
// sample_split_pairs: a column of the table is a pair of adjacent weights, loaded as one word and screened as loaded.
bool pairs(const KernelSpec& spec) { return spec.weights_per_column() == 2; }
// sample_split_pairs of odd K (KernelSpec::pairs_by_phase): one of a row's COLUMNS pairs holds a weight outside it.
bool odd_pairs(const KernelSpec& spec) { return spec.pairs_by_phase(); }

// Whether the loads of tile `tile` need the guard column < K: only when the last tile is padded, or a CTA's slice
// reaches past the last tile.
bool tiles_need_guard(const KernelSpec& spec, const LaunchGeometry& g) {
  const int tile_size = spec.W * spec.W;
  const int tiles = g.parts_per_row / spec.W;
  const int tiles_per_cta = g.threads_per_cta / spec.W * g.blocks_in_flight;
  return odd_pairs(spec) || spec.columns() % tile_size != 0 || tiles % tiles_per_cta != 0;
}

void split_constants(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const std::string_view noun = logits(spec) ? "logits" : "weights";
  if (logits(spec) && spec.type == ElementType::f32) {
    w.line("typedef float T;  // element type of the logits");
    w.line("typedef float S;  // accumulator: the weights e^((x - max) / T), the part totals, the tables, the target");
  } else if (is_narrow(spec.type)) {
    w.line("typedef {} T;  // element type of the {}: storage only, each load widens it to S", cuda_type(spec.type),
           noun);
    w.line("typedef {} S;  // accumulator: the part totals, the tables, the target and the uniform",
           cuda_type(accumulator_of(spec.type)));
  } else {
    w.line("typedef {} T;  // element type of the weights and of the running sums", cuda_type(spec.type));
    w.line("typedef T S;  // accumulator: the element type itself");
  }
  const int tiles = g.parts_per_row / spec.W;
  w.line("constexpr int W = {};  // lanes per group, parts per tile and {} per part", spec.W, pairs(spec) ? "pairs" : noun);
  w.line("constexpr int LOG2_W = {};  // levels of the butterfly build and of the in-block search", spec.log2_w());
  w.line("constexpr int K = {};  // categories per row", spec.K);
  if (odd_pairs(spec)) {
    w.line("constexpr int COLUMNS = (K + 1) / 2;  // pairs per row: the table's columns. A row pairs up from the even");
    w.line("                                      // address at or before its start: column c holds weights 2c - phase");
    w.line("                                      // and 2c + 1 - phase, so one column holds a weight outside the row");
    w.line("constexpr int WHOLE_COLUMNS = COLUMNS - 1;  // columns wholly in the row: phase .. phase + WHOLE_COLUMNS - 1");
    w.line("// Where column COLUMNS - 1 sits (its tile, its step of the transposed access, its lane): with phase 0 it holds");
    w.line("// weight K - 1 alone.");
    w.line("constexpr int LAST_TILE = (COLUMNS - 1) / (W * W), LAST_STEP = (COLUMNS - 1) / W % W, LAST_LANE = (COLUMNS - 1) % W;");
  } else if (pairs(spec)) {
    w.line("constexpr int COLUMNS = K / 2;  // pairs of adjacent weights per row: the table's columns");
  }
  const std::string_view columns = pairs(spec) ? "pairs" : noun;
  const std::string_view padding = pairs(spec)    ? " (the last padded with zero pairs past COLUMNS)"
                                   : logits(spec) ? " (the last padded with -inf logits past K)"
                                                  : " (the last padded with zero weights past K)";
  w.line("constexpr int TILES = {};  // W x W tiles {}per row{}", tiles, pairs(spec) ? "of pairs " : "",
         spec.columns() % (spec.W * spec.W) ? padding : "");
  w.line("constexpr int PARTS = {};  // parts of W {} per row: level 1 of the table", g.parts_per_row, columns);
  w.line("constexpr int THREADS = {};  // threads per CTA", g.threads_per_cta);
  w.line("constexpr int GROUPS = {};  // groups of W lanes per CTA", g.threads_per_cta / spec.W);
  w.line("constexpr int TILES_PER_GROUP = {};  // tiles a group loads before it builds the first of them",
         g.blocks_in_flight);
  w.line("constexpr int TILES_PER_CTA = GROUPS * TILES_PER_GROUP;  // a CTA's slice of the row");
  w.line("constexpr int CTAS_PER_ROW = {};  // ceil(TILES / TILES_PER_CTA): CTAs that share one row", g.ctas_per_row);
  w.line("constexpr int CHUNK_PARTS = {};  // part totals one thread of the last CTA sums in level 1's search",
         (g.parts_per_row + g.threads_per_cta - 1) / g.threads_per_cta);
  if (logits(spec))
    w.line("constexpr int SCRATCH_PER_ROW = PARTS + CTAS_PER_ROW;  // part_totals per row: the parts, then each "
           "CTA's maximum");
  else
    w.line("constexpr int SCRATCH_PER_ROW = PARTS;  // part_totals per row: the parts");
  w.line("constexpr unsigned int FULL = 0xffffffffu;  // every lane of the warp takes part in every shuffle");
  if (distinct(spec)) {
    w.line("constexpr int MAX_DRAWS = {};  // distinct draws per row at most (the categories the last CTA keeps)",
           kMaxDistinctDraws);
    w.line("constexpr int REDRAWS = {};  // attempts of a draw before the exact draw among the rest", kRedraws);
  }
}

// sample_split_pairs' loads: the tile over pairs, screened as loaded, and the per-weight test behind the screen; then
// the block search that also returns the running total before the column it finds. Rows of odd K pair up from the
// even address at or before their start (`phase`): the loads skip the one column that holds a weight outside the row,
// and its lane loads the row's weight alone.
void pair_functions(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const bool odd = odd_pairs(spec);
  const bool guard = tiles_need_guard(spec, g);
  const std::string_view S = sum_type(spec);
  w.line("// Algorithm 8 lines 13-17 over pairs, transposed access: part k of tile `tile` is the W pairs (2 W weights)");
  w.line("// from column tile * W * W + k * W; on step k lane r loads pair r of part k as one word (bfly::load_pair), so");
  w.line("// the W lanes read 2 W consecutive weights. Afterwards a[k] of lane r is the sum of pair r of part k");
  w.line("// (bfly::pair_sum), and `screen` has taken the pair as loaded (pass 1's screen, docs/DESIGN.md section 6).");
  if (odd) {
    w.line("// Column c holds weights 2c - phase and 2c + 1 - phase: the one column that holds a weight outside the row");
    w.line("// (column 0 with phase 1, column COLUMNS - 1 with phase 0) loads the row's weight alone (bfly::lone_pair),");
    w.line("// and pairs past COLUMNS read as zeros.");
  } else if (guard) {
    w.line("// Pairs past COLUMNS read as zeros.");
  }
  {
    auto body = w.scope(fmt::format("__device__ __forceinline__ void load_tile({} (&a)[W], const T* row, int tile, int r, "
                                    "unsigned int& screen{})", S, odd ? ", int phase" : ""));
    w.line("const int c = tile * (W * W) + r;");
    if (odd) w.line("const T* const pairs = row - phase;  // the even address at or before the row's start");
    for (int k = 0; k < spec.W; ++k) {
      const std::string load = fmt::format("bfly::load_pair({} + 2 * (c + {} * W))", odd ? "pairs" : "row", k);
      const std::string pair =
          odd     ? fmt::format("static_cast<unsigned int>(c + {} * W - phase) < WHOLE_COLUMNS ? {} : bfly::WeightPair<T>{{}}",
                                k, load)
          : guard ? fmt::format("c + {} * W < COLUMNS ? {} : bfly::WeightPair<T>{{}}", k, load)
                  : load;
      screened_pair("bfly::WeightPair<T>", pair, k, w);
    }
    if (odd) {
      {
        auto first = w.scope("if (phase != 0)", "the row starts on an odd element: column 0 holds weight 0 alone");
        w.line("if (tile == 0 && r == 0) { const bfly::WeightPair<T> x = bfly::lone_pair(row); "
               "screen = bfly::screen_pair(screen, x); a[0] = bfly::pair_sum(x); }");
      }
      auto last = w.scope("else if (tile == LAST_TILE && r == LAST_LANE)",
                          "phase 0: column COLUMNS - 1 holds weight K - 1 alone");
      w.line("const bfly::WeightPair<T> x = bfly::lone_pair(row + (K - 1));");
      w.line("screen = bfly::screen_pair(screen, x);");
      w.line("a[LAST_STEP] = bfly::pair_sum(x);");
    }
  }
  w.blank();
  if (odd) {
    w.line("// The per-weight test behind the screen: whether a weight of the row among the TILES_PER_GROUP tiles this lane");
    w.line("// loaded from `first_tile` on is unusable (negative, NaN or infinite). Only a lane whose screen failed asks (a");
    w.line("// -0.0 fails it, and is usable), so it reads its own weights again, one by one.");
  } else {
    w.line("// The per-weight test behind the screen: whether a weight of the TILES_PER_GROUP tiles this lane loaded from");
    w.line("// `first_tile` on is unusable (negative, NaN or infinite). Only a lane whose screen failed asks (a -0.0 fails");
    w.line("// it, and is usable), so it reads its own pairs again, weight by weight.");
  }
  {
    auto body = w.scope(fmt::format("__device__ bool lane_has_unusable_weight(const T* row, int first_tile, int r{})",
                                    odd ? ", int phase" : ""));
    w.line("bool bad = false;");
    {
      auto tiles = w.scope("for (int tile = first_tile; tile < first_tile + TILES_PER_GROUP; ++tile)");
      auto parts = w.scope("for (int k = 0; k < W; ++k)");
      if (odd) {
        w.line("const int first = 2 * (tile * (W * W) + k * W + r) - phase;  // the column's first weight");
        w.line("if (first >= 0 && first < K) bad |= !bfly::valid_weight({});", widened(spec, "row[first]"));
        w.line("if (first + 1 >= 0 && first + 1 < K) bad |= !bfly::valid_weight({});", widened(spec, "row[first + 1]"));
      } else {
        w.line("const int column = tile * (W * W) + k * W + r;");
        w.line("if (column < COLUMNS)");
        w.line("  bad |= !bfly::valid_weight({}) || !bfly::valid_weight({});", widened(spec, "row[2 * column]"),
               widened(spec, "row[2 * column + 1]"));
      }
    }
    w.line("return bad;");
  }
  w.blank();
  search_block(spec.W, spec.variant, w, S, /*low_out=*/true);
}

void split_functions(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const bool guard = tiles_need_guard(spec, g);
  const std::string_view S = sum_type(spec);
  build_table(spec.W, spec.variant, w);
  w.blank();
  if (pairs(spec)) {
    pair_functions(spec, g, w);
    return;
  }
  const std::string_view noun = logits(spec) ? "logit" : "weight";
  const std::string element = logits(spec) ? "bfly::widen(row[c + {} * W])" : widened(spec, "row[c + {} * W]");
  w.line("// Algorithm 8 lines 13-17, transposed access: part k of tile `tile` is the W {0}s from column", noun);
  w.line("// tile * W * W + k * W; on step k lane r loads {0} r of part k, so the W lanes read W consecutive {0}s", noun);
  w.line("// and the tile is W * W consecutive {0}s. Afterwards a[k] of lane r is {0} r of part k.{1}", noun,
         !guard ? "" : logits(spec) ? " Logits past K read as -inf." : " Weights past K read as 0.");
  {
    auto body = w.scope(fmt::format(
        "__device__ __forceinline__ void load_tile({} (&a)[W], const T* row, int tile, int r)", S));
    w.line("const int c = tile * (W * W) + r;");
    for (int k = 0; k < spec.W; ++k) {
      const std::string load = fmt::format(fmt::runtime(element), k);
      if (guard)
        w.line("a[{0}] = c + {0} * W < K ? {1} : {2};", k, load,
               logits(spec) ? "bfly::minus_infinity()" : fmt::format("{}(0)", S));
      else
        w.line("a[{0}] = {1};", k, load);
    }
  }
  w.blank();
  if (logits(spec)) {
    w.line("// Every logit is checked once, in level 1: a NaN or +inf makes the row invalid. `top` becomes the largest");
    w.line("// logit of the tile and of what it held before.");
    auto body = w.scope("__device__ __forceinline__ void check_tile(const S (&a)[W], bool& bad, S& top)");
    for (int k = 0; k < spec.W; ++k)
      w.line("bad |= !bfly::valid_logit(a[{0}]); if (a[{0}] > top) top = a[{0}];", k);
  } else {
    w.line("// Every weight is checked once, in level 1: a negative, NaN or infinite weight makes the row invalid.");
    auto body = w.scope(fmt::format("__device__ __forceinline__ void check_tile(const {} (&a)[W], bool& bad)", S));
    for (int k = 0; k < spec.W; ++k) w.line("bad |= !bfly::valid_weight(a[{}]);", k);
  }
  if (logits(spec)) {
    w.blank();
    w.line("// A tile's logits as weights e^((x - top) / T) under its CTA's maximum `top`: level 1 and level 2 form them");
    w.line("// alike, so the table level 2 rebuilds is level 1's.");
    auto body = w.scope("__device__ __forceinline__ void to_weights(S (&a)[W], S top, S scale)");
    for (int k = 0; k < spec.W; ++k) w.line("a[{0}] = bfly::logit_weight(a[{0}], top, scale);", k);
  }
  w.blank();
  search_block(spec.W, spec.variant, w, S);
}

void split_pass1(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const bool guard = tiles_need_guard(spec, g);
  const int in_flight = g.blocks_in_flight;
  w.line("// Group g of slice s takes the TILES_PER_GROUP tiles from s * TILES_PER_CTA + g * TILES_PER_GROUP; their");
  w.line("// loads are all issued before the first table is built, so TILES_PER_GROUP * W {} per lane are in flight.",
         pairs(spec) ? "pairs" : logits(spec) ? "logits" : "weights");
  w.line("const int first_tile = slice * TILES_PER_CTA + group * TILES_PER_GROUP;");
  std::string tiles;
  for (int u = 0; u < in_flight; ++u) tiles += fmt::format("{}a{}[W]", u ? ", " : "", u);
  w.line("{} {};", sum_type(spec), tiles);
  if (pairs(spec)) w.line("unsigned int screen = 0u;  // the largest bit pattern of each half of the pairs this lane loads");
  const std::string tail = odd_pairs(spec) ? ", screen, phase" : pairs(spec) ? ", screen" : "";
  for (int u = 0; u < in_flight; ++u) w.line("load_tile(a{0}, row, first_tile + {0}, r{1});", u, tail);
  if (logits(spec)) {
    w.line("// The CTA's maximum (online softmax over the CTAs of a row): each lane's, its warp's (one redux), then the");
    w.line("// warps' through shared memory. Level 1 sums the weights under it; the last CTA rescales to the row's.");
    w.line("S top = bfly::minus_infinity();");
    for (int u = 0; u < in_flight; ++u) w.line("check_tile(a{}, bad, top);", u);
    w.line("__shared__ S warp_top[THREADS / 32];");
    w.line("top = bfly::group_max(FULL, top);");
    w.line("if ((threadIdx.x & 31) == 0) warp_top[threadIdx.x / 32] = top;");
    w.line("__syncthreads();");
    w.line("S cta_max = warp_top[0];");
    w.line("for (int i = 1; i < THREADS / 32; ++i) cta_max = warp_top[i] > cta_max ? warp_top[i] : cta_max;");
    w.line("if (threadIdx.x == 0) row_part_totals[PARTS + slice] = cta_max;  // after the parts: this CTA's maximum");
  }
  for (int u = 0; u < in_flight; ++u) {
    if (logits(spec))
      w.line("to_weights(a{}, cta_max, scale);", u);
    else if (!pairs(spec))
      w.line("check_tile(a{}, bad);", u);
    w.line("build_table(a{}, r);  // Algorithm 8 lines 18-30", u);
    const std::string store =
        fmt::format("row_part_totals[(first_tile + {0}) * W + r] = a{0}[W - 1];  // row W-1: the total of part r", u);
    if (guard)
      w.line("if (first_tile + {} < TILES) {}", u, store);
    else
      w.line("{}", store);
  }
  if (pairs(spec)) {
    w.line("// The screen passed: every weight this lane loaded is usable. Else (an unusable weight, or a -0.0) the lane");
    w.line("// tests its pairs weight by weight.");
    w.line("if (!bfly::pair_screen_passed(screen, T())) bad = lane_has_unusable_weight(row, first_tile, r{});",
           odd_pairs(spec) ? ", phase" : "");
  }
}

std::string header_comment(const KernelSpec& spec, const std::string& name) {
  CodeWriter w;
  header_preamble(spec, name, w);
  const std::string kind = distinct(spec) ? "distinct categories" : "categories";
  const std::string how = distinct(spec) ? "without replacement (a draw that finds a category the row has drawn is "
                                           "redrawn, up to REDRAWS times, then drawn exactly among the categories left)"
                                         : "with replacement";
  const std::string what =
      logits(spec) ? fmt::format("The {} kernel: it draws num_samples {} per row from softmax(logits / T) of M x K "
                                 "logits, {},", family_of(spec).name, kind, how)
      : spec.draws != Draws::one
          ? fmt::format("The {} kernel: it draws num_samples {} per row of M x K weights, {},", family_of(spec).name,
                        kind, how)
      : pairs(spec)
          ? std::string("The sample_split_pairs kernel: it draws one category per row of M x K weights, two adjacent "
                        "weights (one load) per table entry and one comparison between them after the search "
                        "(docs/DESIGN.md section 13),")
          : std::string("The sample_split kernel: it draws one category per row of M x K weights,");
  comment_paragraph(
      fmt::format("{} each row split over several CTAs, with the butterfly-patterned partial sums of Steele and Tristan "
                  "(\"Using Butterfly-Patterned Partial Sums to Draw from Discrete Distributions\", ACM TOPC 2019): the "
                  "tiles of Algorithm 8, a two-level search (Algorithm 9 over the part totals, then Algorithm 10 in the "
                  "chosen part), {} variant ({}). Level 1 reads every {} once and writes one total per part of W {} "
                  "them; the last CTA of a row searches the part totals, reloads the chosen part's tile and searches its "
                  "table, once per draw.{}",
                  what, name_of(spec.variant), spec.variant == Variant::addsub ? "Figure 8" : "Figure 4",
                  logits(spec) ? "logit" : "weight", pairs(spec) ? "pairs of" : "of",
                  logits(spec) ? " The weights are e^((x - max) / T): each CTA sums its parts under its own maximum, "
                                 "and the last CTA rescales them to the row's (docs/DESIGN.md sections 11 and 12)."
                  : odd_pairs(spec) ? " A row of odd K pairs up from the even address at or before its start."
                                    : ""),
      w);
  std::string text = w.text();
  text.pop_back();  // the skeleton line ends the comment
  return text;
}

// The weights of tile `tile` of the row in a[] of each lane of a group: as loaded, or for logits e^((x - tile_max) / T)
// under the maximum level 1 summed the tile under.
void tile_weights(const KernelSpec& spec, CodeWriter& w) {
  if (logits(spec))
    w.line("const S tile_max = slice_max[tile / TILES_PER_CTA];  // the maximum level 1 summed this tile under");
  if (pairs(spec)) {
    w.line("unsigned int tile_screen = 0u;  // level 1 screened these pairs already");
    w.line("load_tile(a, row, tile, r, tile_screen{});", odd_pairs(spec) ? ", phase" : "");
  } else {
    w.line("load_tile(a, row, tile, r);");
  }
  if (logits(spec)) w.line("to_weights(a, tile_max, scale);");
}

void distinct_values(const KernelSpec& spec, std::map<std::string, std::string>& values);

// The skeleton values that differ between the forms: the level-1 loads of the last CTA, level 2's table and
// target, the weight of the drawn category and the sequential redraw.
void form_values(const KernelSpec& spec, std::map<std::string, std::string>& values) {
  const std::string S(sum_type(spec));
  values["input"] = logits(spec) ? "logits" : "weights";
  values["element_noun"] = logits(spec) ? "logit" : "weight";
  values["column_noun"] = pairs(spec) ? "pair" : values["element_noun"];
  const int min_ctas = min_ctas_per_sm(spec);  // __launch_bounds__'s CTAs per SM, when the spec asks for one
  values["min_ctas_per_sm"] = min_ctas == 0 ? "" : fmt::format(", {}", min_ctas);
  std::string state;
  if (spec.draws == Draws::one) state = "constexpr int num_samples = 1;  // one draw per row\n";
  if (distinct(spec)) state += "if (num_samples > MAX_DRAWS) __trap();  // more distinct draws than the last CTA keeps\n";
  if (logits(spec)) state += "const S scale = static_cast<S>(bfly::kLog2e / temperature);  // weights 2^((x - max) * scale)\n";
  if (odd_pairs(spec))
    state += "// The row pairs up from the even address at or before its start: phase 1 when that is the weight before it.\n"
             "const int phase = bfly::pair_phase(row);\n";
  values["form_state"] = without_trailing_newline(state);
  CodeWriter chunk;
  if (logits(spec)) {
    chunk.line("// The row's maximum is the largest of its CTAs' (in shared memory); part p, summed under the maximum of");
    chunk.line("// CTA p / (W * TILES_PER_CTA), is rescaled to it.");
    chunk.line("__shared__ S slice_max[CTAS_PER_ROW];");
    chunk.line("for (int c = static_cast<int>(threadIdx.x); c < CTAS_PER_ROW; c += THREADS)");
    chunk.line("  slice_max[c] = bfly::load_published(row_part_totals + PARTS + c);");
    chunk.line("__syncthreads();");
    chunk.line("S row_max = bfly::minus_infinity();");
    chunk.line("for (int c = 0; c < CTAS_PER_ROW; ++c) row_max = slice_max[c] > row_max ? slice_max[c] : row_max;");
    chunk.line("// Weight k of the row under its maximum, for a draw made again sequentially.");
    chunk.line("const bfly::RowLogitWeights<T> weight_of{row, row_max, scale};");
  }
  chunk.line("{} chunk_parts[CHUNK_PARTS];", S);
  chunk.line("#pragma unroll");
  chunk.line("for (int i = 0; i < CHUNK_PARTS; ++i)");
  if (logits(spec)) {
    chunk.line("  chunk_parts[i] = first_part + i >= PARTS ? S(0)");
    chunk.line("                 : bfly::rescale(bfly::load_published(row_part_totals + first_part + i),");
    chunk.line("                                 slice_max[(first_part + i) / (W * TILES_PER_CTA)], row_max, scale);");
  } else {
    chunk.line("  chunk_parts[i] = first_part + i < PARTS ? bfly::load_published(row_part_totals + first_part + i) "
               ": {}(0);", S);
  }
  values["load_chunk_parts"] = without_trailing_newline(chunk.text());
  CodeWriter table;
  tile_weights(spec, table);
  if (distinct(spec)) table.line("if (rest) bfly::exclude_drawn(a, tile, r, drawn, first);  // the table of what is left");
  if (logits(spec)) {
    table.line("// Level 1 rescaled the tile's parts by e^((tile_max - row_max) / T); this table holds them unscaled.");
    table.line("const S factor = bfly::logit_weight(tile_max, row_max, scale);");
  }
  table.line("build_table(a, r);");
  values["level2_table"] = without_trailing_newline(table.text());
  // The target within the part, for logits scaled back to the part's own table (and kept below the part's total,
  // row W-1 of the searcher's table).
  values["level2_target"] =
      logits(spec) ? "bfly::unscaled_target(part_targets[group], factor, a[W - 1])" : "part_targets[group]";
  // Over pairs, the search also gives the running total before the pair it finds, from which one comparison picks
  // the pair's weight.
  values["level2_search"] =
      pairs(spec) ? "S before = S(0);  // on return: the running total within the part before the pair found\n"
                    "const int column = search_block(a, r, t, before, a[W - 1]);"
                  : "const int column = search_block(a, r, t, S(0), a[W - 1]);";
  if (odd_pairs(spec)) {
    values["level2_draw"] =
        "// Column `pair` holds the weights first = 2 * pair - phase and first + 1: the first is drawn when u' lies below\n"
        "// the running total before the pair plus that weight (zero outside the row), else the second. A padded pair\n"
        "// (past COLUMNS), a weight outside the row and a zero weight reached through rounding are drawn again\n"
        "// sequentially below.\n"
        "const int pair = tile * (W * W) + owner * W + column;\n"
        "const int first = 2 * pair - phase;\n"
        "int draw = pair < COLUMNS ? first + (t < before + (first >= 0 ? " + widened(spec, "row[first]") +
        " : S(0)) ? 0 : 1) : K;";
  } else if (pairs(spec)) {
    values["level2_draw"] =
        "// Pair `pair` holds the weights 2 * pair and 2 * pair + 1: the first is drawn when u' lies below the running\n"
        "// total before the pair plus the first weight, else the second. A padded pair (past COLUMNS) and a zero weight\n"
        "// reached through rounding are drawn again sequentially below.\n"
        "const int pair = tile * (W * W) + owner * W + column;\n"
        "int draw = pair < COLUMNS ? 2 * pair + (t < before + " + widened(spec, "row[2 * pair]") + " ? 0 : 1) : K;";
  } else {
    values["level2_draw"] = "int draw = tile * (W * W) + owner * W + column;";
  }
  const std::string drawn_weight =
      logits(spec) ? "bfly::logit_weight(bfly::widen(row[draw]), tile_max, scale)" : widened(spec, "row[draw]");
  values["unusable_draw"] = fmt::format("{}draw >= K || !({} > S(0)){}", odd_pairs(spec) ? "draw < 0 || " : "", drawn_weight,
                                        distinct(spec) ? " || (rest && bfly::already_drawn(draw, drawn, first))" : "");
  // The chosen part's categories: W columns from part * W, two weights a column over pairs (from the row's phase).
  const std::string part_begin = odd_pairs(spec) ? "2 * part * W - phase" : pairs(spec) ? "2 * part * W" : "part * W";
  const std::string part_weights =
      logits(spec) ? "bfly::RowLogitWeights<T>{row, tile_max, scale}" : "bfly::RowWeights<T>{row}";
  values["redraw_within_part"] =
      fmt::format("bfly::sequential_draw_within({0}, {1}, {1} + {2}W, K, t, {3})", part_weights, part_begin,
                  pairs(spec) ? "2 * " : "",
                  distinct(spec) ? "drawn, rest ? first : 0" : "static_cast<const int*>(nullptr), 0");
  values["sequential_draw"] =
      distinct(spec) ? "bfly::sequential_draw_excluding(weight_of, K, uniforms[group], drawn, rest ? first : 0)"
      : logits(spec) ? "bfly::sequential_draw_excluding(weight_of, K, uniforms[group], static_cast<const int*>(nullptr), 0)"
                     : "bfly::sequential_draw(row, K, uniforms[group])";
  values["round_batch"] =
      distinct(spec) ? "rest && !(table_total > S(0)) ? 0 : bfly::distinct_slots(first, attempt, REDRAWS, num_samples, GROUPS)"
                     : "num_samples - first < GROUPS ? num_samples - first : GROUPS";
  if (distinct(spec)) {
    values["slot_word"] = "int slot_draw, slot_attempt;  // the draw and attempt of this slot (attempt a: word d + a * 2^24)\n"
                          "bfly::distinct_slot(static_cast<int>(threadIdx.x), first, attempt, REDRAWS, slot_draw, slot_attempt);\n"
                          "const unsigned int word = bfly::draw_word(slot_draw, slot_attempt);";
    values["walk_part"] =
        "touched ? bfly::part_left(first_part + i, chunk_parts[i], fixed_part, fixed_total, first) : chunk_parts[i]";
  } else {
    values["slot_word"] = "// Draw d of row m takes the uniform of Philox(seed; first_row + m, d, iteration): draw 0 is "
                          "the one-draw kernel's.\nconst unsigned int word = bfly::draw_word(first + static_cast<int>(threadIdx.x), 0);";
    values["walk_part"] = "chunk_parts[i]";
  }
  distinct_values(spec, values);
}

// The values that make the draws distinct: the drawn categories, the table of the categories left for a round whose
// draw is made exactly among them, the acceptance of a round's slots; with replacement, each slot is a draw.
void distinct_values(const KernelSpec& spec, std::map<std::string, std::string>& values) {
  if (!distinct(spec)) {
    values["draws_state"] = "";
    values["round_table"] = "";
    values["accept_round"] =
        "if (static_cast<int>(threadIdx.x) < batch) out[m * num_samples + first + threadIdx.x] = found[threadIdx.x];\n"
        "first += batch;";
    values["write_draws"] = "";
    return;
  }
  CodeWriter state;
  state.line("__shared__ int drawn[MAX_DRAWS];       // the categories this row has drawn, in order");
  state.line("__shared__ int next_round[2];          // the next round's first draw and that draw's attempt");
  state.line("__shared__ int fixed_part[MAX_DRAWS];  // the table of the categories left: the part of drawn category j");
  state.line("__shared__ S fixed_total[MAX_DRAWS];   // ... and its total without the drawn categories");
  if (!logits(spec)) state.line("const bfly::RowWeights<T> weight_of{row};  // weight k of the row, for a sequential draw");
  state.line("int attempt = 0;  // the attempt of draw `first` this round (REDRAWS: the exact draw among the rest)");
  values["draws_state"] = without_trailing_newline(state.text());

  CodeWriter w;
  w.line("// Attempts 0 .. REDRAWS - 1 of a draw search the row's table, and one that finds a drawn category is redrawn");
  w.line("// (rejection from the whole row gives exactly the distribution of what is left). A draw whose REDRAWS attempts");
  w.line("// all found drawn categories is made among the categories left: each part holding a drawn category is formed");
  w.line("// again without them (group g takes drawn categories g, g + GROUPS, ...), then the chunks and their scan.");
  w.line("const bool rest = attempt == REDRAWS;");
  w.line("bool touched = false;  // in that table, this thread's chunk holds a part formed again");
  {
    auto rest = w.scope("if (rest)");
    {
      auto parts = w.scope("for (int fix = 0; fix < first; fix += GROUPS)");
      w.line("if (fix + warp_first_group >= first) continue;  // no group of this warp has a drawn category left");
      w.line("const int j = fix + group;");
      w.line("const int part = j < first ? drawn[j] / W : 0;");
      w.line("const int tile = part / W;");
      w.line("S a[W];");
      tile_weights(spec, w);
      w.line("bfly::exclude_drawn(a, tile, r, drawn, first);");
      w.line("build_table(a, r);");
      auto owner = w.scope("if (j < first && r == part % W)");
      w.line("fixed_part[j] = part;");
      w.line("fixed_total[j] = {};  // row W-1: the part's total, as level 1 holds it",
             logits(spec) ? "bfly::rescale(a[W - 1], tile_max, row_max, scale)" : "a[W - 1]");
    }
    w.line("__syncthreads();");
    w.line("for (int j = 0; j < first; ++j) touched |= fixed_part[j] / CHUNK_PARTS == static_cast<int>(threadIdx.x);");
    {
      auto sum = w.scope("if (touched)");
      w.line("table_chunk_total = S(0);");
      w.line("#pragma unroll");
      w.line("for (int i = 0; i < CHUNK_PARTS; ++i)");
      w.line("  table_chunk_total += bfly::part_left(first_part + i, chunk_parts[i], fixed_part, fixed_total, first);");
    }
    w.line("table_chunk_end = bfly::block_inclusive_scan<THREADS>(scan, table_chunk_total);");
    w.line("table_total = scan[THREADS - 1];");
    w.line("table_chunk_start = threadIdx.x > 0 ? scan[threadIdx.x - 1] : S(0);");
  }
  values["round_table"] = without_trailing_newline(w.text());
  values["accept_round"] =
      "// Thread 0 keeps the slots that found categories not drawn before, in order, and sets the next round.\n"
      "if (threadIdx.x == 0) bfly::accept_distinct_round(found, batch, first, attempt, REDRAWS, num_samples, drawn, "
      "next_round);\n"
      "__syncthreads();\n"
      "first = next_round[0];\n"
      "attempt = next_round[1];";
  values["write_draws"] =
      "// The row's draws; a row left without positive weights draws -1 for the rest and is counted as invalid.\n"
      "if (valid) {\n"
      "  for (int d = static_cast<int>(threadIdx.x); d < num_samples; d += THREADS) out[m * num_samples + d] = drawn[d];\n"
      "  if (threadIdx.x == 0 && drawn[num_samples - 1] < 0) bfly::report_invalid_row(invalid_rows, static_cast<long long>(bfly::batch_row(first_row, m)));\n"
      "}";
}

}  // namespace

Source generate_sample_split(const KernelSpec& spec) {
  const LaunchGeometry geometry = launch_geometry(spec);
  const std::string name = kernel_name(spec);
  CodeWriter constants, functions, pass1;
  split_constants(spec, geometry, constants);
  split_functions(spec, geometry, functions);
  split_pass1(spec, geometry, pass1);
  const KernelFamily& family = family_of(spec);
  const std::string_view items = family.arg(ArgRole::items).name;
  std::map<std::string, std::string> values = {
      {"header_comment", header_comment(spec, name)},
      {"constants", without_trailing_newline(constants.text())},
      {"device_functions", without_trailing_newline(functions.text())},
      {"pass1", without_trailing_newline(pass1.text())},
      {"launch_contract",
       fmt::format("// Launch contract (docs/DESIGN.md section 9): blockDim = (THREADS, 1, 1), a 1-D grid of at least\n"
                   "// {0} * CTAS_PER_ROW CTAs, no dynamic shared memory. Any other launch traps (__trap) rather than\n"
                   "// leave {1}s unwritten.",
                   items, family.item)},
      {"launch_check",
       fmt::format("bfly::require_split_launch(THREADS, CTAS_PER_ROW, {});  // the launch contract above", items)},
  };
  form_values(spec, values);
  FamilyKernel kernel;
  kernel.family = &family;
  kernel.type = spec.type;
  kernel.kernel_name = name;
  kernel.geometry = geometry;
  kernel.headers = {"bfly/philox.cuh", "bfly/sample_support.cuh", "bfly/draws_support.cuh",
                    "bfly/sample_split_support.cuh"};
  Source source = fill_family_skeleton(kernel, std::move(values));
  source.spec = spec;
  return source;
}

}  // namespace bfly::gen::emit
