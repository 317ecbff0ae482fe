// LdaBaselineStep: the generated LDA baseline through the cache, argument checks, and its launch.
#include "bfly/ops/lda_baseline_step.hpp"

#include "lda_arguments.hpp"

#include "bfly/error.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/jit/cache.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/jit/module.hpp"

#include <fmt/format.h>

#include <type_traits>
#include <utility>

namespace bfly::rt {

struct LdaBaselineStep::State {
  Kernel kernel;
};

LdaBaselineStep::LdaBaselineStep(const gen::LdaBaselineSpec& spec) : spec_(spec), state_(std::make_unique<State>()) {
  spec_.validate();
  const CacheLookup lookup =
      default_cache().get(gen::generate_lda_baseline(spec_), default_compile_options(current_device_arch()));
  state_->kernel = load(*lookup.kernel);
}

LdaBaselineStep::LdaBaselineStep(LdaBaselineStep&&) noexcept = default;
LdaBaselineStep& LdaBaselineStep::operator=(LdaBaselineStep&&) noexcept = default;
LdaBaselineStep::~LdaBaselineStep() = default;

const std::string& LdaBaselineStep::kernel_name() const { return state_->kernel.name; }

template <typename T>
void LdaBaselineStep::run_typed(const T* theta, long long ld_theta, const T* phi, long long ld_phi,
                                const long long* doc_offsets, const int* words, int* z, long long D, T* p,
                                std::uint64_t seed, unsigned int iteration, CUstream_st* stream,
                                unsigned long long* invalid_tokens) {
  const std::string& name = kernel_name();
  const gen::ElementType type = std::is_same_v<T, float> ? gen::ElementType::f32 : gen::ElementType::f64;
  if (type != spec_.type)
    throw Error(fmt::format("LdaBaselineStep::run: {} is built for {}, called with {} arrays", name,
                            gen::name_of(spec_.type), gen::name_of(type)));
  check_lda_shape("LdaBaselineStep::run", spec_.K, ld_theta, ld_phi, D);
  if (D == 0) return;
  check_lda_pointers("LdaBaselineStep::run", D,
                     {{theta, "theta"}, {phi, "phi"}, {doc_offsets, "doc_offsets"}, {words, "words"}, {z, "z"},
                      {p, "p"}});

  const auto device = [](const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); };
  CUdeviceptr theta_arg = device(theta), phi_arg = device(phi), offsets_arg = device(doc_offsets),
              words_arg = device(words), z_arg = device(z), p_arg = device(p), invalid_arg = device(invalid_tokens);
  long long ld_theta_arg = ld_theta, ld_phi_arg = ld_phi, d_arg = D;
  unsigned long long seed_arg = seed;
  unsigned int iteration_arg = iteration;
  void* arguments[] = {&theta_arg, &ld_theta_arg, &phi_arg, &ld_phi_arg,  &offsets_arg,   &words_arg,
                       &z_arg,     &d_arg,        &p_arg,   &invalid_arg, &seed_arg,      &iteration_arg};
  launch_rows(state_->kernel, D, stream, arguments);
}

void LdaBaselineStep::run(const float* theta, long long ld_theta, const float* phi, long long ld_phi,
                          const long long* doc_offsets, const int* words, int* z, long long D, float* p,
                          std::uint64_t seed, unsigned int iteration, CUstream_st* stream,
                          unsigned long long* invalid_tokens) {
  run_typed(theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, p, seed, iteration, stream, invalid_tokens);
}

void LdaBaselineStep::run(const double* theta, long long ld_theta, const double* phi, long long ld_phi,
                          const long long* doc_offsets, const int* words, int* z, long long D, double* p,
                          std::uint64_t seed, unsigned int iteration, CUstream_st* stream,
                          unsigned long long* invalid_tokens) {
  run_typed(theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, p, seed, iteration, stream, invalid_tokens);
}

}  // namespace bfly::rt
