// A bfly-lda run as a library: read the corpus, choose where the iterations run (the GPU, else the GPU's generated
// z-step kernel on the CPU, else the CPU reference z-step), build or resume the trainer, print progress, and write
// the curve, the checkpoints and the outputs. tools/bfly-lda/main.cpp only parses the command line into
// RunSettings and maps the errors to exit statuses.
//
// Messages name the settings by their bfly-lda flags (--iterations, --cpu-zstep, ...).
#pragma once

#include "bfly/lda/corpus.hpp"
#include "bfly/lda/evaluation.hpp"
#include "bfly/lda/gpu_engine.hpp"
#include "bfly/lda/trainer.hpp"
#include "bfly/spec/element_type.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace bfly::lda {

// Settings that cannot work together or with the inputs (a resumed option that differs from the checkpoint, a
// z-step kernel that is not compiled in, a checkpoint past --iterations); bfly-lda exits with status 2.
class RunError : public Error {
 public:
  using Error::Error;
};

// Where iterations run: automatic is the GPU when one can be used, else the CPU.
enum class Device { automatic, cpu, gpu };
// The z-step of runs on the CPU: automatic is the generated kernel when it is compiled in, else the reference.
enum class CpuZStepMode { automatic, generated, reference };

// RunSettings::average_last's default: average the posterior means of the last half of the run's iterations.
inline constexpr int kAverageLastHalf = 0;

struct RunSettings {
  // The corpus: UCI docword + vocab files, or plain text (one document per line).
  std::optional<std::string> docword, vocab, text;
  TextOptions text_options;
  std::int64_t max_docs = 0;  // 0: all documents
  TrainerOptions options;
  gen::ElementType type = gen::ElementType::f32;
  std::uint32_t iterations = 100;  // counted from the start of the run, also when resuming
  std::optional<std::string> out;     // the directory of the outputs, the curve and the checkpoints
  std::optional<std::string> resume;  // a checkpoint file, or a directory holding checkpoint.bin
  int checkpoint_every = 0;           // 0: only at the end
  // > 1: the outputs average the posterior means of this run's last `average_last` iterations
  // (Trainer::add_means_to_average); 1: the last iteration's; kAverageLastHalf: the last half of `iterations`
  // (bfly-lda's default, --average-last auto).
  int average_last = kAverageLastHalf;
  int top_words = 10, show_topics = 20;
  bool quiet = false;
  int progress_every = 1;
  std::optional<std::string> save_corpus;  // write the corpus as read and stop, instead of training
  // > 0: hold out this fraction of the documents (evaluation.hpp, split_documents with the run's seed), train on
  // the rest and evaluate at the end (perplexity by document completion, NPMI): printed and DIR/metrics.json.
  double holdout = 0;
  EvaluationOptions evaluation;
  Device device = Device::automatic;
  CpuZStepMode cpu_zstep = CpuZStepMode::automatic;
  GpuEngineOptions gpu;
  int gpus = 0;  // > 0: data-parallel over CUDA devices 0 .. gpus - 1, counts summed by NCCL (multi_gpu.hpp)
};

// The model options the caller set explicitly; a resumed run must agree with its checkpoint on them.
struct GivenOptions {
  bool topics = false, alpha = false, beta = false, seed = false, estimate = false, type = false;
  bool optimize_interval = false, optimize_beta = false;
};


// A resumed run (settings.resume) takes its topics, priors, seed, estimate and type from the checkpoint (the
// threads stay). Throws RunError naming the first given option that differs from the checkpoint, CheckpointError
// for a missing or damaged checkpoint.
void adopt_checkpoint(RunSettings& settings, const GivenOptions& given);

// Where --device auto would train: "gpu: ..." or "cpu: no GPU (why)", one line without its newline.
std::string check_device();

// Reads the corpus (printing its sizes) and sorts its documents by length, the order the trainer uses.
Corpus load_corpus(const RunSettings& settings);

// Writes `corpus` in UCI form as dir/docword.txt and dir/vocab.txt: documents in `corpus` order (docID = row + 1),
// word ids + 1, counts summed.
void save_corpus(const Corpus& corpus, const std::string& dir);

// Trains on `corpus` (from load_corpus) as `settings` say, printing progress and writing the files; with
// `heldout`, evaluates the trained model on it at the end (NPMI over `corpus`).
void train(const RunSettings& settings, const Corpus& corpus, const Corpus* heldout = nullptr);

// The whole run: load_corpus, then save_corpus (settings.save_corpus) or train (on the documents not held out).
void run(const RunSettings& settings);

}  // namespace bfly::lda
