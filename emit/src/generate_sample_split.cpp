// generate_sample_split(): the sample_split kernel, one row split over several CTAs with a two-level table
// (docs/DESIGN.md section 12). The table build and the block search are the shared emitters'; the constants, the
// tile loads and level 1's pass are this file's, the rest is templates/bfly/sample_split_kernel.skeleton.cuh.
#include "bfly/emit/code_writer.hpp"
#include "bfly/emit/generate.hpp"
#include "emitters.hpp"
#include "template_fill.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace bfly::gen::emit {
namespace {

// Whether the loads of tile `tile` need the guard column < K: only when the last tile is padded, or a CTA's slice
// reaches past the last tile.
bool tiles_need_guard(const KernelSpec& spec, const LaunchGeometry& g) {
  const int tile_size = spec.W * spec.W;
  const int tiles = g.parts_per_row / spec.W;
  const int tiles_per_cta = g.threads_per_cta / spec.W * g.blocks_in_flight;
  return spec.K % tile_size != 0 || tiles % tiles_per_cta != 0;
}

void split_constants(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  if (is_narrow(spec.type)) {
    w.line("typedef {} T;  // element type of the weights: storage only, each load widens it to S", cuda_type(spec.type));
    w.line("typedef {} S;  // accumulator: the part totals, the tables, the target and the uniform",
           cuda_type(accumulator_of(spec.type)));
  } else {
    w.line("typedef {} T;  // element type of the weights and of the running sums", cuda_type(spec.type));
    w.line("typedef T S;  // accumulator: the element type itself");
  }
  const int tiles = g.parts_per_row / spec.W;
  w.line("constexpr int W = {};  // lanes per group, parts per tile and weights per part", spec.W);
  w.line("constexpr int LOG2_W = {};  // levels of the butterfly build and of the in-block search", spec.log2_w());
  w.line("constexpr int K = {};  // categories per row", spec.K);
  w.line("constexpr int TILES = {};  // W x W tiles per row{}", tiles,
         spec.K % (spec.W * spec.W) ? " (the last padded with zero weights past K)" : "");
  w.line("constexpr int PARTS = {};  // parts of W weights per row: level 1 of the table", g.parts_per_row);
  w.line("constexpr int THREADS = {};  // threads per CTA", g.threads_per_cta);
  w.line("constexpr int GROUPS = {};  // groups of W lanes per CTA", g.threads_per_cta / spec.W);
  w.line("constexpr int TILES_PER_GROUP = {};  // tiles a group loads before it builds the first of them",
         g.blocks_in_flight);
  w.line("constexpr int TILES_PER_CTA = GROUPS * TILES_PER_GROUP;  // a CTA's slice of the row");
  w.line("constexpr int CTAS_PER_ROW = {};  // ceil(TILES / TILES_PER_CTA): CTAs that share one row", g.ctas_per_row);
  w.line("constexpr int CHUNK_PARTS = {};  // part totals one thread of the last CTA sums in level 1's search",
         (g.parts_per_row + g.threads_per_cta - 1) / g.threads_per_cta);
  w.line("constexpr unsigned int FULL = 0xffffffffu;  // every lane of the warp takes part in every shuffle");
}

void split_functions(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const bool guard = tiles_need_guard(spec, g);
  const std::string_view S = sum_type(spec);
  build_table(spec.W, spec.variant, w);
  w.blank();
  w.line("// Algorithm 8 lines 13-17, transposed access: part k of tile `tile` is the W weights from column");
  w.line("// tile * W * W + k * W; on step k lane r loads weight r of part k, so the W lanes read W consecutive weights");
  w.line("// and the tile is W * W consecutive weights. Afterwards a[k] of lane r is weight r of part k.{}",
         guard ? " Weights past K read as 0." : "");
  {
    auto body = w.scope(fmt::format(
        "__device__ __forceinline__ void load_tile({} (&a)[W], const T* row, int tile, int r)", S));
    w.line("const int c = tile * (W * W) + r;");
    for (int k = 0; k < spec.W; ++k) {
      if (guard)
        w.line("a[{0}] = c + {0} * W < K ? {1} : {2}(0);", k, widened(spec, fmt::format("row[c + {} * W]", k)), S);
      else
        w.line("a[{0}] = {1};", k, widened(spec, fmt::format("row[c + {} * W]", k)));
    }
  }
  w.blank();
  w.line("// Every weight is checked once, in level 1: a negative, NaN or infinite weight makes the row invalid.");
  {
    auto body = w.scope(fmt::format("__device__ __forceinline__ void check_tile(const {} (&a)[W], bool& bad)", S));
    for (int k = 0; k < spec.W; ++k) w.line("bad |= !bfly::valid_weight(a[{}]);", k);
  }
  w.blank();
  search_block(spec.W, spec.variant, w, S);
}

void split_pass1(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const bool guard = tiles_need_guard(spec, g);
  const int in_flight = g.blocks_in_flight;
  w.line("// Group g of slice s takes the TILES_PER_GROUP tiles from s * TILES_PER_CTA + g * TILES_PER_GROUP; their");
  w.line("// loads are all issued before the first table is built, so TILES_PER_GROUP * W weights per lane are in flight.");
  w.line("const int first_tile = slice * TILES_PER_CTA + group * TILES_PER_GROUP;");
  std::string tiles;
  for (int u = 0; u < in_flight; ++u) tiles += fmt::format("{}a{}[W]", u ? ", " : "", u);
  w.line("{} {};", sum_type(spec), tiles);
  for (int u = 0; u < in_flight; ++u) w.line("load_tile(a{0}, row, first_tile + {0}, r);", u);
  for (int u = 0; u < in_flight; ++u) {
    w.line("check_tile(a{}, bad);", u);
    w.line("build_table(a{}, r);  // Algorithm 8 lines 18-30", u);
    const std::string store =
        fmt::format("row_part_totals[(first_tile + {0}) * W + r] = a{0}[W - 1];  // row W-1: the total of part r", u);
    if (guard)
      w.line("if (first_tile + {} < TILES) {}", u, store);
    else
      w.line("{}", store);
  }
}

std::string header_comment(const KernelSpec& spec, const std::string& name) {
  CodeWriter w;
  header_preamble(spec, name, w);
  w.line("// The sample_split kernel: it draws one category per row of M x K weights, each row split over several");
  w.line("// CTAs, with the butterfly-patterned partial sums of Steele and Tristan (\"Using Butterfly-Patterned Partial");
  w.line("// Sums to Draw from Discrete Distributions\", ACM TOPC 2019): the tiles of Algorithm 8, a two-level search");
  w.line("// (Algorithm 9 over the part totals, then Algorithm 10 in the chosen part), {} variant ({}).",
         name_of(spec.variant), spec.variant == Variant::addsub ? "Figure 8" : "Figure 4");
  w.line("// Level 1 reads every weight once and writes one total per part of W weights; the last CTA of a row");
  w.line("// searches the part totals, reloads the chosen part's tile and searches its table.");
  std::string text = w.text();
  text.pop_back();  // the skeleton line ends the comment
  return text;
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
      {"S", std::string(sum_type(spec))},
      {"drawn_weight", widened(spec, "row[draw]")},
      {"launch_contract",
       fmt::format("// Launch contract (docs/DESIGN.md section 9): blockDim = (THREADS, 1, 1), a 1-D grid of at least\n"
                   "// {0} * CTAS_PER_ROW CTAs, no dynamic shared memory. Any other launch traps (__trap) rather than\n"
                   "// leave {1}s unwritten.",
                   items, family.item)},
      {"launch_check",
       fmt::format("bfly::require_split_launch(THREADS, CTAS_PER_ROW, {});  // the launch contract above", items)},
  };
  FamilyKernel kernel;
  kernel.family = &family;
  kernel.type = spec.type;
  kernel.kernel_name = name;
  kernel.geometry = geometry;
  kernel.headers = {"bfly/philox.cuh", "bfly/sample_support.cuh", "bfly/sample_split_support.cuh"};
  Source source = fill_family_skeleton(kernel, std::move(values));
  source.spec = spec;
  return source;
}

}  // namespace bfly::gen::emit
