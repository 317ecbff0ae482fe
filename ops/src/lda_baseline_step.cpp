// LdaBaselineStep: the generated LDA baseline through the cache, argument checks, and its launch.
#include "bfly/ops/lda_baseline_step.hpp"

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

void LdaBaselineStep::run(gen::ElementType type, const void* theta, long long ld_theta, const void* phi,
                          long long ld_phi, const long long* doc_offsets, const int* words, int* z, long long D,
                          void* p, std::uint64_t seed, unsigned int iteration, CUstream_st* stream,
                          unsigned long long* invalid_tokens) {
  if (type != spec_.type)
    throw Error(fmt::format("LdaBaselineStep::run: {} is built for {}, called with {} arrays", kernel_name(),
                            gen::name_of(spec_.type), gen::name_of(type)));
  gen::PackedArgs args(gen::family_of(spec_), type, "LdaBaselineStep::run",
                       {theta, ld_theta, phi, ld_phi, doc_offsets, words, z, D, p, invalid_tokens, seed, iteration},
                       spec_.K);
  launch(state_->kernel, args, stream);
}

}  // namespace bfly::rt
