#include "bfly/jit/driver.hpp"

#include "bfly/error.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <utility>

namespace bfly::rt {
namespace {

Driver load_driver() {
  // The handle is never closed: the resolved function pointers are used for the life of the process.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    throw Error(fmt::format("no CUDA driver found (libcuda.so.1 could not be opened: {}); "
                            "install the NVIDIA driver or run on a machine with a GPU",
                            reason != nullptr ? reason : "unknown reason"));
  }
  const auto resolve = [library](auto& pointer, const char* symbol) {
    void* address = dlsym(library, symbol);
    if (address == nullptr) {
      throw Error(fmt::format("the CUDA driver lacks {} (driver too old for CUDA 12 or later?)", symbol));
    }
    pointer = reinterpret_cast<std::remove_reference_t<decltype(pointer)>>(address);
  };
  Driver d{};
  resolve(d.Init, "cuInit");
  resolve(d.DriverGetVersion, "cuDriverGetVersion");
  resolve(d.GetErrorName, "cuGetErrorName");
  resolve(d.GetErrorString, "cuGetErrorString");
  resolve(d.DeviceGetCount, "cuDeviceGetCount");
  resolve(d.DeviceGet, "cuDeviceGet");
  resolve(d.DeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(d.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(d.CtxGetCurrent, "cuCtxGetCurrent");
  resolve(d.CtxSetCurrent, "cuCtxSetCurrent");
  resolve(d.CtxGetDevice, "cuCtxGetDevice");
  resolve(d.ModuleLoadData, "cuModuleLoadData");
  resolve(d.ModuleUnload, "cuModuleUnload");
  resolve(d.ModuleGetFunction, "cuModuleGetFunction");
  resolve(d.FuncGetAttribute, "cuFuncGetAttribute");
  resolve(d.OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  resolve(d.LaunchKernel, "cuLaunchKernel");
  d.LaunchKernelEx = reinterpret_cast<decltype(d.LaunchKernelEx)>(dlsym(library, "cuLaunchKernelEx"));
  // The _v2 entry points take 64-bit sizes and pointers; <cuda.h> maps the plain names to them.
  resolve(d.MemAlloc, "cuMemAlloc_v2");
  resolve(d.MemFree, "cuMemFree_v2");
  resolve(d.MemcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(d.MemcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(d.MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  resolve(d.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  resolve(d.MemsetD8, "cuMemsetD8_v2");
  resolve(d.StreamSynchronize, "cuStreamSynchronize");
  const CUresult init = d.Init(0);
  if (init == CUDA_ERROR_NO_DEVICE) throw Error("no CUDA device (cuInit reported CUDA_ERROR_NO_DEVICE)");
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.GetErrorName(init, &name);
    throw Error(fmt::format("the CUDA driver could not be initialised: cuInit returned {}",
                            name != nullptr ? name : std::to_string(int(init))));
  }
  return d;
}

}  // namespace

const Driver& driver() {
  // A failed load throws out of the initialiser, so the next call tries again and reports the same reason.
  static const Driver loaded = load_driver();
  return loaded;
}

void check(CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return;
  const Driver& d = driver();
  const char* name = nullptr;
  const char* description = nullptr;
  d.GetErrorName(result, &name);
  d.GetErrorString(result, &description);
  throw Error(fmt::format("{} failed: {} ({})", what, name != nullptr ? name : std::to_string(int(result)),
                          description != nullptr ? description : "no description"));
}

bool gpu_available(std::string* why) {
  try {
    const Driver& d = driver();
    int count = 0;
    check(d.DeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) throw Error("no CUDA device (the driver reports 0 devices)");
    return true;
  } catch (const Error& error) {
    if (why != nullptr) *why = error.what();
    return false;
  }
}

CUcontext current_context() {
  const Driver& d = driver();
  CUcontext context = nullptr;
  check(d.CtxGetCurrent(&context), "cuCtxGetCurrent");
  if (context != nullptr) return context;
  static const CUcontext primary = [&d] {
    int count = 0;
    check(d.DeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) throw Error("no CUDA device (the driver reports 0 devices)");
    CUdevice device = 0;
    check(d.DeviceGet(&device, 0), "cuDeviceGet(0)");
    CUcontext retained = nullptr;
    check(d.DevicePrimaryCtxRetain(&retained, device), "cuDevicePrimaryCtxRetain(device 0)");
    return retained;
  }();
  check(d.CtxSetCurrent(primary), "cuCtxSetCurrent(primary context of device 0)");
  return primary;
}

int current_compute_capability() {
  current_context();
  const Driver& d = driver();
  CUdevice device = 0;
  check(d.CtxGetDevice(&device), "cuCtxGetDevice");
  int major = 0;
  int minor = 0;
  check(d.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device), "cuDeviceGetAttribute");
  check(d.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device), "cuDeviceGetAttribute");
  return major * 10 + minor;
}

double memory_bytes_per_sm_cycle(double memory_khz, double bus_bits, double sms, double sm_khz) {
  return sms > 0 && sm_khz > 0 ? 2 * memory_khz * (bus_bits / 8) / (sms * sm_khz) : 0;
}

double current_memory_bytes_per_sm_cycle() {
  current_context();
  const Driver& d = driver();
  CUdevice device = 0;
  check(d.CtxGetDevice(&device), "cuCtxGetDevice");
  static std::mutex mutex;
  static std::map<CUdevice, double> by_device;
  const std::lock_guard lock(mutex);
  if (const auto known = by_device.find(device); known != by_device.end()) return known->second;
  const auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    return d.DeviceGetAttribute(&value, which, device) == CUDA_SUCCESS ? value : 0;
  };
  const double balance = memory_bytes_per_sm_cycle(attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                                                   attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
                                                   attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                                                   attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  by_device.emplace(device, balance);
  return balance;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  current_context();
  check(driver().MemAlloc(&pointer_, bytes), fmt::format("cuMemAlloc({} bytes)", bytes));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    pointer_ = std::exchange(other.pointer_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != 0) driver().MemFree(pointer_);
}

}  // namespace bfly::rt
