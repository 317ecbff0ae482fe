#include "bfly/ops/sampler.hpp"

#include "sampler_state.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>
#include <utility>

namespace bfly::rt {
namespace {

// K is the one precondition that is not an argument of the kernel (it is in the spec); the rest is checked by the
// packing of the arguments (gen::PackedArgs), the same way on every machine and before anything touches the GPU.
void check_categories(int K) {
  if (K < 1 || K > gen::KernelSpec::kMaxK) {
    throw Error(fmt::format("Sampler::sample: K = {} is out of range; K must be in 1 .. {}", K,
                            gen::KernelSpec::kMaxK));
  }
}

}  // namespace

gen::DeviceBalance current_device_balance() { return gen::DeviceBalance{current_memory_bytes_per_sm_cycle()}; }

gen::KernelSpec sample_spec_on_device(int K, gen::ElementType type, const gen::SampleChoice& forced, long long M,
                                      const void* weights, long long ld) {
  const gen::DeviceBalance device = M > 0 ? current_device_balance() : gen::DeviceBalance{};
  return gen::fit_to_rows(gen::choose_sample_spec(K, type, forced, M, device), weights, ld);
}

gen::PackedArgs sample_arguments(const gen::KernelSpec& spec, const void* weights, long long M, long long ld,
                                 int* out, std::uint64_t seed, std::uint32_t iteration, void* part_totals,
                                 unsigned long long* arrivals, long long first_row) {
  if (gen::splits_rows(spec.operation))
    return gen::PackedArgs(gen::family_of(spec), spec.type, "Sampler::sample",
                           {weights, M, first_row, ld, out, nullptr, part_totals, arrivals, seed, iteration}, spec.K);
  return gen::PackedArgs(gen::family_of(spec), spec.type, "Sampler::sample",
                         {weights, M, ld, out, nullptr, seed, iteration}, spec.K);
}

namespace {

// The checks of a sample call that need no GPU (weights, M, ld, out): sample_split takes the same arguments as the
// row kernel, plus its scratch, so the row kernel's packing checks a call before any scratch exists.
void check_sample_call(int K, gen::ElementType type, const void* weights, long long M, long long ld, int* out) {
  gen::SampleChoice row_kernel;
  row_kernel.operation = gen::Operation::sample;
  sample_arguments(gen::choose_sample_spec(K, type, row_kernel), weights, M, ld, out, 0, 0);
}

}  // namespace

Sampler::Sampler(SamplerOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {
  // A bad forced W, R, variant or operation is reported here, not at the first launch (K = 16 suits every operation).
  spec_for(16, gen::ElementType::f32);
}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() = default;

SampleReport Sampler::sample(const void* weights, gen::ElementType type, long long M, int K, long long ld, int* out,
                             std::uint64_t seed, std::uint32_t iteration, CUstream_st* stream) {
  check_categories(K);
  check_sample_call(K, type, weights, M, ld, out);  // before the device is asked for its balance
  SampleReport report;
  // M = 0 launches nothing and needs no GPU: the spec reported is the one of a device unknown.
  report.spec = sample_spec_on_device(K, type, options_, M, weights, ld);
  if (gen::splits_rows(report.spec.operation)) {
    if (M == 0) return report;
    SplitScratch& scratch = state_->split_scratch[current_context()];
    scratch.reserve_rows(report.spec, M);
    gen::PackedArgs args = sample_arguments(report.spec, weights, M, ld, out, seed, iteration,
                                            reinterpret_cast<void*>(scratch.part_totals.get()),
                                            reinterpret_cast<unsigned long long*>(scratch.arrivals.get()));
    std::tie(report.invalid_rows, report.first_invalid_row) =
        state_->kernels.launch(report.spec, args, options_.report_invalid_rows, stream);
    return report;
  }
  gen::PackedArgs args = sample_arguments(report.spec, weights, M, ld, out, seed, iteration);
  if (M == 0) return report;

  // The rows of a small last wave go to sample_split (gen::rows_past_last_wave), unless the caller forced the kernel
  // or said whether rows split (split_rows).
  const Kernel& row_kernel = state_->kernels.get(report.spec);
  const long long tail = options_.operation || options_.split_rows.has_value() ? 0
                                            : gen::rows_past_last_wave(report.spec, M, row_kernel.ctas_per_sm,
                                                                       row_kernel.sms, row_kernel.can_overlap);
  if (tail == 0) {
    std::tie(report.invalid_rows, report.first_invalid_row) =
        state_->kernels.launch(report.spec, args, options_.report_invalid_rows, stream);
    return report;
  }
  report.tail_rows = tail;
  report.tail_spec = gen::fit_to_rows(gen::tail_split_spec(report.spec), weights, ld);
  report.tail_overlapped = row_kernel.can_overlap && state_->kernels.get(report.tail_spec).can_overlap;
  gen::PackedArgs rows_args = sample_arguments(report.spec, weights, M - tail, ld, out, seed, iteration);
  SplitScratch& scratch = state_->split_scratch[current_context()];
  scratch.reserve_rows(report.tail_spec, tail);
  const long long first_row = M - tail;
  const void* tail_weights = static_cast<const char*>(weights) + first_row * ld * gen::size_of(type);
  gen::PackedArgs tail_args = sample_arguments(report.tail_spec, tail_weights, tail, ld, out + first_row, seed,
                                               iteration, reinterpret_cast<void*>(scratch.part_totals.get()),
                                               reinterpret_cast<unsigned long long*>(scratch.arrivals.get()),
                                               first_row);
  std::tie(report.invalid_rows, report.first_invalid_row) = state_->kernels.launch(
      {{&report.spec, &rows_args}, {&report.tail_spec, &tail_args, /*overlaps_previous=*/true}},
      options_.report_invalid_rows, stream);
  return report;
}

SampleReport Sampler::sample_host(const void* weights, std::size_t count, gen::ElementType type, long long M, int K,
                                  long long ld, std::span<int> out, std::uint64_t seed, std::uint32_t iteration) {
  check_categories(K);
  check_sample_call(K, type, weights, M, ld, out.data());
  if (M == 0) return sample(nullptr, type, 0, K, ld, nullptr, seed, iteration, nullptr);
  return through_device("Sampler::sample_host", "weights", weights, count, type, M, K, ld, out, M,
                        fmt::format("M = {}", M), [&](const void* device_weights, int* device_out) {
                          return sample(device_weights, type, M, K, ld, device_out, seed, iteration, nullptr);
                        });
}

}  // namespace bfly::rt
