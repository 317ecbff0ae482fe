// The redraws of a draw whose butterfly search landed on a zero weight, run on the CPU (bfly/lockstep.hpp).
// - bfly::sequential_draw_by_warp (templates/bfly/sample_support.cuh), the plain sample kernel's: it must draw for
//   each lane that asks exactly what bfly::sequential_draw draws for that lane alone, and leave the other lanes'
//   draws as they were.
// - bfly::sequential_draw_within (templates/bfly/draws_support.cuh), the split kernels': within the chosen part, the
//   first category whose running total exceeds the target, never a zero weight nor one already drawn.
#include "bfly/lockstep.hpp"

#include "bfly/half_types.hpp"
#include "bfly/sample_support.cuh"
#include "bfly/draws_support.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
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

// sequential_draw_within over parts of a row of K weights, [begin, begin + span) with begin < 0 (an odd row's phase)
// and past K among them, with categories drawn before: for targets across the part's total, at and just past its
// running totals and past its end, the answer is a category of the part, inside the row, of positive weight, not
// drawn before; the running total (in S, column order) before it is at most t and the one after it exceeds t, or,
// where t is past every running total, it is the part's last such category; -1 only where there is none.
template <typename T, typename S, typename Weights>
void check_within(const std::vector<T>& row, const Weights& weights, std::uint64_t seed) {
  const int K = static_cast<int>(row.size());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int drawn_answers = 0, none = 0;
  for (const int span : {1, 2, 16, 32, 64}) {
    for (int begin = -1; begin < K + 1; begin += span) {
      const std::vector<int> drawn = {begin + 1, begin + span / 2, K - 1};
      for (const int count : {0, 1, 3}) {
        // The part's usable categories and their running totals, as the redraw must form them.
        std::vector<int> usable;
        std::vector<S> running;
        S total = S(0);
        for (int k = begin < 0 ? 0 : begin; k < begin + span && k < K; ++k) {
          if (std::find(drawn.begin(), drawn.begin() + count, k) != drawn.begin() + count) continue;
          if (!(weights(k) > S(0))) continue;
          total += weights(k);
          usable.push_back(k);
          running.push_back(total);
        }
        std::vector<S> targets = {S(0), static_cast<S>(uniform(rng)) * total, total, total * S(2)};
        for (const S r : running) {
          targets.push_back(r);
          targets.push_back(std::nextafter(r, S(0)));
        }
        for (const S t : targets) {
          const int k = bfly::sequential_draw_within(weights, begin, begin + span, K, t, drawn.data(), count);
          const std::string where = "K = " + std::to_string(K) + ", part [" + std::to_string(begin) + ", " +
                                    std::to_string(begin + span) + "), count " + std::to_string(count) + ", t " +
                                    std::to_string(static_cast<double>(t));
          if (usable.empty()) {
            EXPECT_EQ(k, -1) << where;
            ++none;
            continue;
          }
          const auto at = std::find(usable.begin(), usable.end(), k);
          ASSERT_NE(at, usable.end()) << where << ": drew " << k << ", outside the part, of weight 0 or drawn";
          const std::size_t i = static_cast<std::size_t>(at - usable.begin());
          if (t < running.back()) {
            EXPECT_LT(t, running[i]) << where;
            if (i > 0) {
              EXPECT_FALSE(t < running[i - 1]) << where;
            }
          } else {
            EXPECT_EQ(i, usable.size() - 1) << where << ": t past the part's total";
          }
          ++drawn_answers;
        }
      }
    }
  }
  EXPECT_GT(drawn_answers, 1000);
  EXPECT_GT(none, 0) << "no part without a usable weight was tried";
}

// Rows with runs of zeros (parts of no positive weight among them) and weights far apart in size.
template <typename T>
std::vector<T> row_with_zeros(int K, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<T> row(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    double w = uniform(rng) < 0.4 ? 0.0 : uniform(rng) * 4.0;
    if (k % 37 == 3) w = 1e6;
    if (k >= 100 && k < 180) w = 0.0;
    row[static_cast<std::size_t>(k)] = stored<T>(w);
  }
  return row;
}

TEST(SequentialRedrawWithinPart, FirstPositiveCategoryPastTheTargetF32) {
  const std::vector<float> row = row_with_zeros<float>(301, 1);
  check_within<float, float>(row, bfly::RowWeights<float>{row.data()}, 11);
}
TEST(SequentialRedrawWithinPart, FirstPositiveCategoryPastTheTargetF64) {
  const std::vector<double> row = row_with_zeros<double>(301, 2);
  check_within<double, double>(row, bfly::RowWeights<double>{row.data()}, 12);
}
TEST(SequentialRedrawWithinPart, FirstPositiveCategoryPastTheTargetBf16) {
  const std::vector<bfly::bf16_bits> row = row_with_zeros<bfly::bf16_bits>(300, 3);
  check_within<bfly::bf16_bits, float>(row, bfly::RowWeights<bfly::bf16_bits>{row.data()}, 13);
}
TEST(SequentialRedrawWithinPart, FirstPositiveCategoryPastTheTargetLogits) {
  // Logits with -inf (weight 0) and values far below the maximum (weights that round to 0).
  std::vector<float> logits = row_with_zeros<float>(257, 4);
  for (float& x : logits) x = x == 0.0f ? -std::numeric_limits<float>::infinity() : (x > 1e5f ? 2.0f : -x * 30.0f);
  const float scale = static_cast<float>(bfly::kLog2e / 0.7);
  check_within<float, float>(logits, bfly::RowLogitWeights<float>{logits.data(), 2.0f, scale}, 14);
}

}  // namespace
