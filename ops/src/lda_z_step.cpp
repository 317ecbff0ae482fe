// LdaZStep: argument checks, spec choice, and the launch of the generated lda_z kernel.
#include "bfly/ops/lda_z_step.hpp"

#include "lda_arguments.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include <fmt/format.h>

#include <tuple>

namespace bfly::rt {
namespace {

// lda_z_doc: the smallest K given W = 32 (below: the Sampler's rule, W = 16 from K = 16 on). From the K = 4..1024
// sweeps on the paper-shaped corpus (H100, bench/results/h100-80gb-hbm3-2026-11-23-lda-sweep-f{32,64}.csv): in f32
// W = 16 was faster at 212 of the 253 K >= 16 and W = 32 only at large multiples of 32 (K = 1024: 2.02 ms
// against 2.39); this threshold leaves the choice within 1.2% of the better of the two on average (17% at worst).
// In f64 W = 16 falls behind from K ~ 600 (K = 768: 6.06 ms against 3.14); threshold 512: within 1.5% on average.
constexpr int doc_w32_from_k(gen::ElementType type) { return type == gen::ElementType::f32 ? 1024 : 512; }

}  // namespace

struct LdaZStep::State {
  LoadedKernels kernels;
};

LdaZStep::LdaZStep(LdaZOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {
  choose_spec(1024, gen::ElementType::f32, options_);  // a bad forced W, R or variant is reported here
}
LdaZStep::LdaZStep(LdaZStep&&) noexcept = default;
LdaZStep& LdaZStep::operator=(LdaZStep&&) noexcept = default;
LdaZStep::~LdaZStep() = default;

gen::KernelSpec LdaZStep::choose_spec(int K, gen::ElementType type, const LdaZOptions& options) {
  const gen::Operation operation = options.operation.value_or(gen::Operation::lda_z_doc);
  if (!gen::is_lda(operation))
    throw Error(fmt::format("LdaZOptions::operation = {} is not an LDA z-step; use lda_z_doc or lda_z",
                            gen::name_of(operation)));
  SamplerOptions sampler;
  sampler.W = options.W;
  sampler.variant = options.variant;
  sampler.R = options.R;
  if (operation == gen::Operation::lda_z_doc) {
    // One document per group: W = 32 from doc_w32_from_k(type) on, and addsub in both types (quick run of
    // 2026-11-23, K = 1024: f64 4.07 ms against 4.49 for swap; f32 2.02 against 2.22).
    if (!sampler.W && K >= doc_w32_from_k(type)) sampler.W = 32;
    if (!sampler.variant) sampler.variant = gen::Variant::addsub;
    // Short documents leave most lanes of a group idle in their one round: on the WordNet glosses (7 tokens a
    // document, H100, bench/results/h100-80gb-hbm3-2026-11-23-wordnet-k1024-gpu.log) K = 64 ran its z-step in
    // 0.112 ms with W = 8 against 0.180 ms with the default 16, and K = 1024 in 1.53 ms with W = 16 against 2.00 ms
    // with 32 (W = 8 there: 1.84 ms, so the width is halved once).
    if (!options.W && options.mean_document_length > 0) {
      const int W = Sampler::choose_spec(K, type, sampler).W;
      if (W > 8 && options.mean_document_length < W / 2.0) sampler.W = W / 2;
    }
  } else {
    // One document per lane (the paper's Algorithm 7): W = 32 beat W = 16 from K = 256 on (2026-11-22; f32
    // K = 1024: 12.1 ms against 18.8 ms; f64: 20.1 against 66.9), while W = 16 stayed ahead below.
    if (!sampler.W && K >= 256) sampler.W = 32;
  }
  gen::KernelSpec spec = Sampler::choose_spec(K, type, sampler);
  spec.operation = operation;
  return spec;
}

template <typename T>
LdaZReport LdaZStep::run_typed(const T* theta, long long ld_theta, const T* phi, long long ld_phi,
                               const long long* doc_offsets, const int* words, int* z, long long D, int K,
                               std::uint64_t seed, unsigned int iteration, CUstream_st* stream) {
  if (K < 1 || K > gen::KernelSpec::kMaxK)
    throw Error(fmt::format("LdaZStep::run: K = {} is out of range; K must be in 1 .. {}", K, gen::KernelSpec::kMaxK));
  check_lda_shape("LdaZStep::run", K, ld_theta, ld_phi, D);
  LdaZReport report;
  report.spec = choose_spec(K, std::is_same_v<T, float> ? gen::ElementType::f32 : gen::ElementType::f64, options_);
  if (D == 0) return report;
  check_lda_pointers("LdaZStep::run", D,
                     {{theta, "theta"}, {phi, "phi"}, {doc_offsets, "doc_offsets"}, {words, "words"}, {z, "z"}});

  const Kernel& kernel = state_->kernels.get(report.spec);
  CUdeviceptr counters = 0;
  if (options_.report_invalid_tokens) {
    counters = state_->kernels.counters();
    reset_counters(counters, stream);
  }
  CUdeviceptr theta_arg = reinterpret_cast<CUdeviceptr>(theta), phi_arg = reinterpret_cast<CUdeviceptr>(phi);
  CUdeviceptr offsets_arg = reinterpret_cast<CUdeviceptr>(doc_offsets), words_arg = reinterpret_cast<CUdeviceptr>(words);
  CUdeviceptr z_arg = reinterpret_cast<CUdeviceptr>(z);
  long long ld_theta_arg = ld_theta, ld_phi_arg = ld_phi, d_arg = D;
  unsigned long long seed_arg = seed;
  unsigned int iteration_arg = iteration;
  void* arguments[] = {&theta_arg, &ld_theta_arg, &phi_arg, &ld_phi_arg, &offsets_arg, &words_arg,
                       &z_arg,     &d_arg,        &counters, &seed_arg,  &iteration_arg};
  launch_rows(kernel, D, stream, arguments);
  if (options_.report_invalid_tokens)
    std::tie(report.invalid_tokens, report.first_invalid_token) =
        read_counters(counters, stream, fmt::format("the LDA z-step with {}", kernel.name));
  return report;
}

LdaZReport LdaZStep::run(const float* theta, long long ld_theta, const float* phi, long long ld_phi,
                         const long long* doc_offsets, const int* words, int* z, long long D, int K,
                         std::uint64_t seed, unsigned int iteration, CUstream_st* stream) {
  return run_typed(theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, K, seed, iteration, stream);
}

LdaZReport LdaZStep::run(const double* theta, long long ld_theta, const double* phi, long long ld_phi,
                         const long long* doc_offsets, const int* words, int* z, long long D, int K,
                         std::uint64_t seed, unsigned int iteration, CUstream_st* stream) {
  return run_typed(theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, K, seed, iteration, stream);
}

}  // namespace bfly::rt
