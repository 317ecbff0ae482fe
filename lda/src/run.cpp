// A bfly-lda run (see run.hpp).
#include "bfly/lda/run.hpp"

#include "bfly/lda/commands.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/multi_gpu.hpp"
#include "bfly/lda/reference.hpp"
#include "bfly/output_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <fcntl.h>
#include <unistd.h>

namespace bfly::lda {
namespace {

// alpha for progress lines: its value when symmetric, else its range and sum.
std::string alpha_summary(const Priors& priors, int K) {
  if (priors.symmetric_alpha()) return fmt::format("{}", priors.alpha);
  const auto [low, high] = std::minmax_element(priors.topic_alpha.begin(), priors.topic_alpha.end());
  return fmt::format("{:.4g} .. {:.4g} (sum {:.4g}, asymmetric)", *low, *high, priors.alpha_sum(K));
}

// The engine of the run: the GPU's, else the CPU's with the GPU's generated z-step kernel when it is compiled in
// (run by bfly/lockstep.hpp) or the CPU reference z-step. Prints where the run goes and why.
template <typename T>
std::unique_ptr<IterationEngine<T>> choose_engine(const RunSettings& s, const Corpus& corpus) {
  if (s.gpus > 0)  // --gpus N: one rank per GPU; the error says what is missing (NCCL, driver, devices)
    return multi_gpu_engine<T>(s.gpus, s.gpu);
  std::string why_not_gpu;
  if (s.device == Device::gpu || (s.device == Device::automatic && gpu_available(&why_not_gpu)))
    return gpu_engine<T>(s.gpu);  // --device gpu without a GPU: the error says why (exit status 1)
  const std::string reason =
      s.device == Device::cpu ? std::string("--device cpu") : fmt::format("no GPU ({})", why_not_gpu);
  const int threads = resolve_threads(s.options.threads);
  if (s.cpu_zstep == CpuZStepMode::reference) {
    std::printf("%s: running the CPU reference z-step on %d threads (--cpu-zstep reference)\n", reason.c_str(),
                threads);
    return cpu_engine<T>(std::make_unique<CpuZStep<T>>(threads));
  }
  const gen::KernelSpec spec = gpu_z_spec<T>(s.options.topics, s.gpu, mean_document_length(corpus));
  if (const CompiledZKernel* kernel = find_compiled_z_kernel(spec)) {
    std::printf("%s: running the generated kernel %s on the CPU (bfly/lockstep.hpp, %d threads)\n", reason.c_str(),
                gen::kernel_name(spec).c_str(), threads);
    return cpu_engine<T>(std::make_unique<GeneratedCpuZStep<T>>(*kernel, threads));
  }
  const std::string missing = fmt::format(
      "the GPU's kernel for K = {}, {}, is not compiled into this bfly-lda; compiled in: {} (CMake's "
      "BFLY_LDA_CPU_KERNELS)",
      s.options.topics, gen::kernel_name(spec), compiled_z_kernel_names());
  if (s.cpu_zstep == CpuZStepMode::generated)
    throw RunError(fmt::format("--cpu-zstep generated: {}", missing));
  std::printf("%s: running the CPU reference z-step on %d threads (%s)\n", reason.c_str(), threads, missing.c_str());
  return cpu_engine<T>(std::make_unique<CpuZStep<T>>(threads));
}

// "0.501 s", or "0.412 ms" below a tenth of a second (a GPU iteration takes well under a millisecond).
std::string duration_text(double seconds) {
  return seconds >= 0.1 ? fmt::format("{:.3f} s", seconds) : fmt::format("{:.3f} ms", seconds * 1e3);
}

// The checkpoint, atomically; the outputs of an earlier iteration no longer match it, so they go.
template <typename T>
void publish_checkpoint(const Trainer<T>& trainer, const std::string& dir, const std::string& checkpoint) {
  trainer.save_checkpoint(checkpoint);
  remove_outputs(dir);
}

// loglik.csv: one row per iteration, every write checked. A fresh run starts it; a resumed run starts from the
// rows of its checkpoint's log (DIR/loglik.csv next to the checkpoint) up to the checkpoint's iteration, rewritten
// atomically, so rows of iterations past the checkpoint (an interrupted run's) are dropped.
class Curve {
 public:
  static constexpr const char* kHeader = "iteration,train_seconds,tokens_per_s,ll_per_token";

  Curve(const RunSettings& s, std::uint32_t iteration, double ll_per_token) {
    namespace fs = std::filesystem;
    path_ = (fs::path(*s.out) / "loglik.csv").string();
    std::string kept = std::string(kHeader) + "\n";
    if (s.resume) {
      const fs::path source = fs::is_directory(*s.resume) ? fs::path(*s.resume) / "loglik.csv"
                                                          : fs::path(*s.resume).parent_path() / "loglik.csv";
      kept += rows_up_to(source.string(), iteration);
    } else {
      kept += fmt::format("0,0,0,{:.9g}\n", ll_per_token);
    }
    {
      OutputFile out(path_);
      out.text(kept);
      out.commit();
    }
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) throw Error(fmt::format("{}: cannot open it to append: {}", path_, describe_errno(errno)));
  }
  Curve(const Curve&) = delete;
  Curve& operator=(const Curve&) = delete;
  ~Curve() {
    if (fd_ >= 0) ::close(fd_);
  }

  void row(const std::string& text) { write_all(fd_, text.data(), text.size(), path_); }
  void close() {
    if (fd_ >= 0 && ::close(fd_) != 0) {
      fd_ = -1;
      throw Error(fmt::format("{}: cannot write: {}", path_, describe_errno(errno)));
    }
    fd_ = -1;
  }

 private:
  // The rows 1..iteration of the log at `path` (row 0 too); the log must hold them all, in order, else it is not
  // the log of this checkpoint.
  static std::string rows_up_to(const std::string& path, std::uint32_t iteration) {
    std::ifstream in(path);
    if (!in) return {};  // no log (e.g. a checkpoint copied alone): the resumed rows start a new one
    std::string line, kept;
    std::getline(in, line);
    if (line != kHeader)
      throw RunError(fmt::format("{}: not a bfly-lda loglik.csv (first line \"{}\"); it does not belong to the "
                                 "checkpoint; move it away",
                                 path, line));
    std::int64_t expected = 0;
    while (std::getline(in, line) && expected <= iteration) {
      const std::int64_t row = std::strtoll(line.c_str(), nullptr, 10);
      if (row != expected)
        throw RunError(fmt::format("{}: row for iteration {} where {} was expected; the log does not belong to the "
                                   "checkpoint (iteration {}); move it away",
                                   path, row, expected, iteration));
      kept += line + "\n";
      ++expected;
    }
    if (expected <= iteration)
      throw RunError(fmt::format("{}: the log ends at iteration {} but the checkpoint is at iteration {}; it belongs "
                                 "to another run; move it away",
                                 path, expected - 1, iteration));
    return kept;
  }

  std::string path_;
  int fd_ = -1;
};

template <typename T>
void train_typed(const RunSettings& s, const Corpus& corpus, const Corpus* heldout) {
  namespace fs = std::filesystem;
  if (s.out) {
    std::filesystem::create_directories(*s.out);
    remove_stale_temporaries(*s.out);  // a killed run's
    if (!s.resume) {  // a fresh run owns its directory: an earlier run's checkpoint and outputs would not match it
      std::error_code error;
      if (fs::exists(fs::path(*s.out) / "checkpoint.bin", error))
        std::printf("%s: replacing the earlier run's checkpoint and outputs\n", s.out->c_str());
      fs::remove(fs::path(*s.out) / "checkpoint.bin", error);
      remove_outputs(*s.out);
    }
  }
  std::unique_ptr<IterationEngine<T>> engine = choose_engine<T>(s, corpus);
  Trainer<T> trainer = s.resume ? Trainer<T>::resume(corpus, *s.resume, s.options.threads, std::move(engine))
                                : Trainer<T>(corpus, s.options, std::move(engine));
  std::printf("engine: %s\n", trainer.engine().name().c_str());
  if (const auto* parallel = dynamic_cast<const DataParallelEngine<T>*>(&trainer.engine()))
    for (std::size_t r = 0; r < parallel->shards().size(); ++r)
      std::printf("  rank %zu: documents %lld .. %lld, %lld tokens\n", r,
                  static_cast<long long>(parallel->shards()[r].first_doc),
                  static_cast<long long>(parallel->shards()[r].last_doc) - 1,
                  static_cast<long long>(parallel->shards()[r].tokens()));
  const TrainerOptions& o = trainer.options();
  std::printf("model: K = %d, alpha = %s, beta = %g, estimate = %s, type = %s, seed = %llu, iterations %u -> %u\n",
              o.topics, alpha_summary(o.priors, o.topics).c_str(), o.priors.beta, name_of(o.estimate),
              std::string(gen::name_of(gen::element_type_of<T>)).c_str(), static_cast<unsigned long long>(o.seed),
              trainer.iteration(), s.iterations);
  if (o.optimize_interval > 0)
    std::printf("priors: learned every %d iterations (Minka's fixed point): alpha%s\n", o.optimize_interval,
                o.optimize_beta ? " and beta" : "");
  std::printf("log-likelihood: collapsed log p(w, z | alpha, beta) per token (as tomotopy's ll_per_word)\n");
  if (trainer.iteration() > s.iterations)
    throw RunError(fmt::format("the checkpoint is at iteration {}, past --iterations {}", trainer.iteration(),
                               s.iterations));

  std::optional<Curve> curve;
  if (s.out) curve.emplace(s, trainer.iteration(), trainer.ll_per_token());
  if (!s.quiet) std::printf("iteration %4u  ll/token %.6f\n", trainer.iteration(), trainer.ll_per_token());

  const double tokens = static_cast<double>(corpus.num_tokens());
  const std::uint32_t average_last = s.average_last == kAverageLastHalf ? std::max<std::uint32_t>(1, s.iterations / 2)
                                                                        : static_cast<std::uint32_t>(s.average_last);
  const std::string checkpoint = s.out ? (fs::path(*s.out) / "checkpoint.bin").string() : std::string();
  while (trainer.iteration() < s.iterations) {
    const IterationStats stats = trainer.step();
    const double rate = tokens / stats.iteration_seconds;
    if (!s.quiet && (stats.iteration % static_cast<std::uint32_t>(s.progress_every) == 0 ||
                     stats.iteration == s.iterations)) {
      std::printf("iteration %4u  ll/token %.6f  %8.3f Mtokens/s  (z-step %s, iteration %s)\n", stats.iteration,
                  stats.ll_per_token, rate * 1e-6, duration_text(stats.zstep_seconds).c_str(),
                  duration_text(stats.iteration_seconds).c_str());
      std::fflush(stdout);  // progress shows at once, also through a pipe
    }
    // The last average_last iterations' posterior means go into the outputs' average (its time counts as training).
    if (average_last > 1 && stats.iteration + average_last > s.iterations)
      trainer.add_means_to_average();
    if (curve) curve->row(fmt::format("{},{:.6f},{:.6g},{:.9g}\n", stats.iteration, trainer.train_seconds(), rate,
                                      stats.ll_per_token));
    if (s.checkpoint_every > 0 && stats.iteration % static_cast<std::uint32_t>(s.checkpoint_every) == 0 &&
        stats.iteration < s.iterations) {
      publish_checkpoint(trainer, *s.out, checkpoint);
      if (!s.quiet) std::printf("checkpoint: %s (iteration %u)\n", checkpoint.c_str(), stats.iteration);
    }
  }
  if (curve) curve->close();

  std::printf("done: %u iterations, ll/token %.6f, %.2f s of training\n", trainer.iteration(),
              trainer.ll_per_token(), trainer.train_seconds());
  if (trainer.averaged_iterations() > 1)
    std::printf("outputs: the posterior means averaged over the last %d iterations\n", trainer.averaged_iterations());
  if (o.optimize_interval > 0)
    std::printf("priors learned: alpha %s, beta %g\n", alpha_summary(trainer.options().priors, o.topics).c_str(),
                trainer.options().priors.beta);
  for (int k = 0; k < std::min(s.show_topics, o.topics); ++k) {
    std::string line = fmt::format("topic {:>4}:", k);
    for (const std::int32_t w : trainer.top_words(k, s.top_words)) line += " " + corpus.vocab[w];
    std::printf("%s\n", line.c_str());
  }
  if (s.out) {
    // The checkpoint first (the training is kept whatever happens next), then the outputs, all or none.
    publish_checkpoint(trainer, *s.out, checkpoint);
    trainer.write_outputs(*s.out, s.top_words);
    std::printf("wrote %s: topics.txt theta.bin phi.bin alpha.txt documents.txt vocab.txt loglik.csv checkpoint.bin\n",
                s.out->c_str());
  }
  if (heldout)
    evaluate_run(model_of(trainer), *heldout, corpus, s.evaluation,
                 Placement{.device = s.device, .cpu_zstep = s.cpu_zstep, .gpu = s.gpu}, s.out,
                 {{"iteration", std::to_string(trainer.iteration())},
                  {"train_seconds", fmt::format("{:.6f}", trainer.train_seconds())},
                  {"ll_per_token", fmt::format("{:.9g}", trainer.ll_per_token())},
                  {"holdout", fmt::format("{}", s.holdout)}});
}

}  // namespace

void adopt_checkpoint(RunSettings& s, const GivenOptions& given) {
  if (!s.resume) return;
  const CheckpointInfo info = read_checkpoint_info(*s.resume);
  auto agree = [&](std::string_view flag, bool is_given, bool same, const std::string& stored) {
    if (is_given && !same)
      throw RunError(fmt::format("{} differs from the checkpoint's value {}; a resumed run keeps its options "
                                 "(leave {} out)",
                                 flag, stored, flag));
  };
  agree("--topics", given.topics, s.options.topics == info.options.topics, std::to_string(info.options.topics));
  agree("--alpha", given.alpha, s.options.priors.alpha == info.options.priors.alpha,
        fmt::format("{}", info.options.priors.alpha));
  // A learned beta is the checkpoint's own; the starting value given again is not compared with it.
  agree("--beta", given.beta && !info.options.optimize_beta, s.options.priors.beta == info.options.priors.beta,
        fmt::format("{}", info.options.priors.beta));
  agree("--seed", given.seed, s.options.seed == info.options.seed, std::to_string(info.options.seed));
  agree("--estimate", given.estimate, s.options.estimate == info.options.estimate, name_of(info.options.estimate));
  agree("--type", given.type, s.type == info.type, std::string(gen::name_of(info.type)));
  agree("--optimize-interval", given.optimize_interval,
        s.options.optimize_interval == info.options.optimize_interval,
        std::to_string(info.options.optimize_interval));
  agree("--optimize-beta", given.optimize_beta, s.options.optimize_beta == info.options.optimize_beta,
        info.options.optimize_beta ? "on" : "off");
  const int threads = s.options.threads;
  s.options = info.options;
  s.options.threads = threads;
  s.type = info.type;
}

std::string check_device() {
  std::string why_not_gpu;
  if (gpu_available(&why_not_gpu)) return "gpu: a GPU can be used; --device auto trains on it";
  return fmt::format("cpu: no GPU ({})", why_not_gpu);
}

Corpus load_corpus(const RunSettings& s) {
  const auto start = std::chrono::steady_clock::now();
  Corpus corpus = s.text ? read_text(*s.text, s.text_options) : read_uci(*s.docword, *s.vocab, s.max_docs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("corpus: %lld documents, %d words, %lld tokens, longest document %lld tokens (read in %.2f s)\n",
              static_cast<long long>(corpus.num_docs()), corpus.vocab_size(),
              static_cast<long long>(corpus.num_tokens()), static_cast<long long>(corpus.max_doc_length()), seconds);
  if (corpus.dropped_documents() > 0)
    std::printf("dropped %lld of %lld input documents that had no tokens left\n",
                static_cast<long long>(corpus.dropped_documents()), static_cast<long long>(corpus.input_documents));
  return sort_by_length(corpus);  // the paper's order: lane groups of documents of similar length
}

void save_corpus(const Corpus& corpus, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::string body;
  std::int64_t nnz = 0;
  std::map<std::int32_t, int> counts;
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    counts.clear();
    for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i) ++counts[corpus.words[i]];
    for (const auto& [w, n] : counts) body += fmt::format("{} {} {}\n", m + 1, w + 1, n);
    nnz += static_cast<std::int64_t>(counts.size());
  }
  const fs::path docword = fs::path(dir) / "docword.txt", vocab = fs::path(dir) / "vocab.txt";
  OutputFile docword_file(docword.string()), vocab_file(vocab.string());
  docword_file.text(fmt::format("{}\n{}\n{}\n", corpus.num_docs(), corpus.vocab_size(), nnz));
  docword_file.text(body);
  for (const std::string& w : corpus.vocab) vocab_file.text(w + "\n");
  docword_file.finish();
  vocab_file.finish();
  docword_file.commit();
  vocab_file.commit();
  std::printf("wrote %s and %s\n", docword.string().c_str(), vocab.string().c_str());
}

void train(const RunSettings& given_settings, const Corpus& corpus, const Corpus* heldout) {
  RunSettings settings = given_settings;
  gen::visit_element_type(settings.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>)
      train_typed<T>(settings, corpus, heldout);
    else
      throw RunError(fmt::format("bfly-lda trains in f32 or f64, not {}", gen::name_of(settings.type)));
  });
}

void run(const RunSettings& settings) {
  const Corpus corpus = load_corpus(settings);
  if (settings.save_corpus) {
    save_corpus(corpus, *settings.save_corpus);
    return;
  }
  if (settings.holdout > 0) {
    const DocumentSplit split = split_documents(corpus, settings.holdout, settings.options.seed);
    std::printf("held out %lld of %lld documents (%lld tokens) for evaluation (--holdout %g, seed %llu)\n",
                static_cast<long long>(split.heldout.num_docs()), static_cast<long long>(corpus.num_docs()),
                static_cast<long long>(split.heldout.num_tokens()), settings.holdout,
                static_cast<unsigned long long>(settings.options.seed));
    train(settings, split.training, &split.heldout);
    return;
  }
  train(settings, corpus);
}

}  // namespace bfly::lda
