// The z-step of inference on the GPU: the generated butterfly kernel (bfly::rt::LdaZStep) with phi uploaded once.
#pragma once

#include "bfly/lda/gpu_engine.hpp"
#include "bfly/lda/inference.hpp"

#include <memory>

namespace bfly::lda {

// A FixedPhiZStep on the GPU in the current CUDA context: bind uploads the corpus and phi, each run uploads theta
// (D x K), launches the kernel gpu_z_spec<T> picks for K and the documents' mean length, and copies z back. Draws
// what GpuEngine's z-step draws for the same theta and phi. Throws bfly::Error when no GPU can be used.
template <typename T>
std::unique_ptr<FixedPhiZStep<T>> gpu_fixed_phi_zstep(const GpuEngineOptions& options = {});

}  // namespace bfly::lda
