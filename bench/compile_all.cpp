// compile_all: see compile_all.hpp.
#include "compile_all.hpp"

#include "bfly/emit/generate.hpp"
#include "bfly/jit/cache.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <thread>

namespace bench {

namespace rt = bfly::rt;
using bfly::gen::KernelSpec;
using bfly::gen::LdaBaselineSpec;

namespace {

// One kernel to compile: its name, and its generation (run on a compile thread).
struct Kernel {
  std::string name;
  std::function<bfly::gen::Source()> generate;
};

}  // namespace

std::map<std::string, std::string> compile_all(const std::vector<KernelSpec>& specs, const rt::Arch& arch,
                                               int jobs, bool print_resources) {
  return compile_all(specs, {}, arch, jobs, print_resources);
}

std::map<std::string, std::string> compile_all(const std::vector<KernelSpec>& specs,
                                               const std::vector<LdaBaselineSpec>& baselines, const rt::Arch& arch,
                                               int jobs, bool print_resources) {
  std::vector<Kernel> kernels;
  for (const KernelSpec& spec : specs)
    kernels.push_back({bfly::gen::kernel_name(spec), [spec] { return bfly::gen::generate(spec); }});
  for (const LdaBaselineSpec& spec : baselines)
    kernels.push_back({bfly::gen::kernel_name(spec), [spec] { return bfly::gen::generate_lda_baseline(spec); }});
  const auto start = std::chrono::steady_clock::now();
  const rt::CompileOptions options = rt::default_compile_options(arch);
  rt::nvrtc_version();  // learned once, before the threads start
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(kernels.size());
  std::vector<rt::ResourceUsage> resources(kernels.size());
  std::vector<double> seconds(kernels.size(), 0.0);
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(kernels.size())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < kernels.size(); i = next++) {
        const auto t0 = std::chrono::steady_clock::now();
        try {
          const rt::CacheLookup lookup = rt::default_cache().get(kernels[i].generate(), options);
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
  fmt::print("compiled {} kernels for {} on {} threads in {:.1f} s wall ({:.1f} s of compile threads; "
             "{} built, {} disk hits)\n",
             kernels.size(), arch.option(), threads, wall, busy, stats.builds, stats.disk_hits);
  std::map<std::string, std::string> failures;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const std::string& name = kernels[i].name;
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
