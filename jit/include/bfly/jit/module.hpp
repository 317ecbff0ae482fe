// Loading a CompiledKernel into the current CUDA context (Module, Kernel) and launching it.
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/spec/kernel_args.hpp"
#include "bfly/jit/driver.hpp"

#include <cuda.h>

#include <initializer_list>
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
  // CTAs of the kernel one SM of the context's device holds at once (the driver's occupancy at the geometry's block
  // size), and the device's SMs: a wave of the grid is their product. 0 for a kernel without a launch geometry.
  int ctas_per_sm = 0;
  int sms = 0;
  // The device can start this kernel's CTAs while the previous launch on the stream still runs, when it is launched
  // to overlap it (programmatic dependent launch: sm_90 on, and a driver with cuLaunchKernelEx).
  bool can_overlap = false;
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

  // Launches the kernel of `spec` (loaded on first use) with `args`. With `count_invalid`, the family's counters
  // argument first points at counters() (reset on `stream`), and the call waits for the stream and returns
  // {invalid items, first invalid item or -1}; without, it only enqueues the launch and returns {0, -1}.
  std::pair<long long, long long> launch(const gen::KernelSpec& spec, gen::PackedArgs& args, bool count_invalid,
                                         CUstream stream);
  // The same for several launches in turn on `stream` (each spec with its args), one set of counters for them all.
  // A launch with `overlaps_previous` may start while the one before it in the list ends, where the device can
  // (Kernel::can_overlap): it must draw other rows than that one, and its kernel must end after it (sample_split's
  // last CTA waits for the previous launch, docs/DESIGN.md section 16).
  struct Launch {
    const gen::KernelSpec* spec;
    gen::PackedArgs* args;
    bool overlaps_previous = false;
  };
  std::pair<long long, long long> launch(std::initializer_list<Launch> launches, bool count_invalid, CUstream stream);

 private:
  std::map<std::pair<CUcontext, std::string>, Kernel> kernels_;
  std::map<CUcontext, DeviceBuffer> counters_;
};

// Sets `counters` to {0, ~0ull} (no invalid item, first one "infinity") on `stream`, before a launch.
void reset_counters(CUdeviceptr counters, CUstream stream);
// Reads them back after the launch (synchronizes `stream`): {count, first item or -1}.
std::pair<long long, long long> read_counters(CUdeviceptr counters, CUstream stream, const std::string& what);

// The one launch path of the runtime. `args` were packed (and checked) for the kernel's family; the grid covers
// args.items() with the kernel's geometry (no launch for 0 items), on `stream` (null: the legacy default stream).
// With `overlap_previous` where the kernel can_overlap, the launch may start while the previous one on the stream
// ends (programmatic stream serialization); elsewhere the flag changes nothing.
void launch(const Kernel& kernel, gen::PackedArgs& args, CUstream stream, bool overlap_previous = false);

// A grid and CTA shape, for kernels of hand-written modules (the LDA iteration's).
struct LaunchShape {
  long long grid_x = 1;
  unsigned grid_y = 1;
  unsigned block_x = 1;
  unsigned block_y = 1;
  unsigned shared_bytes = 0;  // dynamic shared memory
  bool overlap_previous = false;  // launched with programmatic stream serialization (the caller checked the device)
};
// Launches `function` (named `name` in messages) with `shape` and the packed arguments.
void launch(CUfunction function, std::string_view name, const LaunchShape& shape, gen::PackedArgs& args,
            CUstream stream);

}  // namespace bfly::rt
