// Data-parallel training on the CPU: the shards run one after another through the in-process CountExchange, and
// every result (z, counts, theta, phi, log-likelihood) must equal the single-engine run's bit for bit, also after
// resuming a checkpoint on a different number of ranks. This is what makes N GPUs equal one.
#include "bfly/lda/data_parallel.hpp"
#include "bfly/lda/multi_gpu.hpp"
#include "bfly/lda/sharding.hpp"
#include "bfly/lda/trainer.hpp"

#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <optional>
#include <thread>
#include <utility>

#include <sys/wait.h>

namespace {

using bfly::lda::Corpus;
using bfly::lda::DataParallelEngine;
using bfly::lda::Estimate;
using bfly::lda::Shard;
using bfly::lda::Trainer;
using bfly::lda::kShardAlignment;

// Documents of very different lengths (1 .. 40 tokens), sorted by length as bfly-lda trains them, from a fresh seed.
Corpus sorted_corpus(std::int64_t docs, int vocab) {
  const auto seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "corpus seed " << seed);
  return bfly::lda::sort_by_length(bfly::lda::test::random_corpus(docs, vocab, 40, seed));
}

// `ranks` CPU ranks; one after another, or (`concurrent`) on a thread each, as GPU ranks run.
template <typename T>
std::unique_ptr<bfly::lda::IterationEngine<T>> sharded(int ranks, bool concurrent = false) {
  std::vector<std::unique_ptr<bfly::lda::ShardEngine<T>>> local;
  for (int r = 0; r < ranks; ++r) local.push_back(bfly::lda::cpu_shard_engine<T>(1 + r % 2));
  return std::make_unique<DataParallelEngine<T>>(std::make_shared<bfly::lda::InProcessExchange>(ranks),
                                                 std::move(local), concurrent);
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
  // Bit for bit, not within a tolerance: the shards add their chunks of the sum in the single run's order.
  EXPECT_EQ(expected.ll_per_token(), actual.ll_per_token());
}

TEST(Sharding, ShardsCoverTheCorpusAlignedAndBalancedByTokens) {
  const Corpus corpus = sorted_corpus(9000, 50);
  std::int64_t longest_block = 0;  // the most tokens of kShardAlignment consecutive documents
  for (std::int64_t m = 0; m < corpus.num_docs(); m += kShardAlignment)
    longest_block = std::max(longest_block, corpus.doc_offsets[std::min(corpus.num_docs(), m + kShardAlignment)] -
                                                corpus.doc_offsets[m]);
  const std::int64_t blocks = (corpus.num_docs() + kShardAlignment - 1) / kShardAlignment;  // 9
  for (const int n : {1, 2, 3, 5, 8, 9}) {
    SCOPED_TRACE(::testing::Message() << n << " shards");
    const std::vector<Shard> shards = bfly::lda::shard_by_tokens(corpus, n);
    ASSERT_EQ(shards.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(shards.front().first_doc, 0);
    EXPECT_EQ(shards.back().last_doc, corpus.num_docs());
    for (int s = 0; s < n; ++s) {
      if (s > 0) {
        EXPECT_EQ(shards[s].first_doc, shards[s - 1].last_doc);
      }
      EXPECT_EQ(shards[s].first_doc % kShardAlignment, 0);
      EXPECT_EQ(shards[s].first_token, corpus.doc_offsets[shards[s].first_doc]);
      EXPECT_EQ(shards[s].last_token, corpus.doc_offsets[shards[s].last_doc]);
      EXPECT_GT(shards[s].docs(), 0);  // n <= blocks: every shard has documents
      // With blocks to spare, every boundary is the aligned start nearest its share: no shard is off by more than
      // one block at each end.
      const double share = static_cast<double>(corpus.num_tokens()) / n;
      if (2 * n <= blocks) {
        EXPECT_LE(std::abs(static_cast<double>(shards[s].tokens()) - share), 2.0 * static_cast<double>(longest_block));
      }
    }
  }
  // More shards than blocks: one block each, the extra shards empty, all documents covered.
  const std::vector<Shard> many = bfly::lda::shard_by_tokens(corpus, 20);
  std::int64_t tokens = 0, empty = 0;
  for (const Shard& shard : many) {
    tokens += shard.tokens();
    empty += shard.docs() == 0 ? 1 : 0;
  }
  EXPECT_EQ(tokens, corpus.num_tokens());
  EXPECT_EQ(empty, 20 - blocks);
  EXPECT_THROW(bfly::lda::shard_by_tokens(corpus, 0), bfly::Error);
}

TEST(Sharding, ShardCorpusKeepsTheWholeCorpusIndices) {
  const Corpus corpus = sorted_corpus(3000, 30);
  const Shard shard = bfly::lda::shard_by_tokens(corpus, 2)[1];
  const Corpus part = bfly::lda::shard_corpus(corpus, shard);
  part.check();
  EXPECT_EQ(part.first_token, shard.first_token);
  EXPECT_EQ(part.first_doc, shard.first_doc);
  EXPECT_EQ(part.num_tokens(), shard.tokens());
  EXPECT_EQ(part.vocab_size(), corpus.vocab_size());
  for (std::int64_t m = 0; m < part.num_docs(); ++m)
    EXPECT_EQ(part.doc_length(m), corpus.doc_length(shard.first_doc + m));
  for (std::int64_t i = 0; i < part.num_tokens(); ++i) ASSERT_EQ(part.words[i], corpus.words[shard.first_token + i]);
}

template <typename T>
void check_sharded_equals_single(Estimate estimate, int ranks, bool concurrent = false, bool optimize = false) {
  SCOPED_TRACE(::testing::Message() << ranks << " ranks, estimate " << bfly::lda::name_of(estimate)
                                    << (concurrent ? ", a thread per rank" : "")
                                    << (optimize ? ", priors optimised" : ""));
  const Corpus corpus = sorted_corpus(5000, 60);  // 5 aligned blocks: every rank gets documents
  bfly::lda::TrainerOptions options;
  options.topics = 12;
  options.estimate = estimate;
  if (optimize) {  // alpha and beta learned after iterations 2 and 4: the ranks' histograms gathered
    options.optimize_interval = 2;
    options.optimize_beta = true;
  }
  options.seed = std::random_device{}();
  options.threads = 2;
  Trainer<T> single(corpus, options, std::make_unique<bfly::lda::CpuZStep<T>>(2));
  Trainer<T> parallel(corpus, options, sharded<T>(ranks, concurrent));
  const auto& engine = static_cast<const DataParallelEngine<T>&>(parallel.engine());
  for (const Shard& shard : engine.shards()) ASSERT_GT(shard.tokens(), 0);
  expect_same_state(single, parallel);  // the initial state
  for (int t = 0; t < (optimize ? 5 : 3); ++t) {
    single.step();
    parallel.step();
  }
  expect_same_state(single, parallel);
  if (optimize) {
    const bfly::lda::Priors& expected = single.options().priors;
    ASSERT_EQ(expected.topic_alpha.size(), 12u);
    EXPECT_TRUE(same_bytes(expected.topic_alpha, parallel.options().priors.topic_alpha)) << "alpha";
    EXPECT_EQ(expected.beta, parallel.options().priors.beta);
    EXPECT_NE(expected.beta, options.priors.beta) << "beta was not learned";
  }
}

TEST(Sharding, F32MeanOnTwoAndThreeRanksEqualsOne) {
  check_sharded_equals_single<float>(Estimate::mean, 2);
  check_sharded_equals_single<float>(Estimate::mean, 3);
}
TEST(Sharding, F32DrawOnThreeRanksEqualsOne) { check_sharded_equals_single<float>(Estimate::draw, 3); }
TEST(Sharding, F64DrawOnTwoRanksEqualsOne) { check_sharded_equals_single<double>(Estimate::draw, 2); }
TEST(Sharding, RanksOnThreadsEqualOne) { check_sharded_equals_single<float>(Estimate::draw, 4, true); }
TEST(Sharding, LearnedPriorsOnThreeRanksEqualOne) {
  check_sharded_equals_single<float>(Estimate::mean, 3, false, true);
  check_sharded_equals_single<double>(Estimate::draw, 2, true, true);
}
// The collapsed z-step on each rank reads the summed n_k, and the ranks form theta and phi again when the priors
// are learned, as the single engine does.
TEST(Sharding, CollapsedOnThreeRanksEqualsOne) {
  check_sharded_equals_single<float>(Estimate::collapsed, 3);
  check_sharded_equals_single<double>(Estimate::collapsed, 2, true, true);
}

TEST(Sharding, ResumesOnADifferentNumberOfRanks) {
  const Corpus corpus = sorted_corpus(5000, 60);
  bfly::lda::TrainerOptions options;
  options.topics = 10;
  options.estimate = Estimate::draw;
  options.seed = std::random_device{}();
  const std::string checkpoint = (bfly::lda::test::scratch_dir() / "checkpoint.bin").string();
  Trainer<float> single(corpus, options, std::make_unique<bfly::lda::CpuZStep<float>>(2));
  for (int t = 0; t < 4; ++t) single.step();
  {
    Trainer<float> three(corpus, options, sharded<float>(3));
    three.step();
    three.step();
    three.save_checkpoint(checkpoint);
  }
  Trainer<float> two = Trainer<float>::resume(corpus, checkpoint, 2, sharded<float>(2));
  EXPECT_EQ(two.iteration(), 2u);
  two.step();
  two.step();
  expect_same_state(single, two);
  // And back to one engine from a checkpoint written by two ranks.
  two.save_checkpoint(checkpoint);
  Trainer<float> one = Trainer<float>::resume(corpus, checkpoint, 2, std::make_unique<bfly::lda::CpuZStep<float>>(2));
  single.step();
  one.step();
  expect_same_state(single, one);
}

}  // namespace

namespace {

// bfly-lda's exit status and output (stdout and stderr) for `arguments`, with `environment` ("NAME=value ...").
std::pair<int, std::string> run_lda(const std::string& environment, const std::string& arguments) {
  const std::string log = (bfly::lda::test::scratch_dir("-run") / "run.log").string();
  const std::string command =
      environment + " '" + std::string(BFLY_LDA_EXE) + "' " + arguments + " > '" + log + "' 2>&1";
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, bfly::lda::test::read_file(log)};
}

TEST(MultiGpuCli, WithoutNcclTheRunSaysWhatIsMissing) {
  const auto dir = bfly::lda::test::scratch_dir();
  const std::string text = bfly::lda::test::write_file(dir / "text.txt", "apple banana cherry apple\nbanana cherry\n");
  // NCCL is opened only when --gpus asks for it, and before anything else: the message names the library.
  const auto [status, output] =
      run_lda("BFLY_NCCL_LIBRARY=/nonexistent/libnccl.so.2", "--text '" + text + "' --min-count 1 --gpus 2");
  EXPECT_EQ(status, 1) << output;
  EXPECT_NE(output.find("--gpus needs NCCL, and /nonexistent/libnccl.so.2 could not be opened"), std::string::npos)
      << output;
  const auto [bad_status, bad_output] = run_lda("", "--text '" + text + "' --min-count 1 --gpus 2 --device cpu");
  EXPECT_EQ(bad_status, 2) << bad_output;
  EXPECT_NE(bad_output.find("--gpus trains on GPUs; it contradicts --device cpu"), std::string::npos) << bad_output;
}

}  // namespace

// What a launch with one process per GPU needs before its NcclExchange (no GPU, no NCCL involved).
namespace {

// Sets environment variables for the life of the object and restores the earlier values.
class ScopedEnvironment {
 public:
  ScopedEnvironment(std::initializer_list<std::pair<const char*, const char*>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old != nullptr ? std::optional<std::string>(old) : std::nullopt});
      if (value != nullptr) ::setenv(name, value, 1);
      else ::unsetenv(name);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(Launch, RankFromTheLaunchersEnvironment) {
  const ScopedEnvironment clean({{"RANK", nullptr}, {"WORLD_SIZE", nullptr}, {"LOCAL_RANK", nullptr},
                                 {"OMPI_COMM_WORLD_RANK", nullptr}, {"OMPI_COMM_WORLD_SIZE", nullptr},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", nullptr}, {"SLURM_PROCID", nullptr},
                                 {"SLURM_NTASKS", nullptr}, {"SLURM_LOCALID", nullptr}});
  EXPECT_FALSE(bfly::lda::launch_rank_from_environment().has_value());
  {
    const ScopedEnvironment slurm({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}});
    const auto launch = bfly::lda::launch_rank_from_environment();
    ASSERT_TRUE(launch.has_value());
    EXPECT_EQ(launch->rank, 5);
    EXPECT_EQ(launch->world_size, 8);
    EXPECT_EQ(launch->local_rank, 1);
    // torchrun's variables win over the others.
    const ScopedEnvironment torchrun({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "3"}});
    EXPECT_EQ(bfly::lda::launch_rank_from_environment()->rank, 3);
  }
  {
    const ScopedEnvironment bad({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}});
    try {
      bfly::lda::launch_rank_from_environment();
      ADD_FAILURE() << "RANK = WORLD_SIZE accepted";
    } catch (const bfly::Error& e) {
      EXPECT_NE(std::string(e.what()).find("RANK=\"4\" is not an integer in [0, 3]"), std::string::npos) << e.what();
    }
  }
  {
    const ScopedEnvironment missing({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
    EXPECT_THROW(bfly::lda::launch_rank_from_environment(), bfly::Error);
  }
}

TEST(Launch, NcclIdReachesEveryRankThroughAFile) {
  const std::string path = (bfly::lda::test::scratch_dir() / "nccl-id").string();
  bfly::lda::NcclId made{};
  std::mt19937 rng(std::random_device{}());
  for (char& c : made) c = static_cast<char>(rng());
  std::vector<bfly::lda::NcclId> received(4);
  {
    std::vector<std::jthread> ranks;
    for (int r = 3; r >= 0; --r)  // the waiting ranks start first
      ranks.emplace_back([&, r] {
        if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        received[r] = bfly::lda::share_nccl_id_through_file(path, r, [&] { return made; }, 10.0);
      });
  }
  for (const bfly::lda::NcclId& id : received) EXPECT_EQ(id, made);
  // A second run must not pick up this run's id.
  EXPECT_THROW(bfly::lda::share_nccl_id_through_file(path, 0, [&] { return made; }), bfly::Error);
  // A rank whose rank 0 never comes gives up and says so.
  try {
    bfly::lda::share_nccl_id_through_file(path + ".absent", 1, [&] { return made; }, 0.05);
    ADD_FAILURE() << "no timeout";
  } catch (const bfly::Error& e) {
    EXPECT_NE(std::string(e.what()).find("waited"), std::string::npos) << e.what();
  }
}

}  // namespace
