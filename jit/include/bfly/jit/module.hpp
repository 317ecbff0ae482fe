// Loading a CompiledKernel into the current CUDA context (Module, Kernel) and launching it.
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/jit/driver.hpp"

#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

namespace bfly::rt {

// A loaded cubin or PTX image, unloaded by the destructor (its context must still exist).
class Module {
 public:
  explicit Module(const CompiledKernel& kernel);  // loads into the current context (see current_context)
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  CUmodule get() const { return module_; }
  CUcontext context() const { return context_; }

 private:
  CUmodule module_ = nullptr;
  CUcontext context_ = nullptr;
};

// One entry point of a loaded module with what its launch needs.
struct Kernel {
  std::shared_ptr<const Module> module;
  CUfunction function = nullptr;
  std::string name;
  std::string family;  // the compiled kernel's (empty for kernels that are not generated ones)
  gen::LaunchGeometry geometry;
  ResourceUsage resources;  // from ptxas for a cubin; from the driver's function attributes for PTX
};

// Loads `compiled` and looks up its entry point, launched with the geometry it was compiled with
// (compiled.geometry, from its Source or its cache entry).
Kernel load(const CompiledKernel& compiled);

// The whole chain for one spec: generate -> cache (memory, disk or NVRTC for the current device) -> load.
Kernel load_kernel(const gen::KernelSpec& spec);

// The kernels one object (a Sampler, an LdaZStep) has loaded, per CUDA context, and its two invalid-item
// counters per context. Not thread-safe: each owner uses it from one thread at a time.
class LoadedKernels {
 public:
  // The kernel of `spec` in the current context, loaded on first use.
  const Kernel& get(const gen::KernelSpec& spec);
  // Two unsigned long long counters in the current context, for a kernel's invalid_rows argument.
  CUdeviceptr counters();

 private:
  std::map<std::pair<CUcontext, std::string>, Kernel> kernels_;
  std::map<CUcontext, DeviceBuffer> counters_;
};

// Sets `counters` to {0, ~0ull} (no invalid item, first one "infinity") on `stream`, before a launch.
void reset_counters(CUdeviceptr counters, CUstream stream);
// Reads them back after the launch (synchronizes `stream`): {count, first item or -1}.
std::pair<long long, long long> read_counters(CUdeviceptr counters, CUstream stream, const std::string& what);

// Launches `kernel` over M rows (sample) or documents (lda_z) on `stream` (null: the legacy default stream);
// `arguments` are the kernel's parameters in order (cuLaunchKernel's kernelParams).
void launch_rows(const Kernel& kernel, long long M, CUstream stream, void** arguments);

}  // namespace bfly::rt
