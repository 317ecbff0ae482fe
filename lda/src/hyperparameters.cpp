// Minka's fixed point for the Dirichlet priors over count histograms (see hyperparameters.hpp).
#include "bfly/lda/hyperparameters.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace bfly::lda {
namespace {

// A histogram of counts: (count n >= 1, how many times it occurs), increasing n.
using Histogram = std::vector<std::pair<std::int64_t, std::int64_t>>;

Histogram to_histogram(const std::map<std::int64_t, std::int64_t>& counts) { return {counts.begin(), counts.end()}; }

// sum over the histogram of occurrences * (psi(n + a) - psi(a)) = occurrences * sum_{i < n} 1 / (a + i).
double digamma_difference_sum(const Histogram& histogram, double a) {
  double sum = 0, running = 0;
  std::int64_t done = 0;
  for (const auto& [n, occurrences] : histogram) {
    for (; done < n; ++done) running += 1.0 / (a + static_cast<double>(done));
    sum += static_cast<double>(occurrences) * running;
  }
  return sum;
}

void check_options(const HyperparameterOptions& options) {
  if (options.fixed_point_steps < 1 || !(options.minimum > 0))
    throw Error(fmt::format("hyperparameter options: fixed_point_steps = {} (expected >= 1), minimum = {} "
                            "(expected > 0)",
                            options.fixed_point_steps, options.minimum));
}

}  // namespace

DocumentTopicHistogram document_topic_histogram(std::span<const std::int32_t> doc_topic,
                                                std::span<const std::int64_t> doc_lengths, int K,
                                                std::int64_t longest) {
  const std::size_t D = doc_lengths.size();
  if (K < 1 || longest < 0 || doc_topic.size() != D * static_cast<std::size_t>(K))
    throw Error(fmt::format("document_topic_histogram: doc_topic has {} entries, expected documents x K = {} x {} "
                            "(longest = {})",
                            doc_topic.size(), D, K, longest));
  DocumentTopicHistogram histogram;
  histogram.K = K;
  histogram.longest = longest;
  const auto row = static_cast<std::size_t>(longest) + 1;
  histogram.documents.assign(row, 0);
  histogram.topic_documents.assign(row * static_cast<std::size_t>(K), 0);
  for (std::size_t d = 0; d < D; ++d) {
    if (doc_lengths[d] < 0 || doc_lengths[d] > longest)
      throw Error(fmt::format("document_topic_histogram: document {} has {} tokens, outside [0, longest = {}]", d,
                              doc_lengths[d], longest));
    ++histogram.documents[static_cast<std::size_t>(doc_lengths[d])];
    for (int k = 0; k < K; ++k) {
      const std::int32_t n = doc_topic[d * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)];
      if (n < 0 || n > doc_lengths[d])
        throw Error(fmt::format("document_topic_histogram: n_dk = {} for document {}, topic {} (length {})", n, d, k,
                                doc_lengths[d]));
      if (n > 0) ++histogram.topic_documents[static_cast<std::size_t>(k) * row + static_cast<std::size_t>(n)];
    }
  }
  return histogram;
}

void add_histogram(DocumentTopicHistogram& sum, const DocumentTopicHistogram& other) {
  if (sum.K != other.K || sum.longest != other.longest)
    throw Error(fmt::format("add_histogram: K = {}, longest = {} and K = {}, longest = {} differ", sum.K, sum.longest,
                            other.K, other.longest));
  for (std::size_t i = 0; i < sum.documents.size(); ++i) sum.documents[i] += other.documents[i];
  for (std::size_t i = 0; i < sum.topic_documents.size(); ++i) sum.topic_documents[i] += other.topic_documents[i];
}

std::vector<double> optimize_alpha(const DocumentTopicHistogram& histogram, std::vector<double> alpha,
                                   const HyperparameterOptions& options) {
  check_options(options);
  const std::size_t K = alpha.size(), row = static_cast<std::size_t>(histogram.longest) + 1;
  if (K == 0 || static_cast<std::size_t>(histogram.K) != K || histogram.documents.size() != row ||
      histogram.topic_documents.size() != K * row)
    throw Error(fmt::format("optimize_alpha: alpha has {} entries, the histogram K = {} (longest = {}, {} and {} "
                            "entries)",
                            K, histogram.K, histogram.longest, histogram.documents.size(),
                            histogram.topic_documents.size()));
  for (std::size_t k = 0; k < K; ++k)
    if (!(alpha[k] > 0) || !std::isfinite(alpha[k]))
      throw Error(fmt::format("optimize_alpha: alpha[{}] = {}, expected a positive number", k, alpha[k]));
  auto sparse = [&](const std::int32_t* dense) {
    Histogram h;
    for (std::size_t n = 1; n < row; ++n)
      if (dense[n] != 0) h.emplace_back(static_cast<std::int64_t>(n), dense[n]);
    return h;
  };
  const Histogram lengths = sparse(histogram.documents.data());
  std::vector<Histogram> topics(K);
  for (std::size_t k = 0; k < K; ++k) topics[k] = sparse(histogram.topic_documents.data() + k * row);
  for (int step = 0; step < options.fixed_point_steps; ++step) {
    double sum = 0;
    for (const double a : alpha) sum += a;
    const double denominator = digamma_difference_sum(lengths, sum);
    if (!(denominator > 0)) break;  // no tokens: nothing to learn from
    for (std::size_t k = 0; k < K; ++k)
      alpha[k] = std::max(options.minimum, alpha[k] * digamma_difference_sum(topics[k], alpha[k]) / denominator);
  }
  return alpha;
}

std::vector<double> optimize_alpha(std::span<const std::int32_t> doc_topic, std::span<const std::int64_t> doc_lengths,
                                   std::vector<double> alpha, const HyperparameterOptions& options) {
  const std::size_t K = alpha.size(), D = doc_lengths.size();
  if (K == 0 || doc_topic.size() != D * K)
    throw Error(fmt::format("optimize_alpha: doc_topic has {} entries, expected documents x K = {} x {}",
                            doc_topic.size(), D, K));
  std::int64_t longest = 0;
  for (const std::int64_t length : doc_lengths) longest = std::max(longest, length);
  return optimize_alpha(document_topic_histogram(doc_topic, doc_lengths, static_cast<int>(K), longest),
                        std::move(alpha), options);
}

double optimize_beta(std::span<const std::int32_t> word_topic, std::span<const std::int64_t> topic_totals, double beta,
                     const HyperparameterOptions& options) {
  check_options(options);
  const std::size_t K = topic_totals.size();
  if (K == 0 || word_topic.size() % K != 0)
    throw Error(fmt::format("optimize_beta: word_topic has {} entries, not a multiple of K = {}", word_topic.size(), K));
  if (!(beta > 0) || !std::isfinite(beta))
    throw Error(fmt::format("optimize_beta: beta = {}, expected a positive number", beta));
  const double V = static_cast<double>(word_topic.size() / K);
  std::map<std::int64_t, std::int64_t> count_counts, total_counts;
  for (const std::int32_t n : word_topic)
    if (n > 0) ++count_counts[n];
  for (const std::int64_t n : topic_totals)
    if (n > 0) ++total_counts[n];
  const Histogram counts = to_histogram(count_counts), totals = to_histogram(total_counts);
  for (int step = 0; step < options.fixed_point_steps; ++step) {
    const double denominator = V * digamma_difference_sum(totals, V * beta);
    if (!(denominator > 0)) break;
    beta = std::max(options.minimum, beta * digamma_difference_sum(counts, beta) / denominator);
  }
  return beta;
}

}  // namespace bfly::lda
