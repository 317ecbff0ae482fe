// The GPU's z-step on the CPU: the generated lda_z kernels that the GPU engine launches for a few (K, type),
// written at build time by bfly-lda-emit-cpu-kernels (emit_cpu_kernels.cpp, specs from
// bfly::gen::choose_lda_z_spec), compiled into bfly-lda as C++ after bfly/lockstep.hpp and run over the
// kernel's whole grid on the CPU. Same source and same Philox uniforms as on the GPU (NVRTC compiles it with
// --fmad=false, the CPU build with -ffp-contract=off), so the draws are the GPU's, token for token.
#pragma once

#include "bfly/cpu/cpu_kernel.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/lda/zstep.hpp"

#include <span>
#include <string>
#include <string_view>

namespace bfly::lda {

// One generated z-step kernel compiled into bfly-lda: its spec and the CPU kernel (bfly::cpu::run takes the
// arguments of its family, as the GPU launch does).
struct CompiledZKernel {
  gen::KernelSpec spec;
  cpu::CpuKernel kernel;
};

// The kernels compiled into this build (CMake's BFLY_LDA_CPU_KERNELS), in that order.
std::span<const CompiledZKernel> compiled_z_kernels();

// The compiled kernel of `spec`, or nullptr when that spec was not compiled in.
const CompiledZKernel* find_compiled_z_kernel(const gen::KernelSpec& spec);

// The names of the compiled kernels, comma-separated (for messages).
std::string compiled_z_kernel_names();

// The z-step through a compiled generated kernel: grid_for_rows(D) CTAs of threads_per_cta threads
// (gen::launch_geometry of the kernel's spec), the CTAs spread over `threads` OS threads. Follows the ZStep
// contract (zstep.hpp); the thread count never changes the draws.
template <typename T>
class GeneratedCpuZStep final : public ZStep<T> {
 public:
  // Throws bfly::Error when the kernel's element type is not T. threads 0: the hardware's, at most 16.
  explicit GeneratedCpuZStep(const CompiledZKernel& kernel, int threads = 0);
  // "cpu bfly_lda_z_doc_f32_w16_k64_r8_addsub (bfly/lockstep.hpp, 2 threads)"
  std::string name() const override;
  // Throws bfly::Error when K is not the kernel's K or the sizes do not match the corpus.
  ZStepReport run(const Corpus& corpus, int K, std::span<const T> theta, std::span<const T> phi,
                  std::span<std::int32_t> z, std::uint64_t seed, std::uint32_t iteration,
                  const CollapsedTerms* collapsed = nullptr) override;
  const CompiledZKernel& kernel() const { return *kernel_; }
  int threads() const { return threads_; }

 private:
  const CompiledZKernel* kernel_;
  int threads_;
};

}  // namespace bfly::lda
