// The plain reference sampler of docs/DESIGN.md section 6 (prefix sums in long double, smallest j with u' < P[j]),
// the draw-for-draw comparison of a kernel's output against it, and the seed of the tests' random inputs.
#pragma once

#include "bfly/half_types.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

// The uniforms of the kernels: the same Philox text the GPU compiles, here as plain C++.
#ifndef __device__
#define BFLY_REFERENCE_DEFINED_DEVICE
#define __device__
#define __forceinline__ inline
#endif
#include "bfly/philox.cuh"
#ifdef BFLY_REFERENCE_DEFINED_DEVICE
#undef __device__
#undef __forceinline__
#undef BFLY_REFERENCE_DEFINED_DEVICE
#endif

namespace bfly::test {

// The accumulator of an element type and a weight widened to it, exactly as the kernels' bfly::widen does:
// f32 and f64 are their own; f16 and bf16 widen to float.
template <typename T>
struct Accumulator {
  using type = T;
};
template <>
struct Accumulator<bfly::half_bits> {
  using type = float;
};
template <>
struct Accumulator<bfly::bf16_bits> {
  using type = float;
};
template <typename T>
using AccumulatorOf = typename Accumulator<T>::type;

inline float widen_host(float x) { return x; }
inline double widen_host(double x) { return x; }
inline float widen_host(bfly::half_bits x) { return bfly::to_float(x); }
inline float widen_host(bfly::bf16_bits x) { return bfly::to_float(x); }

// A double rounded to the element type (to nearest, ties to even).
template <typename T>
T from_double(double x) {
  if constexpr (std::is_same_v<T, bfly::half_bits>) return bfly::to_half(static_cast<float>(x));
  else if constexpr (std::is_same_v<T, bfly::bf16_bits>) return bfly::to_bf16(static_cast<float>(x));
  else return static_cast<T>(x);
}

// The seed of this run's random inputs: BFLY_TEST_SEED, else fresh; printed once so a failure can be replayed.
inline unsigned long long run_seed() {
  static const unsigned long long seed = [] {
    const char* env = std::getenv("BFLY_TEST_SEED");
    const unsigned long long s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("random inputs from BFLY_TEST_SEED=%llu\n", s);
    return s;
  }();
  return seed;
}

// The reference for one row: -1 for an invalid row, else the category and the scaled uniform it used.
template <typename T>
struct ReferenceDraw {
  int draw = -1;
  long double target = 0;           // u * total, exactly as far as long double goes
  std::vector<long double> prefix;  // prefix[k] = weights 0..k
};

// The weights are widened to the accumulator S first (as the kernels' loads do); the uniform is in S.
template <typename T>
ReferenceDraw<T> reference_draw(const T* row, int K, AccumulatorOf<T> u) {
  using S = AccumulatorOf<T>;
  ReferenceDraw<T> ref;
  ref.prefix.resize(static_cast<std::size_t>(K));
  long double sum = 0;
  S sum_s = 0;  // the total in the accumulator must not overflow either
  for (int k = 0; k < K; ++k) {
    const S x = widen_host(row[k]);
    if (!(x >= S(0) && x <= std::numeric_limits<S>::max())) return ref;
    sum += x;
    sum_s += x;
    ref.prefix[k] = sum;
  }
  if (!(sum > 0) || !(sum_s <= std::numeric_limits<S>::max())) return ref;
  ref.target = static_cast<long double>(u) * sum;
  for (int k = 0; k < K; ++k)
    if (ref.target < ref.prefix[k]) {
      ref.draw = k;
      return ref;
    }
  ref.draw = K - 1;  // u < 1, so only rounding of the last prefix can get here
  return ref;
}

// How a kernel's draw for one row compares with the reference.
enum class DrawCheck { equal, boundary, wrong };

// A differing draw is a boundary case when the reference's u' lies within rounding distance of the
// kernel's category: sums of at most K weights in the accumulator (block sums, running totals, or the sequential
// fallback) differ from exact ones by at most about (K + log2 W terms) * eps * total.
template <typename T>
DrawCheck check_draw(const T* row, int K, int kernel_draw, const ReferenceDraw<T>& ref, std::string* why) {
  if (ref.draw < 0) {
    if (kernel_draw == -1) return DrawCheck::equal;
    *why = "invalid row drawn as " + std::to_string(kernel_draw) + " instead of -1";
    return DrawCheck::wrong;
  }
  if (kernel_draw < 0 || kernel_draw >= K) {
    *why = "draw " + std::to_string(kernel_draw) + " outside [0, K) for a valid row";
    return DrawCheck::wrong;
  }
  if (!(widen_host(row[kernel_draw]) > 0)) {
    *why = "drew category " + std::to_string(kernel_draw) + " whose weight is zero";
    return DrawCheck::wrong;
  }
  if (kernel_draw == ref.draw) return DrawCheck::equal;
  const long double total = ref.prefix[K - 1];
  const long double lo = kernel_draw > 0 ? ref.prefix[kernel_draw - 1] : 0;
  const long double hi = ref.prefix[kernel_draw];
  const long double distance = ref.target < lo ? lo - ref.target : ref.target - hi;
  const long double tolerance = (K + 16.0L) * std::numeric_limits<AccumulatorOf<T>>::epsilon() * total;
  if (distance <= tolerance) return DrawCheck::boundary;
  *why = "drew " + std::to_string(kernel_draw) + ", reference " + std::to_string(ref.draw) +
         "; u' is " + std::to_string(static_cast<double>(distance / total)) + " * total away from the drawn category";
  return DrawCheck::wrong;
}

}  // namespace bfly::test
