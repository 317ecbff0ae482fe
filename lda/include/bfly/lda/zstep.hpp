// ZStep: the one interface through which the trainer draws the topics of all tokens (the LDA z-step), so that the
// CPU reference (reference.hpp) and the generated GPU kernels (bfly::rt::LdaZStep) are interchangeable.
#pragma once

#include "bfly/lda/corpus.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace bfly::lda {

// Tokens whose weights could not be sampled (total 0, NaN or infinite): their z is -1.
struct ZStepReport {
  std::int64_t invalid_tokens = 0;
  std::int64_t first_invalid = -1;  // smallest such token index, -1 if none
};

// The collapsed z-step (Estimate::collapsed, docs/LDA.md): theta and phi are the posterior means of the counts of
// z on entry, theta[m, k] = (n_mk + alpha_k) / (N_m + alpha_sum) and phi[w, k] = (n_wk + beta) / (n_k + v_beta),
// and each token is drawn with itself (its topic z[i] on entry) left out of those counts: collapsed Gibbs
// sampling's conditional, for every token at once from the counts of the previous sweep. Only the weight of the
// token's own topic changes (reference.hpp: own_topic_excess). What that needs besides theta and phi:
struct CollapsedTerms {
  std::span<const std::int32_t> topic_counts;  // n_k of z on entry, K values
  double alpha_sum = 0;                        // sum_k alpha_k behind theta
  double v_beta = 0;                           // V * beta behind phi (V: the whole vocabulary)
};

// The contract of every z-step implementation (this is what makes CPU and GPU runs comparable):
//  - for every token i of document m with word w = corpus.words[i], z[i] is drawn from the weights
//    theta[m * K + k] * phi[w * K + k], k < K (theta: D x K row-major, phi: V x K row-major, word-major rows);
//  - the uniform of token i is bfly::uniform_from_bits(bfly::philox_bits(seed, i, 0, iteration), T()) from
//    templates/bfly/philox.cuh, so the draw depends on (seed, token index, iteration) only, never on the launch
//    configuration or on the thread count;
//  - the drawn topic is the smallest k with u * total < prefix[k] (u * total guarded below total), up to rounding
//    of the sums: the CPU reference forms the sums sequentially in T (Algorithms 1 and 2), the butterfly kernels
//    in their own order, so draws may differ only where u * total lies within rounding distance of a boundary;
//  - a topic whose weight is 0 is never drawn; a token with an invalid total gets z = -1 and is reported;
//  - with `collapsed` (non-null), the weight of token i's own topic z[i] (read before it is overwritten) is lowered
//    by own_topic_excess, and the total with it (the kernels search the unlowered sums twice instead, which draws
//    the same topic up to rounding at a boundary).
template <typename T>
class ZStep {
 public:
  virtual ~ZStep() = default;

  // A short name for progress lines and logs, e.g. "cpu-reference (2 threads)" or "gpu bfly-addsub-w32".
  virtual std::string name() const = 0;

  // Called once, before the first run, with the corpus and K that every later run receives (the same object):
  // a GPU implementation uploads the CSR arrays here and keeps them.
  virtual void bind(const Corpus& corpus, int K) {
    (void)corpus;
    (void)K;
  }

  // Draws z for every token. theta.size() == D * K, phi.size() == V * K, z.size() == number of tokens (z holds the
  // current topics on entry when `collapsed` is given). Every override takes the same default for `collapsed`.
  virtual ZStepReport run(const Corpus& corpus, int K, std::span<const T> theta, std::span<const T> phi,
                          std::span<std::int32_t> z, std::uint64_t seed, std::uint32_t iteration,
                          const CollapsedTerms* collapsed = nullptr) = 0;
};

}  // namespace bfly::lda
