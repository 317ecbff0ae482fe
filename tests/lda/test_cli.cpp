// The bfly-lda command line: bad arguments, bad input files and bad checkpoints exit with status 2 and a clear
// message; a run resumed from its checkpoint ends with the same files as an uninterrupted run.
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace bfly::lda::test;

struct RunResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

RunResult run_lda(const std::string& arguments, const std::filesystem::path& dir) {
  const std::string log = (dir / "run.log").string();
  const std::string command = std::string("'") + BFLY_LDA_EXE + "' " + arguments + " > '" + log + "' 2>&1";
  const int raw = std::system(command.c_str());
  RunResult run;
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.output = read_file(log);
  return run;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir();
    const bfly::lda::Corpus corpus = random_corpus(60, 30, 20, 12);
    docword_ = write_file(dir_ / "docword.txt", docword_text(corpus));
    vocab_ = write_file(dir_ / "vocab.txt", vocab_text(corpus));
    corpus_args_ = "--docword '" + docword_ + "' --vocab '" + vocab_ + "'";
  }
  std::filesystem::path dir_;
  std::string docword_, vocab_, corpus_args_;
};

TEST_F(Cli, HelpExitsZero) {
  const RunResult run = run_lda("--help", dir_);
  EXPECT_EQ(run.status, 0);
  EXPECT_NE(run.output.find("usage: bfly-lda"), std::string::npos);
  EXPECT_NE(run.output.find("--checkpoint-every"), std::string::npos);
}

TEST_F(Cli, BadArgumentsExitTwoWithAMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "no corpus"},
      {"--frobnicate", "unknown option --frobnicate"},
      {corpus_args_ + " --topics 0", "--topics expects an integer in [1, 65536]"},
      {corpus_args_ + " --topics many", "--topics expects an integer"},
      {corpus_args_ + " --iterations -3", "--iterations expects an integer"},
      {corpus_args_ + " --alpha 0", "--alpha expects a positive number"},
      {corpus_args_ + " --beta nan", "--beta expects a positive number"},
      {corpus_args_ + " --type f16", "--type expects f32 or f64"},
      {corpus_args_ + " --estimate median", "--estimate expects mean or draw"},
      {corpus_args_ + " --topics", "--topics needs a value"},
      {corpus_args_ + " --topics 4 --topics 5", "--topics given twice"},
      {"--docword '" + docword_ + "'", "--docword and --vocab go together"},
      {corpus_args_ + " --text '" + docword_ + "'", "either --text or --docword"},
      {corpus_args_ + " --min-count 3", "--min-count applies to --text only"},
      {corpus_args_ + " --checkpoint-every 2", "--checkpoint-every needs --out"},
      {corpus_args_ + " stray", "unexpected argument \"stray\""},
      {corpus_args_ + " --resume '" + (dir_ / "nowhere").string() + "'", "cannot open the checkpoint"},
  };
  for (const auto& [arguments, says] : cases) {
    const RunResult run = run_lda(arguments, dir_);
    EXPECT_EQ(run.status, 2) << "bfly-lda " << arguments << "\n" << run.output;
    EXPECT_NE(run.output.find(says), std::string::npos) << "bfly-lda " << arguments << "\n" << run.output;
  }
}

TEST_F(Cli, BadInputFilesExitTwoNamingFileAndLine) {
  const std::string bad = write_file(dir_ / "docword.bad.txt", "3\n4\n3\n1 1 1\n2 9 1\n3 1 1\n");
  RunResult run = run_lda("--docword '" + bad + "' --vocab '" + vocab_ + "'", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find(bad + ":5: wordID \"9\""), std::string::npos) << run.output;

  const std::string truncated = write_file(dir_ / "docword.cut.txt", "3\n4\n3\n1 1 1\n2 2 1\n");
  run = run_lda("--docword '" + truncated + "' --vocab '" + vocab_ + "'", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find(truncated + ":6: the file ends after 2 of NNZ = 3"), std::string::npos) << run.output;

  run = run_lda("--text '" + (dir_ / "absent.txt").string() + "'", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("absent.txt: cannot open"), std::string::npos) << run.output;
}

TEST_F(Cli, ResumedRunEndsWithTheSameFiles) {
  const std::string common = corpus_args_ + " --topics 5 --seed 99 --estimate draw --quiet --threads 2 --device cpu";
  const auto straight = dir_ / "straight", halves = dir_ / "halves";
  RunResult run = run_lda(common + " --iterations 6 --out '" + straight.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("running on the CPU (--device cpu)"), std::string::npos) << run.output;
  run = run_lda(common + " --iterations 3 --checkpoint-every 2 --out '" + halves.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;

  // Options given again must agree with the checkpoint.
  run = run_lda(corpus_args_ + " --resume '" + halves.string() + "' --topics 6 --iterations 6", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--topics differs from the checkpoint's value 5"), std::string::npos) << run.output;

  run = run_lda(corpus_args_ + " --quiet --resume '" + halves.string() + "' --iterations 6", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  for (const char* file : {"theta.bin", "phi.bin", "topics.txt", "documents.txt", "vocab.txt"})
    EXPECT_EQ(read_file(straight / file), read_file(halves / file)) << file << " differs after resuming";
  // The checkpoints agree except for the training seconds (bytes 56..63) and the checksum (last 8 bytes).
  const std::string a = read_file(straight / "checkpoint.bin"), b = read_file(halves / "checkpoint.bin");
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.substr(0, 56), b.substr(0, 56));
  EXPECT_EQ(a.substr(64, a.size() - 72), b.substr(64, b.size() - 72)) << "z, theta or phi differ";
  // The log-likelihood curve continues: iterations 0..6, one line each, after the header.
  const std::string curve = read_file(halves / "loglik.csv");
  EXPECT_EQ(std::count(curve.begin(), curve.end(), '\n'), 8) << curve;

  // A corpus other than the checkpoint's is refused.
  run = run_lda(corpus_args_ + " --max-docs 30 --resume '" + halves.string() + "' --iterations 7", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("another corpus"), std::string::npos) << run.output;
}

}  // namespace
