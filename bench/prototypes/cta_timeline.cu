// The CTA timeline of one generated plain sample kernel of f32 weights (a diagnostic of the nineteenth session,
// bench/NOTES.md call 3; not built by CMake). Times the kernel, patched by cta_timeline_patch.py, with events beside a
// read of the same buffer, 13 launches alternating two buffers of M x K random weights (the last 10 timed, medians),
// and writes each CTA's start, end (ns from the first start) and SM of the last launch as CSV:
//   nvcc -O3 -arch=sm_90 -std=c++17 -DKERNEL_SOURCE='"k-timeline.cu"' -I. bench/prototypes/cta_timeline.cu -o timeline
//   ./timeline K M timeline.csv          then   python3 bench/prototypes/cta_timeline_summary.py timeline.csv
// The kernel takes (weights, M, ld, out, invalid_rows, seed, iteration) and one-warp CTAs, as the plain sample
// kernels of a 32-thread CTA do (docs/DESIGN.md section 9); the launch below is that contract with ld = K.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include KERNEL_SOURCE

__global__ void fill(float* w, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    w[i] = static_cast<float>(x >> 8) * (1.0f / 16777216.0f) + 1e-6f;  // in (0, 1]: every row valid
  }
}

__global__ void read_all(const float4* p, long long n, float* sink) {
  float s = 0.f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.f) *sink = s;  // never true: keeps the loads
}

#define CHECK(call)                                                                   \
  do {                                                                                \
    const cudaError_t e = (call);                                                     \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));                 \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s K M out.csv\n", argv[0]);
    return 2;
  }
  const int K = std::atoi(argv[1]);
  const long long M = std::atoll(argv[2]);
  const long long n = M * K, ctas = (M + 31) / 32;
  float *w0, *w1, *sink;
  int* out;
  unsigned long long *invalid, *timeline;
  CHECK(cudaMalloc(&w0, n * 4));
  CHECK(cudaMalloc(&w1, n * 4));
  CHECK(cudaMalloc(&out, M * 4));
  CHECK(cudaMalloc(&invalid, 16));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMalloc(&timeline, ctas * 24));
  CHECK(cudaMemcpyToSymbol(bfly_timeline, &timeline, sizeof(timeline)));
  fill<<<4096, 256>>>(w0, n, 1);
  fill<<<4096, 256>>>(w1, n, 2);
  CHECK(cudaDeviceSynchronize());
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, BFLY_KERNEL, 32, 0));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> kernel_ms, read_ms;
  for (int i = 0; i < 13; ++i) {
    float* w = i % 2 ? w1 : w0;
    float ms = 0.f;
    CHECK(cudaEventRecord(a));
    BFLY_KERNEL<<<ctas, 32>>>(w, M, K, out, invalid, 7ull, static_cast<unsigned>(i));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 3) kernel_ms.push_back(ms);
    CHECK(cudaEventRecord(a));
    read_all<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(w), n / 4, sink);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 3) read_ms.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(kernel_ms.begin(), kernel_ms.end());
  std::sort(read_ms.begin(), read_ms.end());
  const double bytes = static_cast<double>(n) * 4, k_ms = kernel_ms[5], r_ms = read_ms[5];
  std::printf("K %d M %lld ctas %lld ctas/SM %d kernel %.4f ms (%.1f GB/s) read %.4f ms (%.1f GB/s) ratio %.3f\n", K, M,
              ctas, per_sm, k_ms, bytes / k_ms / 1e6, r_ms, bytes / r_ms / 1e6, r_ms / k_ms);
  std::vector<unsigned long long> times(ctas * 3);
  CHECK(cudaMemcpy(times.data(), timeline, ctas * 24, cudaMemcpyDeviceToHost));
  unsigned long long first = ~0ull;
  for (long long c = 0; c < ctas; ++c) first = std::min(first, times[3 * c]);
  FILE* f = std::fopen(argv[3], "w");
  std::fprintf(f, "cta,start_ns,end_ns,sm\n");
  for (long long c = 0; c < ctas; ++c)
    std::fprintf(f, "%lld,%llu,%llu,%llu\n", c, times[3 * c] - first, times[3 * c + 1] - first, times[3 * c + 2]);
  std::fclose(f);
}
