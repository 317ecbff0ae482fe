// infer and evaluate with the z-step chosen as bfly-lda's training chooses (see topic_model.hpp).
#include "bfly/lda/topic_model.hpp"

#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_inference.hpp"

#include <fmt/format.h>

#include <type_traits>

namespace bfly::lda {

template <typename T>
std::unique_ptr<FixedPhiZStep<T>> inference_zstep(const Model& model, const Corpus& documents,
                                                  const Placement& placement, int threads, std::string* why) {
  auto say = [&](std::string line) {
    if (why != nullptr) *why = std::move(line);
  };
  std::string why_not_gpu;
  if (placement.device == Device::gpu ||
      (placement.device == Device::automatic && gpu_available(&why_not_gpu))) {
    say("gpu");
    return gpu_fixed_phi_zstep<T>(placement.gpu);
  }
  const std::string reason =
      placement.device == Device::cpu ? std::string("--device cpu") : fmt::format("no GPU ({})", why_not_gpu);
  threads = resolve_threads(threads);
  if (placement.cpu_zstep != CpuZStepMode::reference) {
    const gen::KernelSpec spec = gpu_z_spec<T>(model.topics(), placement.gpu, mean_document_length(documents));
    if (const CompiledZKernel* kernel = find_compiled_z_kernel(spec)) {
      say(fmt::format("{}: running the generated kernel {} on the CPU (bfly/lockstep.hpp, {} threads)", reason,
                      gen::kernel_name(spec), threads));
      return with_fixed_phi<T>(std::make_unique<GeneratedCpuZStep<T>>(*kernel, threads));
    }
    if (placement.cpu_zstep == CpuZStepMode::generated)
      throw RunError(fmt::format("--cpu-zstep generated: the GPU's kernel for K = {}, {}, is not compiled into this "
                                 "bfly-lda; compiled in: {} (CMake's BFLY_LDA_CPU_KERNELS)",
                                 model.topics(), gen::kernel_name(spec), compiled_z_kernel_names()));
  }
  say(fmt::format("{}: running the CPU reference z-step on {} threads", reason, threads));
  return with_fixed_phi<T>(std::make_unique<CpuZStep<T>>(threads));
}

namespace {

template <typename F>
auto in_model_type(const Model& model, F&& f) {
  if (model.type == gen::ElementType::f64) return f(double{});
  if (model.type == gen::ElementType::f32) return f(float{});
  throw Error(fmt::format("a bfly-lda model holds f32 or f64 values, not {}", gen::name_of(model.type)));
}

}  // namespace

Inference infer(const Model& model, const Corpus& documents, const InferenceOptions& options,
                const Placement& placement) {
  return in_model_type(model, [&](auto tag) {
    using T = decltype(tag);
    const auto zstep = inference_zstep<T>(model, documents, placement, options.threads);
    return infer_with<T>(model, documents, options, *zstep);
  });
}

Evaluation evaluate(const Model& model, const Corpus& heldout, const Corpus& reference,
                    const EvaluationOptions& options, const Placement& placement) {
  return in_model_type(model, [&](auto tag) {
    using T = decltype(tag);
    // The kernel's width follows the observed halves' mean length, the documents the z-step sees.
    const auto zstep = inference_zstep<T>(model, split_for_completion(heldout).observed, placement,
                                          options.inference.threads);
    return evaluate_with<T>(model, heldout, reference, options, *zstep);
  });
}

template std::unique_ptr<FixedPhiZStep<float>> inference_zstep<float>(const Model&, const Corpus&, const Placement&,
                                                                      int, std::string*);
template std::unique_ptr<FixedPhiZStep<double>> inference_zstep<double>(const Model&, const Corpus&,
                                                                        const Placement&, int, std::string*);

}  // namespace bfly::lda
