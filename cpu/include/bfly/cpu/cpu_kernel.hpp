// A generated kernel compiled as C++ for the CPU (bfly/lockstep.hpp), and the one way to run it: with the same
// gen::PackedArgs that the GPU launch takes, over the grid its launch geometry gives.
#pragma once

#include "bfly/spec/kernel_args.hpp"
#include "bfly/spec/kernel_family.hpp"

#include <limits>
#include <string_view>

#include "bfly/error.hpp"

namespace bfly::cpu {

struct CpuKernel {
  std::string_view name;          // the kernel's extern "C" name
  std::string_view family;        // gen::family(family) describes its arguments
  gen::LaunchGeometry geometry;   // the launch it was generated for
  // Runs `grid` CTAs of `threads` threads on `workers` OS threads (0: BFLY_LOCKSTEP_THREADS, else every core),
  // reading argument i from *args[i] as gen::PackedArgs lays it out. Written by gen::cpu_launcher.
  void (*launch)(long long workers, unsigned int grid, unsigned int threads, void** args);
};

// Runs `kernel` over args.items() items (nothing for 0) with its geometry, the CTAs spread over `workers` OS
// threads (0: the default). The results do not depend on `workers`.
inline void run(const CpuKernel& kernel, gen::PackedArgs& args, long long workers = 0) {
  if (args.family().name != kernel.family)
    throw Error(std::string(kernel.name) + ": arguments packed for the " + std::string(args.family().name) +
                " family, but the kernel is of the " + std::string(kernel.family) + " family");
  const long long items = args.items();
  if (items == 0) return;
  const long long grid = kernel.geometry.grid_for_rows(items);
  if (grid > std::numeric_limits<int>::max())
    throw Error(std::string(kernel.name) + ": " + std::to_string(items) + " items need " + std::to_string(grid) +
                " CTAs, more than a grid holds");
  kernel.launch(workers, static_cast<unsigned int>(grid), static_cast<unsigned int>(kernel.geometry.threads_per_cta),
                args.data());
}

}  // namespace bfly::cpu
