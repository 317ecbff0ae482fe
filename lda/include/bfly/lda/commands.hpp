// bfly-lda's model subcommands as a library: `infer` (theta of new documents with a trained model's phi fixed)
// and `evaluate` (held-out perplexity by document completion and NPMI coherence). tools/bfly-lda parses the
// command line into ModelTaskSettings; messages name the settings by their flags.
#pragma once

#include "bfly/lda/topic_model.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bfly::lda {

struct ModelTaskSettings {
  std::string model;  // the directory of a bfly-lda run (phi.bin, vocab.txt, checkpoint.bin)
  // The documents: UCI docword + vocab files, or plain text (one document per line), read into the model's
  // vocabulary (words it does not know are dropped, then documents left empty).
  std::optional<std::string> docword, vocab, text;
  TextOptions text_options;
  std::int64_t max_docs = 0;
  EvaluationOptions evaluation;  // .inference: iterations, burn-in, seed, threads
  Placement placement;
  std::optional<std::string> out;  // infer: theta.bin + documents.txt; evaluate: metrics.json
};

// Reads the model and the documents (printing their sizes).
Model load_task_model(const ModelTaskSettings& settings);
Corpus load_task_documents(const ModelTaskSettings& settings, const Model& model);

// infer: writes DIR/theta.bin (documents x K, rows in input order, f64) and DIR/documents.txt (the input document
// of each row); settings.out is required.
void run_infer(const ModelTaskSettings& settings);

// evaluate: document completion on the documents and NPMI of the top words over the same documents; prints the
// summary and writes DIR/metrics.json when settings.out is given.
void run_evaluate(const ModelTaskSettings& settings);

// The evaluation at the end of a training run with a held-out part: evaluate (document completion on `heldout`,
// NPMI over `reference`, the training documents), print the summary, and write DIR/metrics.json (with `context`,
// see to_json) when `out` is given.
Evaluation evaluate_run(const Model& model, const Corpus& heldout, const Corpus& reference,
                        const EvaluationOptions& options, const Placement& placement,
                        const std::optional<std::string>& out,
                        const std::vector<std::pair<std::string, std::string>>& context);

}  // namespace bfly::lda
