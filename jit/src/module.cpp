#include "bfly/jit/module.hpp"

#include "bfly/jit/cache.hpp"
#include "bfly/jit/driver.hpp"

#include <fmt/format.h>

#include <climits>
#include <vector>

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
  if (kernel.geometry.threads_per_cta > 0) {
    CUdevice device = 0;
    check(d.OccupancyMaxActiveBlocksPerMultiprocessor(&kernel.ctas_per_sm, kernel.function,
                                                      kernel.geometry.threads_per_cta, 0),
          fmt::format("cuOccupancyMaxActiveBlocksPerMultiprocessor({})", kernel.name));
    check(d.CtxGetDevice(&device), "cuCtxGetDevice");
    check(d.DeviceGetAttribute(&kernel.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
          "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  }
  kernel.can_overlap = d.LaunchKernelEx != nullptr && current_compute_capability() >= 90;
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

std::pair<long long, long long> LoadedKernels::launch(const gen::KernelSpec& spec, gen::PackedArgs& args,
                                                     bool count_invalid, CUstream stream) {
  return launch({Launch{&spec, &args}}, count_invalid, stream);
}

std::pair<long long, long long> LoadedKernels::launch(std::initializer_list<Launch> launches, bool count_invalid,
                                                     CUstream stream) {
  std::vector<const Kernel*> kernels;  // all loaded before anything is enqueued
  for (const Launch& l : launches) kernels.push_back(&get(*l.spec));
  CUdeviceptr invalid = 0;
  if (count_invalid) {
    invalid = counters();
    reset_counters(invalid, stream);
    for (const Launch& l : launches)
      l.args->set(l.args->family().arg(gen::ArgRole::counters).name, reinterpret_cast<void*>(invalid));
  }
  std::size_t i = 0;
  for (const Launch& l : launches) {
    rt::launch(*kernels[i], *l.args, stream, i > 0 && l.overlaps_previous);
    ++i;
  }
  if (!count_invalid) return {0, -1};
  std::string names;  // what the wait names if it fails
  i = 0;
  for (const Launch& l : launches) {
    names += fmt::format("{}the {} kernel {}", i == 0 ? "" : " and ", l.args->family().name, kernels[i]->name);
    ++i;
  }
  return read_counters(invalid, stream, names);
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

void launch(CUfunction function, std::string_view name, const LaunchShape& shape, gen::PackedArgs& args,
            CUstream stream) {
  if (shape.grid_x < 1 || shape.grid_x > INT_MAX) {
    throw Error(fmt::format("{}: a grid of {} CTAs of {} threads is not launchable (1 .. {}); split the work", name,
                            shape.grid_x, shape.block_x * shape.block_y, INT_MAX));
  }
  if (shape.overlap_previous) {
    CUlaunchAttribute overlap{};
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned>(shape.grid_x);
    config.gridDimY = shape.grid_y;
    config.gridDimZ = 1;
    config.blockDimX = shape.block_x;
    config.blockDimY = shape.block_y;
    config.blockDimZ = 1;
    config.sharedMemBytes = shape.shared_bytes;
    config.hStream = stream;
    config.attrs = &overlap;
    config.numAttrs = 1;
    check(driver().LaunchKernelEx(&config, function, args.data(), nullptr),
          fmt::format("cuLaunchKernelEx({}, {} x {} CTAs of {} x {} threads, overlapping the previous launch)", name,
                      shape.grid_x, shape.grid_y, shape.block_x, shape.block_y));
    return;
  }
  check(driver().LaunchKernel(function, static_cast<unsigned>(shape.grid_x), shape.grid_y, 1, shape.block_x,
                              shape.block_y, 1, shape.shared_bytes, stream, args.data(), nullptr),
        fmt::format("cuLaunchKernel({}, {} x {} CTAs of {} x {} threads)", name, shape.grid_x, shape.grid_y,
                    shape.block_x, shape.block_y));
}

void launch(const Kernel& kernel, gen::PackedArgs& args, CUstream stream, bool overlap_previous) {
  const gen::LaunchGeometry& g = kernel.geometry;
  if (kernel.family.empty() || g.threads_per_cta <= 0 || g.rows_per_cta <= 0)
    throw Error(fmt::format("{} is not a kernel of a family (no launch geometry); launch it with an explicit shape",
                            kernel.name));
  if (kernel.family != args.family().name)
    throw Error(fmt::format("{}: the arguments were packed for the {} family, the kernel is of the {} family",
                            kernel.name, args.family().name, kernel.family));
  const long long items = args.items();
  if (items == 0) return;
  LaunchShape shape;
  shape.grid_x = g.grid_for_rows(items);
  shape.block_x = static_cast<unsigned>(g.threads_per_cta);
  shape.overlap_previous = overlap_previous && kernel.can_overlap;
  if (shape.grid_x > INT_MAX) {
    throw Error(fmt::format("{} = {} {}s need {} CTAs of {} threads, more than a grid holds ({}); split the batch",
                            args.family().arg(gen::ArgRole::items).name, items, args.family().item, shape.grid_x,
                            g.threads_per_cta, INT_MAX));
  }
  launch(kernel.function, kernel.name, shape, args, stream);
}

}  // namespace bfly::rt
