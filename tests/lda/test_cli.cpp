// The bfly-lda command line: bad arguments, bad input files and bad checkpoints exit with status 2 and a clear
// message; a run resumed from its checkpoint ends with the same files as an uninterrupted run; without a GPU the
// GPU's generated z-step kernel runs on the CPU when it is compiled in, else the CPU reference, and either says so.
#include "bfly/emit/generate.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
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

// The line of `output` that contains `text`, without its newline; empty when there is none.
std::string line_with(const std::string& output, const std::string& text) {
  const std::size_t at = output.find(text);
  if (at == std::string::npos) return "";
  const std::size_t begin = output.rfind('\n', at) == std::string::npos ? 0 : output.rfind('\n', at) + 1;
  return output.substr(begin, output.find('\n', at) - begin);
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

TEST_F(Cli, VersionPrintsTheProjectVersion) {
  const RunResult run = run_lda("--version", dir_);
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.output, "bfly-lda " + std::string(bfly::gen::bfly_version()) + "\n");
}

TEST_F(Cli, BadArgumentsExitTwoWithAMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "no corpus"},
      {"--frobnicate", "unknown flag '--frobnicate'"},
      {corpus_args_ + " --topics 0", "--topics expects an integer in [1, 65536]"},
      {corpus_args_ + " --topics many", "--topics expects an integer"},
      {corpus_args_ + " --iterations -3", "--iterations expects an integer"},
      {corpus_args_ + " --alpha 0", "--alpha expects a positive number"},
      {corpus_args_ + " --beta nan", "--beta expects a positive number"},
      {corpus_args_ + " --type f16", "--type expects f32 or f64"},
      {corpus_args_ + " --estimate median", "--estimate expects collapsed, mean, draw or auto"},
      {corpus_args_ + " --optimize-beta", "--optimize-beta needs --optimize-interval N"},
      {corpus_args_ + " --optimize-interval -1", "--optimize-interval expects an integer"},
      {corpus_args_ + " --topics", "--topics needs a value"},
      {corpus_args_ + " --topics 4 --topics 5", "--topics is given more than once"},
      {"--docword '" + docword_ + "'", "--docword and --vocab go together"},
      {corpus_args_ + " --text '" + docword_ + "'", "either --text or --docword"},
      {corpus_args_ + " --min-count 3", "--min-count applies to --text only"},
      {corpus_args_ + " --checkpoint-every 2", "--checkpoint-every needs --out"},
      {corpus_args_ + " --average-last 0", "--average-last expects auto or an integer in [1, "},
      {corpus_args_ + " --average-last half", "--average-last expects auto or an integer in [1, "},
      {corpus_args_ + " stray", "unexpected argument 'stray'"},
      {corpus_args_ + " --resume '" + (dir_ / "nowhere").string() + "'", "cannot open the checkpoint"},
      {corpus_args_ + " --cpu-zstep fast", "--cpu-zstep expects auto, generated or reference"},
      {corpus_args_ + " --device gpu --cpu-zstep reference", "--cpu-zstep applies to runs on the CPU"},
      {corpus_args_ + " --progress-every 0", "--progress-every expects an integer in [1,"},
      {corpus_args_ + " --quiet --progress-every 5", "--quiet and --progress-every contradict each other"},
      {corpus_args_ + " --topics 5 --device cpu --cpu-zstep generated",
       "--cpu-zstep generated: the GPU's kernel for K = 5, " + bfly::gen::kernel_name(bfly::lda::gpu_z_spec<float>(5)) +
           ", is not compiled into this bfly-lda"},
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

// Learned priors from the command line: alpha.txt holds the asymmetric alpha, a resumed run ends with the same files,
// and a resumed run may not change the optimisation; with Dirichlet draws and with the collapsed z-step (whose
// theta and phi are formed again under the learned priors, which the checkpoint then holds).
class CliEstimates : public Cli, public ::testing::WithParamInterface<const char*> {};
INSTANTIATE_TEST_SUITE_P(Estimates, CliEstimates, ::testing::Values("draw", "collapsed"));
TEST_P(CliEstimates, LearnedPriorsResumeToTheSameFiles) {
  const std::string common = corpus_args_ + " --topics 5 --seed 7 --estimate " + GetParam() +
                             " --quiet --threads 2 --device cpu --optimize-interval 2 --optimize-beta";
  const auto straight = dir_ / "straight", halves = dir_ / "halves";
  RunResult run = run_lda(common + " --iterations 6 --out '" + straight.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("priors learned: alpha"), std::string::npos) << run.output;
  std::istringstream alpha(read_file(straight / "alpha.txt"));
  std::vector<double> values;
  for (std::string line; std::getline(alpha, line);) values.push_back(std::stod(line));
  ASSERT_EQ(values.size(), 5u);
  EXPECT_NE(*std::min_element(values.begin(), values.end()), *std::max_element(values.begin(), values.end()))
      << "alpha.txt should hold a learned, asymmetric alpha";
  run = run_lda(common + " --iterations 3 --out '" + halves.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  run = run_lda(corpus_args_ + " --resume '" + halves.string() + "' --optimize-interval 3 --iterations 6", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--optimize-interval differs from the checkpoint's value 2"), std::string::npos)
      << run.output;
  run = run_lda(corpus_args_ + " --quiet --resume '" + halves.string() + "' --iterations 6", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  for (const char* file : {"theta.bin", "phi.bin", "alpha.txt", "topics.txt"})
    EXPECT_EQ(read_file(straight / file), read_file(halves / file)) << file << " differs after resuming";
}

TEST_F(Cli, ResumedRunEndsWithTheSameFiles) {
  const std::string common = corpus_args_ + " --topics 5 --seed 99 --estimate draw --quiet --threads 2 --device cpu";
  const auto straight = dir_ / "straight", halves = dir_ / "halves";
  RunResult run = run_lda(common + " --iterations 6 --out '" + straight.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("--device cpu: running the CPU reference z-step on 2 threads (the GPU's kernel for K = 5"),
            std::string::npos)
      << run.output;
  run = run_lda(common + " --iterations 3 --checkpoint-every 2 --out '" + halves.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;

  // Options given again must agree with the checkpoint.
  run = run_lda(corpus_args_ + " --resume '" + halves.string() + "' --topics 6 --iterations 6", dir_);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--topics differs from the checkpoint's value 5"), std::string::npos) << run.output;

  // --estimate auto (older scripts) stands for the default and takes the checkpoint's estimate (here draw).
  run = run_lda(corpus_args_ + " --quiet --resume '" + halves.string() + "' --estimate auto --iterations 6", dir_);
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

// --average-last N: the same chain, but phi.bin and theta.bin average the posterior means of the last N iterations.
TEST_F(Cli, AverageLastAveragesTheOutputsOfTheSameChain) {
  const std::string common = corpus_args_ + " --topics 5 --seed 3 --iterations 6 --estimate draw --quiet --threads 2 "
                                            "--device cpu --cpu-zstep reference";
  const auto last = dir_ / "last", averaged = dir_ / "averaged", automatic = dir_ / "automatic";
  RunResult run = run_lda(common + " --average-last 1 --out '" + last.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output.find("outputs: the posterior means averaged"), std::string::npos) << run.output;
  run = run_lda(common + " --average-last 3 --out '" + averaged.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("outputs: the posterior means averaged over the last 3 iterations"), std::string::npos)
      << run.output;
  // The same chain: the same log-likelihood after every iteration (loglik.csv's last column).
  const auto likelihoods = [](const std::string& csv) {
    std::vector<std::string> values;
    std::istringstream lines(csv);
    for (std::string line; std::getline(lines, line);) values.push_back(line.substr(line.rfind(',') + 1));
    return values;
  };
  const std::vector<std::string> chain = likelihoods(read_file(last / "loglik.csv"));
  EXPECT_EQ(chain.size(), 8u);  // the header and iterations 0 .. 6
  EXPECT_EQ(chain, likelihoods(read_file(averaged / "loglik.csv")));
  EXPECT_NE(read_file(last / "phi.bin"), read_file(averaged / "phi.bin"));
  EXPECT_NE(read_file(last / "theta.bin"), read_file(averaged / "theta.bin"));
  // The default (--average-last auto) averages the last half of --iterations: here the same 3.
  run = run_lda(common + " --out '" + automatic.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("outputs: the posterior means averaged over the last 3 iterations"), std::string::npos)
      << run.output;
  EXPECT_EQ(read_file(automatic / "phi.bin"), read_file(averaged / "phi.bin"));
  EXPECT_EQ(read_file(automatic / "theta.bin"), read_file(averaged / "theta.bin"));
}

// The main job's path on a machine without a GPU: the GPU's kernel for K = 64, f32, run on the CPU.
TEST_F(Cli, WithoutAGpuTheGeneratedKernelRunsOnTheCpu) {
  const std::string kernel = bfly::gen::kernel_name(bfly::lda::gpu_z_spec<float>(64));
  ASSERT_NE(bfly::lda::find_compiled_z_kernel(bfly::lda::gpu_z_spec<float>(64)), nullptr);
  const auto out = dir_ / "generated";
  const std::string common = corpus_args_ + " --topics 64 --iterations 5 --threads 2 --progress-every 2";
  RunResult run = run_lda(common + " --device cpu --out '" + out.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("--device cpu: running the generated kernel " + kernel +
                            " on the CPU (bfly/lockstep.hpp, 2 threads)\n"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("engine: cpu " + kernel + " (bfly/lockstep.hpp, 2 threads)\n"), std::string::npos)
      << run.output;
  // --progress-every 2: iterations 0, 2, 4 and the last one.
  for (const char* line : {"iteration    0  ll/token", "iteration    2  ll/token", "iteration    4  ll/token",
                           "iteration    5  ll/token"})
    EXPECT_NE(run.output.find(line), std::string::npos) << line << "\n" << run.output;
  for (const char* line : {"iteration    1  ll/token", "iteration    3  ll/token"})
    EXPECT_EQ(run.output.find(line), std::string::npos) << line << "\n" << run.output;
  EXPECT_NE(run.output.find("done: 5 iterations"), std::string::npos) << run.output;

  // The outputs: 64 topics, theta D x 64 and phi V x 64 in f32, the curve of iterations 0..5, the checkpoint.
  const std::string topics = read_file(out / "topics.txt");
  EXPECT_EQ(std::count(topics.begin(), topics.end(), '\n'), 64) << topics;
  EXPECT_EQ(read_file(out / "theta.bin").size(), 32 + 60 * 64 * sizeof(float));
  EXPECT_EQ(read_file(out / "phi.bin").size(), 32 + 30 * 64 * sizeof(float));
  const std::string curve = read_file(out / "loglik.csv");
  EXPECT_EQ(std::count(curve.begin(), curve.end(), '\n'), 7) << curve;
  EXPECT_FALSE(read_file(out / "checkpoint.bin").empty());

  // --device auto on a machine without a GPU takes the same path and says why.
  run = run_lda("--check-device", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  if (run.output.rfind("gpu: ", 0) == 0) GTEST_SKIP() << "a GPU can be used here; --device auto would train on it";
  ASSERT_EQ(run.output.rfind("cpu: no GPU (", 0), 0u) << run.output;
  const auto automatic = dir_ / "auto";
  run = run_lda(common + " --out '" + automatic.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  const std::string line = line_with(run.output, "running the generated kernel");
  EXPECT_TRUE(line.starts_with("no GPU (")) << run.output;
  EXPECT_TRUE(line.ends_with("): running the generated kernel " + kernel + " on the CPU (bfly/lockstep.hpp, 2 threads)"))
      << run.output;
  for (const char* file : {"theta.bin", "phi.bin", "topics.txt"})
    EXPECT_EQ(read_file(automatic / file), read_file(out / file)) << file << ": --device auto and cpu differ";
}

TEST_F(Cli, TheCpuReferenceZStepWhenAskedOrWhenNoKernelIsCompiledIn) {
  RunResult run = run_lda(corpus_args_ + " --topics 64 --iterations 1 --threads 2 --device cpu --cpu-zstep reference",
                          dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("--device cpu: running the CPU reference z-step on 2 threads (--cpu-zstep reference)"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("engine: cpu-reference (2 threads)"), std::string::npos) << run.output;

  run = run_lda(corpus_args_ + " --topics 61 --iterations 1 --threads 2 --device cpu", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("--device cpu: running the CPU reference z-step on 2 threads (the GPU's kernel for K = 61, " +
                            bfly::gen::kernel_name(bfly::lda::gpu_z_spec<float>(61)) +
                            ", is not compiled into this bfly-lda; compiled in: " +
                            bfly::lda::compiled_z_kernel_names() + " (CMake's BFLY_LDA_CPU_KERNELS))"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("engine: cpu-reference (2 threads)"), std::string::npos) << run.output;
}

// Checkpoint and resume through the command line on the generated-kernel path: 4 iterations straight end with the
// same files as 2, a checkpoint, and 2 more after resuming (with another thread count).
TEST_F(Cli, ResumedGeneratedKernelRunEndsWithTheSameFiles) {
  const std::string common = corpus_args_ + " --topics 64 --seed 5 --estimate draw --quiet --device cpu";
  const auto straight = dir_ / "straight", halves = dir_ / "halves";
  RunResult run = run_lda(common + " --threads 2 --iterations 4 --out '" + straight.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  ASSERT_NE(run.output.find("running the generated kernel"), std::string::npos) << run.output;
  run = run_lda(common + " --threads 2 --iterations 2 --out '" + halves.string() + "'", dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  run = run_lda(corpus_args_ + " --quiet --device cpu --threads 1 --resume '" + halves.string() + "' --iterations 4",
                dir_);
  ASSERT_EQ(run.status, 0) << run.output;
  ASSERT_NE(run.output.find("running the generated kernel"), std::string::npos) << run.output;
  for (const char* file : {"theta.bin", "phi.bin", "topics.txt", "documents.txt"})
    EXPECT_EQ(read_file(straight / file), read_file(halves / file)) << file << " differs after resuming";
  const std::string a = read_file(straight / "checkpoint.bin"), b = read_file(halves / "checkpoint.bin");
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.substr(0, 56), b.substr(0, 56));
  EXPECT_EQ(a.substr(64, a.size() - 72), b.substr(64, b.size() - 72)) << "z, theta or phi differ";
}

TEST_F(Cli, CheckDeviceSaysWhereAutoTrains) {
  const RunResult run = run_lda("--check-device", dir_);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(run.output.rfind("gpu: ", 0) == 0 || run.output.rfind("cpu: no GPU (", 0) == 0) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
}

}  // namespace
