// Data-parallel training, part 2: an IterationEngine over shards. Each rank (one GPU, or one CPU engine in the
// tests) holds one shard of the documents (sharding.hpp) with its z, its documents' counts and its theta; phi is
// replicated. An iteration:
//   1. z-step        every rank draws the topics of its tokens (from its theta and the shared phi)
//   2. counts        every rank counts its tokens: n_dk of its documents, n_wk and n_k of its tokens only
//   3. all-reduce    n_wk and n_k summed over the ranks (CountExchange::sum: NCCL on GPUs)
//   4. estimates     every rank forms its theta from its n_dk and the whole phi from the summed n_wk, n_k; the
//                    log-likelihood from the ranks' document terms (gathered) and the words' and topics' terms
// Because each draw depends only on (seed, token or document index in the whole corpus, iteration) and the counts
// are integers, z, the counts, theta and phi equal those of a one-rank run bit for bit.
#pragma once

#include "bfly/lda/sharding.hpp"
#include "bfly/lda/trainer.hpp"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace bfly::lda {

// One rank's part of a data-parallel iteration. The arrays word_topic() and topic() are in the memory of the
// run's CountExchange (device memory for NCCL). Calls come in the order of the iteration above; a GPU
// implementation makes its device current at the start of every call (the ranks of one process may run their
// calls on different threads).
template <typename T>
class ShardEngine {
 public:
  virtual ~ShardEngine() = default;
  virtual std::string name() const = 0;

  // `shard` (a shard_corpus of the whole corpus; it outlives the engine) and the run's options.
  // `mean_document_length` is the whole corpus' (kernels chosen from it are the same on every rank).
  virtual void bind(const Corpus& shard, const TrainerOptions& options, double mean_document_length) = 0;

  virtual void set_z(std::span<const std::int32_t> z) = 0;  // the shard's tokens' topics, all in [0, K)
  virtual ZStepReport zstep(std::uint32_t iteration) = 0;   // token indices of the report: whole corpus
  virtual void count() = 0;                                 // n_dk, n_wk, n_k of the shard's tokens
  virtual std::int32_t* word_topic() = 0;                   // n_wk, V x K (summed in place by the exchange)
  virtual std::int32_t* topic() = 0;                        // n_k, K
  // theta from n_dk, phi from n_wk and n_k (the sums), the streams of `iteration`; then the documents' terms of
  // the log-likelihood, as partial sums in document order (see reference.hpp, document_log_likelihood_chunks).
  virtual std::vector<double> estimate(std::uint32_t iteration) = 0;
  // The rest of the log-likelihood, added to the documents' total (reference.hpp, add_topic_log_likelihood).
  virtual double add_topic_log_likelihood(double documents) = 0;
  virtual void set_estimates(const T* theta, const T* phi) = 0;  // the shard's theta rows and the whole phi
  virtual void set_priors(const Priors& priors) = 0;             // for the following estimates
  // The histogram of the shard's document-topic counts n_dk (hyperparameters.hpp), `longest` the whole corpus'.
  virtual DocumentTopicHistogram document_topic_histogram(std::int64_t longest) = 0;
  virtual void finish() = 0;  // waits for the work queued so far (for timings)

  // The state: z and theta of the shard, phi, and counts (n_dk of the shard, n_wk and n_k as last summed).
  virtual void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) = 0;

  // Output averaging on the rank (IterationEngine::keeps_mean_sums): sums of the posterior means of the shard's
  // theta rows and of the whole phi; download_mean_sums skips phi when it is empty. The defaults keep none.
  virtual bool keeps_mean_sums() const { return false; }
  virtual void add_means_to_sums() { throw Error("this rank's engine keeps no sums of the posterior means"); }
  virtual void download_mean_sums(std::span<double>, std::span<double>) {
    throw Error("this rank's engine keeps no sums of the posterior means");
  }
  virtual void clear_mean_sums() {}
};

// A rank on the CPU: CpuZStep and the CPU reference's counts, estimates and log-likelihood on its shard.
template <typename T>
std::unique_ptr<ShardEngine<T>> cpu_shard_engine(int threads = 0);

// Seconds of the last iteration in each part (summed over nothing: the ranks run side by side, every part ends
// when the slowest rank is done).
struct IterationPhases {
  double zstep = 0, count = 0, all_reduce = 0, estimate = 0;
};

template <typename T>
class DataParallelEngine final : public IterationEngine<T> {
 public:
  // `local` holds the engines of exchange->local_ranks(), in that order. `concurrent`: run the ranks' calls on one
  // thread each (GPUs), else one after another on the calling thread.
  DataParallelEngine(std::shared_ptr<CountExchange> exchange, std::vector<std::unique_ptr<ShardEngine<T>>> local,
                     bool concurrent);
  ~DataParallelEngine() override;

  std::string name() const override;
  void bind(const Corpus& corpus, const TrainerOptions& options) override;
  double load(std::span<const std::int32_t> z, const T* theta, const T* phi, std::uint32_t iteration) override;
  typename IterationEngine<T>::Step step(std::uint32_t t) override;
  // Needs every rank in this process (a single-process run); a run of one process per GPU writes its files from
  // rank 0 after gathering z and theta, which is not implemented yet (docs/MULTI_GPU.md).
  void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) override;
  void set_priors(const Priors& priors) override;
  // The ranks' histograms gathered through the exchange (as doubles, exact below 2^53) and added in rank order:
  // integer sums, so the result is the one-rank histogram whatever the number of ranks or processes.
  DocumentTopicHistogram document_topic_histogram(const Corpus& corpus, int topics, std::int64_t longest) override;
  // The sums stay on the ranks when every rank keeps them and all are in this process (as download needs).
  bool keeps_mean_sums() const override;
  void add_means_to_sums() override;
  void download_mean_sums(std::span<double> theta, std::span<double> phi) override;
  void clear_mean_sums() override;

  const std::vector<Shard>& shards() const { return shards_; }
  const IterationPhases& last_phases() const { return phases_; }

 private:
  template <typename F>
  void for_each_local(F&& f);
  void exchange_counts();
  double estimate_and_log_likelihood(std::uint32_t iteration);

  std::shared_ptr<CountExchange> exchange_;
  std::vector<std::unique_ptr<ShardEngine<T>>> local_;
  bool concurrent_;
  const Corpus* corpus_ = nullptr;
  TrainerOptions options_;
  std::vector<Shard> shards_;          // one per rank of the whole run
  std::vector<Corpus> local_corpora_;  // the shards of the local ranks
  IterationPhases phases_;
};

}  // namespace bfly::lda
