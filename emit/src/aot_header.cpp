// The ahead-of-time header of `bfly-gen generate` (see aot_header.hpp).
#include "bfly/emit/aot_header.hpp"

#include "bfly/error.hpp"
#include "bfly/emit/generate.hpp"

#include <fmt/format.h>

#include <cctype>

namespace bfly::cli {
namespace {

std::string guard_macro(const std::string& kernel_name) {
  std::string guard;
  for (const char c : kernel_name) guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return guard + "_CUH";
}

// What differs between operations: the launch function's parameters, the rows its grid covers, its checks,
// and how the usage comment describes the arguments. `T` is the CUDA element type.
struct LaunchAbi {
  std::string parameters;  // of the launch function, before `cudaStream_t stream`
  std::string arguments;   // passed on to the kernel
  std::string rows;        // one thread per: M rows, or D documents
  std::string bad_shape;   // condition for cudaErrorInvalidValue, checked even when rows == 0 (as the Sampler does)
  std::string checks;      // lines returning cudaErrorInvalidValue, once rows > 0
  std::string usage;       // the argument list and its explanation, for the comment at the top
};

LaunchAbi launch_abi(const gen::KernelSpec& spec) {
  const std::string_view T = gen::cuda_type(spec.type);
  if (gen::is_lda(spec.operation)) {
    return LaunchAbi{
        fmt::format("const {0}* theta, long long ld_theta, const {0}* phi, long long ld_phi,\n"
                    "    const long long* doc_offsets, const int* words, int* z, long long D,\n"
                    "    unsigned long long* invalid_tokens, unsigned long long seed, unsigned int iteration",
                    T),
        "theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, invalid_tokens, seed, iteration",
        "D",
        fmt::format("D < 0 || ld_theta < {0} || ld_phi < {0}", spec.K),
        "  if (theta == nullptr || phi == nullptr || doc_offsets == nullptr || words == nullptr || z == nullptr)\n"
        "    return cudaErrorInvalidValue;\n",
        fmt::format(
            "//   cudaError_t status = {name}_launch(\n"
            "//       theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, invalid_tokens, seed, iteration, stream);\n"
            "//\n"
            "//   theta         device array, D rows of K = {K} {T} topic weights per document (row stride ld_theta)\n"
            "//   phi           device array, one row of K {T} weights per word (row stride ld_phi)\n"
            "//   doc_offsets   D + 1 offsets: the tokens of document m are doc_offsets[m] .. doc_offsets[m + 1] - 1\n"
            "//   words, z      the word of each token, and the topic drawn for it (-1 when theta[doc] * phi[word] has\n"
            "//                 no positive total or an unusable weight)\n"
            "//   invalid_tokens  nullptr, or two device counters preset to {{0, ~0ull}}: the kernel adds the number\n"
            "//                 of invalid tokens to [0] and lowers [1] to the first one\n"
            "//   seed, iteration  the uniform of token t comes from Philox4x32-10 keyed by seed, counter (t, iteration)\n",
            fmt::arg("name", gen::kernel_name(spec)), fmt::arg("K", spec.K), fmt::arg("T", T))};
  }
  return LaunchAbi{
      fmt::format("const {}* weights, long long M, long long ld, int* out,\n"
                  "    unsigned long long* invalid_rows, unsigned long long seed, unsigned int iteration",
                  T),
      "weights, M, ld, out, invalid_rows, seed, iteration",
      "M",
      fmt::format("M < 0 || ld < {}", spec.K),
      "  if (weights == nullptr || out == nullptr) return cudaErrorInvalidValue;\n",
      fmt::format(
          "//   cudaError_t status = {name}_launch(\n"
          "//       weights, M, ld, out, invalid_rows, seed, iteration, stream);\n"
          "//\n"
          "//   weights       device array, M rows of K = {K} {T} weights, row r at weights + r * ld (ld >= K)\n"
          "//   out           device array of M ints: the category drawn for each row, or -1 for an invalid row (a\n"
          "//                 negative, NaN or infinite weight, or a zero total)\n"
          "//   invalid_rows  nullptr, or two device counters preset to {{0, ~0ull}}: the kernel adds the number of\n"
          "//                 invalid rows to [0] and lowers [1] to the first invalid row\n"
          "//   seed, iteration  the uniform of row r comes from Philox4x32-10 keyed by seed, counter (r, iteration):\n"
          "//                 the same arguments give the same draws, whatever the launch configuration\n",
          fmt::arg("name", gen::kernel_name(spec)), fmt::arg("K", spec.K), fmt::arg("T", T))};
}

std::string usage_comment(const gen::KernelSpec& spec, const LaunchAbi& abi, const gen::LaunchGeometry& g) {
  return fmt::format(
      "// {name}: ahead-of-time header written by bfly-gen (bfly {version}).\n"
      "// Do not edit; regenerate with\n"
      "//   bfly-gen generate --operation {operation} --K {K} --W {W} --remnant {R} --type {type} --variant {variant} "
      "-o FILE\n"
      "//\n"
      "// Use: include this file in one .cu file of an nvcc build (the kernel is an extern \"C\" symbol, so a second\n"
      "// translation unit that includes it would define it again), then call\n"
      "//\n"
      "{usage}"
      "//\n"
      "// The launch function returns cudaErrorInvalidValue for bad arguments, cudaSuccess without launching when\n"
      "// {rows} == 0, and otherwise the status of the launch ({threads} threads per CTA, one {unit} per {per}). It\n"
      "// does not synchronize. It is defined only under nvcc (__CUDACC__): compiled as C++ after\n"
      "// bfly/lockstep.hpp, this file runs the same kernel on the CPU instead.\n",
      fmt::arg("name", gen::kernel_name(spec)), fmt::arg("operation", gen::name_of(spec.operation)),
      fmt::arg("K", spec.K), fmt::arg("W", spec.W), fmt::arg("R", spec.R), fmt::arg("type", gen::name_of(spec.type)),
      fmt::arg("variant", gen::name_of(spec.variant)), fmt::arg("version", gen::bfly_version()),
      fmt::arg("usage", abi.usage), fmt::arg("rows", abi.rows), fmt::arg("threads", g.threads_per_cta),
      fmt::arg("unit", abi.rows == "D" ? "document" : "row"),
      fmt::arg("per", g.rows_per_cta == g.threads_per_cta ? "thread" : "group of W threads"));
}

std::string launch_function(const std::string& name, const LaunchAbi& abi, const gen::LaunchGeometry& g) {
  return fmt::format(
      "#ifdef __CUDACC__\n"
      "// Launches {name} on `stream` (see the comment at the top of this file).\n"
      "inline cudaError_t {name}_launch(\n"
      "    {parameters},\n"
      "    cudaStream_t stream = 0) {{\n"
      "  constexpr long long kThreadsPerCta = {threads};  // one {unit} per {per}\n"
      "  constexpr long long k{Units}PerCta = {per_cta};\n"
      "  constexpr long long kMaxGrid = 2147483647;  // gridDim.x limit\n"
      "  if ({bad_shape}) return cudaErrorInvalidValue;\n"
      "  if ({rows} == 0) return cudaSuccess;\n"
      "{checks}"
      "  const long long grid = ({rows} + k{Units}PerCta - 1) / k{Units}PerCta;\n"
      "  if (grid > kMaxGrid) return cudaErrorInvalidValue;\n"
      "  const dim3 grid_dim(static_cast<unsigned int>(grid)), block_dim(static_cast<unsigned int>(kThreadsPerCta));\n"
      "  {name}<<<grid_dim, block_dim, 0, stream>>>(\n"
      "      {arguments});\n"
      "  return cudaGetLastError();\n"
      "}}\n"
      "#endif  // __CUDACC__\n",
      fmt::arg("name", name), fmt::arg("parameters", abi.parameters), fmt::arg("arguments", abi.arguments),
      fmt::arg("rows", abi.rows), fmt::arg("bad_shape", abi.bad_shape), fmt::arg("checks", abi.checks),
      fmt::arg("threads", g.threads_per_cta), fmt::arg("unit", abi.rows == "D" ? "document" : "row"),
      fmt::arg("per", g.rows_per_cta == g.threads_per_cta ? "thread" : "group of W threads"),
      fmt::arg("Units", abi.rows == "D" ? "Documents" : "Rows"), fmt::arg("per_cta", g.rows_per_cta));
}

}  // namespace

std::string aot_header(const gen::KernelSpec& spec) {
  const gen::Source source = gen::generate(spec);
  const gen::LaunchGeometry geometry = gen::launch_geometry(spec);
  const LaunchAbi abi = launch_abi(spec);
  const std::string guard = guard_macro(source.kernel_name);
  return fmt::format("{}\n#ifndef {}\n#define {}\n\n{}\n{}\n#endif  // {}\n", usage_comment(spec, abi, geometry), guard,
                     guard, gen::inline_headers(source), launch_function(source.kernel_name, abi, geometry), guard);
}

}  // namespace bfly::cli
