// bfly::rt::LdaZStep: the LDA z-step on the GPU, a topic for every token drawn from theta[doc] * phi[word]
// by a generated lda_z kernel (the paper's Algorithms 5 and 7-10), JIT-compiled and cached like the Sampler's.
#pragma once

#include "bfly/spec/kernel_spec.hpp"

#include <cstdint>
#include <memory>
#include <optional>

struct CUstream_st;

namespace bfly::rt {

// What the caller may force; anything left empty is chosen by LdaZStep::choose_spec.
struct LdaZOptions {
  // gen::Operation::lda_z_doc (one document per group of W lanes) or gen::Operation::lda_z (the paper's Algorithm 7,
  // one document per lane). Both take the same arguments and draw the same topics up to rounding at a boundary.
  std::optional<gen::Operation> operation;
  std::optional<int> W;  // 4, 8, 16 or 32
  std::optional<gen::Variant> variant;
  std::optional<int> R;  // remnant threshold, 0 .. W-1
  // Tokens per document of the corpus on average (0: unknown). lda_z_doc gives each document a group of W lanes,
  // so for short documents (fewer than W / 2 tokens on average) choose_spec halves its W, down to 8.
  double mean_document_length = 0;
  bool report_invalid_tokens = true;  // read back {count, first token} of tokens written as -1
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
  // length. Arguments are validated before any launch; D == 0 does nothing.
  LdaZReport run(const float* theta, long long ld_theta, const float* phi, long long ld_phi,
                 const long long* doc_offsets, const int* words, int* z, long long D, int K, std::uint64_t seed,
                 unsigned int iteration, CUstream_st* stream = nullptr);
  LdaZReport run(const double* theta, long long ld_theta, const double* phi, long long ld_phi,
                 const long long* doc_offsets, const int* words, int* z, long long D, int K, std::uint64_t seed,
                 unsigned int iteration, CUstream_st* stream = nullptr);

  // The spec used for K and type: operation lda_z_doc unless options.operation says lda_z; the Sampler's rule
  // (Sampler::choose_spec) for W and R, except W = 32 from K = 1024 on in f32 and from K = 512 in f64 (lda_z_doc;
  // from K = 256 for lda_z), halved once for lda_z_doc when options.mean_document_length is below W / 2, and the
  // addsub variant for lda_z_doc in both types. Measured on an H100 (bench/results).
  static gen::KernelSpec choose_spec(int K, gen::ElementType type, const LdaZOptions& options);

 private:
  template <typename T>
  LdaZReport run_typed(const T* theta, long long ld_theta, const T* phi, long long ld_phi,
                       const long long* doc_offsets, const int* words, int* z, long long D, int K, std::uint64_t seed,
                       unsigned int iteration, CUstream_st* stream);

  struct State;
  LdaZOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace bfly::rt
