// The CUDA devices of the Python package: each device's primary context (the one PyTorch, CuPy and JAX use) and a
// scope that makes it current. bfly launches in the current context, so a launch for an array on device d runs
// inside ContextScope(d), whatever device the caller's framework has made current.
#pragma once

#include <cuda.h>

// The primary context of CUDA device `device`, retained once for the process. Throws bfly::Error naming the device
// when it does not exist.
CUcontext primary_context(int device);

// Makes `device`'s primary context current for its lifetime, then restores the thread's previous one.
class ContextScope {
 public:
  explicit ContextScope(int device);
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  ~ContextScope();

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};
