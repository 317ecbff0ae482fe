// compile_timing: cold compile (generate + NVRTC + load), disk-cache hit and memory-cache hit times for
// K = 64, 1024, 4096 on the current device (targets: < 0.5 s, < 2 ms, < 20 us). Not a test; run it on
// the GPU machine: `compile_timing [repetitions]`. Uses a fresh temporary cache directory, never the user's.
#include "bfly/emit/generate.hpp"
#include "bfly/jit/cache.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/module.hpp"
#include "bfly/ops/sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_of(const std::function<void()>& step) {
  const auto start = Clock::now();
  step();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bfly;
  const int repetitions = argc > 1 ? std::max(3, std::atoi(argv[1])) : 7;
  try {
    std::string why;
    if (!rt::gpu_available(&why)) {
      fmt::print(stderr, "compile_timing needs a GPU: {}\n", why);
      return 1;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "bfly-timing-XXXXXX").string();
    const std::filesystem::path directory = ::mkdtemp(pattern.data());
    const rt::CompileOptions options = rt::default_compile_options(rt::current_device_arch());
    rt::nvrtc_version();  // learned once per process; not part of any measurement below
    rt::load(*rt::KernelCache(nullptr).get(gen::generate(gen::KernelSpec{}), options).kernel);  // warm NVRTC, driver

    fmt::print("device arch {}, NVRTC {}.{} ({}), median of {} runs except cold\n", options.arch.option(),
               rt::nvrtc_version().major, rt::nvrtc_version().minor, rt::nvrtc_version().build, repetitions);
    fmt::print("{:>6} {:>6} {:>12} {:>14} {:>16} {:>18} {:>16}\n", "K", "type", "cold (ms)", "disk hit (ms)",
               "memory hit (us)", "source+load (us)", "Sampler hit (us)");
    for (const gen::ElementType type : {gen::ElementType::f32, gen::ElementType::f64}) {
      for (const int K : {64, 1024, 4096}) {
        const gen::KernelSpec spec = gen::choose_sample_spec(K, type, {});
        // Cold: generate + NVRTC + write the entry + load, into an empty cache (median of 3 empty directories;
        // the last one stays for the disk hits below).
        std::vector<double> colds;
        for (int i = 0; i < 3; ++i) {
          std::filesystem::remove_all(directory);
          colds.push_back(seconds_of([&] {
            rt::KernelCache cache(std::make_unique<rt::DirectoryStorage>(directory));
            rt::load(*cache.get(gen::generate(spec), options).kernel);
          }));
        }
        const double cold = median(colds);
        // Disk hit: a new cache object (a new process, as far as memory goes) reads and checks the entry, loads.
        std::vector<double> disk, memory, memory_load, sampler_hit;
        rt::KernelCache warm(std::make_unique<rt::DirectoryStorage>(directory));
        for (int i = 0; i < repetitions; ++i) {
          disk.push_back(seconds_of([&] {
            rt::KernelCache cache(std::make_unique<rt::DirectoryStorage>(directory));
            const rt::CacheLookup lookup = cache.get(gen::generate(spec), options);
            if (lookup.level != rt::CacheLevel::disk) throw Error("expected a disk hit");
            rt::load(*lookup.kernel);
          }));
        }
        warm.get(spec, options);
        for (int i = 0; i < repetitions; ++i) {
          // Memory hit by spec: the remembered key finds the compiled kernel (no generate, no hashing).
          memory.push_back(seconds_of([&] { warm.get(spec, options); }));
          // Memory hit by source: generate the source, compute the key, find the compiled kernel, load it.
          memory_load.push_back(seconds_of([&] { rt::load(*warm.get(gen::generate(spec), options).kernel); }));
        }
        // Sampler hit: a later call of one Sampler for the same K finds its loaded kernel. Timed with a one-row
        // launch, asynchronous since the invalid-row report is off: kernel lookup + cuLaunchKernel.
        rt::SamplerOptions asynchronous;
        asynchronous.report_invalid_rows = false;
        rt::Sampler sampler(asynchronous);
        rt::DeviceBuffer weights(static_cast<std::size_t>(K) * gen::size_of(type));
        rt::DeviceBuffer out(sizeof(int));
        const auto sample = [&] {
          if (type == gen::ElementType::f32) {
            sampler.sample(reinterpret_cast<const float*>(weights.get()), 1, K, K, reinterpret_cast<int*>(out.get()), 1);
          } else {
            sampler.sample(reinterpret_cast<const double*>(weights.get()), 1, K, K, reinterpret_cast<int*>(out.get()), 1);
          }
        };
        sample();
        for (int i = 0; i < repetitions; ++i) sampler_hit.push_back(seconds_of(sample));
        rt::check(rt::driver().StreamSynchronize(nullptr), "cuStreamSynchronize");
        fmt::print("{:>6} {:>6} {:>12.1f} {:>14.3f} {:>16.1f} {:>18.1f} {:>16.1f}\n", K, gen::name_of(type),
                   cold * 1e3, median(disk) * 1e3, median(memory) * 1e6, median(memory_load) * 1e6,
                   median(sampler_hit) * 1e6);
      }
    }
    std::filesystem::remove_all(directory);
    fmt::print("memory hit = KernelCache::get(spec) after the first; source+load = generate + key + lookup + module "
               "load; Sampler hit = its per-spec kernel map plus an asynchronous one-row launch\n");
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "compile_timing: {}\n", error.what());
    return 1;
  }
}
