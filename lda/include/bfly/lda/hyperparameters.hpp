// Learning the Dirichlet priors from the topic counts of a Gibbs state: Minka's fixed point (Minka 2000,
// "Estimating a Dirichlet distribution", eq. 55) with the count histograms of Wallach (2008), as Mallet's and
// tomotopy's optim_interval do.
//
//   alpha_k <- alpha_k * sum_d [psi(n_dk + alpha_k) - psi(alpha_k)] / sum_d [psi(N_d + A) - psi(A)],  A = sum alpha
//   beta    <- beta * sum_{k,w} [psi(n_wk + beta) - psi(beta)] / (V sum_k [psi(n_k + V beta) - psi(V beta)])
//
// psi(n + a) - psi(a) = sum_{i < n} 1 / (a + i), so both need only the histograms of the counts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace bfly::lda {

struct HyperparameterOptions {
  int fixed_point_steps = 20;   // fixed-point updates per call
  double minimum = 1e-6;        // no prior goes below this
};

// The statistics alpha's fixed point reads, as dense integer histograms that shards of a data-parallel run add
// up exactly: documents[n] = how many documents have n tokens, and topic_documents[k * (longest + 1) + n] = how
// many documents have n_dk = n (n = 1 .. longest; entry 0 is unused).
struct DocumentTopicHistogram {
  int K = 0;
  std::int64_t longest = 0;  // the longest document's tokens (of the whole corpus, so every shard agrees)
  std::vector<std::int32_t> documents;        // longest + 1
  std::vector<std::int32_t> topic_documents;  // K x (longest + 1)
};

// The histogram of the document-topic counts doc_topic (D x K row-major) and the documents' lengths (D entries);
// every length must be <= `longest`.
DocumentTopicHistogram document_topic_histogram(std::span<const std::int32_t> doc_topic,
                                                std::span<const std::int64_t> doc_lengths, int K,
                                                std::int64_t longest);

// Adds `other` (same K and longest) into `sum`.
void add_histogram(DocumentTopicHistogram& sum, const DocumentTopicHistogram& other);

// The asymmetric alpha that maximises the Dirichlet-multinomial likelihood of the counts summarised in
// `histogram`, starting from `alpha` (K entries, positive).
std::vector<double> optimize_alpha(const DocumentTopicHistogram& histogram, std::vector<double> alpha,
                                   const HyperparameterOptions& options = {});

// The asymmetric alpha that maximises the Dirichlet-multinomial likelihood of the document-topic counts
// doc_topic (D x K row-major) given the documents' lengths (D entries, the row sums), starting from `alpha`
// (K entries, positive). Throws bfly::Error when the sizes disagree or alpha is not positive.
std::vector<double> optimize_alpha(std::span<const std::int32_t> doc_topic, std::span<const std::int64_t> doc_lengths,
                                   std::vector<double> alpha, const HyperparameterOptions& options = {});

// The symmetric beta that maximises the likelihood of the word-topic counts word_topic (V x K row-major) given
// the topic totals (K entries), starting from `beta`.
double optimize_beta(std::span<const std::int32_t> word_topic, std::span<const std::int64_t> topic_totals, double beta,
                     const HyperparameterOptions& options = {});

}  // namespace bfly::lda
