// The bench's own kernels: the paper's baselines (Steele & Tristan 2019), a warp-per-row sampler, the read
// ceiling, the input expansion and lda-bench's random topics. See baselines.hpp for what each one is.
#include "baselines.hpp"

#include "bfly/philox.cuh"          // the same uniforms as bfly's generated kernels (DESIGN.md section 5)
#include "bfly/sample_support.cuh"  // scaled_uniform: u * total kept below total

#include <stdexcept>
#include <string>

namespace bench {
namespace {

constexpr unsigned int kFull = 0xffffffffu;
constexpr int kThreads = 128;  // threads per CTA of the thread-per-row kernels (as bfly's kernels)
constexpr int kW = 32;         // Algorithm 4's group width: a whole warp

void check_launch(const char* what) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string("launch of ") + what + " failed: " + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ")");
  }
}

unsigned int grid_for(long long items, int per_cta, const char* what) {
  const long long grid = (items + per_cta - 1) / per_cta;
  if (grid > 0x7fffffffLL) throw std::runtime_error(std::string(what) + ": grid too large");
  return static_cast<unsigned int>(grid < 1 ? 1 : grid);
}

// The uniform of row m: Philox4x32-10 with key = seed, counter = (m, draw 0, iteration 0), as bfly's kernels.
template <typename T>
__device__ __forceinline__ T row_uniform(std::uint64_t seed, long long m) {
  return bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(m), 0u, 0u), T());
}

// Algorithm 3: the smallest j with target < p[j], p[j] = p_base[j * stride] nondecreasing, target < p[K - 1].
// The first such j has p[j] > p[j - 1], so a zero weight is never chosen.
template <typename T>
__device__ __forceinline__ int binary_search(const T* p_base, long long stride, int K, T target) {
  int j = 0, k = K - 1;          // Algorithm 3 line 3 (j starts at 0, line 13 of Algorithm 4)
  while (j < k) {                // line 4
    const int mid = (j + k) >> 1;  // line 5
    if (target < p_base[static_cast<long long>(mid) * stride]) k = mid;  // line 6
    else j = mid + 1;                                                  // line 7
  }
  return j;
}

// ---------------------------------------------------------------------------------------------------------------
// Algorithm 1 (+ Algorithm 3): thread per row, sequential running sums stored in p, then binary search.
template <typename T>
__global__ void __launch_bounds__(kThreads)
alg1_kernel(const T* __restrict__ weights, long long M, int K, long long ld, int* __restrict__ out,
            T* __restrict__ p, std::uint64_t seed) {
  const long long m = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (m >= M) return;
  const T* row = weights + m * ld;
  T sum = T(0);
  for (int k = 0; k < K; ++k) {  // Algorithm 1 lines 10-14: sum += a[k]; p[k] := sum
    sum += row[k];
    p[static_cast<long long>(k) * M + m] = sum;
  }
  const T target = bfly::scaled_uniform(row_uniform<T>(seed, m), sum);  // Algorithm 3 lines 2-3: u' = sum * u
  out[m] = binary_search(p + m, M, K, target);
}

// Algorithm 1 in two passes, no table: the running sum of pass 2 repeats pass 1's additions in the same order,
// so it ends exactly at `total` and the first running sum above target < total exists and has a nonzero weight.
template <typename T>
__global__ void __launch_bounds__(kThreads)
alg1_two_pass_kernel(const T* __restrict__ weights, long long M, int K, long long ld, int* __restrict__ out,
                     std::uint64_t seed) {
  const long long m = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (m >= M) return;
  const T* row = weights + m * ld;
  T total = T(0);
  for (int k = 0; k < K; ++k) total += row[k];  // pass 1: Algorithm 1 lines 10-14 without storing p
  const T target = bfly::scaled_uniform(row_uniform<T>(seed, m), total);
  T running = T(0);
  int draw = K - 1;
  for (int k = 0; k < K; ++k) {  // pass 2: Algorithm 2 (linear search) on running sums recomputed on the fly
    running += row[k];
    if (target < running) { draw = k; break; }
  }
  out[m] = draw;
}

// ---------------------------------------------------------------------------------------------------------------
// Figure 2: transpose a W x W block held one column per lane (a[k] of lane r = X[k][r]) into one row per lane
// (a[k] of lane r = X[r][k]) with log2 W stages of W/2 shuffles each: at stage s, lane r and lane r ^ s swap the
// registers whose bit s differs from bit s of their lane index. (W/2) log2 W = 80 shuffles for W = 32.
template <typename T>
__device__ __forceinline__ void transpose_in_registers(T (&a)[kW], int r) {
#pragma unroll
  for (int s = 1; s < kW; s <<= 1) {
    const bool upper = (r & s) != 0;
#pragma unroll
    for (int i = 0; i < kW; ++i) {
      if (i & s) continue;  // pair (i, i | s), visited once
      const T send = upper ? a[i] : a[i | s];
      const T received = __shfl_xor_sync(kFull, send, s);
      if (upper) a[i] = received;
      else a[i | s] = received;
    }
  }
}

// Algorithm 4 with Algorithms 5/6 for explicit weights. TRANSPOSE_IN_SMEM selects the shared-memory transpose.
template <typename T, bool TRANSPOSE_IN_SMEM>
__global__ void __launch_bounds__(kThreads)
alg4_kernel(const T* __restrict__ weights, long long M, int K, long long ld, int* __restrict__ out,
            T* __restrict__ p, std::uint64_t seed) {
  // Algorithm 4 lines 3-6: group q of W lanes (a warp), lane r, row m = q * W + r.
  const int r = static_cast<int>(threadIdx.x) & (kW - 1);
  const long long m = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  const long long group_first_row = m - r;
  if (group_first_row >= M) return;  // the whole warp: no shuffle partner is left behind
  const int rows_left = M - group_first_row < kW ? static_cast<int>(M - group_first_row) : kW;
  const T* const rows = weights + group_first_row * ld;  // row k of the group at rows + k * ld
  const bool live = m < M;
  T sum = T(0);

  // Algorithm 6 lines 8-12: the leading remnant of K mod W elements, per thread.
  const int remnant = K % kW;
  if (live) {
    const T* row = weights + m * ld;
    for (int k = 0; k < remnant; ++k) {
      sum += row[k];
      p[static_cast<long long>(k) * M + m] = sum;
    }
  }

  __shared__ T tile[TRANSPOSE_IN_SMEM ? kThreads / kW : 1][kW][kW + 1];  // +1: conflict-free column reads
  T (&my_tile)[kW][kW + 1] = tile[TRANSPOSE_IN_SMEM ? threadIdx.x / kW : 0];

  // Algorithm 6 lines 13-23: the W x W blocks.
  for (int j = remnant; j < K; j += kW) {
    T a[kW];
    if constexpr (!TRANSPOSE_IN_SMEM) {
      // Algorithm 5 line 10 / Algorithm 6 line 16: transposed access, lane r loads element j + r of row k.
#pragma unroll
      for (int k = 0; k < kW; ++k) a[k] = k < rows_left ? rows[k * ld + j + r] : T(0);
      transpose_in_registers(a, r);  // Figure 2
    } else {
      // The same transposed access, written to the warp's tile row k; then lane r reads its own row r.
#pragma unroll
      for (int k = 0; k < kW; ++k) my_tile[k][r] = k < rows_left ? rows[k * ld + j + r] : T(0);
      __syncwarp();
#pragma unroll
      for (int k = 0; k < kW; ++k) a[k] = my_tile[r][k];
      __syncwarp();  // the next block overwrites the tile
    }
    // Algorithm 6 lines 18-21: sum += a[k]; p[m, j + k] := sum.
#pragma unroll
    for (int k = 0; k < kW; ++k) {
      sum += a[k];
      if (live) p[static_cast<long long>(j + k) * M + m] = sum;
    }
  }
  if (!live) return;
  // Algorithm 4 line 14: search the table p_local[m] (Algorithm 3).
  const T target = bfly::scaled_uniform(row_uniform<T>(seed, m), sum);
  out[m] = binary_search(p + m, M, K, target);
}

// ---------------------------------------------------------------------------------------------------------------
// Warp per row: coalesced loads, shuffle reduce, then chunked shuffle scan + ballot search.
constexpr int kWarpRowThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kWarpRowThreads)
warp_per_row_kernel(const T* __restrict__ weights, long long M, int K, long long ld, int* __restrict__ out,
                    std::uint64_t seed) {
  const long long m = (static_cast<long long>(blockIdx.x) * kWarpRowThreads + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  if (m >= M) return;  // whole warps
  const T* row = weights + m * ld;

  // Pass 1: the total, four independent loads in flight per lane.
  T s0 = T(0), s1 = T(0), s2 = T(0), s3 = T(0);
  int c = lane;
  for (; c + 96 < K; c += 128) {
    s0 += row[c];
    s1 += row[c + 32];
    s2 += row[c + 64];
    s3 += row[c + 96];
  }
  for (; c < K; c += 32) s0 += row[c];
  T total = (s0 + s1) + (s2 + s3);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_xor_sync(kFull, total, offset);
  const T target = bfly::scaled_uniform(row_uniform<T>(seed, m), total);

  // Pass 2: chunks of 32; the running sums are base + inclusive scan. They are summed in another order than
  // total, so the search may run off the end by rounding: then the last nonzero weight is drawn.
  T base = T(0);
  int draw = -1, last_nonzero = -1;
  for (int c0 = 0; c0 < K; c0 += 32) {
    const int k = c0 + lane;
    const T x = k < K ? row[k] : T(0);
    T scan = x;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const T y = __shfl_up_sync(kFull, scan, offset);
      if (lane >= offset) scan += y;
    }
    // Only nonzero weights may be drawn, whatever the rounding of the scan.
    const unsigned int hit = __ballot_sync(kFull, x > T(0) && target < base + scan);
    if (hit != 0) {
      draw = c0 + __ffs(hit) - 1;
      break;
    }
    const unsigned int nonzero = __ballot_sync(kFull, x > T(0));
    if (nonzero != 0) last_nonzero = c0 + 31 - __clz(nonzero);
    base += __shfl_sync(kFull, scan, 31);
  }
  if (lane == 0) out[m] = draw >= 0 ? draw : last_nonzero;
}

// ---------------------------------------------------------------------------------------------------------------
// The read ceiling: grid-stride read-and-reduce with 16-byte loads, four in flight per thread.
constexpr int kReadThreads = 512;

__global__ void __launch_bounds__(kReadThreads)
read_reduce_kernel(const float4* __restrict__ data, std::size_t n, float* __restrict__ sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kReadThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kReadThreads + threadIdx.x;
  float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float4 a = data[i], b = data[i + stride], c = data[i + 2 * stride], d = data[i + 3 * stride];
    acc0 += (a.x + a.y) + (a.z + a.w);
    acc1 += (b.x + b.y) + (b.z + b.w);
    acc2 += (c.x + c.y) + (c.z + c.w);
    acc3 += (d.x + d.y) + (d.z + d.w);
  }
  for (; i < n; i += stride) {
    const float4 a = data[i];
    acc0 += (a.x + a.y) + (a.z + a.w);
  }
  float acc = (acc0 + acc1) + (acc2 + acc3);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(kFull, acc, offset);
  __shared__ float warp_sums[kReadThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < kReadThreads / 32; ++w) s += warp_sums[w];
    sink[blockIdx.x] = s;
  }
}

// ---------------------------------------------------------------------------------------------------------------
template <typename T>
__global__ void expand_rows_kernel(T* __restrict__ dst, long long M, int K, long long ld,
                                   const T* __restrict__ distinct, int D) {
  const long long total = M * K;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = e / K;
    const int k = static_cast<int>(e - r * K);
    dst[r * ld + k] = distinct[static_cast<long long>(distinct_index(r, D)) * K + k];
  }
}

__global__ void random_topics_kernel(int* z, long long tokens, int K, unsigned long long seed) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tokens) z[t] = static_cast<int>(bfly::philox_bits(seed, static_cast<unsigned long long>(t), 7u, 0u) % K);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
template <typename T>
void alg1(const T* weights, long long M, int K, long long ld, int* out, T* p, std::uint64_t seed,
          cudaStream_t stream) {
  alg1_kernel<T><<<grid_for(M, kThreads, "alg1"), kThreads, 0, stream>>>(weights, M, K, ld, out, p, seed);
  check_launch("alg1");
}

template <typename T>
void alg1_two_pass(const T* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                   cudaStream_t stream) {
  alg1_two_pass_kernel<T><<<grid_for(M, kThreads, "alg1-two-pass"), kThreads, 0, stream>>>(weights, M, K, ld,
                                                                                            out, seed);
  check_launch("alg1-two-pass");
}

template <typename T>
void alg4_regs(const T* weights, long long M, int K, long long ld, int* out, T* p, std::uint64_t seed,
               cudaStream_t stream) {
  alg4_kernel<T, false><<<grid_for(M, kThreads, "alg4-regs"), kThreads, 0, stream>>>(weights, M, K, ld, out, p,
                                                                                      seed);
  check_launch("alg4-regs");
}

template <typename T>
void alg4_smem(const T* weights, long long M, int K, long long ld, int* out, T* p, std::uint64_t seed,
               cudaStream_t stream) {
  alg4_kernel<T, true><<<grid_for(M, kThreads, "alg4-smem"), kThreads, 0, stream>>>(weights, M, K, ld, out, p,
                                                                                     seed);
  check_launch("alg4-smem");
}

template <typename T>
void warp_per_row(const T* weights, long long M, int K, long long ld, int* out, std::uint64_t seed,
                  cudaStream_t stream) {
  warp_per_row_kernel<T><<<grid_for(M, kWarpRowThreads / 32, "warp-per-row"), kWarpRowThreads, 0, stream>>>(
      weights, M, K, ld, out, seed);
  check_launch("warp-per-row");
}

int read_ceiling_sink_size(int multiprocessors, int blocks_per_sm) { return multiprocessors * blocks_per_sm; }

void read_ceiling(const void* data, std::size_t bytes, float* sink, int multiprocessors, int blocks_per_sm,
                  cudaStream_t stream) {
  const int blocks = read_ceiling_sink_size(multiprocessors, blocks_per_sm);
  read_reduce_kernel<<<blocks, kReadThreads, 0, stream>>>(static_cast<const float4*>(data), bytes / 16, sink);
  check_launch("read ceiling");
}

template <typename T>
void expand_rows(T* dst, long long M, int K, long long ld, const T* distinct, int D, cudaStream_t stream) {
  expand_rows_kernel<T><<<4096, 256, 0, stream>>>(dst, M, K, ld, distinct, D);
  check_launch("expand_rows");
}

void random_topics(int* z, long long tokens, int K, std::uint64_t seed, cudaStream_t stream) {
  if (tokens == 0) return;
  random_topics_kernel<<<grid_for(tokens, 256, "random_topics"), 256, 0, stream>>>(z, tokens, K, seed);
  check_launch("random_topics");
}

#define BENCH_INSTANTIATE(T)                                                                                  \
  template void alg1<T>(const T*, long long, int, long long, int*, T*, std::uint64_t, cudaStream_t);         \
  template void alg1_two_pass<T>(const T*, long long, int, long long, int*, std::uint64_t, cudaStream_t);    \
  template void alg4_regs<T>(const T*, long long, int, long long, int*, T*, std::uint64_t, cudaStream_t);    \
  template void alg4_smem<T>(const T*, long long, int, long long, int*, T*, std::uint64_t, cudaStream_t);    \
  template void warp_per_row<T>(const T*, long long, int, long long, int*, std::uint64_t, cudaStream_t);     \
  template void expand_rows<T>(T*, long long, int, long long, const T*, int, cudaStream_t);
BENCH_INSTANTIATE(float)
BENCH_INSTANTIATE(double)
#undef BENCH_INSTANTIATE
// The 16-bit types (f16, bf16) are expanded as their bits.
template void expand_rows<unsigned short>(unsigned short*, long long, int, long long, const unsigned short*, int,
                                          cudaStream_t);

}  // namespace bench
