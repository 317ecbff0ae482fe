// Checkpoint and resume: N iterations straight equal N/2 + checkpoint + resume + N/2, byte for byte (z, theta,
// phi), for both element types and both estimates; damaged or mismatched checkpoints are refused.
#include "lda_test_util.hpp"
#include "bfly/lda/trainer.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

namespace {

using bfly::lda::CheckpointError;
using bfly::lda::Corpus;
using bfly::lda::Estimate;
using bfly::lda::Trainer;
using namespace bfly::lda::test;

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

bfly::lda::TrainerOptions options_for(Estimate estimate) {
  bfly::lda::TrainerOptions o;
  o.topics = 7;
  o.priors = {0.2, 0.03};
  o.seed = 0xfeedbeefcafeull;
  o.estimate = estimate;
  return o;
}

template <typename T>
void check_resume_equality(Estimate estimate) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(300, 40, 30, 21));
  const auto options = options_for(estimate);
  constexpr int kIterations = 8;

  Trainer<T> straight(corpus, options, std::make_unique<bfly::lda::CpuZStep<T>>(2));
  for (int t = 0; t < kIterations; ++t) straight.step();

  const std::string checkpoint = (scratch_dir() / "checkpoint.bin").string();
  {
    Trainer<T> first_half(corpus, options, std::make_unique<bfly::lda::CpuZStep<T>>(1));
    for (int t = 0; t < kIterations / 2; ++t) first_half.step();
    first_half.save_checkpoint(checkpoint);
  }
  Trainer<T> resumed = Trainer<T>::resume(corpus, checkpoint, 3, std::make_unique<bfly::lda::CpuZStep<T>>(3));
  EXPECT_EQ(resumed.iteration(), static_cast<std::uint32_t>(kIterations / 2));
  EXPECT_EQ(resumed.options().estimate, estimate);
  EXPECT_EQ(resumed.options().seed, options.seed);
  for (int t = kIterations / 2; t < kIterations; ++t) resumed.step();

  EXPECT_EQ(resumed.iteration(), straight.iteration());
  EXPECT_TRUE(same_bytes(resumed.z(), straight.z()));
  EXPECT_TRUE(same_bytes(resumed.theta(), straight.theta()));
  EXPECT_TRUE(same_bytes(resumed.phi(), straight.phi()));
  EXPECT_EQ(resumed.ll_per_token(), straight.ll_per_token());
}

TEST(CheckpointResume, F32MeanIsExact) { check_resume_equality<float>(Estimate::mean); }
TEST(CheckpointResume, F32DrawIsExact) { check_resume_equality<float>(Estimate::draw); }
TEST(CheckpointResume, F64MeanIsExact) { check_resume_equality<double>(Estimate::mean); }
TEST(CheckpointResume, F64DrawIsExact) { check_resume_equality<double>(Estimate::draw); }

TEST(CheckpointResume, RefusesDamagedAndMismatchedCheckpoints) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(50, 20, 10, 3));
  const auto dir = scratch_dir();
  const std::string good = (dir / "checkpoint.bin").string();
  Trainer<float> trainer(corpus, options_for(Estimate::mean), std::make_unique<bfly::lda::CpuZStep<float>>(1));
  trainer.step();
  trainer.save_checkpoint(good);
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "checkpoint.bin") << "a temporary file was left behind";

  const auto info = bfly::lda::read_checkpoint_info(dir.string());  // a directory means DIR/checkpoint.bin
  EXPECT_EQ(info.iteration, 1u);
  EXPECT_EQ(info.options.topics, 7);
  EXPECT_EQ(info.tokens, corpus.num_tokens());

  auto zstep = [] { return std::make_unique<bfly::lda::CpuZStep<float>>(1); };
  const std::string bytes = read_file(good);
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  const std::string damaged = write_file(dir / "damaged.bin", flipped);
  const std::string truncated = write_file(dir / "truncated.bin", bytes.substr(0, bytes.size() - 100));
  const std::string not_one = write_file(dir / "text.bin", "hello, I am not a checkpoint at all\n");
  auto message_of = [&](const std::string& path, const Corpus& c) -> std::string {
    try {
      Trainer<float>::resume(c, path, 1, zstep());
    } catch (const CheckpointError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message_of(damaged, corpus).find("checksum mismatch"), std::string::npos);
  EXPECT_NE(message_of(truncated, corpus).find("truncated"), std::string::npos);
  EXPECT_NE(message_of(not_one, corpus).find("not a bfly-lda checkpoint"), std::string::npos);
  EXPECT_NE(message_of((dir / "missing.bin").string(), corpus).find("cannot open"), std::string::npos);
  const Corpus other = bfly::lda::sort_by_length(random_corpus(50, 20, 10, 4));
  EXPECT_NE(message_of(good, other).find("another corpus"), std::string::npos);
  EXPECT_THROW(Trainer<double>::resume(corpus, good, 1, std::make_unique<bfly::lda::CpuZStep<double>>(1)),
               CheckpointError);
}

TEST(Outputs, FilesHaveTheDocumentedLayout) {
  const Corpus input = random_corpus(40, 25, 12, 9);
  const Corpus corpus = bfly::lda::sort_by_length(input);
  Trainer<float> trainer(corpus, options_for(Estimate::mean), std::make_unique<bfly::lda::CpuZStep<float>>(1));
  trainer.step();
  const auto dir = scratch_dir();
  trainer.write_outputs(dir.string(), 5);
  const std::string theta = read_file(dir / "theta.bin");
  ASSERT_EQ(theta.size(), 32 + 40 * 7 * sizeof(float));
  EXPECT_EQ(theta.substr(0, 8), "BFLYMAT1");
  std::uint32_t size = 0;
  std::uint64_t rows = 0, cols = 0;
  std::memcpy(&size, theta.data() + 8, 4);
  std::memcpy(&rows, theta.data() + 16, 8);
  std::memcpy(&cols, theta.data() + 24, 8);
  EXPECT_EQ(size, 4u);
  EXPECT_EQ(rows, 40u);
  EXPECT_EQ(cols, 7u);
  // Row r of theta.bin is input document r (sorting undone).
  const std::int64_t m = bfly::lda::input_order(corpus)[3];
  float row3[7];
  std::memcpy(row3, theta.data() + 32 + 3 * 7 * sizeof(float), sizeof row3);
  EXPECT_EQ(std::memcmp(row3, trainer.theta().data() + m * 7, sizeof row3), 0);
  EXPECT_EQ(read_file(dir / "phi.bin").size(), 32 + 25 * 7 * sizeof(float));
  EXPECT_EQ(read_file(dir / "vocab.txt"), vocab_text(corpus));
  const std::string topics = read_file(dir / "topics.txt");
  EXPECT_EQ(std::count(topics.begin(), topics.end(), '\n'), 7);
  EXPECT_EQ(topics.rfind("topic    0 (", 0), 0u) << topics;
}

}  // namespace
