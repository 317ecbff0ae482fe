// bfly-lda infer and evaluate (see commands.hpp).
#include "bfly/lda/commands.hpp"

#include "seconds_since.hpp"

#include "bfly/output_file.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace bfly::lda {
namespace {

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

Model load_task_model(const ModelTaskSettings& s) {
  Model model = load_model(s.model);
  print_line(fmt::format("model: {} (K = {}, {} words, alpha sum {:.4g}, beta = {}, estimate = {}, type = {})",
                         s.model, model.topics(), model.vocab_size(), model.alpha_sum(), model.beta,
                         name_of(model.estimate), gen::name_of(model.type)));
  return model;
}

Corpus load_task_documents(const ModelTaskSettings& s, const Model& model) {
  const auto start = std::chrono::steady_clock::now();
  TextOptions text_options = s.text_options;
  text_options.max_docs = s.max_docs;
  Corpus documents = s.text ? read_text_for(model, *s.text, text_options)
                            : read_uci_for(model, *s.docword, *s.vocab, s.max_docs);
  print_line(fmt::format("documents: {} of {} input documents have words of the model, {} tokens (read in {:.2f} s)",
                         documents.num_docs(), documents.input_documents, documents.num_tokens(),
                         detail::seconds_since(start)));
  if (documents.num_docs() == 0) throw RunError("no document has a word of the model's vocabulary");
  return documents;
}

void run_infer(const ModelTaskSettings& s) {
  if (!s.out) throw RunError("infer needs --out DIR (where theta.bin and documents.txt go)");
  const Model model = load_task_model(s);
  const Corpus documents = load_task_documents(s, model);
  const InferenceOptions& o = s.evaluation.inference;
  std::string where;
  const auto start = std::chrono::steady_clock::now();
  const Inference inference = [&] {
    if (model.type == gen::ElementType::f64) {
      const auto zstep = inference_zstep<double>(model, documents, s.placement, o.threads, &where);
      print_line(where);
      return infer_with<double>(model, documents, o, *zstep);
    }
    const auto zstep = inference_zstep<float>(model, documents, s.placement, o.threads, &where);
    print_line(where);
    return infer_with<float>(model, documents, o, *zstep);
  }();
  print_line(fmt::format("inferred theta of {} documents: {} iterations ({} averaged), seed {}, {} in {:.2f} s",
                         documents.num_docs(), o.iterations,
                         o.iterations - (o.burn_in >= 0 ? o.burn_in : o.iterations / 2), o.seed, inference.engine,
                         detail::seconds_since(start)));
  namespace fs = std::filesystem;
  fs::create_directories(*s.out);
  const std::vector<std::int64_t> order = input_order(documents);  // rows in input order
  std::vector<double> theta(inference.theta.size());
  OutputFile rows((fs::path(*s.out) / "documents.txt").string());
  const int K = inference.topics;
  for (std::size_t row = 0; row < order.size(); ++row) {
    std::copy_n(inference.theta.begin() + order[row] * K, K, theta.begin() + static_cast<std::ptrdiff_t>(row) * K);
    rows.text(fmt::format("{}\n", documents.doc_ids[order[row]]));
  }
  write_matrix<double>((fs::path(*s.out) / "theta.bin").string(), theta.data(), documents.num_docs(), K);
  rows.commit();
  print_line(fmt::format("wrote {}: theta.bin documents.txt", *s.out));
}

void run_evaluate(const ModelTaskSettings& s) {
  const Model model = load_task_model(s);
  const Corpus documents = load_task_documents(s, model);
  std::string where;
  const Evaluation evaluation = [&] {
    const Corpus observed = split_for_completion(documents).observed;
    const InferenceOptions& o = s.evaluation.inference;
    if (model.type == gen::ElementType::f64) {
      const auto zstep = inference_zstep<double>(model, observed, s.placement, o.threads, &where);
      print_line(where);
      return evaluate_with<double>(model, documents, documents, s.evaluation, *zstep);
    }
    const auto zstep = inference_zstep<float>(model, observed, s.placement, o.threads, &where);
    print_line(where);
    return evaluate_with<float>(model, documents, documents, s.evaluation, *zstep);
  }();
  print_line(summary(evaluation));
  if (s.out) {
    namespace fs = std::filesystem;
    fs::create_directories(*s.out);
    OutputFile metrics((fs::path(*s.out) / "metrics.json").string());
    metrics.text(to_json(evaluation, {{"model", json_string(s.model)},
                                      {"inference_iterations", std::to_string(s.evaluation.inference.iterations)},
                                      {"seed", std::to_string(s.evaluation.inference.seed)}}));
    metrics.commit();
    print_line(fmt::format("wrote {}", (fs::path(*s.out) / "metrics.json").string()));
  }
}

Evaluation evaluate_run(const Model& model, const Corpus& heldout, const Corpus& reference,
                        const EvaluationOptions& options, const Placement& placement,
                        const std::optional<std::string>& out,
                        const std::vector<std::pair<std::string, std::string>>& context) {
  const Evaluation evaluation = evaluate(model, heldout, reference, options, placement);
  print_line(fmt::format("evaluation ({}, {:.2f} s): {}", evaluation.engine, evaluation.seconds, summary(evaluation)));
  if (out) {
    const std::string path = (std::filesystem::path(*out) / "metrics.json").string();
    OutputFile metrics(path);
    metrics.text(to_json(evaluation, context));
    metrics.commit();
    print_line(fmt::format("wrote {}", path));
  }
  return evaluation;
}

}  // namespace bfly::lda
