// bfly/lockstep.hpp: CUDA's warp-synchronous semantics on the CPU, and the errors it stops with.
#include "bfly/lockstep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

__global__ void shuffles(int* out) {
  const int t = static_cast<int>(threadIdx.x);
  out[4 * t + 0] = __shfl_sync(0xffffffffu, 100 + t, 3, 8);        // lane 3 of this 8-lane segment
  out[4 * t + 1] = __shfl_xor_sync(0xffffffffu, 100 + t, 4, 8);    // partner within the segment
  out[4 * t + 2] = __shfl_xor_sync(0xffffffffu, 100 + t, 8, 8);    // a later segment: own value; earlier: read
  out[4 * t + 3] = static_cast<int>(__ballot_sync(0xffffffffu, t % 3 == 0)) + __any_sync(0xffffffffu, t == 5) * 7 +
                   __all_sync(0xffffffffu, t < 64) * 11;
}

TEST(Lockstep, ShuffleAndVoteFollowCuda) {
  const int n = 40;  // one full warp and one partial warp
  std::vector<int> out(4 * n, -1);
  bfly::lockstep::launch(shuffles, dim3(1), dim3(n), out.data());
  unsigned ballot0 = 0, ballot1 = 0;
  for (int t = 0; t < 32; ++t) ballot0 |= (t % 3 == 0 ? 1u : 0u) << t;
  for (int t = 32; t < n; ++t) ballot1 |= (t % 3 == 0 ? 1u : 0u) << (t - 32);
  for (int t = 0; t < n; ++t) {
    EXPECT_EQ(out[4 * t + 0], 100 + (t & ~7) + 3) << t;
    EXPECT_EQ(out[4 * t + 1], 100 + (t ^ 4)) << t;
    EXPECT_EQ(out[4 * t + 2], (t & 8) ? 100 + (t ^ 8) : 100 + t) << t;
    const int any = t < 32 ? 7 : 0;
    EXPECT_EQ(out[4 * t + 3], static_cast<int>(t < 32 ? ballot0 : ballot1) + any + 11) << t;
  }
}

// __reduce_max_sync over aligned segments (the generated logits kernels' group maximum): each lane's value is a
// hash of its index, so every segment's maximum sits at a different lane.
__global__ void segment_maxima(const int* in, int* out, int width) {
  const int t = static_cast<int>(threadIdx.x);
  const unsigned int mask = width == 32 ? 0xffffffffu : ((1u << width) - 1u) << ((t & 31) & ~(width - 1));
  out[t] = __reduce_max_sync(mask, in[t]);
}

TEST(Lockstep, ReduceMaxOverAlignedSegments) {
  const int n = 64;
  std::vector<int> in(n), out(n);
  for (int t = 0; t < n; ++t) in[t] = static_cast<int>((t * 2654435761u) >> 8) - (1 << 22);  // mixed signs
  for (int width : {1, 4, 8, 16, 32}) {
    bfly::lockstep::launch(segment_maxima, dim3(1), dim3(n), in.data(), out.data(), width);
    for (int t = 0; t < n; ++t) {
      int expected = in[t & ~(width - 1)];
      for (int s = t & ~(width - 1); s < (t & ~(width - 1)) + width; ++s) expected = std::max(expected, in[s]);
      EXPECT_EQ(out[t], expected) << "width " << width << ", lane " << t;
    }
  }
}

__global__ void unaligned_reduce(int* out) { out[threadIdx.x] = __reduce_max_sync(0x00000ff0u, 1); }

TEST(LockstepDeathTest, ReduceMaxOverAnUnalignedMaskStops) {
  std::vector<int> out(32);
  EXPECT_DEATH(bfly::lockstep::launch(unaligned_reduce, dim3(1), dim3(32), out.data()), "is not the aligned segment");
}

__global__ void block_sum(const int* in, int* out) {
  __shared__ int partial[64];
  partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += partial[i];
    out[blockIdx.x] = s;
  }
}

TEST(Lockstep, SharedMemoryAndBarriersPerCta) {
  const int ctas = 5, threads = 64;
  std::vector<int> in(ctas * threads), out(ctas, 0);
  for (int i = 0; i < ctas * threads; ++i) in[i] = i;
  bfly::lockstep::launch(block_sum, dim3(ctas), dim3(threads), in.data(), out.data());
  for (int b = 0; b < ctas; ++b) {
    int want = 0;
    for (int i = 0; i < threads; ++i) want += b * threads + i;
    EXPECT_EQ(out[b], want);
  }
}

__global__ void divergent(int* out) {
  if (threadIdx.x < 16) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
}

TEST(LockstepDeathTest, ShuffleWhileOtherLanesFinishedStops) {
  std::vector<int> out(32);
  EXPECT_DEATH(bfly::lockstep::launch(divergent, dim3(1), dim3(32), out.data()), "while others finished");
}

__global__ void mismatched(int* out) {
  if (threadIdx.x & 1) out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
  else out[threadIdx.x] = static_cast<int>(__ballot_sync(0xffffffffu, 1));
}

TEST(LockstepDeathTest, DifferentCallsInOneRoundStop) {
  std::vector<int> out(32);
  EXPECT_DEATH(bfly::lockstep::launch(mismatched, dim3(1), dim3(32), out.data()), "different warp-synchronous calls");
}

}  // namespace
