#include "bfly/ops/sampler.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace bfly::rt {
namespace {

template <typename T>
constexpr gen::ElementType element_type_of() {
  if constexpr (std::is_same_v<T, float>) {
    return gen::ElementType::f32;
  } else {
    static_assert(std::is_same_v<T, double>);
    return gen::ElementType::f64;
  }
}

// Every check that needs no GPU, so a bad call fails the same way on every machine.
void validate_arguments(const void* weights, long long M, int K, long long ld, const int* out) {
  if (K < 1 || K > gen::KernelSpec::kMaxK) {
    throw Error(fmt::format("Sampler::sample: K = {} is out of range; K must be in 1 .. {}", K,
                            gen::KernelSpec::kMaxK));
  }
  if (ld < K) throw Error(fmt::format("Sampler::sample: ld = {} is less than K = {}; rows need ld >= K", ld, K));
  if (M < 0) throw Error(fmt::format("Sampler::sample: M = {} is negative; M is the number of rows", M));
  if (M > 0 && weights == nullptr) throw Error(fmt::format("Sampler::sample: weights is null (M = {})", M));
  if (M > 0 && out == nullptr) throw Error(fmt::format("Sampler::sample: out is null (M = {})", M));
}


}  // namespace

struct Sampler::State {
  LoadedKernels kernels;
};

Sampler::Sampler(SamplerOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {
  // A bad forced W, R or variant is reported here, not at the first launch.
  choose_spec(1024, gen::ElementType::f32, options_);
}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() = default;

gen::KernelSpec Sampler::choose_spec(int K, gen::ElementType type, const SamplerOptions& options) {
  gen::KernelSpec spec;
  spec.K = K;
  spec.type = type;
  spec.W = K >= 16 ? 16 : K >= 8 ? 8 : 4;  // W = 16 held up best over K on an H100 (bench/results, 2026-11-22)
  if (options.W) spec.W = *options.W;
  // addsub (the paper's faster build) for f32; for f64 the swap build matched or beat it at every K of the H100
  // sweep and addsub fell to 0.77 and 0.85 of the read ceiling at K = 16 and 1024 (swap: 0.87, 0.93).
  spec.variant = options.variant.value_or(type == gen::ElementType::f64 ? gen::Variant::swap : gen::Variant::addsub);
  spec.R = options.R.value_or(std::min(8, spec.W - 1));
  spec.operation = gen::Operation::sample;
  spec.validate();
  return spec;
}

template <typename T>
SampleReport Sampler::sample_device(const T* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                                    CUstream_st* stream) {
  validate_arguments(weights, M, K, ld, out);
  SampleReport report;
  report.spec = choose_spec(K, element_type_of<T>(), options_);
  if (M == 0) return report;

  const Kernel& kernel = state_->kernels.get(report.spec);
  CUdeviceptr counters = 0;
  if (options_.report_invalid_rows) {
    counters = state_->kernels.counters();
    reset_counters(counters, stream);
  }
  CUdeviceptr weights_arg = reinterpret_cast<CUdeviceptr>(weights);
  CUdeviceptr out_arg = reinterpret_cast<CUdeviceptr>(out);
  long long m_arg = M;
  long long ld_arg = ld;
  unsigned long long seed_arg = seed;
  unsigned int iteration_arg = 0;
  void* arguments[] = {&weights_arg, &m_arg, &ld_arg, &out_arg, &counters, &seed_arg, &iteration_arg};
  launch_rows(kernel, M, stream, arguments);

  if (options_.report_invalid_rows)
    std::tie(report.invalid_rows, report.first_invalid_row) =
        read_counters(counters, stream, fmt::format("sampling with {}", kernel.name));
  return report;
}

template <typename T>
SampleReport Sampler::sample_from_host(std::span<const T> weights, long long M, int K, long long ld,
                                       std::span<int> out, std::uint64_t seed) {
  validate_arguments(weights.data(), M, K, ld, out.data());
  if (M == 0) return sample_device<T>(nullptr, 0, K, ld, nullptr, seed, nullptr);
  const long long needed = (M - 1) * ld + K;
  if (static_cast<long long>(weights.size()) < needed) {
    throw Error(fmt::format("Sampler::sample_host: weights holds {} elements; M = {} rows of K = {} with ld = {} "
                            "need (M - 1) * ld + K = {}",
                            weights.size(), M, K, ld, needed));
  }
  if (static_cast<long long>(out.size()) < M) {
    throw Error(fmt::format("Sampler::sample_host: out holds {} elements, fewer than M = {}", out.size(), M));
  }
  const Driver& d = driver();
  current_context();
  DeviceBuffer device_weights(static_cast<std::size_t>(needed) * sizeof(T));
  DeviceBuffer device_out(static_cast<std::size_t>(M) * sizeof(int));
  check(d.MemcpyHtoD(device_weights.get(), weights.data(), device_weights.size()), "cuMemcpyHtoD(weights)");
  const SampleReport report = sample_device(reinterpret_cast<const T*>(device_weights.get()), M, K, ld,
                                            reinterpret_cast<int*>(device_out.get()), seed, nullptr);
  check(d.MemcpyDtoH(out.data(), device_out.get(), device_out.size()), "cuMemcpyDtoH(out)");
  return report;
}

SampleReport Sampler::sample(const float* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                             CUstream_st* stream) {
  return sample_device(weights, M, K, ld, out, seed, stream);
}

SampleReport Sampler::sample(const double* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                             CUstream_st* stream) {
  return sample_device(weights, M, K, ld, out, seed, stream);
}

SampleReport Sampler::sample_host(std::span<const float> weights, long long M, int K, long long ld,
                                  std::span<int> out, std::uint64_t seed) {
  return sample_from_host(weights, M, K, ld, out, seed);
}

SampleReport Sampler::sample_host(std::span<const double> weights, long long M, int K, long long ld,
                                  std::span<int> out, std::uint64_t seed) {
  return sample_from_host(weights, M, K, ld, out, seed);
}

}  // namespace bfly::rt
