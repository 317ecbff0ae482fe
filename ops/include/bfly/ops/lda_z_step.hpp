// bfly::rt::LdaZStep: the LDA z-step on the GPU, a topic for every token drawn from theta[doc] * phi[word]
// by a generated lda_z kernel (the paper's Algorithms 5 and 7-10), JIT-compiled and cached like the Sampler's.
#pragma once

#include "bfly/spec/choose.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

struct CUstream_st;

namespace bfly::rt {

// What the caller may force or tell (operation, W, variant, R, mean document length: gen::LdaZChoice, anything left
// empty is chosen by gen::choose_lda_z_spec) and whether to read the invalid tokens back.
struct LdaZOptions : gen::LdaZChoice {
  bool report_invalid_tokens = true;  // read back {count, first token} of tokens written as -1
};

// The collapsed z-step (bfly-lda --estimate collapsed; docs/LDA.md): with these set, theta and phi must be the
// posterior means of the counts of z on entry, theta[m, k] = (n_mk + alpha_k) / (N_m + alpha_sum) and
// phi[w, k] = (n_wk + beta) / (n_k + v_beta), and each token is drawn from collapsed Gibbs sampling's conditional:
// with its own current topic z[t] left out of those counts. Left empty (topic_counts null): theta * phi as given.
struct LdaCollapsed {
  const int* topic_counts = nullptr;  // device array of K ints: n_k of z on entry
  double alpha_sum = 0;               // sum_k alpha_k of theta's means
  double v_beta = 0;                  // V * beta of phi's means
};

struct LdaZReport {
  gen::KernelSpec spec;
  long long invalid_tokens = 0;       // tokens whose weights were all zero (or not finite), written as -1
  long long first_invalid_token = -1;
};

class LdaZStep {
 public:
  explicit LdaZStep(LdaZOptions options = {});
  LdaZStep(LdaZStep&&) noexcept;
  LdaZStep& operator=(LdaZStep&&) noexcept;
  ~LdaZStep();

  // Device arrays: theta D x K with row stride ld_theta >= K (row m: document m's topic weights); phi V x K
  // with row stride ld_phi >= K (row w: word w's weight in every topic); doc_offsets D + 1 token offsets,
  // document m owning tokens doc_offsets[m] .. doc_offsets[m + 1] - 1; words: one word id < V per token;
  // z: one topic per token (written). The uniform of token t is Philox(seed; t, 0, iteration), so a step is
  // reproducible and independent of the launch. Lanes of a group stay busy when documents are sorted by
  // length. Arguments are validated before any launch; D == 0 does nothing. `collapsed` (optional) makes it the
  // collapsed z-step (LdaCollapsed above; its alpha_sum and v_beta must then be positive and finite).
  // T is a host type of the element-type table (float, double).
  template <typename T>
  LdaZReport run(const T* theta, long long ld_theta, const std::type_identity_t<T>* phi, long long ld_phi,
                 const long long* doc_offsets,
                 const int* words, int* z, long long D, int K, std::uint64_t seed, unsigned int iteration,
                 CUstream_st* stream = nullptr, const LdaCollapsed& collapsed = {}) {
    return run(gen::element_type_of<T>, theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, K, seed, iteration,
               stream, collapsed);
  }
  // The same with the element type given at run time.
  LdaZReport run(gen::ElementType type, const void* theta, long long ld_theta, const void* phi, long long ld_phi,
                 const long long* doc_offsets, const int* words, int* z, long long D, int K, std::uint64_t seed,
                 unsigned int iteration, CUstream_st* stream = nullptr, const LdaCollapsed& collapsed = {});

  // Compiles (or finds in the kernel cache) and loads the kernel of K and `type` in the current context now, so
  // that the first run() does not: bfly-lda prepares it before training, and its training seconds hold no
  // compilation.
  void prepare(int K, gen::ElementType type);

  // The spec used for K and type: gen::choose_lda_z_spec(K, type, options()).
  gen::KernelSpec spec_for(int K, gen::ElementType type) const { return gen::choose_lda_z_spec(K, type, options_); }
  const LdaZOptions& options() const { return options_; }

 private:
  struct State;
  LdaZOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace bfly::rt
