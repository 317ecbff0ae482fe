// The GPU's z-step kernels compiled into bfly-lda and run on the CPU (GeneratedCpuZStep): they are the kernels
// gen::choose_lda_z_spec picks, they draw what the plain reference (CpuZStep) draws except where the uniform lies
// within rounding of a boundary, invalid tokens are reported, the thread count changes nothing, and a run
// through them resumes from a checkpoint exactly.
#include "bfly/emit/generate.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "lda_test_util.hpp"
#include "bfly/lda/reference.hpp"
#include "reference_sampler.hpp"
#include "bfly/lda/trainer.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

// Last: its CUDA vocabulary (macros) must not reach the headers above. The test reads the CPU execution's
// per-thread state to see which grid the z-step launched.
#include "bfly/lockstep.hpp"

namespace {

using bfly::lda::CompiledZKernel;
using bfly::lda::Corpus;
using bfly::lda::GeneratedCpuZStep;
using namespace bfly::lda::test;

constexpr std::int32_t kPoison = 0x7eadbeef;

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename T>
bfly::gen::KernelSpec spec_for(int K, double mean_document_length = 0) {
  return bfly::lda::gpu_z_spec<T>(K, {}, mean_document_length);
}

// K = 64, f32, on the WordNet glosses (about 7 tokens a document): scripts/train-real-corpus.sh.
const CompiledZKernel& main_job_kernel() {
  const CompiledZKernel* kernel = bfly::lda::find_compiled_z_kernel(spec_for<float>(64, 7.0));
  if (kernel == nullptr) throw std::logic_error("the main job's kernel (K = 64, f32) is not compiled in");
  return *kernel;
}

// Random theta (D x K) and phi (V x K), about a quarter of the weights exactly zero (never to be drawn); topic 0
// is positive everywhere, so every token has a positive total.
template <typename T>
void random_model(const Corpus& c, int K, std::uint64_t seed, std::vector<T>& theta, std::vector<T>& phi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  auto fill = [&](std::vector<T>& v, std::size_t rows) {
    v.assign(rows * K, T(0));
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = i % K == 0 ? T(0.5) : value(rng) < 0.25 ? T(0) : static_cast<T>(value(rng));
  };
  fill(theta, static_cast<std::size_t>(c.num_docs()));
  fill(phi, static_cast<std::size_t>(c.vocab_size()));
}

TEST(CompiledZKernels, AreTheKernelsTheGpuEngineLaunches) {
  ASSERT_FALSE(bfly::lda::compiled_z_kernels().empty());
  for (const CompiledZKernel& kernel : bfly::lda::compiled_z_kernels()) {
    // What the GPU engine picks for the kernel's K and type, for documents of unknown length or short ones.
    const bool f32 = kernel.spec.type == bfly::gen::ElementType::f32;
    const bfly::gen::KernelSpec chosen = f32 ? spec_for<float>(kernel.spec.K) : spec_for<double>(kernel.spec.K);
    const bfly::gen::KernelSpec for_short = f32 ? spec_for<float>(kernel.spec.K, 1.0) : spec_for<double>(kernel.spec.K, 1.0);
    EXPECT_TRUE(kernel.spec == chosen || kernel.spec == for_short)
        << kernel.kernel.name << " is not what gen::choose_lda_z_spec picks for its K and type";
    EXPECT_EQ(kernel.kernel.name, bfly::gen::kernel_name(kernel.spec));
    EXPECT_EQ(bfly::lda::find_compiled_z_kernel(kernel.spec), &kernel);
  }
  EXPECT_EQ(main_job_kernel().spec.operation, bfly::gen::Operation::lda_z_doc);
  EXPECT_EQ(main_job_kernel().spec.W, 8) << "short documents: half the default W = 16";
  EXPECT_NE(bfly::lda::find_compiled_z_kernel(spec_for<float>(64)), nullptr) << "K = 64 for longer documents";
  EXPECT_EQ(bfly::lda::find_compiled_z_kernel(spec_for<float>(61)), nullptr) << "K = 61 is not in the build's list";
  EXPECT_NE(bfly::lda::compiled_z_kernel_names().find(std::string(main_job_kernel().kernel.name)), std::string::npos);
}

template <typename T>
void check_against_reference(const CompiledZKernel& kernel, long long& tokens, long long& boundary_total) {
  const int K = kernel.spec.K;
  // Documents of 1 to 45 tokens, sorted by length as the trainer does: groups of W lanes take several rounds.
  const Corpus c = bfly::lda::sort_by_length(random_corpus(300, 53, 45, static_cast<std::uint32_t>(K)));
  std::vector<T> theta, phi;
  random_model(c, K, bfly::test::run_seed() ^ static_cast<std::uint64_t>(K), theta, phi);
  const std::uint64_t seed = 0x5eed'0000ull + static_cast<std::uint64_t>(K);
  const std::uint32_t iteration = 11;
  std::vector<std::int32_t> generated(static_cast<std::size_t>(c.num_tokens()), kPoison), reference(generated);
  const auto report = GeneratedCpuZStep<T>(kernel, 2).run(c, K, theta, phi, generated, seed, iteration);
  EXPECT_EQ(report.invalid_tokens, 0) << kernel.kernel.name;
  EXPECT_EQ(report.first_invalid, -1) << kernel.kernel.name;
  bfly::lda::CpuZStep<T>(2).run(c, K, theta, phi, reference, seed, iteration);

  long long boundary = 0;
  std::vector<T> weights(static_cast<std::size_t>(K));
  for (std::int64_t m = 0; m < c.num_docs(); ++m)
    for (std::int64_t i = c.doc_offsets[m]; i < c.doc_offsets[m + 1]; ++i) {
      ASSERT_NE(generated[i], kPoison) << kernel.kernel.name << ": token " << i << " of document " << m << " was not drawn";
      if (generated[i] == reference[i]) continue;
      // Where the two differ, the uniform lies within rounding of a boundary: the exact (long double) reference
      // sampler must accept the generated kernel's draw, and the two sums (sequential, butterfly) each round.
      for (int k = 0; k < K; ++k) weights[k] = theta[m * K + k] * phi[static_cast<std::int64_t>(c.words[i]) * K + k];
      const T u = bfly::lda::token_uniform<T>(seed, static_cast<std::uint64_t>(i), iteration);
      const auto exact = bfly::test::reference_draw(weights.data(), K, u);
      std::string why;
      ASSERT_NE(bfly::test::check_draw(weights.data(), K, generated[i], exact, &why), bfly::test::DrawCheck::wrong)
          << kernel.kernel.name << ": token " << i << " drew " << generated[i] << ", the reference " << reference[i] << "; "
          << why;
      ++boundary;
    }
  EXPECT_LE(boundary, 2) << kernel.kernel.name;
  tokens += c.num_tokens();
  boundary_total += boundary;
}

TEST(GeneratedCpuZStep, DrawsEqualTheReferenceExceptBoundaryCases) {
  long long tokens = 0, boundary = 0;
  for (const CompiledZKernel& kernel : bfly::lda::compiled_z_kernels()) {
    if (kernel.spec.type == bfly::gen::ElementType::f32) check_against_reference<float>(kernel, tokens, boundary);
    else check_against_reference<double>(kernel, tokens, boundary);
    if (HasFatalFailure()) return;
  }
  std::printf("generated z-step on the CPU: %zu kernels, %lld tokens, %lld boundary cases\n",
              bfly::lda::compiled_z_kernels().size(), tokens, boundary);
}

// The collapsed z-step (theta and phi the means of the counts of a random z, each token left out of them): the
// generated kernels search their unlowered sums twice where needed, the reference sums the lowered weights; they
// draw the same topics except where the uniform lies within rounding of a boundary, and not what the plain z-step
// draws from the same state.
template <typename T>
void check_collapsed_against_reference(const CompiledZKernel& kernel, long long& tokens, long long& boundary_total) {
  const int K = kernel.spec.K;
  const Corpus c = bfly::lda::sort_by_length(random_corpus(300, 53, 45, static_cast<std::uint32_t>(K) + 1));
  const CollapsedState<T> state(c, K, {.alpha = 0.1, .beta = 0.01}, static_cast<std::uint32_t>(bfly::test::run_seed()));
  const bfly::lda::CollapsedTerms terms = state.terms();
  const std::uint64_t seed = 0xc011'0000ull + static_cast<std::uint64_t>(K);
  const std::uint32_t iteration = 5;
  std::vector<std::int32_t> generated = state.z, reference = state.z, plain = state.z;
  const auto report = GeneratedCpuZStep<T>(kernel, 2).run(c, K, state.theta, state.phi, generated, seed, iteration, &terms);
  EXPECT_EQ(report.invalid_tokens, 0) << kernel.kernel.name;
  bfly::lda::CpuZStep<T>(2).run(c, K, state.theta, state.phi, reference, seed, iteration, &terms);
  GeneratedCpuZStep<T>(kernel, 2).run(c, K, state.theta, state.phi, plain, seed, iteration);

  long long boundary = 0, unlike_plain = 0;
  std::vector<T> weights(static_cast<std::size_t>(K));
  for (std::int64_t m = 0; m < c.num_docs(); ++m)
    for (std::int64_t i = c.doc_offsets[m]; i < c.doc_offsets[m + 1]; ++i) {
      unlike_plain += generated[i] != plain[i];
      if (generated[i] == reference[i]) continue;
      const std::size_t word = static_cast<std::size_t>(c.words[i]);
      for (int k = 0; k < K; ++k) weights[k] = state.theta[m * K + k] * state.phi[word * K + k];
      const int own = state.z[i];
      weights[own] -= bfly::lda::own_topic_excess(state.theta[m * K + own], state.phi[word * K + own], c.doc_length(m),
                                                  state.alpha_sum, state.topic_counts[own], state.v_beta);
      const T u = bfly::lda::token_uniform<T>(seed, static_cast<std::uint64_t>(i), iteration);
      const auto exact = bfly::test::reference_draw(weights.data(), K, u);
      std::string why;
      ASSERT_NE(bfly::test::check_draw(weights.data(), K, generated[i], exact, &why), bfly::test::DrawCheck::wrong)
          << kernel.kernel.name << ": token " << i << " drew " << generated[i] << ", the reference " << reference[i]
          << "; " << why;
      ++boundary;
    }
  EXPECT_LE(boundary, 2) << kernel.kernel.name;
  EXPECT_GT(unlike_plain, c.num_tokens() / 20) << kernel.kernel.name << ": the collapsed draws are the plain ones";
  tokens += c.num_tokens();
  boundary_total += boundary;
}

TEST(GeneratedCpuZStep, CollapsedDrawsEqualTheReferenceExceptBoundaryCases) {
  long long tokens = 0, boundary = 0;
  for (const CompiledZKernel& kernel : bfly::lda::compiled_z_kernels()) {
    if (kernel.spec.type == bfly::gen::ElementType::f32) check_collapsed_against_reference<float>(kernel, tokens, boundary);
    else check_collapsed_against_reference<double>(kernel, tokens, boundary);
    if (HasFatalFailure()) return;
  }
  std::printf("collapsed z-step on the CPU: %zu kernels, %lld tokens, %lld boundary cases\n",
              bfly::lda::compiled_z_kernels().size(), tokens, boundary);
}

// On one worker thread the CTAs run on the calling thread: its lockstep state shows the launch, grid_for_rows(D)
// CTAs of threads_per_cta threads (lda_z_doc runs W threads per document, so the grid is not D / threads_per_cta).
TEST(GeneratedCpuZStep, LaunchesTheKernelsGridThroughLockstep) {
  for (const CompiledZKernel& kernel : bfly::lda::compiled_z_kernels()) {
    if (kernel.spec.type != bfly::gen::ElementType::f32) continue;
    const int K = kernel.spec.K;
    const Corpus c = bfly::lda::sort_by_length(random_corpus(123, 20, 10, 8));
    std::vector<float> theta, phi;
    random_model(c, K, 3, theta, phi);
    std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()), kPoison);
    dim3 grid, block;
    std::thread([&] {  // a fresh thread: fresh lockstep state
      GeneratedCpuZStep<float>(kernel, 1).run(c, K, theta, phi, z, 7, 1);
      grid = bfly::lockstep::worker().grid_dim;
      block = bfly::lockstep::worker().block_dim;
    }).join();
    const bfly::gen::LaunchGeometry geometry = bfly::gen::launch_geometry(kernel.spec);
    EXPECT_EQ(grid.x, static_cast<unsigned>(geometry.grid_for_rows(c.num_docs()))) << kernel.kernel.name;
    EXPECT_EQ(block.x, static_cast<unsigned>(geometry.threads_per_cta)) << kernel.kernel.name;
    EXPECT_EQ(std::count(z.begin(), z.end(), kPoison), 0) << kernel.kernel.name;
  }
}

TEST(GeneratedCpuZStep, ThreadCountDoesNotChangeDraws) {
  const CompiledZKernel& kernel = main_job_kernel();
  const Corpus c = bfly::lda::sort_by_length(random_corpus(1000, 40, 12, 5));  // several CTAs per worker
  std::vector<float> theta, phi;
  random_model(c, kernel.spec.K, 9, theta, phi);
  std::vector<std::int32_t> one(static_cast<std::size_t>(c.num_tokens())), three(one.size());
  GeneratedCpuZStep<float>(kernel, 1).run(c, kernel.spec.K, theta, phi, one, 42, 1);
  GeneratedCpuZStep<float>(kernel, 3).run(c, kernel.spec.K, theta, phi, three, 42, 1);
  EXPECT_EQ(one, three);
  GeneratedCpuZStep<float>(kernel, 3).run(c, kernel.spec.K, theta, phi, three, 42, 2);
  EXPECT_NE(one, three) << "the iteration must enter the counter";
}

TEST(GeneratedCpuZStep, InvalidTotalsGiveMinusOneAndAreReported) {
  const CompiledZKernel& kernel = main_job_kernel();
  const int K = kernel.spec.K;
  const Corpus c = random_corpus(40, 8, 20, 3);
  std::vector<float> theta, phi;
  random_model(c, K, 1, theta, phi);
  std::fill_n(theta.begin() + 7 * K, K, 0.0f);                    // document 7: total 0
  theta[23 * K + 5] = std::numeric_limits<float>::infinity();     // document 23: infinite
  std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()), kPoison);
  const auto report = GeneratedCpuZStep<float>(kernel, 2).run(c, K, theta, phi, z, 1, 1);
  EXPECT_EQ(report.invalid_tokens, c.doc_length(7) + c.doc_length(23));
  EXPECT_EQ(report.first_invalid, c.doc_offsets[7]);
  for (std::int64_t m = 0; m < c.num_docs(); ++m)
    for (std::int64_t i = c.doc_offsets[m]; i < c.doc_offsets[m + 1]; ++i)
      EXPECT_EQ(z[i] == -1, m == 7 || m == 23) << "token " << i << " of document " << m << " drew " << z[i];
}

TEST(GeneratedCpuZStep, RefusesAnotherKOrType) {
  const CompiledZKernel& kernel = main_job_kernel();
  const Corpus c = random_corpus(5, 6, 4, 1);
  std::vector<float> theta(static_cast<std::size_t>(c.num_docs()) * 32, 1.0f), phi(static_cast<std::size_t>(6) * 32, 1.0f);
  std::vector<std::int32_t> z(static_cast<std::size_t>(c.num_tokens()));
  GeneratedCpuZStep<float> zstep(kernel, 1);
  EXPECT_THROW(zstep.run(c, 32, theta, phi, z, 1, 1), bfly::Error);
  EXPECT_THROW(GeneratedCpuZStep<double>(kernel, 1), bfly::Error);
  EXPECT_EQ(zstep.name(), "cpu " + std::string(kernel.kernel.name) + " (bfly/lockstep.hpp, 1 thread)");
}

// N iterations straight equal N/2, a checkpoint, and N/2 more after resuming (other thread counts), byte for byte.
// optimize_interval 3: the checkpoint falls right after the priors were learned (the collapsed z-step's engines
// form theta and phi again under them).
template <typename T>
void check_resume(const CompiledZKernel& kernel, bfly::lda::Estimate estimate, int optimize_interval = 0) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(200, 60, 25, 21));
  bfly::lda::TrainerOptions options;
  options.topics = kernel.spec.K;
  options.priors = {.alpha = 0.2, .beta = 0.03};
  options.seed = 0xfeedbeefcafeull;
  options.estimate = estimate;
  options.optimize_interval = optimize_interval;
  constexpr int kIterations = 6;
  auto zstep = [&](int threads) { return std::make_unique<GeneratedCpuZStep<T>>(kernel, threads); };

  bfly::lda::Trainer<T> straight(corpus, options, zstep(2));
  for (int t = 0; t < kIterations; ++t) straight.step();
  const std::string checkpoint = (scratch_dir() / "checkpoint.bin").string();
  {
    bfly::lda::Trainer<T> first_half(corpus, options, zstep(1));
    for (int t = 0; t < kIterations / 2; ++t) first_half.step();
    first_half.save_checkpoint(checkpoint);
  }
  bfly::lda::Trainer<T> resumed = bfly::lda::Trainer<T>::resume(corpus, checkpoint, 3, zstep(3));
  for (int t = kIterations / 2; t < kIterations; ++t) resumed.step();
  EXPECT_EQ(resumed.iteration(), straight.iteration());
  EXPECT_TRUE(same_bytes(resumed.z(), straight.z()));
  EXPECT_TRUE(same_bytes(resumed.theta(), straight.theta()));
  EXPECT_TRUE(same_bytes(resumed.phi(), straight.phi()));
  EXPECT_EQ(resumed.ll_per_token(), straight.ll_per_token());
  EXPECT_EQ(resumed.options().priors.topic_alpha, straight.options().priors.topic_alpha);
}

TEST(GeneratedCpuZStep, ResumeIsExactMean) { check_resume<float>(main_job_kernel(), bfly::lda::Estimate::mean); }
TEST(GeneratedCpuZStep, ResumeIsExactDraw) { check_resume<float>(main_job_kernel(), bfly::lda::Estimate::draw); }
TEST(GeneratedCpuZStep, ResumeIsExactCollapsed) {
  check_resume<float>(main_job_kernel(), bfly::lda::Estimate::collapsed);
}
TEST(GeneratedCpuZStep, ResumeIsExactCollapsedWithLearnedPriors) {
  check_resume<float>(main_job_kernel(), bfly::lda::Estimate::collapsed, 3);
}

}  // namespace
