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

// The LDA iteration's entry points (templates/bfly/lda_iteration.cuh), with the device function each calls.
constexpr KernelArg kZeroArgs[] = {{"data", ArgType::i32s, ArgRole::output, "ints to set to 0"},
                                   {"n", ArgType::i64, ArgRole::items, "how many"}};
constexpr KernelArg kLgammaTableArgs[] = {{"prior", ArgType::f64, ArgRole::value, "the prior"},
                                          {"n", ArgType::i32, ArgRole::items, "table entries"},
                                          {"table", ArgType::f64s, ArgRole::output, "lgamma(i + prior) - lgamma(prior)"}};
constexpr KernelArg kCountArgs[] = {
    {"doc_offsets", ArgType::const_i64s, ArgRole::input, "D + 1 token offsets"},
    {"words", ArgType::const_i32s, ArgRole::input, "word of each token"},
    {"z", ArgType::const_i32s, ArgRole::input, "topic of each token"},
    {"D", ArgType::i64, ArgRole::items, "documents"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_dk", ArgType::i32s, ArgRole::output, "D x K document-topic counts"},
    {"n_wk", ArgType::i32s, ArgRole::output, "V x K word-topic counts"},
    {"n_k", ArgType::i32s, ArgRole::output, "K topic counts"},
    {"bad", ArgType::u64s, ArgRole::output, "count of topics outside [0, K)"},
    {"shared_topics", ArgType::i32, ArgRole::value, "1: n_k through a shared-memory histogram of K ints"}};
constexpr KernelArg kPhiGammasArgs[] = {
    {"V", ArgType::i64, ArgRole::items, "words"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_wk", ArgType::const_i32s, ArgRole::input, "V x K word-topic counts"},
    {"n_k", ArgType::const_i32s, ArgRole::input, "K topic counts"},
    {"beta", ArgType::f64, ArgRole::value, "prior of the topics' words"},
    {"beta_terms", ArgType::const_f64s, ArgRole::input, "log-likelihood terms of small counts"},
    {"terms", ArgType::i32, ArgRole::value, "entries of beta_terms"},
    {"seed", ArgType::u64, ArgRole::seed, "Philox key"},
    {"iteration", ArgType::u32, ArgRole::iteration, "Philox counter word"},
    {"gammas", ArgType::f64s, ArgRole::output, "V x K gamma draws"},
    {"ll_partials", ArgType::f64s, ArgRole::output, "per-CTA log-likelihood partials"}};
constexpr KernelArg kColumnPartialsArgs[] = {{"g", ArgType::const_f64s, ArgRole::input, "V x K values"},
                                             {"V", ArgType::i64, ArgRole::items, "rows"},
                                             {"K", ArgType::i32, ArgRole::value, "columns"},
                                             {"rows_per_chunk", ArgType::i64, ArgRole::value, "rows per partial"},
                                             {"partial", ArgType::f64s, ArgRole::output, "chunks x K partial sums"}};
constexpr KernelArg kColumnFinishArgs[] = {{"partial", ArgType::const_f64s, ArgRole::input, "chunks x K partials"},
                                           {"chunks", ArgType::i32, ArgRole::items, "chunks"},
                                           {"K", ArgType::i32, ArgRole::value, "columns"},
                                           {"sum", ArgType::f64s, ArgRole::output, "K column sums"}};
constexpr KernelArg kFinishLlArgs[] = {{"partials", ArgType::const_f64s, ArgRole::input, "log-likelihood partials"},
                                       {"count", ArgType::i32, ArgRole::items, "partials"},
                                       {"n_k", ArgType::const_i32s, ArgRole::input, "K topic counts"},
                                       {"K", ArgType::i32, ArgRole::value, "topics"},
                                       {"V", ArgType::i64, ArgRole::value, "words"},
                                       {"beta", ArgType::f64, ArgRole::value, "prior of the topics' words"},
                                       {"result", ArgType::f64s, ArgRole::output, "the log-likelihood"}};
constexpr KernelArg kThetaArgs[] = {
    {"doc_offsets", ArgType::const_i64s, ArgRole::input, "D + 1 token offsets"},
    {"D", ArgType::i64, ArgRole::items, "documents"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_dk", ArgType::const_i32s, ArgRole::input, "D x K document-topic counts"},
    {"alpha", ArgType::f64, ArgRole::value, "prior of the documents' topics"},
    {"alpha_terms", ArgType::const_f64s, ArgRole::input, "log-likelihood terms of small counts"},
    {"terms", ArgType::i32, ArgRole::value, "entries of alpha_terms"},
    {"draw", ArgType::i32, ArgRole::value, "1: Dirichlet draws, 0: posterior means"},
    {"seed", ArgType::u64, ArgRole::seed, "Philox key"},
    {"iteration", ArgType::u32, ArgRole::iteration, "Philox counter word"},
    {"theta", ArgType::elements, ArgRole::output, "D x K estimates"},
    {"ll_partials", ArgType::f64s, ArgRole::output, "per-CTA log-likelihood partials"}};
constexpr KernelArg kPhiMeanArgs[] = {
    {"V", ArgType::i64, ArgRole::items, "words"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_wk", ArgType::const_i32s, ArgRole::input, "V x K word-topic counts"},
    {"n_k", ArgType::const_i32s, ArgRole::input, "K topic counts"},
    {"beta", ArgType::f64, ArgRole::value, "prior of the topics' words"},
    {"beta_terms", ArgType::const_f64s, ArgRole::input, "log-likelihood terms of small counts"},
    {"terms", ArgType::i32, ArgRole::value, "entries of beta_terms"},
    {"phi", ArgType::elements, ArgRole::output, "V x K estimates"},
    {"ll_partials", ArgType::f64s, ArgRole::output, "per-CTA log-likelihood partials"}};
constexpr KernelArg kNormalizePhiArgs[] = {{"g", ArgType::const_f64s, ArgRole::input, "V x K gamma draws"},
                                           {"V", ArgType::i64, ArgRole::items, "words"},
                                           {"K", ArgType::i32, ArgRole::value, "topics"},
                                           {"sum", ArgType::const_f64s, ArgRole::input, "K column sums of g"},
                                           {"phi", ArgType::elements, ArgRole::output, "V x K estimates"}};

constexpr std::string_view kIterationFile = "bfly/lda_iteration.cuh";
const IterationKernel kIterationKernels[] = {
    {{"bfly_lda_zero", "sets n ints to 0", "element", kIterationFile, kZeroArgs}, "bfly::lda::fill_zero(data, n)"},
    {{"bfly_lda_lgamma_table", "log-likelihood terms of small counts", "entry", kIterationFile, kLgammaTableArgs},
     "bfly::lda::lgamma_table(prior, n, table)"},
    {{"bfly_lda_count", "topic counts of z", "document", kIterationFile, kCountArgs},
     "bfly::lda::count_topics(doc_offsets, words, z, D, K, n_dk, n_wk, n_k, bad, shared_topics)"},
    {{"bfly_lda_phi_gammas", "gamma draws of phi and the words' log-likelihood terms", "word", kIterationFile,
      kPhiGammasArgs},
     "bfly::lda::estimate_phi<float>(V, K, n_wk, n_k, beta, beta_terms, terms, seed, iteration, nullptr, gammas, "
     "ll_partials)"},
    {{"bfly_lda_column_partials", "partial column sums", "row", kIterationFile, kColumnPartialsArgs},
     "bfly::lda::column_partials(g, V, K, rows_per_chunk, partial)"},
    {{"bfly_lda_column_finish", "column sums from the partials", "chunk", kIterationFile, kColumnFinishArgs},
     "bfly::lda::column_finish(partial, chunks, K, sum)"},
    {{"bfly_lda_finish_ll", "the log-likelihood from its partials", "partial", kIterationFile, kFinishLlArgs},
     "bfly::lda::finish_log_likelihood(partials, count, n_k, K, V, beta, result)"},
    {{"bfly_lda_theta", "theta and the documents' log-likelihood terms", "document", kIterationFile, kThetaArgs},
     "bfly::lda::estimate_theta<{T}>(doc_offsets, D, K, n_dk, alpha, alpha_terms, terms, draw, seed, iteration, "
     "theta, ll_partials)",
     true},
    {{"bfly_lda_phi_mean", "phi as posterior means and the words' log-likelihood terms", "word", kIterationFile,
      kPhiMeanArgs},
     "bfly::lda::estimate_phi<{T}>(V, K, n_wk, n_k, beta, beta_terms, terms, 0ull, 0u, phi, nullptr, ll_partials)",
     true},
    {{"bfly_lda_normalize_phi", "phi from gamma draws and their column sums", "word", kIterationFile,
      kNormalizePhiArgs},
     "bfly::lda::normalize_phi<{T}>(g, V, K, sum, phi)", true},
};

}  // namespace

std::string IterationKernel::name(ElementType element) const {
  return typed ? fmt::format("{}_{}", family.name, name_of(element)) : std::string(family.name);
}

std::span<const IterationKernel> lda_iteration_kernels() { return kIterationKernels; }

const IterationKernel& lda_iteration_kernel(std::string_view family_name) {
  for (const IterationKernel& kernel : kIterationKernels)
    if (kernel.family.name == family_name) return kernel;
  throw Error(fmt::format("no LDA iteration kernel named {}", family_name));
}

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
