// Loading a CompiledKernel into the current CUDA context (Module, Kernel) and launching it.
#pragma once

#include "bfly/gen/generate.hpp"
#include "bfly/rt/compile.hpp"

#include <cuda.h>

#include <memory>

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
  gen::KernelSpec spec;
  gen::LaunchGeometry geometry;
  ResourceUsage resources;  // from ptxas for a cubin; from the driver's function attributes for PTX
};

// Loads `compiled` and looks up its entry point.
Kernel load(const CompiledKernel& compiled);

// The whole chain for one spec: generate -> cache (memory, disk or NVRTC for the current device) -> load.
Kernel load_kernel(const gen::KernelSpec& spec);

// Launches `kernel` of operation `sample` over M rows on `stream` (null: the legacy default stream);
// `arguments` are the kernel's parameters in order (cuLaunchKernel's kernelParams).
void launch_rows(const Kernel& kernel, long long M, CUstream stream, void** arguments);

}  // namespace bfly::rt
