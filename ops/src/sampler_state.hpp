// What a Sampler keeps per context: its loaded kernels and invalid-row counters (shared by its sample calls).
#pragma once

#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

namespace bfly::rt {

struct Sampler::State {
  LoadedKernels kernels;
};

}  // namespace bfly::rt
