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

std::vector<double> optimize_alpha(std::span<const std::int32_t> doc_topic, std::span<const std::int64_t> doc_lengths,
                                   std::vector<double> alpha, const HyperparameterOptions& options) {
  check_options(options);
  const std::size_t K = alpha.size(), D = doc_lengths.size();
  if (K == 0 || doc_topic.size() != D * K)
    throw Error(fmt::format("optimize_alpha: doc_topic has {} entries, expected documents x K = {} x {}",
                            doc_topic.size(), D, K));
  for (std::size_t k = 0; k < K; ++k)
    if (!(alpha[k] > 0) || !std::isfinite(alpha[k]))
      throw Error(fmt::format("optimize_alpha: alpha[{}] = {}, expected a positive number", k, alpha[k]));
  std::vector<std::map<std::int64_t, std::int64_t>> topic_counts(K);
  std::map<std::int64_t, std::int64_t> length_counts;
  for (std::size_t d = 0; d < D; ++d) {
    if (doc_lengths[d] > 0) ++length_counts[doc_lengths[d]];
    for (std::size_t k = 0; k < K; ++k)
      if (const std::int32_t n = doc_topic[d * K + k]; n > 0) ++topic_counts[k][n];
  }
  const Histogram lengths = to_histogram(length_counts);
  std::vector<Histogram> topics(K);
  for (std::size_t k = 0; k < K; ++k) topics[k] = to_histogram(topic_counts[k]);
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
