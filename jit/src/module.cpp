#include "bfly/jit/module.hpp"

#include "bfly/jit/cache.hpp"
#include "bfly/jit/driver.hpp"

#include <fmt/format.h>

#include <climits>

namespace bfly::rt {

Module::Module(const CompiledKernel& kernel) : context_(current_context()) {
  check(driver().ModuleLoadData(&module_, kernel.binary.data()),
        fmt::format("cuModuleLoadData({} for {})", kernel.kernel_name, kernel.arch.option()));
}

Module::~Module() {
  if (module_ != nullptr) driver().ModuleUnload(module_);
}

Kernel load(const CompiledKernel& compiled) {
  const Driver& d = driver();
  Kernel kernel;
  kernel.module = std::make_shared<const Module>(compiled);
  kernel.name = compiled.kernel_name;
  kernel.family = compiled.family;
  kernel.geometry = compiled.geometry;
  check(d.ModuleGetFunction(&kernel.function, kernel.module->get(), kernel.name.c_str()),
        fmt::format("cuModuleGetFunction({})", kernel.name));
  kernel.resources = compiled.resources;
  if (!kernel.resources.known) {
    // PTX: the driver compiled it at load time and knows what ptxas would have reported (but not the spills).
    ResourceUsage& r = kernel.resources;
    check(d.FuncGetAttribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel.function), "cuFuncGetAttribute");
    check(d.FuncGetAttribute(&r.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, kernel.function),
          "cuFuncGetAttribute");
    check(d.FuncGetAttribute(&r.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, kernel.function),
          "cuFuncGetAttribute");
    r.known = true;
  }
  return kernel;
}

Kernel load_kernel(const gen::KernelSpec& spec) {
  const CacheLookup lookup = default_cache().get(spec, default_compile_options(current_device_arch()));
  return load(*lookup.kernel);
}

const Kernel& LoadedKernels::get(const gen::KernelSpec& spec) {
  auto [entry, inserted] = kernels_.try_emplace({current_context(), gen::kernel_name(spec)});
  if (inserted) {
    try {
      entry->second = load_kernel(spec);
    } catch (...) {
      kernels_.erase(entry);
      throw;
    }
  }
  return entry->second;
}

namespace {
// The counters' preset: no invalid item yet, first invalid item "infinity" (lowered by atomicMin).
constexpr unsigned long long kCountersPreset[2] = {0, ~0ull};
}  // namespace

CUdeviceptr LoadedKernels::counters() {
  auto [entry, inserted] = counters_.try_emplace(current_context());
  if (inserted) {
    try {
      entry->second = DeviceBuffer(sizeof(kCountersPreset));
    } catch (...) {
      counters_.erase(entry);
      throw;
    }
  }
  return entry->second.get();
}

void reset_counters(CUdeviceptr counters, CUstream stream) {
  check(driver().MemcpyHtoDAsync(counters, kCountersPreset, sizeof(kCountersPreset), stream),
        "cuMemcpyHtoDAsync(invalid-item counters)");
}

std::pair<long long, long long> read_counters(CUdeviceptr counters, CUstream stream, const std::string& what) {
  unsigned long long result[2] = {0, 0};
  check(driver().MemcpyDtoHAsync(result, counters, sizeof(result), stream), "cuMemcpyDtoHAsync(invalid-item counters)");
  check(driver().StreamSynchronize(stream), what);
  return {static_cast<long long>(result[0]), result[0] == 0 ? -1ll : static_cast<long long>(result[1])};
}

void launch_rows(const Kernel& kernel, long long M, CUstream stream, void** arguments) {
  const long long grid = kernel.geometry.grid_for_rows(M);
  if (grid > INT_MAX) {
    throw Error(fmt::format("M = {} rows need {} CTAs of {} threads, more than a grid holds ({}); "
                            "split the batch",
                            M, grid, kernel.geometry.threads_per_cta, INT_MAX));
  }
  check(driver().LaunchKernel(kernel.function, static_cast<unsigned>(grid), 1, 1,
                              static_cast<unsigned>(kernel.geometry.threads_per_cta), 1, 1, 0, stream, arguments,
                              nullptr),
        fmt::format("cuLaunchKernel({}, {} CTAs of {} threads)", kernel.name, grid,
                    kernel.geometry.threads_per_cta));
}

}  // namespace bfly::rt
