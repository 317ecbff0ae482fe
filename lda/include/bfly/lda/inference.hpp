// Inference on new documents with a trained model: the topics phi stay fixed and only the documents' topic
// mixtures theta are sampled, with the same uncollapsed Gibbs step as training (the z-step through any ZStep,
// then theta from the document's counts). A Model is what a trained run leaves in its output directory.
//
// Random numbers: the z draws and the initial topics use the streams of training (reference.hpp) over the
// documents as given to infer_with, sorted by decreasing length; theta draws (Estimate::draw) use kStreamTheta.
// So an inference is reproducible from (model, documents, seed, iterations), whatever the thread count.
#pragma once

#include "bfly/lda/corpus.hpp"
#include "bfly/lda/reference.hpp"
#include "bfly/lda/trainer.hpp"
#include "bfly/lda/zstep.hpp"
#include "bfly/spec/element_type.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace bfly::lda {

// A trained topic model: the topics, the priors and the vocabulary that new documents are read with.
struct Model {
  std::vector<std::string> vocab;  // V words; word id w is vocab[w]
  std::vector<double> phi;         // V x K row-major: p(word w | topic k)
  std::vector<double> alpha;       // K: the Dirichlet prior of a document's topics (asymmetric when learned)
  double beta = 0.01;              // the symmetric prior of the topics' words (kept for reference)
  Estimate estimate = Estimate::mean;          // how theta is formed between z-steps, as in training
  gen::ElementType type = gen::ElementType::f32;  // element type of the z-step sums (f32 or f64)

  int topics() const { return static_cast<int>(alpha.size()); }
  std::int32_t vocab_size() const { return static_cast<std::int32_t>(vocab.size()); }
  double alpha_sum() const;
  // Throws bfly::Error naming the first inconsistency: sizes, a negative or non-finite phi entry, a topic whose
  // column does not sum to 1 (within 1e-3), alpha not positive, a type other than f32 or f64.
  void check() const;
};

// Reads the model a bfly-lda run wrote into `dir`: phi.bin (V x K), vocab.txt, the priors, estimate and type
// from checkpoint.bin's header, and alpha.txt (K lines, one alpha_k each) when the run learned alpha. Throws
// CorpusError for a missing or malformed file (named), CheckpointError for a damaged checkpoint header.
Model load_model(const std::string& dir);

// The model of a trainer's current state (phi as the trainer holds it, alpha of its options).
template <typename T>
Model model_of(const Trainer<T>& trainer);

// Writes alpha.txt into `dir`: K lines, alpha_k with 17 significant digits (read back by load_model).
void write_alpha(const std::string& dir, std::span<const double> alpha);

// `corpus` (read with its own vocabulary) with each word replaced by its id in `vocab`; words that `vocab` lacks
// are dropped, then documents left empty (doc_ids and input_documents say which survived).
Corpus in_vocabulary(const Corpus& corpus, const std::vector<std::string>& vocab);

// New documents for a model: plain text read as training reads it (TextOptions, but every word the model knows
// is kept: min_count 1), or a UCI corpus, each mapped into the model's vocabulary.
Corpus read_text_for(const Model& model, const std::string& path, TextOptions options = {});
Corpus read_uci_for(const Model& model, const std::string& docword_path, const std::string& vocab_path,
                    std::int64_t max_docs = 0);

struct InferenceOptions {
  int iterations = 100;  // Gibbs iterations with phi fixed
  int burn_in = -1;      // theta averages the posterior means of iterations burn_in + 1 .. iterations (-1: half)
  std::uint64_t seed = 1;
  int threads = 0;       // CPU threads (0: the hardware's, at most 16); never changes the results
};

// The z-step of inference: phi is given once (bind) and stays, so a GPU implementation uploads it once.
template <typename T>
class FixedPhiZStep {
 public:
  virtual ~FixedPhiZStep() = default;
  virtual std::string name() const = 0;
  // `corpus` (in the model's vocabulary) and phi (V x K) outlive every run that follows.
  virtual void bind(const Corpus& corpus, int K, std::span<const T> phi) = 0;
  // Draws z for every token from theta[m] * phi[word] as ZStep::run does (same uniforms, same contract).
  virtual ZStepReport run(std::span<const T> theta, std::span<std::int32_t> z, std::uint64_t seed,
                          std::uint32_t iteration) = 0;
};

// A FixedPhiZStep that runs any ZStep (CpuZStep, GeneratedCpuZStep) with the bound phi.
template <typename T>
std::unique_ptr<FixedPhiZStep<T>> with_fixed_phi(std::unique_ptr<ZStep<T>> zstep);

// What infer_with returns.
struct Inference {
  int topics = 0;
  std::vector<double> theta;  // D x K row-major, p(topic k | document m), documents in the order given
  std::string engine;         // the z-step's name
};

// Samples the topic mixtures of `documents` (word ids in the model's vocabulary) with phi fixed: z starts uniform
// at random, each iteration draws z from theta * phi, then theta from the document counts (posterior mean, or a
// Dirichlet draw when model.estimate is draw); the returned theta averages the posterior means
// (n_dk + alpha_k) / (N_d + sum alpha) of the iterations after burn-in. T must be the model's element type.
// Throws bfly::Error for an inconsistent model, a word id outside the model's vocabulary, bad options, or tokens
// that could not be sampled.
template <typename T>
Inference infer_with(const Model& model, const Corpus& documents, const InferenceOptions& options,
                     FixedPhiZStep<T>& zstep);

}  // namespace bfly::lda
