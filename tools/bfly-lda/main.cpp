// bfly-lda: trains an LDA topic model with the uncollapsed Gibbs sampler of Steele & Tristan (2019), Section 4.
// Exit status: 0 success, 2 bad arguments or a bad input file or checkpoint, 1 anything else.
#include "bfly/lda/corpus.hpp"
#include "bfly/lda/generated_zstep.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "bfly/lda/reference.hpp"
#include "bfly/lda/trainer.hpp"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace bfly::lda;
namespace gen = bfly::gen;

// A mistake in the command line; main prints it with a pointer to --help and exits with status 2.
class UsageError : public bfly::Error {
 public:
  using Error::Error;
};

struct Flag {
  std::string_view name;
  std::string_view value;  // the value's placeholder, empty for a switch
  std::string_view help;
};

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
    {"--estimate", "mean|draw", "theta and phi as posterior means or Dirichlet draws (default mean)"},
    {"--seed", "N", "seed of every random draw (default 1)"},
    {"--type", "f32|f64", "element type of theta, phi and the z-step sums (default f32)"},
    {"--threads", "N", "CPU threads (default: all cores, at most 16); never changes the results"},
    {"--device", "cpu|gpu|auto", "where iterations run (default auto: the GPU when one can be used)"},
    {"--cpu-zstep", "MODE",
     "z-step of CPU runs: generated (the GPU's kernel, run on the CPU), reference (plain C++), or auto "
     "(default: generated when compiled in for K and --type, else reference)"},
    {"--gpu-w", "W", "butterfly width of the generated z-step kernel, 4, 8, 16 or 32 (default: chosen)"},
    {"--gpu-variant", "swap|addsub", "butterfly variant of the generated z-step kernel (default: chosen)"},
    {"--out", "DIR", "write topics.txt, theta.bin, phi.bin, documents.txt, vocab.txt, loglik.csv, checkpoint.bin"},
    {"--top-words", "N", "words per topic in topics.txt and on screen (default 10)"},
    {"--show-topics", "N", "topics printed at the end (default 20, 0: none)"},
    {"--checkpoint-every", "N", "write DIR/checkpoint.bin every N iterations (needs --out; 0: only at the end)"},
    {"--resume", "DIR", "continue the run whose checkpoint is DIR/checkpoint.bin (or the file DIR)"},
    {"--quiet", "", "print only the summary, not a line per iteration"},
    {"--progress-every", "N", "print a line every N iterations (default 1)"},
    {"--save-corpus", "DIR", "write the corpus as read (after tokenising) as DIR/docword.txt + DIR/vocab.txt "
                             "(UCI format, documents in training order) and exit; other trainers can then see "
                             "exactly bfly-lda's tokens"},
    {"--check-device", "", "print where --device auto would train (\"gpu: ...\" or \"cpu: no GPU (why)\") and exit"},
    {"--help", "", "show this help"},
};

std::string usage() {
  std::string text =
      "usage: bfly-lda (--docword FILE --vocab FILE | --text FILE) [options]\n"
      "Trains an LDA topic model with the uncollapsed Gibbs sampler of Steele & Tristan (2019).\n\noptions:\n";
  for (const Flag& f : kFlags) {
    const std::string left = f.value.empty() ? std::string(f.name) : fmt::format("{} {}", f.name, f.value);
    text += fmt::format("  {:<28} {}\n", left, f.help);
  }
  text += "\nexit status: 0 done, 2 bad arguments or input file or checkpoint, 1 other errors\n";
  return text;
}

class Args {
 public:
  explicit Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string_view word = argv[i];
      std::optional<std::string> inline_value;
      if (const auto eq = word.find('='); word.starts_with("--") && eq != std::string_view::npos) {
        inline_value = std::string(word.substr(eq + 1));
        word = word.substr(0, eq);
      }
      if (word == "-h") word = "--help";
      const Flag* flag = nullptr;
      for (const Flag& f : kFlags)
        if (f.name == word) flag = &f;
      if (flag == nullptr)
        throw UsageError(word.starts_with("-") ? fmt::format("unknown option {}", word)
                                               : fmt::format("unexpected argument \"{}\"", word));
      if (values_.contains(std::string(word))) throw UsageError(fmt::format("{} given twice", word));
      std::string value;
      if (!flag->value.empty()) {
        if (inline_value) value = *inline_value;
        else if (i + 1 < argc) value = argv[++i];
        else throw UsageError(fmt::format("{} needs a value ({})", word, flag->value));
      } else if (inline_value) {
        throw UsageError(fmt::format("{} takes no value", word));
      }
      values_[std::string(word)] = value;
    }
  }

  bool has(std::string_view name) const { return values_.contains(std::string(name)); }
  std::optional<std::string> text(std::string_view name) const {
    const auto it = values_.find(std::string(name));
    return it == values_.end() ? std::nullopt : std::optional(it->second);
  }
  long long integer(std::string_view name, long long fallback, long long minimum, long long maximum) const {
    const auto value = text(name);
    if (!value) return fallback;
    long long parsed = 0;
    const auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
    if (ec != std::errc() || ptr != value->data() + value->size() || parsed < minimum || parsed > maximum)
      throw UsageError(fmt::format("{} expects an integer in [{}, {}], got \"{}\"", name, minimum, maximum, *value));
    return parsed;
  }
  double positive(std::string_view name, double fallback) const {
    const auto value = text(name);
    if (!value) return fallback;
    double parsed = 0;
    const auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
    if (ec != std::errc() || ptr != value->data() + value->size() || !(parsed > 0) || !std::isfinite(parsed))
      throw UsageError(fmt::format("{} expects a positive number, got \"{}\"", name, *value));
    return parsed;
  }

 private:
  std::map<std::string, std::string> values_;
};

struct Settings {
  std::optional<std::string> docword, vocab, text;
  TextOptions text_options;
  std::int64_t max_docs = 0;
  TrainerOptions options;
  ElementType type = ElementType::f32;
  std::uint32_t iterations = 100;
  std::optional<std::string> out, resume;
  int checkpoint_every = 0;
  int top_words = 10, show_topics = 20;
  bool quiet = false;
  int progress_every = 1;
  std::optional<std::string> save_corpus;
  std::string device = "auto";
  std::string cpu_zstep = "auto";
  GpuEngineOptions gpu;
};

Settings parse(const Args& args) {
  Settings s;
  s.docword = args.text("--docword");
  s.vocab = args.text("--vocab");
  s.text = args.text("--text");
  if (s.text && (s.docword || s.vocab)) throw UsageError("give either --text or --docword with --vocab, not both");
  if (!s.text && !s.docword && !s.vocab) throw UsageError("no corpus: give --docword FILE --vocab FILE or --text FILE");
  if (!s.text && (!s.docword || !s.vocab)) throw UsageError("--docword and --vocab go together; give both");
  if (args.has("--min-count") && !s.text) throw UsageError("--min-count applies to --text only");
  s.text_options.min_count = static_cast<int>(args.integer("--min-count", 2, 1, 1'000'000'000));
  s.max_docs = args.integer("--max-docs", 0, 1, INT64_MAX);
  s.text_options.max_docs = s.max_docs;
  s.options.topics = static_cast<int>(args.integer("--topics", 64, 1, 65536));
  s.iterations = static_cast<std::uint32_t>(args.integer("--iterations", 100, 0, 1'000'000'000));
  s.options.priors.alpha = args.positive("--alpha", 0.1);
  s.options.priors.beta = args.positive("--beta", 0.01);
  s.options.seed = static_cast<std::uint64_t>(args.integer("--seed", 1, 0, INT64_MAX));
  s.options.threads = static_cast<int>(args.integer("--threads", 0, 1, 1024));
  if (const auto e = args.text("--estimate")) {
    if (*e == "mean") s.options.estimate = Estimate::mean;
    else if (*e == "draw") s.options.estimate = Estimate::draw;
    else throw UsageError(fmt::format("--estimate expects mean or draw, got \"{}\"", *e));
  }
  if (const auto t = args.text("--type")) {
    if (*t == "f32") s.type = ElementType::f32;
    else if (*t == "f64") s.type = ElementType::f64;
    else throw UsageError(fmt::format("--type expects f32 or f64, got \"{}\"", *t));
  }
  s.out = args.text("--out");
  s.resume = args.text("--resume");
  s.checkpoint_every = static_cast<int>(args.integer("--checkpoint-every", 0, 0, 1'000'000'000));
  if (s.checkpoint_every > 0 && !s.out && !s.resume)
    throw UsageError("--checkpoint-every needs --out DIR (where checkpoint.bin goes)");
  if (s.resume && !s.out) s.out = s.resume;  // a resumed run writes where it came from unless told otherwise
  s.top_words = static_cast<int>(args.integer("--top-words", 10, 1, 1000));
  s.show_topics = static_cast<int>(args.integer("--show-topics", 20, 0, 65536));
  s.quiet = args.has("--quiet");
  s.progress_every = static_cast<int>(args.integer("--progress-every", 1, 1, 1'000'000'000));
  if (s.quiet && args.has("--progress-every")) throw UsageError("--quiet and --progress-every contradict each other");
  s.save_corpus = args.text("--save-corpus");
  if (const auto d = args.text("--device")) {
    if (*d != "cpu" && *d != "gpu" && *d != "auto")
      throw UsageError(fmt::format("--device expects cpu, gpu or auto, got \"{}\"", *d));
    s.device = *d;
  }
  if (const auto z = args.text("--cpu-zstep")) {
    if (*z != "auto" && *z != "generated" && *z != "reference")
      throw UsageError(fmt::format("--cpu-zstep expects auto, generated or reference, got \"{}\"", *z));
    if (s.device == "gpu") throw UsageError("--cpu-zstep applies to runs on the CPU, not to --device gpu");
    s.cpu_zstep = *z;
  }
  if (args.has("--gpu-w")) {
    s.gpu.W = static_cast<int>(args.integer("--gpu-w", 0, 4, 32));
    if (s.gpu.W != 4 && s.gpu.W != 8 && s.gpu.W != 16 && s.gpu.W != 32)
      throw UsageError(fmt::format("--gpu-w expects 4, 8, 16 or 32, got {}", s.gpu.W));
  }
  if (const auto v = args.text("--gpu-variant")) {
    if (*v != "swap" && *v != "addsub")
      throw UsageError(fmt::format("--gpu-variant expects swap or addsub, got \"{}\"", *v));
    s.gpu.variant = *v;
  }

  if (s.resume) {  // the run's options come from the checkpoint; options given again must agree with it
    const CheckpointInfo info = read_checkpoint_info(*s.resume);
    auto agree = [&](std::string_view flag, bool same, const std::string& stored) {
      if (args.has(flag) && !same)
        throw UsageError(fmt::format("{} differs from the checkpoint's value {}; a resumed run keeps its options "
                                     "(leave {} out)",
                                     flag, stored, flag));
    };
    agree("--topics", s.options.topics == info.options.topics, std::to_string(info.options.topics));
    agree("--alpha", s.options.priors.alpha == info.options.priors.alpha, fmt::format("{}", info.options.priors.alpha));
    agree("--beta", s.options.priors.beta == info.options.priors.beta, fmt::format("{}", info.options.priors.beta));
    agree("--seed", s.options.seed == info.options.seed, std::to_string(info.options.seed));
    agree("--estimate", s.options.estimate == info.options.estimate, name_of(info.options.estimate));
    agree("--type", s.type == info.type, name_of(info.type));
    const int threads = s.options.threads;
    s.options = info.options;
    s.options.threads = threads;
    s.type = info.type;
  }
  return s;
}

Corpus load_corpus(const Settings& s) {
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

// The corpus in UCI bag-of-words form: documents in `corpus` order (docID = row + 1), word ids + 1, counts summed.
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
  std::ofstream(docword) << fmt::format("{}\n{}\n{}\n", corpus.num_docs(), corpus.vocab_size(), nnz) << body;
  std::ofstream out(vocab);
  for (const std::string& w : corpus.vocab) out << w << '\n';
  if (!out) throw bfly::Error(fmt::format("{}: cannot write the file", vocab.string()));
  std::printf("wrote %s and %s\n", docword.string().c_str(), vocab.string().c_str());
}

// The engine of the run: the GPU's, else the CPU's with the GPU's generated z-step kernel when it is compiled in
// (run by bfly/lockstep.hpp) or the CPU reference z-step. Prints where the run goes and why.
template <typename T>
std::unique_ptr<IterationEngine<T>> choose_engine(const Settings& s, const Corpus& corpus) {
  std::string why_not_gpu;
  if (s.device == "gpu" || (s.device == "auto" && gpu_available(&why_not_gpu)))
    return gpu_engine<T>(s.gpu);  // --device gpu without a GPU: the error says why (exit status 1)
  const std::string reason = s.device == "cpu" ? std::string("--device cpu") : fmt::format("no GPU ({})", why_not_gpu);
  const int threads = resolve_threads(s.options.threads);
  if (s.cpu_zstep == "reference") {
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
  if (s.cpu_zstep == "generated") throw UsageError(fmt::format("--cpu-zstep generated: {}", missing));
  std::printf("%s: running the CPU reference z-step on %d threads (%s)\n", reason.c_str(), threads, missing.c_str());
  return cpu_engine<T>(std::make_unique<CpuZStep<T>>(threads));
}

// "0.501 s", or "0.412 ms" below a tenth of a second (a GPU iteration takes well under a millisecond).
std::string duration_text(double seconds) {
  return seconds >= 0.1 ? fmt::format("{:.3f} s", seconds) : fmt::format("{:.3f} ms", seconds * 1e3);
}

template <typename T>
int train(const Settings& s, const Corpus& corpus) {
  namespace fs = std::filesystem;
  std::unique_ptr<IterationEngine<T>> engine = choose_engine<T>(s, corpus);
  Trainer<T> trainer = s.resume ? Trainer<T>::resume(corpus, *s.resume, s.options.threads, std::move(engine))
                                : Trainer<T>(corpus, s.options, std::move(engine));
  std::printf("engine: %s\n", trainer.engine().name().c_str());
  const TrainerOptions& o = trainer.options();
  std::printf("model: K = %d, alpha = %g, beta = %g, estimate = %s, type = %s, seed = %llu, iterations %u -> %u\n",
              o.topics, o.priors.alpha, o.priors.beta, name_of(o.estimate), name_of(s.type),
              static_cast<unsigned long long>(o.seed), trainer.iteration(), s.iterations);
  std::printf("log-likelihood: collapsed log p(w, z | alpha, beta) per token (as tomotopy's ll_per_word)\n");
  if (trainer.iteration() > s.iterations)
    throw UsageError(fmt::format("the checkpoint is at iteration {}, past --iterations {}", trainer.iteration(),
                                 s.iterations));

  std::FILE* curve = nullptr;
  if (s.out) {
    fs::create_directories(*s.out);
    const fs::path path = fs::path(*s.out) / "loglik.csv";
    const bool append = s.resume && fs::exists(path);
    curve = std::fopen(path.string().c_str(), append ? "a" : "w");
    if (curve == nullptr) throw bfly::Error(fmt::format("{}: cannot write the file", path.string()));
    if (!append) std::fprintf(curve, "iteration,train_seconds,tokens_per_s,ll_per_token\n");
    if (!s.resume) std::fprintf(curve, "0,0,0,%.9g\n", trainer.ll_per_token());
    std::fflush(curve);
  }
  if (!s.quiet) std::printf("iteration %4u  ll/token %.6f\n", trainer.iteration(), trainer.ll_per_token());

  const double tokens = static_cast<double>(corpus.num_tokens());
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
    if (curve != nullptr) {
      std::fprintf(curve, "%u,%.6f,%.6g,%.9g\n", stats.iteration, trainer.train_seconds(), rate, stats.ll_per_token);
      std::fflush(curve);
    }
    if (s.checkpoint_every > 0 && stats.iteration % static_cast<std::uint32_t>(s.checkpoint_every) == 0 &&
        stats.iteration < s.iterations) {
      trainer.save_checkpoint(checkpoint);
      if (!s.quiet) std::printf("checkpoint: %s (iteration %u)\n", checkpoint.c_str(), stats.iteration);
    }
  }
  if (curve != nullptr) std::fclose(curve);

  std::printf("done: %u iterations, ll/token %.6f, %.2f s of training\n", trainer.iteration(),
              trainer.ll_per_token(), trainer.train_seconds());
  for (int k = 0; k < std::min(s.show_topics, o.topics); ++k) {
    std::string line = fmt::format("topic {:>4}:", k);
    for (const std::int32_t w : trainer.top_words(k, s.top_words)) line += " " + corpus.vocab[w];
    std::printf("%s\n", line.c_str());
  }
  if (s.out) {
    trainer.write_outputs(*s.out, s.top_words);
    trainer.save_checkpoint(checkpoint);
    std::printf("wrote %s: topics.txt theta.bin phi.bin documents.txt vocab.txt loglik.csv checkpoint.bin\n",
                s.out->c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args args(argc, argv);
    if (args.has("--help")) {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    if (args.has("--check-device")) {
      std::string why_not_gpu;
      if (gpu_available(&why_not_gpu)) std::printf("gpu: a GPU can be used; --device auto trains on it\n");
      else std::printf("cpu: no GPU (%s)\n", why_not_gpu.c_str());
      return 0;
    }
    const Settings settings = parse(args);
    const Corpus corpus = load_corpus(settings);
    if (settings.save_corpus) {
      save_corpus(corpus, *settings.save_corpus);
      return 0;
    }
    return settings.type == ElementType::f32 ? train<float>(settings, corpus) : train<double>(settings, corpus);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "bfly-lda: %s\n(bfly-lda --help lists the options)\n", e.what());
    return 2;
  } catch (const CorpusError& e) {
    std::fprintf(stderr, "bfly-lda: %s\n", e.what());
    return 2;
  } catch (const CheckpointError& e) {
    std::fprintf(stderr, "bfly-lda: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bfly-lda: %s\n", e.what());
    return 1;
  }
}
