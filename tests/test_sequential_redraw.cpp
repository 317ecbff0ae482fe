// bfly::sequential_draw_by_warp (templates/bfly/sample_support.cuh), the plain sample kernel's redraw of a row whose
// butterfly search landed on a zero weight: run on the CPU (bfly/lockstep.hpp), it must draw for each lane that asks
// exactly what bfly::sequential_draw draws for that lane alone, and leave the other lanes' draws as they were.
#include "bfly/lockstep.hpp"

#include "bfly/half_types.hpp"
#include "bfly/sample_support.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace {

constexpr int kUntouched = -7;  // the draw of a lane that does not ask for a redraw

// Lane t asks for a redraw of row t when asks[t] is set; out[t] gets the warp's answer, expected[t] the lane's own.
template <typename T, typename S>
__global__ void redraw(const T* rows, int K, const S* uniforms, const int* asks, int* out, int* expected) {
  const int t = static_cast<int>(threadIdx.x);
  const T* const row = rows + static_cast<long long>(t) * K;
  out[t] = bfly::sequential_draw_by_warp(asks[t] != 0, row, K, uniforms[t], kUntouched);
  expected[t] = asks[t] != 0 ? bfly::sequential_draw(row, K, uniforms[t]) : kUntouched;
}

template <typename T>
T stored(double w) {
  if constexpr (std::is_same_v<T, bfly::bf16_bits>) return bfly::to_bf16(static_cast<float>(w));
  else if constexpr (std::is_same_v<T, bfly::half_bits>) return bfly::to_half(static_cast<float>(w));
  else return static_cast<T>(w);
}

// Rows of every kind the redraw meets: random weights with zeros, a huge weight first that absorbs the small ones
// after it (so that any other order of the additions draws otherwise), one nonzero weight, and the last weight alone.
template <typename T, typename S>
void check(int K, std::uint64_t seed) {
  constexpr int kLanes = 64;  // two warps
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<T> rows(static_cast<std::size_t>(kLanes) * K);
  std::vector<S> uniforms(kLanes);
  std::vector<int> asks(kLanes), out(kLanes, -1), expected(kLanes, -1);
  for (int t = 0; t < kLanes; ++t) {
    for (int k = 0; k < K; ++k) {
      double w = uniform(rng) < 0.25 ? 0.0 : uniform(rng) * 4.0;
      if (t % 4 == 1) w = k == 0 ? 1e8 : 1.0;                    // absorption: the order of the sums matters
      if (t % 4 == 2) w = k == (t * 7) % K ? 3.0 : 0.0;            // one nonzero weight
      if (t % 4 == 3) w = k == K - 1 ? 1.0 : (k % 2 ? 0.0 : 1e-3);  // the last weight carries most of it
      rows[static_cast<std::size_t>(t) * K + k] = stored<T>(w);
    }
    // Only valid rows are redrawn: at least one weight above zero.
    bool any = false;
    for (int k = 0; k < K; ++k) any = any || bfly::widen(rows[static_cast<std::size_t>(t) * K + k]) > S(0);
    if (!any) rows[static_cast<std::size_t>(t) * K + K - 1] = stored<T>(1.0);
    uniforms[t] = static_cast<S>(t % 8 == 5 ? 0.9999999 : uniform(rng));
    asks[t] = (t % 3 != 0) || t == 0;  // most lanes, some not, a warp's first lane among them
  }
  bfly::lockstep::launch(redraw<T, S>, dim3(1), dim3(kLanes), rows.data(), K, uniforms.data(), asks.data(),
                         out.data(), expected.data());
  for (int t = 0; t < kLanes; ++t) {
    EXPECT_EQ(out[t], expected[t]) << "K = " << K << ", lane " << t;
    if (asks[t] != 0) {
      ASSERT_GE(out[t], 0);
      ASSERT_LT(out[t], K);
      EXPECT_GT(bfly::widen(rows[static_cast<std::size_t>(t) * K + out[t]]), S(0)) << "K = " << K << ", lane " << t;
    }
  }
}

template <typename T, typename S>
void check_every_k() {
  for (int K : {1, 2, 31, 32, 33, 255, 256, 257, 1000, 4097}) check<T, S>(K, 0x5eed + K);
}

TEST(SequentialRedraw, TheWarpDrawsWhatOneLaneDrawsF32) { check_every_k<float, float>(); }
TEST(SequentialRedraw, TheWarpDrawsWhatOneLaneDrawsF64) { check_every_k<double, double>(); }
TEST(SequentialRedraw, TheWarpDrawsWhatOneLaneDrawsBf16) { check_every_k<bfly::bf16_bits, float>(); }
TEST(SequentialRedraw, TheWarpDrawsWhatOneLaneDrawsF16) { check_every_k<bfly::half_bits, float>(); }

}  // namespace
