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
#include <string_view>
#include <vector>

namespace bfly::rt {

struct KernelReport {
  std::string kernel_name;
  gen::KernelSpec spec;     // the source's; default for a source without one (an LDA baseline)
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
  std::string name;             // the entry's name in its storage (the file name)
  std::filesystem::path path;   // where it is (CacheStorage::locate)
  std::uintmax_t bytes = 0;
  bool valid = false;
  std::string problem;      // why the runtime would reject the entry (when !valid): damaged, stale, or misnamed
  std::string kernel_name;  // the rest only when valid
  Arch arch;
  ResourceUsage resources;
};

// The directory default_cache() uses (from the environment); nullopt when the disk cache is off.
std::optional<std::filesystem::path> cache_directory();

// Every entry of `storage`, sorted by name. An entry is valid when the runtime would load it under its name:
// intact (decode_entry) and holding the kernel, architecture and key its name stands for (decode_stored_entry).
std::vector<CacheEntryInfo> list_cache(CacheStorage& storage);

// The same for the storage default_cache() uses (storage_from_environment(environment())); empty when the
// directory is absent or the disk cache is off.
std::vector<CacheEntryInfo> list_cache();

// Human-readable table of entries found at `location`, as `bfly-gen cache list` prints it.
std::string format_cache_list(const std::vector<CacheEntryInfo>& entries, std::string_view location);

// The same with the environment's cache directory as the location (or a line saying the disk cache is off).
std::string format_cache_list(const std::vector<CacheEntryInfo>& entries);

// Removes everything list() names in `storage`: entries, saved sources, leftover temporary files; returns how
// many entries it removed. Throws bfly::Error when one cannot be removed.
std::size_t clear_cache(CacheStorage& storage);

// The same for the storage default_cache() uses; 0 when the disk cache is off.
std::size_t clear_cache();

}  // namespace bfly::rt
