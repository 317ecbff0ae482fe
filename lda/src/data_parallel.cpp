// The data-parallel iteration engine and the CPU rank (see data_parallel.hpp).
#include "bfly/lda/data_parallel.hpp"

#include "seconds_since.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <thread>

namespace bfly::lda {
namespace {

template <typename T>
class CpuShardEngine final : public ShardEngine<T> {
 public:
  explicit CpuShardEngine(int threads) : zstep_(threads) {}

  std::string name() const override { return zstep_.name(); }

  void bind(const Corpus& shard, const TrainerOptions& options, double) override {
    shard_ = &shard;
    options_ = options;
    const auto K = static_cast<std::size_t>(options.topics);
    z_.assign(static_cast<std::size_t>(shard.num_tokens()), 0);
    theta_.assign(static_cast<std::size_t>(shard.num_docs()) * K, T(0));
    phi_.assign(static_cast<std::size_t>(shard.vocab_size()) * K, T(0));
  }
  void set_z(std::span<const std::int32_t> z) override { std::copy(z.begin(), z.end(), z_.begin()); }
  ZStepReport zstep(std::uint32_t iteration) override {
    if (options_.estimate != Estimate::collapsed)
      return zstep_.run(*shard_, options_.topics, theta_, phi_, z_, options_.seed, iteration);
    // n_k as last summed over the ranks: the whole corpus'.
    const CollapsedTerms collapsed{topic32_, options_.priors.alpha_sum(options_.topics),
                                   static_cast<double>(shard_->vocab_size()) * options_.priors.beta};
    return zstep_.run(*shard_, options_.topics, theta_, phi_, z_, options_.seed, iteration, &collapsed);
  }
  void count() override {
    counts_ = count_topics(*shard_, options_.topics, z_, options_.threads);
    // The reference keeps n_k in int64, the exchange sums int32 (as NCCL does; the trainer keeps a run's tokens
    // below 2^31): the shard's n_k goes out in topic32_ and the sums come back in estimate().
    topic32_.assign(counts_.topic.begin(), counts_.topic.end());
  }
  std::int32_t* word_topic() override { return counts_.word_topic.data(); }
  std::int32_t* topic() override { return topic32_.data(); }

  std::vector<double> estimate(std::uint32_t iteration) override {
    counts_.topic.assign(topic32_.begin(), topic32_.end());
    estimate_theta<T>(*shard_, counts_, options_.priors, options_.estimate, options_.seed, iteration, theta_,
                      options_.threads);
    estimate_phi<T>(*shard_, counts_, options_.priors, options_.estimate, options_.seed, iteration, phi_,
                    options_.threads);
    return document_log_likelihood_chunks(*shard_, counts_, options_.priors, options_.threads);
  }
  double add_topic_log_likelihood(double documents) override {
    return lda::add_topic_log_likelihood(documents, *shard_, counts_, options_.priors, options_.threads);
  }
  void set_estimates(const T* theta, const T* phi) override {
    std::copy_n(theta, theta_.size(), theta_.begin());
    std::copy_n(phi, phi_.size(), phi_.begin());
  }
  void finish() override {}
  void set_priors(const Priors& priors) override { options_.priors = priors; }
  DocumentTopicHistogram document_topic_histogram(std::int64_t longest) override {
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(shard_->num_docs()));
    for (std::int64_t m = 0; m < shard_->num_docs(); ++m) lengths[static_cast<std::size_t>(m)] = shard_->doc_length(m);
    return lda::document_topic_histogram(counts_.doc_topic, lengths, options_.topics, longest);
  }

  void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) override {
    std::copy(z_.begin(), z_.end(), z.begin());
    std::copy(theta_.begin(), theta_.end(), theta.begin());
    if (!phi.empty()) std::copy(phi_.begin(), phi_.end(), phi.begin());
    counts = counts_;
  }

 private:
  CpuZStep<T> zstep_;
  const Corpus* shard_ = nullptr;
  TrainerOptions options_;
  std::vector<std::int32_t> z_;
  std::vector<T> theta_, phi_;
  Counts counts_;
  std::vector<std::int32_t> topic32_;
};

}  // namespace

template <typename T>
std::unique_ptr<ShardEngine<T>> cpu_shard_engine(int threads) {
  return std::make_unique<CpuShardEngine<T>>(threads);
}

template <typename T>
DataParallelEngine<T>::DataParallelEngine(std::shared_ptr<CountExchange> exchange,
                                          std::vector<std::unique_ptr<ShardEngine<T>>> local, bool concurrent)
    : exchange_(std::move(exchange)), local_(std::move(local)), concurrent_(concurrent) {
  if (exchange_ == nullptr) throw Error("DataParallelEngine: no count exchange");
  if (local_.size() != exchange_->local_ranks().size() || local_.empty())
    throw Error(fmt::format("DataParallelEngine: {} shard engines for the {} local rank(s) of {}", local_.size(),
                            exchange_->local_ranks().size(), exchange_->name()));
}

template <typename T>
DataParallelEngine<T>::~DataParallelEngine() = default;

template <typename T>
std::string DataParallelEngine<T>::name() const {
  return fmt::format("{} rank{} x {}, counts summed by {}", exchange_->world_size(),
                     exchange_->world_size() == 1 ? "" : "s", local_.front()->name(), exchange_->name());
}

template <typename T>
template <typename F>
void DataParallelEngine<T>::for_each_local(F&& f) {
  if (!concurrent_ || local_.size() == 1) {
    for (std::size_t i = 0; i < local_.size(); ++i) f(i);
    return;
  }
  std::vector<std::exception_ptr> errors(local_.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < local_.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          f(i);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
  }
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

template <typename T>
void DataParallelEngine<T>::bind(const Corpus& corpus, const TrainerOptions& options) {
  // n_wk and n_k are summed as int32 (ncclInt32): no count may reach 2^31.
  if (corpus.num_tokens() >= INT_MAX)
    throw Error(fmt::format("data-parallel training counts topics in 32 bits: the corpus has {} tokens, at most {} "
                            "are supported",
                            corpus.num_tokens(), INT_MAX - 1));
  corpus_ = &corpus;
  options_ = options;
  shards_ = shard_by_tokens(corpus, exchange_->world_size());
  local_corpora_.clear();
  for (const int rank : exchange_->local_ranks()) local_corpora_.push_back(shard_corpus(corpus, shards_[rank]));
  const double mean_length =
      corpus.num_docs() > 0 ? static_cast<double>(corpus.num_tokens()) / static_cast<double>(corpus.num_docs()) : 0.0;
  for_each_local([&](std::size_t i) { local_[i]->bind(local_corpora_[i], options, mean_length); });
}

template <typename T>
void DataParallelEngine<T>::exchange_counts() {
  std::vector<std::int32_t*> word_topic, topic;
  for (const auto& engine : local_) {
    word_topic.push_back(engine->word_topic());
    topic.push_back(engine->topic());
  }
  exchange_->sum(word_topic, static_cast<std::size_t>(corpus_->vocab_size()) * options_.topics);
  exchange_->sum(topic, static_cast<std::size_t>(options_.topics));
}

template <typename T>
double DataParallelEngine<T>::estimate_and_log_likelihood(std::uint32_t iteration) {
  std::vector<std::vector<double>> parts(local_.size());
  for_each_local([&](std::size_t i) { parts[i] = local_[i]->estimate(iteration); });
  // The ranks' document terms in rank order (documents in order): first how many each has, then the values.
  const auto world = static_cast<std::size_t>(exchange_->world_size());
  std::vector<double> sizes(local_.size()), all_sizes(world);
  std::vector<const double*> send;
  for (std::size_t i = 0; i < local_.size(); ++i) {
    sizes[i] = static_cast<double>(parts[i].size());
    send.push_back(&sizes[i]);
  }
  exchange_->gather(send, 1, all_sizes);
  const auto most = static_cast<std::size_t>(*std::max_element(all_sizes.begin(), all_sizes.end()));
  double documents = 0;
  if (most > 0) {
    std::vector<double> all(world * most);
    send.clear();
    for (std::vector<double>& part : parts) {
      part.resize(most, 0.0);
      send.push_back(part.data());
    }
    exchange_->gather(send, most, all);
    for (std::size_t r = 0; r < world; ++r)
      for (std::size_t c = 0; c < static_cast<std::size_t>(all_sizes[r]); ++c) documents += all[r * most + c];
  }
  return local_.front()->add_topic_log_likelihood(documents);
}

template <typename T>
double DataParallelEngine<T>::load(std::span<const std::int32_t> z, const T* theta, const T* phi,
                                   std::uint32_t iteration) {
  const std::vector<int>& ranks = exchange_->local_ranks();
  for_each_local([&](std::size_t i) {
    const Shard& shard = shards_[ranks[i]];
    local_[i]->set_z(z.subspan(static_cast<std::size_t>(shard.first_token), static_cast<std::size_t>(shard.tokens())));
    local_[i]->count();
  });
  exchange_counts();
  const double ll = estimate_and_log_likelihood(iteration);
  if (theta != nullptr && phi != nullptr)  // a resumed run continues from the checkpoint's estimates
    for_each_local([&](std::size_t i) {
      local_[i]->set_estimates(theta + shards_[ranks[i]].first_doc * options_.topics, phi);
    });
  return ll;
}

template <typename T>
typename IterationEngine<T>::Step DataParallelEngine<T>::step(std::uint32_t t) {
  typename IterationEngine<T>::Step result;
  std::vector<ZStepReport> reports(local_.size());
  auto start = std::chrono::steady_clock::now();
  for_each_local([&](std::size_t i) { reports[i] = local_[i]->zstep(t); });
  // Every rank learns about invalid tokens anywhere: (count, first token) of each rank.
  std::vector<double> mine(2 * local_.size()), all(2 * static_cast<std::size_t>(exchange_->world_size()));
  std::vector<const double*> send;
  for (std::size_t i = 0; i < local_.size(); ++i) {
    mine[2 * i] = static_cast<double>(reports[i].invalid_tokens);
    mine[2 * i + 1] = static_cast<double>(reports[i].first_invalid);
    send.push_back(&mine[2 * i]);
  }
  exchange_->gather(send, 2, all);
  for (std::size_t r = 0; r < all.size() / 2; ++r)
    if (all[2 * r] > 0) {
      if (result.report.invalid_tokens == 0) result.report.first_invalid = static_cast<std::int64_t>(all[2 * r + 1]);
      result.report.invalid_tokens += static_cast<std::int64_t>(all[2 * r]);
    }
  phases_.zstep = result.zstep_seconds = detail::seconds_since(start);
  if (result.report.invalid_tokens > 0) return result;

  start = std::chrono::steady_clock::now();
  for_each_local([&](std::size_t i) {
    local_[i]->count();
    local_[i]->finish();
  });
  phases_.count = detail::seconds_since(start);

  start = std::chrono::steady_clock::now();
  exchange_counts();
  for_each_local([&](std::size_t i) { local_[i]->finish(); });
  phases_.all_reduce = detail::seconds_since(start);

  start = std::chrono::steady_clock::now();
  result.log_likelihood = estimate_and_log_likelihood(t);
  phases_.estimate = detail::seconds_since(start);
  return result;
}

template <typename T>
void DataParallelEngine<T>::download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi,
                                     Counts& counts) {
  if (static_cast<int>(local_.size()) != exchange_->world_size())
    throw Error(fmt::format("DataParallelEngine::download: this process drives {} of the {} ranks; gathering the "
                            "state of a multi-process run is not implemented",
                            local_.size(), exchange_->world_size()));
  const auto K = static_cast<std::size_t>(options_.topics);
  counts.K = options_.topics;
  counts.doc_topic.resize(static_cast<std::size_t>(corpus_->num_docs()) * K);
  const std::vector<int>& ranks = exchange_->local_ranks();
  std::vector<Counts> shard_counts(local_.size());
  for_each_local([&](std::size_t i) {
    const Shard& shard = shards_[ranks[i]];
    const auto first_token = static_cast<std::size_t>(shard.first_token);
    const auto first_doc = static_cast<std::size_t>(shard.first_doc);
    local_[i]->download(z.subspan(first_token, static_cast<std::size_t>(shard.tokens())),
                        theta.subspan(first_doc * K, static_cast<std::size_t>(shard.docs()) * K),
                        i == 0 ? phi : std::span<T>(), shard_counts[i]);
  });
  for (std::size_t i = 0; i < local_.size(); ++i)
    std::copy(shard_counts[i].doc_topic.begin(), shard_counts[i].doc_topic.end(),
              counts.doc_topic.begin() + static_cast<std::ptrdiff_t>(shards_[ranks[i]].first_doc * options_.topics));
  counts.word_topic = std::move(shard_counts.front().word_topic);
  counts.topic = std::move(shard_counts.front().topic);
}

template <typename T>
bool DataParallelEngine<T>::keeps_mean_sums() const {
  if (static_cast<int>(local_.size()) != exchange_->world_size()) return false;
  return std::all_of(local_.begin(), local_.end(), [](const auto& engine) { return engine->keeps_mean_sums(); });
}

template <typename T>
void DataParallelEngine<T>::add_means_to_sums() {
  for_each_local([&](std::size_t i) { local_[i]->add_means_to_sums(); });
}

template <typename T>
void DataParallelEngine<T>::download_mean_sums(std::span<double> theta, std::span<double> phi) {
  const auto K = static_cast<std::size_t>(options_.topics);
  const std::vector<int>& ranks = exchange_->local_ranks();
  for_each_local([&](std::size_t i) {  // theta's rows from their ranks, phi (the same on every rank) from the first
    const Shard& shard = shards_[ranks[i]];
    local_[i]->download_mean_sums(
        theta.subspan(static_cast<std::size_t>(shard.first_doc) * K, static_cast<std::size_t>(shard.docs()) * K),
        i == 0 ? phi : std::span<double>());
  });
}

template <typename T>
void DataParallelEngine<T>::clear_mean_sums() {
  for_each_local([&](std::size_t i) { local_[i]->clear_mean_sums(); });
}

template <typename T>
void DataParallelEngine<T>::set_priors(const Priors& priors) {
  options_.priors = priors;
  for_each_local([&](std::size_t i) { local_[i]->set_priors(priors); });
  // The collapsed z-step reads theta and phi as the means under the current priors, so they are formed again
  // (a collective step: every process sets the same priors after the same iteration).
  if (options_.estimate == Estimate::collapsed) estimate_and_log_likelihood(0);
}

template <typename T>
DocumentTopicHistogram DataParallelEngine<T>::document_topic_histogram(const Corpus&, int topics,
                                                                        std::int64_t longest) {
  std::vector<DocumentTopicHistogram> parts(local_.size());
  for_each_local([&](std::size_t i) { parts[i] = local_[i]->document_topic_histogram(longest); });
  // One flat row per rank: the documents' lengths, then the topics' counts.
  const std::size_t row = static_cast<std::size_t>(longest) + 1, width = row * (static_cast<std::size_t>(topics) + 1);
  std::vector<std::vector<double>> flat(local_.size(), std::vector<double>(width));
  std::vector<const double*> send;
  for (std::size_t i = 0; i < local_.size(); ++i) {
    std::copy(parts[i].documents.begin(), parts[i].documents.end(), flat[i].begin());
    std::copy(parts[i].topic_documents.begin(), parts[i].topic_documents.end(),
              flat[i].begin() + static_cast<std::ptrdiff_t>(row));
    send.push_back(flat[i].data());
  }
  std::vector<double> all(static_cast<std::size_t>(exchange_->world_size()) * width);
  exchange_->gather(send, width, all);
  DocumentTopicHistogram histogram;
  histogram.K = topics;
  histogram.longest = longest;
  histogram.documents.assign(row, 0);
  histogram.topic_documents.assign(width - row, 0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(exchange_->world_size()); ++r) {
    const double* values = all.data() + r * width;
    for (std::size_t i = 0; i < row; ++i) histogram.documents[i] += static_cast<std::int32_t>(values[i]);
    for (std::size_t i = row; i < width; ++i) histogram.topic_documents[i - row] += static_cast<std::int32_t>(values[i]);
  }
  return histogram;
}

template class DataParallelEngine<float>;
template class DataParallelEngine<double>;
template std::unique_ptr<ShardEngine<float>> cpu_shard_engine<float>(int);
template std::unique_ptr<ShardEngine<double>> cpu_shard_engine<double>(int);

}  // namespace bfly::lda
