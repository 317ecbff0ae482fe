// `bfly-gen demo`: draws from a built-in set of example distributions with the kernel of gen::example_spec() and
// prints observed against expected frequencies. On the GPU through bfly::rt::Sampler when there is one; otherwise
// the very same generated source runs on the CPU (bfly/lockstep.hpp), with the same draws for the same seeds.
#pragma once

#include <cstdint>
#include <iosfwd>

namespace bfly::cli {

inline constexpr long long kGpuDraws = 1000000;
inline constexpr long long kCpuDraws = 100000;  // 700k rows of K = 1024: about 20 s on 2 cores

struct DemoOptions {
  long long draws = 0;        // per distribution; 0: kGpuDraws on a GPU, kCpuDraws on the CPU
  std::uint64_t seed = 2026;  // first of the seeds, one per batch of rows
  bool force_cpu = false;     // run on the CPU even when a GPU is there
};

// Returns 0 when every check held (no zero-weight category drawn, invalid rows reported as such), else 1.
// Throws bfly::Error when the GPU path fails.
int run_demo(const DemoOptions& options, std::ostream& out);

}  // namespace bfly::cli
