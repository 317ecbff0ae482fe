// Every output of a bfly-lda run is complete and consistent with the checkpoint or not there; every
// write is checked; resume trims the log and refuses what is not its run's; sizes are checked before allocating.
// Each test covers one way a run could lose or corrupt an output, or fail without saying why.
#include "bfly/lda/corpus.hpp"
#include "bfly/lda/trainer.hpp"
#include "lda_test_util.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

using namespace bfly::lda::test;
namespace fs = std::filesystem;

struct LdaRun {
  int status = -1;
  std::string out, err;
};

class RunOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir();
    corpus_ = random_corpus(60, 30, 20, 12);
    docword_ = write_file(dir_ / "docword.txt", docword_text(corpus_));
    vocab_ = write_file(dir_ / "vocab.txt", vocab_text(corpus_));
    out_ = dir_ / "out";
  }
  // bfly-lda on the CPU reference z-step (fast) with `arguments`; `stdout_to` replaces the captured stdout.
  LdaRun lda(const std::string& arguments, const std::string& stdout_to = "") const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string command = std::string("'") + BFLY_LDA_EXE + "' --docword '" + docword_ + "' --vocab '" +
                                vocab_ + "' --device cpu --cpu-zstep reference --quiet --threads 2 " + arguments +
                                " > '" + (stdout_to.empty() ? out.string() : stdout_to) + "' 2> '" + err.string() +
                                "'";
    const int raw = std::system(command.c_str());
    LdaRun run;
    run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    if (stdout_to.empty()) run.out = read_file(out);
    run.err = read_file(err);
    return run;
  }
  std::string o() const { return " --out '" + out_.string() + "'"; }
  std::string r() const { return " --resume '" + out_.string() + "'"; }
  std::uint32_t checkpoint_iteration() const {
    return bfly::lda::read_checkpoint_info((out_ / "checkpoint.bin").string()).iteration;
  }

  fs::path dir_, out_;
  bfly::lda::Corpus corpus_;
  std::string docword_, vocab_;
};

// The iteration column of loglik.csv.
std::string iterations_of(const std::string& csv) {
  std::string result;
  std::size_t at = csv.find('\n');
  while (at != std::string::npos && at + 1 < csv.size()) {
    result += csv.substr(at + 1, csv.find(',', at) - at - 1) + " ";
    at = csv.find('\n', at + 1);
  }
  return result;
}

// an output that cannot be written does not lose the final checkpoint, and no output of another
// iteration is left beside it.
TEST_F(RunOutputs, AFailedOutputKeepsTheCheckpointAndLeavesNoStaleOutputs) {
  ASSERT_EQ(lda("--topics 4 --iterations 2" + o()).status, 0);
  ASSERT_TRUE(fs::exists(out_ / "topics.txt"));
  fs::remove(out_ / "theta.bin");
  fs::create_directories(out_ / "theta.bin");
  const LdaRun run = lda("--iterations 5" + r());
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.err.find("theta.bin"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("is a directory"), std::string::npos) << run.err;
  ASSERT_TRUE(fs::exists(out_ / "checkpoint.bin"));
  EXPECT_EQ(checkpoint_iteration(), 5u);
  for (const char* name : {"topics.txt", "documents.txt", "phi.bin", "vocab.txt"})
    EXPECT_FALSE(fs::exists(out_ / name)) << name << " of iteration 2 was left beside the checkpoint of iteration 5";
  fs::remove(out_ / "theta.bin");
  const LdaRun again = lda("--iterations 5" + r());  // writes the outputs of the checkpoint
  EXPECT_EQ(again.status, 0) << again.err;
  for (const char* name : {"topics.txt", "documents.txt", "theta.bin", "phi.bin", "vocab.txt"})
    EXPECT_TRUE(fs::exists(out_ / name)) << name;
  for (const auto& entry : fs::directory_iterator(out_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

// a standard output that cannot be written is an error ("disk full"), and --save-corpus does not print
// "wrote" when it could not write.
TEST_F(RunOutputs, WriteErrorsAreReported) {
  const LdaRun full = lda("--topics 4 --iterations 2", "/dev/full");
  EXPECT_EQ(full.status, 1);
  EXPECT_NE(full.err.find("disk full"), std::string::npos) << full.err;

  const fs::path saved = dir_ / "saved";
  fs::create_directories(saved);
  fs::create_symlink("/dev/full", saved / "docword.txt");
  const LdaRun save = lda("--save-corpus '" + saved.string() + "'");
  EXPECT_NE(save.status, 0);
  EXPECT_EQ(save.out.find("wrote"), std::string::npos) << save.out;
  EXPECT_NE(save.err.find("docword.txt"), std::string::npos) << save.err;
  EXPECT_TRUE(fs::is_symlink(saved / "docword.txt"));
  EXPECT_FALSE(fs::exists(saved / "vocab.txt"));
}

// resume trims the log to the checkpoint's iteration.
TEST_F(RunOutputs, ResumeTrimsTheLogToTheCheckpoint) {
  ASSERT_EQ(lda("--topics 4 --iterations 2" + o()).status, 0);
  const std::string at_two = read_file(out_ / "checkpoint.bin");
  ASSERT_EQ(lda("--iterations 4" + r()).status, 0);
  write_file(out_ / "checkpoint.bin", at_two);  // as if the run was killed after iteration 4 but before saving
  const LdaRun run = lda("--iterations 6" + r());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(iterations_of(read_file(out_ / "loglik.csv")), "0 1 2 3 4 5 6 ");
}

// a fresh run in an old run's directory takes it over: interrupted, it leaves nothing that --resume would
// continue as the old model; and a log that is not the checkpoint's is refused.
TEST_F(RunOutputs, AFreshRunReplacesTheOldRunsCheckpoint) {
  ASSERT_EQ(lda("--topics 4 --seed 7 --iterations 3" + o()).status, 0);
  // A fresh run with other options that stops before its first checkpoint (its log cannot be written).
  fs::remove(out_ / "loglik.csv");
  fs::create_directories(out_ / "loglik.csv");
  const LdaRun fresh = lda("--topics 3 --iterations 3" + o());
  ASSERT_EQ(fresh.status, 1) << fresh.err;
  fs::remove(out_ / "loglik.csv");
  const LdaRun resumed = lda("--iterations 5" + r());
  EXPECT_EQ(resumed.status, 2) << "continued the old run: " << resumed.out;
  EXPECT_NE(resumed.err.find("cannot open the checkpoint"), std::string::npos) << resumed.err;

  ASSERT_EQ(lda("--topics 4 --iterations 3" + o()).status, 0);
  write_file(out_ / "loglik.csv", "iteration,train_seconds,tokens_per_s,ll_per_token\n0,0,0,-5\n1,1,1,-4\n");
  const LdaRun other_log = lda("--iterations 5" + r());
  EXPECT_EQ(other_log.status, 2);
  EXPECT_NE(other_log.err.find("belongs to another run"), std::string::npos) << other_log.err;
}

// a vocabulary of the same size with other words is another corpus.
TEST_F(RunOutputs, ResumeRefusesAVocabularyWithOtherWords) {
  ASSERT_EQ(lda("--topics 4 --iterations 2" + o()).status, 0);
  std::string words = read_file(vocab_);
  words.insert(0, "x");  // the first word renamed, the count unchanged
  write_file(vocab_, words);
  const LdaRun run = lda("--iterations 3" + r());
  EXPECT_EQ(run.status, 2) << run.out;
  EXPECT_NE(run.err.find("another corpus"), std::string::npos) << run.err;
}

// a document of 2^31 tokens or more is refused by the reader (the kernels count a document's tokens in
// 32 bits), before anything of its size is allocated.
TEST(Sizes, DocumentsOf2To31TokensAreRefused) {
  const auto dir = scratch_dir();
  const std::string docword = write_file(dir / "docword.txt", "1\n2\n2\n1 1 2147483647\n1 2 1\n");
  const std::string vocab = write_file(dir / "vocab.txt", "a\nb\n");
  try {
    bfly::lda::read_uci(docword, vocab);
    ADD_FAILURE() << "accepted a document of 2^31 tokens";
  } catch (const bfly::lda::CorpusError& e) {
    EXPECT_NE(std::string(e.what()).find("2147483648 tokens"), std::string::npos) << e.what();
  }
}

// sizes from headers are checked before allocating: a huge D or W in a docword header, a damaged
// checkpoint's K, a model larger than the memory; a message, never std::bad_alloc.
TEST(Sizes, HugeHeaderSizesGiveMessagesNotBadAlloc) {
  const auto dir = scratch_dir();
  const std::string vocab = write_file(dir / "vocab.txt", "a\nb\n");
  const std::string huge_d = write_file(dir / "d.txt", "1000000000000\n2\n2\n1 1 3\n5 2 1\n");
  EXPECT_NO_THROW({
    const bfly::lda::Corpus c = bfly::lda::read_uci(huge_d, vocab);
    EXPECT_EQ(c.num_docs(), 2);
  });
  const std::string huge_w = write_file(dir / "w.txt", "1\n2000000000\n1\n1 1 3\n");
  EXPECT_THROW(bfly::lda::read_uci(huge_w, vocab), bfly::lda::CorpusError);  // the vocabulary is too short

  const bfly::lda::Corpus corpus = bfly::lda::sort_by_length(random_corpus(50, 20, 10, 3));
  bfly::lda::TrainerOptions options;
  options.topics = 5;
  bfly::lda::Trainer<float> trainer(corpus, options, std::make_unique<bfly::lda::CpuZStep<float>>(1));
  const std::string path = (dir / "checkpoint.bin").string();
  trainer.save_checkpoint(path);
  std::string bytes = read_file(path);
  const std::uint32_t K = 0x7fffffff;
  std::memcpy(bytes.data() + 16, &K, sizeof K);  // magic, format, element size, then K
  write_file(path, bytes);
  try {
    bfly::lda::Trainer<float>::resume(corpus, path, 1, std::make_unique<bfly::lda::CpuZStep<float>>(1));
    ADD_FAILURE() << "accepted K = 2^31 - 1";
  } catch (const bfly::lda::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }

  // 200000 documents x 65536 topics of f64: about 100 GiB of theta, twice: a message that says how much it needs.
  const bfly::lda::Corpus many = bfly::lda::sort_by_length(random_corpus(200000, 20, 2, 5));
  options.topics = 65536;
  try {
    bfly::lda::Trainer<double> big(many, options, std::make_unique<bfly::lda::CpuZStep<double>>(1));
    GTEST_SKIP() << "this machine has the memory for a 200 GiB model";
  } catch (const bfly::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GiB of memory"), std::string::npos) << e.what();
  }
}

// --resume FILE without --out writes beside FILE; --text DIR names the problem; a killed run's temporaries
// are removed by the next run in the directory.
TEST_F(RunOutputs, SmallThings) {
  ASSERT_EQ(lda("--topics 4 --iterations 2" + o()).status, 0);
  const LdaRun file = lda("--iterations 3 --resume '" + (out_ / "checkpoint.bin").string() + "'");
  EXPECT_EQ(file.status, 0) << file.err;
  EXPECT_EQ(checkpoint_iteration(), 3u);

  const std::string text_dir = "'" + dir_.string() + "'";
  const int raw = std::system((std::string("'") + BFLY_LDA_EXE + "' --text " + text_dir + " > '" +
                               (dir_ / "t.txt").string() + "' 2>&1")
                                  .c_str());
  EXPECT_EQ(WEXITSTATUS(raw), 2);
  EXPECT_NE(read_file(dir_ / "t.txt").find("is a directory"), std::string::npos) << read_file(dir_ / "t.txt");

  int dead = 4000000;  // a process id that is not running
  while (kill(dead, 0) == 0 || errno != ESRCH) --dead;
  const fs::path stale = out_ / (".checkpoint.bin.tmp." + std::to_string(dead) + ".0");
  write_file(stale, "partial");
  ASSERT_EQ(lda("--iterations 4" + r()).status, 0);
  EXPECT_FALSE(fs::exists(stale));
}

}  // namespace
