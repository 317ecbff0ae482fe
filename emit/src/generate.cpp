// generate(): composes the emitters into the sample-kernel skeleton; also the table kernel and inline_headers.
#include "bfly/emit/generate.hpp"

#include "bfly/error.hpp"
#include "bfly/emit/code_writer.hpp"
#include "bfly/emit/embedded_templates.hpp"
#include "emitters.hpp"
#include "template_fill.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#ifndef BFLY_VERSION
#error "BFLY_VERSION must be defined by the build"
#endif

namespace bfly::gen {
namespace {

std::string header_comment(const KernelSpec& spec, const std::string& name) {
  CodeWriter w;
  emit::header_preamble(spec, name, w);
  const KernelFamily& family = family_of(spec);
  const std::string about = fmt::format(
      "The {} kernel {}, with the butterfly-patterned partial sums of Steele and Tristan (\"Using Butterfly-Patterned "
      "Partial Sums to Draw from Discrete Distributions\", ACM TOPC 2019): {}, {} variant ({}).",
      family.name, family.summary, emit::operation_emitters(spec.operation).algorithms, name_of(spec.variant),
      spec.variant == Variant::addsub ? "Figure 8" : "Figure 4");
  emit::comment_paragraph(about, w);
  w.line("// Pass 1 reads every weight once and keeps the running totals of the blocks in shared memory; pass 2");
  w.line("// finds the block (Algorithm 9), reloads it and searches its table (Algorithm 10).");
  std::string text = w.text();
  text.pop_back();  // the skeleton line ends the comment
  return text;
}

}  // namespace

std::string_view bfly_version() { return BFLY_VERSION; }

std::string describe(const Source& source) {
  return source.description.empty() ? describe(source.spec) : source.description;
}

Source generate(const KernelSpec& spec) {
  spec.validate();
  if (splits_rows(spec.operation)) return emit::generate_sample_split(spec);
  if (spec.operation == Operation::sample_small) return emit::generate_sample_small(spec);
  if (spec.input != InputKind::weights || spec.draws != Draws::one) return generate_sample_draws(spec);
  const LaunchGeometry geometry = launch_geometry(spec);
  const std::string name = kernel_name(spec);

  const emit::OperationEmitters& operation = emit::operation_emitters(spec.operation);
  const KernelFamily& family = family_of(spec);
  CodeWriter constants, functions, shared, prologue, pass1, pass2;
  emit::constants(spec, geometry, constants);
  emit::build_table(spec.W, spec.variant, functions);
  if (spec.blocks() > 0) {
    functions.blank();
    operation.functions(spec, functions);
    functions.blank();
    emit::search_block(spec.W, spec.variant, functions, emit::sum_type(spec), spec.weights_per_column() == 2);
  }
  emit::shared_memory(spec, shared);
  operation.prologue(spec, geometry, prologue);
  emit::pass1(spec, geometry, pass1);
  emit::pass2(spec, geometry, pass2);

  std::map<std::string, std::string> values = {
      {"header_comment", header_comment(spec, name)},
      {"constants", without_trailing_newline(constants.text())},
      {"device_functions", without_trailing_newline(functions.text())},
      {"shared_memory", without_trailing_newline(shared.text())},
      {std::string(operation.prologue_slot), without_trailing_newline(prologue.text())},
      {"pass1", without_trailing_newline(pass1.text())},
      {"pass2", without_trailing_newline(pass2.text())},
  };
  if (spec.operation == Operation::sample || spec.operation == Operation::sample_pairs) {
    values["S"] = std::string(emit::sum_type(spec));
    // A kernel that copied its warp's rows (tightly packed) checks the drawn weight in the copy (emit::own_weight).
    std::string drawn_weight = emit::widened(spec, emit::own_weight(spec, "draw"));
    // A kernel that keeps its chosen tile (16-bit pairs) has the drawn pair in `chosen`: the drawn weight of it.
    if (stashes_chosen_tile(spec))  // odd K: weight `draw` is the second of its column where draw + phase is odd
      drawn_weight = emit::odd_row_pairs(spec)
                         ? "((draw + my_phase) & 1 ? bfly::pair_second(chosen) : bfly::pair_first(chosen))"
                         : "(draw & 1 ? bfly::pair_second(chosen) : bfly::pair_first(chosen))";
    // Over pairs at odd K the pick can land one past the row (a weight outside it): not read, drawn again.
    if (emit::odd_row_pairs(spec))
      drawn_weight = fmt::format("(draw < K ? {} : {}(0))", drawn_weight, emit::sum_type(spec));
    // The output: a row whose search landed on a zero weight through add/subtract rounding is drawn again
    // sequentially (Algorithms 1 and 2), so a zero-weight category is never drawn; rows of kWarpRedrawFromK weights
    // or more by the whole warp (redraws_by_warp, bfly::sequential_draw_by_warp), shorter rows by their own lane.
    const std::string& S = values["S"];
    if (redraws_by_warp(spec)) {
      values["output"] = fmt::format(
          "// Add/subtract rounding can land a search on a zero weight; such a row is drawn again sequentially "
          "(Algorithms 1\n"
          "// and 2, the whole warp reading it), so a zero-weight category is never drawn.\n"
          "const bool again = valid && (draw < 0 || !({} > {}(0)));\n"
          "draw = bfly::sequential_draw_by_warp(again, my_row, K, u, draw);\n"
          "if (valid) {{\n"
          "  out[m] = draw;\n",
          drawn_weight, S);
    } else {
      values["output"] = fmt::format(
          "if (valid) {{\n"
          "  // Add/subtract rounding can land a search on a zero weight; such a row is drawn again sequentially\n"
          "  // (Algorithms 1 and 2), so a zero-weight category is never drawn.\n"
          "  if (draw < 0 || !({} > {}(0))) draw = bfly::sequential_draw(my_row, K, u);\n"
          "  out[m] = draw;\n",
          drawn_weight, S);
    }
    values["output"] += "} else if (m < M) {\n  out[m] = -1;\n  bfly::report_invalid_row(invalid_rows, m);\n}";
    // __launch_bounds__'s second argument, CTAs per SM, when the spec asks for an occupancy.
    const int min_ctas = min_ctas_per_sm(spec);
    values["min_ctas_per_sm"] = min_ctas == 0 ? "" : fmt::format(", {}", min_ctas);
  }
  FamilyKernel kernel;
  kernel.family = &family;
  kernel.type = spec.type;
  kernel.kernel_name = name;
  kernel.geometry = geometry;
  kernel.items_per_cta = item_per_group(spec.operation) ? "GROUPS" : "THREADS";
  Source source = fill_family_skeleton(kernel, std::move(values));
  source.spec = spec;
  return source;
}

Source fill_family_skeleton(const FamilyKernel& kernel, std::map<std::string, std::string> values) {
  const KernelFamily& family = *kernel.family;
  emit::interface_values(family, kernel.type, kernel.kernel_name, kernel.items_per_cta, values);
  values["detail_namespace"] = kernel.kernel_name + "_detail";
  values["threads_per_cta"] = std::to_string(kernel.geometry.threads_per_cta);
  Source source;
  source.kernel_name = kernel.kernel_name;
  source.type = kernel.type;
  source.family = family.name;
  source.geometry = kernel.geometry;
  const std::string_view skeleton =
      kernel.skeleton_text.empty() ? template_source(family.skeleton) : kernel.skeleton_text;
  source.text = fill_template(family.skeleton, skeleton, values);
  source.headers = kernel.headers;
  return source;
}

Source lda_iteration_source(ElementType type) {
  Source source;
  source.kernel_name = fmt::format("bfly_lda_iteration_{}", name_of(type));
  source.type = type;
  source.description = fmt::format("the LDA iteration kernels for {}", name_of(type));
  CodeWriter w;
  w.line("// {}: the LDA iteration kernels of bfly/lda_iteration.cuh for {} (generated by bfly {}; do not edit).",
         source.kernel_name, name_of(type), bfly_version());
  w.line("#include \"bfly/lda_iteration.cuh\"");
  for (const IterationKernel& kernel : lda_iteration_kernels()) {
    w.blank();
    w.line("// {}.", kernel.family.summary);
    w.line("extern \"C\" __global__ void {}({}) {{", kernel.name(type), parameter_list(kernel.family, type, false));
    w.line("  {};", fmt::format(fmt::runtime(std::string(kernel.call)), fmt::arg("T", cuda_type(type))));
    w.line("}");
  }
  source.text = w.text();
  source.headers = {"bfly/lda_iteration.cuh", "bfly/philox.cuh"};
  return source;
}

std::string inline_headers(const Source& source) {
  std::string out;
  std::size_t start = 0;
  const std::string& text = source.text;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    const auto included = std::find_if(source.headers.begin(), source.headers.end(), [&](const std::string& h) {
      return line == "#include \"" + h + "\"";
    });
    if (included == source.headers.end()) {
      out.append(line);
      out.push_back('\n');
      continue;
    }
    out += fmt::format("// ---- begin {} (bfly template) ----\n", *included);
    out += template_source(*included);
    if (out.back() != '\n') out.push_back('\n');
    out += fmt::format("// ---- end {} ----\n", *included);
  }
  return out;
}

std::string generate_table_kernel(int W, Variant variant, std::string* kernel_name_out) {
  KernelSpec probe;
  probe.W = W;
  probe.R = 0;
  probe.variant = variant;
  probe.validate();
  const std::string name = fmt::format("bfly_table_w{}_{}", W, name_of(variant));
  if (kernel_name_out != nullptr) *kernel_name_out = name;

  CodeWriter w;
  w.line("// {}: the butterfly table build alone, and pass 1's block totals, on symbolic entries (generated by bfly {}).",
         name, bfly_version());
  w.line("#include \"bfly/symbolic.hpp\"");
  w.blank();
  {
    auto ns = w.scope(fmt::format("namespace {}_detail", name), "namespace");
    w.line("constexpr int W = {};", W);
    w.line("constexpr unsigned int FULL = 0xffffffffu;");
    emit::build_table(W, variant, w);
    w.blank();
    emit::block_total(W, w, permuted_rows(W));
    w.blank();
    auto in_order = w.scope("namespace in_row_order", "namespace");
    emit::block_total(W, w, 1);
  }
  w.blank();
  w.line("// One CTA of W threads. table[i * W + j] receives row i, lane j of the built table; totals[j], when given,");
  w.line("// lane j's block total as pass 1 forms it (block_total, slot s of lane j holding row s ^ (j & {})), and",
         permuted_rows(W) - 1);
  w.line("// totals[W + j] the same in row order (in_row_order::block_total, slot s holding row s).");
  {
    auto kernel = w.scope(fmt::format("extern \"C\" __global__ void {}(bfly::Sym* table, bfly::Sym* totals)", name));
    w.line("using namespace {}_detail;", name);
    w.line("const int r = static_cast<int>(threadIdx.x) & (W - 1);");
    w.line("bfly::Sym a[W];");
    w.line("for (int k = 0; k < W; ++k) a[k] = bfly::Sym::element(k, r);  // weight r of lane k's block");
    w.line("build_table(a, r);");
    w.line("for (int i = 0; i < W; ++i) table[i * W + r] = a[i];");
    auto totals = w.scope("if (totals != nullptr)");
    w.line("bfly::Sym b[W];");
    w.line("for (int s = 0; s < W; ++s) b[s] = bfly::Sym::element(s ^ (r & {}), r);", permuted_rows(W) - 1);
    w.line("totals[r] = block_total(b, r);");
    w.line("for (int s = 0; s < W; ++s) b[s] = bfly::Sym::element(s, r);");
    w.line("totals[W + r] = in_row_order::block_total(b, r);");
  }
  return w.text();
}

}  // namespace bfly::gen
