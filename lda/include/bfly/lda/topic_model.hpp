// The C++ API of a trained topic model, for programs and language bindings: load it, infer the topic mixtures of
// new documents (a transform) and evaluate it on held-out documents (a score), on the GPU when one can be used,
// else on the CPU (the GPU's generated z-step kernel when compiled in, else the CPU reference z-step), as
// bfly-lda's training chooses. Plain inputs: a Model (load_model or model_of) and documents as a Corpus in the
// model's vocabulary (doc_offsets, words; read_text_for / read_uci_for / in_vocabulary make one).
//
//   const bfly::lda::Model model = bfly::lda::load_model("runs/wordnet");
//   const bfly::lda::Corpus docs = bfly::lda::read_text_for(model, "new.txt");
//   const bfly::lda::Inference theta = bfly::lda::infer(model, docs, {.iterations = 100, .seed = 7});
//   const bfly::lda::Evaluation score = bfly::lda::evaluate(model, docs, docs);
#pragma once

#include "bfly/lda/evaluation.hpp"
#include "bfly/lda/inference.hpp"
#include "bfly/lda/run.hpp"

#include <memory>
#include <string>

namespace bfly::lda {

// Where inference runs (the same choices as a training run's --device, --cpu-zstep, --gpu-w, --gpu-variant).
struct Placement {
  Device device = Device::automatic;
  CpuZStepMode cpu_zstep = CpuZStepMode::automatic;
  GpuEngineOptions gpu;
};

// The inference z-step for `model` on `documents` as `placement` says; *why (when given) receives a line such as
// "no GPU (<reason>): running the generated kernel ... on the CPU". Throws RunError for --cpu-zstep generated
// without that kernel compiled in, bfly::Error for Device::gpu without a GPU.
template <typename T>
std::unique_ptr<FixedPhiZStep<T>> inference_zstep(const Model& model, const Corpus& documents,
                                                  const Placement& placement, int threads, std::string* why = nullptr);

// infer_with / evaluate_with (inference.hpp, evaluation.hpp) with the z-step of `placement`, in the model's type.
Inference infer(const Model& model, const Corpus& documents, const InferenceOptions& options = {},
                const Placement& placement = {});
Evaluation evaluate(const Model& model, const Corpus& heldout, const Corpus& reference,
                    const EvaluationOptions& options = {}, const Placement& placement = {});

}  // namespace bfly::lda
