// The kernel families: the one place where each kernel's argument list is written.
#include "bfly/spec/kernel_family.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <array>

namespace bfly::gen {
namespace {

// The sampling kernel: one draw per row of explicit weights.
constexpr KernelArg kSampleArgs[] = {
    {"weights", ArgType::const_elements, ArgRole::input,
     "device array, M rows of K weights, row r at weights + r * ld"},
    {"M", ArgType::i64, ArgRole::items, "rows"},
    {"ld", ArgType::i64, ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    {"out", ArgType::i32s, ArgRole::output,
     "device array of M ints: the category drawn for each row, or -1 for an invalid row (a negative, NaN or "
     "infinite weight, or a zero total)"},
    {"invalid_rows", ArgType::u64s, ArgRole::counters,
     "nullptr, or two device counters preset to {0, ~0ull}: the kernel adds the number of invalid rows to [0] "
     "and lowers [1] to the first invalid row"},
    {"seed", ArgType::u64, ArgRole::seed, "Philox4x32-10 key"},
    {"iteration", ArgType::u32, ArgRole::iteration,
     "the uniform of row r comes from Philox(seed; r, 0, iteration): the same arguments give the same draws"},
};

// The LDA z-step arguments before and after what a baseline adds (its table of partial sums p).
#define BFLY_LDA_Z_LEADING_ARGS                                                                                    \
  {"theta", ArgType::const_elements, ArgRole::input,                                                              \
   "device array, D rows of K topic weights per document (row stride ld_theta)"},                                 \
      {"ld_theta", ArgType::i64, ArgRole::row_stride, "elements from one theta row to the next (>= K)"},          \
      {"phi", ArgType::const_elements, ArgRole::input,                                                            \
       "device array, one row of K weights per word (row stride ld_phi)"},                                        \
      {"ld_phi", ArgType::i64, ArgRole::row_stride, "elements from one phi row to the next (>= K)"},              \
      {"doc_offsets", ArgType::const_i64s, ArgRole::input,                                                        \
       "D + 1 offsets: the tokens of document m are doc_offsets[m] .. doc_offsets[m + 1] - 1"},                   \
      {"words", ArgType::const_i32s, ArgRole::input, "the word id of each token (< the rows of phi)"},            \
      {"z", ArgType::i32s, ArgRole::output,                                                                       \
       "the topic drawn for each token, or -1 when theta[doc] * phi[word] has no positive finite total"},         \
      {"D", ArgType::i64, ArgRole::items, "documents"}
#define BFLY_LDA_Z_TRAILING_ARGS                                                                                   \
  {"invalid_tokens", ArgType::u64s, ArgRole::counters,                                                            \
   "nullptr, or two device counters preset to {0, ~0ull}: the kernel adds the number of invalid tokens to [0] "   \
   "and lowers [1] to the first one"},                                                                            \
      {"seed", ArgType::u64, ArgRole::seed, "Philox4x32-10 key"},                                                 \
      {"iteration", ArgType::u32, ArgRole::iteration, "the uniform of token t comes from Philox(seed; t, 0, iteration)"}

constexpr KernelArg kLdaZArgs[] = {BFLY_LDA_Z_LEADING_ARGS, BFLY_LDA_Z_TRAILING_ARGS};
constexpr KernelArg kLdaBaselineArgs[] = {
    BFLY_LDA_Z_LEADING_ARGS,
    {"p", ArgType::elements, ArgRole::scratch,
     "device scratch of D x K elements: the running sum k of document m's current token at p[k * D + m]"},
    BFLY_LDA_Z_TRAILING_ARGS};
#undef BFLY_LDA_Z_LEADING_ARGS
#undef BFLY_LDA_Z_TRAILING_ARGS

constexpr KernelFamily kSample{"sample", "draws one category per row of M x K weights", "row",
                               "bfly/sample_kernel.skeleton.cuh", kSampleArgs};
constexpr KernelFamily kLdaZ{"lda_z",
                             "draws a topic for every token from theta[doc] * phi[word], one document per thread "
                             "(the paper's Algorithm 7)",
                             "document", "bfly/lda_z_kernel.skeleton.cuh", kLdaZArgs};
constexpr KernelFamily kLdaZDoc{"lda_z_doc",
                                "draws a topic for every token from theta[doc] * phi[word], one document per group "
                                "of W threads",
                                "document", "bfly/lda_z_doc_kernel.skeleton.cuh", kLdaZArgs};
constexpr KernelFamily kLdaAlg1{"lda_alg1",
                                "the paper's LDA baseline Algorithm 1 with 3: one document per thread, partial sums "
                                "stored in p",
                                "document", "bfly/lda_alg1_kernel.skeleton.cuh", kLdaBaselineArgs};
constexpr KernelFamily kLdaAlg4{"lda_alg4",
                                "the paper's LDA baseline Algorithm 4 with 6 and 3: one document per lane, "
                                "transposed access and a register transpose, partial sums stored in p",
                                "document", "bfly/lda_alg4_kernel.skeleton.cuh", kLdaBaselineArgs};

constexpr std::array<const KernelFamily*, 5> kFamilies = {&kSample, &kLdaZ, &kLdaZDoc, &kLdaAlg1, &kLdaAlg4};

}  // namespace

bool is_pointer(ArgType type) {
  switch (type) {
    case ArgType::const_elements:
    case ArgType::elements:
    case ArgType::const_i64s:
    case ArgType::const_i32s:
    case ArgType::i32s:
    case ArgType::u64s:
    case ArgType::const_f64s:
    case ArgType::f64s:
      return true;
    case ArgType::i64:
    case ArgType::i32:
    case ArgType::u32:
    case ArgType::u64:
    case ArgType::f64:
      return false;
  }
  throw Error("unknown argument type");
}

std::string c_type(ArgType type, ElementType element) {
  const std::string_view T = cuda_type(element);
  switch (type) {
    case ArgType::const_elements: return fmt::format("const {}*", T);
    case ArgType::elements: return fmt::format("{}*", T);
    case ArgType::const_i64s: return "const long long*";
    case ArgType::const_i32s: return "const int*";
    case ArgType::i32s: return "int*";
    case ArgType::u64s: return "unsigned long long*";
    case ArgType::const_f64s: return "const double*";
    case ArgType::f64s: return "double*";
    case ArgType::i64: return "long long";
    case ArgType::i32: return "int";
    case ArgType::u32: return "unsigned int";
    case ArgType::u64: return "unsigned long long";
    case ArgType::f64: return "double";
  }
  throw Error("unknown argument type");
}

std::string parameter_list(const KernelFamily& family, ElementType element, bool restrict_pointers) {
  std::string out;
  for (const KernelArg& arg : family.args) {
    if (!out.empty()) out += ", ";
    out += c_type(arg.type, element);
    if (restrict_pointers && is_pointer(arg.type)) out += " __restrict__";
    out += " ";
    out += arg.name;
  }
  return out;
}

const KernelArg& KernelFamily::arg(ArgRole role) const {
  for (const KernelArg& a : args)
    if (a.role == role) return a;
  throw Error(fmt::format("kernel family {} has no argument of the role asked for", name));
}

std::size_t KernelFamily::index_of(std::string_view arg_name) const {
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].name == arg_name) return i;
  throw Error(fmt::format("kernel family {} has no argument named {}", name, arg_name));
}

std::span<const KernelFamily* const> kernel_families() { return kFamilies; }

const KernelFamily& family(std::string_view name) {
  std::string names;
  for (const KernelFamily* f : kFamilies) {
    if (f->name == name) return *f;
    names += (names.empty() ? "" : ", ") + std::string(f->name);
  }
  throw Error(fmt::format("no kernel family named '{}'; families: {}", name, names));
}

}  // namespace bfly::gen
