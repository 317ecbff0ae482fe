// The LDA trainer: the state of an uncollapsed Gibbs run (z, counts, theta, phi, iteration), one iteration at a
// time through a ZStep, and its files: checkpoints (exact resume) and the outputs (topics, theta, phi).
#pragma once

#include "corpus.hpp"
#include "reference.hpp"
#include "zstep.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bfly::lda {

enum class ElementType { f32, f64 };
const char* name_of(ElementType type);

// Everything that, with the corpus, fixes a run's results.
struct TrainerOptions {
  int topics = 64;
  Priors priors;
  std::uint64_t seed = 1;
  Estimate estimate = Estimate::mean;
  int threads = 0;  // CPU threads for counts, estimates, log-likelihood (0: hardware); never changes results
};

// A checkpoint whose contents do not fit the run (another corpus, another type) or that is damaged.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

// What a checkpoint records besides the arrays (all of it is checked on resume).
struct CheckpointInfo {
  ElementType type = ElementType::f32;
  TrainerOptions options;         // topics, priors, seed, estimate (threads is not stored)
  std::uint32_t iteration = 0;    // iterations done
  double train_seconds = 0;       // wall-clock seconds spent in iterations so far (not part of the results)
  std::int64_t docs = 0, vocab = 0, tokens = 0;
  std::uint64_t corpus_fingerprint = 0;
};

// Reads only the header of a checkpoint file (to learn its options before building a trainer).
CheckpointInfo read_checkpoint_info(const std::string& path);

// Timings and the log-likelihood of one iteration.
struct IterationStats {
  std::uint32_t iteration = 0;
  double zstep_seconds = 0, iteration_seconds = 0;
  double ll_per_token = 0;  // log_likelihood(...) / tokens, see reference.hpp
};

template <typename T>
class Trainer {
 public:
  // Starts a run at iteration 0: uniform random topics, their counts, theta and phi. `corpus` must outlive the
  // trainer and is the corpus the z-step sees (sorted by length, normally).
  Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<ZStep<T>> zstep);

  // Continues the run saved in `checkpoint_path`: the options come from the checkpoint; throws CheckpointError
  // when it was written for another corpus or element type, or is damaged.
  static Trainer resume(const Corpus& corpus, const std::string& checkpoint_path, int threads,
                        std::unique_ptr<ZStep<T>> zstep);

  // One iteration: z-step (iteration number + 1 in the Philox counter), counts, theta and phi, log-likelihood.
  IterationStats step();

  // Writes a checkpoint atomically (temp file in the same directory, fsync, rename).
  void save_checkpoint(const std::string& path) const;

  // Writes the outputs into `dir` (created if needed): topics.txt (top words per topic), theta.bin, phi.bin,
  // documents.txt and vocab.txt. See README-section.md for the formats.
  void write_outputs(const std::string& dir, int top_words) const;

  std::uint32_t iteration() const { return iteration_; }
  double train_seconds() const { return train_seconds_; }
  double ll_per_token() const { return ll_per_token_; }
  const TrainerOptions& options() const { return options_; }
  const Corpus& corpus() const { return *corpus_; }
  const ZStep<T>& zstep() const { return *zstep_; }
  const std::vector<std::int32_t>& z() const { return z_; }
  const std::vector<T>& theta() const { return theta_; }  // D x K, documents in corpus (sorted) order
  const std::vector<T>& phi() const { return phi_; }      // V x K
  const Counts& counts() const { return counts_; }

  // The `count` most probable words of topic k, as word ids, most probable first (ties: smaller id first).
  std::vector<std::int32_t> top_words(int k, int count) const;

 private:
  Trainer(const Corpus& corpus, const TrainerOptions& options, std::unique_ptr<ZStep<T>> zstep, bool);
  void refresh_counts_and_ll();

  const Corpus* corpus_;
  TrainerOptions options_;
  std::unique_ptr<ZStep<T>> zstep_;
  std::uint32_t iteration_ = 0;
  double train_seconds_ = 0;
  std::vector<std::int32_t> z_;
  std::vector<T> theta_, phi_;
  Counts counts_;
  double ll_per_token_ = 0;
};

// The small matrix file of theta.bin and phi.bin: 8 bytes "BFLYMAT1", u32 element size (4: f32, 8: f64),
// u32 0, u64 rows, u64 cols, then rows * cols elements row-major, all little-endian.
template <typename T>
void write_matrix(const std::string& path, const T* data, std::int64_t rows, std::int64_t cols);

}  // namespace bfly::lda
