// Inference with phi fixed (see inference.hpp): the model's files, documents in its vocabulary, and the sampler.
#include "bfly/lda/inference.hpp"

#include "bfly/output_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <thread>
#include <unordered_map>

namespace bfly::lda {
namespace {

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorpusError(path, 0, "cannot open it (a bfly-lda model directory holds phi.bin, vocab.txt and "
                                      "checkpoint.bin)");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CorpusError(path, 0, "read error");
  return bytes;
}

// A BFLYMAT1 matrix (trainer.hpp, write_matrix) as doubles.
std::vector<double> read_matrix(const std::string& path, std::int64_t& rows, std::int64_t& cols) {
  const std::string bytes = read_whole(path);
  constexpr std::size_t kHeader = 32;
  if (bytes.size() < kHeader || bytes.compare(0, 8, "BFLYMAT1") != 0)
    throw CorpusError(path, 0, "not a bfly matrix file (expected the 8 bytes BFLYMAT1 and a 24-byte header)");
  std::uint32_t element = 0;
  std::uint64_t r = 0, c = 0;
  std::memcpy(&element, bytes.data() + 8, 4);
  std::memcpy(&r, bytes.data() + 16, 8);
  std::memcpy(&c, bytes.data() + 24, 8);
  if (element != 4 && element != 8)
    throw CorpusError(path, 0, fmt::format("element size {}, expected 4 (f32) or 8 (f64)", element));
  if (c == 0 || r > (bytes.size() - kHeader) / c / element || bytes.size() != kHeader + r * c * element)
    throw CorpusError(path, 0, fmt::format("{} bytes, but its header says {} x {} elements of {} bytes; damaged or "
                                           "truncated", bytes.size(), r, c, element));
  rows = static_cast<std::int64_t>(r);
  cols = static_cast<std::int64_t>(c);
  std::vector<double> values(r * c);
  const char* data = bytes.data() + kHeader;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (element == 4) {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      values[i] = f;
    } else {
      std::memcpy(&values[i], data + 8 * i, 8);
    }
  }
  return values;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CorpusError(path, 0, "cannot open it");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

double Model::alpha_sum() const { return std::accumulate(alpha.begin(), alpha.end(), 0.0); }

void Model::check() const {
  const int K = topics();
  if (K < 1 || K > kMaxTopics)
    throw Error(fmt::format("Model: alpha has {} entries (one per topic), expected 1..{}", K, kMaxTopics));
  if (vocab.empty()) throw Error("Model: the vocabulary is empty");
  if (phi.size() != vocab.size() * static_cast<std::size_t>(K))
    throw Error(fmt::format("Model: phi has {} entries, expected V x K = {} x {}", phi.size(), vocab.size(), K));
  for (int k = 0; k < K; ++k)
    if (!(alpha[k] > 0) || !std::isfinite(alpha[k]))
      throw Error(fmt::format("Model: alpha[{}] = {}, expected a positive number", k, alpha[k]));
  if (!(beta > 0)) throw Error(fmt::format("Model: beta = {}, expected a positive number", beta));
  if (type != gen::ElementType::f32 && type != gen::ElementType::f64)
    throw Error(fmt::format("Model: element type {}, expected f32 or f64", gen::name_of(type)));
  std::vector<double> column(static_cast<std::size_t>(K), 0.0);
  for (std::size_t i = 0; i < phi.size(); ++i) {
    if (!(phi[i] >= 0) || !std::isfinite(phi[i]))
      throw Error(fmt::format("Model: phi[word {}][topic {}] = {}, expected a finite probability", i / K, i % K, phi[i]));
    column[i % K] += phi[i];
  }
  for (int k = 0; k < K; ++k)
    if (std::abs(column[k] - 1.0) > 1e-3)
      throw Error(fmt::format("Model: topic {}'s word probabilities sum to {}, expected 1", k, column[k]));
}

Model load_model(const std::string& dir) {
  namespace fs = std::filesystem;
  const CheckpointInfo info = read_checkpoint_info((fs::path(dir) / "checkpoint.bin").string());
  Model model;
  const int K = info.options.topics;
  std::int64_t rows = 0, cols = 0;
  const std::string phi_path = (fs::path(dir) / "phi.bin").string();
  model.phi = read_matrix(phi_path, rows, cols);
  if (cols != K)
    throw CorpusError(phi_path, 0, fmt::format("{} columns, but the checkpoint says K = {} topics", cols, K));
  const std::string vocab_path = (fs::path(dir) / "vocab.txt").string();
  model.vocab = read_lines(vocab_path);
  if (static_cast<std::int64_t>(model.vocab.size()) != rows)
    throw CorpusError(vocab_path, 0, fmt::format("{} words, but phi.bin has {} rows", model.vocab.size(), rows));
  model.alpha = info.options.priors.alpha_vector(K);
  const fs::path alpha_path = fs::path(dir) / "alpha.txt";
  if (fs::exists(alpha_path)) {
    const std::vector<std::string> lines = read_lines(alpha_path.string());
    if (static_cast<int>(lines.size()) != K)
      throw CorpusError(alpha_path.string(), 0, fmt::format("{} lines, expected one alpha per topic (K = {})",
                                                            lines.size(), K));
    for (int k = 0; k < K; ++k) {
      char* end = nullptr;
      model.alpha[k] = std::strtod(lines[k].c_str(), &end);
      if (end == lines[k].c_str() || *end != '\0' || !(model.alpha[k] > 0))
        throw CorpusError(alpha_path.string(), k + 1, fmt::format("\"{}\" is not a positive number", lines[k]));
    }
  }
  model.beta = info.options.priors.beta;
  model.estimate = info.options.estimate;
  model.type = info.type;
  model.check();
  return model;
}

template <typename T>
Model model_of(const Trainer<T>& trainer) {
  Model model;
  model.vocab = trainer.corpus().vocab;
  const std::vector<T> phi = trainer.output_phi();  // what write_outputs writes as phi.bin
  model.phi.assign(phi.begin(), phi.end());
  model.alpha = trainer.options().priors.alpha_vector(trainer.options().topics);
  model.beta = trainer.options().priors.beta;
  model.estimate = trainer.options().estimate;
  model.type = gen::element_type_of<T>;
  return model;
}

void write_alpha(const std::string& dir, std::span<const double> alpha) {
  OutputFile out((std::filesystem::path(dir) / "alpha.txt").string());
  for (const double a : alpha) out.text(fmt::format("{:.17g}\n", a));
  out.commit();
}

Corpus in_vocabulary(const Corpus& corpus, const std::vector<std::string>& vocab) {
  std::unordered_map<std::string, std::int32_t> id;
  id.reserve(vocab.size());
  for (std::size_t w = 0; w < vocab.size(); ++w) id.emplace(vocab[w], static_cast<std::int32_t>(w));
  std::vector<std::int32_t> map(corpus.vocab.size(), -1);
  for (std::size_t w = 0; w < corpus.vocab.size(); ++w)
    if (const auto it = id.find(corpus.vocab[w]); it != id.end()) map[w] = it->second;
  Corpus mapped;
  mapped.vocab = vocab;
  mapped.input_documents = corpus.input_documents;
  for (std::int64_t m = 0; m < corpus.num_docs(); ++m) {
    const std::size_t before = mapped.words.size();
    for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i)
      if (map[corpus.words[i]] >= 0) mapped.words.push_back(map[corpus.words[i]]);
    if (mapped.words.size() == before) continue;
    mapped.doc_offsets.push_back(static_cast<std::int64_t>(mapped.words.size()));
    mapped.doc_ids.push_back(corpus.doc_ids.empty() ? m : corpus.doc_ids[m]);
  }
  return mapped;
}

Corpus read_text_for(const Model& model, const std::string& path, TextOptions options) {
  options.min_count = 1;  // the model's vocabulary decides which words count
  return in_vocabulary(read_text(path, options), model.vocab);
}

Corpus read_uci_for(const Model& model, const std::string& docword_path, const std::string& vocab_path,
                    std::int64_t max_docs) {
  return in_vocabulary(read_uci(docword_path, vocab_path, max_docs), model.vocab);
}

namespace {

template <typename T>
class FixedPhiAdapter final : public FixedPhiZStep<T> {
 public:
  explicit FixedPhiAdapter(std::unique_ptr<ZStep<T>> zstep) : zstep_(std::move(zstep)) {}
  std::string name() const override { return zstep_->name(); }
  void bind(const Corpus& corpus, int K, std::span<const T> phi) override {
    corpus_ = &corpus;
    K_ = K;
    phi_ = phi;
    zstep_->bind(corpus, K);
  }
  ZStepReport run(std::span<const T> theta, std::span<std::int32_t> z, std::uint64_t seed,
                  std::uint32_t iteration) override {
    return zstep_->run(*corpus_, K_, theta, phi_, z, seed, iteration);
  }

 private:
  std::unique_ptr<ZStep<T>> zstep_;
  const Corpus* corpus_ = nullptr;
  int K_ = 0;
  std::span<const T> phi_;
};

// Runs f(first, last) over `threads` contiguous blocks of the D documents.
template <typename F>
void for_document_blocks(std::int64_t D, int threads, F&& f) {
  const std::int64_t blocks = std::clamp<std::int64_t>(std::min<std::int64_t>(threads, D / 64), 1, 64);
  std::vector<std::jthread> pool;
  for (std::int64_t b = 1; b < blocks; ++b) pool.emplace_back([&, b] { f(D * b / blocks, D * (b + 1) / blocks); });
  f(0, D / blocks);
}

// The documents sorted by decreasing length (the z-step kernels' order), doc_ids = their positions as given.
Corpus sorted_documents(const Corpus& documents, const std::vector<std::string>& vocab) {
  Corpus indexed;
  indexed.doc_offsets = documents.doc_offsets;
  indexed.words = documents.words;
  indexed.vocab = vocab;
  indexed.doc_ids.resize(static_cast<std::size_t>(documents.num_docs()));
  std::iota(indexed.doc_ids.begin(), indexed.doc_ids.end(), std::int64_t{0});
  indexed.input_documents = documents.num_docs();
  indexed.check();  // word ids within the model's vocabulary
  return sort_by_length(indexed);
}

}  // namespace

template <typename T>
std::unique_ptr<FixedPhiZStep<T>> with_fixed_phi(std::unique_ptr<ZStep<T>> zstep) {
  return std::make_unique<FixedPhiAdapter<T>>(std::move(zstep));
}

template <typename T>
Inference infer_with(const Model& model, const Corpus& documents, const InferenceOptions& options,
                     FixedPhiZStep<T>& zstep) {
  model.check();
  if (model.type != gen::element_type_of<T>)
    throw Error(fmt::format("infer: the model's type is {}, the z-step's {}", gen::name_of(model.type),
                            gen::name_of(gen::element_type_of<T>)));
  if (options.iterations < 1) throw Error(fmt::format("infer: iterations = {}, expected >= 1", options.iterations));
  if (options.burn_in >= options.iterations)
    throw Error(fmt::format("infer: burn_in = {} leaves no iteration of the {} to average", options.burn_in,
                            options.iterations));
  const int K = model.topics();
  const Corpus corpus = sorted_documents(documents, model.vocab);
  const std::int64_t D = corpus.num_docs();
  const int burn_in = options.burn_in >= 0 ? options.burn_in : options.iterations / 2;

  std::vector<T> phi(model.phi.size());
  std::transform(model.phi.begin(), model.phi.end(), phi.begin(), [](double p) { return static_cast<T>(p); });
  zstep.bind(corpus, K, phi);

  std::vector<std::int32_t> z(static_cast<std::size_t>(corpus.num_tokens()));
  std::vector<std::int32_t> counts(static_cast<std::size_t>(D) * K);
  std::vector<T> theta(static_cast<std::size_t>(D) * K);
  std::vector<double> average(static_cast<std::size_t>(D) * K, 0.0);
  const double alpha_sum = model.alpha_sum();
  // After the z-step of iteration t: each document's counts, its theta (posterior mean, or a Dirichlet draw for
  // Estimate::draw) and, past burn-in, its running sum of posterior means. Documents are independent, so they are
  // split over the threads without changing any result.
  auto update_documents = [&](std::uint32_t t, bool accumulate) {
    for_document_blocks(D, resolve_threads(options.threads), [&](std::int64_t first, std::int64_t last) {
      std::vector<double> gammas(static_cast<std::size_t>(K));
      for (std::int64_t m = first; m < last; ++m) {
        std::int32_t* n = counts.data() + m * K;
        std::fill(n, n + K, 0);
        for (std::int64_t i = corpus.doc_offsets[m]; i < corpus.doc_offsets[m + 1]; ++i) ++n[z[i]];
        const double denominator = static_cast<double>(corpus.doc_length(m)) + alpha_sum;
        T* row = theta.data() + m * K;
        bool drawn = false;
        if (model.estimate == Estimate::draw) {
          double sum = 0;
          for (int k = 0; k < K; ++k) {
            gammas[k] = gamma_draw(n[k] + model.alpha[k], options.seed, static_cast<std::uint64_t>(m) * K + k,
                                   kStreamTheta, t);
            sum += gammas[k];
          }
          if (sum > 0 && std::isfinite(sum)) {
            for (int k = 0; k < K; ++k) row[k] = static_cast<T>(gammas[k] / sum);
            drawn = true;
          }
        }
        if (!drawn)
          for (int k = 0; k < K; ++k) row[k] = static_cast<T>((n[k] + model.alpha[k]) / denominator);
        if (accumulate)
          for (int k = 0; k < K; ++k) average[m * K + k] += (n[k] + model.alpha[k]) / denominator;
      }
    });
  };

  initial_topics(corpus, K, options.seed, z);
  update_documents(0, false);
  for (int t = 1; t <= options.iterations; ++t) {
    const ZStepReport report = zstep.run(theta, z, options.seed, static_cast<std::uint32_t>(t));
    if (report.invalid_tokens > 0)
      throw Error(fmt::format("infer: iteration {}: {} token(s) could not be sampled (weights with total 0, NaN or "
                              "infinite), first token {}",
                              t, report.invalid_tokens, report.first_invalid));
    update_documents(static_cast<std::uint32_t>(t), t > burn_in);
  }

  Inference result;
  result.topics = K;
  result.engine = zstep.name();
  result.theta.assign(static_cast<std::size_t>(D) * K, 0.0);
  const double kept = options.iterations - burn_in;
  for (std::int64_t m = 0; m < D; ++m) {  // back to the documents' given order
    const std::int64_t row = corpus.doc_ids[m];
    for (int k = 0; k < K; ++k) result.theta[row * K + k] = average[m * K + k] / kept;
  }
  return result;
}

template Model model_of<float>(const Trainer<float>&);
template Model model_of<double>(const Trainer<double>&);
template std::unique_ptr<FixedPhiZStep<float>> with_fixed_phi<float>(std::unique_ptr<ZStep<float>>);
template std::unique_ptr<FixedPhiZStep<double>> with_fixed_phi<double>(std::unique_ptr<ZStep<double>>);
template Inference infer_with<float>(const Model&, const Corpus&, const InferenceOptions&, FixedPhiZStep<float>&);
template Inference infer_with<double>(const Model&, const Corpus&, const InferenceOptions&, FixedPhiZStep<double>&);

}  // namespace bfly::lda
