// bfly-lda infer / evaluate: parse the flags into bfly::lda::ModelTaskSettings and run them.
#include "model_commands.hpp"

#include "bfly/lda/commands.hpp"
#include "cli/args.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>

namespace bfly::lda::cli_commands {
namespace {

using bfly::cli::Args;
using bfly::cli::Flag;
using bfly::cli::UsageError;

const std::vector<Flag> kFlags = {
    {"--model", "DIR", "the output directory of a bfly-lda training run (phi.bin, vocab.txt, checkpoint.bin)"},
    {"--docword", "FILE", "UCI bag-of-words counts of the documents (with --vocab: their own vocabulary)"},
    {"--vocab", "FILE", "UCI vocabulary of --docword (words the model does not know are dropped)"},
    {"--text", "FILE", "plain text, one document per line, tokenised as training does"},
    {"--max-docs", "N", "use only the first N documents of the input (default: all)"},
    {"--iterations", "N", "Gibbs iterations with phi fixed (default 100)"},
    {"--burn-in", "N", "iterations before theta is averaged (default: half of --iterations)"},
    {"--seed", "N", "seed of every random draw (default 1)"},
    {"--top-words", "N", "evaluate: words per topic in NPMI (default 10)"},
    {"--threads", "N", "CPU threads (default: all cores, at most 16); never changes the results"},
    {"--device", "cpu|gpu|auto", "where the z-step runs (default auto: the GPU when one can be used)"},
    {"--cpu-zstep", "MODE", "z-step on the CPU: generated, reference or auto (default), as in training"},
    {"--gpu-w", "W", "butterfly width of the generated z-step kernel, 4, 8, 16 or 32 (default: chosen)"},
    {"--gpu-variant", "swap|addsub", "butterfly variant of the generated z-step kernel (default: chosen)"},
    {"--out", "DIR", "infer: write theta.bin and documents.txt (required); evaluate: write metrics.json"},
};

std::string usage(std::string_view command) {
  if (command == "infer")
    return bfly::cli::format_usage(
        "bfly-lda infer --model DIR (--text FILE | --docword FILE --vocab FILE) --out DIR [flags]",
        "Infers the topic mixtures (theta) of new documents with a trained model's topics (phi) fixed.", kFlags,
        "exit status: 0 done, 2 bad arguments or input file or model, 1 other errors\n");
  return bfly::cli::format_usage(
      "bfly-lda evaluate --model DIR (--text FILE | --docword FILE --vocab FILE) [--out DIR] [flags]",
      "Held-out perplexity by document completion (theta from the even tokens of each document, the odd ones "
      "scored) and NPMI coherence of each topic's top words over the documents.",
      kFlags, "exit status: 0 done, 2 bad arguments or input file or model, 1 other errors\n");
}

ModelTaskSettings parse(const Args& args) {
  ModelTaskSettings s;
  const auto model = args.value("--model");
  if (!model) throw UsageError(fmt::format("{} needs --model DIR (a bfly-lda run's output directory)", args.command()));
  s.model = *model;
  s.docword = args.value("--docword");
  s.vocab = args.value("--vocab");
  s.text = args.value("--text");
  if (s.text && (s.docword || s.vocab)) throw UsageError("give either --text or --docword with --vocab, not both");
  if (!s.text && !s.docword && !s.vocab)
    throw UsageError("no documents: give --docword FILE --vocab FILE or --text FILE");
  if (!s.text && (!s.docword || !s.vocab)) throw UsageError("--docword and --vocab go together; give both");
  s.max_docs = args.integer_in("--max-docs", 1, INT64_MAX).value_or(0);
  InferenceOptions& o = s.evaluation.inference;
  o.iterations = static_cast<int>(args.integer_in("--iterations", 1, 1'000'000'000).value_or(100));
  o.burn_in = static_cast<int>(args.integer_in("--burn-in", 0, o.iterations - 1).value_or(-1));
  o.seed = static_cast<std::uint64_t>(args.integer_in("--seed", 0, INT64_MAX).value_or(1));
  o.threads = static_cast<int>(args.integer_in("--threads", 1, 1024).value_or(0));
  s.evaluation.top_words = static_cast<int>(args.integer_in("--top-words", 2, 1000).value_or(10));
  if (args.command() == "bfly-lda infer" && args.has("--top-words"))
    throw UsageError("--top-words applies to evaluate, not to infer");
  if (const auto d = args.choice("--device", {"cpu", "gpu", "auto"}))
    s.placement.device = *d == "cpu" ? Device::cpu : *d == "gpu" ? Device::gpu : Device::automatic;
  if (const auto z = args.choice("--cpu-zstep", {"auto", "generated", "reference"})) {
    if (s.placement.device == Device::gpu)
      throw UsageError("--cpu-zstep applies to runs on the CPU, not to --device gpu");
    s.placement.cpu_zstep = *z == "generated"   ? CpuZStepMode::generated
                            : *z == "reference" ? CpuZStepMode::reference
                                                : CpuZStepMode::automatic;
  }
  if (const auto W = args.integer_in("--gpu-w", 4, 32)) {
    if (*W != 4 && *W != 8 && *W != 16 && *W != 32)
      throw UsageError(fmt::format("--gpu-w expects 4, 8, 16 or 32, got {}", *W));
    s.placement.gpu.W = static_cast<int>(*W);
  }
  if (const auto v = args.choice("--gpu-variant", {"swap", "addsub"})) s.placement.gpu.variant = *v;
  s.out = args.value("--out");
  if (args.command() == "bfly-lda infer" && !s.out)
    throw UsageError("infer needs --out DIR (where theta.bin and documents.txt go)");
  return s;
}

}  // namespace

bool is_model_command(std::string_view word) { return word == "infer" || word == "evaluate"; }

int run_model_command(std::string_view command, const std::vector<std::string>& arguments) {
  const Args args(fmt::format("bfly-lda {}", command), kFlags, arguments, 0);
  if (args.help()) {
    std::fputs(usage(command).c_str(), stdout);
    return 0;
  }
  const ModelTaskSettings settings = parse(args);
  if (command == "infer")
    run_infer(settings);
  else
    run_evaluate(settings);
  return 0;
}

}  // namespace bfly::lda::cli_commands
