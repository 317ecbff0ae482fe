// generate_sample_small(): the sample_small kernel for short rows (docs/DESIGN.md section 12): a group of W lanes
// stages W * ROWS_PER_LANE rows with contiguous loads, and each lane draws ROWS_PER_LANE of them.
#include "bfly/emit/code_writer.hpp"
#include "bfly/emit/generate.hpp"
#include "emitters.hpp"
#include "template_fill.hpp"

#include <fmt/format.h>

#include <map>
#include <string>

namespace bfly::gen::emit {
namespace {

void small_constants(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  if (is_narrow(spec.type)) {
    w.line("typedef {} T;  // element type of the weights: storage only, each load widens it to S", cuda_type(spec.type));
    w.line("typedef {} S;  // accumulator: the staged weights, the running sums, the target and the uniform",
           cuda_type(accumulator_of(spec.type)));
  } else {
    w.line("typedef {} T;  // element type of the weights and of the running sums", cuda_type(spec.type));
    w.line("typedef T S;  // accumulator: the element type itself");
  }
  const int rows_per_lane = g.rows_per_cta / g.threads_per_cta;
  w.line("constexpr int W = {};  // lanes per group: a group stages its rows together", spec.W);
  w.line("constexpr int K = {};  // categories per row", spec.K);
  w.line("constexpr int ROWS_PER_LANE = {};  // rows each lane draws: ceil(16 / K), so a lane loads >= 16 weights",
         rows_per_lane);
  w.line("constexpr int GROUP_ROWS = W * ROWS_PER_LANE;  // consecutive rows a group stages and draws");
  w.line("constexpr int LOADS_PER_LANE = ROWS_PER_LANE * K;  // the group's GROUP_ROWS * K weights over W lanes");
  w.line("constexpr int PITCH = {};  // shared-memory stride of a staged row: K rounded up to odd", spec.K | 1);
  w.line("constexpr int THREADS = {};  // threads per CTA", g.threads_per_cta);
  w.line("constexpr int GROUPS = THREADS / W;  // groups per CTA");
  w.line("constexpr int ROWS_PER_CTA = GROUPS * GROUP_ROWS;  // {} rows", g.rows_per_cta);
}

void small_stage(const KernelSpec& spec, const LaunchGeometry& g, CodeWriter& w) {
  const int loads = g.rows_per_cta / g.threads_per_cta * spec.K;
  w.line("// Load i of lane r is element e = i * W + r of the group's rows: row e / K, column e % K.");
  for (int i = 0; i < loads; ++i) {
    w.line("{{ const int e = {} * W + r, k = e / K, c = e - k * K; const long long m = group_first_row + k;", i);
    w.line("  rows[k * PITCH + c] = m < M ? {} : S(0); }}", widened(spec, "weights[m * ld + c]"));
  }
}

std::string sample_small_header_comment(const KernelSpec& spec, const std::string& name) {
  CodeWriter w;
  header_preamble(spec, name, w);
  w.line("// The sample_small kernel: it {}, for short rows: the transposed access of Steele and", family_of(spec).summary);
  w.line("// Tristan (\"Using Butterfly-Patterned Partial Sums to Draw from Discrete Distributions\", ACM TOPC 2019)");
  w.line("// stages several rows per lane through shared memory, and Algorithms 1 and 2 draw each row (no table: R = 0,");
  w.line("// and the variant is not used).");
  std::string text = w.text();
  text.pop_back();  // the skeleton line ends the comment
  return text;
}

}  // namespace

Source generate_sample_small(const KernelSpec& spec) {
  const LaunchGeometry geometry = launch_geometry(spec);
  const std::string name = kernel_name(spec);
  CodeWriter constants, stage;
  small_constants(spec, geometry, constants);
  small_stage(spec, geometry, stage);
  std::map<std::string, std::string> values = {
      {"header_comment", sample_small_header_comment(spec, name)},
      {"constants", without_trailing_newline(constants.text())},
      {"stage", without_trailing_newline(stage.text())},
  };
  FamilyKernel kernel;
  kernel.family = &family_of(spec);
  kernel.type = spec.type;
  kernel.kernel_name = name;
  kernel.geometry = geometry;
  kernel.items_per_cta = "ROWS_PER_CTA";
  Source source = fill_family_skeleton(kernel, std::move(values));
  source.spec = spec;
  return source;
}

}  // namespace bfly::gen::emit
