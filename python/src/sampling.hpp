// bfly.sample's compiled half: one call checks what the Python layer read of the arrays, chooses the kernel and,
// on the GPU, launches it (sampling.cpp); the CPU path runs the same spec with the same arguments
// (CpuKernelLibrary in module.cpp).
#pragma once

#include "bfly/spec/kernel_args.hpp"
#include "bfly/spec/kernel_spec.hpp"

#include <nanobind/nanobind.h>

#include <cstdint>

// One bfly.sample or bfly.sample_logits call, checked: the kernel, its arguments' values and the resolved seed.
struct SampleCall {
  bfly::gen::KernelSpec spec;
  const void* input = nullptr;
  long long M = 0;
  long long ld = 0;
  int num_samples = 1;       // draws per row; 1 also for the one-draw kernel
  bool one_draw = true;      // num_samples=None: the draws are (M,); from weights, Sampler::sample's kernel
  double temperature = 1.0;  // logits only
  std::uint64_t seed = 0;
  std::uint32_t iteration = 0;
};

// Re-chooses the kernel of a one-draw call from weights for the current context's device (check_call's is for a
// device unknown); other calls are left as they are.
void choose_for_device(SampleCall& call);

// The kernel arguments of `call` writing to `out` (M x num_samples ints); sample_split's scratch is passed in.
bfly::gen::PackedArgs call_arguments(const SampleCall& call, int* out, void* part_totals = nullptr,
                                     unsigned long long* arrivals = nullptr);

void bind_sampling(nanobind::module_& m);
