// The kernel families bfly generates, as data: each family's argument list (name, C type, role, one line of doc),
// what one unit of its grid covers, and its skeleton. Everything that depends on a kernel's arguments is derived
// from these rows (kernel_family.hpp says what); docs/EXTENDING.md shows how to add one.
#pragma once

#include "bfly/spec/kernel_family.hpp"

#include <array>

namespace bfly::gen::families {

// The sampling kernel: one draw per row of explicit weights.
inline constexpr KernelArg kSampleArgs[] = {
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

// Several draws per row (with or without replacement) of explicit weights, and draws from softmax(logits / T):
// the same passes, one table per row built once and searched num_samples times (docs/DESIGN.md section 11).
#define BFLY_SAMPLE_DRAWS_TRAILING_ARGS                                                                            \
  {"num_samples", ArgType::i32, ArgRole::value,                                                                    \
   "draws per row: 1 .. 2^24, or 1 .. 64 without replacement (bfly::gen::kMaxDistinctDraws; the kernel traps "   \
   "above it)"},                                                                                                  \
      {"out", ArgType::i32s, ArgRole::output,                                                                      \
       "device array of M x num_samples ints, row-major: draw d of row r at out[r * num_samples + d]; -1 for "      \
       "every draw of an invalid row, and for the draws of a row without replacement past its positive "          \
       "categories"},                                                                                             \
      {"invalid_rows", ArgType::u64s, ArgRole::counters,                                                          \
       "nullptr, or two device counters preset to {0, ~0ull}: the kernel adds the number of rows with a -1 draw "  \
       "to [0] and lowers [1] to the first of them"},                                                             \
      {"seed", ArgType::u64, ArgRole::seed, "Philox4x32-10 key"},                                                 \
      {"iteration", ArgType::u32, ArgRole::iteration,                                                             \
       "draw d of row r comes from Philox(seed; r, d, iteration) (redraws without replacement: word 2 = d + "      \
       "attempt * 2^24): the same arguments give the same draws"}
inline constexpr KernelArg kSampleDrawsArgs[] = {
    {"weights", ArgType::const_elements, ArgRole::input,
     "device array, M rows of K weights, row r at weights + r * ld"},
    {"M", ArgType::i64, ArgRole::items, "rows"},
    {"ld", ArgType::i64, ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    BFLY_SAMPLE_DRAWS_TRAILING_ARGS};
inline constexpr KernelArg kSampleLogitsArgs[] = {
    {"logits", ArgType::const_elements, ArgRole::input,
     "device array, M rows of K logits, row r at logits + r * ld; -inf is never drawn; a row of all -inf or with "
     "a NaN or +inf is invalid"},
    {"M", ArgType::i64, ArgRole::items, "rows"},
    {"ld", ArgType::i64, ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    {"temperature", ArgType::f64, ArgRole::value, "T > 0 and finite: the draws follow softmax(logits / T)"},
    BFLY_SAMPLE_DRAWS_TRAILING_ARGS};
#undef BFLY_SAMPLE_DRAWS_TRAILING_ARGS

// The sampling kernels for long rows and few of them: one row split over the lanes of several CTAs, with a
// two-level table (docs/DESIGN.md section 12), for one draw per row of weights, several draws with replacement, and
// draws from softmax(logits / T). The draws of row r depend on (seed, r, iteration) and the spec only.
#define BFLY_SPLIT_FIRST_ROW_ARG                                                                                    \
  {"first_row", ArgType::i32, ArgRole::value,                                                                      \
   "the number in the whole batch of the launch's row 0, 0 .. 2^31 - 1 (0: the launch is the batch): row r's "     \
   "uniforms are those of row first_row + r, and an invalid row r is reported as first_row + r; the arrays hold "  \
   "the launch's M rows"}
#define BFLY_SPLIT_SCRATCH_ARGS(part_totals_doc)                                                                   \
  {"part_totals", ArgType::sums, ArgRole::scratch, part_totals_doc},                                               \
      {"arrivals", ArgType::u64s, ArgRole::scratch,                                                                \
       "device scratch of M counters, zero before the first launch: the CTAs of a row count themselves in, and "   \
       "the last one searches the row and sets its counter back to zero"}
#define BFLY_SPLIT_PART_TOTALS_DOC                                                                                  \
  "device scratch of M * PARTS accumulators (bfly::gen::part_totals_per_row(spec)): the first level of the "       \
  "table, one total per part of W consecutive weights"
inline constexpr KernelArg kSampleSplitArgs[] = {
    {"weights", ArgType::const_elements, ArgRole::input,
     "device array, M rows of K weights, row r at weights + r * ld"},
    {"M", ArgType::i64, ArgRole::items, "rows"},
    BFLY_SPLIT_FIRST_ROW_ARG,
    {"ld", ArgType::i64, ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    {"out", ArgType::i32s, ArgRole::output,
     "device array of M ints: the category drawn for each row, or -1 for an invalid row (a negative, NaN or "
     "infinite weight, or a zero total)"},
    {"invalid_rows", ArgType::u64s, ArgRole::counters,
     "nullptr, or two device counters preset to {0, ~0ull}: the kernel adds the number of invalid rows to [0] "
     "and lowers [1] to the first invalid row"},
    BFLY_SPLIT_SCRATCH_ARGS(BFLY_SPLIT_PART_TOTALS_DOC),
    {"seed", ArgType::u64, ArgRole::seed, "Philox4x32-10 key"},
    {"iteration", ArgType::u32, ArgRole::iteration,
     "the uniform of row r comes from Philox(seed; r, 0, iteration): the same arguments give the same draws"},
};
#define BFLY_SPLIT_DRAWS_TRAILING_ARGS(part_totals_doc)                                                             \
  {"num_samples", ArgType::i32, ArgRole::value,                                                                    \
   "draws per row: 1 .. 2^24, or 1 .. 64 without replacement (bfly::gen::kMaxDistinctDraws; the kernel traps "   \
   "above it); the last CTA of a row makes them, GROUPS at a time"},                                              \
      {"out", ArgType::i32s, ArgRole::output,                                                                      \
       "device array of M x num_samples ints, row-major: draw d of row r at out[r * num_samples + d]; -1 for "      \
       "every draw of an invalid row, and for the draws of a row without replacement past its positive "          \
       "categories"},                                                                                             \
      {"invalid_rows", ArgType::u64s, ArgRole::counters,                                                          \
       "nullptr, or two device counters preset to {0, ~0ull}: the kernel adds the number of rows with a -1 draw "  \
       "to [0] and lowers [1] to the first of them"},                                                             \
      BFLY_SPLIT_SCRATCH_ARGS(part_totals_doc), {"seed", ArgType::u64, ArgRole::seed, "Philox4x32-10 key"},      \
      {"iteration", ArgType::u32, ArgRole::iteration,                                                             \
       "draw d of row r comes from Philox(seed; r, d, iteration) (redraws without replacement: word 2 = d + "      \
       "attempt * 2^24): the same arguments give the same draws"}
inline constexpr KernelArg kSampleSplitDrawsArgs[] = {
    {"weights", ArgType::const_elements, ArgRole::input,
     "device array, M rows of K weights, row r at weights + r * ld"},
    {"M", ArgType::i64, ArgRole::items, "rows"},
    BFLY_SPLIT_FIRST_ROW_ARG,
    {"ld", ArgType::i64, ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    BFLY_SPLIT_DRAWS_TRAILING_ARGS(BFLY_SPLIT_PART_TOTALS_DOC)};
inline constexpr KernelArg kSampleSplitLogitsArgs[] = {
    {"logits", ArgType::const_elements, ArgRole::input,
     "device array, M rows of K logits, row r at logits + r * ld; -inf is never drawn; a row of all -inf or with "
     "a NaN or +inf is invalid"},
    {"M", ArgType::i64, ArgRole::items, "rows"},
    BFLY_SPLIT_FIRST_ROW_ARG,
    {"ld", ArgType::i64, ArgRole::row_stride, "elements from one row to the next (ld >= K)"},
    {"temperature", ArgType::f64, ArgRole::value, "T > 0 and finite: the draws follow softmax(logits / T)"},
    BFLY_SPLIT_DRAWS_TRAILING_ARGS(
        "device scratch of M * (PARTS + CTAS_PER_ROW) floats (bfly::gen::part_totals_per_row(spec)): the first level "
        "of the table, one total per part of W consecutive weights, each under its CTA's maximum, then the maximum "
        "of each CTA's slice of the row")};
#undef BFLY_SPLIT_DRAWS_TRAILING_ARGS
#undef BFLY_SPLIT_PART_TOTALS_DOC
#undef BFLY_SPLIT_SCRATCH_ARGS
#undef BFLY_SPLIT_FIRST_ROW_ARG

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

// The generated z-steps also draw from collapsed Gibbs sampling's conditional: given n_k, theta and phi (the
// posterior means of the counts of z on entry), each token's own current topic is left out of the counts.
#define BFLY_LDA_Z_COLLAPSED_ARGS                                                                                  \
  {"topic_counts", ArgType::const_i32s, ArgRole::optional_input,                                                  \
   "nullptr: draw from theta[doc] * phi[word] as given; else K ints, n_k of z on entry, for the collapsed "        \
   "conditional: theta and phi must then be the posterior means of the counts of z, and each token's draw leaves "  \
   "the token itself (its topic z[t] on entry) out of them"},                                                     \
      {"alpha_sum", ArgType::f64, ArgRole::value,                                                                 \
       "with topic_counts: sum_k alpha_k, theta[m, k] = (n_mk + alpha_k) / (N_m + alpha_sum)"},                   \
      {"v_beta", ArgType::f64, ArgRole::value,                                                                    \
       "with topic_counts: V * beta, phi[w, k] = (n_wk + beta) / (n_k + v_beta)"}

inline constexpr KernelArg kLdaZArgs[] = {BFLY_LDA_Z_LEADING_ARGS, BFLY_LDA_Z_COLLAPSED_ARGS,
                                          BFLY_LDA_Z_TRAILING_ARGS};
inline constexpr KernelArg kLdaBaselineArgs[] = {
    BFLY_LDA_Z_LEADING_ARGS,
    {"p", ArgType::elements, ArgRole::scratch,
     "device scratch of D x K elements: the running sum k of document m's current token at p[k * D + m]"},
    BFLY_LDA_Z_TRAILING_ARGS};
#undef BFLY_LDA_Z_LEADING_ARGS
#undef BFLY_LDA_Z_COLLAPSED_ARGS
#undef BFLY_LDA_Z_TRAILING_ARGS

inline constexpr KernelFamily kSample{"sample", "draws one category per row of M x K weights", "row",
                               "bfly/sample_kernel.skeleton.cuh", kSampleArgs};
inline constexpr KernelFamily kSampleSplit{"sample_split",
                                    "draws one category per row of M x K weights, each row split over several CTAs",
                                    "row", "bfly/sample_split_kernel.skeleton.cuh", kSampleSplitArgs};
inline constexpr KernelFamily kSampleSplitDraws{"sample_split_draws",
                                          "draws num_samples categories per row of M x K weights, with replacement, "
                                          "each row split over several CTAs",
                                          "row", "bfly/sample_split_kernel.skeleton.cuh", kSampleSplitDrawsArgs};
inline constexpr KernelFamily kSampleSplitLogits{"sample_split_logits",
                                           "draws num_samples categories per row from softmax(logits / T) of M x K "
                                           "logits, with replacement, each row split over several CTAs",
                                           "row", "bfly/sample_split_kernel.skeleton.cuh", kSampleSplitLogitsArgs};
inline constexpr KernelFamily kSampleSplitDistinct{"sample_split_distinct",
                                             "draws num_samples distinct categories per row of M x K weights "
                                             "(without replacement), each row split over several CTAs",
                                             "row", "bfly/sample_split_kernel.skeleton.cuh", kSampleSplitDrawsArgs};
inline constexpr KernelFamily kSampleSplitLogitsDistinct{
    "sample_split_logits_distinct",
    "draws num_samples distinct categories per row from softmax(logits / T) of M x K logits (without replacement), "
    "each row split over several CTAs",
    "row", "bfly/sample_split_kernel.skeleton.cuh", kSampleSplitLogitsArgs};
inline constexpr KernelFamily kSamplePairs{"sample_pairs",
                                    "draws one category per row of M x K weights, two adjacent weights per table "
                                    "entry (K even; weights aligned to two elements and ld even)",
                                    "row", "bfly/sample_kernel.skeleton.cuh", kSampleArgs, true};
inline constexpr KernelFamily kSampleSplitPairs{"sample_split_pairs",
                                         "draws one category per row of M x K weights, each row split over several "
                                         "CTAs, two adjacent weights per table entry (for K even, weights aligned to "
                                         "two elements and ld even; for K odd, each row paired from the even address "
                                         "at or before its start)",
                                         "row", "bfly/sample_split_kernel.skeleton.cuh", kSampleSplitArgs, true};
inline constexpr KernelFamily kSampleSmall{"sample_small",
                                    "draws one category per row of M x K weights, several short rows per lane",
                                    "row", "bfly/sample_small_kernel.skeleton.cuh", kSampleArgs};
inline constexpr KernelFamily kSampleDraws{"sample_draws",
                                    "draws num_samples categories per row of M x K weights, with replacement",
                                    "row", "bfly/sample_draws_kernel.skeleton.cuh", kSampleDrawsArgs};
inline constexpr KernelFamily kSampleDistinct{"sample_distinct",
                                       "draws num_samples distinct categories per row of M x K weights (without "
                                       "replacement)",
                                       "row", "bfly/sample_draws_kernel.skeleton.cuh", kSampleDrawsArgs};
inline constexpr KernelFamily kSampleLogits{"sample_logits",
                                     "draws num_samples categories per row from softmax(logits / T) of M x K "
                                     "logits, with replacement",
                                     "row", "bfly/sample_draws_kernel.skeleton.cuh", kSampleLogitsArgs};
inline constexpr KernelFamily kSampleLogitsDistinct{"sample_logits_distinct",
                                             "draws num_samples distinct categories per row from softmax(logits / "
                                             "T) of M x K logits (without replacement)",
                                             "row", "bfly/sample_draws_kernel.skeleton.cuh", kSampleLogitsArgs};
inline constexpr KernelFamily kLdaZ{"lda_z",
                             "draws a topic for every token from theta[doc] * phi[word], one document per thread "
                             "(the paper's Algorithm 7)",
                             "document", "bfly/lda_z_kernel.skeleton.cuh", kLdaZArgs};
inline constexpr KernelFamily kLdaZDoc{"lda_z_doc",
                                "draws a topic for every token from theta[doc] * phi[word], one document per group "
                                "of W threads",
                                "document", "bfly/lda_z_doc_kernel.skeleton.cuh", kLdaZArgs};
inline constexpr KernelFamily kLdaAlg1{"lda_alg1",
                                "the paper's LDA baseline Algorithm 1 with 3: one document per thread, partial sums "
                                "stored in p",
                                "document", "bfly/lda_alg1_kernel.skeleton.cuh", kLdaBaselineArgs};
inline constexpr KernelFamily kLdaAlg4{"lda_alg4",
                                "the paper's LDA baseline Algorithm 4 with 6 and 3: one document per lane, "
                                "transposed access and a register transpose, partial sums stored in p",
                                "document", "bfly/lda_alg4_kernel.skeleton.cuh", kLdaBaselineArgs};

// Every family, in a fixed order (gen::kernel_families()).
inline constexpr std::array<const KernelFamily*, 17> kAll = {
    &kSample,      &kSampleDraws,       &kSampleDistinct,      &kSampleLogits,
    &kSampleLogitsDistinct, &kSampleSplit, &kSampleSplitDraws, &kSampleSplitDistinct,
    &kSampleSplitLogits, &kSampleSplitLogitsDistinct, &kSampleSmall, &kSamplePairs, &kSampleSplitPairs,
    &kLdaZ,        &kLdaZDoc,           &kLdaAlg1,             &kLdaAlg4};

}  // namespace bfly::gen::families

// The butterfly operations of a KernelSpec (the Operation enum and its names are derived from this list):
// X(operation, family, items per group: false for one item per thread, true for one item per group of W lanes).
#define BFLY_OPERATIONS(X)                               \
  X(sample, ::bfly::gen::families::kSample, false)      \
  X(lda_z, ::bfly::gen::families::kLdaZ, false)         \
  X(lda_z_doc, ::bfly::gen::families::kLdaZDoc, true)   \
  X(sample_split, ::bfly::gen::families::kSampleSplit, false) \
  X(sample_small, ::bfly::gen::families::kSampleSmall, false) \
  X(sample_pairs, ::bfly::gen::families::kSamplePairs, false) \
  X(sample_split_pairs, ::bfly::gen::families::kSampleSplitPairs, false)

// The forms of the operations `sample` and `sample_split` (KernelSpec::input and KernelSpec::draws), each with its
// family: X(operation, input kind, draws, family). The kernel name, its parsing and the arguments follow from the
// row; an operation without rows here takes one draw per row of weights only.
#define BFLY_SAMPLE_FORMS(X)                                                                        \
  X(sample, weights, one, ::bfly::gen::families::kSample)                                           \
  X(sample, weights, with_replacement, ::bfly::gen::families::kSampleDraws)                         \
  X(sample, weights, without_replacement, ::bfly::gen::families::kSampleDistinct)                   \
  X(sample, logits, with_replacement, ::bfly::gen::families::kSampleLogits)                         \
  X(sample, logits, without_replacement, ::bfly::gen::families::kSampleLogitsDistinct)              \
  X(sample_split, weights, one, ::bfly::gen::families::kSampleSplit)                                \
  X(sample_split, weights, with_replacement, ::bfly::gen::families::kSampleSplitDraws)              \
  X(sample_split, weights, without_replacement, ::bfly::gen::families::kSampleSplitDistinct)        \
  X(sample_split, logits, with_replacement, ::bfly::gen::families::kSampleSplitLogits)              \
  X(sample_split, logits, without_replacement, ::bfly::gen::families::kSampleSplitLogitsDistinct)
