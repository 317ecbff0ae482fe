// Helpers of the GPU tests: skipping without a device, device arrays, and a small NVRTC-compiled checking
// kernel (draw histograms and zero-weight checks on the device, so billions of draws need no copies).
#pragma once

#include "bfly/jit/compile.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

// Skips the calling test, with the reason, on a machine without a usable GPU.
#define BFLY_REQUIRE_GPU()                                         \
  do {                                                             \
    std::string bfly_why_;                                         \
    if (!bfly::rt::gpu_available(&bfly_why_)) GTEST_SKIP() << bfly_why_; \
  } while (0)

namespace bfly::test {

// Sampler options that force the spec's operation, W, variant, R, warps' copies and ring, so that the Sampler runs
// exactly its kernel.
inline rt::SamplerOptions forcing(const gen::KernelSpec& spec) {
  rt::SamplerOptions options;
  options.operation = spec.operation;
  options.W = spec.W;
  options.variant = spec.variant;
  options.R = spec.R;
  options.warp_copies = spec.warp_copies;
  options.ring_anywhere = spec.ring_anywhere;
  options.ring_row_order = spec.ring_row_order;
  options.ring_deep = spec.ring_deep;
  return options;
}

template <typename T>
rt::DeviceBuffer upload(const std::vector<T>& host) {
  rt::DeviceBuffer buffer(host.size() * sizeof(T));
  rt::check(rt::driver().MemcpyHtoD(buffer.get(), host.data(), buffer.size()), "cuMemcpyHtoD");
  return buffer;
}

template <typename T>
std::vector<T> download(const rt::DeviceBuffer& buffer) {
  std::vector<T> host(buffer.size() / sizeof(T));
  rt::check(rt::driver().MemcpyDtoH(host.data(), buffer.get(), buffer.size()), "cuMemcpyDtoH");
  return host;
}

template <typename T>
const T* as(const rt::DeviceBuffer& buffer) {
  return reinterpret_cast<const T*>(buffer.get());
}

// A random LDA z-step problem for the GPU-against-CPU tests: D = 300 documents of 1 to 40 tokens (every 29th
// empty) over V = 53 words; theta (D x K, row stride K + 1) and phi (V x K, row stride K) about one value in five
// exactly zero.
template <typename T>
struct RandomLdaProblem {
  static constexpr long long D = 300;
  static constexpr int V = 53;
  long long ld_theta = 0, ld_phi = 0;
  std::vector<long long> offsets{0};
  std::vector<int> words;
  std::vector<T> theta, phi;
};

template <typename T>
RandomLdaProblem<T> random_lda_problem(int K, std::mt19937_64& rng) {
  RandomLdaProblem<T> problem;
  const long long D = problem.D;
  const int V = problem.V;
  problem.ld_theta = K + 1;
  problem.ld_phi = K;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (long long d = 0; d < D; ++d) {
    const int length = d % 29 == 0 ? 0 : static_cast<int>(1 + rng() % 40);
    for (int i = 0; i < length; ++i) problem.words.push_back(static_cast<int>(rng() % V));
    problem.offsets.push_back(static_cast<long long>(problem.words.size()));
  }
  problem.theta.resize(static_cast<std::size_t>(D * problem.ld_theta));
  problem.phi.resize(static_cast<std::size_t>(V * problem.ld_phi));
  for (T& x : problem.theta) x = unit(rng) < 0.2 ? T(0) : static_cast<T>(unit(rng));
  for (T& x : problem.phi) x = unit(rng) < 0.2 ? T(0) : static_cast<T>(unit(rng) * 1e-2);
  return problem;
}

inline void zero(const rt::DeviceBuffer& buffer) {
  rt::check(rt::driver().MemsetD8(buffer.get(), 0, buffer.size()), "cuMemsetD8");
}

// Device-side checks of a batch of draws, compiled once per process with NVRTC for the current device.
class DrawChecker {
 public:
  static DrawChecker& get() {
    static DrawChecker checker;
    return checker;
  }

  // counts[j] += rows that drew j (0 <= j < K); counts[K] += rows that drew anything else.
  void histogram(const rt::DeviceBuffer& out, long long M, int K, const rt::DeviceBuffer& counts) {
    CUdeviceptr out_arg = out.get(), counts_arg = counts.get();
    void* arguments[] = {&out_arg, &M, &K, &counts_arg};
    launch(histogram_, M, arguments);
  }

  // counters[0] += rows whose draw is outside [0, K); counters[1] += rows that drew a category of weight <= 0.
  template <typename T>
  void check_weights(const rt::DeviceBuffer& weights, long long M, long long ld, int K, const rt::DeviceBuffer& out,
                     const rt::DeviceBuffer& counters) {
    CUdeviceptr weights_arg = weights.get(), out_arg = out.get(), counters_arg = counters.get();
    void* arguments[] = {&weights_arg, &M, &ld, &K, &out_arg, &counters_arg};
    launch(sizeof(T) == 4 ? check_f32_ : check_f64_, M, arguments);
  }

 private:
  DrawChecker() {
    gen::Source source;
    source.kernel_name = "bfly_test_draw_checks";
    source.text = R"(
extern "C" __global__ void histogram(const int* out, long long M, int K, unsigned long long* counts) {
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= M) return;
  const int j = out[r];
  atomicAdd(&counts[(j >= 0 && j < K) ? j : K], 1ull);
}
template <typename T>
__device__ void check(const T* w, long long M, long long ld, int K, const int* out, unsigned long long* c) {
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= M) return;
  const int j = out[r];
  if (j < 0 || j >= K) { atomicAdd(&c[0], 1ull); return; }
  if (!(w[r * ld + j] > T(0))) atomicAdd(&c[1], 1ull);
}
extern "C" __global__ void check_f32(const float* w, long long M, long long ld, int K, const int* out,
                                     unsigned long long* c) { check(w, M, ld, K, out, c); }
extern "C" __global__ void check_f64(const double* w, long long M, long long ld, int K, const int* out,
                                     unsigned long long* c) { check(w, M, ld, K, out, c); }
)";
    module_ = std::make_unique<rt::Module>(rt::compile(source, {rt::current_device_arch(), false}));
    histogram_ = function("histogram");
    check_f32_ = function("check_f32");
    check_f64_ = function("check_f64");
  }

  CUfunction function(const char* name) {
    CUfunction f = nullptr;
    rt::check(rt::driver().ModuleGetFunction(&f, module_->get(), name), name);
    return f;
  }

  static void launch(CUfunction f, long long M, void** arguments) {
    const unsigned threads = 256;
    const auto blocks = static_cast<unsigned>((M + threads - 1) / threads);
    rt::check(rt::driver().LaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, arguments, nullptr),
              "cuLaunchKernel(check)");
  }

  std::unique_ptr<rt::Module> module_;
  CUfunction histogram_ = nullptr;
  CUfunction check_f32_ = nullptr;
  CUfunction check_f64_ = nullptr;
};

// One line per test on stdout, for the run logs in bench/results.
inline void report_draws(const std::string& test, long long draws) {
  std::printf("[bfly draws] %s: %lld draws\n", test.c_str(), draws);
  testing::Test::RecordProperty("draws", std::to_string(draws));
}

}  // namespace bfly::test
