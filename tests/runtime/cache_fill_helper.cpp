// Helper process of cache_test: fills a cache with one generated kernel and checks what it got.
// Usage: bfly_cache_fill_helper <K> directory <dir>   (a KernelCache on DirectoryStorage(<dir>))
//        bfly_cache_fill_helper <K> environment       (default_cache(), configured by BFLY_* variables)
// Prints "<level> <entry>" and exits 0 when a valid kernel resulted, 1 otherwise.
#include "bfly/emit/generate.hpp"
#include "bfly/jit/cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  try {
    if (argc < 3) throw std::runtime_error("usage: bfly_cache_fill_helper <K> directory <dir> | environment");
    bfly::gen::KernelSpec spec;
    spec.K = std::atoi(argv[1]);
    const std::string mode = argv[2];
    std::unique_ptr<bfly::rt::KernelCache> own;
    if (mode == "directory" && argc == 4) {
      own = std::make_unique<bfly::rt::KernelCache>(std::make_unique<bfly::rt::DirectoryStorage>(argv[3]));
    } else if (mode != "environment") {
      throw std::runtime_error("unknown mode " + mode);
    }
    bfly::rt::KernelCache& cache = own ? *own : bfly::rt::default_cache();
    const bfly::rt::CacheLookup lookup =
        cache.get(bfly::gen::generate(spec), bfly::rt::CompileOptions{bfly::rt::parse_arch("sm_90"), false});
    if (lookup.kernel == nullptr || lookup.kernel->binary.empty()) throw std::runtime_error("no kernel");
    std::printf("%s %s\n", std::string(bfly::rt::name_of(lookup.level)).c_str(), lookup.entry.c_str());
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bfly_cache_fill_helper: %s\n", error.what());
    return 1;
  }
}
