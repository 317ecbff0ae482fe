// The GPU engine of bfly-lda: the generated butterfly z-step (bfly::rt::LdaZStep) and the rest of the iteration
// (bfly::rt::LdaIteration) on the device, the corpus uploaded once (bind) and z, theta and phi kept on the device
// between iterations; per iteration only the invalid-token count and the log-likelihood come back to the host.
#pragma once

#include "bfly/spec/kernel_spec.hpp"
#include "bfly/lda/trainer.hpp"

#include <memory>
#include <string>

namespace bfly::lda {

// What the GPU engine may be told; everything left empty is the runtime's choice (gen::choose_lda_z_spec).
struct GpuEngineOptions {
  int W = 0;              // 0: chosen; else 4, 8, 16 or 32
  std::string variant;    // "": chosen; else "swap" or "addsub"
};

// The z-step kernel the GPU engine launches for K topics of element type T on a corpus whose documents hold
// `mean_document_length` tokens on average (0: unknown): bfly::gen::choose_lda_z_spec with `options`. Without
// a GPU, bfly-lda runs this same kernel on the CPU when it is compiled in (generated_zstep.hpp).
template <typename T>
gen::KernelSpec gpu_z_spec(int K, const GpuEngineOptions& options = {}, double mean_document_length = 0);

// Tokens per document of `corpus` on average (0 for an empty corpus).
double mean_document_length(const Corpus& corpus);

// A GPU engine in the current CUDA context (device 0's primary context unless the thread has one). Throws
// bfly::Error when no GPU can be used (see gpu_available).
template <typename T>
std::unique_ptr<IterationEngine<T>> gpu_engine(const GpuEngineOptions& options = {});

// True when a driver and a device can be used; otherwise false with the reason in *why.
bool gpu_available(std::string* why = nullptr);

}  // namespace bfly::lda
