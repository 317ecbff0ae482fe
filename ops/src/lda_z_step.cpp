// LdaZStep: argument checks, spec choice, and the launch of the generated lda_z kernel.
#include "bfly/ops/lda_z_step.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/module.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string_view>
#include <tuple>

namespace bfly::rt {

namespace {

// Throws unless K is in the range of the generated kernels; `caller` names the call.
void check_topics(int K, std::string_view caller) {
  if (K < 1 || K > gen::KernelSpec::kMaxK)
    throw Error(fmt::format("{}: K = {} is out of range; K must be in 1 .. {}", caller, K, gen::KernelSpec::kMaxK));
}

// Throws unless the collapsed z-step's priors are usable (they divide: 1 / (N_m + alpha_sum), n_k + v_beta - 1).
void check_collapsed(const LdaCollapsed& collapsed, std::string_view caller) {
  if (collapsed.topic_counts == nullptr) return;
  const auto positive = [](double x) { return x > 0 && std::isfinite(x); };
  if (!positive(collapsed.alpha_sum) || !positive(collapsed.v_beta))
    throw Error(fmt::format("{}: the collapsed z-step needs a positive finite alpha_sum and v_beta, got {} and {}",
                            caller, collapsed.alpha_sum, collapsed.v_beta));
}

}  // namespace

struct LdaZStep::State {
  LoadedKernels kernels;
};

LdaZStep::LdaZStep(LdaZOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {
  spec_for(1024, gen::ElementType::f32);  // a bad forced operation, W, R or variant is reported here
}
LdaZStep::LdaZStep(LdaZStep&&) noexcept = default;
LdaZStep& LdaZStep::operator=(LdaZStep&&) noexcept = default;
LdaZStep::~LdaZStep() = default;

void LdaZStep::prepare(int K, gen::ElementType type) {
  check_topics(K, "LdaZStep::prepare");
  state_->kernels.get(spec_for(K, type));
}

LdaZReport LdaZStep::run(gen::ElementType type, const void* theta, long long ld_theta, const void* phi,
                         long long ld_phi, const long long* doc_offsets, const int* words, int* z, long long D, int K,
                         std::uint64_t seed, unsigned int iteration, CUstream_st* stream,
                         const LdaCollapsed& collapsed) {
  check_topics(K, "LdaZStep::run");
  check_collapsed(collapsed, "LdaZStep::run");
  LdaZReport report;
  report.spec = spec_for(K, type);
  gen::PackedArgs args(gen::family_of(report.spec), report.spec.type, "LdaZStep::run",
                       {theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, collapsed.topic_counts,
                        collapsed.alpha_sum, collapsed.v_beta, nullptr, seed, iteration},
                       K);
  if (D == 0) return report;

  std::tie(report.invalid_tokens, report.first_invalid_token) =
      state_->kernels.launch(report.spec, args, options_.report_invalid_tokens, stream);
  return report;
}

}  // namespace bfly::rt
