// Inference with phi fixed on the GPU (label gpu; skips itself without a device): the GPU's z-step
// (gpu_fixed_phi_zstep: the generated kernel, phi uploaded once) gives the same theta, bit for bit, as the same
// kernel run on the CPU (GeneratedCpuZStep, which draws what the GPU draws token for token), and the model API's
// infer picks the GPU.
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_inference.hpp"
#include "bfly/lda/topic_model.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "gpu_support.hpp"
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

namespace {

using namespace bfly::lda;
namespace gen = bfly::gen;

TEST(GpuLdaInference, GpuThetaEqualsTheGeneratedKernelOnTheCpu) {
  BFLY_REQUIRE_GPU();
  const int K = 64;
  const test::KnownTopics known = test::known_topics_corpus(K, 640, 300, 30, 2026);
  Model model;
  model.vocab = known.corpus.vocab;
  model.alpha.assign(K, 0.3);
  model.phi.resize(model.vocab.size() * K);
  for (int k = 0; k < K; ++k)
    for (std::size_t w = 0; w < model.vocab.size(); ++w) model.phi[w * K + k] = known.topics[k][w];
  const gen::KernelSpec spec = gpu_z_spec<float>(K, {}, mean_document_length(known.corpus));
  const CompiledZKernel* kernel = find_compiled_z_kernel(spec);
  if (kernel == nullptr) GTEST_SKIP() << gen::kernel_name(spec) << " is not compiled into this build";
  const InferenceOptions options{.iterations = 40, .seed = 17};
  const auto gpu = gpu_fixed_phi_zstep<float>();
  const Inference on_gpu = infer_with<float>(model, known.corpus, options, *gpu);
  const auto cpu = with_fixed_phi<float>(std::make_unique<GeneratedCpuZStep<float>>(*kernel, 2));
  const Inference on_cpu = infer_with<float>(model, known.corpus, options, *cpu);
  EXPECT_EQ(on_gpu.engine, "gpu " + gen::kernel_name(spec));
  ASSERT_EQ(on_gpu.theta.size(), on_cpu.theta.size());
  for (std::size_t i = 0; i < on_gpu.theta.size(); ++i)
    ASSERT_EQ(on_gpu.theta[i], on_cpu.theta[i]) << "theta entry " << i << " (document " << i / K << ")";
  const Inference automatic = infer(model, known.corpus, options);
  EXPECT_EQ(automatic.engine, on_gpu.engine);
  EXPECT_EQ(automatic.theta, on_gpu.theta);
  const Evaluation score = evaluate(model, known.corpus, known.corpus);
  EXPECT_GT(score.perplexity, 1.0);
  EXPECT_EQ(score.engine.rfind("gpu ", 0), 0u) << score.engine;
}

}  // namespace
