// The kernel families: the one place where each kernel's argument list is written.
#include "bfly/spec/kernel_family.hpp"

#include "bfly/spec/families.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>

namespace bfly::gen {
namespace {

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
    {"first_doc", ArgType::i64, ArgRole::value, "index of document 0 in the whole corpus (random streams)"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_dk", ArgType::const_i32s, ArgRole::input, "D x K document-topic counts"},
    {"alpha", ArgType::const_f64s, ArgRole::input, "K priors of the documents' topics (alpha_k)"},
    {"alpha_sum", ArgType::f64, ArgRole::value, "sum of alpha (K alpha when symmetric)"},
    {"alpha_terms", ArgType::const_f64s, ArgRole::input, "log-likelihood terms of small counts (symmetric alpha)"},
    {"terms", ArgType::i32, ArgRole::value, "entries of alpha_terms (0 for an asymmetric alpha)"},
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

constexpr KernelArg kAddThetaMeansArgs[] = {
    {"doc_offsets", ArgType::const_i64s, ArgRole::input, "D + 1 token offsets"},
    {"D", ArgType::i64, ArgRole::items, "documents"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_dk", ArgType::const_i32s, ArgRole::input, "D x K document-topic counts"},
    {"alpha", ArgType::const_f64s, ArgRole::input, "K priors of the documents' topics (alpha_k)"},
    {"alpha_sum", ArgType::f64, ArgRole::value, "sum of alpha (K alpha when symmetric)"},
    {"sums", ArgType::f64s, ArgRole::output, "D x K running sums of theta's posterior means"}};
constexpr KernelArg kAddPhiMeansArgs[] = {
    {"V", ArgType::i64, ArgRole::items, "words"},
    {"K", ArgType::i32, ArgRole::value, "topics"},
    {"n_wk", ArgType::const_i32s, ArgRole::input, "V x K word-topic counts"},
    {"n_k", ArgType::const_i32s, ArgRole::input, "K topic counts"},
    {"beta", ArgType::f64, ArgRole::value, "prior of the topics' words"},
    {"sums", ArgType::f64s, ArgRole::output, "V x K running sums of phi's posterior means"}};
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
     "bfly::lda::estimate_theta<{T}>(doc_offsets, D, first_doc, K, n_dk, alpha, alpha_sum, alpha_terms, terms, "
     "draw, seed, iteration, theta, ll_partials)",
     true},
    {{"bfly_lda_phi_mean", "phi as posterior means and the words' log-likelihood terms", "word", kIterationFile,
      kPhiMeanArgs},
     "bfly::lda::estimate_phi<{T}>(V, K, n_wk, n_k, beta, beta_terms, terms, 0ull, 0u, phi, nullptr, ll_partials)",
     true},
    {{"bfly_lda_normalize_phi", "phi from gamma draws and their column sums", "word", kIterationFile,
      kNormalizePhiArgs},
     "bfly::lda::normalize_phi<{T}>(g, V, K, sum, phi)", true},
    {{"bfly_lda_add_theta_means", "theta's posterior means added to running sums (output averaging)", "element",
      kIterationFile, kAddThetaMeansArgs},
     "bfly::lda::add_theta_means<{T}>(doc_offsets, D, K, n_dk, alpha, alpha_sum, sums)", true},
    {{"bfly_lda_add_phi_means", "phi's posterior means added to running sums (output averaging)", "element",
      kIterationFile, kAddPhiMeansArgs},
     "bfly::lda::add_phi_means<{T}>(V, K, n_wk, n_k, beta, sums)", true},
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

bool starts_on_pair(const void* elements, ElementType element) {
  return reinterpret_cast<std::uintptr_t>(elements) % static_cast<std::uintptr_t>(2 * size_of(element)) == 0;
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
    case ArgType::sums:
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
    case ArgType::sums: return fmt::format("{}*", cuda_type(accumulator_of(element)));
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

std::span<const KernelFamily* const> kernel_families() { return families::kAll; }

const KernelFamily& family(std::string_view name) {
  std::string names;
  for (const KernelFamily* f : families::kAll) {
    if (f->name == name) return *f;
    names += (names.empty() ? "" : ", ") + std::string(f->name);
  }
  throw Error(fmt::format("no kernel family named '{}'; families: {}", name, names));
}

}  // namespace bfly::gen
