// Prototype, not part of the library: short rows of f32 that start anywhere, read with one bulk copy (TMA,
// cp.async.bulk) per warp instead of pass 1's ring of 16-byte copies (docs/DESIGN.md section 14).
//
// The question it answers: is the staged kernel of K = 127 (0.86 of the read ceiling on the H100, latency-bound at
// 12 warps an SM, bench/RESULTS.md "Where the staged short rows wait") held back by how its rows reach shared
// memory and by pass 2's reload from global memory? Here each warp copies its 32 rows (tight: ld = K, so they are
// one span of memory) into shared memory with one instruction, then builds every block's table from there in the
// register path's order, and pass 2 takes the chosen tile and the drawn weight from the same copy: no global load
// after the copy but the rare checks of a bad row. Shared memory per CTA is the ring's (32 KiB for 64 threads), so
// the CTAs per SM stay 6.
//
// The kernel reuses the generated kernel's helpers (build_table, screen_block, search_block, its constants) from
// GENERATED, the output of `bfly-gen show --K 127 --type f32`, and checks that its draws equal the generated
// kernel's, draw for draw, before it times both against the read ceiling (median of 15 launches after 3).
//
// Build here, run on the GPU (bench/results/h100-80gb-hbm3-2026-11-27-bulk-rows-prototype.txt):
//   build/tools/bfly-gen/bfly-gen show --K 127 --type f32 > /tmp/k127.cu
//   nvcc -O3 -std=c++17 -arch=sm_90 -Itemplates -DGENERATED='"/tmp/k127.cu"' bench/prototypes/bulk_rows.cu -o bulk_rows
#include GENERATED

#include <algorithm>
#include <cstdio>
#include <vector>

namespace proto {
using namespace bfly_sample_f32_w16_k127_r8_addsub_detail;
constexpr int WARP_ROWS = 32;
// A warp's rows, from the 16-byte boundary at or before its first weight to the one at or after its last.
constexpr int BUFFER_WORDS = (WARP_ROWS * K + 3 + 3) / 4 * 4;

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
}  // namespace proto

extern "C" __global__ void __launch_bounds__(64)
bulk_rows_f32_k127(const float* __restrict__ weights, long long M, long long ld, int* __restrict__ out,
                   unsigned long long* __restrict__ invalid_rows, unsigned long long seed, unsigned int iteration) {
  using namespace bfly_sample_f32_w16_k127_r8_addsub_detail;
  using namespace proto;
  const int r = static_cast<int>(threadIdx.x) & (W - 1);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) & 31;
  const int half = lane / W;  // which group of the warp
  const long long m = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  const long long warp_first_row = m - lane;
  const T* const my_row = weights + m * ld;
  unsigned int screen = 0u;
  T running = T(0);
  __shared__ T running_total[CHUNKS][THREADS];
  __shared__ __align__(128) float copy[THREADS / 32][BUFFER_WORDS];
  __shared__ __align__(8) unsigned long long arrived[THREADS / 32];

  // One bulk copy of the warp's rows (ld = K: one span), completing on the warp's mbarrier.
  const long long rows_here = M - warp_first_row < WARP_ROWS ? M - warp_first_row : WARP_ROWS;
  const unsigned long long first = reinterpret_cast<unsigned long long>(weights + warp_first_row * K);
  const unsigned long long last = reinterpret_cast<unsigned long long>(weights + (warp_first_row + rows_here) * K);
  const unsigned long long from = first & ~15ull, to = (last + 15) & ~15ull;
  const int lead = static_cast<int>((first - from) / sizeof(float));  // words before the warp's first weight
  const unsigned bar = shared_address(&arrived[warp]);
  if (lane == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncwarp();
  const bool any_row = rows_here > 0;  // the grid's last warp may lie past the last row
  if (lane == 0 && any_row) {
    const unsigned bytes = static_cast<unsigned>(to - from);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            shared_address(&copy[warp][0])),
        "l"(from), "r"(bytes), "r"(bar)
        : "memory");
  }
  if (any_row) {
    unsigned done = 0;
    while (!done)
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
          : "=r"(done)
          : "r"(bar)
          : "memory");
  }
  // Row k of this group starts at column `lead + (half * W + k) * K` of the copy.
  const float* const group_rows = &copy[warp][lead + half * W * K];

  // ---- Pass 1 (Algorithm 8): every block's table from the copy, in the register path's order ----
#pragma unroll
  for (int b = 0; b < BLOCKS; ++b) {
    T a[W];
    const int c = FIRST_BLOCK_COLUMN + b * W + r;
#pragma unroll
    for (int s = 0; s < W; ++s) a[s] = c >= 0 ? group_rows[s * K + c] : T(0);
    screen_block(a, screen);
    build_table(a, r);
    running += a[W - 1];
    running_total[b][threadIdx.x] = running;
  }

  const bool bad_row = bfly::group_any(!bfly::screen_passed(screen, T()), W) && m < M &&
                       bfly::row_has_unusable_weight(my_row, K);
  const T total = running;
  const bool valid = m < M && !bad_row && bfly::valid_total(total);

  // ---- Pass 2, as the generated kernel, but the chosen tile from the copy ----
  const T u = bfly::uniform_from_bits(bfly::philox_bits(seed, static_cast<unsigned long long>(m), 0u, iteration), T());
  const T target = valid ? bfly::scaled_uniform(u, total) : T(0);
  int chunk = 0;
  {
    int hi = CHUNKS - 1;
    while (chunk < hi) {
      const int mid = (chunk + hi) >> 1;
      if (target < running_total[mid][threadIdx.x]) hi = mid; else chunk = mid + 1;
    }
  }
  T low = chunk > 0 ? running_total[chunk - 1][threadIdx.x] : T(0);
  T high = running_total[chunk][threadIdx.x];
  const int block = chunk;
  int draw;
  {
    T a[W];
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const int b = __shfl_sync(FULL, block, k, W);
      const int c = FIRST_BLOCK_COLUMN + b * W + r;
      a[k] = b < BLOCKS && c >= 0 ? group_rows[k * K + c] : T(0);
    }
    build_table(a, r);
    draw = FIRST_BLOCK_COLUMN + block * W + search_block(a, r, target, low, high);
  }
  if (valid) {
    if (draw < 0 || draw >= K || !(group_rows[r * K + draw] > T(0))) draw = bfly::sequential_draw(my_row, K, u);
    out[m] = draw;
  } else if (m < M) {
    out[m] = -1;
    bfly::report_invalid_row(invalid_rows, m);
  }
}

namespace {

__global__ void fill(float* w, long long n, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
    w[i] = static_cast<float>(x >> 8) * (1.0f / 16777216.0f) + 1e-6f;
  }
}

__global__ void read_ceiling(const float4* p, long long n4, float* sink) {
  float4 acc = make_float4(0, 0, 0, 0);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float4 v = p[i];
    acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
  }
  if (acc.x + acc.y + acc.z + acc.w == -1.f) sink[0] = acc.x;
}

}  // namespace

int main() {
  constexpr long long K = bfly_sample_f32_w16_k127_r8_addsub_detail::K;
  const long long M = (1ll << 30) / (K * 4);
  float* w; int *o1, *o2; float* sink; unsigned long long* inv;
  cudaMalloc(&w, M * K * 4 + 256);  // the bulk copy may read up to 15 bytes past the last weight
  cudaMalloc(&o1, M * 4); cudaMalloc(&o2, M * 4); cudaMalloc(&sink, 4); cudaMalloc(&inv, 8 * ((M + 63) / 64));
  fill<<<4096, 256>>>(w, M * K, 7u);
  cudaMemset(o1, 0xfe, M * 4); cudaMemset(o2, 0xfe, M * 4);
  const int grid = static_cast<int>((M + 63) / 64);
  bfly_sample_f32_w16_k127_r8_addsub<<<grid, 64>>>(w, M, K, o1, inv, 5ull, 3u);
  bulk_rows_f32_k127<<<grid, 64>>>(w, M, K, o2, inv, 5ull, 3u);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::vector<int> d1(M), d2(M);
  cudaMemcpy(d1.data(), o1, M * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(d2.data(), o2, M * 4, cudaMemcpyDeviceToHost);
  long long differ = 0, out_of_range = 0;
  for (long long i = 0; i < M; ++i) {
    differ += d1[i] != d2[i];
    out_of_range += d2[i] < 0 || d2[i] >= K;
  }
  std::printf("K=%lld M=%lld: %lld of %lld draws differ from the generated kernel's, %lld outside [0, K) (%s)\n", K, M,
              differ, M, out_of_range, cudaGetErrorString(cudaGetLastError()));
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> tc, tg, tb, tr;
  for (int it = 0; it < 18; ++it) {
    float ms;
    cudaEventRecord(a); read_ceiling<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(w), M * K / 4, sink);
    cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) tc.push_back(ms);
    cudaEventRecord(a); bfly_sample_f32_w16_k127_r8_addsub<<<grid, 64>>>(w, M, K, o1, inv, 5ull, it);
    cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) tg.push_back(ms);
    cudaEventRecord(a); bulk_rows_f32_k127<<<grid, 64>>>(w, M, K, o2, inv, 5ull, it);
    cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) tb.push_back(ms);
    // The generated kernel's register path (rows slots): the same rows one weight further on, off 16 bytes.
    cudaEventRecord(a); bfly_sample_f32_w16_k127_r8_addsub<<<grid, 64>>>(w + 1, M - 1, K, o1, inv, 5ull, it);
    cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&ms, a, b); if (it >= 3) tr.push_back(ms);
  }
  for (auto* t : {&tc, &tg, &tb, &tr}) std::sort(t->begin(), t->end());
  const float ceiling = tc[tc.size() / 2];
  std::printf("read ceiling %.4f ms; generated kernel, staged %.4f ms (%.3f of the ceiling); bulk copy %.4f ms (%.3f); "
              "generated kernel, register path %.4f ms (%.3f) (%s)\n",
              ceiling, tg[tg.size() / 2], ceiling / tg[tg.size() / 2], tb[tb.size() / 2], ceiling / tb[tb.size() / 2],
              tr[tr.size() / 2], ceiling / tr[tr.size() / 2], cudaGetErrorString(cudaGetLastError()));
  return differ == 0 && out_of_range == 0 ? 0 : 1;
}
