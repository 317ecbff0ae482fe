// jit_sample: draws one category per row of a small weight matrix with bfly::rt::Sampler (the kernel is generated
// and compiled by NVRTC on first use), twice: iteration 0 and iteration 1 draw from the same weights with fresh
// uniforms. Without a GPU it prints why and exits 0.
#include <bfly/jit/driver.hpp>
#include <bfly/ops/sampler.hpp>

#include <cstdio>
#include <span>
#include <string>
#include <vector>

int main() {
  std::string why;
  if (!bfly::rt::gpu_available(&why)) {
    std::printf("jit_sample: no GPU, nothing sampled: %s\n", why.c_str());
    return 0;
  }
  const long long M = 4;
  const int K = 10;
  std::vector<float> weights(M * K);
  for (long long r = 0; r < M; ++r)
    for (int k = 0; k < K; ++k) weights[r * K + k] = (k == r) ? 100.0f : 1.0f;  // row r mostly draws r
  bfly::rt::Sampler sampler;
  std::vector<int> out(M);
  for (std::uint32_t iteration = 0; iteration < 2; ++iteration) {
    const bfly::rt::SampleReport report =
        sampler.sample_host(std::span<const float>(weights), M, K, K, std::span<int>(out), /*seed=*/42, iteration);
    std::printf("iteration %u (%s):", iteration, bfly::gen::kernel_name(report.spec).c_str());
    for (int draw : out) std::printf(" %d", draw);
    std::printf("\n");
  }
  return 0;
}
