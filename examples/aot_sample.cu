// aot_sample: the ahead-of-time kernel that bfly_add_kernels generated at build time (sampler_k1000.cuh, from the
// spec "name=sampler_k1000,K=1000,type=f32"), launched with plain CUDA runtime calls. Without a GPU it prints why
// and exits 0.
#include <cuda_runtime.h>

#include "sampler_k1000.cuh"

#include <cstdio>
#include <vector>

int main() {
  int devices = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&devices); status != cudaSuccess || devices == 0) {
    std::printf("aot_sample: no GPU, nothing sampled: %s\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device");
    return 0;
  }
  const long long M = 1000;
  const int K = 1000;
  std::vector<float> weights(M * K, 1.0f);
  for (long long r = 0; r < M; ++r) weights[r * K + (r % K)] = 1e6f;  // row r draws r almost always
  float* device_weights = nullptr;
  int* device_out = nullptr;
  cudaMalloc(&device_weights, weights.size() * sizeof(float));
  cudaMalloc(&device_out, M * sizeof(int));
  cudaMemcpy(device_weights, weights.data(), weights.size() * sizeof(float), cudaMemcpyHostToDevice);
  // The generated launch function, through the alias bfly_add_kernels added: (weights, M, ld, out, invalid_rows,
  // seed, iteration[, stream]).
  cudaError_t status = sampler_k1000_launch(device_weights, M, K, device_out, nullptr, 42ull, 0u);
  if (status == cudaSuccess) status = cudaDeviceSynchronize();
  std::vector<int> out(M);
  cudaMemcpy(out.data(), device_out, M * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(device_weights);
  cudaFree(device_out);
  if (status != cudaSuccess) {
    std::printf("aot_sample: %s\n", cudaGetErrorString(status));
    return 1;
  }
  long long expected = 0;
  for (long long r = 0; r < M; ++r) expected += out[r] == r % K;
  std::printf("aot_sample: %s drew the heavy category in %lld of %lld rows\n", sampler_k1000_kernel_name, expected, M);
  return 0;
}
