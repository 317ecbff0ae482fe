#include "device.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"

#include <fmt/format.h>

#include <mutex>
#include <vector>

CUcontext primary_context(int device) {
  // Looked up on every launch: a thread's last answer is kept, so the common case takes no lock.
  thread_local int last_device = -1;
  thread_local CUcontext last_context = nullptr;
  if (device == last_device) return last_context;
  static std::mutex mutex;
  static std::vector<CUcontext> contexts;  // by device; null until retained
  std::lock_guard lock(mutex);
  if (device < 0 || static_cast<std::size_t>(device) >= contexts.size() || contexts[device] == nullptr) {
    const bfly::rt::Driver& d = bfly::rt::driver();
    int count = 0;
    bfly::rt::check(d.DeviceGetCount(&count), "cuDeviceGetCount");
    if (device < 0 || device >= count)
      throw bfly::Error(fmt::format("CUDA device {} does not exist ({} device(s))", device, count));
    CUdevice handle = 0;
    bfly::rt::check(d.DeviceGet(&handle, device), "cuDeviceGet");
    CUcontext context = nullptr;
    bfly::rt::check(d.DevicePrimaryCtxRetain(&context, handle), "cuDevicePrimaryCtxRetain");
    if (contexts.size() <= static_cast<std::size_t>(device)) contexts.resize(static_cast<std::size_t>(device) + 1);
    contexts[device] = context;
  }
  last_device = device;
  last_context = contexts[device];
  return last_context;
}

ContextScope::ContextScope(int device) {
  const bfly::rt::Driver& d = bfly::rt::driver();
  bfly::rt::check(d.CtxGetCurrent(&previous_), "cuCtxGetCurrent");
  const CUcontext context = primary_context(device);
  if (context != previous_) {
    bfly::rt::check(d.CtxSetCurrent(context), "cuCtxSetCurrent");
    switched_ = true;
  }
}

ContextScope::~ContextScope() {
  if (switched_) bfly::rt::driver().CtxSetCurrent(previous_);
}
