// Internal to bfly_lda_gpu: copies between the host and device buffers, shared by the one-GPU engine and the ranks of
// a data-parallel run. Empty copies are skipped; buffers are never smaller than 8 bytes (a zero-sized corpus part
// still has a device address).
#pragma once

#include "bfly/jit/driver.hpp"

#include <algorithm>
#include <cstddef>

namespace bfly::lda::detail {

template <typename V>
void upload(CUdeviceptr to, const V* data, std::size_t count) {
  if (count == 0) return;
  rt::check(rt::driver().MemcpyHtoD(to, data, count * sizeof(V)), "cuMemcpyHtoD");
}

template <typename V>
void download(V* data, CUdeviceptr from, std::size_t count) {
  if (count == 0) return;
  rt::check(rt::driver().MemcpyDtoH(data, from, count * sizeof(V)), "cuMemcpyDtoH");
}

inline rt::DeviceBuffer allocate(std::size_t bytes) { return rt::DeviceBuffer(std::max<std::size_t>(bytes, 8)); }

}  // namespace bfly::lda::detail
