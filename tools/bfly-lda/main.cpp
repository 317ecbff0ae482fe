// bfly-lda: trains an LDA topic model with the uncollapsed Gibbs sampler of Steele & Tristan (2019), Section 4.
// A thin main: parses the command line (cli/args.hpp) into bfly::lda::RunSettings, runs it (bfly/lda/run.hpp) and
// maps the errors to exit statuses: 0 success, 2 bad arguments or a bad input file or checkpoint, 1 anything else.
#include "bfly/emit/generate.hpp"
#include "bfly/lda/run.hpp"
#include "bfly/output_file.hpp"
#include "cli/args.hpp"
#include "model_commands.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using namespace bfly::lda;
using bfly::cli::Args;
using bfly::cli::Flag;
using bfly::cli::UsageError;
namespace gen = bfly::gen;

const std::vector<Flag> kFlags = {
    {"--docword", "FILE", "UCI bag-of-words counts (docword.*.txt: D, W, NNZ, then `docID wordID count`)"},
    {"--vocab", "FILE", "UCI vocabulary (vocab.*.txt: one word per line); goes with --docword"},
    {"--text", "FILE", "plain text, one document per line (instead of --docword/--vocab)"},
    {"--min-count", "N", "--text: drop words seen fewer than N times (default 2)"},
    {"--max-docs", "N", "use only the first N documents of the input (default: all)"},
    {"--topics", "K", "number of topics (default 64)"},
    {"--iterations", "N", "total Gibbs iterations of the run, counted from the start when resuming (default 100)"},
    {"--alpha", "X", "symmetric Dirichlet prior on document topics (default 0.1)"},
    {"--beta", "X", "symmetric Dirichlet prior on topic words (default 0.01)"},
    {"--estimate", "collapsed|mean|draw",
     "collapsed: theta and phi as posterior means, each token left out of the counts behind them as it is drawn "
     "(collapsed Gibbs sampling's conditional); mean: the means as they are; draw: Dirichlet draws (default "
     "collapsed; auto, from older scripts, means collapsed)"},
    {"--optimize-interval", "N",
     "learn an asymmetric alpha every N iterations (Minka's fixed point, as Mallet's and tomotopy's optim_interval; "
     "default 0: fixed priors); the learned alpha goes to DIR/alpha.txt"},
    {"--optimize-beta", "", "with --optimize-interval, learn the symmetric beta too"},
    {"--seed", "N", "seed of every random draw (default 1)"},
    {"--type", "f32|f64", "element type of theta, phi and the z-step sums (default f32)"},
    {"--threads", "N", "CPU threads (default: all cores, at most 16); never changes the results"},
    {"--device", "cpu|gpu|auto", "where iterations run (default auto: the GPU when one can be used)"},
    {"--cpu-zstep", "MODE",
     "z-step of CPU runs: generated (the GPU's kernel, run on the CPU), reference (plain C++), or auto "
     "(default: generated when compiled in for K and --type, else reference)"},
    {"--gpu-w", "W", "butterfly width of the generated z-step kernel, 4, 8, 16 or 32 (default: chosen)"},
    {"--gpu-variant", "swap|addsub", "butterfly variant of the generated z-step kernel (default: chosen)"},
    {"--gpus", "N", "train on GPUs 0 .. N-1 of this machine, documents split among them, counts summed by NCCL "
                    "(loaded at run time); results equal one GPU's (default: one GPU, no NCCL)"},
    {"--out", "DIR", "write topics.txt, theta.bin, phi.bin, documents.txt, vocab.txt, loglik.csv, checkpoint.bin"},
    {"--top-words", "N", "words per topic in topics.txt and on screen (default 10)"},
    {"--show-topics", "N", "topics printed at the end (default 20, 0: none)"},
    {"--checkpoint-every", "N", "write DIR/checkpoint.bin every N iterations (needs --out; 0: only at the end)"},
    {"--average-last", "N|auto",
     "the outputs average the posterior means of the run's last N iterations (default auto: the last half of "
     "--iterations; 1: the last iteration's)"},
    {"--resume", "DIR", "continue the run whose checkpoint is DIR/checkpoint.bin (or the file DIR)"},
    {"--quiet", "", "print only the summary, not a line per iteration"},
    {"--progress-every", "N", "print a line every N iterations (default 1)"},
    {"--save-corpus", "DIR", "write the corpus as read (after tokenising) as DIR/docword.txt + DIR/vocab.txt "
                             "(UCI format, documents in training order) and exit; other trainers can then see "
                             "exactly bfly-lda's tokens"},
    {"--holdout", "FRACTION",
     "hold out this fraction of the documents (chosen by --seed), train on the rest, and at the end print the "
     "held-out perplexity (document completion) and NPMI, also into DIR/metrics.json (default 0: none)"},
    {"--version", "", "print the version (bfly-lda X.Y.Z) and exit"},
    {"--check-device", "", "print where --device auto would train (\"gpu: ...\" or \"cpu: no GPU (why)\") and exit"},
};

std::string usage() {
  return bfly::cli::format_usage(
      "bfly-lda (--docword FILE --vocab FILE | --text FILE) [flags]\n       bfly-lda infer|evaluate --model DIR ... "
      "(bfly-lda infer --help, bfly-lda evaluate --help)",
      "Trains an LDA topic model with the uncollapsed Gibbs sampler of Steele & Tristan (2019).", kFlags,
      "exit status: 0 done, 2 bad arguments or input file or checkpoint, 1 other errors\n");
}

RunSettings parse(const Args& args) {
  RunSettings s;
  s.docword = args.value("--docword");
  s.vocab = args.value("--vocab");
  s.text = args.value("--text");
  if (s.text && (s.docword || s.vocab)) throw UsageError("give either --text or --docword with --vocab, not both");
  if (!s.text && !s.docword && !s.vocab) throw UsageError("no corpus: give --docword FILE --vocab FILE or --text FILE");
  if (!s.text && (!s.docword || !s.vocab)) throw UsageError("--docword and --vocab go together; give both");
  if (args.has("--min-count") && !s.text) throw UsageError("--min-count applies to --text only");
  s.text_options.min_count = static_cast<int>(args.integer_in("--min-count", 1, 1'000'000'000).value_or(2));
  s.max_docs = args.integer_in("--max-docs", 1, INT64_MAX).value_or(0);
  s.text_options.max_docs = s.max_docs;
  s.options.topics = static_cast<int>(args.integer_in("--topics", 1, 65536).value_or(64));
  s.iterations = static_cast<std::uint32_t>(args.integer_in("--iterations", 0, 1'000'000'000).value_or(100));
  s.options.priors.alpha = args.positive("--alpha").value_or(0.1);
  s.options.priors.beta = args.positive("--beta").value_or(0.01);
  s.options.seed = static_cast<std::uint64_t>(args.integer_in("--seed", 0, INT64_MAX).value_or(1));
  s.options.threads = static_cast<int>(args.integer_in("--threads", 1, 1024).value_or(0));
  const auto estimate = args.choice("--estimate", {"collapsed", "mean", "draw", "auto"}).value_or("collapsed");
  s.options.estimate = parse_estimate(estimate == "auto" ? "collapsed" : estimate);
  s.options.optimize_interval = static_cast<int>(args.integer_in("--optimize-interval", 0, 1'000'000'000).value_or(0));
  s.options.optimize_beta = args.has("--optimize-beta");
  if (s.options.optimize_beta && s.options.optimize_interval == 0 && !args.has("--resume"))
    throw UsageError("--optimize-beta needs --optimize-interval N (how often the priors are learned)");
  if (const auto t = args.choice("--type", {"f32", "f64"})) s.type = gen::parse_element_type(*t);
  s.out = args.value("--out");
  s.resume = args.value("--resume");
  s.checkpoint_every = static_cast<int>(args.integer_in("--checkpoint-every", 0, 1'000'000'000).value_or(0));
  s.average_last = kAverageLastHalf;  // --average-last auto, the default
  if (const auto average = args.value("--average-last"); average && *average != "auto") {
    try {
      s.average_last = static_cast<int>(*args.integer_in("--average-last", 1, 1'000'000'000));
    } catch (const UsageError&) {
      throw UsageError(fmt::format("--average-last expects auto or an integer in [1, 1000000000], got '{}'", *average));
    }
  }
  if (s.checkpoint_every > 0 && !s.out && !s.resume)
    throw UsageError("--checkpoint-every needs --out DIR (where checkpoint.bin goes)");
  if (s.resume && !s.out) {  // a resumed run writes where it came from unless told otherwise
    const std::filesystem::path from(*s.resume);
    s.out = std::filesystem::is_directory(from)  ? from.string()
            : from.parent_path().empty()         ? std::string(".")
                                                 : from.parent_path().string();
  }
  s.top_words = static_cast<int>(args.integer_in("--top-words", 1, 1000).value_or(10));
  s.show_topics = static_cast<int>(args.integer_in("--show-topics", 0, 65536).value_or(20));
  s.quiet = args.has("--quiet");
  s.progress_every = static_cast<int>(args.integer_in("--progress-every", 1, 1'000'000'000).value_or(1));
  if (s.quiet && args.has("--progress-every")) throw UsageError("--quiet and --progress-every contradict each other");
  s.save_corpus = args.value("--save-corpus");
  if (const auto h = args.positive("--holdout")) {
    if (*h >= 1) throw UsageError(fmt::format("--holdout expects a fraction below 1, got {}", *h));
    s.holdout = *h;
  }
  if (const auto d = args.choice("--device", {"cpu", "gpu", "auto"}))
    s.device = *d == "cpu" ? Device::cpu : *d == "gpu" ? Device::gpu : Device::automatic;
  if (const auto z = args.choice("--cpu-zstep", {"auto", "generated", "reference"})) {
    if (s.device == Device::gpu) throw UsageError("--cpu-zstep applies to runs on the CPU, not to --device gpu");
    s.cpu_zstep = *z == "generated"   ? CpuZStepMode::generated
                  : *z == "reference" ? CpuZStepMode::reference
                                      : CpuZStepMode::automatic;
  }
  if (const auto W = args.integer_in("--gpu-w", 4, 32)) {
    if (*W != 4 && *W != 8 && *W != 16 && *W != 32)
      throw UsageError(fmt::format("--gpu-w expects 4, 8, 16 or 32, got {}", *W));
    s.gpu.W = static_cast<int>(*W);
  }
  if (const auto v = args.choice("--gpu-variant", {"swap", "addsub"})) s.gpu.variant = *v;
  if (const auto gpus = args.integer_in("--gpus", 1, 1024)) {
    if (s.device == Device::cpu) throw UsageError("--gpus trains on GPUs; it contradicts --device cpu");
    if (args.has("--cpu-zstep")) throw UsageError("--cpu-zstep applies to runs on the CPU, not to --gpus");
    s.gpus = static_cast<int>(*gpus);
  }

  // A resumed run's options come from the checkpoint; options given again must agree with it.
  adopt_checkpoint(s, GivenOptions{.topics = args.has("--topics"),
                                   .alpha = args.has("--alpha"),
                                   .beta = args.has("--beta"),
                                   .seed = args.has("--seed"),
                                   // auto stands for the default, as it did before collapsed was the default: a
                                   // resumed run takes the checkpoint's estimate with it, as without --estimate
                                   .estimate = args.has("--estimate") && estimate != "auto",
                                   .type = args.has("--type"),
                                   .optimize_interval = args.has("--optimize-interval"),
                                   .optimize_beta = args.has("--optimize-beta")});
  return s;
}

void print_error(const char* message, bool usage_hint) {
  std::fprintf(stderr, "bfly-lda: %s\n%s", message, usage_hint ? "(bfly-lda --help lists the options)\n" : "");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && bfly::lda::cli_commands::is_model_command(argv[1])) {  // bfly-lda infer|evaluate ...
      const int status =
          bfly::lda::cli_commands::run_model_command(argv[1], std::vector<std::string>(argv + 2, argv + argc));
      if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        print_error("cannot write to standard output", false);
        return 1;
      }
      return status;
    }
    const Args args("bfly-lda", kFlags, std::vector<std::string>(argv + 1, argv + argc), 0);
    if (args.help()) {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    if (args.has("--version")) {
      std::printf("bfly-lda %s\n", std::string(gen::bfly_version()).c_str());
      return 0;
    }
    if (args.has("--check-device")) {
      std::printf("%s\n", check_device().c_str());
      return 0;
    }
    run(parse(args));
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {  // progress and results that never arrived: an error
      print_error(fmt::format("cannot write to standard output: {}",
                              errno != 0 ? bfly::describe_errno(errno) : std::string("write error"))
                      .c_str(),
                  false);
      return 1;
    }
    return 0;
  } catch (const UsageError& e) {
    print_error(e.what(), true);
    return 2;
  } catch (const RunError& e) {
    print_error(e.what(), true);
    return 2;
  } catch (const CorpusError& e) {
    print_error(e.what(), false);
    return 2;
  } catch (const CheckpointError& e) {
    print_error(e.what(), false);
    return 2;
  } catch (const std::exception& e) {
    print_error(e.what(), false);
    return 1;
  }
}
