#include "bfly/ops/sampler.hpp"

#include "sampler_state.hpp"

#include "bfly/error.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"

#include <fmt/format.h>

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

gen::PackedArgs sample_arguments(const gen::KernelSpec& spec, const void* weights, long long M, long long ld,
                                 int* out, std::uint64_t seed, std::uint32_t iteration) {
  return gen::PackedArgs(gen::family_of(spec), spec.type, "Sampler::sample",
                         {weights, M, ld, out, nullptr, seed, iteration}, spec.K);
}


Sampler::Sampler(SamplerOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {
  spec_for(1024, gen::ElementType::f32);  // a bad forced W, R or variant is reported here, not at the first launch
}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() = default;

SampleReport Sampler::sample(const void* weights, gen::ElementType type, long long M, int K, long long ld, int* out,
                             std::uint64_t seed, std::uint32_t iteration, CUstream_st* stream) {
  check_categories(K);
  SampleReport report;
  report.spec = spec_for(K, type);
  gen::PackedArgs args = sample_arguments(report.spec, weights, M, ld, out, seed, iteration);
  if (M == 0) return report;

  std::tie(report.invalid_rows, report.first_invalid_row) =
      state_->kernels.launch(report.spec, args, options_.report_invalid_rows, stream);
  return report;
}

SampleReport Sampler::sample_host(const void* weights, std::size_t count, gen::ElementType type, long long M, int K,
                                  long long ld, std::span<int> out, std::uint64_t seed, std::uint32_t iteration) {
  check_categories(K);
  sample_arguments(spec_for(K, type), weights, M, ld, out.data(), seed, iteration);
  if (M == 0) return sample(nullptr, type, 0, K, ld, nullptr, seed, iteration, nullptr);
  const long long needed = (M - 1) * ld + K;
  if (static_cast<long long>(count) < needed) {
    throw Error(fmt::format("Sampler::sample_host: weights holds {} elements; M = {} rows of K = {} with ld = {} "
                            "need (M - 1) * ld + K = {}",
                            count, M, K, ld, needed));
  }
  if (static_cast<long long>(out.size()) < M) {
    throw Error(fmt::format("Sampler::sample_host: out holds {} elements, fewer than M = {}", out.size(), M));
  }
  const Driver& d = driver();
  current_context();
  const std::size_t bytes = static_cast<std::size_t>(needed) * static_cast<std::size_t>(gen::size_of(type));
  DeviceBuffer device_weights(bytes);
  DeviceBuffer device_out(static_cast<std::size_t>(M) * sizeof(int));
  check(d.MemcpyHtoD(device_weights.get(), weights, bytes), "cuMemcpyHtoD(weights)");
  const SampleReport report = sample(reinterpret_cast<const void*>(device_weights.get()), type, M, K, ld,
                                     reinterpret_cast<int*>(device_out.get()), seed, iteration, nullptr);
  check(d.MemcpyDtoH(out.data(), device_out.get(), device_out.size()), "cuMemcpyDtoH(out)");
  return report;
}

}  // namespace bfly::rt
