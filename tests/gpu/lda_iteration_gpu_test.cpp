// The LDA iteration on the GPU (label gpu; every test skips itself without a device): bfly::rt::LdaIteration's
// counts equal the CPU reference's for the same z, its posterior means equal them within float rounding, its
// Dirichlet draws follow the CPU's gamma streams, its log-likelihood agrees within 1e-5 relative (also with a vector
// alpha, as learned priors make it); a short GPU training run recovers known topics; a GPU run resumed from a
// checkpoint ends exactly like an uninterrupted one, with learned priors too.
#include "bfly/lda/gpu_engine.hpp"
#include "gpu_support.hpp"
#include "lda_test_util.hpp"
#include "bfly/lda/reference.hpp"
#include "bfly/lda/trainer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using bfly::lda::Corpus;
using bfly::lda::Estimate;

// A random corpus (tests/lda/lda_test_util.hpp), documents sorted by length as the trainer keeps them.
Corpus random_corpus(std::int64_t docs, int vocab, int max_length, std::uint32_t seed) {
  return bfly::lda::sort_by_length(bfly::lda::test::random_corpus(docs, vocab, max_length, seed));
}

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// `asymmetric`: alpha_k drawn in [0.01, 2) per topic, set on the engine after a first estimate with the symmetric
// alpha (so the device's alpha is replaced as hyperparameter optimisation replaces it).
template <typename T>
void compare_with_cpu(int K, Estimate estimate, bool asymmetric = false) {
  const Corpus corpus = random_corpus(700, 300, 120, 11u + K);
  bfly::lda::TrainerOptions options;
  options.topics = K;
  options.priors = {.alpha = 0.15, .beta = 0.02};
  options.seed = 0x5eedull + K;
  options.estimate = estimate;
  std::mt19937 rng(std::random_device{}());
  std::vector<std::int32_t> z(static_cast<std::size_t>(corpus.num_tokens()));
  for (auto& k : z) k = static_cast<std::int32_t>(rng() % K);
  const std::uint32_t iteration = 17;
  const bfly::lda::TrainerOptions symmetric_options = options;
  if (asymmetric) {
    std::uniform_real_distribution<double> alpha(0.01, 2.0);
    for (int k = 0; k < K; ++k) options.priors.topic_alpha.push_back(alpha(rng));
  }

  // CPU reference.
  const bfly::lda::Counts cpu_counts = bfly::lda::count_topics(corpus, K, z, 2);
  std::vector<T> cpu_theta(static_cast<std::size_t>(corpus.num_docs()) * K);
  std::vector<T> cpu_phi(static_cast<std::size_t>(corpus.vocab_size()) * K);
  bfly::lda::estimate_theta<T>(corpus, cpu_counts, options.priors, estimate, options.seed, iteration,
                               std::span<T>(cpu_theta), 2);
  bfly::lda::estimate_phi<T>(corpus, cpu_counts, options.priors, estimate, options.seed, iteration,
                             std::span<T>(cpu_phi), 2);
  const double cpu_ll = bfly::lda::log_likelihood(corpus, cpu_counts, options.priors, 2);

  // GPU.
  auto engine = bfly::lda::gpu_engine<T>();
  engine->bind(corpus, symmetric_options);
  double gpu_ll = engine->load(z, nullptr, nullptr, iteration);
  if (asymmetric) {
    engine->set_priors(options.priors);
    gpu_ll = engine->load(z, nullptr, nullptr, iteration);
  }
  std::vector<std::int32_t> gpu_z(z.size());
  std::vector<T> gpu_theta(cpu_theta.size(), T(-1)), gpu_phi(cpu_phi.size(), T(-1));
  bfly::lda::Counts gpu_counts;
  engine->download(gpu_z, gpu_theta, gpu_phi, gpu_counts);

  EXPECT_EQ(gpu_z, z);
  EXPECT_EQ(gpu_counts.doc_topic, cpu_counts.doc_topic) << "n_dk differs, K = " << K;
  EXPECT_EQ(gpu_counts.word_topic, cpu_counts.word_topic) << "n_wk differs, K = " << K;
  EXPECT_EQ(gpu_counts.topic, cpu_counts.topic) << "n_k differs, K = " << K;
  EXPECT_NEAR(gpu_ll, cpu_ll, 1e-5 * std::abs(cpu_ll)) << "K = " << K;
  EXPECT_NEAR(gpu_ll, cpu_ll, 1e-9 * std::abs(cpu_ll)) << "K = " << K << " (looser than expected from double sums)";

  const double tolerance = sizeof(T) == 4 ? 2e-7 : 1e-15;  // one rounding of the final conversion
  if (estimate == Estimate::mean) {
    for (std::size_t i = 0; i < cpu_theta.size(); ++i)
      ASSERT_NEAR(gpu_theta[i], cpu_theta[i], tolerance * cpu_theta[i]) << "theta element " << i << ", K = " << K;
    for (std::size_t i = 0; i < cpu_phi.size(); ++i)
      ASSERT_NEAR(gpu_phi[i], cpu_phi[i], tolerance * cpu_phi[i]) << "phi element " << i << ", K = " << K;
    return;
  }
  // Draws: the same gamma streams, so nearly every element agrees to rounding (device log/pow/cos may differ from
  // glibc's in the last bits, which can flip an acceptance now and then); every row still sums to 1.
  auto close_share = [](const std::vector<T>& a, const std::vector<T>& b) {
    std::size_t close = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (std::abs(double(a[i]) - double(b[i])) <= 1e-4 * std::abs(double(b[i])) + 1e-30) ++close;
    return double(close) / double(a.size());
  };
  EXPECT_GT(close_share(gpu_theta, cpu_theta), 0.999) << "K = " << K;
  EXPECT_GT(close_share(gpu_phi, cpu_phi), 0.999) << "K = " << K;
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += gpu_theta[m * K + k];
    ASSERT_NEAR(sum, 1.0, 1e-4) << "theta row " << m;
  }
  for (int k = 0; k < K; ++k) {
    double sum = 0;
    for (std::int64_t w = 0; w < corpus.vocab_size(); ++w) sum += gpu_phi[w * K + k];
    ASSERT_NEAR(sum, 1.0, 1e-4) << "phi column " << k;
  }
}

TEST(GpuLdaIteration, F32MeansCountsAndLikelihoodEqualCpu) {
  BFLY_REQUIRE_GPU();
  for (const int K : {1, 5, 32, 100, 1024, 13000}) compare_with_cpu<float>(K, Estimate::mean);
}
TEST(GpuLdaIteration, F64MeansCountsAndLikelihoodEqualCpu) {
  BFLY_REQUIRE_GPU();
  for (const int K : {3, 64, 257}) compare_with_cpu<double>(K, Estimate::mean);
}
TEST(GpuLdaIteration, F32DrawsFollowTheCpuStreams) {
  BFLY_REQUIRE_GPU();
  for (const int K : {4, 77, 512}) compare_with_cpu<float>(K, Estimate::draw);
}
TEST(GpuLdaIteration, F64DrawsFollowTheCpuStreams) {
  BFLY_REQUIRE_GPU();
  for (const int K : {6, 130}) compare_with_cpu<double>(K, Estimate::draw);
}
// A vector alpha (learned priors): the same agreement, the count terms computed per topic instead of tabulated.
TEST(GpuLdaIteration, AsymmetricAlphaEqualsCpu) {
  BFLY_REQUIRE_GPU();
  for (const int K : {5, 100, 1024}) compare_with_cpu<float>(K, Estimate::mean, true);
  for (const int K : {3, 257}) compare_with_cpu<double>(K, Estimate::mean, true);
  for (const int K : {4, 77}) compare_with_cpu<float>(K, Estimate::draw, true);
}

// The draws' distribution: over many iterations, the mean of the GPU's theta draws approaches the posterior mean.
TEST(GpuLdaIteration, DrawsAverageToThePosteriorMean) {
  BFLY_REQUIRE_GPU();
  const Corpus corpus = random_corpus(40, 30, 60, 3);
  const int K = 8;
  bfly::lda::TrainerOptions options;
  options.topics = K;
  options.priors = {.alpha = 0.5, .beta = 0.1};
  options.estimate = Estimate::draw;
  std::vector<std::int32_t> z(static_cast<std::size_t>(corpus.num_tokens()));
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = static_cast<std::int32_t>((i * 7 + i / 3) % K);
  const bfly::lda::Counts counts = bfly::lda::count_topics(corpus, K, z, 1);
  auto engine = bfly::lda::gpu_engine<double>();
  engine->bind(corpus, options);
  const int kDraws = 2000;
  std::vector<double> mean(static_cast<std::size_t>(corpus.num_docs()) * K, 0.0);
  std::vector<std::int32_t> zz(z.size());
  std::vector<double> theta(mean.size()), phi(static_cast<std::size_t>(corpus.vocab_size()) * K);
  bfly::lda::Counts unused;
  for (int t = 1; t <= kDraws; ++t) {
    engine->load(z, nullptr, nullptr, static_cast<std::uint32_t>(t));
    engine->download(zz, theta, phi, unused);
    for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += theta[i] / kDraws;
  }
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    const double total = static_cast<double>(corpus.doc_length(m)) + K * options.priors.alpha;
    for (int k = 0; k < K; ++k) {
      const double a = counts.doc_topic[m * K + k] + options.priors.alpha, p = a / total;
      const double sd = std::sqrt(p * (1 - p) / (total + 1) / kDraws);  // Dirichlet marginal's sd over the draws
      EXPECT_NEAR(mean[m * K + k], p, 5 * sd + 1e-12) << "document " << m << " topic " << k;
    }
  }
}

// Known topics (LDA's generative process, as tests/lda/test_recovery.cpp) are recovered by a GPU training run.
TEST(GpuLdaTraining, RecoversKnownTopics) {
  BFLY_REQUIRE_GPU();
  constexpr int kTopics = 6, kVocab = 60, kDocs = 1000, kLength = 80;
  const bfly::lda::test::KnownTopics generated =
      bfly::lda::test::known_topics_corpus(kTopics, kVocab, kDocs, kLength, 2026);
  const std::vector<std::vector<double>>& topics = generated.topics;
  const Corpus corpus = bfly::lda::sort_by_length(generated.corpus);

  for (const Estimate estimate : {Estimate::mean, Estimate::draw, Estimate::collapsed}) {
    bfly::lda::TrainerOptions options;
    options.topics = kTopics;
    options.priors = {.alpha = 0.3, .beta = 0.05};
    options.seed = 7;
    options.estimate = estimate;
    bfly::lda::Trainer<float> trainer(corpus, options, bfly::lda::gpu_engine<float>());
    const double ll0 = trainer.ll_per_token();
    for (int t = 0; t < 150; ++t) trainer.step();
    EXPECT_GT(trainer.ll_per_token(), ll0 + 0.2);
    const std::vector<double> matched = bfly::lda::test::best_matching(topics, trainer.phi());
    const double best_total = std::accumulate(matched.begin(), matched.end(), 0.0);
    for (int a = 0; a < kTopics; ++a)
      EXPECT_LT(matched[a], 0.15) << "true topic " << a << " (" << bfly::lda::name_of(estimate) << ")";
    EXPECT_LT(best_total / kTopics, 0.10) << bfly::lda::name_of(estimate);
    std::printf("GPU recovery (%s): mean L1 %.3f, ll/token %.4f (start %.4f)\n", bfly::lda::name_of(estimate),
                best_total / kTopics, trainer.ll_per_token(), ll0);
  }
}

template <typename T>
void check_gpu_resume(Estimate estimate, int optimize_interval = 0) {
  const Corpus corpus = random_corpus(500, 80, 90, 21);
  bfly::lda::TrainerOptions options;
  options.topics = 37;
  options.priors = {.alpha = 0.2, .beta = 0.03};
  options.seed = 0xfeedbeefcafeull;
  options.estimate = estimate;
  options.optimize_interval = optimize_interval;  // > 0: alpha and beta learned, the checkpoint holds a vector
  options.optimize_beta = optimize_interval > 0;
  constexpr int kIterations = 8;
  bfly::lda::Trainer<T> straight(corpus, options, bfly::lda::gpu_engine<T>());
  for (int t = 0; t < kIterations; ++t) straight.step();

  const auto dir = std::filesystem::path(::testing::TempDir()) / "bfly-gpu-resume";
  std::filesystem::create_directories(dir);
  const std::string checkpoint = (dir / "checkpoint.bin").string();
  {
    bfly::lda::Trainer<T> first_half(corpus, options, bfly::lda::gpu_engine<T>());
    for (int t = 0; t < kIterations / 2; ++t) first_half.step();
    first_half.save_checkpoint(checkpoint);
  }
  auto resumed = bfly::lda::Trainer<T>::resume(corpus, checkpoint, 2, bfly::lda::gpu_engine<T>());
  for (int t = kIterations / 2; t < kIterations; ++t) resumed.step();
  EXPECT_EQ(resumed.iteration(), straight.iteration());
  EXPECT_TRUE(same_bytes(resumed.z(), straight.z()));
  EXPECT_TRUE(same_bytes(resumed.theta(), straight.theta()));
  EXPECT_TRUE(same_bytes(resumed.phi(), straight.phi()));
  EXPECT_EQ(resumed.ll_per_token(), straight.ll_per_token());
  EXPECT_EQ(resumed.counts().doc_topic, straight.counts().doc_topic);
  EXPECT_EQ(resumed.options().priors.topic_alpha, straight.options().priors.topic_alpha);
  EXPECT_EQ(resumed.options().priors.beta, straight.options().priors.beta);
}

TEST(GpuLdaTraining, ResumeIsExactF32Mean) { BFLY_REQUIRE_GPU(); check_gpu_resume<float>(Estimate::mean); }
TEST(GpuLdaTraining, ResumeIsExactF32Draw) { BFLY_REQUIRE_GPU(); check_gpu_resume<float>(Estimate::draw); }
TEST(GpuLdaTraining, ResumeIsExactF64Draw) { BFLY_REQUIRE_GPU(); check_gpu_resume<double>(Estimate::draw); }
TEST(GpuLdaTraining, ResumeIsExactF32Collapsed) { BFLY_REQUIRE_GPU(); check_gpu_resume<float>(Estimate::collapsed); }
TEST(GpuLdaTraining, ResumeWithLearnedPriorsIsExact) {
  BFLY_REQUIRE_GPU();
  check_gpu_resume<float>(Estimate::mean, 3);
  check_gpu_resume<float>(Estimate::draw, 3);
  check_gpu_resume<float>(Estimate::collapsed, 3);
}

// Output averaging with the sums on the device: the GPU engine keeps them, and the averaged outputs equal the
// average of what mean_theta() and mean_phi() report after each averaged iteration (downloaded means, or for draws
// means the host computes from the downloaded counts), within one rounding; clear_average() empties them.
template <typename T>
void check_device_average(Estimate estimate, int optimize_interval) {
  const Corpus corpus = random_corpus(450, 90, 70, 31);
  bfly::lda::TrainerOptions options;
  options.topics = 19;
  options.priors = {.alpha = 0.2, .beta = 0.03};
  options.seed = 0xa5e7ull;
  options.estimate = estimate;
  options.optimize_interval = optimize_interval;  // > 0: the priors change between averaged iterations
  bfly::lda::Trainer<T> trainer(corpus, options, bfly::lda::gpu_engine<T>());
  ASSERT_TRUE(trainer.engine().keeps_mean_sums());
  for (int t = 0; t < 4; ++t) trainer.step();
  std::vector<double> theta_sum(static_cast<std::size_t>(corpus.num_docs()) * options.topics, 0.0);
  std::vector<double> phi_sum(static_cast<std::size_t>(corpus.vocab_size()) * options.topics, 0.0);
  constexpr int kAveraged = 5;
  for (int t = 0; t < kAveraged; ++t) {
    trainer.step();
    trainer.add_means_to_average();
    const std::vector<T> theta = trainer.mean_theta(), phi = trainer.mean_phi();
    for (std::size_t i = 0; i < theta.size(); ++i) theta_sum[i] += theta[i];
    for (std::size_t i = 0; i < phi.size(); ++i) phi_sum[i] += phi[i];
  }
  ASSERT_EQ(trainer.averaged_iterations(), kAveraged);
  const std::vector<T> theta = trainer.output_theta(), phi = trainer.output_phi();
  ASSERT_EQ(theta.size(), theta_sum.size());
  ASSERT_EQ(phi.size(), phi_sum.size());
  // Means on the device and on the host agree to 2e-7 relative in f32 (compare_with_cpu); so do their averages.
  const double tolerance = sizeof(T) == 4 ? 4e-7 : 1e-14;
  const auto label = std::string(bfly::lda::name_of(estimate)) + (optimize_interval > 0 ? ", learned priors" : "");
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double expected = theta_sum[i] / kAveraged;
    ASSERT_NEAR(theta[i], expected, tolerance * expected) << "theta element " << i << " (" << label << ")";
  }
  for (std::size_t i = 0; i < phi.size(); ++i) {
    const double expected = phi_sum[i] / kAveraged;
    ASSERT_NEAR(phi[i], expected, tolerance * expected) << "phi element " << i << " (" << label << ")";
  }
  // The average differs from the last iteration's means (else this test could not tell them apart).
  const std::vector<T> last = trainer.mean_phi();
  std::size_t differ = 0;
  for (std::size_t i = 0; i < phi.size(); ++i) differ += phi[i] != last[i];
  EXPECT_GT(differ, phi.size() / 10) << label;
  trainer.clear_average();
  EXPECT_EQ(trainer.averaged_iterations(), 0);
  EXPECT_EQ(trainer.output_phi(), trainer.mean_phi()) << label;
  trainer.step();
  trainer.add_means_to_average();  // the sums start again from zero: the average of one iteration is its means
  const std::vector<T> one = trainer.output_theta(), means = trainer.mean_theta();
  for (std::size_t i = 0; i < one.size(); ++i)
    ASSERT_NEAR(one[i], means[i], tolerance * means[i]) << "theta element " << i << " after clear_average (" << label
                                                        << ")";
}

TEST(GpuLdaTraining, AveragedOutputsSumOnTheDevice) {
  BFLY_REQUIRE_GPU();
  check_device_average<float>(Estimate::mean, 0);
  check_device_average<float>(Estimate::draw, 0);
  check_device_average<float>(Estimate::draw, 2);
  check_device_average<double>(Estimate::mean, 2);
}

// Learned priors on the GPU follow the CPU's: the GPU trainer's alpha after an optimisation step equals the fixed
// point on its own counts (computed here on the host from the downloaded n_dk).
TEST(GpuLdaTraining, LearnedAlphaIsTheFixedPointOfTheDeviceCounts) {
  BFLY_REQUIRE_GPU();
  const Corpus corpus = random_corpus(600, 120, 60, 8);
  bfly::lda::TrainerOptions options;
  options.topics = 16;
  options.optimize_interval = 4;
  bfly::lda::Trainer<float> gpu(corpus, options, bfly::lda::gpu_engine<float>());
  for (int t = 0; t < 3; ++t) gpu.step();
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(corpus.num_docs()));
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) lengths[m] = corpus.doc_length(m);
  gpu.step();  // iteration 4: the counts of this step give the new alpha
  const std::vector<double> expected =
      bfly::lda::optimize_alpha(gpu.counts().doc_topic, lengths, std::vector<double>(16, options.priors.alpha));
  EXPECT_EQ(gpu.options().priors.topic_alpha, expected);
}

// The GPU z-step inside the engine draws what the CPU reference draws, except where the uniform falls within
// rounding of a boundary (the butterfly sums round in another order): a small share at most. With the collapsed
// z-step the engine hands the kernel the device's n_k and the priors; a wrong one would move many draws.
TEST(GpuLdaTraining, GpuAndCpuTrainersStayClose) {
  BFLY_REQUIRE_GPU();
  const Corpus corpus = random_corpus(400, 100, 80, 4);
  for (const Estimate estimate : {Estimate::mean, Estimate::collapsed}) {
    bfly::lda::TrainerOptions options;
    options.topics = 24;
    options.estimate = estimate;
    bfly::lda::Trainer<double> gpu(corpus, options, bfly::lda::gpu_engine<double>());
    bfly::lda::Trainer<double> cpu(corpus, options, std::make_unique<bfly::lda::CpuZStep<double>>(2));
    gpu.step();
    cpu.step();
    std::size_t differ = 0;
    for (std::size_t i = 0; i < gpu.z().size(); ++i) differ += gpu.z()[i] != cpu.z()[i];
    EXPECT_LE(differ, gpu.z().size() / 1000 + 2)
        << "tokens whose first-iteration topic differs (" << bfly::lda::name_of(estimate) << ")";
  }
}

}  // namespace
