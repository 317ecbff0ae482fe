// The CPU reference of one uncollapsed Gibbs iteration of LDA: the z-step (Algorithms 1 and 2 of the paper, with
// the same Philox uniforms as the GPU kernels), the topic counts, theta and phi from the counts under Dirichlet
// priors, and the log-likelihood. It is the test oracle of the GPU path and bfly-lda's CPU fallback.
//
// Every random number comes from Philox4x32-10 keyed by the run's seed, with the counter
// (index lo, index hi, draw, iteration); the `draw` word separates the streams:
//   z-step           index = token,      draw = 0                          (the GPU kernels use the same)
//   initial topics   index = token,      draw = kStreamInit << 24,         iteration 0
//   theta gammas     index = m * K + k,  draw = kStreamTheta << 24 | attempt   (m counted in the whole corpus)
//   phi gammas       index = w * K + k,  draw = kStreamPhi << 24 | attempt
// so results do not depend on the thread count, and a run resumed at iteration t continues exactly.
#pragma once

#include "bfly/lda/zstep.hpp"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace bfly::lda {

inline constexpr std::uint32_t kStreamTheta = 1, kStreamPhi = 2, kStreamInit = 3;

// Dirichlet priors: alpha on each document's topics (symmetric, or one value per topic when `topic_alpha` is set,
// as hyperparameter optimisation learns it), symmetric beta on each topic's words.
struct Priors {
  double alpha = 0.1;               // every topic's alpha while topic_alpha is empty
  double beta = 0.01;
  std::vector<double> topic_alpha{};  // an asymmetric alpha: K positive values; empty: symmetric `alpha`

  bool symmetric_alpha() const { return topic_alpha.empty(); }
  double alpha_of(int k) const { return topic_alpha.empty() ? alpha : topic_alpha[static_cast<std::size_t>(k)]; }
  // sum_k alpha_k: K * alpha when symmetric (the formulas' K alpha, bit for bit), else the sum in topic order.
  double alpha_sum(int K) const;
  // alpha as K values (the symmetric value repeated when symmetric).
  std::vector<double> alpha_vector(int K) const;
  // Throws bfly::Error naming the bad value unless alpha (every entry, K of them) and beta are positive and finite.
  void check(int K) const;
};

// How theta and phi are formed from the counts, and what the z-step draws from them.
enum class Estimate {
  mean,       // posterior means: theta = (n_dk + alpha_k) / (N_d + sum alpha), phi = (n_wk + beta) / (n_k + V beta)
  draw,       // draws from the Dirichlet posteriors Dir(n_d. + alpha.), Dir(n_.k + beta) (the textbook Gibbs step)
  collapsed,  // posterior means, and the z-step leaves each token out of the counts behind them: collapsed Gibbs
              // sampling's conditional for every token at once (zstep.hpp, CollapsedTerms)
};
const char* name_of(Estimate estimate);
// "mean", "draw" or "collapsed"; throws bfly::Error naming the choices otherwise.
Estimate parse_estimate(std::string_view name);
// Whether theta and phi are the posterior means of the counts (mean and collapsed), as opposed to draws.
inline bool forms_means(Estimate estimate) { return estimate != Estimate::draw; }

// Topic counts of an assignment z.
struct Counts {
  int K = 0;
  std::vector<std::int32_t> doc_topic;   // n_dk, D x K row-major
  std::vector<std::int32_t> word_topic;  // n_wk, V x K row-major (word-major, like phi)
  std::vector<std::int64_t> topic;       // n_k, K
};

// The z-step on the CPU: sequential prefix sums in T of the rounded products theta * phi, the guarded target
// u * total, and the smallest k with target < prefix[k] (a binary search over the prefix, which finds the same k
// as the paper's linear search). Documents are split over `threads` threads; the draws do not depend on it.
template <typename T>
class CpuZStep final : public ZStep<T> {
 public:
  explicit CpuZStep(int threads = 0);  // 0: the hardware's thread count, at most 16
  std::string name() const override;
  ZStepReport run(const Corpus& corpus, int K, std::span<const T> theta, std::span<const T> phi,
                  std::span<std::int32_t> z, std::uint64_t seed, std::uint32_t iteration,
                  const CollapsedTerms* collapsed = nullptr) override;
  int threads() const { return threads_; }

 private:
  int threads_;
};

// The thread count 0 stands for: the hardware's, at most 16.
int resolve_threads(int threads);

// The uniform of a token's z draw, exactly as the kernels compute it.
template <typename T>
T token_uniform(std::uint64_t seed, std::uint64_t token, std::uint32_t iteration);

// u * total kept below total, exactly as bfly::scaled_uniform in templates/bfly/sample_support.cuh.
template <typename T>
T scaled_uniform(T u, T total);

// The collapsed z-step's correction (zstep.hpp, CollapsedTerms): how much the weight theta * phi (rounded to T, as
// the z-steps form it) of a token's own topic exceeds that topic's weight with the token left out of the counts,
//   (theta - 1 / (doc_tokens + alpha_sum)) * (phi * (n_k + v_beta) - 1) / (n_k + v_beta - 1),
// each factor formed in double, kept >= 0 and rounded to T; 0 when the latter is larger. The generated kernels
// compute the same (bfly::own_topic_excess in templates/bfly/sample_support.cuh).
template <typename T>
T own_topic_excess(T theta, T phi, std::int64_t doc_tokens, double alpha_sum, std::int32_t topic_count, double v_beta);

// Throws bfly::Error unless `collapsed` fits K (K topic counts) and its alpha_sum and v_beta are positive and finite;
// `caller` starts the message.
void check_collapsed(const CollapsedTerms& collapsed, int K, std::string_view caller);

// Topics drawn uniformly for the initial state (iteration 0).
void initial_topics(const Corpus& corpus, int K, std::uint64_t seed, std::span<std::int32_t> z);

// The counts of z (every z[i] must be in [0, K)).
Counts count_topics(const Corpus& corpus, int K, std::span<const std::int32_t> z, int threads = 0);

// theta (D x K) and phi (V x K) from the counts. `iteration` selects the random stream of Estimate::draw.
template <typename T>
void estimate_theta(const Corpus& corpus, const Counts& counts, const Priors& priors, Estimate estimate,
                    std::uint64_t seed, std::uint32_t iteration, std::span<T> theta, int threads = 0);
template <typename T>
void estimate_phi(const Corpus& corpus, const Counts& counts, const Priors& priors, Estimate estimate,
                  std::uint64_t seed, std::uint32_t iteration, std::span<T> phi, int threads = 0);

// The log-likelihood bfly-lda reports: the collapsed joint log p(w, z | alpha, beta), theta and phi integrated
// out (Griffiths & Steyvers 2004, eqs. 2-3), at the current z:
//   sum_d [ lgamma(A) - lgamma(N_d + A) + sum_k (lgamma(n_dk + alpha_k) - lgamma(alpha_k)) ],  A = sum_k alpha_k
//         (A = K alpha for a symmetric alpha)
// + sum_k [ lgamma(V beta) - lgamma(n_k + V beta) + sum_w (lgamma(n_wk + beta) - lgamma(beta)) ].
// It is the quantity tomotopy's LDAModel.ll_per_word reports (getLLDocs + getLLRest) when tomotopy keeps alpha
// fixed (optim_interval=0) and uses the same vocabulary; divide by the number of tokens for "per token".
// Only non-zero counts contribute to the inner sums, so the cost is O(tokens + (D + V) * K) cheap reads.
double log_likelihood(const Corpus& corpus, const Counts& counts, const Priors& priors, int threads = 0);

// log_likelihood in two parts, for runs whose documents are split into shards (sharding.hpp): the documents' terms
// as one partial sum per chunk of kLogLikelihoodChunk documents, and the rest (the words' terms per chunk of
// kLogLikelihoodChunk words, then the topics' terms) added to the documents' total. log_likelihood is
//   add_topic_log_likelihood(((0 + chunk 0) + chunk 1) + ..., corpus, counts, ...)
// so shards that start on chunk boundaries reproduce it bit for bit by adding their chunks in document order.
// add_topic_log_likelihood reads only the word and topic counts and the vocabulary size of `corpus`.
inline constexpr std::int64_t kLogLikelihoodChunk = 1024;
std::vector<double> document_log_likelihood_chunks(const Corpus& corpus, const Counts& counts, const Priors& priors,
                                                   int threads = 0);
double add_topic_log_likelihood(double documents, const Corpus& corpus, const Counts& counts, const Priors& priors,
                                int threads = 0);

// A Gamma(shape, 1) draw (Marsaglia & Tsang 2000; shape < 1 boosted by U^(1/shape)) from the Philox stream
// (seed, index, stream << 24 | attempt, iteration). Deterministic for its arguments.
double gamma_draw(double shape, std::uint64_t seed, std::uint64_t index, std::uint32_t stream,
                  std::uint32_t iteration);

}  // namespace bfly::lda
