// GeneratedCpuZStep: the compiled generated lda_z kernels (see generated_zstep.hpp) behind the ZStep interface.
#include "bfly/lda/generated_zstep.hpp"

#include "bfly/spec/kernel_args.hpp"
#include "bfly/lda/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <type_traits>

namespace bfly::lda {

const CompiledZKernel* find_compiled_z_kernel(const gen::KernelSpec& spec) {
  const std::span<const CompiledZKernel> kernels = compiled_z_kernels();
  const auto it = std::find_if(kernels.begin(), kernels.end(), [&](const CompiledZKernel& k) { return k.spec == spec; });
  return it == kernels.end() ? nullptr : &*it;
}

std::string compiled_z_kernel_names() {
  std::string names;
  for (const CompiledZKernel& kernel : compiled_z_kernels())
    names += (names.empty() ? "" : ", ") + std::string(kernel.kernel.name);
  return names.empty() ? std::string("none") : names;
}

template <typename T>
GeneratedCpuZStep<T>::GeneratedCpuZStep(const CompiledZKernel& kernel, int threads)
    : kernel_(&kernel), threads_(resolve_threads(threads)) {
  constexpr gen::ElementType type = gen::element_type_of<T>;
  if (kernel.spec.type != type)
    throw Error(fmt::format("GeneratedCpuZStep: the kernel {} draws from {} weights, this z-step is for {}",
                            kernel.kernel.name, gen::name_of(kernel.spec.type), gen::name_of(type)));
}

template <typename T>
std::string GeneratedCpuZStep<T>::name() const {
  return fmt::format("cpu {} (bfly/lockstep.hpp, {} thread{})", kernel_->kernel.name, threads_, threads_ == 1 ? "" : "s");
}

template <typename T>
ZStepReport GeneratedCpuZStep<T>::run(const Corpus& corpus, int K, std::span<const T> theta, std::span<const T> phi,
                                      std::span<std::int32_t> z, std::uint64_t seed, std::uint32_t iteration,
                                      const CollapsedTerms* collapsed) {
  const std::int64_t D = corpus.num_docs();
  if (K != kernel_->spec.K)
    throw Error(fmt::format("GeneratedCpuZStep::run: K = {}, but the kernel {} is generated for K = {}", K,
                            kernel_->kernel.name, kernel_->spec.K));
  if (theta.size() != static_cast<std::size_t>(D) * K || phi.size() != static_cast<std::size_t>(corpus.vocab_size()) * K ||
      z.size() != static_cast<std::size_t>(corpus.num_tokens()))
    throw Error(fmt::format("GeneratedCpuZStep::run: sizes do not match the corpus (D = {}, V = {}, tokens = {}, "
                            "K = {}): theta {}, phi {}, z {}",
                            D, corpus.vocab_size(), corpus.num_tokens(), K, theta.size(), phi.size(), z.size()));
  if (corpus.first_token != 0)  // the kernel takes the token counters from doc_offsets, which a shard rebases
    throw Error("GeneratedCpuZStep::run: the corpus is a shard (first_token != 0); run shards through CpuZStep");
  if (collapsed != nullptr) check_collapsed(*collapsed, K, "GeneratedCpuZStep::run");
  ZStepReport report;
  if (D == 0) return report;
  static_assert(sizeof(long long) == sizeof(std::int64_t) && sizeof(int) == sizeof(std::int32_t));
  unsigned long long invalid[2] = {0, ~0ull};  // the kernel's counters: invalid tokens, first invalid token
  gen::PackedArgs args(gen::family(kernel_->kernel.family), kernel_->spec.type, "GeneratedCpuZStep::run",
                       {theta.data(), K, phi.data(), K, reinterpret_cast<const long long*>(corpus.doc_offsets.data()),
                        reinterpret_cast<const int*>(corpus.words.data()), reinterpret_cast<int*>(z.data()), D,
                        collapsed != nullptr ? collapsed->topic_counts.data() : nullptr,
                        collapsed != nullptr ? collapsed->alpha_sum : 0.0, collapsed != nullptr ? collapsed->v_beta : 0.0,
                        invalid, seed, iteration},
                       K);
  cpu::run(kernel_->kernel, args, threads_);
  report.invalid_tokens = static_cast<std::int64_t>(invalid[0]);
  if (report.invalid_tokens > 0) report.first_invalid = static_cast<std::int64_t>(invalid[1]);
  return report;
}

template class GeneratedCpuZStep<float>;
template class GeneratedCpuZStep<double>;

}  // namespace bfly::lda
