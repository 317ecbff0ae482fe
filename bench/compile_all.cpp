// compile_all: see compile_all.hpp.
#include "compile_all.hpp"

#include "bfly/gen/generate.hpp"
#include "bfly/rt/cache.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

namespace bench {

namespace rt = bfly::rt;
using bfly::gen::KernelSpec;

std::map<std::string, std::string> compile_all(const std::vector<KernelSpec>& specs, const rt::Arch& arch,
                                               int jobs, bool print_resources) {
  const auto start = std::chrono::steady_clock::now();
  const rt::CompileOptions options = rt::default_compile_options(arch);
  rt::nvrtc_version();  // learned once, before the threads start
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(specs.size());
  std::vector<rt::ResourceUsage> resources(specs.size());
  std::vector<double> seconds(specs.size(), 0.0);
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(specs.size())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < specs.size(); i = next++) {
        const auto t0 = std::chrono::steady_clock::now();
        try {
          const rt::CacheLookup lookup = rt::default_cache().get(bfly::gen::generate(specs[i]), options);
          resources[i] = lookup.kernel->resources;
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
        seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
    });
  }
  for (auto& thread : pool) thread.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double busy = 0.0;
  for (double s : seconds) busy += s;
  const rt::CacheStats stats = rt::default_cache().stats();
  fmt::print("compiled {} bfly specs for {} on {} threads in {:.1f} s wall ({:.1f} s of compile threads; "
             "{} built, {} disk hits)\n",
             specs.size(), arch.option(), threads, wall, busy, stats.builds, stats.disk_hits);
  std::map<std::string, std::string> failures;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string name = bfly::gen::kernel_name(specs[i]);
    if (!errors[i].empty()) {
      failures[name] = errors[i];
      fmt::print("  COMPILE FAILED {}: {}\n", name, errors[i]);
    } else if (print_resources) {
      const rt::ResourceUsage& r = resources[i];
      fmt::print("  {:<44} {:>5.2f} s  {:>3} regs  {:>4} B spill st  {:>4} B spill ld  {:>4} B stack  {:>6} B smem\n",
                 name, seconds[i], r.registers, r.spill_store_bytes, r.spill_load_bytes, r.local_bytes,
                 r.static_shared_bytes);
    }
  }
  return failures;
}

}  // namespace bench
