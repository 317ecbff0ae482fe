// Data-parallel training on GPUs (label gpu; every test skips itself without a device, the NCCL ones also without
// NCCL). The ranks' kernels run on shards of the corpus with whole-corpus token and document indices, and the
// result must equal the one-GPU engine's bit for bit (z, counts, theta, phi; the log-likelihood up to the order of
// its double sums):
//  - three GpuShardEngine ranks on ONE device, counts summed through the host (StagedExchange below): proves the
//    GPU side of the sharding on any machine with one GPU;
//  - multi_gpu_engine (NCCL) over every device of the machine (one rank on a one-GPU machine);
//  - a checkpoint of three ranks resumed on NCCL's ranks;
//  - learned priors (--optimize-interval): every rank learns the one-GPU alpha and beta;
//  - output averaging: the ranks' sums of the posterior means give the one-GPU engine's averages.
#include "bfly/lda/gpu_engine.hpp"
#include "bfly/lda/multi_gpu.hpp"
#include "gpu_support.hpp"
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using bfly::lda::Corpus;
using bfly::lda::DataParallelEngine;
using bfly::lda::Estimate;
using bfly::lda::Trainer;

#define BFLY_REQUIRE_NCCL()                                                       \
  do {                                                                           \
    try {                                                                        \
      (void)bfly::lda::nccl_version();                                          \
    } catch (const bfly::Error& e) {                                             \
      GTEST_SKIP() << e.what();                                                  \
    }                                                                            \
  } while (0)

// The ranks' device arrays summed on the host: lets several ranks share one GPU (NCCL refuses that).
class StagedExchange final : public bfly::lda::CountExchange {
 public:
  explicit StagedExchange(int ranks) : host_(ranks) {}
  std::string name() const override { return "staged through the host (" + host_.name() + ")"; }
  int world_size() const override { return host_.world_size(); }
  const std::vector<int>& local_ranks() const override { return host_.local_ranks(); }
  bool device_memory() const override { return true; }
  void sum(std::span<std::int32_t* const> arrays, std::size_t count) override {
    std::vector<std::vector<std::int32_t>> host(arrays.size(), std::vector<std::int32_t>(count));
    std::vector<std::int32_t*> pointers;
    const bfly::rt::Driver& d = bfly::rt::driver();
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      bfly::rt::check(d.MemcpyDtoH(host[i].data(), reinterpret_cast<CUdeviceptr>(arrays[i]), count * 4), "DtoH");
      pointers.push_back(host[i].data());
    }
    host_.sum(pointers, count);
    for (std::size_t i = 0; i < arrays.size(); ++i)
      bfly::rt::check(d.MemcpyHtoD(reinterpret_cast<CUdeviceptr>(arrays[i]), host[i].data(), count * 4), "HtoD");
  }
  void gather(std::span<const double* const> send, std::size_t count, std::span<double> all) override {
    host_.gather(send, count, all);
  }

 private:
  bfly::lda::InProcessExchange host_;
};

Corpus sorted_corpus(std::int64_t docs, int vocab, int max_length) {
  const auto seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "corpus seed " << seed);
  return bfly::lda::sort_by_length(bfly::lda::test::random_corpus(docs, vocab, max_length, seed));
}

template <typename T>
std::unique_ptr<bfly::lda::IterationEngine<T>> ranks_on_one_gpu(int ranks, const bfly::lda::GpuEngineOptions& gpu) {
  std::vector<std::unique_ptr<bfly::lda::ShardEngine<T>>> local;
  for (int r = 0; r < ranks; ++r) local.push_back(bfly::lda::gpu_shard_engine<T>(0, gpu));
  return std::make_unique<DataParallelEngine<T>>(std::make_shared<StagedExchange>(ranks), std::move(local), false);
}

template <typename V>
bool same_bytes(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(V)) == 0);
}

template <typename T>
void expect_same_state(const Trainer<T>& expected, const Trainer<T>& actual) {
  EXPECT_EQ(expected.iteration(), actual.iteration());
  EXPECT_TRUE(same_bytes(expected.z(), actual.z())) << "z";
  EXPECT_TRUE(same_bytes(expected.theta(), actual.theta())) << "theta";
  EXPECT_TRUE(same_bytes(expected.phi(), actual.phi())) << "phi";
  EXPECT_TRUE(same_bytes(expected.counts().doc_topic, actual.counts().doc_topic)) << "n_dk";
  EXPECT_TRUE(same_bytes(expected.counts().word_topic, actual.counts().word_topic)) << "n_wk";
  EXPECT_TRUE(same_bytes(expected.counts().topic, actual.counts().topic)) << "n_k";
  // The one-GPU engine adds its block partials on the device, the ranks' on the host: last bits only.
  EXPECT_NEAR(expected.ll_per_token(), actual.ll_per_token(), 1e-12 * std::abs(expected.ll_per_token()));
}

bfly::lda::TrainerOptions options_for(int K, Estimate estimate) {
  bfly::lda::TrainerOptions options;
  options.topics = K;
  options.estimate = estimate;
  options.seed = std::random_device{}();
  return options;
}

// `optimize`: alpha and beta learned after iterations 2 and 4 (the ranks' histograms gathered), so the later
// iterations run with an asymmetric alpha on the device.
template <typename T>
void check_ranks_on_one_gpu(int K, Estimate estimate, int max_length, const bfly::lda::GpuEngineOptions& gpu = {},
                            bool optimize = false) {
  SCOPED_TRACE(::testing::Message() << "K = " << K << ", estimate " << bfly::lda::name_of(estimate)
                                    << ", documents up to " << max_length << " tokens, W " << gpu.W
                                    << (optimize ? ", priors learned" : ""));
  const Corpus corpus = sorted_corpus(4500, 400, max_length);
  bfly::lda::TrainerOptions options = options_for(K, estimate);
  if (optimize) {
    options.optimize_interval = 2;
    options.optimize_beta = true;
  }
  Trainer<T> single(corpus, options, bfly::lda::gpu_engine<T>(gpu));
  Trainer<T> sharded(corpus, options, ranks_on_one_gpu<T>(3, gpu));
  for (const bfly::lda::Shard& shard : static_cast<const DataParallelEngine<T>&>(sharded.engine()).shards())
    ASSERT_GT(shard.tokens(), 0);
  expect_same_state(single, sharded);
  for (int t = 0; t < (optimize ? 5 : 3); ++t) {
    single.step();
    sharded.step();
  }
  expect_same_state(single, sharded);
  if (optimize) {
    ASSERT_EQ(single.options().priors.topic_alpha.size(), static_cast<std::size_t>(K));
    EXPECT_TRUE(same_bytes(single.options().priors.topic_alpha, sharded.options().priors.topic_alpha)) << "alpha";
    EXPECT_EQ(single.options().priors.beta, sharded.options().priors.beta);
  }
  // Output averaging: the ranks keep their sums of the posterior means on the device, and the averaged outputs
  // equal the one-GPU engine's.
  EXPECT_TRUE(sharded.engine().keeps_mean_sums());
  for (int t = 0; t < 2; ++t) {
    single.step();
    sharded.step();
    single.add_means_to_average();
    sharded.add_means_to_average();
  }
  EXPECT_TRUE(same_bytes(single.output_theta(), sharded.output_theta())) << "averaged theta";
  EXPECT_TRUE(same_bytes(single.output_phi(), sharded.output_phi())) << "averaged phi";
}

TEST(MultiGpu, ThreeRanksOnOneGpuEqualOneGpuF32Mean) {
  BFLY_REQUIRE_GPU();
  check_ranks_on_one_gpu<float>(64, Estimate::mean, 40);
  check_ranks_on_one_gpu<float>(1024, Estimate::mean, 300);
}
TEST(MultiGpu, ThreeRanksOnOneGpuEqualOneGpuWithLearnedPriors) {
  BFLY_REQUIRE_GPU();
  check_ranks_on_one_gpu<float>(64, Estimate::draw, 40, {}, true);
  check_ranks_on_one_gpu<double>(1024, Estimate::mean, 300, {}, true);
}
TEST(MultiGpu, ThreeRanksOnOneGpuEqualOneGpuF32DrawW32) {
  BFLY_REQUIRE_GPU();
  check_ranks_on_one_gpu<float>(64, Estimate::draw, 40, {.W = 32, .variant = ""});
}
TEST(MultiGpu, ThreeRanksOnOneGpuEqualOneGpuF64Draw) {
  BFLY_REQUIRE_GPU();
  check_ranks_on_one_gpu<double>(100, Estimate::draw, 60);
}
TEST(MultiGpu, ThreeRanksOnOneGpuEqualOneGpuCollapsed) {
  BFLY_REQUIRE_GPU();
  check_ranks_on_one_gpu<float>(64, Estimate::collapsed, 40, {}, true);
  check_ranks_on_one_gpu<double>(1024, Estimate::collapsed, 300);
}

TEST(MultiGpu, NcclOnEveryDeviceEqualsOneGpu) {
  BFLY_REQUIRE_GPU();
  BFLY_REQUIRE_NCCL();
  const int gpus = bfly::lda::gpu_count();
  const Corpus corpus = sorted_corpus(4500, 400, 200);
  const bfly::lda::TrainerOptions options = options_for(256, Estimate::draw);
  Trainer<float> single(corpus, options, bfly::lda::gpu_engine<float>());
  Trainer<float> nccl(corpus, options, bfly::lda::multi_gpu_engine<float>(gpus));
  std::printf("%d rank(s): %s\n", gpus, nccl.engine().name().c_str());
  for (int t = 0; t < 3; ++t) {
    single.step();
    nccl.step();
  }
  expect_same_state(single, nccl);
}

TEST(MultiGpu, CheckpointOfThreeRanksResumesOnNccl) {
  BFLY_REQUIRE_GPU();
  BFLY_REQUIRE_NCCL();
  const Corpus corpus = sorted_corpus(4500, 400, 100);
  const bfly::lda::TrainerOptions options = options_for(128, Estimate::mean);
  const std::string checkpoint = (bfly::lda::test::scratch_dir() / "checkpoint.bin").string();
  Trainer<float> single(corpus, options, bfly::lda::gpu_engine<float>());
  for (int t = 0; t < 4; ++t) single.step();
  {
    Trainer<float> three(corpus, options, ranks_on_one_gpu<float>(3, {}));
    three.step();
    three.step();
    three.save_checkpoint(checkpoint);
  }
  Trainer<float> resumed =
      Trainer<float>::resume(corpus, checkpoint, 0, bfly::lda::multi_gpu_engine<float>(bfly::lda::gpu_count()));
  resumed.step();
  resumed.step();
  expect_same_state(single, resumed);
}

}  // namespace
