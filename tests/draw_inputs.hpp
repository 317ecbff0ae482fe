// The weight inputs the draw-for-draw tests run every row kernel on (test_draws.cpp, test_k_range_draws.cpp):
// typical weights, mostly zeros, magnitudes far apart, and one positive weight per row.
#pragma once

#include "reference_sampler.hpp"

#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace bfly::test {

enum class Input { random, many_zeros, huge_range, one_nonzero };
inline constexpr Input kInputs[] = {Input::random, Input::many_zeros, Input::huge_range, Input::one_nonzero};

inline const char* name_of(Input input) {
  switch (input) {
    case Input::random: return "random";
    case Input::many_zeros: return "many-zeros";
    case Input::huge_range: return "huge-range";
    default: return "one-nonzero";
  }
}

// `rows` rows of K weights at stride ld, NaN past K. The huge range puts tiny next to huge weights: 1e-30 and 1e30,
// or for f16 (6e-8 subnormal .. 65504) 1e-7 and 1e4; one-nonzero gives every third row a tiny weight.
template <typename T>
std::vector<T> make_weights(Input input, long long rows, int K, long long ld, std::mt19937_64& rng) {
  constexpr bool half = std::is_same_v<T, bfly::half_bits>;
  const double tiny = half ? 1e-7 : 1e-30, huge = half ? 1e4 : 1e30;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> w(static_cast<std::size_t>(rows * ld), from_double<T>(std::numeric_limits<double>::quiet_NaN()));
  for (long long row = 0; row < rows; ++row) {
    T* x = &w[static_cast<std::size_t>(row * ld)];
    for (int k = 0; k < K; ++k) {
      const double v = unit(rng);
      switch (input) {
        case Input::random: x[k] = from_double<T>(v + 1e-3); break;
        case Input::many_zeros: x[k] = from_double<T>(unit(rng) < 0.8 ? 0.0 : v); break;
        case Input::huge_range: {
          const double p = unit(rng);
          x[k] = from_double<T>(p < 0.2 ? 0.0 : (p < 0.6 ? tiny : huge) * (v + 0.01));
          break;
        }
        case Input::one_nonzero: x[k] = from_double<T>(0.0); break;
      }
    }
    if (input == Input::one_nonzero)
      x[rng() % K] = from_double<T>(row % 3 == 0 ? tiny * (unit(rng) + 0.5) : unit(rng) + 0.5);
  }
  return w;
}

}  // namespace bfly::test
