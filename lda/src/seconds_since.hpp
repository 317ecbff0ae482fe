// Internal to bfly_lda: the wall time of a phase, for the progress lines and the iteration's timings.
#pragma once

#include <chrono>

namespace bfly::lda::detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace bfly::lda::detail
