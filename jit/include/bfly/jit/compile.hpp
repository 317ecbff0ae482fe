// NVRTC compilation: Source -> CompiledKernel (binary, log, options, registers and spills), with the target
// architecture, the one option list, and CompileError, which quotes the generated lines NVRTC complains about.
#pragma once

#include "bfly/error.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/spec/kernel_family.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace bfly::rt {

// A compilation target: SASS for one architecture (cubin, `sm_90`), or PTX (`compute_90`) that the driver
// compiles for the device at load time.
struct Arch {
  int cc = 0;          // compute capability, major * 10 + minor
  bool cubin = true;   // false: PTX

  std::string option() const;  // "sm_90" or "compute_90", as in -arch=
  std::string tag() const;     // "sm90" or "compute90", as in cache entry names
  friend bool operator==(const Arch&, const Arch&) = default;
};

// The architectures this NVRTC can target, ascending (asked from NVRTC, not a hand table).
const std::vector<int>& nvrtc_supported_archs();

// The target for a device of compute capability `cc`: cubin for it when NVRTC supports it exactly; PTX for the
// highest supported architecture below it otherwise (a device newer than the toolkit, whose driver JIT-compiles
// the PTX). Throws when the device is older than every supported architecture.
Arch arch_for_device(int cc);

// Parses "sm_90", "compute_90", "sm90" or "90" (= sm_90); throws bfly::Error for an unknown or unsupported one.
Arch parse_arch(std::string_view text);

// The target for the current device (needs a GPU).
Arch current_device_arch();

// NVRTC's version and build, learned once per process by compiling a tiny program (its PTX names the build).
struct NvrtcVersion {
  int major = 0;
  int minor = 0;
  std::string build;  // e.g. "CL-36424714 V13.0.88"
};
const NvrtcVersion& nvrtc_version();

// Typed compile settings; nvrtc_options() is the one place that turns them into NVRTC's option strings.
struct CompileOptions {
  Arch arch;
  bool line_info = false;  // -lineinfo (BFLY_COMPILE_WITH_DEBUG=1)
};

// Options for `arch` with the rest taken from the environment (BFLY_COMPILE_WITH_DEBUG).
CompileOptions default_compile_options(Arch arch);

std::vector<std::string> nvrtc_options(const CompileOptions& options);

// Per-thread resources of one compiled kernel, read from ptxas' -v report. `known` is false for PTX, which
// ptxas has not seen yet.
struct ResourceUsage {
  bool known = false;
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int local_bytes = 0;          // stack frame per thread
  int static_shared_bytes = 0;  // per CTA
  friend bool operator==(const ResourceUsage&, const ResourceUsage&) = default;
};

// Reads the "Function properties for <kernel>" block of a ptxas -v log; `known` false when it is absent.
ResourceUsage parse_ptxas_report(std::string_view log, std::string_view kernel_name);

// The result of compiling one Source: everything needed to load and launch it and to say how it was produced.
// The family and geometry are the Source's, kept with the binary (and in its cache entry), so loading a kernel
// never has to recover its spec from its name.
struct CompiledKernel {
  std::string kernel_name;
  std::string family;            // the kernel family's name; empty for kernels that are not generated ones
  gen::LaunchGeometry geometry;  // how the kernel must be launched; default for kernels that are not generated ones
  Arch arch;
  std::vector<std::string> options;
  std::string log;     // NVRTC's log (the ptxas report for a cubin)
  std::string binary;  // cubin, or PTX text when !arch.cubin
  ResourceUsage resources;
};

// Compiles `source` with NVRTC, passing bfly's embedded fragments as named headers. Throws CompileError.
CompiledKernel compile(const gen::Source& source, const CompileOptions& options);

// NVRTC rejected a generated kernel. what() quotes the lines the log names (two lines of context, the paper
// step they belong to); with BFLY_DUMP_SOURCE_ON_ERROR=1 the numbered source is also printed to stderr.
class CompileError : public Error {
 public:
  CompileError(const gen::Source& source, std::vector<std::string> options, std::string log);

  const std::string& kernel_name() const { return kernel_name_; }
  const std::string& description() const { return description_; }  // gen::describe(source)
  const std::vector<std::string>& options() const { return options_; }
  const std::string& log() const { return log_; }

 private:
  std::string kernel_name_;
  std::string description_;
  std::vector<std::string> options_;
  std::string log_;
};

// The message of a CompileError (exposed for tests and for `bfly-gen`).
std::string describe_compile_failure(const gen::Source& source, const std::vector<std::string>& options,
                                     std::string_view log);

// The source with zero-padded line numbers, kernel name and options first (the BFLY_DUMP_SOURCE_ON_ERROR dump).
std::string numbered_source(const gen::Source& source, const std::vector<std::string>& options);

}  // namespace bfly::rt
