// The LDA trainer: the state of an uncollapsed Gibbs run (z, counts, theta, phi, iteration), one iteration at a
// time through a ZStep, and its files: checkpoints (exact resume) and the outputs (topics, theta, phi).
#pragma once

#include "bfly/lda/corpus.hpp"
#include "bfly/lda/hyperparameters.hpp"
#include "bfly/lda/reference.hpp"
#include "bfly/lda/zstep.hpp"
#include "bfly/spec/element_type.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace bfly::lda {

// The most topics a run may have (bfly-lda's --topics range; also checked in checkpoints before allocating).
inline constexpr int kMaxTopics = 65536;

// Everything that, with the corpus, fixes a run's results.
struct TrainerOptions {
  int topics = 64;
  Priors priors;
  std::uint64_t seed = 1;
  // The default, collapsed, reached tomotopy's topic quality fastest on short and long documents alike
  // (docs/LDA.md, the quality bench).
  Estimate estimate = Estimate::collapsed;
  // Hyperparameter optimisation (hyperparameters.hpp): after every iteration t with t % optimize_interval == 0,
  // alpha becomes asymmetric, learned by Minka's fixed point from the document-topic counts (and beta too when
  // optimize_beta); the following iterations' estimates and log-likelihood use the new priors. 0: fixed priors.
  int optimize_interval = 0;
  bool optimize_beta = false;
  int threads = 0;  // CPU threads for counts, estimates, log-likelihood (0: hardware); never changes results
};


// A checkpoint whose contents do not fit the run (another corpus, another type) or that is damaged.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

// What a checkpoint records besides the arrays (all of it is checked on resume).
struct CheckpointInfo {
  gen::ElementType type = gen::ElementType::f32;
  TrainerOptions options;         // topics, priors (alpha as learned so far), seed, estimate, optimisation
                                  // (threads is not stored)
  std::uint32_t iteration = 0;    // iterations done
  double train_seconds = 0;       // wall-clock seconds spent in iterations so far (not part of the results)
  std::int64_t docs = 0, vocab = 0, tokens = 0;
  std::uint64_t corpus_fingerprint = 0;
  std::uint32_t format = 0;        // the file's format version
  bool asymmetric_alpha = false;   // the file holds a learned alpha (options.priors.topic_alpha)
};

// Reads only the header of a checkpoint file (to learn its options before building a trainer).
CheckpointInfo read_checkpoint_info(const std::string& path);

// Timings and the log-likelihood of one iteration.
struct IterationStats {
  std::uint32_t iteration = 0;
  double zstep_seconds = 0, iteration_seconds = 0;
  double ll_per_token = 0;  // log_likelihood(...) / tokens, see reference.hpp
};

// Where an iteration runs: the state (z, counts, theta, phi) lives in the engine between iterations, so a GPU
// engine keeps it on the device and the trainer copies it back only for checkpoints and outputs (download).
// Every engine follows the CPU reference's definitions (reference.hpp): the z-step of iteration t uses Philox
// iteration t, the estimates of iteration t use the streams of iteration t, and the log-likelihood is the
// collapsed one of the counts of z.
template <typename T>
class IterationEngine {
 public:
  virtual ~IterationEngine() = default;

  // A short name for progress lines, e.g. "cpu-reference (2 threads)" or "gpu bfly_lda_z_f32_w32_k64_r8_addsub".
  virtual std::string name() const = 0;

  // Called once, before anything else, with the corpus (which outlives the engine) and the run's options.
  virtual void bind(const Corpus& corpus, const TrainerOptions& options) = 0;

  // Sets the state to `z` (every topic in [0, K)) and computes its counts; theta and phi are copied from
  // `theta` and `phi` when given (a resumed run), otherwise estimated from the counts with the streams of
  // `iteration`. Returns the log-likelihood (not per token).
  virtual double load(std::span<const std::int32_t> z, const T* theta, const T* phi, std::uint32_t iteration) = 0;

  // Iteration t: the z-step, then counts, theta and phi, log-likelihood. `zstep_seconds` includes waiting for
  // the z-step to finish. Invalid tokens are reported, not thrown; the state is then undefined.
  struct Step {
    ZStepReport report;
    double zstep_seconds = 0;
    double log_likelihood = 0;
  };
  virtual Step step(std::uint32_t t) = 0;

  // Copies the state into host arrays of the corpus' sizes (counts resized by the engine).
  virtual void download(std::span<std::int32_t> z, std::span<T> theta, std::span<T> phi, Counts& counts) = 0;

  // The priors of the following iterations (hyperparameter optimisation); the state is left as it is.
  virtual void set_priors(const Priors& priors) = 0;

  // The histogram of the current document-topic counts over the whole corpus (what alpha's fixed point reads);
  // `corpus` and `topics` are those bound, `longest` the corpus' longest document. This default downloads the
  // state; engines whose documents are spread over ranks gather the ranks' histograms instead.
  virtual DocumentTopicHistogram document_topic_histogram(const Corpus& corpus, int topics, std::int64_t longest);

  // Output averaging (Trainer::add_means_to_average) where the state lives, so that it copies nothing: an engine
  // whose keeps_mean_sums() is true keeps running double sums of the posterior means (D x K and V x K, corpus
  // order). add_means_to_sums() adds the means of the current state under the current priors, the values
  // Trainer::mean_theta() and mean_phi() compute; download_mean_sums() copies the sums out (zeros before the first
  // add) and clear_mean_sums() empties them. The defaults keep none: the trainer then sums on the host.
  virtual bool keeps_mean_sums() const { return false; }
  virtual void add_means_to_sums();
  virtual void download_mean_sums(std::span<double> theta, std::span<double> phi);
  virtual void clear_mean_sums() {}
};

// The CPU engine: a ZStep (normally CpuZStep) plus the CPU reference's counts, estimates and log-likelihood.
template <typename T>
std::unique_ptr<IterationEngine<T>> cpu_engine(std::unique_ptr<ZStep<T>> zstep);

template <typename T>
class Trainer {
 public:
  // Starts a run at iteration 0: uniform random topics, their counts, theta and phi. `corpus` must outlive the
  // trainer and is the corpus the z-step sees (sorted by length, normally).
  Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<ZStep<T>> zstep);
  Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<IterationEngine<T>> engine);

  // Continues the run saved in `checkpoint_path`: the options come from the checkpoint; throws CheckpointError
  // when it was written for another corpus or element type, or is damaged.
  static Trainer resume(const Corpus& corpus, const std::string& checkpoint_path, int threads,
                        std::unique_ptr<ZStep<T>> zstep);
  static Trainer resume(const Corpus& corpus, const std::string& checkpoint_path, int threads,
                        std::unique_ptr<IterationEngine<T>> engine);

  // One iteration: z-step (iteration number + 1 in the Philox counter), counts, theta and phi, log-likelihood;
  // then, every options().optimize_interval iterations, the priors learned from the counts (options().priors).
  IterationStats step();

  // Writes a checkpoint atomically (temp file in the same directory, fsync, rename).
  void save_checkpoint(const std::string& path) const;

  // Writes the outputs into `dir` (created if needed): topics.txt (top words per topic), theta.bin and phi.bin
  // (the posterior means output_theta() and output_phi()), alpha.txt (alpha_k of each topic and beta), documents.txt
  // and vocab.txt. docs/LDA.md gives the formats. All are written to temporaries and renamed into place only when
  // every one is complete: on an error (named file and cause) none is replaced.
  void write_outputs(const std::string& dir, int top_words) const;

  std::uint32_t iteration() const { return iteration_; }
  double train_seconds() const { return train_seconds_; }
  double ll_per_token() const { return ll_per_token_; }
  const TrainerOptions& options() const { return options_; }
  const Corpus& corpus() const { return *corpus_; }
  const IterationEngine<T>& engine() const { return *engine_; }
  // The state, copied from the engine when it changed since the last call.
  const std::vector<std::int32_t>& z() const { return sync().z_; }
  const std::vector<T>& theta() const { return sync().theta_; }  // D x K, documents in corpus (sorted) order
  const std::vector<T>& phi() const { return sync().phi_; }      // V x K
  const Counts& counts() const { return sync().counts_; }

  // The posterior means of theta (D x K, corpus order) and phi (V x K) given the current topics z and priors:
  // theta = (n_dk + alpha_k) / (N_d + sum alpha), phi = (n_wk + beta) / (n_k + V beta). They are what a run reports
  // (write_outputs, top_words, model_of) whatever options().estimate forms between z-steps: with Estimate::mean
  // they are theta() and phi() (unless priors were learned after this iteration's estimates); with Estimate::draw
  // they average over the Dirichlet posterior instead of keeping one draw of it, which scores better held out
  // (docs/LDA.md, the outputs).
  std::vector<T> mean_theta() const;
  std::vector<T> mean_phi() const;

  // The outputs averaged over iterations: add_means_to_average() (after an iteration) adds mean_theta() and
  // mean_phi() to running sums; while they hold any iteration, output_theta() and output_phi() are their averages,
  // else the current means. write_outputs, top_words and model_of report output_theta() and output_phi(). The
  // average is no part of the chain: checkpoints do not hold it and the following iterations do not read it. The
  // sums stay in the engine when it keeps them (the GPU engine: on the device, copied out once for the outputs),
  // else on the host (the whole state copied out per add); either way the time of an add counts in train_seconds().
  void add_means_to_average();
  void clear_average();  // back to the current means (a caller that averages each of several stretches of a run)
  // Sets the outputs to an average kept from before (output_theta()'s and output_phi()'s values, as a saved model
  // holds them: the checkpoint does not), counted as one iteration; the next add_means_to_average() starts a new
  // average. Throws Error when the sizes are not D x K and V x K.
  void restore_average(std::span<const double> theta, std::span<const double> phi);
  int averaged_iterations() const { return averaged_; }
  std::vector<T> output_theta() const;
  std::vector<T> output_phi() const;

  // The `count` most probable words of topic k in output_phi(), as word ids, most probable first (ties: smaller id
  // first).
  std::vector<std::int32_t> top_words(int k, int count) const;

 private:
  Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<IterationEngine<T>> engine, bool);
  const Trainer& sync() const;
  bool estimates_have_current_priors() const;  // theta() and phi() were formed with options().priors
  std::vector<std::int32_t> top_words_of(const std::vector<T>& phi, int k, int count) const;
  void optimize_priors();

  const Corpus* corpus_;
  TrainerOptions options_;
  std::unique_ptr<IterationEngine<T>> engine_;
  std::uint32_t iteration_ = 0;
  double train_seconds_ = 0;
  // Host copies of the engine's state, refreshed by sync() when `stale_`.
  mutable std::vector<std::int32_t> z_;
  mutable std::vector<T> theta_, phi_;
  mutable Counts counts_;
  mutable bool stale_ = true;
  double ll_per_token_ = 0;
  // add_means_to_average's sums over `averaged_` iterations: kept here, or copies of the engine's (refreshed by
  // sync_sums() when `sums_stale_`) when it keeps them.
  const Trainer& sync_sums() const;
  mutable std::vector<double> theta_sum_, phi_sum_;
  mutable bool sums_stale_ = false;
  bool restored_ = false;  // the sums hold restore_average's values
  int averaged_ = 0;
};

// The names of the files write_outputs writes (and metrics.json, a run's evaluation), and a function that removes
// those of them in `dir` (regular files only): a run removes them when it writes a checkpoint they no longer match.
const std::vector<std::string>& output_names();
void remove_outputs(const std::string& dir);

// The small matrix file of theta.bin and phi.bin: 8 bytes "BFLYMAT1", u32 element size (4: f32, 8: f64),
// u32 0, u64 rows, u64 cols, then rows * cols elements row-major, all little-endian.
template <typename T>
void write_matrix(const std::string& path, const T* data, std::int64_t rows, std::int64_t cols);

}  // namespace bfly::lda
