// Helpers of the sample_split kernels (one row split over several CTAs, docs/DESIGN.md section 12): their launch
// contract and the reads of what other CTAs published. An include guard rather than #pragma once, as in
// sample_support.cuh: the ahead-of-time header pastes this text.
#ifndef BFLY_SAMPLE_SPLIT_SUPPORT_CUH
#define BFLY_SAMPLE_SPLIT_SUPPORT_CUH

namespace bfly {

// The launch contract of a split kernel: blockDim = (threads, 1, 1) and a 1-D grid of at least items * ctas_per_item
// CTAs (CTA c works on item c / ctas_per_item). A smaller grid would leave rows without their last CTA, so it traps.
__device__ __forceinline__ void require_split_launch(int threads, int ctas_per_item, long long items) {
  if (blockDim.x != static_cast<unsigned int>(threads) || blockDim.y != 1u || blockDim.z != 1u || gridDim.y != 1u ||
      gridDim.z != 1u || static_cast<long long>(gridDim.x) < items * ctas_per_item)
    __trap();
}

// The number in the whole batch of a launch's row m (the kernel's first_row argument, docs/DESIGN.md section 15), for
// its Philox counter: below 2^32, since first_row and m are below 2^31, so the counter's high word is 0.
__device__ __forceinline__ unsigned long long batch_row(int first_row, long long m) {
  return static_cast<unsigned int>(first_row) + static_cast<unsigned int>(m);
}

// A value another CTA wrote before its __threadfence and atomic: read from L2 (ld.global.cg), never from a stale L1
// line. On the CPU (bfly/lockstep.hpp) a volatile read after the atomic's fence.
template <typename S>
__device__ __forceinline__ S load_published(const S* p) {
#ifdef __CUDA_ARCH__
  return __ldcg(p);
#else
  return *static_cast<const volatile S*>(p);
#endif
}

// The inclusive scan of `x` over the THREADS threads of a CTA, through `scan` (THREADS elements of shared memory), in a
// fixed pattern (Hillis and Steele), so every thread's result is the same sums whatever the launch: the running
// total up to and including this thread's. Afterwards scan[t] holds thread t's result.
template <int THREADS, typename S>
__device__ __forceinline__ S block_inclusive_scan(S* scan, S x) {
  scan[threadIdx.x] = x;
  __syncthreads();
  for (int offset = 1; offset < THREADS; offset *= 2) {
    const S add = static_cast<int>(threadIdx.x) >= offset ? scan[threadIdx.x - offset] : S(0);
    __syncthreads();
    scan[threadIdx.x] += add;
    __syncthreads();
  }
  return scan[threadIdx.x];
}

// The arrival counter of a row: CTAs add kArrived, plus kArrivedBad when they saw an unusable weight; the low 32
// bits count the CTAs, the high 32 bits the CTAs that saw one.
constexpr unsigned long long kArrived = 1ull;
constexpr unsigned long long kArrivedBad = 1ull << 32;

}  // namespace bfly

#endif  // BFLY_SAMPLE_SPLIT_SUPPORT_CUH
