// bfly::rt::LdaBaselineStep: one of the paper's LDA z-step baselines (gen::generate_lda_baseline: Algorithm 1 with 3,
// Algorithm 4 with 6 and 3) for one K and type, compiled through the kernel cache and launched. For lda-bench and
// the GPU tests, which compare the baselines with LdaZStep; the trainer never uses them.
#pragma once

#include "bfly/spec/lda_baseline.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

struct CUstream_st;

namespace bfly::rt {

class LdaBaselineStep {
 public:
  // Compiles the baseline of `spec` (or finds it in the cache) for the current device and loads it into the
  // current context, where run() must be called. Throws bfly::Error for a bad spec, CompileError, CUDA errors.
  explicit LdaBaselineStep(const gen::LdaBaselineSpec& spec);
  LdaBaselineStep(LdaBaselineStep&&) noexcept;
  LdaBaselineStep& operator=(LdaBaselineStep&&) noexcept;
  ~LdaBaselineStep();

  // The arguments of LdaZStep::run for K = spec().K and the spec's type, plus the baseline's table p: device
  // scratch of D x K elements (the running sum k of document m's current token at p[k * D + m]; see the ABI in
  // bfly/emit/generate.hpp). invalid_tokens: null, or two device counters the caller set to {0, ~0ull}, which
  // receive the count and the first of the tokens written as -1. Asynchronous on `stream`; arguments are checked
  // before the launch (a type other than the spec's is an error); D == 0 does nothing.
  // T is a host type of the element-type table (float, double), deduced from theta.
  template <typename T>
  void run(const T* theta, long long ld_theta, const T* phi, long long ld_phi, const long long* doc_offsets,
           const int* words, int* z, long long D, std::type_identity_t<T>* p, std::uint64_t seed,
           unsigned int iteration, CUstream_st* stream = nullptr, unsigned long long* invalid_tokens = nullptr) {
    run(gen::element_type_of<T>, theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, p, seed, iteration, stream,
        invalid_tokens);
  }
  // The same with the element type given at run time (it must be the spec's).
  void run(gen::ElementType type, const void* theta, long long ld_theta, const void* phi, long long ld_phi,
           const long long* doc_offsets, const int* words, int* z, long long D, void* p, std::uint64_t seed,
           unsigned int iteration, CUstream_st* stream = nullptr, unsigned long long* invalid_tokens = nullptr);

  const gen::LdaBaselineSpec& spec() const { return spec_; }
  const std::string& kernel_name() const;

 private:
  struct State;
  gen::LdaBaselineSpec spec_;
  std::unique_ptr<State> state_;
};

}  // namespace bfly::rt
