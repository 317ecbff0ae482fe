// Checkpoint and resume: N iterations straight equal N/2 + checkpoint + resume + N/2, byte for byte (z, theta,
// phi), for both element types and both estimates; damaged or mismatched checkpoints are refused.
#include "lda_test_util.hpp"
#include "bfly/lda/trainer.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

namespace {

using bfly::lda::CheckpointError;
using bfly::lda::Corpus;
using bfly::lda::Estimate;
using bfly::lda::Trainer;
using namespace bfly::lda::test;

template <typename T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bfly::lda::TrainerOptions options_for(Estimate estimate) {
  bfly::lda::TrainerOptions o;
  o.topics = 7;
  o.priors = {.alpha = 0.2, .beta = 0.03};
  o.seed = 0xfeedbeefcafeull;
  o.estimate = estimate;
  return o;
}

// `optimize_interval` > 0: the priors are learned (alpha and beta), so the checkpoint carries a vector alpha.
template <typename T>
void check_resume_equality(Estimate estimate, int optimize_interval = 0) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(300, 40, 30, 21));
  auto options = options_for(estimate);
  options.optimize_interval = optimize_interval;
  options.optimize_beta = optimize_interval > 0;
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
  EXPECT_EQ(resumed.options().optimize_interval, optimize_interval);
  EXPECT_EQ(resumed.options().optimize_beta, optimize_interval > 0);
  if (optimize_interval > 0) {  // the checkpoint's alpha is the vector learned at iteration 3, read back exactly
    const auto info = bfly::lda::read_checkpoint_info(checkpoint);
    EXPECT_TRUE(info.asymmetric_alpha);
    EXPECT_EQ(info.options.priors.topic_alpha.size(), static_cast<std::size_t>(options.topics));
    EXPECT_TRUE(same_bytes(info.options.priors.topic_alpha, resumed.options().priors.topic_alpha));
    EXPECT_NE(resumed.options().priors.topic_alpha, std::vector<double>(7, options.priors.alpha));
  }
  for (int t = kIterations / 2; t < kIterations; ++t) resumed.step();
  EXPECT_TRUE(same_bytes(resumed.options().priors.topic_alpha, straight.options().priors.topic_alpha));
  EXPECT_EQ(resumed.options().priors.beta, straight.options().priors.beta);

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
TEST(CheckpointResume, WithLearnedPriorsIsExact) {
  check_resume_equality<float>(Estimate::mean, 3);
  check_resume_equality<double>(Estimate::draw, 3);
}

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
  std::string newer = bytes;  // a format this bfly-lda does not know (u32 after the 8-byte magic)
  newer[8] = 9;
  EXPECT_NE(message_of(write_file(dir / "newer.bin", newer), corpus).find("checkpoint format 9, this bfly-lda reads "
                                                                          "formats 1 to 2"),
            std::string::npos);
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
  std::istringstream alpha(read_file(dir / "alpha.txt"));  // one alpha_k per line, read back exactly
  int lines = 0;
  for (std::string line; std::getline(alpha, line); ++lines) EXPECT_EQ(std::strtod(line.c_str(), nullptr), 0.2);
  EXPECT_EQ(lines, 7);
}

// With Dirichlet draws between z-steps the outputs are still posterior means: phi.bin and theta.bin hold
// (n + prior) / (total + prior sum) from the last iteration's counts, computed here directly, not the draw the
// z-step used (which differs); the resumed run still continues from the draw (the checkpoint's own test).
TEST(Outputs, DrawRunsWritePosteriorMeans) {
  const Corpus input = random_corpus(40, 25, 12, 9);
  const Corpus corpus = bfly::lda::sort_by_length(input);
  const int K = 7, V = 25;
  Trainer<double> trainer(corpus, options_for(Estimate::draw), std::make_unique<bfly::lda::CpuZStep<double>>(1));
  trainer.step();
  trainer.step();
  const auto dir = scratch_dir();
  trainer.write_outputs(dir.string(), 5);
  const std::string phi_bytes = read_file(dir / "phi.bin"), theta_bytes = read_file(dir / "theta.bin");
  ASSERT_EQ(phi_bytes.size(), 32 + V * K * sizeof(double));
  std::vector<double> phi(static_cast<std::size_t>(V) * K), theta(40 * K);
  std::memcpy(phi.data(), phi_bytes.data() + 32, phi.size() * sizeof(double));
  std::memcpy(theta.data(), theta_bytes.data() + 32, theta.size() * sizeof(double));

  const bfly::lda::Counts& counts = trainer.counts();
  const bfly::lda::Priors& priors = trainer.options().priors;
  int differs_from_draw = 0;
  for (int w = 0; w < V; ++w)
    for (int k = 0; k < K; ++k) {
      const double mean = (counts.word_topic[w * K + k] + priors.beta) / (counts.topic[k] + V * priors.beta);
      EXPECT_NEAR(phi[w * K + k], mean, 1e-12 * mean) << "phi, word " << w << " topic " << k;
      differs_from_draw += std::abs(trainer.phi()[w * K + k] - mean) > 1e-6 * mean;
    }
  EXPECT_GT(differs_from_draw, V * K / 2) << "the z-step's phi should be a draw, not the mean";
  const std::vector<std::int64_t> order = bfly::lda::input_order(corpus);
  for (int row = 0; row < 40; ++row) {
    const std::int64_t m = order[row];
    const std::int64_t length = corpus.doc_offsets[m + 1] - corpus.doc_offsets[m];
    for (int k = 0; k < K; ++k) {
      const double mean = (counts.doc_topic[m * K + k] + priors.alpha) / (length + K * priors.alpha);
      EXPECT_NEAR(theta[row * K + k], mean, 1e-12 * mean) << "theta, row " << row << " topic " << k;
    }
  }
  // topics.txt ranks words by the mean too: topic 0's first word has the largest n_w0.
  std::int32_t best = 0;
  for (int w = 1; w < V; ++w)
    if (counts.word_topic[w * K] > counts.word_topic[best * K]) best = w;
  EXPECT_EQ(trainer.top_words(0, 1).at(0), best);
}

// add_means_to_average: the outputs become the average of the posterior means of the iterations added (here two),
// which differs from the last iteration's means, and phi.bin holds it.
TEST(Outputs, AveragedOutputsAverageTheIterationsPosteriorMeans) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(40, 25, 12, 9));
  Trainer<double> trainer(corpus, options_for(Estimate::draw), std::make_unique<bfly::lda::CpuZStep<double>>(1));
  EXPECT_EQ(trainer.averaged_iterations(), 0);
  trainer.step();
  const std::vector<double> phi1 = trainer.mean_phi(), theta1 = trainer.mean_theta();
  trainer.add_means_to_average();
  trainer.step();
  const std::vector<double> phi2 = trainer.mean_phi(), theta2 = trainer.mean_theta();
  EXPECT_TRUE(same_bytes(trainer.output_phi(), phi1)) << "one iteration added: its means";
  trainer.add_means_to_average();
  EXPECT_EQ(trainer.averaged_iterations(), 2);
  const std::vector<double> phi = trainer.output_phi(), theta = trainer.output_theta();
  int differs_from_last = 0;
  for (std::size_t i = 0; i < phi.size(); ++i) {
    EXPECT_DOUBLE_EQ(phi[i], (phi1[i] + phi2[i]) / 2) << i;
    differs_from_last += phi[i] != phi2[i];
  }
  EXPECT_GT(differs_from_last, 0);
  for (std::size_t i = 0; i < theta.size(); ++i) EXPECT_DOUBLE_EQ(theta[i], (theta1[i] + theta2[i]) / 2) << i;
  const auto dir = scratch_dir();
  trainer.write_outputs(dir.string(), 5);
  const std::string bytes = read_file(dir / "phi.bin");
  ASSERT_EQ(bytes.size(), 32 + phi.size() * sizeof(double));
  EXPECT_EQ(std::memcmp(bytes.data() + 32, phi.data(), phi.size() * sizeof(double)), 0);
  // restore_average (a saved model's outputs) on another trainer of the same chain: the same outputs until the
  // next add, which starts a new average.
  const std::vector<double> theta_kept(theta.begin(), theta.end()), phi_kept(phi.begin(), phi.end());
  Trainer<double> other(corpus, options_for(Estimate::draw), std::make_unique<bfly::lda::CpuZStep<double>>(1));
  other.step();
  other.step();
  other.restore_average(theta_kept, phi_kept);
  EXPECT_TRUE(same_bytes(other.output_phi(), phi));
  EXPECT_TRUE(same_bytes(other.output_theta(), theta));
  EXPECT_THROW(other.restore_average(phi_kept, theta_kept), bfly::Error);  // sizes swapped
  other.add_means_to_average();
  EXPECT_EQ(other.averaged_iterations(), 1);
  EXPECT_TRUE(same_bytes(other.output_phi(), phi2));
  // clear_average: back to the current iteration's means.
  trainer.clear_average();
  EXPECT_EQ(trainer.averaged_iterations(), 0);
  EXPECT_TRUE(same_bytes(trainer.output_phi(), phi2));
  EXPECT_TRUE(same_bytes(trainer.output_theta(), theta2));
}

// With learned priors, an iteration that learns them (t % optimize_interval == 0) formed its estimates with the
// priors before: the posterior means the outputs report then use the new priors, as the next iterations will, and
// are not the estimates theta() and phi() of Estimate::mean.
TEST(Outputs, PosteriorMeansUseThePriorsJustLearned) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(60, 30, 15, 4));
  bfly::lda::TrainerOptions options = options_for(Estimate::mean);
  options.optimize_interval = 2;
  options.optimize_beta = true;
  Trainer<double> trainer(corpus, options, std::make_unique<bfly::lda::CpuZStep<double>>(1));
  trainer.step();
  EXPECT_TRUE(same_bytes(trainer.mean_theta(), trainer.theta())) << "iteration 1 learns nothing";
  EXPECT_TRUE(same_bytes(trainer.mean_phi(), trainer.phi())) << "iteration 1 learns nothing";
  trainer.step();  // iteration 2 learns alpha and beta after its estimates
  ASSERT_FALSE(trainer.options().priors.symmetric_alpha());
  std::vector<double> theta(trainer.theta().size()), phi(trainer.phi().size());
  bfly::lda::estimate_theta<double>(corpus, trainer.counts(), trainer.options().priors, Estimate::mean, options.seed,
                                    2, theta, 1);
  bfly::lda::estimate_phi<double>(corpus, trainer.counts(), trainer.options().priors, Estimate::mean, options.seed, 2,
                                  phi, 1);
  EXPECT_TRUE(same_bytes(trainer.mean_theta(), theta));
  EXPECT_TRUE(same_bytes(trainer.mean_phi(), phi));
  EXPECT_FALSE(same_bytes(trainer.mean_theta(), trainer.theta())) << "the estimates used the priors before";
}

// The checkpoint's checksum: FNV-1a over each written piece's 8-byte words, then its tail bytes (pieces: the
// header's fields one by one, then z, theta and phi), recomputed here to forge an older format.
std::uint64_t checkpoint_checksum(const std::string& bytes, const std::vector<std::size_t>& pieces) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  std::size_t at = 0;
  for (const std::size_t piece : pieces) {
    std::size_t i = 0;
    for (; i + 8 <= piece; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, bytes.data() + at + i, 8);
      hash = (hash ^ word) * 0x100000001b3ull;
    }
    for (; i < piece; ++i) hash = (hash ^ static_cast<unsigned char>(bytes[at + i])) * 0x100000001b3ull;
    at += piece;
  }
  return hash;
}

// A format 1 checkpoint (no optimisation fields, written before priors were learned) resumes as a symmetric,
// fixed-prior run and continues exactly.
TEST(CheckpointResume, ReadsFormatOneAsSymmetricPriors) {
  const Corpus corpus = bfly::lda::sort_by_length(random_corpus(200, 30, 25, 5));
  const auto options = options_for(Estimate::draw);
  const auto dir = scratch_dir();
  Trainer<float> straight(corpus, options, std::make_unique<bfly::lda::CpuZStep<float>>(1));
  straight.step();
  straight.step();
  const std::string current = (dir / "checkpoint.bin").string();
  straight.save_checkpoint(current);
  std::string bytes = read_file(current);
  constexpr std::size_t kFormatOneHeader = 8 + 6 * 4 + 8 * 8;  // format 2 adds 8 bytes after it
  std::string old = bytes.substr(0, kFormatOneHeader) + bytes.substr(kFormatOneHeader + 8, bytes.size() - 8 -
                                                                                                kFormatOneHeader - 8);
  old[8] = 1;
  std::vector<std::size_t> pieces = {8, 4, 4, 4, 4, 4, 4, 8, 8, 8, 8, 8, 8, 8, 8};  // format 1's header fields
  pieces.push_back(straight.z().size() * sizeof(std::int32_t));
  pieces.push_back(straight.theta().size() * sizeof(float));
  pieces.push_back(straight.phi().size() * sizeof(float));
  const std::uint64_t checksum = checkpoint_checksum(old, pieces);
  old.append(reinterpret_cast<const char*>(&checksum), 8);
  const std::string path = write_file(dir / "format1.bin", old);
  Trainer<float> resumed = Trainer<float>::resume(corpus, path, 1, std::make_unique<bfly::lda::CpuZStep<float>>(1));
  EXPECT_TRUE(resumed.options().priors.symmetric_alpha());
  EXPECT_EQ(resumed.options().priors.alpha, options.priors.alpha);
  EXPECT_EQ(resumed.options().optimize_interval, 0);
  straight.step();
  resumed.step();
  EXPECT_TRUE(same_bytes(resumed.z(), straight.z()));
  EXPECT_TRUE(same_bytes(resumed.theta(), straight.theta()));
  EXPECT_EQ(resumed.ll_per_token(), straight.ll_per_token());
}

}  // namespace
