// The trainer's iteration loop, its checkpoint file and its output files.
#include "bfly/lda/trainer.hpp"

#include "seconds_since.hpp"

#include "bfly/output_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <optional>

#include <unistd.h>

namespace bfly::lda {

static_assert(std::endian::native == std::endian::little, "bfly-lda files are little-endian; add byte swapping");

namespace {

constexpr char kCheckpointMagic[8] = {'B', 'F', 'L', 'Y', 'C', 'K', 'P', '1'};
constexpr char kMatrixMagic[8] = {'B', 'F', 'L', 'Y', 'M', 'A', 'T', '1'};
// Format 2 adds hyperparameter optimisation: the run's optimize_interval and flags, and the learned asymmetric
// alpha (K doubles after the header) once there is one. Format 1 files (fixed, symmetric priors) are still read.
constexpr std::uint32_t kCheckpointFormat = 2, kOldestCheckpointFormat = 1;
constexpr std::uint32_t kFlagAsymmetricAlpha = 1, kFlagOptimizeBeta = 2;
// magic, 6 u32, seed, alpha, beta, seconds, D, V, tokens, fingerprint; format 2: 2 more u32
constexpr std::uint64_t header_bytes(std::uint32_t format) { return 8 + 6 * 4 + 8 * 8 + (format >= 2 ? 8 : 0); }

// FNV-1a over 8-byte words (then the tail bytes): a checksum that notices damaged or truncated files.
class Checksum {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, p + i, 8);
      hash_ = (hash_ ^ word) * 0x100000001b3ull;
    }
    for (; i < bytes; ++i) hash_ = (hash_ ^ p[i]) * 0x100000001b3ull;
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

// A file published atomically (bfly/output_file.hpp: a temporary in the same directory, every write checked,
// fsync, rename), with the checksum of what was written.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path) : file_(prepare(path)) {}

  void write(const void* data, std::size_t bytes) {
    file_.write(data, bytes);
    checksum_.add(data, bytes);
  }
  template <typename V>
  void put(const V& value) {
    write(&value, sizeof value);
  }
  void text(const std::string& s) { write(s.data(), s.size()); }
  std::uint64_t checksum() const { return checksum_.value(); }
  void finish() { file_.finish(); }
  void commit() { file_.commit(); }

 private:
  static const std::string& prepare(const std::string& path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    return path;
  }
  OutputFile file_;
  Checksum checksum_;
};

// Reads a checkpoint sequentially, checksumming what it reads.
class CheckpointReader {
 public:
  explicit CheckpointReader(std::string path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr)
      throw CheckpointError(fmt::format("{}: cannot open the checkpoint; --resume takes the directory of a run's "
                                        "--out (holding checkpoint.bin) or the checkpoint file",
                                        path_));
  }
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;
  ~CheckpointReader() { std::fclose(file_); }

  void read(void* data, std::size_t bytes, const char* what) {
    if (bytes != 0 && std::fread(data, 1, bytes, file_) != bytes)
      throw CheckpointError(fmt::format("{}: the file ends inside {}; truncated checkpoint", path_, what));
    checksum_.add(data, bytes);
  }
  template <typename V>
  V get(const char* what) {
    V value;
    read(&value, sizeof value, what);
    return value;
  }
  void finish() {
    const std::uint64_t expected = checksum_.value();
    std::uint64_t stored = 0;
    if (std::fread(&stored, 1, sizeof stored, file_) != sizeof stored)
      throw CheckpointError(fmt::format("{}: the file ends before its checksum; truncated checkpoint", path_));
    if (stored != expected)
      throw CheckpointError(fmt::format("{}: checksum mismatch; the checkpoint is damaged", path_));
    if (std::fgetc(file_) != EOF)
      throw CheckpointError(fmt::format("{}: extra bytes after the checksum; not a bfly-lda checkpoint", path_));
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  Checksum checksum_;
};

CheckpointInfo read_header(CheckpointReader& in) {
  char magic[8];
  in.read(magic, sizeof magic, "the header");
  if (std::memcmp(magic, kCheckpointMagic, sizeof magic) != 0)
    throw CheckpointError(fmt::format("{}: not a bfly-lda checkpoint (bad magic)", in.path()));
  const auto format = in.get<std::uint32_t>("the header");
  if (format < kOldestCheckpointFormat || format > kCheckpointFormat)
    throw CheckpointError(fmt::format("{}: checkpoint format {}, this bfly-lda reads formats {} to {}", in.path(),
                                      format, kOldestCheckpointFormat, kCheckpointFormat));
  CheckpointInfo info;
  info.format = format;
  const auto size = in.get<std::uint32_t>("the header");
  const gen::ElementTypeInfo* type = nullptr;
  for (const gen::ElementTypeInfo& row : gen::kElementTypes)
    if (!row.narrow() && static_cast<std::uint32_t>(row.size) == size) type = &row;  // f32 or f64
  if (type == nullptr) throw CheckpointError(fmt::format("{}: bad element size {}", in.path(), size));
  info.type = type->type;
  info.options.topics = static_cast<int>(in.get<std::uint32_t>("the header"));
  const auto estimate = in.get<std::uint32_t>("the header");
  if (estimate > 2) throw CheckpointError(fmt::format("{}: bad estimate code {}", in.path(), estimate));
  info.options.estimate = estimate == 0 ? Estimate::mean : estimate == 1 ? Estimate::draw : Estimate::collapsed;
  info.iteration = in.get<std::uint32_t>("the header");
  const auto flags = in.get<std::uint32_t>("the header");  // 0 in format 1
  if (flags > (kFlagAsymmetricAlpha | kFlagOptimizeBeta) || (format < 2 && flags != 0))
    throw CheckpointError(fmt::format("{}: bad flags {:#x}; damaged checkpoint", in.path(), flags));
  info.options.optimize_beta = (flags & kFlagOptimizeBeta) != 0;
  info.options.seed = in.get<std::uint64_t>("the header");
  info.options.priors.alpha = in.get<double>("the header");
  info.options.priors.beta = in.get<double>("the header");
  info.train_seconds = in.get<double>("the header");
  info.docs = in.get<std::int64_t>("the header");
  info.vocab = in.get<std::int64_t>("the header");
  info.tokens = in.get<std::int64_t>("the header");
  info.corpus_fingerprint = in.get<std::uint64_t>("the header");
  if (format >= 2) {
    info.options.optimize_interval = static_cast<int>(in.get<std::uint32_t>("the header"));
    (void)in.get<std::uint32_t>("the header");  // reserved
  }
  info.asymmetric_alpha = (flags & kFlagAsymmetricAlpha) != 0;
  if (info.options.optimize_interval < 0)
    throw CheckpointError(fmt::format("{}: bad optimize interval; damaged checkpoint", in.path()));
  if (info.options.topics < 1 || info.options.topics > kMaxTopics || info.docs < 0 || info.vocab < 0 || info.tokens < 0)
    throw CheckpointError(fmt::format("{}: the header holds impossible sizes; damaged checkpoint", in.path()));
  return info;
}

std::string checkpoint_file(const std::string& path) {
  return std::filesystem::is_directory(path) ? (std::filesystem::path(path) / "checkpoint.bin").string() : path;
}

// The asymmetric alpha that follows the header when the flags say so (K doubles), into info.options.priors.
void read_alpha(CheckpointReader& in, CheckpointInfo& info) {
  if (!info.asymmetric_alpha) return;
  std::vector<double> alpha(static_cast<std::size_t>(info.options.topics));
  in.read(alpha.data(), alpha.size() * sizeof(double), "alpha");
  info.options.priors.topic_alpha = std::move(alpha);
}

std::uint64_t alpha_bytes(const CheckpointInfo& info) {
  return info.asymmetric_alpha ? static_cast<std::uint64_t>(info.options.topics) * sizeof(double) : 0;
}

}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path) {
  CheckpointReader in(checkpoint_file(path));
  CheckpointInfo info = read_header(in);
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(in.path(), error);
  if (!error && size >= header_bytes(info.format) + alpha_bytes(info)) read_alpha(in, info);
  return info;
}

// The CPU engine: the state in host vectors, every step through the CPU reference (reference.hpp).
template <typename T>
class CpuEngine final : public IterationEngine<T> {
 public:
  explicit CpuEngine(std::unique_ptr<ZStep<T>> zstep) : zstep_(std::move(zstep)) {}

  std::string name() const override { return zstep_->name(); }

  void bind(const Corpus& corpus, const TrainerOptions& options) override {
    corpus_ = &corpus;
    options_ = options;
    const int K = options.topics;
    z_.assign(static_cast<std::size_t>(corpus.num_tokens()), 0);
    theta_.assign(static_cast<std::size_t>(corpus.num_docs()) * K, T(0));
    phi_.assign(static_cast<std::size_t>(corpus.vocab_size()) * K, T(0));
    zstep_->bind(corpus, K);
  }

  double load(std::span<const std::int32_t> z, const T* theta, const T* phi, std::uint32_t iteration) override {
    std::copy(z.begin(), z.end(), z_.begin());
    counts_ = count_topics(*corpus_, options_.topics, z_, options_.threads);
    if (theta != nullptr && phi != nullptr) {
      std::copy_n(theta, theta_.size(), theta_.begin());
      std::copy_n(phi, phi_.size(), phi_.begin());
    } else {
      estimate(iteration);
    }
    return log_likelihood(*corpus_, counts_, options_.priors, options_.threads);
  }

  typename IterationEngine<T>::Step step(std::uint32_t t) override {
    typename IterationEngine<T>::Step result;
    const auto start = std::chrono::steady_clock::now();
    std::optional<CollapsedTerms> collapsed;
    if (options_.estimate == Estimate::collapsed) {
      topic32_.assign(counts_.topic.begin(), counts_.topic.end());
      collapsed = CollapsedTerms{topic32_, options_.priors.alpha_sum(options_.topics),
                                 static_cast<double>(corpus_->vocab_size()) * options_.priors.beta};
    }
    result.report = zstep_->run(*corpus_, options_.topics, theta_, phi_, z_, options_.seed, t,
                                collapsed ? &*collapsed : nullptr);
    result.zstep_seconds = detail::seconds_since(start);
    if (result.report.invalid_tokens > 0) return result;
    counts_ = count_topics(*corpus_, options_.topics, z_, options_.threads);
    estimate(t);
    result.log_likelihood = log_likelihood(*corpus_, counts_, options_.priors, options_.threads);
    return result;
  }

  void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) override {
    std::copy(z_.begin(), z_.end(), z.begin());
    std::copy(theta_.begin(), theta_.end(), theta.begin());
    std::copy(phi_.begin(), phi_.end(), phi.begin());
    counts = counts_;
  }

  // The collapsed z-step reads theta and phi as the means under the current priors, so they are formed again.
  void set_priors(const Priors& priors) override {
    options_.priors = priors;
    if (options_.estimate == Estimate::collapsed) estimate(0);
  }

 private:
  void estimate(std::uint32_t iteration) {
    estimate_theta<T>(*corpus_, counts_, options_.priors, options_.estimate, options_.seed, iteration, theta_,
                      options_.threads);
    estimate_phi<T>(*corpus_, counts_, options_.priors, options_.estimate, options_.seed, iteration, phi_,
                    options_.threads);
  }

  std::unique_ptr<ZStep<T>> zstep_;
  const Corpus* corpus_ = nullptr;
  TrainerOptions options_;
  std::vector<std::int32_t> z_;
  std::vector<T> theta_, phi_;
  Counts counts_;
  std::vector<std::int32_t> topic32_;  // n_k as the collapsed z-step takes it
};

template <typename T>
DocumentTopicHistogram IterationEngine<T>::document_topic_histogram(const Corpus& corpus, int topics,
                                                                    std::int64_t longest) {
  std::vector<std::int32_t> z;
  std::vector<T> theta, phi;
  Counts counts;
  const auto K = static_cast<std::size_t>(topics);
  z.resize(static_cast<std::size_t>(corpus.num_tokens()));
  theta.resize(static_cast<std::size_t>(corpus.num_docs()) * K);
  phi.resize(static_cast<std::size_t>(corpus.vocab_size()) * K);
  download(z, theta, phi, counts);
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(corpus.num_docs()));
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) lengths[static_cast<std::size_t>(m)] = corpus.doc_length(m);
  return lda::document_topic_histogram(counts.doc_topic, lengths, static_cast<int>(K), longest);
}

template <typename T>
void IterationEngine<T>::add_means_to_sums() {
  throw Error(fmt::format("the engine {} keeps no sums of the posterior means (keeps_mean_sums() is false)", name()));
}

template <typename T>
void IterationEngine<T>::download_mean_sums(std::span<double>, std::span<double>) {
  throw Error(fmt::format("the engine {} keeps no sums of the posterior means (keeps_mean_sums() is false)", name()));
}

template <typename T>
std::unique_ptr<IterationEngine<T>> cpu_engine(std::unique_ptr<ZStep<T>> zstep) {
  return std::make_unique<CpuEngine<T>>(std::move(zstep));
}

template <typename T>
Trainer<T>::Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<IterationEngine<T>> engine,
                    bool)
    : corpus_(&corpus), options_(options), engine_(std::move(engine)) {
  if (options_.topics < 1) throw Error(fmt::format("the number of topics must be >= 1, got {}", options_.topics));
  if (options_.topics > kMaxTopics)
    throw Error(fmt::format("the number of topics must be <= {}, got {}", kMaxTopics, options_.topics));
  options_.priors.check(options_.topics);
  if (options_.optimize_interval < 0)
    throw Error(fmt::format("the optimize interval must be >= 0 (0: fixed priors), got {}",
                            options_.optimize_interval));
  // theta (D x K) and phi (V x K) in the engine and in the trainer's host copies, z twice, before allocating.
  const double cells = (static_cast<double>(corpus.num_docs()) + static_cast<double>(corpus.vocab_size())) *
                       static_cast<double>(options_.topics);
  check_memory(2.0 * cells * sizeof(T) + 2.0 * static_cast<double>(corpus.num_tokens()) * sizeof(std::int32_t),
               fmt::format("the model (K = {} topics x ({} documents + {} words))", options_.topics, corpus.num_docs(),
                           corpus.vocab_size()));
  engine_->bind(corpus, options_);
}

template <typename T>
Trainer<T>::Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<ZStep<T>> zstep)
    : Trainer(corpus, options, cpu_engine<T>(std::move(zstep))) {}

template <typename T>
Trainer<T>::Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<IterationEngine<T>> engine)
    : Trainer(corpus, options, std::move(engine), true) {
  std::vector<std::int32_t> z(static_cast<std::size_t>(corpus.num_tokens()));
  initial_topics(corpus, options_.topics, options_.seed, z);
  ll_per_token_ = engine_->load(z, nullptr, nullptr, 0) / static_cast<double>(corpus.num_tokens());
}

template <typename T>
Trainer<T> Trainer<T>::resume(const Corpus& corpus, const std::string& checkpoint_path, int threads,
                              std::unique_ptr<ZStep<T>> zstep) {
  return resume(corpus, checkpoint_path, threads, cpu_engine<T>(std::move(zstep)));
}

template <typename T>
Trainer<T> Trainer<T>::resume(const Corpus& corpus, const std::string& checkpoint_path, int threads,
                              std::unique_ptr<IterationEngine<T>> engine) {
  CheckpointReader in(checkpoint_file(checkpoint_path));
  CheckpointInfo info = read_header(in);
  if (info.type != gen::element_type_of<T>)
    throw CheckpointError(fmt::format("{}: the checkpoint holds {} values, this run uses {}; pass --type {}",
                                      in.path(), gen::name_of(info.type), gen::name_of(gen::element_type_of<T>),
                                      gen::name_of(info.type)));
  if (info.docs != corpus.num_docs() || info.vocab != corpus.vocab_size() || info.tokens != corpus.num_tokens() ||
      info.corpus_fingerprint != corpus.fingerprint())
    throw CheckpointError(fmt::format(
        "{}: the checkpoint was written for another corpus ({} documents, {} words, {} tokens; this one has {}, {}, "
        "{}); give the same corpus options (--docword/--vocab or --text, --max-docs, --min-count) as the first run",
        in.path(), info.docs, info.vocab, info.tokens, corpus.num_docs(), corpus.vocab_size(), corpus.num_tokens()));
  TrainerOptions options = info.options;
  options.threads = threads;
  const int K = options.topics;
  // The header is not covered by the checksum until the whole file is read: check its sizes against the file's
  // size before allocating anything (a damaged K must not end in bad_alloc).
  {
    const auto tokens = static_cast<std::uint64_t>(corpus.num_tokens());
    const auto cells = (static_cast<std::uint64_t>(corpus.num_docs()) + static_cast<std::uint64_t>(corpus.vocab_size())) *
                       static_cast<std::uint64_t>(K);
    const std::uint64_t expected = header_bytes(info.format) + alpha_bytes(info) + tokens * sizeof(std::int32_t) + cells * sizeof(T) + 8;
    std::error_code error;
    const std::uintmax_t actual = std::filesystem::file_size(in.path(), error);
    if (K > kMaxTopics || (!error && actual != expected))
      throw CheckpointError(fmt::format("{}: {} bytes, but its header (K = {}) says {}; damaged or truncated "
                                        "checkpoint",
                                        in.path(), error ? 0 : actual, K, expected));
  }
  read_alpha(in, info);
  options.priors = info.options.priors;
  std::vector<std::int32_t> z(static_cast<std::size_t>(corpus.num_tokens()));
  std::vector<T> theta(static_cast<std::size_t>(corpus.num_docs()) * K);
  std::vector<T> phi(static_cast<std::size_t>(corpus.vocab_size()) * K);
  in.read(z.data(), z.size() * sizeof(std::int32_t), "z");
  in.read(theta.data(), theta.size() * sizeof(T), "theta");
  in.read(phi.data(), phi.size() * sizeof(T), "phi");
  in.finish();
  for (std::size_t i = 0; i < z.size(); ++i)
    if (z[i] < 0 || z[i] >= K)
      throw CheckpointError(fmt::format("{}: token {} has topic {}, outside [0, K = {}); damaged checkpoint",
                                        in.path(), i, z[i], K));
  Trainer trainer(corpus, options, std::move(engine), true);
  trainer.iteration_ = info.iteration;
  trainer.train_seconds_ = info.train_seconds;
  trainer.ll_per_token_ = trainer.engine_->load(z, theta.data(), phi.data(), info.iteration) /
                          static_cast<double>(corpus.num_tokens());
  return trainer;
}

template <typename T>
const Trainer<T>& Trainer<T>::sync() const {
  if (stale_) {
    const int K = options_.topics;
    z_.resize(static_cast<std::size_t>(corpus_->num_tokens()));
    theta_.resize(static_cast<std::size_t>(corpus_->num_docs()) * K);
    phi_.resize(static_cast<std::size_t>(corpus_->vocab_size()) * K);
    engine_->download(z_, theta_, phi_, counts_);
    stale_ = false;
  }
  return *this;
}

template <typename T>
IterationStats Trainer<T>::step() {
  const auto start = std::chrono::steady_clock::now();
  const std::uint32_t t = iteration_ + 1;
  stale_ = true;
  const typename IterationEngine<T>::Step result = engine_->step(t);
  if (result.report.invalid_tokens > 0)
    throw Error(fmt::format("iteration {}: {} token(s) could not be sampled (weights with total 0, NaN or "
                            "infinite), first token {}; try --type f64 or larger --alpha/--beta",
                            t, result.report.invalid_tokens, result.report.first_invalid));
  ll_per_token_ = result.log_likelihood / static_cast<double>(corpus_->num_tokens());
  iteration_ = t;
  if (options_.optimize_interval > 0 && t % static_cast<std::uint32_t>(options_.optimize_interval) == 0)
    optimize_priors();
  IterationStats stats;
  stats.iteration = t;
  stats.zstep_seconds = result.zstep_seconds;
  stats.iteration_seconds = detail::seconds_since(start);
  stats.ll_per_token = ll_per_token_;
  train_seconds_ += stats.iteration_seconds;
  return stats;
}

template <typename T>
void Trainer<T>::optimize_priors() {
  const int K = options_.topics;
  const std::int64_t longest = corpus_->max_doc_length();
  Priors priors = options_.priors;
  priors.topic_alpha =
      optimize_alpha(engine_->document_topic_histogram(*corpus_, K, longest), priors.alpha_vector(K));
  if (options_.optimize_beta) {
    const Counts& counts = this->counts();  // n_wk and n_k are whole on every rank
    priors.beta = optimize_beta(counts.word_topic, counts.topic, priors.beta);
  }
  options_.priors = std::move(priors);
  engine_->set_priors(options_.priors);
  stale_ = true;  // the collapsed z-step's engines form theta and phi again under the new priors
}

template <typename T>
void Trainer<T>::save_checkpoint(const std::string& path) const {
  sync();
  AtomicFile out(path);
  out.write(kCheckpointMagic, sizeof kCheckpointMagic);
  out.put<std::uint32_t>(kCheckpointFormat);
  out.put<std::uint32_t>(static_cast<std::uint32_t>(gen::size_of(gen::element_type_of<T>)));
  out.put<std::uint32_t>(static_cast<std::uint32_t>(options_.topics));
  out.put<std::uint32_t>(options_.estimate == Estimate::mean ? 0u : options_.estimate == Estimate::draw ? 1u : 2u);
  out.put<std::uint32_t>(iteration_);
  const bool asymmetric = !options_.priors.symmetric_alpha();
  out.put<std::uint32_t>((asymmetric ? kFlagAsymmetricAlpha : 0u) | (options_.optimize_beta ? kFlagOptimizeBeta : 0u));
  out.put<std::uint64_t>(options_.seed);
  out.put<double>(options_.priors.alpha);
  out.put<double>(options_.priors.beta);
  out.put<double>(train_seconds_);
  out.put<std::int64_t>(corpus_->num_docs());
  out.put<std::int64_t>(corpus_->vocab_size());
  out.put<std::int64_t>(corpus_->num_tokens());
  out.put<std::uint64_t>(corpus_->fingerprint());
  out.put<std::uint32_t>(static_cast<std::uint32_t>(options_.optimize_interval));
  out.put<std::uint32_t>(0u);
  if (asymmetric) out.write(options_.priors.topic_alpha.data(), options_.priors.topic_alpha.size() * sizeof(double));
  out.write(z_.data(), z_.size() * sizeof(std::int32_t));
  out.write(theta_.data(), theta_.size() * sizeof(T));
  out.write(phi_.data(), phi_.size() * sizeof(T));
  const std::uint64_t checksum = out.checksum();
  out.put<std::uint64_t>(checksum);
  out.commit();
}

template <typename T>
bool Trainer<T>::estimates_have_current_priors() const {
  // Priors are learned after the estimates of iteration t (t % optimize_interval == 0): theta() and phi() were then
  // formed with the priors before, except with the collapsed z-step, whose engines form them again.
  const auto interval = static_cast<std::uint32_t>(options_.optimize_interval);
  return interval == 0 || iteration_ == 0 || iteration_ % interval != 0 ||
         options_.estimate == Estimate::collapsed;
}

template <typename T>
std::vector<T> Trainer<T>::mean_theta() const {
  if (forms_means(options_.estimate) && estimates_have_current_priors())
    return theta();  // formed from the same counts and priors already
  std::vector<T> theta(static_cast<std::size_t>(corpus_->num_docs()) * options_.topics);
  estimate_theta<T>(*corpus_, counts(), options_.priors, Estimate::mean, options_.seed, iteration_, theta,
                    options_.threads);
  return theta;
}

template <typename T>
std::vector<T> Trainer<T>::mean_phi() const {
  if (forms_means(options_.estimate) && estimates_have_current_priors()) return phi();
  std::vector<T> phi(static_cast<std::size_t>(corpus_->vocab_size()) * options_.topics);
  estimate_phi<T>(*corpus_, counts(), options_.priors, Estimate::mean, options_.seed, iteration_, phi,
                  options_.threads);
  return phi;
}

template <typename T>
void Trainer<T>::add_means_to_average() {
  if (restored_) clear_average();
  const auto start = std::chrono::steady_clock::now();
  if (engine_->keeps_mean_sums()) {
    engine_->add_means_to_sums();
    sums_stale_ = true;
  } else {
    const std::vector<T> theta = mean_theta(), phi = mean_phi();
    theta_sum_.resize(theta.size(), 0.0);
    phi_sum_.resize(phi.size(), 0.0);
    for (std::size_t i = 0; i < theta.size(); ++i) theta_sum_[i] += static_cast<double>(theta[i]);
    for (std::size_t i = 0; i < phi.size(); ++i) phi_sum_[i] += static_cast<double>(phi[i]);
  }
  ++averaged_;
  train_seconds_ += detail::seconds_since(start);
}

template <typename T>
void Trainer<T>::clear_average() {
  engine_->clear_mean_sums();
  theta_sum_.clear();
  phi_sum_.clear();
  sums_stale_ = false;
  restored_ = false;
  averaged_ = 0;
}

template <typename T>
void Trainer<T>::restore_average(std::span<const double> theta, std::span<const double> phi) {
  const std::size_t D = static_cast<std::size_t>(corpus_->num_docs()), V = static_cast<std::size_t>(corpus_->vocab_size());
  const auto K = static_cast<std::size_t>(options_.topics);
  if (theta.size() != D * K || phi.size() != V * K)
    throw Error(fmt::format("restore_average: theta has {} values and phi {}, expected D x K = {} and V x K = {}",
                            theta.size(), phi.size(), D * K, V * K));
  clear_average();
  theta_sum_.assign(theta.begin(), theta.end());
  phi_sum_.assign(phi.begin(), phi.end());
  averaged_ = 1;
  restored_ = true;
}

template <typename T>
const Trainer<T>& Trainer<T>::sync_sums() const {
  if (sums_stale_) {
    theta_sum_.resize(static_cast<std::size_t>(corpus_->num_docs()) * options_.topics);
    phi_sum_.resize(static_cast<std::size_t>(corpus_->vocab_size()) * options_.topics);
    engine_->download_mean_sums(theta_sum_, phi_sum_);
    sums_stale_ = false;
  }
  return *this;
}

namespace {
template <typename T>
std::vector<T> average_of(const std::vector<double>& sum, int count) {
  std::vector<T> average(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) average[i] = static_cast<T>(sum[i] / count);
  return average;
}
}  // namespace

template <typename T>
std::vector<T> Trainer<T>::output_theta() const {
  return averaged_ > 0 ? average_of<T>(sync_sums().theta_sum_, averaged_) : mean_theta();
}

template <typename T>
std::vector<T> Trainer<T>::output_phi() const {
  return averaged_ > 0 ? average_of<T>(sync_sums().phi_sum_, averaged_) : mean_phi();
}

template <typename T>
std::vector<std::int32_t> Trainer<T>::top_words(int k, int count) const {
  return top_words_of(output_phi(), k, count);
}

template <typename T>
std::vector<std::int32_t> Trainer<T>::top_words_of(const std::vector<T>& phi, int k, int count) const {
  const int K = options_.topics;
  std::vector<std::int32_t> ids(static_cast<std::size_t>(corpus_->vocab_size()));
  std::iota(ids.begin(), ids.end(), 0);
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(std::max(count, 0)), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](std::int32_t a, std::int32_t b) {
                      const T pa = phi[static_cast<std::size_t>(a) * K + k];
                      const T pb = phi[static_cast<std::size_t>(b) * K + k];
                      return pa != pb ? pa > pb : a < b;
                    });
  ids.resize(n);
  return ids;
}

namespace {

template <typename T>
void write_matrix_to(AtomicFile& out, const T* data, std::int64_t rows, std::int64_t cols) {
  out.write(kMatrixMagic, sizeof kMatrixMagic);
  out.put<std::uint32_t>(static_cast<std::uint32_t>(gen::size_of(gen::element_type_of<T>)));
  out.put<std::uint32_t>(0u);
  out.put<std::uint64_t>(static_cast<std::uint64_t>(rows));
  out.put<std::uint64_t>(static_cast<std::uint64_t>(cols));
  out.write(data, static_cast<std::size_t>(rows * cols) * sizeof(T));
}

}  // namespace

template <typename T>
void write_matrix(const std::string& path, const T* data, std::int64_t rows, std::int64_t cols) {
  AtomicFile out(path);
  write_matrix_to(out, data, rows, cols);
  out.commit();
}

const std::vector<std::string>& output_names() {
  static const std::vector<std::string> names = {"topics.txt", "documents.txt", "theta.bin", "phi.bin", "vocab.txt",
                                                     "alpha.txt", "metrics.json"};
  return names;
}

void remove_outputs(const std::string& dir) {
  namespace fs = std::filesystem;
  for (const std::string& name : output_names()) {
    const fs::path path = fs::path(dir) / name;
    std::error_code error;
    if (fs::is_regular_file(fs::symlink_status(path, error))) fs::remove(path, error);
  }
}

template <typename T>
void Trainer<T>::write_outputs(const std::string& dir, int top_count) const {
  sync();
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const int K = options_.topics;
  const Corpus& corpus = *corpus_;
  const double tokens = static_cast<double>(corpus.num_tokens());
  auto path = [&](const char* name) { return (fs::path(dir) / name).string(); };
  for (const std::string& name : output_names()) check_output_path(path(name.c_str()), "output file");

  // Every file goes to its temporary first; only when all are written and on disk are they renamed into place, so
  // a failure leaves none of them changed (the caller removed the older, now inconsistent ones).
  AtomicFile topics(path("topics.txt")), documents(path("documents.txt")), theta_file(path("theta.bin")),
      phi_file(path("phi.bin")), vocab(path("vocab.txt")), alpha(path("alpha.txt"));
  const std::vector<T> phi = output_phi();
  for (int k = 0; k < K; ++k) {  // topics.txt: one line per topic, its share of the tokens and its most probable words
    std::string line = fmt::format("topic {:>4} ({:5.2f}%):", k, 100.0 * static_cast<double>(counts_.topic[k]) / tokens);
    for (const std::int32_t w : top_words_of(phi, k, top_count)) line += " " + corpus.vocab[w];
    topics.text(line + "\n");
  }
  {  // theta.bin in input order, documents.txt: the input document of each row
    const std::vector<std::int64_t> order = input_order(corpus);
    const std::vector<T> reported = output_theta();  // corpus order
    std::vector<T> theta(reported.size());
    for (std::size_t row = 0; row < order.size(); ++row) {
      std::copy_n(reported.begin() + order[row] * K, K, theta.begin() + static_cast<std::ptrdiff_t>(row) * K);
      documents.text(fmt::format("{}\n", corpus.doc_ids[order[row]]));
    }
    write_matrix_to(theta_file, theta.data(), corpus.num_docs(), K);
  }
  write_matrix_to(phi_file, phi.data(), corpus.vocab_size(), K);
  for (const std::string& word : corpus.vocab) vocab.text(word + "\n");
  for (int k = 0; k < K; ++k) alpha.text(fmt::format("{:.17g}\n", options_.priors.alpha_of(k)));  // as write_alpha
  for (AtomicFile* file : {&topics, &documents, &theta_file, &phi_file, &vocab, &alpha}) file->finish();
  for (AtomicFile* file : {&topics, &documents, &theta_file, &phi_file, &vocab, &alpha}) file->commit();
}

template class Trainer<float>;
template class Trainer<double>;
template std::unique_ptr<IterationEngine<float>> cpu_engine<float>(std::unique_ptr<ZStep<float>>);
template std::unique_ptr<IterationEngine<double>> cpu_engine<double>(std::unique_ptr<ZStep<double>>);
template void write_matrix<float>(const std::string&, const float*, std::int64_t, std::int64_t);
template void write_matrix<double>(const std::string&, const double*, std::int64_t, std::int64_t);

}  // namespace bfly::lda
