// The library side of `bfly-gen inspect` and `bfly-gen cache list|clear`: compile one spec through the cache and
// report its resources; list and clear the disk cache.
#pragma once

#include "bfly/spec/kernel_spec.hpp"
#include "bfly/jit/cache.hpp"
#include "bfly/jit/compile.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bfly::rt {

struct KernelReport {
  std::string kernel_name;
  gen::KernelSpec spec;     // default for a source without one (an LDA baseline)
  std::string description;  // gen::describe(source): the spec, or what the kernel is
  Arch arch;
  std::vector<std::string> options;
  ResourceUsage resources;  // known is false for a PTX target (only the driver compiles it)
  std::string cache_entry;  // path of the disk entry; empty when the disk cache is off
  CacheLevel level = CacheLevel::built;  // where the kernel came from
  CacheStats stats;         // of default_cache(), after this lookup
};

// Compiles `spec` through default_cache() for `arch` ("sm_90", "compute_90"); without it, for the current
// device; without a device, throws bfly::Error asking for --arch.
KernelReport inspect(const gen::KernelSpec& spec, const std::optional<std::string>& arch);

// The same for any generated source (an LDA baseline of gen::generate_lda_baseline).
KernelReport inspect(const gen::Source& source, const std::optional<std::string>& arch);

// Human-readable report, as `bfly-gen inspect` prints it.
std::string format_report(const KernelReport& report);

struct CacheEntryInfo {
  std::filesystem::path path;
  std::uintmax_t bytes = 0;
  bool valid = false;
  std::string problem;      // why the entry would be rejected (when !valid)
  std::string kernel_name;  // the rest only when valid
  Arch arch;
  ResourceUsage resources;
};

// The directory default_cache() uses (from the environment); nullopt when the disk cache is off.
std::optional<std::filesystem::path> cache_directory();

// Every entry of the cache directory, sorted by file name (empty when the directory is absent or disk is off).
std::vector<CacheEntryInfo> list_cache();

// Human-readable table of list_cache(), as `bfly-gen cache list` prints it.
std::string format_cache_list(const std::vector<CacheEntryInfo>& entries);

// Removes every entry, saved source and leftover temporary file of the cache directory; returns how many
// entries (.bfly files) it removed. Throws bfly::Error when a file cannot be removed.
std::size_t clear_cache();

}  // namespace bfly::rt
