// bfly-gen: the command-line face of bfly. Each step of the chain KernelSpec -> generate -> Source -> compile is
// printable from here: generate (ahead-of-time header), show (source), table (the butterfly table, computed by the
// generated build on the CPU), inspect (NVRTC resources through the cache), cache (list, clear) and demo.
//
// Exit status: 0 success, 1 a failure while running (no GPU, NVRTC error, unwritable file), 2 a bad command line.
#include "bfly/emit/aot_header.hpp"
#include "cli/args.hpp"
#include "demo.hpp"
#include "bfly/cpu/table_kernels.hpp"
#include "bfly/emit/write_file.hpp"

#include "bfly/error.hpp"
#include "bfly/output_file.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_spec.hpp"
#include "bfly/spec/lda_baseline.hpp"
#include "bfly/jit/inspect.hpp"
#include "bfly/ops/lda_z_step.hpp"
#include "bfly/ops/sampler.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace bfly::cli {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Kernel spec from the command line: a kernel name, or flags (defaults as bfly::rt::Sampler picks them)
// ---------------------------------------------------------------------------------------------------------
const std::string kKHelp =
    fmt::format("categories per distribution, 1 .. {} (required unless a kernel name is given)",
                gen::KernelSpec::kMaxK);
const std::string kTypeHelp = [] {
  std::string tags;
  for (const gen::ElementTypeInfo& element : gen::kElementTypes)
    tags += fmt::format("{}{}", tags.empty() ? "" : ", ", element.tag);
  return fmt::format("element type of weights and sums: {} (default f32)", tags);
}();
const std::vector<Flag> kSpecFlags = {
    {"--K", "N", kKHelp},
    {"--W", "N", "lanes per group: 4, 8, 16 or 32 (default: what bfly::gen::choose_sample_spec picks for K)"},
    {"--remnant", "R", "largest remnant (K mod W) searched linearly, 0 .. W-1; larger ones are padded "
                       "(default: min(8, W-1))"},
    {"--type", "T", kTypeHelp},
    {"--variant", "V", "butterfly variant: swap (Figure 4) or addsub (Figure 8) (default addsub)"},
    {"--operation", "OP",
     "sample (explicit M x K weights, one row per lane), sample_pairs (the same over pairs of adjacent weights), "
     "sample_small (the same, several short rows per lane), "
     "sample_split (the same, one row over several CTAs), sample_split_pairs (sample_split over pairs of adjacent "
     "weights), lda_z_doc (LDA z-step, theta[doc] * phi[word], one "
     "document per group of W threads) or lda_z (the same, one document per thread: the paper's Algorithm 7) "
     "(default: what bfly::gen::choose_sample_spec picks for K)"},
    {"--input", "KIND",
     "what a sample or sample_split kernel's rows hold: weights (default) or logits (drawn from softmax(logits / T), "
     "f32, f16 or bf16)"},
    {"--draws", "D",
     "draws per row of a sample kernel: one (default for weights), with_replacement (num_samples draws from one "
     "table; default for logits) or without_replacement (num_samples distinct categories), the same for sample_split"},
    {"--no-warp-copies", "",
     "a sample or sample_pairs kernel that never copies its warps' rows into shared memory (default: the rule's copy "
     "where it applies, docs/DESIGN.md section 14; the name ends in _nocopy)"},
    {"--ring-anywhere", "",
     "a sample or sample_pairs kernel whose pass-1 ring stages rows on 16 bytes as rows that start anywhere, memory's "
     "lines in place (default: every row of a tile at one place where the rule allows, docs/DESIGN.md section 14; "
     "the name ends in _anywhere)"},
    {"--ring-row-order", "",
     "a sample or sample_pairs kernel whose pass-1 ring of rows staged anywhere at W = 16 puts row s of a tile in slot "
     "s (default: the slots permuted as block_total's first levels want them where the rule reads so, docs/DESIGN.md "
     "section 14; the name ends in _roworder)"},
    {"--ring-deep", "",
     "a sample_pairs kernel of odd K whose pass-1 ring is the deep one (8 lines a row, one-warp CTAs) from 8 lines of "
     "blocks a row, as other rows' (default: the shallow ring until 16 lines for odd K over pairs, docs/DESIGN.md "
     "section 14; the name ends in _deep)"},
};

constexpr std::string_view kSpecUsage =
    "KERNEL_NAME | --K N [--W N] [--remnant R] [--type T] [--variant V] [--operation OP] [--input KIND] "
    "[--draws D] [--no-warp-copies] [--ring-anywhere] [--ring-row-order] [--ring-deep]";

std::vector<Flag> with_spec_flags(std::vector<Flag> flags) {
  flags.insert(flags.begin(), kSpecFlags.begin(), kSpecFlags.end());
  return flags;
}

// Runs `check` (which throws bfly::Error) and turns its error into a UsageError that names the flag and value.
template <typename Check>
auto checked_flag(std::string_view flag, const std::string& value, Check check) {
  try {
    return check();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(fmt::format("{} {}: {}", flag, value, e.what()));
  }
}

gen::KernelSpec spec_from_args(const Args& args) {
  bool any_flag = false;
  for (const Flag& flag : kSpecFlags) any_flag = any_flag || args.has(flag.name);
  if (!args.positionals().empty()) {
    if (any_flag) throw UsageError("give either a kernel name or spec flags (--K, --W, ...), not both");
    const std::string& name = args.positionals().front();
    try {
      return gen::parse_kernel_name(name);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  const std::optional<int> K = args.integer("--K");
  if (!K) throw UsageError("--K is required (or give a kernel name such as bfly_sample_f32_w32_k1024_r8_addsub)");

  // Each field is checked alone in an otherwise valid spec, so the message names the flag that is wrong.
  gen::KernelSpec probe;
  probe.K = *K;
  checked_flag("--K", std::to_string(*K), [&] { probe.validate(); });
  rt::SamplerOptions forced;
  if (const std::optional<int> W = args.integer("--W")) {
    gen::KernelSpec w_probe;
    w_probe.W = *W;
    w_probe.R = 0;
    checked_flag("--W", std::to_string(*W), [&] { w_probe.validate(); });
    forced.W = *W;
  }
  gen::ElementType type = gen::ElementType::f32;
  if (const auto text = args.value("--type"))
    type = checked_flag("--type", *text, [&] { return gen::parse_element_type(*text); });
  if (const auto text = args.value("--variant"))
    forced.variant = checked_flag("--variant", *text, [&] { return gen::parse_variant(*text); });
  if (const std::optional<int> R = args.integer("--remnant")) {
    forced.R = *R;
    checked_flag("--remnant", std::to_string(*R), [&] { gen::choose_sample_spec(*K, type, forced); });
  }
  gen::Operation operation = gen::Operation::sample;
  if (const auto text = args.value("--operation")) {
    operation = checked_flag("--operation", *text, [&] { return gen::parse_operation(*text); });
    if (!gen::is_lda(operation)) forced.operation = operation;
  }
  if (!gen::is_lda(operation)) {
    // The forms (logits, several draws) are forms of the row kernel and of sample_split: without --operation they
    // take `sample`.
    if ((args.has("--input") || args.has("--draws")) && !forced.operation) forced.operation = gen::Operation::sample;
    gen::KernelSpec spec = gen::choose_sample_spec(*K, type, forced);
    if (const auto text = args.value("--input"))
      spec.input = checked_flag("--input", *text, [&] { return gen::parse_input_kind(*text); });
    if (spec.input == gen::InputKind::logits) spec.draws = gen::Draws::with_replacement;
    if (const auto text = args.value("--draws"))
      spec.draws = checked_flag("--draws", *text, [&] { return gen::parse_draws(*text); });
    const std::string_view flag = args.has("--draws") ? "--draws" : "--input";  // logits with one draw: --draws
    checked_flag(flag, args.value(flag).value_or(""), [&] { spec.validate(); });
    // Switches have no value for checked_flag's "FLAG VALUE: ..." form.
    for (const gen::KernelSwitch& s : gen::kKernelSwitches) {
      if (!args.has(s.flag)) continue;
      spec.*s.field = s.set_to;
      try {
        spec.validate();
      } catch (const Error& e) {
        throw UsageError(fmt::format("{}: {}", s.flag, e.what()));
      }
    }
    return spec;
  }
  if (args.has("--input") || args.has("--draws"))
    throw UsageError("--input and --draws apply to --operation sample and sample_split only");
  for (const gen::KernelSwitch& s : gen::kKernelSwitches)
    if (args.has(s.flag))
      throw UsageError(fmt::format("{} applies to --operation sample and sample_pairs only", s.flag));
  // The LDA z-step's defaults are the ones rt::LdaZStep picks.
  rt::LdaZOptions lda;
  lda.operation = operation;
  lda.W = forced.W;
  lda.variant = forced.variant;
  lda.R = forced.R;
  return gen::choose_lda_z_spec(*K, type, lda);
}

// ---------------------------------------------------------------------------------------------------------
// The paper's LDA baselines (show and inspect): --baseline ALG with --K and --type, or a name such as
// bfly_lda_alg4_f32_k1024
// ---------------------------------------------------------------------------------------------------------
const Flag kBaselineFlag = {"--baseline", "ALG",
                            "instead of a bfly kernel, the paper's LDA z-step baseline alg1 (Algorithm 1 with 3) or "
                            "alg4 (Algorithm 4 with 6 and 3) for --K and --type"};
constexpr std::string_view kBaselineNamePrefix = "bfly_lda_alg";
constexpr std::string_view kBaselineUsage = " | BASELINE_NAME | --baseline ALG --K N [--type T]";

// The baseline the command line asks for, or nullopt when it asks for a bfly kernel (spec_from_args).
std::optional<gen::LdaBaselineSpec> baseline_from_args(const Args& args) {
  const std::optional<std::string> name =
      args.positionals().empty() ? std::nullopt : std::optional(args.positionals().front());
  const bool named = name && name->starts_with(kBaselineNamePrefix);
  if (!named && !args.has("--baseline")) return std::nullopt;
  std::vector<std::string_view> spec_flags = {"--W", "--remnant", "--variant", "--operation", "--input", "--draws"};
  for (const gen::KernelSwitch& s : gen::kKernelSwitches) spec_flags.push_back(s.flag);
  for (const std::string_view flag : spec_flags)
    if (args.has(flag))
      throw UsageError(fmt::format("{} does not apply to an LDA baseline, which has only --K and --type", flag));
  if (name) {
    if (!named || args.has("--baseline") || args.has("--K") || args.has("--type"))
      throw UsageError("give either a kernel name or spec flags (--baseline, --K, --type), not both");
    try {
      return gen::parse_lda_baseline_name(*name);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  gen::LdaBaselineSpec spec;
  const std::string algorithm = *args.value("--baseline");
  spec.algorithm = checked_flag("--baseline", algorithm, [&] { return gen::parse_lda_baseline(algorithm); });
  const std::optional<int> K = args.integer("--K");
  if (!K) throw UsageError("--K is required (or give a kernel name such as bfly_lda_alg4_f32_k1024)");
  spec.K = *K;
  checked_flag("--K", std::to_string(*K), [&] { spec.validate(); });
  if (const auto text = args.value("--type"))
    spec.type = checked_flag("--type", *text, [&] { return gen::parse_element_type(*text); });
  return spec;
}

// The source the command line names: an LDA baseline's or a bfly kernel's.
gen::Source source_from_args(const Args& args) {
  if (const std::optional<gen::LdaBaselineSpec> baseline = baseline_from_args(args))
    return gen::generate_lda_baseline(*baseline);
  return gen::generate(spec_from_args(args));
}

// ---------------------------------------------------------------------------------------------------------
// Subcommands
// ---------------------------------------------------------------------------------------------------------
int run_generate(const Args& args) {
  const gen::KernelSpec spec = spec_from_args(args);
  const std::string header = gen::aot_header(spec);
  const std::string output = args.value("--output").value_or("-");
  if (output == "-") {  // checked writes: a full standard output is an error that says so
    std::cout.flush();
    write_all(STDOUT_FILENO, header.data(), header.size(), "standard output");
    return 0;
  }
  const bool written = gen::write_if_different(output, header);
  std::cout << fmt::format("{} {} ({})\n", written ? "wrote" : "unchanged:", output, gen::kernel_name(spec));
  return 0;
}

int run_show(const Args& args) {
  const gen::Source source = source_from_args(args);
  std::cout << (args.has("--inline") ? gen::inline_headers(source) : source.text);
  return 0;
}

// "A0:1" (lane letter) for W <= 26, "17.0:1" (lane number and a dot) above, as the slides write them.
std::string format_cell(const Sym& s, int W) {
  if (W <= 26) return fmt::format("{}{}:{}", static_cast<char>('A' + s.lane), s.first, s.last);
  return fmt::format("{}.{}:{}", s.lane, s.first, s.last);
}

int run_table(const Args& args) {
  const int W = args.integer("--W").value_or(16);
  gen::KernelSpec probe;
  probe.W = W;
  probe.R = 0;
  checked_flag("--W", std::to_string(W), [&] { probe.validate(); });
  const std::string variant_text = args.value("--variant").value_or("addsub");
  const gen::Variant variant =
      checked_flag("--variant", variant_text, [&] { return gen::parse_variant(variant_text); });

  std::vector<Sym> table(static_cast<std::size_t>(W) * W);  // lane -1 marks an entry the kernel did not write
  tables::run_table_kernel(W, variant, table.data());
  std::string text;
  for (int i = 0; i < W; ++i) {
    for (int j = 0; j < W; ++j) {
      const Sym& s = table[static_cast<std::size_t>(i) * W + j];
      if (!s.ok || s.lane < 0 || s.lane >= W || s.first > s.last)
        throw Error(fmt::format("the generated {} table build for W = {} produced a wrong entry at row {}, lane {} "
                                "(lane {}, range {}:{}{}); the generator is broken",
                                gen::name_of(variant), W, i, j, s.lane, s.first, s.last,
                                s.ok ? "" : ", sum of non-adjacent ranges"));
      if (j > 0) text += ' ';
      text += format_cell(s, W);
    }
    text += '\n';
  }
  std::cout << text;
  return 0;
}

int run_inspect(const Args& args) {
  const gen::Source source = source_from_args(args);
  const std::optional<std::string> arch = args.value("--arch");
  if (arch) checked_flag("--arch", *arch, [&] { rt::parse_arch(*arch); });
  std::cout << rt::format_report(rt::inspect(source, arch));
  return 0;
}

int run_cache(const Args& args) {
  if (args.positionals().empty()) throw UsageError("cache needs an action: list or clear");
  const std::string& action = args.positionals().front();
  if (action == "list") {
    std::cout << rt::format_cache_list(rt::list_cache());
    return 0;
  }
  if (action == "clear") {
    const std::optional<std::filesystem::path> directory = rt::cache_directory();
    if (!directory) {
      std::cout << "disk cache is off (BFLY_CACHE=0, or no cache directory): nothing to clear\n";
      return 0;
    }
    const std::size_t removed = rt::clear_cache();
    std::cout << fmt::format("removed {} entries from {}\n", removed, directory->string());
    return 0;
  }
  throw UsageError(fmt::format("unknown cache action '{}'; allowed: list, clear", action));
}

int run_demo_command(const Args& args) {
  DemoOptions options;
  if (const std::optional<int> draws = args.integer("--draws")) {
    if (*draws < 1) throw UsageError(fmt::format("--draws {}: the number of draws must be at least 1", *draws));
    options.draws = *draws;
  }
  if (const std::optional<std::string> seed = args.value("--seed")) {
    const auto [end, error] = std::from_chars(seed->data(), seed->data() + seed->size(), options.seed);
    if (error != std::errc() || end != seed->data() + seed->size())
      throw UsageError(fmt::format("--seed expects an unsigned 64-bit integer, got '{}'", *seed));
  }
  options.force_cpu = args.has("--cpu");
  return run_demo(options, std::cout);
}

// ---------------------------------------------------------------------------------------------------------
// The command table: parsing, help and dispatch all read it
// ---------------------------------------------------------------------------------------------------------
struct Command {
  std::string_view name;
  std::string_view summary;      // one line, in the tool's help
  std::string usage;             // after "bfly-gen <name> "
  std::string_view description;  // the paragraph of the command's help
  std::vector<Flag> flags;
  std::size_t max_positionals;
  int (*run)(const Args&);
};

const std::vector<Command>& commands() {
  static const std::string kDrawsHelp =
      fmt::format("draws per distribution (default {} on a GPU, {} on the CPU)", kGpuDraws, kCpuDraws);
  static const std::vector<Command> table = {
      {"generate", "write a self-contained header: one kernel plus its host launch function",
       std::string(kSpecUsage) + " [-o FILE]",
       "Writes the ahead-of-time header of one kernel spec: the generated kernel with bfly's fragments pasted in,\n"
       "and under #ifdef __CUDACC__ an inline host function <kernel_name>_launch(weights, M, ld, out,\n"
       "invalid_rows, seed, iteration, stream) that checks its arguments and computes the grid from M (for\n"
       "lda_z and lda_z_doc: the kernel's arguments, grid from the D documents). Include it in one .cu file of an\n"
       "nvcc build.\n"
       "The same spec always gives the same bytes; an existing FILE is rewritten only when its content changes\n"
       "(atomically: temporary file, then rename).\n"
       "\n"
       "Example: bfly-gen generate --K 1024 --W 32 --type f32 --variant addsub --remnant 8 -o sampler.cuh",
       with_spec_flags({{"--output", "FILE", "where to write the header; '-' or no -o: standard output", "-o"}}), 1,
       run_generate},
      {"show", "print the generated CUDA source of one spec", std::string(kSpecUsage) + std::string(kBaselineUsage) + " [--inline]",
       "Prints the CUDA source that bfly generates for one kernel spec, as NVRTC receives it (bfly's fragments\n"
       "are #included by name), or with --inline the fragments pasted in. The spec comes from flags or from a\n"
       "kernel name. With --baseline (or a name bfly_lda_alg<1|4>_<type>_k<K>) it prints one of the paper's LDA\n"
       "z-step baselines that lda-bench times against bfly's kernels.\n"
       "\n"
       "Examples: bfly-gen show --K 100 --W 16\n"
       "          bfly-gen show bfly_sample_f32_w32_k1024_r8_addsub --inline\n"
       "          bfly-gen show --baseline alg4 --K 71 --type f64",
       with_spec_flags({kBaselineFlag, {"--inline", "", "paste bfly's fragments (Philox, helpers) in place of their #include"}}), 1,
       run_show},
      {"table", "print the butterfly table of one W x W block, computed by the generated build on the CPU",
       "[--W N] [--variant V]",
       "Runs the generated table build of one W x W block on the CPU on symbolic entries and prints the table\n"
       "as the paper's slides write it: one row per line, cells separated by spaces; cell A0:1 is the sum of\n"
       "lane A's weights 0 to 1 (for W = 32, lanes are numbers: 17.0:1 is lane 17's weights 0 to 1). The\n"
       "table comes from the generated code, not from a formula; a wrong entry is an error.\n"
       "\n"
       "Examples: bfly-gen table                      (W = 16, addsub: the paper's Figure 8)\n"
       "          bfly-gen table --W 16 --variant swap (Figure 4)",
       {{"--W", "N", "lanes per group: 4, 8, 16 or 32 (default 16)"},
        {"--variant", "V", "swap (Figure 4) or addsub (Figure 8) (default addsub)"}},
       0, run_table},
      {"inspect", "compile one spec with NVRTC (through the cache) and print its resources",
       std::string(kSpecUsage) + std::string(kBaselineUsage) + " [--arch A]",
       "Compiles one kernel spec through bfly's kernel cache and prints the kernel name, the NVRTC options,\n"
       "registers, spill bytes, local memory per thread, static shared memory per CTA, the cache entry and\n"
       "whether it was a memory hit, a disk hit or compiled now. Without --arch the architecture is read from\n"
       "the GPU; with --arch no GPU is needed. The cache follows BFLY_CACHE_DIR and BFLY_CACHE. --baseline (or a\n"
       "name bfly_lda_alg<1|4>_<type>_k<K>) inspects one of the paper's LDA z-step baselines instead.\n"
       "\n"
       "Examples: bfly-gen inspect --K 1024 --arch sm_90\n"
       "          bfly-gen inspect --baseline alg4 --K 1024 --arch sm_90",
       with_spec_flags({kBaselineFlag, {"--arch", "A", "target: sm_90, compute_90, sm90 or 90 (default: the GPU's)"}}), 1,
       run_inspect},
      {"cache", "list or clear the disk cache of compiled kernels", "list | clear",
       "list: every entry of the cache directory with its size, architecture and resources (damaged entries\n"
       "are marked; they are rebuilt on next use). clear: removes every entry. The directory is\n"
       "BFLY_CACHE_DIR, else $XDG_CACHE_HOME/bfly, else ~/.cache/bfly; BFLY_CACHE=0 turns the disk cache off.",
       {}, 1, run_cache},
      {"demo", "draw from example distributions and print observed vs expected frequencies",
       "[--draws N] [--seed S] [--cpu]",
       "Draws with the kernel of the example spec (W = 32, K = 1024, R = 8, f32, addsub) from a built-in set\n"
       "of distributions (skewed, mostly zeros, one-hot, uniform, 1e-30 next to 1e30, geometric with denormals,\n"
       "and an invalid one), then prints the most likely categories with expected and observed frequencies, a\n"
       "chi-square test and the total variation distance. With a GPU it samples through bfly::rt::Sampler\n"
       "(generated, compiled by NVRTC and cached at run time); without one it says so and runs the same\n"
       "generated source on the CPU (compiled into bfly-gen at build time; bfly/lockstep.hpp, all cores,\n"
       "BFLY_LOCKSTEP_THREADS sets how many). Exit status 1 if a zero-weight category is drawn or an invalid\n"
       "row is not reported.",
       {{"--draws", "N", kDrawsHelp},
        {"--seed", "S", "base seed, an unsigned 64-bit integer (default 2026)"},
        {"--cpu", "", "run on the CPU even when a GPU is there"}},
       0, run_demo_command},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const Command& command : commands())
    if (command.name == name) return &command;
  return nullptr;
}

std::string tool_help() {
  std::string text =
      "usage: bfly-gen <command> [flags]\n"
      "\n"
      "Generates, prints and inspects bfly's butterfly sampling kernels (Steele & Tristan).\n"
      "\n"
      "commands:\n";
  for (const Command& command : commands()) text += fmt::format("  {:<9} {}\n", command.name, command.summary);
  text += fmt::format("  {:<9} {}\n", "help", "print the help of a command: bfly-gen help <command>");
  text += fmt::format("  {:<9} {}\n", "--version", "print the version (bfly-gen X.Y.Z)");
  text +=
      "\n"
      "Run 'bfly-gen <command> --help' for a command's flags. Exit status: 0 success, 1 failure while running,\n"
      "2 bad command line.\n";
  return text;
}

std::string command_help(const Command& command) {
  return fmt::format("usage: bfly-gen {} {}\n\n{}\n\nflags:\n{}", command.name, command.usage, command.description,
                     format_flags(command.flags));
}

int usage_error(std::string_view command, const std::string& message) {
  std::cerr << fmt::format("bfly-gen{}{}: error: {}\nRun 'bfly-gen{}{} --help' for usage.\n",
                           command.empty() ? "" : " ", command, message, command.empty() ? "" : " ", command);
  return 2;
}

int main_impl(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    std::cerr << tool_help();
    return 2;
  }
  const std::string& name = argv.front();
  if (name == "--help" || name == "-h") {
    std::cout << tool_help();
    return 0;
  }
  if (name == "--version") {
    std::cout << fmt::format("bfly-gen {}\n", gen::bfly_version());
    return 0;
  }
  if (name == "help") {
    if (argv.size() == 1) {
      std::cout << tool_help();
      return 0;
    }
    const Command* command = find_command(argv[1]);
    if (command == nullptr) return usage_error("help", fmt::format("unknown command '{}'", argv[1]));
    std::cout << command_help(*command);
    return 0;
  }
  const Command* command = find_command(name);
  if (command == nullptr) {
    std::string names;
    for (const Command& c : commands()) names += fmt::format("{}, ", c.name);
    return usage_error("", fmt::format("unknown command '{}'; commands: {}help", name, names));
  }
  try {
    const Args args(command->name, command->flags, std::vector<std::string>(argv.begin() + 1, argv.end()),
                    command->max_positionals);
    if (args.help()) {
      std::cout << command_help(*command);
      return 0;
    }
    return command->run(args);
  } catch (const UsageError& e) {
    return usage_error(command->name, e.what());
  } catch (const std::exception& e) {
    std::cerr << fmt::format("bfly-gen {}: error: {}\n", command->name, e.what());
    return 1;
  }
}

}  // namespace
}  // namespace bfly::cli

int main(int argc, char** argv) {
  const int status = bfly::cli::main_impl(std::vector<std::string>(argv + 1, argv + argc));
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    std::fprintf(stderr, "bfly-gen: cannot write to standard output: %s\n",
                 errno != 0 ? bfly::describe_errno(errno).c_str() : "write error");
    return 1;
  }
  return status;
}
