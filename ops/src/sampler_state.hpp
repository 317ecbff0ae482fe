// What a Sampler keeps per context: its loaded kernels and invalid-row counters (shared by its sample calls), and
// the scratch of its sample_split kernels.
#pragma once

#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include <cstddef>
#include <map>

namespace bfly::rt {

// The scratch of the sample_split kernels in one context, grown to the largest call: the part totals (level 1 of
// the table) and the arrival counters, which the kernels leave at zero.
struct SplitScratch {
  DeviceBuffer part_totals;
  DeviceBuffer arrivals;
  void reserve(std::size_t part_total_bytes, std::size_t arrival_bytes) {
    if (part_totals.size() < part_total_bytes) part_totals = DeviceBuffer(part_total_bytes);
    if (arrivals.size() < arrival_bytes) {
      arrivals = DeviceBuffer(arrival_bytes);
      check(driver().MemsetD8(arrivals.get(), 0, arrival_bytes), "cuMemsetD8(sample_split arrivals)");
      // The memset runs on the legacy stream; a launch on a non-blocking stream would not wait for it.
      check(driver().StreamSynchronize(nullptr), "cuStreamSynchronize(sample_split arrivals)");
    }
  }
};

struct Sampler::State {
  LoadedKernels kernels;
  std::map<CUcontext, SplitScratch> split_scratch;
};

}  // namespace bfly::rt
