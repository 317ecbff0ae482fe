// GpuEngine: bfly-lda's iteration on the GPU through bfly::rt::LdaZStep and bfly::rt::LdaIteration.
#include "bfly/lda/gpu_engine.hpp"

#include "device_copies.hpp"
#include "device_mean_sums.hpp"

#include "bfly/spec/kernel_spec.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/ops/lda_iteration.hpp"
#include "bfly/ops/lda_z_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace bfly::lda {
namespace {

using detail::allocate;
using detail::download;
template <typename V>
void upload(const rt::DeviceBuffer& buffer, const V* data, std::size_t count) {
  detail::upload(buffer.get(), data, count);
}

rt::LdaZOptions z_options(const GpuEngineOptions& options) {
  rt::LdaZOptions z;
  z.report_invalid_tokens = true;
  if (options.W != 0) z.W = options.W;
  if (!options.variant.empty()) z.variant = gen::parse_variant(options.variant);
  return z;
}

template <typename T>
class GpuEngine final : public IterationEngine<T> {
 public:
  explicit GpuEngine(const GpuEngineOptions& options) : zstep_(z_options(options)), z_options_(z_options(options)) {
    rt::current_context();  // fails here, with the reason, when no GPU can be used
  }

  std::string name() const override { return name_; }

  void bind(const Corpus& corpus, const TrainerOptions& options) override {
    corpus_ = &corpus;
    options_ = options;
    const int K = options.topics;
    constexpr gen::ElementType type = gen::element_type_of<T>;
    z_options_.mean_document_length = mean_document_length(corpus);  // the kernel's W depends on it
    zstep_ = rt::LdaZStep(z_options_);
    zstep_.prepare(K, type);  // compiled or loaded now, not in the first iteration
    name_ = fmt::format("gpu {}", gen::kernel_name(gen::choose_lda_z_spec(K, type, z_options_)));
    const std::size_t D = static_cast<std::size_t>(corpus.num_docs()), V = static_cast<std::size_t>(corpus.vocab_size());
    const std::size_t tokens = static_cast<std::size_t>(corpus.num_tokens());
    static_assert(sizeof(long long) == sizeof(std::int64_t) && sizeof(int) == sizeof(std::int32_t));
    offsets_ = allocate((D + 1) * sizeof(long long));
    words_ = allocate(tokens * sizeof(int));
    z_ = allocate(tokens * sizeof(int));
    theta_ = allocate(D * K * sizeof(T));
    phi_ = allocate(V * K * sizeof(T));
    upload(offsets_, corpus.doc_offsets.data(), D + 1);
    upload(words_, corpus.words.data(), tokens);
    iteration_.emplace(rt::LdaShape{corpus.num_docs(), corpus.vocab_size(), corpus.num_tokens(), K}, type);
  }

  double load(std::span<const std::int32_t> z, const T* theta, const T* phi, std::uint32_t iteration) override {
    upload(z_, z.data(), z.size());
    iteration_->count(offsets(), words(), z_data());
    estimate(iteration);  // also forms the log-likelihood of the counts
    if (theta != nullptr && phi != nullptr) {  // a resumed run continues from the checkpoint's estimates
      upload(theta_, theta, theta_count());
      upload(phi_, phi, phi_count());
    }
    return iteration_->log_likelihood();
  }

  typename IterationEngine<T>::Step step(std::uint32_t t) override {
    typename IterationEngine<T>::Step result;
    const auto start = std::chrono::steady_clock::now();
    const int K = options_.topics;
    const rt::LdaZReport report = zstep_.run(theta_data(), K, phi_data(), K, offsets(), words(),
                                             reinterpret_cast<int*>(z_.get()), corpus_->num_docs(), K, options_.seed, t,
                                             nullptr, collapsed());
    result.zstep_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.report.invalid_tokens = report.invalid_tokens;
    result.report.first_invalid = report.first_invalid_token;
    if (report.invalid_tokens > 0) return result;
    iteration_->count(offsets(), words(), z_data());
    estimate(t);
    result.log_likelihood = iteration_->log_likelihood();
    return result;
  }

  void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) override {
    const int K = options_.topics;
    lda::download(z.data(), z_.get(), z.size());
    lda::download(theta.data(), theta_.get(), theta.size());
    lda::download(phi.data(), phi_.get(), phi.size());
    counts.K = K;
    counts.doc_topic.resize(theta_count());
    counts.word_topic.resize(phi_count());
    std::vector<std::int32_t> topic(static_cast<std::size_t>(K));
    lda::download(counts.doc_topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->doc_topic()), theta_count());
    lda::download(counts.word_topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->word_topic()), phi_count());
    lda::download(topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->topic()), topic.size());
    counts.topic.assign(topic.begin(), topic.end());
  }

  // The collapsed z-step reads theta and phi as the means under the current priors, so they are formed again.
  void set_priors(const Priors& priors) override {
    options_.priors = priors;
    if (options_.estimate == Estimate::collapsed) estimate(0);
  }

  // Only n_dk comes back (not the whole state, as the default would download).
  DocumentTopicHistogram document_topic_histogram(const Corpus& corpus, int topics, std::int64_t longest) override {
    std::vector<std::int32_t> doc_topic(theta_count());
    lda::download(doc_topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->doc_topic()), doc_topic.size());
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(corpus.num_docs()));
    for (std::int64_t m = 0; m < corpus.num_docs(); ++m) lengths[static_cast<std::size_t>(m)] = corpus.doc_length(m);
    return lda::document_topic_histogram(doc_topic, lengths, topics, longest);
  }

  // Output averaging on the device (device_mean_sums.hpp).
  bool keeps_mean_sums() const override { return true; }
  void add_means_to_sums() override { mean_sums_.add(*iteration_, offsets(), priors()); }
  void download_mean_sums(std::span<double> theta, std::span<double> phi) override {
    mean_sums_.download(theta, phi);
  }
  void clear_mean_sums() override { mean_sums_.clear(); }

 private:
  void estimate(std::uint32_t iteration) {
    const rt::LdaEstimate estimate = forms_means(options_.estimate) ? rt::LdaEstimate::mean : rt::LdaEstimate::draw;
    iteration_->estimate(offsets(), priors(), estimate, options_.seed, iteration, theta_data(), phi_data());
  }
  // What the collapsed z-step reads besides theta and phi (nothing for the other estimates).
  rt::LdaCollapsed collapsed() const {
    if (options_.estimate != Estimate::collapsed) return {};
    return rt::LdaCollapsed{iteration_->topic(), options_.priors.alpha_sum(options_.topics),
                            static_cast<double>(corpus_->vocab_size()) * options_.priors.beta};
  }
  rt::LdaPriors priors() const {
    return rt::LdaPriors{options_.priors.alpha, options_.priors.beta, options_.priors.topic_alpha};
  }
  std::size_t theta_count() const { return static_cast<std::size_t>(corpus_->num_docs()) * options_.topics; }
  std::size_t phi_count() const { return static_cast<std::size_t>(corpus_->vocab_size()) * options_.topics; }
  const long long* offsets() const { return reinterpret_cast<const long long*>(offsets_.get()); }
  const int* words() const { return reinterpret_cast<const int*>(words_.get()); }
  const int* z_data() const { return reinterpret_cast<const int*>(z_.get()); }
  T* theta_data() const { return reinterpret_cast<T*>(theta_.get()); }
  T* phi_data() const { return reinterpret_cast<T*>(phi_.get()); }

  rt::LdaZStep zstep_;
  rt::LdaZOptions z_options_;
  std::optional<rt::LdaIteration> iteration_;
  rt::DeviceBuffer offsets_, words_, z_, theta_, phi_;
  detail::DeviceMeanSums mean_sums_;
  const Corpus* corpus_ = nullptr;
  TrainerOptions options_;
  std::string name_;
};

}  // namespace

template <typename T>
gen::KernelSpec gpu_z_spec(int K, const GpuEngineOptions& options, double mean_document_length) {
  constexpr gen::ElementType type = gen::element_type_of<T>;
  rt::LdaZOptions z = z_options(options);
  z.mean_document_length = mean_document_length;
  return gen::choose_lda_z_spec(K, type, z);
}

double mean_document_length(const Corpus& corpus) {
  return corpus.num_docs() > 0 ? static_cast<double>(corpus.num_tokens()) / static_cast<double>(corpus.num_docs())
                               : 0.0;
}

template <typename T>
std::unique_ptr<IterationEngine<T>> gpu_engine(const GpuEngineOptions& options) {
  return std::make_unique<GpuEngine<T>>(options);
}

bool gpu_available(std::string* why) { return rt::gpu_available(why); }

template gen::KernelSpec gpu_z_spec<float>(int, const GpuEngineOptions&, double);
template gen::KernelSpec gpu_z_spec<double>(int, const GpuEngineOptions&, double);
template std::unique_ptr<IterationEngine<float>> gpu_engine<float>(const GpuEngineOptions&);
template std::unique_ptr<IterationEngine<double>> gpu_engine<double>(const GpuEngineOptions&);

}  // namespace bfly::lda
