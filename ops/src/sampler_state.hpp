// What a Sampler keeps per context: its loaded kernels and invalid-row counters (shared by its sample calls), and
// the scratch of its sample_split kernels.
#pragma once

#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <span>
#include <string_view>

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
  // Enough for M rows of the sample_split kernel `spec`: gen::part_totals_per_row(spec) accumulators and one
  // counter per row.
  void reserve_rows(const gen::KernelSpec& spec, long long M) {
    const auto rows = static_cast<std::size_t>(M);
    reserve(rows * static_cast<std::size_t>(gen::part_totals_per_row(spec)) *
                static_cast<std::size_t>(gen::size_of(gen::accumulator_of(spec.type))),
            rows * sizeof(unsigned long long));
  }
};

struct Sampler::State {
  LoadedKernels kernels;
  std::map<CUcontext, SplitScratch> split_scratch;
};

// The host-memory calls' common path (sample_host, sample_draws_host): checks that `input` (`count` elements of
// `type`) holds M rows of K, ld apart, and that `out` holds `draws` results (`draws_text`: how the message names
// that number), copies the rows to the device, runs launch(device input, device out) and copies the draws back.
// `call` and `input_name` name the call and its argument in the messages. M > 0.
template <typename Launch>
SampleReport through_device(std::string_view call, std::string_view input_name, const void* input, std::size_t count,
                            gen::ElementType type, long long M, int K, long long ld, std::span<int> out,
                            long long draws, std::string_view draws_text, Launch launch) {
  const long long needed = (M - 1) * ld + K;
  if (static_cast<long long>(count) < needed)
    throw Error(fmt::format("{}: {} holds {} elements; M = {} rows of K = {} with ld = {} need (M - 1) * ld + K = {}",
                            call, input_name, count, M, K, ld, needed));
  if (static_cast<long long>(out.size()) < draws)
    throw Error(fmt::format("{}: out holds {} elements, fewer than {}", call, out.size(), draws_text));
  const Driver& d = driver();
  current_context();
  const std::size_t bytes = static_cast<std::size_t>(needed) * static_cast<std::size_t>(gen::size_of(type));
  DeviceBuffer device_input(bytes);
  DeviceBuffer device_out(static_cast<std::size_t>(draws) * sizeof(int));
  check(d.MemcpyHtoD(device_input.get(), input, bytes), fmt::format("cuMemcpyHtoD({})", input_name));
  const SampleReport report =
      launch(reinterpret_cast<const void*>(device_input.get()), reinterpret_cast<int*>(device_out.get()));
  check(d.MemcpyDtoH(out.data(), device_out.get(), device_out.size()), "cuMemcpyDtoH(out)");
  return report;
}

}  // namespace bfly::rt
