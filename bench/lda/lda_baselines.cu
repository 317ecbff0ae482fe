// The paper's LDA z-step baselines (Algorithms 1 and 4 with 3, 5, 6, 7); see lda_baselines.hpp.
#include "lda_baselines.hpp"

#include "bfly/philox.cuh"
#include "bfly/sample_support.cuh"

#include <stdexcept>
#include <string>

namespace bench::lda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kThreads = 128;

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": launch failed: " + cudaGetErrorString(e));
}

// Algorithm 3: the smallest k with target < p[k] over the thread's column of p (non-decreasing), at most K - 1.
template <typename T>
__device__ __forceinline__ int binary_search(const T* p, long long D, int K, T target) {
  int lo = 0, hi = K - 1;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (target < p[static_cast<long long>(mid) * D]) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

template <typename T>
__device__ __forceinline__ T token_target(unsigned long long seed, long long t, unsigned iteration, T total) {
  const T u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(t), 0u, iteration), T());
  return bfly::scaled_uniform(u, total);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
alg1_kernel(const T* __restrict__ theta, const T* __restrict__ phi, const long long* __restrict__ doc_offsets,
            const int* __restrict__ words, int* __restrict__ z, long long D, int K, T* __restrict__ p,
            unsigned long long seed, unsigned iteration) {
  const long long m = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (m >= D) return;
  const T* const theta_row = theta + m * K;
  T* const column = p + m;
  for (long long t = doc_offsets[m]; t < doc_offsets[m + 1]; ++t) {
    const T* const phi_row = phi + static_cast<long long>(words[t]) * K;
    // Algorithm 1 lines 6-14: products and the prefix sums, stored.
    T running = T(0);
    for (int k = 0; k < K; ++k) {
      running += bfly::product(theta_row[k], phi_row[k]);
      column[static_cast<long long>(k) * D] = running;
    }
    if (!bfly::valid_total(running)) {
      z[t] = -1;
      continue;
    }
    z[t] = binary_search(column, D, K, token_target(seed, t, iteration, running));
  }
}

// Register transpose of a 32 x 32 block held one column per lane (a[i] = row i, column lane) into one row per
// lane (a[i] = row lane, column i): log2(32) = 5 stages of 16 shuffles (Figure 2 of the paper).
template <typename T>
__device__ __forceinline__ void transpose32(T (&a)[32], int lane) {
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    const bool upper = (lane & s) != 0;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      if ((i & s) != 0) continue;
      const T send = upper ? a[i] : a[i + s];
      const T received = __shfl_xor_sync(kFull, send, s);
      if (upper) a[i] = received;
      else a[i + s] = received;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
alg4_kernel(const T* __restrict__ theta, const T* __restrict__ phi, const long long* __restrict__ doc_offsets,
            const int* __restrict__ words, int* __restrict__ z, long long D, int K, T* __restrict__ p,
            unsigned long long seed, unsigned iteration) {
  const long long m = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const bool active = m < D;
  // Algorithm 7: the master index runs over the longest document of the warp; lanes past their own end work on
  // a dummy token (row 0) and write nothing, so that every lane takes part in the shuffles.
  const long long first = active ? doc_offsets[m] : 0;
  const int length = active ? static_cast<int>(doc_offsets[m + 1] - first) : 0;
  const int longest = __reduce_max_sync(kFull, length);
  const long long safe_m = active ? m : 0;
  const int remnant = K % 32;
  T* const column = p + (active ? m : 0);
  for (int i = 0; i < longest; ++i) {
    const bool live = i < length;
    const long long t = first + i;
    const long long word = live ? words[t] : 0;
    const T* const phi_row = phi + word * K;
    const T* const theta_row = theta + safe_m * K;
    // Algorithm 6 lines 8-12: the leading remnant, read per thread.
    T running = T(0);
    for (int k = 0; k < remnant; ++k) {
      running += bfly::product(theta_row[k], phi_row[k]);
      if (live) column[static_cast<long long>(k) * D] = running;
    }
    // Algorithm 5/6: whole 32 x 32 blocks with transposed access and a register transpose.
    for (int j = remnant; j < K; j += 32) {
      T a[32], b[32];
#pragma unroll
      for (int k = 0; k < 32; ++k) {
        const long long word_k = __shfl_sync(kFull, word, k);
        const long long m_k = __shfl_sync(kFull, safe_m, k);
        a[k] = phi[word_k * K + j + lane];
        b[k] = theta[m_k * K + j + lane];
      }
      transpose32(a, lane);
      transpose32(b, lane);
#pragma unroll
      for (int k = 0; k < 32; ++k) {
        running += bfly::product(b[k], a[k]);
        if (live) column[static_cast<long long>(j + k) * D] = running;
      }
    }
    if (!live) continue;
    if (!bfly::valid_total(running)) {
      z[t] = -1;
      continue;
    }
    z[t] = binary_search(column, D, K, token_target(seed, t, iteration, running));
  }
}

__global__ void random_topics_kernel(int* z, long long tokens, int K, unsigned long long seed) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tokens) z[t] = static_cast<int>(bfly::philox_bits(seed, static_cast<unsigned long long>(t), 7u, 0u) % K);
}

unsigned grid_for(long long D) { return static_cast<unsigned>((D + kThreads - 1) / kThreads); }

}  // namespace

template <typename T>
void alg1(const T* theta, const T* phi, const long long* doc_offsets, const int* words, int* z, long long D, int K,
          T* p, std::uint64_t seed, unsigned iteration, cudaStream_t stream) {
  if (D == 0) return;
  alg1_kernel<T><<<grid_for(D), kThreads, 0, stream>>>(theta, phi, doc_offsets, words, z, D, K, p, seed, iteration);
  check_launch("alg1");
}

template <typename T>
void alg4(const T* theta, const T* phi, const long long* doc_offsets, const int* words, int* z, long long D, int K,
          T* p, std::uint64_t seed, unsigned iteration, cudaStream_t stream) {
  if (D == 0) return;
  alg4_kernel<T><<<grid_for(D), kThreads, 0, stream>>>(theta, phi, doc_offsets, words, z, D, K, p, seed, iteration);
  check_launch("alg4");
}

void random_topics(int* z, long long tokens, int K, std::uint64_t seed, cudaStream_t stream) {
  if (tokens == 0) return;
  random_topics_kernel<<<static_cast<unsigned>((tokens + 255) / 256), 256, 0, stream>>>(z, tokens, K, seed);
  check_launch("random_topics");
}

#define LDA_BENCH_INSTANTIATE(T)                                                                                  \
  template void alg1<T>(const T*, const T*, const long long*, const int*, int*, long long, int, T*, std::uint64_t, \
                        unsigned, cudaStream_t);                                                                  \
  template void alg4<T>(const T*, const T*, const long long*, const int*, int*, long long, int, T*, std::uint64_t, \
                        unsigned, cudaStream_t);
LDA_BENCH_INSTANTIATE(float)
LDA_BENCH_INSTANTIATE(double)

}  // namespace bench::lda
