// A data-parallel rank on one GPU (multi_gpu.hpp): the kernels of the one-GPU engine (gpu_engine.cpp) on a shard.
#include "bfly/lda/multi_gpu.hpp"

#include "device_context.hpp"
#include "device_copies.hpp"
#include "device_mean_sums.hpp"

#include "bfly/jit/driver.hpp"
#include "bfly/ops/lda_iteration.hpp"
#include "bfly/ops/lda_z_step.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace bfly::lda {
namespace {

using detail::allocate;
using detail::download;
using detail::upload;

template <typename T>
class GpuShardEngine final : public ShardEngine<T> {
 public:
  GpuShardEngine(int device, const GpuEngineOptions& options, DeviceWordsFill fill)
      : device_(device), gpu_options_(options), fill_(std::move(fill)) {
    make_current();
  }
  ~GpuShardEngine() override { make_current(); }  // the members free their memory in this device's context

  std::string name() const override { return name_; }

  void bind(const Corpus& shard, const TrainerOptions& options, double mean_document_length) override {
    make_current();
    shard_ = &shard;
    options_ = options;
    const int K = options.topics;
    constexpr gen::ElementType type = gen::element_type_of<T>;
    // The kernel of the whole corpus (its W depends on the mean document length), the same on every rank.
    rt::LdaZOptions z;
    z.report_invalid_tokens = true;
    if (gpu_options_.W != 0) z.W = gpu_options_.W;
    if (!gpu_options_.variant.empty()) z.variant = gen::parse_variant(gpu_options_.variant);
    z.mean_document_length = mean_document_length;
    zstep_ = rt::LdaZStep(z);
    zstep_.prepare(K, type);  // in this device's context, before training
    name_ = fmt::format("gpu {}", gen::kernel_name(gen::choose_lda_z_spec(K, type, z)));
    const auto D = static_cast<std::size_t>(shard.num_docs()), V = static_cast<std::size_t>(shard.vocab_size());
    const auto tokens = static_cast<std::size_t>(shard.num_tokens());
    static_assert(sizeof(long long) == sizeof(std::int64_t) && sizeof(int) == sizeof(std::int32_t));
    // The kernels take a token's index, which is also the counter of its draw, from doc_offsets: the device keeps
    // the whole corpus' offsets of the shard's documents, and words() and z() point first_token elements before
    // the shard's arrays, so that whole-corpus index i reads the shard's element i - first_token.
    std::vector<long long> whole_offsets(D + 1);
    for (std::size_t m = 0; m <= D; ++m) whole_offsets[m] = shard.first_token + shard.doc_offsets[m];
    offsets_ = allocate((D + 1) * sizeof(long long));
    words_ = allocate(tokens * sizeof(int));
    z_ = allocate(tokens * sizeof(int));
    theta_ = allocate(D * K * sizeof(T));
    phi_ = allocate(V * K * sizeof(T));
    upload(offsets_.get(), whole_offsets.data(), whole_offsets.size());
    if (fill_) fill_(shard, offsets(), words());
    else upload(words_.get(), shard.words.data(), tokens);
    iteration_.emplace(rt::LdaShape{shard.num_docs(), shard.vocab_size(), shard.num_tokens(), K, shard.first_doc},
                       type);
  }

  void set_z(std::span<const std::int32_t> z) override {
    make_current();
    upload(z_.get(), z.data(), z.size());
  }

  ZStepReport zstep(std::uint32_t iteration) override {
    make_current();
    const int K = options_.topics;
    rt::LdaCollapsed collapsed;  // n_k as last summed over the ranks: the whole corpus'
    if (options_.estimate == Estimate::collapsed)
      collapsed = rt::LdaCollapsed{iteration_->topic(), options_.priors.alpha_sum(K),
                                   static_cast<double>(shard_->vocab_size()) * options_.priors.beta};
    const rt::LdaZReport report = zstep_.run(theta_data(), K, phi_data(), K, offsets(), words(), z_data(),
                                             shard_->num_docs(), K, options_.seed, iteration, nullptr, collapsed);
    return ZStepReport{report.invalid_tokens, report.first_invalid_token};  // token indices of the whole corpus
  }

  void count() override {
    make_current();
    iteration_->count(offsets(), words(), z_data());
  }
  std::int32_t* word_topic() override { return iteration_->word_topic(); }
  std::int32_t* topic() override { return iteration_->topic(); }

  std::vector<double> estimate(std::uint32_t iteration) override {
    make_current();
    const rt::LdaEstimate estimate = forms_means(options_.estimate) ? rt::LdaEstimate::mean : rt::LdaEstimate::draw;
    iteration_->estimate(offsets(), priors(), estimate, options_.seed, iteration, theta_data(), phi_data());
    rt::LdaLogLikelihoodPartials partials = iteration_->log_likelihood_partials();
    word_partials_ = std::move(partials.words);
    return std::move(partials.documents);
  }

  // The words' partials of the last estimate() (every rank has the same: n_wk is the sum), then the topics' terms
  // on the host, in the order of LdaIteration's total.
  double add_topic_log_likelihood(double documents) override {
    make_current();
    const int K = options_.topics;
    std::vector<std::int32_t> topic(static_cast<std::size_t>(K));
    lda::download(topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->topic()), topic.size());
    double ll = documents;
    for (const double part : word_partials_) ll += part;
    const double v_beta = static_cast<double>(shard_->vocab_size()) * options_.priors.beta;
    const double lgamma_v_beta = std::lgamma(v_beta);
    for (const std::int32_t n : topic) ll += lgamma_v_beta - std::lgamma(static_cast<double>(n) + v_beta);
    return ll;
  }

  void set_estimates(const T* theta, const T* phi) override {
    make_current();
    upload(theta_.get(), theta, theta_count());
    upload(phi_.get(), phi, phi_count());
  }

  void set_priors(const Priors& priors) override { options_.priors = priors; }

  DocumentTopicHistogram document_topic_histogram(std::int64_t longest) override {
    make_current();
    std::vector<std::int32_t> doc_topic(theta_count());
    lda::download(doc_topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->doc_topic()), doc_topic.size());
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(shard_->num_docs()));
    for (std::int64_t m = 0; m < shard_->num_docs(); ++m) lengths[static_cast<std::size_t>(m)] = shard_->doc_length(m);
    return lda::document_topic_histogram(doc_topic, lengths, options_.topics, longest);
  }

  void finish() override {
    make_current();
    rt::check(rt::driver().StreamSynchronize(nullptr), fmt::format("the LDA kernels on device {}", device_));
  }

  void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) override {
    make_current();
    const int K = options_.topics;
    lda::download(z.data(), z_.get(), z.size());
    lda::download(theta.data(), theta_.get(), theta.size());
    if (!phi.empty()) lda::download(phi.data(), phi_.get(), phi.size());
    counts.K = K;
    counts.doc_topic.resize(theta_count());
    lda::download(counts.doc_topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->doc_topic()), theta_count());
    if (phi.empty()) return;
    counts.word_topic.resize(phi_count());
    std::vector<std::int32_t> topic(static_cast<std::size_t>(K));
    lda::download(counts.word_topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->word_topic()), phi_count());
    lda::download(topic.data(), reinterpret_cast<CUdeviceptr>(iteration_->topic()), topic.size());
    counts.topic.assign(topic.begin(), topic.end());
  }

  // Output averaging on this rank's device: the shard's theta rows and the whole phi (device_mean_sums.hpp).
  bool keeps_mean_sums() const override { return true; }
  void add_means_to_sums() override {
    make_current();
    mean_sums_.add(*iteration_, offsets(), priors());
  }
  void download_mean_sums(std::span<double> theta, std::span<double> phi) override {
    make_current();
    mean_sums_.download(theta, phi);
  }
  void clear_mean_sums() override {
    make_current();
    mean_sums_.clear();
  }

 private:
  void make_current() const { detail::make_device_current(device_); }
  rt::LdaPriors priors() const {
    return rt::LdaPriors{options_.priors.alpha, options_.priors.beta, options_.priors.topic_alpha};
  }
  std::size_t theta_count() const { return static_cast<std::size_t>(shard_->num_docs()) * options_.topics; }
  std::size_t phi_count() const { return static_cast<std::size_t>(shard_->vocab_size()) * options_.topics; }
  const long long* offsets() const { return reinterpret_cast<const long long*>(offsets_.get()); }
  // Unsigned address arithmetic (CUdeviceptr): the kernels add back whole-corpus token indices >= first_token.
  CUdeviceptr token_base(const rt::DeviceBuffer& buffer) const {
    return buffer.get() - static_cast<CUdeviceptr>(shard_->first_token) * sizeof(int);
  }
  int* words() const { return reinterpret_cast<int*>(token_base(words_)); }
  int* z_data() const { return reinterpret_cast<int*>(token_base(z_)); }
  T* theta_data() const { return reinterpret_cast<T*>(theta_.get()); }
  T* phi_data() const { return reinterpret_cast<T*>(phi_.get()); }

  int device_;
  GpuEngineOptions gpu_options_;
  DeviceWordsFill fill_;
  const Corpus* shard_ = nullptr;
  TrainerOptions options_;
  std::string name_;
  rt::LdaZStep zstep_;
  std::optional<rt::LdaIteration> iteration_;
  rt::DeviceBuffer offsets_, words_, z_, theta_, phi_;
  std::vector<double> word_partials_;
  detail::DeviceMeanSums mean_sums_;
};

}  // namespace

template <typename T>
std::unique_ptr<ShardEngine<T>> gpu_shard_engine(int device, const GpuEngineOptions& options, DeviceWordsFill fill) {
  return std::make_unique<GpuShardEngine<T>>(device, options, std::move(fill));
}

template <typename T>
std::unique_ptr<DataParallelEngine<T>> multi_gpu_engine(int gpus, const GpuEngineOptions& options,
                                                        DeviceWordsFill fill) {
  if (gpus < 1) throw Error(fmt::format("--gpus must be >= 1, got {}", gpus));
  nccl_version();  // loads NCCL first: its absence is reported before anything else starts
  std::string why;
  if (!gpu_available(&why)) throw Error(fmt::format("--gpus {}: no GPU can be used ({})", gpus, why));
  const int available = gpu_count();
  if (gpus > available)
    throw Error(fmt::format("--gpus {}: this machine has {} CUDA device(s) (CUDA_VISIBLE_DEVICES limits them)", gpus,
                            available));
  std::vector<int> devices;
  for (int d = 0; d < gpus; ++d) devices.push_back(d);
  auto exchange = std::make_shared<NcclExchange>(devices);
  std::vector<std::unique_ptr<ShardEngine<T>>> local;
  for (const int device : devices) local.push_back(gpu_shard_engine<T>(device, options, fill));
  return std::make_unique<DataParallelEngine<T>>(std::move(exchange), std::move(local), /*concurrent=*/true);
}

template std::unique_ptr<ShardEngine<float>> gpu_shard_engine<float>(int, const GpuEngineOptions&, DeviceWordsFill);
template std::unique_ptr<ShardEngine<double>> gpu_shard_engine<double>(int, const GpuEngineOptions&, DeviceWordsFill);
template std::unique_ptr<DataParallelEngine<float>> multi_gpu_engine<float>(int, const GpuEngineOptions&,
                                                                            DeviceWordsFill);
template std::unique_ptr<DataParallelEngine<double>> multi_gpu_engine<double>(int, const GpuEngineOptions&,
                                                                              DeviceWordsFill);

}  // namespace bfly::lda
