// generate() for the sample forms beyond one draw from weights (BFLY_SAMPLE_FORMS): several draws per row with or
// without replacement, from weights or from logits with a temperature. The same Algorithms 7-10 as the sample
// kernel; this file writes what differs (the online maximum of logits, the loop over draws, the redraws without
// replacement) into bfly/sample_draws_kernel.skeleton.cuh and reuses the shared emitters for the rest.
#include "bfly/emit/generate.hpp"

#include "bfly/emit/code_writer.hpp"
#include "emitters.hpp"
#include "template_fill.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace bfly::gen {
namespace {

bool logits(const KernelSpec& spec) { return spec.input == InputKind::logits; }
bool distinct(const KernelSpec& spec) { return spec.draws == Draws::without_replacement; }

std::string sample_draws_header_comment(const KernelSpec& spec, const std::string& name) {
  CodeWriter w;
  emit::header_preamble(spec, name, w);
  std::string about = fmt::format(
      "The {} kernel {}, with the butterfly-patterned partial sums of Steele and Tristan (\"Using Butterfly-Patterned "
      "Partial Sums to Draw from Discrete Distributions\", ACM TOPC 2019): Algorithms 7-10, {} variant ({}). Pass 1 "
      "reads every {} once and keeps the running totals of the blocks in shared memory; each draw then finds its "
      "block (Algorithm 9), reloads it and searches its table (Algorithm 10).",
      family_of(spec).name, family_of(spec).summary, name_of(spec.variant),
      spec.variant == Variant::addsub ? "Figure 8" : "Figure 4", logits(spec) ? "logit" : "weight");
  if (logits(spec))
    about += " Logits: the weights are e^((x - max) / T), formed when a block is loaded and never stored; pass 1 "
             "keeps each row's maximum online (a larger maximum rescales the running total) and the draws use the "
             "final one.";
  if (distinct(spec))
    about += " Without replacement: a draw that finds a category this row has drawn is redrawn with a fresh "
             "uniform, up to REDRAWS times, then drawn exactly among the categories left (docs/DESIGN.md section 11).";
  emit::comment_paragraph(about, w);
  std::string text = w.text();
  text.pop_back();  // the skeleton line ends the comment
  return text;
}

// The loads of logits: the transposed access of the sample kernel, -inf where a block has no logit, and the online
// maximum that turns a tile of logits into weights.
void logit_functions(const KernelSpec& spec, CodeWriter& w) {
  const bool padded = spec.padded();
  w.line("// Algorithm 5 / Algorithm 8 lines 13-17, transposed access: on step k, lane r loads logit `column` of row k,");
  w.line("// so the W lanes read W consecutive logits of one row. Columns outside the row (padding) and rows past M");
  w.line("// read as -inf, a logit of weight zero. Only loads: nothing here waits for them.");
  {
    auto body = w.scope(
        "__device__ __forceinline__ void load_block(S (&a)[W], const T* rows, long long ld, int rows_left, "
        "int column)");
    if (padded) w.line("const bool in_row = column >= 0;  // block 0 starts left of column 0: no logits there");
    w.line("const T* p = rows + column;");
    for (int k = 0; k < spec.W; ++k)
      w.line("a[{0}] = {0} < rows_left{1} ? bfly::widen(p[{0} * ld]) : bfly::minus_infinity();", k,
             padded ? " && in_row" : "");
  }
  w.blank();
  w.line("// Every logit is checked once, when its block is used: bit k of `bad` marks a NaN or +inf of row k.");
  {
    auto body = w.scope("__device__ __forceinline__ void check_block(const S (&a)[W], unsigned int& bad)");
    for (int k = 0; k < spec.W; ++k) w.line("if (!bfly::valid_logit(a[{0}])) bad |= 1u << {0};", k);
  }
  w.blank();
  w.line("// The online maximum (one redux per row of the tile): row k's maximum over this block and what lane k has");
  w.line("// seen so far reaches every lane, the tile's logits become weights e^((x - max) / T) under it, and lane r");
  w.line("// rescales its running total when its row's maximum grew. The table is then built as for weights.");
  {
    auto body = w.scope(
        "__device__ __forceinline__ void logits_to_weights(S (&a)[W], int r, unsigned int group, S& row_max, "
        "S& running, S scale)");
    w.line("S new_max = row_max;");
    for (int k = 0; k < spec.W; ++k)
      w.line("{{ const S top = bfly::group_max(group, r == {0} && row_max > a[{0}] ? row_max : a[{0}]); if (r == {0}) "
             "new_max = top; a[{0}] = bfly::logit_weight(a[{0}], top, scale); }}",
             k);
    w.line("running = bfly::rescale(running, row_max, new_max, scale);");
    w.line("row_max = new_max;");
  }
  w.blank();
  w.line("// Pass 2's weights of the blocks the lanes chose: row k's block and final maximum come from lane k.");
  w.line("// Blocks past the last (a chunk that ends early) read as zeros.");
  {
    auto body = w.scope(
        "__device__ __forceinline__ void load_chosen_blocks(S (&a)[W], const T* rows, long long ld, int rows_left, "
        "int block, int r, S row_max, S scale)");
    for (int k = 0; k < spec.W; ++k) {
      w.line("{{ const int b = __shfl_sync(FULL, block, {0}, W); const S top = __shfl_sync(FULL, row_max, {0}, W);", k);
      w.line("  const int c = FIRST_BLOCK_COLUMN + b * W + r;");
      w.line("  a[{0}] = {0} < rows_left && b < BLOCKS{1} ? bfly::logit_weight(bfly::widen(rows[{0} * ld + c]), top, "
             "scale) : S(0); }}",
             k, padded ? " && c >= 0" : "");
    }
  }
}

// Pass 1: the remnant, then every block (loaded BLOCKS_IN_FLIGHT at a time), each block's running total kept.
void pass1(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  if (spec.linear_remnant()) {
    w.line("// Algorithm 8 lines 8-12: the remnant (columns 0 .. REMNANT-1), summed by each lane over its own row.");
    w.line("S remnant_total = S(0);");
    if (logits(spec)) {
      w.line("S remnant_max = bfly::minus_infinity();  // the maximum the remnant's weights are summed under");
      auto guard = w.scope("if (m < M)");
      w.line("#pragma unroll");
      w.line("for (int j = 0; j < REMNANT; ++j) {");
      w.line("  const S x = bfly::widen(my_row[j]);");
      w.line("  if (!bfly::valid_logit(x)) bad |= 1u << r;");
      w.line("  if (x > remnant_max) remnant_max = x;");
      w.line("}");
      w.line("#pragma unroll");
      w.line("for (int j = 0; j < REMNANT; ++j) remnant_total += bfly::logit_weight(bfly::widen(my_row[j]), "
             "remnant_max, scale);");
    } else {
      auto guard = w.scope("if (m < M)");
      w.line("#pragma unroll");
      auto loop = w.scope("for (int j = 0; j < REMNANT; ++j)");
      w.line("const S x = {};", emit::widened(spec, "my_row[j]"));
      w.line("if (!bfly::valid_weight(x)) bad |= 1u << r;");
      w.line("remnant_total += x;");
    }
    w.line("running = remnant_total;");
    if (logits(spec)) w.line("row_max = remnant_max;");
  } else {
    w.line("const S remnant_total = S(0);  // no linearly searched remnant");
  }
  if (spec.blocks() == 0) return;
  const auto load = [&](const std::string& a, const std::string& b) {
    w.line("load_block({}, rows, ld, rows_left, FIRST_BLOCK_COLUMN + ({}) * W + r);", a, b);
  };
  const auto use = [&](const std::string& a) {
    w.line("check_block({}, bad);", a);
    if (logits(spec)) w.line("logits_to_weights({}, r, group, row_max, running, scale);", a);
    w.line("build_table({}, r);", a);
    w.line("running += {}[W - 1];  // Algorithm 8 line 31: row W-1 is this lane's block total", a);
  };
  if (spec.blocks() == 1) {
    w.line("// Algorithm 8 lines 13-34 for the one block; every draw searches this table as it is.");
    w.line("S table[W];");
    load("table", "0");
    use("table");
    return;
  }
  const auto store = [&](const std::string& b) {
    const std::string where = geometry.chunk_blocks == 1 ? b : fmt::format("({}) / CHUNK_BLOCKS", b);
    const std::string when =
        geometry.chunk_blocks == 1 ? "" : fmt::format("if (({0} + 1) % CHUNK_BLOCKS == 0 || {0} == BLOCKS - 1) ", b);
    if (logits(spec))
      w.line("{0}{{ running_total[{1}][threadIdx.x] = running; running_max[{1}][threadIdx.x] = row_max; }}  // line 32",
             when, where);
    else
      w.line("{}running_total[{}][threadIdx.x] = running;  // line 32", when, where);
  };
  w.lines(fmt::format("// Algorithm 8 lines 13-34 for each block: transposed load, {}butterfly build, running total of "
                      "row W-1.",
                      logits(spec) ? "weights under the online maximum,\n// " : ""));
  emit::block_loop(spec.blocks(), geometry.blocks_in_flight, "S", load,
                   [&](const std::string& a, const std::string& b) {
                     use(a);
                     store(b);
                   },
                   w);
}

// Algorithms 9 and 10 for one draw: sets `draw` from `target` (lanes where `active` is false search along, for
// the shuffles, and their result is ignored).
void search(const KernelSpec& spec, const LaunchGeometry& geometry, std::string_view active, CodeWriter& w) {
  const std::string load_chosen = logits(spec) ? "load_chosen_blocks(a, rows, ld, rows_left, {}, r, row_max, scale);"
                                               : "load_chosen_blocks(a, rows, ld, rows_left, {}, r);";
  const auto linear = [&](std::string_view why, std::string_view condition) {
    w.line("{}", why);
    auto guard = w.scope(fmt::format("if ({})", condition));
    w.line("S s = S(0);");
    w.line("draw = REMNANT - 1;");
    auto loop = w.scope("for (int j = 0; j < REMNANT; ++j)");
    w.line("s += weight_of(j);");
    w.line("if (target < s) { draw = j; break; }");
  };
  if (spec.blocks() == 0) {
    linear("// K <= R: the whole row is a remnant, searched linearly (Algorithm 9 lines 17-25).", active);
    return;
  }
  if (spec.blocks() == 1) {
    w.line("// One block: Algorithm 10 searches pass 1's table between the remnant's total and the row's.");
    w.line("draw = FIRST_BLOCK_COLUMN + search_block(table, r, target, remnant_total, total);");
  } else {
    w.line("// Algorithm 9 lines 7-12: binary search over the running totals at the ends of the chunks.");
    w.line("int chunk = 0;");
    {
      auto scope = w.scope("");
      w.line("int hi = CHUNKS - 1;");
      auto loop = w.scope("while (chunk < hi)");
      w.line("const int mid = (chunk + hi) >> 1;");
      w.line("if (target < running_total[mid][threadIdx.x]) hi = mid; else chunk = mid + 1;");
    }
    w.line("S low = chunk > 0 ? running_total[chunk - 1][threadIdx.x] : remnant_total;  // total before the block");
    w.line("S high = running_total[chunk][threadIdx.x];  // total at the end of the block");
    if (geometry.chunk_blocks == 1) {
      w.line("int block = chunk;");
    } else {
      w.line("// A chunk holds CHUNK_BLOCKS blocks: rebuild their totals (each lane its own chunk) and find the block");
      w.line("// whose running total first exceeds u'. Should rounding leave u' past every rebuilt total, the chunk's");
      w.line("// last block is searched, up to the chunk's total{}.",
             logits(spec) ? " (the chunk totals were rescaled, the rebuilt ones were not)" : "");
      w.line("const int first_block = chunk * CHUNK_BLOCKS;");
      w.line("const int last_block = first_block + CHUNK_BLOCKS < BLOCKS ? first_block + CHUNK_BLOCKS - 1 : BLOCKS - 1;");
      w.line("int block = last_block;");
      w.line("bool found = false;");
      w.line("S run = low;");
      auto loop = w.scope("for (int t = 0; t < CHUNK_BLOCKS; ++t)", "for each block of the chunk");
      w.line("S a[W];");
      w.line(std::string_view(fmt::format(fmt::runtime(load_chosen), "first_block + t")));
      w.line("build_table(a, r);");
      w.line("const S next = run + a[W - 1];");
      w.line("if (!found && target < next) { found = true; block = first_block + t; low = run; high = next; }");
      w.line("if (!found && first_block + t == last_block - 1) low = next;  // the last block starts here");
      w.line("run = next;");
    }
    w.line("// Algorithm 10 searches the chosen block's table; every lane chose its own block, so the group loads");
    w.line("// a tile whose row k is lane k's block (W weights per row) and builds its table (Algorithm 8 again).");
    auto tile = w.scope("");
    w.line("S a[W];");
    w.line(std::string_view(fmt::format(fmt::runtime(load_chosen), "block")));
    w.line("build_table(a, r);");
    w.line("draw = FIRST_BLOCK_COLUMN + block * W + search_block(a, r, target, low, high);");
  }
  if (spec.linear_remnant())
    linear("// Algorithm 9 lines 17-25: u' below the remnant's total: search the remnant linearly.",
           fmt::format("{} && target < remnant_total", active));
}

std::string uniform(std::string_view attempt) {
  return fmt::format("bfly::uniform_from_bits(bfly::philox_bits(seed, m, bfly::draw_word(d, {}), iteration), S())",
                     attempt);
}

void draw_with_replacement(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  w.line("const S u = {};", uniform("0"));
  w.line("const S target = valid ? bfly::scaled_uniform(u, total) : S(0);  // u' = u * sum, kept below sum");
  w.line("int draw = 0;");
  search(spec, geometry, "valid", w);
  {
    auto guard = w.scope("if (valid)");
    w.line("// Add/subtract rounding can land a search on a zero weight; such a draw is made again sequentially");
    w.line("// (Algorithms 1 and 2), so a zero-weight category is never drawn.");
    w.lines("if (draw < 0 || !(weight_of(draw) > S(0)))\n"
           "  draw = bfly::sequential_draw_excluding(weight_of, K, u, static_cast<const int*>(nullptr), 0);");
    w.line("out[m * num_samples + d] = draw;");
  }
  w.line("if (!valid && m < M) out[m * num_samples + d] = -1;");
}

void draw_without_replacement(const KernelSpec& spec, const LaunchGeometry& geometry, CodeWriter& w) {
  w.line("// Redraw with fresh uniforms (attempt a: counter word d + a * 2^24) until a category this row has not");
  w.line("// drawn comes up: a draw from the weights left, as for sequential draws without replacement.");
  w.line("int chosen = -1;");
  w.line("bool searching = valid && !ran_out;");
  {
    auto attempts = w.scope("for (int attempt = 0; attempt < REDRAWS; ++attempt)");
    w.line("if (!__any_sync(FULL, searching)) break;  // the lanes of a warp search together (shuffles)");
    w.line("const S u = {};", uniform("attempt"));
    w.line("const S target = searching ? bfly::scaled_uniform(u, total) : S(0);");
    w.line("int draw = 0;");
    search(spec, geometry, "searching", w);
    auto guard = w.scope("if (searching)");
    w.lines("if (draw < 0 || !(weight_of(draw) > S(0)))\n"
           "  draw = bfly::sequential_draw_excluding(weight_of, K, u, static_cast<const int*>(nullptr), 0);");
    w.line("if (!bfly::already_drawn(draw, drawn, d)) { chosen = draw; searching = false; }");
  }
  w.line("// Every attempt found a drawn category: draw exactly among the categories left (-1 when none is).");
  w.line("const S u_rest = {};", uniform("REDRAWS"));
  w.line("if (searching) chosen = bfly::sequential_draw_excluding(weight_of, K, u_rest, drawn, d);");
  {
    auto guard = w.scope("if (valid)");
    w.line("if (chosen < 0) ran_out = true;");
    w.line("drawn[d] = chosen;");
    w.line("out[m * num_samples + d] = chosen;");
  }
  w.line("if (!valid && m < M) out[m * num_samples + d] = -1;");
}

}  // namespace

Source generate_sample_draws(const KernelSpec& spec) {
  spec.validate();
  const LaunchGeometry geometry = launch_geometry(spec);
  const std::string name = kernel_name(spec);

  CodeWriter constants, functions, shared, pass1_text, combine, finish, draw;
  emit::constants(spec, geometry, constants);
  if (distinct(spec)) {
    constants.line("constexpr int MAX_DRAWS = {};  // draws per row at most (the categories a lane keeps)",
                   kMaxDistinctDraws);
    constants.line("constexpr int REDRAWS = {};  // attempts of a draw before the exact draw among the rest",
                   emit::kRedraws);
  }
  emit::build_table(spec.W, spec.variant, functions);
  if (spec.blocks() > 0) {
    functions.blank();
    if (logits(spec)) logit_functions(spec, functions); else emit::load_functions(spec, functions);
    functions.blank();
    emit::search_block(spec.W, spec.variant, functions, "S");
  }
  if (spec.blocks() > 1) {
    shared.line("__shared__ S running_total[CHUNKS][THREADS];  // Algorithm 9's last rows: one column per thread");
    if (logits(spec))
      shared.line("__shared__ S running_max[CHUNKS][THREADS];  // the row maximum each running total is summed under");
  }
  pass1(spec, geometry, pass1_text);
  emit::combine_bad(spec.W, combine);
  if (logits(spec)) {
    finish.line("// The online maximum is final: rescale what was summed under a smaller one.");
    if (spec.linear_remnant()) finish.line("remnant_total = bfly::rescale(remnant_total, remnant_max, row_max, scale);");
    if (spec.blocks() > 1) {
      finish.line("for (int c = 0; c < CHUNKS; ++c)");
      finish.line("  running_total[c][threadIdx.x] =");
      finish.line("      bfly::rescale(running_total[c][threadIdx.x], running_max[c][threadIdx.x], row_max, scale);");
    }
  }
  if (distinct(spec)) draw_without_replacement(spec, geometry, draw); else draw_with_replacement(spec, geometry, draw);

  std::string constants_text = constants.text();  // the shared constants speak of weights; these are logits
  if (logits(spec))
    for (std::size_t at; (at = constants_text.find("type of the weights")) != std::string::npos;)
      constants_text.replace(at, 19, "type of the logits");
  std::map<std::string, std::string> values = {
      {"header_comment", sample_draws_header_comment(spec, name)},
      {"constants", without_trailing_newline(constants_text)},
      {"device_functions", without_trailing_newline(functions.text())},
      {"shared_memory", without_trailing_newline(shared.text())},
      {"pass1", without_trailing_newline(pass1_text.text())},
      {"combine_bad", without_trailing_newline(combine.text())},
      {"finish_pass1", without_trailing_newline(finish.text())},
      {"draw", without_trailing_newline(draw.text())},
      {"input", logits(spec) ? "logits" : "weights"},
      {"element_noun", logits(spec) ? "logit (NaN or +inf)" : "weight (negative, NaN, infinite)"},
  };
  const int min_ctas = min_ctas_per_sm(spec);  // __launch_bounds__'s CTAs per SM, when the spec asks for one
  values["min_ctas_per_sm"] = min_ctas == 0 ? "" : fmt::format(", {}", min_ctas);
  values["draws_check"] =
      distinct(spec) ? "if (num_samples > MAX_DRAWS) __trap();  // more distinct draws than a lane keeps" : "";
  values["input_state"] =
      logits(spec)
          ? "const S scale = static_cast<S>(bfly::kLog2e / temperature);  // the weights are 2^((x - max) * scale)\n"
            "// This lane's group of W lanes (for the maximum over a row of a block) and its row's maximum so far.\n"
            "const unsigned int group = W == 32 ? FULL : ((1u << W) - 1u) << (threadIdx.x & 31 & ~(W - 1));\n"
            "S row_max = bfly::minus_infinity();"
          : "";
  values["weight_of"] =
      logits(spec) ? "// Weight k of this lane's row as the passes form it: e^((x - row_max) / T) under the final maximum.\n"
                     "const bfly::RowLogitWeights<T> weight_of{my_row, row_max, scale};"
                   : "const bfly::RowWeights<T> weight_of{my_row};  // weight k of this lane's row, widened to S";
  values["ran_out"] = distinct(spec) ? "bool ran_out = false;  // a draw found no positive weight left"
                                     : "const bool ran_out = false;  // with replacement a valid row never runs out";
  values["drawn_state"] = distinct(spec) ? "int drawn[MAX_DRAWS];  // the categories this row has drawn, in order" : "";

  FamilyKernel kernel;
  kernel.family = &family_of(spec);
  kernel.type = spec.type;
  kernel.kernel_name = name;
  kernel.geometry = geometry;
  kernel.headers = {"bfly/philox.cuh", "bfly/sample_support.cuh", "bfly/draws_support.cuh"};
  Source source = fill_family_skeleton(kernel, std::move(values));
  source.spec = spec;
  return source;
}

}  // namespace bfly::gen
