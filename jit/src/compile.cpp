#include "bfly/jit/compile.hpp"

#include "bfly/emit/embedded_templates.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/environment.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <utility>

namespace bfly::rt {
namespace {

void check_nvrtc(nvrtcResult result, std::string_view what) {
  if (result != NVRTC_SUCCESS) throw Error(fmt::format("{} failed: {}", what, nvrtcGetErrorString(result)));
}

// Owns one nvrtcProgram.
class Program {
 public:
  Program(const std::string& text, const std::string& name, const std::vector<gen::EmbeddedFile>& headers) {
    std::vector<std::string> contents;
    std::vector<std::string> names;
    for (const gen::EmbeddedFile& file : headers) {
      contents.emplace_back(file.content);
      names.emplace_back(file.name);
    }
    std::vector<const char*> content_pointers;
    std::vector<const char*> name_pointers;
    for (std::size_t i = 0; i < headers.size(); ++i) {
      content_pointers.push_back(contents[i].c_str());
      name_pointers.push_back(names[i].c_str());
    }
    check_nvrtc(nvrtcCreateProgram(&program_, text.c_str(), name.c_str(), static_cast<int>(headers.size()),
                                   content_pointers.data(), name_pointers.data()),
                "nvrtcCreateProgram");
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { nvrtcDestroyProgram(&program_); }

  // Compiles; returns false when NVRTC rejected the source (the log says why).
  bool compile(const std::vector<std::string>& options) {
    std::vector<const char*> pointers;
    for (const std::string& option : options) pointers.push_back(option.c_str());
    const nvrtcResult result = nvrtcCompileProgram(program_, static_cast<int>(pointers.size()), pointers.data());
    if (result == NVRTC_ERROR_COMPILATION) return false;
    check_nvrtc(result, "nvrtcCompileProgram");
    return true;
  }

  std::string log() const {
    std::size_t size = 0;
    check_nvrtc(nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize");
    std::string text(size, '\0');
    check_nvrtc(nvrtcGetProgramLog(program_, text.data()), "nvrtcGetProgramLog");
    while (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }

  std::string cubin() const {
    std::size_t size = 0;
    check_nvrtc(nvrtcGetCUBINSize(program_, &size), "nvrtcGetCUBINSize");
    std::string bytes(size, '\0');
    check_nvrtc(nvrtcGetCUBIN(program_, bytes.data()), "nvrtcGetCUBIN");
    return bytes;
  }

  std::string ptx() const {
    std::size_t size = 0;
    check_nvrtc(nvrtcGetPTXSize(program_, &size), "nvrtcGetPTXSize");
    std::string text(size, '\0');
    check_nvrtc(nvrtcGetPTX(program_, text.data()), "nvrtcGetPTX");
    return text;  // keeps the terminating NUL, which cuModuleLoadData needs for PTX
  }

 private:
  nvrtcProgram program_ = nullptr;
};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The run of non-space characters right after the first `marker` in `text` for which `accept` holds of what lies
// between the marker and the run; empty when there is none. (Plain scans, not std::regex: GCC 12 warns falsely of
// std::function in <regex> when a unity build puts it beside other files.)
template <typename Accept>
std::string_view word_after(std::string_view text, std::string_view marker, Accept accept) {
  for (auto at = text.find(marker); at != std::string_view::npos; at = text.find(marker, at + 1)) {
    std::string_view rest = text.substr(at + marker.size());
    const std::size_t skipped = accept(rest);
    if (skipped == std::string_view::npos) continue;
    rest.remove_prefix(skipped);
    const std::string_view word = rest.substr(0, rest.find_first_of(" \t\r\n"));
    if (!word.empty()) return word;
  }
  return {};
}

// NVRTC's PTX header names its build: "Compiler Build ID: CL-..." and "... release 13.0, V13.0.88".
std::string_view ptx_build_id(std::string_view ptx) {
  return word_after(ptx, "Compiler Build ID: ", [](std::string_view) { return std::size_t{0}; });
}
std::string_view ptx_release(std::string_view ptx) {
  return word_after(ptx, "release ", [](std::string_view rest) {
    const std::size_t digits = rest.find_first_not_of("0123456789.");
    if (digits == 0 || digits == std::string_view::npos || !rest.substr(digits).starts_with(", V"))
      return std::string_view::npos;
    return digits + 2;  // the word starts at the V
  });
}

// A located line of NVRTC's log, "file(line): [catastrophic ]error: message", split into its parts; false for any
// other line. The file is everything before the last "(digits): " that is followed by the error.
struct LocatedError {
  std::string_view file;
  int line = 0;
  std::string_view message;
};
bool parse_located_error(std::string_view log_line, LocatedError& out) {
  for (auto open = log_line.rfind('('); open != std::string_view::npos && open > 0;
       open = log_line.rfind('(', open - 1)) {
    const std::string_view after = log_line.substr(open + 1);
    const std::size_t digits = after.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos || !after.substr(digits).starts_with("): ")) continue;
    std::string_view rest = after.substr(digits + 3);
    if (rest.starts_with("catastrophic ")) rest.remove_prefix(std::string_view("catastrophic ").size());
    if (!rest.starts_with("error: ")) continue;
    out.file = log_line.substr(0, open);
    out.line = std::stoi(std::string(after.substr(0, digits)));
    out.message = rest.substr(std::string_view("error: ").size());
    return true;
  }
  return false;
}

// The integer that ends right before `suffix` in `line` ("400 bytes stack frame" -> 400); 0 when absent.
int number_before(std::string_view line, std::string_view suffix) {
  const auto at = line.find(suffix);
  if (at == std::string_view::npos) return 0;
  auto begin = at;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  int value = 0;
  std::from_chars(line.data() + begin, line.data() + at, value);
  return value;
}

std::string program_name(const gen::Source& source) { return source.kernel_name + ".cu"; }

}  // namespace

std::string Arch::option() const { return fmt::format("{}_{}", cubin ? "sm" : "compute", cc); }
std::string Arch::tag() const { return fmt::format("{}{}", cubin ? "sm" : "compute", cc); }

const std::vector<int>& nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    check_nvrtc(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
    std::vector<int> list(count);
    check_nvrtc(nvrtcGetSupportedArchs(list.data()), "nvrtcGetSupportedArchs");
    std::sort(list.begin(), list.end());
    return list;
  }();
  return archs;
}

Arch arch_for_device(int cc) {
  const std::vector<int>& supported = nvrtc_supported_archs();
  if (std::find(supported.begin(), supported.end(), cc) != supported.end()) return Arch{cc, true};
  // No SASS for this exact device: a cubin for another minor version might not load, while PTX for the
  // highest architecture below it is JIT-compiled by the driver for any newer device.
  const auto below = std::upper_bound(supported.begin(), supported.end(), cc);
  if (below == supported.begin()) {
    throw Error(fmt::format("the device (sm_{}) is older than every architecture this NVRTC supports ({})", cc,
                            fmt::join(supported, ", ")));
  }
  return Arch{*std::prev(below), false};
}

Arch parse_arch(std::string_view text) {
  Arch arch;
  std::string_view digits = text;
  if (digits.starts_with("compute_")) {
    arch.cubin = false;
    digits.remove_prefix(8);
  } else if (digits.starts_with("sm_")) {
    digits.remove_prefix(3);
  } else if (digits.starts_with("sm")) {
    digits.remove_prefix(2);
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), arch.cc);
  const std::vector<int>& supported = nvrtc_supported_archs();
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    throw Error(fmt::format("architecture {:?} is not understood; write it as sm_90 (cubin) or compute_90 (PTX)",
                            text));
  }
  if (std::find(supported.begin(), supported.end(), arch.cc) == supported.end()) {
    throw Error(fmt::format("architecture {} is not supported by NVRTC {}.{}; supported: {}", text,
                            nvrtc_version().major, nvrtc_version().minor, fmt::join(supported, ", ")));
  }
  return arch;
}

Arch current_device_arch() { return arch_for_device(current_compute_capability()); }

const NvrtcVersion& nvrtc_version() {
  static const NvrtcVersion version = [] {
    NvrtcVersion v;
    check_nvrtc(nvrtcVersion(&v.major, &v.minor), "nvrtcVersion");
    // The PTX header names the exact build ("Compiler Build ID: CL-..." and "... V13.0.88"), which
    // nvrtcVersion does not: two builds of one release may emit different code.
    Program probe("extern \"C\" __global__ void bfly_version_probe() {}", "bfly_version_probe.cu", {});
    const std::string arch = fmt::format("-arch=compute_{}", nvrtc_supported_archs().front());
    if (!probe.compile({arch})) throw Error("NVRTC cannot compile an empty kernel: " + probe.log());
    const std::string ptx = probe.ptx();
    std::vector<std::string_view> parts;
    if (const std::string_view id = ptx_build_id(ptx); !id.empty()) parts.push_back(id);
    if (const std::string_view release = ptx_release(ptx); !release.empty()) parts.push_back(release);
    v.build = parts.empty() ? "unknown" : fmt::format("{}", fmt::join(parts, " "));
    return v;
  }();
  return version;
}

CompileOptions default_compile_options(Arch arch) {
  return CompileOptions{arch, environment().compile_with_debug};
}

std::vector<std::string> nvrtc_options(const CompileOptions& options) {
  std::vector<std::string> list = {
      "-arch=" + options.arch.option(),
      "-std=c++17",
      "-default-device",
      // No fused multiply-add contraction: the kernel then rounds exactly as its CPU execution does, which the
      // draw-for-draw tests rely on; the sampler is bound by memory, not by arithmetic.
      "--fmad=false",
  };
  // ptxas' -v report gives registers, spills, stack frame and shared memory per kernel; PTX skips ptxas.
  if (options.arch.cubin) list.emplace_back("--ptxas-options=-v");
  if (options.line_info) list.emplace_back("-lineinfo");
  return list;
}

ResourceUsage parse_ptxas_report(std::string_view log, std::string_view kernel_name) {
  // NVRTC 13 writes, per entry function:
  //   ptxas info    : Function properties for <kernel>
  //   ptxas         .     400 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 32 registers, used 1 barriers, 400 bytes cumulative stack size, 256 bytes smem
  ResourceUsage usage;
  const std::vector<std::string_view> lines = split_lines(log);
  const std::string header = fmt::format("Function properties for {}", kernel_name);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (!line.ends_with(header)) continue;
    for (std::size_t j = i + 1; j < lines.size(); ++j) {
      const std::string_view next = lines[j];
      if (next.find("Compiling entry function") != std::string_view::npos) break;
      if (next.find("bytes stack frame") != std::string_view::npos) {
        usage.local_bytes = number_before(next, " bytes stack frame");
        usage.spill_store_bytes = number_before(next, " bytes spill stores");
        usage.spill_load_bytes = number_before(next, " bytes spill loads");
      }
      if (next.find("Used ") != std::string_view::npos && next.find(" registers") != std::string_view::npos) {
        usage.registers = number_before(next, " registers");
        usage.static_shared_bytes = number_before(next, " bytes smem");
        usage.known = true;
        break;
      }
    }
    break;
  }
  return usage;
}

CompiledKernel compile(const gen::Source& source, const CompileOptions& options) {
  CompiledKernel result;
  result.kernel_name = source.kernel_name;
  result.family = source.family;
  result.geometry = source.geometry;
  result.arch = options.arch;
  result.options = nvrtc_options(options);
  Program program(source.text, program_name(source), gen::embedded_templates());
  const bool compiled = program.compile(result.options);
  result.log = program.log();
  if (!compiled) {
    // The one place that decides about the dump, so no caller has to.
    if (environment().dump_source_on_error) {
      const std::string dump = numbered_source(source, result.options);
      std::fprintf(stderr, "%s\n%s\n", dump.c_str(), result.log.c_str());
    }
    throw CompileError(source, result.options, result.log);
  }
  result.binary = options.arch.cubin ? program.cubin() : program.ptx();
  if (options.arch.cubin) result.resources = parse_ptxas_report(result.log, result.kernel_name);
  return result;
}

std::string numbered_source(const gen::Source& source, const std::vector<std::string>& options) {
  const std::vector<std::string_view> lines = split_lines(source.text);
  const int width = static_cast<int>(std::to_string(lines.size()).size());
  std::string text = fmt::format("// bfly kernel {} ({})\n// NVRTC options: {}\n", source.kernel_name,
                                 gen::describe(source), fmt::join(options, " "));
  for (std::size_t i = 0; i < lines.size(); ++i) text += fmt::format("{:0{}} {}\n", i + 1, width, lines[i]);
  return text;
}

std::string describe_compile_failure(const gen::Source& source, const std::vector<std::string>& options,
                                     std::string_view log) {
  std::string message = fmt::format("NVRTC could not compile {} ({}) with options: {}\n", source.kernel_name,
                                    gen::describe(source), fmt::join(options, " "));
  // Every file the log can name: the generated source and the embedded fragments it includes.
  std::map<std::string, std::string_view, std::less<>> files = {{program_name(source), source.text}};
  for (const gen::EmbeddedFile& file : gen::embedded_templates()) files.emplace(file.name, file.content);

  constexpr int kContext = 2;
  constexpr int kMaxQuotes = 5;
  int quotes = 0;
  for (const std::string_view log_line : split_lines(log)) {
    LocatedError located;
    if (!parse_located_error(log_line, located)) continue;
    const std::string_view file = located.file;  // `files` compares transparently: no copy
    const int line = located.line;
    if (quotes == kMaxQuotes) {
      message += "(further errors in the log below)\n";
      break;
    }
    ++quotes;
    message += fmt::format("\n{}:{}: error: {}\n", file, line, located.message);
    const auto found = files.find(file);
    if (found == files.end()) continue;
    const std::vector<std::string_view> lines = split_lines(found->second);
    if (line < 1 || line > static_cast<int>(lines.size())) continue;
    // The paper step this line belongs to: the nearest comment above it that names an algorithm.
    for (int i = line - 1; i >= 0; --i) {
      const std::string_view text = trim(lines[i]);
      if (text.starts_with("//") && text.find("Algorithm") != std::string_view::npos) {
        message += fmt::format("  in step: {}\n", text);
        break;
      }
    }
    const int first = std::max(1, line - kContext);
    const int last = std::min(static_cast<int>(lines.size()), line + kContext);
    for (int i = first; i <= last; ++i) {
      message += fmt::format("{} {:5} | {}\n", i == line ? '>' : ' ', i, lines[i - 1]);
    }
  }
  message += fmt::format("\nNVRTC log:\n{}", log);
  if (!environment().dump_source_on_error) {
    message += "Set BFLY_DUMP_SOURCE_ON_ERROR=1 to print the whole numbered source to stderr.\n";
  }
  return message;
}

CompileError::CompileError(const gen::Source& source, std::vector<std::string> options, std::string log)
    : Error(describe_compile_failure(source, options, log)),
      kernel_name_(source.kernel_name),
      description_(gen::describe(source)),
      options_(std::move(options)),
      log_(std::move(log)) {}

}  // namespace bfly::rt
