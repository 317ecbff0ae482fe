// The ahead-of-time header of `bfly-gen generate` (see aot_header.hpp): every part that depends on the kernel's
// arguments (the launch function's parameters, its checks, the usage comment) is derived from the kernel family.
#include "bfly/emit/aot_header.hpp"

#include "emitters.hpp"

#include "bfly/emit/generate.hpp"
#include "bfly/error.hpp"
#include "bfly/spec/kernel_family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace bfly::gen {
namespace {


std::string guard_macro(const std::string& kernel_name) {
  std::string guard;
  for (const char c : kernel_name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return guard + "_CUH";
}

// "const float* weights, long long M, ...", wrapped at 116 columns, continuation lines indented by 4.
std::string launch_parameters(const KernelFamily& family, ElementType type) {
  std::string out = "    ";
  std::size_t line_start = 0;
  for (const KernelArg& arg : family.args) {
    const std::string parameter = c_type(arg.type, type) + " " + std::string(arg.name) + ",";
    if (out.size() > 4 && out.size() - line_start + 1 + parameter.size() > 116) {
      out += "\n    ";
      line_start = out.size() - 4;
    } else if (out.size() > 4) {
      out += " ";
    }
    out += parameter;
  }
  return out;
}

std::string argument_names(const KernelFamily& family) {
  std::string out;
  for (const KernelArg& arg : family.args) out += (out.empty() ? "" : ", ") + std::string(arg.name);
  return out;
}

// Word-wraps `text` into comment lines of at most 116 columns: the first after `first`, the rest after `rest`.
std::string comment_block(std::string_view first, std::string_view rest, std::string_view text) {
  std::string out, line(first);
  bool empty = true;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!empty && line.size() + 1 + word.size() > 116) {
      out += line + "\n";
      line = std::string(rest);
      empty = true;
    }
    if (!empty) line += ' ';
    line += word;
    empty = false;
    start = end + 1;
  }
  return out + line + "\n";
}

// The checks the roles imply: a negative item count or a row stride below K is cudaErrorInvalidValue whatever the
// item count (as the runtime checks it); a null input, output or scratch array only when there is work.
// A family that loads rows in pairs also needs, for K even, an even row stride and its input aligned to two elements.
std::string shape_condition(const KernelFamily& family, int K) {
  std::string condition;
  for (const KernelArg& arg : family.args) {
    std::string part;
    if (arg.role == ArgRole::items) part = fmt::format("{} < 0", arg.name);
    if (arg.role == ArgRole::row_stride)
      part = rows_on_pairs_required(family, K) ? fmt::format("{0} < {1} || {0} % 2 != 0", arg.name, K)
                                               : fmt::format("{} < {}", arg.name, K);
    if (arg.role == ArgRole::input && rows_on_pairs_required(family, K))
      part = fmt::format("reinterpret_cast<unsigned long long>({0}) % (2 * sizeof(*{0})) != 0", arg.name);
    if (!part.empty()) condition += (condition.empty() ? "" : " || ") + part;
  }
  return condition;
}

// "if (condition) return cudaErrorInvalidValue;", the return on a line of its own after a long condition.
std::string invalid_if(const std::string& condition) {
  return condition.size() <= 80 ? fmt::format("  if ({}) return cudaErrorInvalidValue;\n", condition)
                                : fmt::format("  if ({})\n    return cudaErrorInvalidValue;\n", condition);
}

std::string null_checks(const KernelFamily& family) {
  std::string condition;
  for (const KernelArg& arg : family.args)
    if (arg.role == ArgRole::input || arg.role == ArgRole::output || arg.role == ArgRole::scratch)
      condition += (condition.empty() ? "" : " || ") + fmt::format("{} == nullptr", arg.name);
  if (condition.empty()) return {};
  return invalid_if(condition);
}

std::string usage_comment(const Source& source, const KernelFamily& family, std::string_view regenerate) {
  const LaunchGeometry& g = source.geometry;
  const std::string_view items = family.arg(ArgRole::items).name;
  std::string text = fmt::format(
      "// {name}: ahead-of-time header written by bfly-gen (bfly {version}).\n"
      "// Do not edit; regenerate with\n"
      "//   {regenerate}\n"
      "//\n"
      "{about}"
      "// Use: include this file in one .cu file of an nvcc build (the kernel is an extern \"C\" symbol, so a second\n"
      "// translation unit that includes it would define it again), then call\n"
      "//\n"
      "//   cudaError_t status = {name}_launch(\n"
      "//       {arguments}, stream);\n"
      "//\n",
      fmt::arg("name", source.kernel_name), fmt::arg("regenerate", regenerate),
      fmt::arg("version", bfly_version()),
      fmt::arg("about", comment_block("// ", "// ",
                                      fmt::format("The {} kernel {} ({}).", family.name, family.summary,
                                                  describe(source)))),
      fmt::arg("arguments", argument_names(family)));
  std::size_t width = 0;
  for (const KernelArg& arg : family.args) width = std::max(width, arg.name.size());
  for (const KernelArg& arg : family.args)
    text += comment_block(fmt::format("//   {:<{}}  ", arg.name, width), fmt::format("//   {:<{}}  ", "", width),
                          arg.doc);
  text += "//\n";
  text += comment_block(
      "// ", "// ",
      fmt::format("The launch function returns cudaErrorInvalidValue for bad arguments, cudaSuccess without launching "
                  "when {items} == 0, and otherwise the status of the launch: {threads} threads per CTA, {grid}. "
                  "It does not synchronize. A launch of the kernel "
                  "by other means must keep this shape: the kernel traps (__trap) when its block size differs or its "
                  "grid is too small, rather than leave {item}s unwritten. The function is defined only under nvcc "
                  "(__CUDACC__): compiled as C++ after bfly/lockstep.hpp, this file runs the same kernel on the CPU.",
                  fmt::arg("items", items), fmt::arg("threads", g.threads_per_cta),
                  fmt::arg("grid", g.ctas_per_row > 0
                                       ? fmt::format("{} * {} CTAs ({} per {})", items, g.ctas_per_row, g.ctas_per_row,
                                                     family.item)
                                       : fmt::format("{} {}s per CTA, ceil({} / {}) CTAs", g.rows_per_cta, family.item,
                                                     items, g.rows_per_cta)),
                  fmt::arg("item", family.item)));
  return text;
}

std::string launch_function(const Source& source, const KernelFamily& family, int row_stride_minimum) {
  const LaunchGeometry& g = source.geometry;
  const std::string_view items = family.arg(ArgRole::items).name;
  return fmt::format(
      "#ifdef __CUDACC__\n"
      "// Launches {name} on `stream` (see the comment at the top of this file).\n"
      "inline cudaError_t {name}_launch(\n"
      "{parameters}\n"
      "    cudaStream_t stream = 0) {{\n"
      "  constexpr long long kThreadsPerCta = {threads};\n"
      "{per_cta_line}"
      "  constexpr long long kMaxGrid = 2147483647;  // gridDim.x limit\n"
      "{bad_shape}"
      "  if ({items} == 0) return cudaSuccess;\n"
      "{null_checks}"
      "  const long long grid = {grid};\n"
      "  if (grid > kMaxGrid) return cudaErrorInvalidValue;\n"
      "  const dim3 grid_dim(static_cast<unsigned int>(grid)), block_dim(static_cast<unsigned int>(kThreadsPerCta));\n"
      "  {name}<<<grid_dim, block_dim, 0, stream>>>(\n"
      "      {arguments});\n"
      "  return cudaGetLastError();\n"
      "}}\n"
      "#endif  // __CUDACC__\n",
      fmt::arg("name", source.kernel_name), fmt::arg("parameters", launch_parameters(family, source.type)),
      fmt::arg("threads", g.threads_per_cta),
      fmt::arg("per_cta_line",
               g.ctas_per_row > 0
                   ? fmt::format("  constexpr long long kCtasPerItem = {};  // CTAs that share one {}\n", g.ctas_per_row,
                                 family.item)
                   : fmt::format("  constexpr long long kItemsPerCta = {};  // {}s per CTA\n", g.rows_per_cta,
                                 family.item)),
      fmt::arg("grid", g.ctas_per_row > 0 ? fmt::format("{} * kCtasPerItem", items)
                                          : fmt::format("({0} + kItemsPerCta - 1) / kItemsPerCta", items)),
      fmt::arg("bad_shape", invalid_if(shape_condition(family, row_stride_minimum))), fmt::arg("items", items),
      fmt::arg("null_checks", null_checks(family)), fmt::arg("arguments", argument_names(family)));
}

}  // namespace

std::string aot_header(const Source& source, const KernelFamily& family, std::string_view regenerate,
                       int row_stride_minimum) {
  const std::string guard = guard_macro(source.kernel_name);
  // The SPDX line comes first (only here: generate()'s kernel text, checked by tests/golden, does not carry it).
  return fmt::format("// SPDX-License-Identifier: {}\n{}\n#ifndef {}\n#define {}\n\n{}\n{}\n#endif  // {}\n",
                     kAotHeaderLicense, usage_comment(source, family, regenerate),
                     guard, guard, inline_headers(source), launch_function(source, family, row_stride_minimum), guard);
}

std::string aot_header(const KernelSpec& spec) {
  return aot_header(generate(spec), family_of(spec),
                    fmt::format("bfly-gen generate --operation {} --K {} --W {} --remnant {} --type {} "
                                "--variant {}{}{} -o FILE",
                                name_of(spec.operation), spec.K, spec.W, spec.R, name_of(spec.type),
                                name_of(spec.variant),
                                spec.input == InputKind::weights && spec.draws == Draws::one
                                    ? std::string()
                                    : fmt::format(" --input {} --draws {}", name_of(spec.input), name_of(spec.draws)),
                                emit::spec_switch_flags(spec)),
                    spec.K);
}

}  // namespace bfly::gen
