// The plain reference sampler of docs/DESIGN.md section 6 (prefix sums in long double, smallest j with u' < P[j]),
// the draw-for-draw comparison of a kernel's output against it, and the seed of the tests' random inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
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

template <typename T>
ReferenceDraw<T> reference_draw(const T* row, int K, T u) {
  ReferenceDraw<T> ref;
  ref.prefix.resize(static_cast<std::size_t>(K));
  long double sum = 0;
  T sum_t = 0;  // the total in T must not overflow either
  for (int k = 0; k < K; ++k) {
    const T x = row[k];
    if (!(x >= T(0) && x <= std::numeric_limits<T>::max())) return ref;
    sum += x;
    sum_t += x;
    ref.prefix[k] = sum;
  }
  if (!(sum > 0) || !(sum_t <= std::numeric_limits<T>::max())) return ref;
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
// kernel's category: sums of at most K weights in T (block sums, running totals, or the sequential
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
  if (!(row[kernel_draw] > T(0))) {
    *why = "drew category " + std::to_string(kernel_draw) + " whose weight is zero";
    return DrawCheck::wrong;
  }
  if (kernel_draw == ref.draw) return DrawCheck::equal;
  const long double total = ref.prefix[K - 1];
  const long double lo = kernel_draw > 0 ? ref.prefix[kernel_draw - 1] : 0;
  const long double hi = ref.prefix[kernel_draw];
  const long double distance = ref.target < lo ? lo - ref.target : ref.target - hi;
  const long double tolerance = (K + 16.0L) * std::numeric_limits<T>::epsilon() * total;
  if (distance <= tolerance) return DrawCheck::boundary;
  *why = "drew " + std::to_string(kernel_draw) + ", reference " + std::to_string(ref.draw) +
         "; u' is " + std::to_string(static_cast<double>(distance / total)) + " * total away from the drawn category";
  return DrawCheck::wrong;
}

}  // namespace bfly::test
