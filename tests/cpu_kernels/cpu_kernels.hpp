// The draw-test catalog's generated kernels, compiled for the CPU: look one up and run it (lockstep).
#pragma once

#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"

#include <string_view>
#include <vector>

namespace bfly::test {

// One generated sample kernel compiled as C++. `launch` has the kernel ABI of gen::generate() and runs the
// whole grid on the CPU (bfly::lockstep), returning when every row is written.
struct CpuKernel {
  gen::KernelSpec spec;
  std::string_view name;
  int threads_per_cta;
  void (*launch)(const void* weights, long long M, long long ld, int* out, unsigned long long* invalid_rows,
                 unsigned long long seed, unsigned int iteration);
};

// One generated lda_z kernel compiled as C++, with the lda_z kernel ABI (see gen::generate()).
struct CpuLdaKernel {
  gen::KernelSpec spec;
  std::string_view name;
  int threads_per_cta;
  void (*launch)(const void* theta, long long ld_theta, const void* phi, long long ld_phi,
                 const long long* doc_offsets, const int* words, int* z, long long D,
                 unsigned long long* invalid_tokens, unsigned long long seed, unsigned int iteration);
};

// One LDA baseline compiled as C++, with the baseline kernel ABI (see gen::generate_lda_baseline()): p is scratch
// of D x K elements of the spec's type.
struct CpuLdaBaselineKernel {
  gen::LdaBaselineSpec spec;
  std::string_view name;
  int threads_per_cta;
  void (*launch)(const void* theta, long long ld_theta, const void* phi, long long ld_phi,
                 const long long* doc_offsets, const int* words, int* z, long long D, void* p,
                 unsigned long long* invalid_tokens, unsigned long long seed, unsigned int iteration);
};

// Every spec of gen::lda_baseline_test_specs(), in that order.
const std::vector<CpuLdaBaselineKernel>& cpu_lda_baseline_kernels();

// Every spec of gen::lda_test_specs(), in that order.
const std::vector<CpuLdaKernel>& cpu_lda_kernels();

// Every spec of gen::draw_test_specs(), in that order.
const std::vector<CpuKernel>& cpu_kernels();

// nullptr when `kernel_name` is not in the catalog.
const CpuKernel* find_cpu_kernel(std::string_view kernel_name);

// Runs `kernel` on the CPU over the whole grid for M rows.
void run_on_cpu(const CpuKernel& kernel, const void* weights, long long M, long long ld, int* out,
                unsigned long long* invalid_rows, unsigned long long seed, unsigned int iteration);

}  // namespace bfly::test
