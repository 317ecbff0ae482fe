// The CUDA driver API, opened with dlopen on first use, so bfly binaries start on machines without a driver;
// plus the context bfly runs in and a device buffer.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace bfly::rt {

// Function pointers into libcuda.so.1 (types from <cuda.h>; versioned symbols resolved by their _v2 names).
struct Driver {
  decltype(&::cuInit) Init;
  decltype(&::cuDriverGetVersion) DriverGetVersion;
  decltype(&::cuGetErrorName) GetErrorName;
  decltype(&::cuGetErrorString) GetErrorString;
  decltype(&::cuDeviceGetCount) DeviceGetCount;
  decltype(&::cuDeviceGet) DeviceGet;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute;
  decltype(&::cuDevicePrimaryCtxRetain) DevicePrimaryCtxRetain;
  decltype(&::cuCtxGetCurrent) CtxGetCurrent;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent;
  decltype(&::cuCtxGetDevice) CtxGetDevice;
  decltype(&::cuModuleLoadData) ModuleLoadData;
  decltype(&::cuModuleUnload) ModuleUnload;
  decltype(&::cuModuleGetFunction) ModuleGetFunction;
  decltype(&::cuFuncGetAttribute) FuncGetAttribute;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) OccupancyMaxActiveBlocksPerMultiprocessor;
  decltype(&::cuLaunchKernel) LaunchKernel;
  // Null where the driver lacks it (before CUDA 12.0): launches that would overlap the previous one do not.
  decltype(&::cuLaunchKernelEx) LaunchKernelEx;
  decltype(&::cuMemAlloc) MemAlloc;
  decltype(&::cuMemFree) MemFree;
  decltype(&::cuMemcpyHtoD) MemcpyHtoD;
  decltype(&::cuMemcpyDtoH) MemcpyDtoH;
  decltype(&::cuMemcpyHtoDAsync) MemcpyHtoDAsync;
  decltype(&::cuMemcpyDtoHAsync) MemcpyDtoHAsync;
  decltype(&::cuMemsetD8) MemsetD8;
  decltype(&::cuStreamSynchronize) StreamSynchronize;
};

// The driver, loaded and initialised (cuInit) once per process. Throws bfly::Error
// "no CUDA driver found (libcuda.so.1 could not be opened: ...)" when it cannot be loaded.
const Driver& driver();

// Throws bfly::Error "<what> failed: CUDA_ERROR_... (<description>)" unless `result` is CUDA_SUCCESS.
void check(CUresult result, std::string_view what);

// True when a driver and at least one device can be used; otherwise false with the reason in *why.
bool gpu_available(std::string* why = nullptr);

// The context bfly launches in: the calling thread's current context when it has one, else the primary
// context of device 0, made current (retained once for the process). Throws "no CUDA device" when none.
CUcontext current_context();

// Compute capability of the current context's device as major * 10 + minor (90 for sm_90).
int current_compute_capability();

// How fast the current context's device's memory is against its SMs: the bytes its memory reads at peak per SM and
// SM clock cycle, 2 x memory clock x bus width / (SMs x SM clock), from the device's attributes (18.4 on the H200
// measured; 12.8 for an H100 SXM by its data sheet); 0 when the driver does not report them. Read once per device.
double current_memory_bytes_per_sm_cycle();
// The same from the attributes: memory clock (kHz), bus width (bits), SMs and SM clock (kHz); 0 without SMs or clock.
// Two transfers per memory clock, the rate the driver reports for HBM and GDDR alike (an H100 SXM's 2619 MHz over
// 5120 bits is its 3.35 TB/s).
double memory_bytes_per_sm_cycle(double memory_khz, double bus_bits, double sms, double sm_khz);

// Device memory in the current context, freed by the destructor.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr get() const { return pointer_; }
  std::size_t size() const { return bytes_; }

 private:
  CUdeviceptr pointer_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace bfly::rt
