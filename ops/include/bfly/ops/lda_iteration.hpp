// bfly::rt::LdaIteration: the rest of an uncollapsed Gibbs iteration of LDA on the GPU, after the z-step
// (LdaZStep): topic counts from z, theta and phi from the counts (posterior means or Dirichlet draws) and the
// collapsed log-likelihood, with the CPU reference's formulas and random streams (lda/include/bfly/lda/reference.hpp).
// The kernels are templates/bfly/lda_iteration.cuh, compiled through NVRTC and the kernel cache.
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

struct CUstream_st;

namespace bfly::rt {

// The sizes of one corpus and model; fixed for the life of an LdaIteration.
struct LdaShape {
  long long docs = 0;    // D
  long long vocab = 0;   // V
  long long tokens = 0;  // must be below 2^31 (the counts are 32-bit)
  int K = 0;             // topics, 1 .. 65536
  long long first_doc = 0;  // index of document 0 in the whole corpus when these are a shard's documents (the
                            // random streams of theta's draws use it); 0 for a whole corpus
};

// The per-block partial sums behind log_likelihood(), in the order the total adds them: the documents' terms, then
// the words' terms (the topics' terms, from n_k, follow). A data-parallel run adds its ranks' document partials.
struct LdaLogLikelihoodPartials {
  std::vector<double> documents, words;
};

enum class LdaEstimate {
  mean,  // theta = (n_dk + alpha_k) / (N_d + sum alpha), phi = (n_wk + beta) / (n_k + V beta), computed in double
  draw,  // Dirichlet draws: gamma variates from Philox (streams 1 and 2 of reference.hpp), normalised in double
};

struct LdaPriors {
  double alpha = 0.1;  // symmetric prior on each document's topics, > 0 (when topic_alpha is empty)
  double beta = 0.01;  // symmetric prior on each topic's words, > 0
  std::vector<double> topic_alpha{};  // an asymmetric prior: K values alpha_k > 0; empty: `alpha` for every topic
};

class LdaIteration {
 public:
  // Compiles (or finds in the cache) the kernels of `type` for the current device and allocates the counts and
  // scratch in the current context. Throws bfly::Error for bad sizes, CompileError, or CUDA errors.
  LdaIteration(const LdaShape& shape, gen::ElementType type);
  LdaIteration(LdaIteration&&) noexcept;
  LdaIteration& operator=(LdaIteration&&) noexcept;
  ~LdaIteration();

  // Counts of z into doc_topic() (n_dk, D x K), word_topic() (n_wk, V x K) and topic() (n_k, K), all int32
  // row-major device arrays. Device inputs: doc_offsets (D + 1, document m owns tokens doc_offsets[m] ..
  // doc_offsets[m + 1] - 1), words (one id < V per token), z (one topic per token; a topic outside [0, K) is
  // skipped and counted, see invalid_topics). Asynchronous on `stream`.
  void count(const long long* doc_offsets, const int* words, const int* z, CUstream_st* stream = nullptr);

  // theta (D x K, row stride K) and phi (V x K, row stride K), device arrays written from the counts of the last
  // count(); `seed` and `iteration` select the random streams of LdaEstimate::draw. Also forms the
  // log-likelihood of those counts, read by log_likelihood(). Asynchronous on `stream`.
  template <typename T>
  void estimate(const long long* doc_offsets, const LdaPriors& priors, LdaEstimate estimate, std::uint64_t seed,
                std::uint32_t iteration, T* theta, std::type_identity_t<T>* phi, CUstream_st* stream = nullptr) {
    this->estimate(gen::element_type_of<T>, doc_offsets, priors, estimate, seed, iteration, theta, phi, stream);
  }
  // The same with the element type given at run time (it must be type()).
  void estimate(gen::ElementType type, const long long* doc_offsets, const LdaPriors& priors, LdaEstimate estimate,
                std::uint64_t seed, std::uint32_t iteration, void* theta, void* phi, CUstream_st* stream = nullptr);

  // Output averaging: adds the posterior means of the last count()'s counts under `priors` (the values estimate()
  // writes with LdaEstimate::mean, rounded to type()) to running double sums, element by element: theta_sums
  // (D x K) and phi_sums (V x K), device arrays the caller zeroes and keeps. Asynchronous on `stream`.
  void add_means(const long long* doc_offsets, const LdaPriors& priors, double* theta_sums, double* phi_sums,
                 CUstream_st* stream = nullptr);

  // The collapsed log p(w, z | alpha, beta) of the last estimate() (synchronizes `stream`, reads 8 bytes).
  double log_likelihood(CUstream_st* stream = nullptr);

  // Tokens whose topic was outside [0, K) in the last count() (synchronizes `stream`).
  long long invalid_topics(CUstream_st* stream = nullptr);

  // The partials of the last estimate() (synchronizes `stream`).
  LdaLogLikelihoodPartials log_likelihood_partials(CUstream_st* stream = nullptr);

  const int* doc_topic() const;
  const int* word_topic() const;
  const int* topic() const;
  // n_wk and n_k for an in-place all-reduce between count() and estimate() (a data-parallel run sums its ranks').
  int* word_topic();
  int* topic();
  const LdaShape& shape() const { return shape_; }
  gen::ElementType type() const { return type_; }

 private:
  struct State;
  LdaShape shape_;
  gen::ElementType type_;
  std::unique_ptr<State> state_;
};

}  // namespace bfly::rt
