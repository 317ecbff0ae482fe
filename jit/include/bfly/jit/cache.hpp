// The kernel cache: compiled kernels kept in memory (per process, thread-safe) and on disk (shared by processes),
// under one key computed in one place.
//
// Contracts: try_load never throws for a missing or bad entry (it is a miss); get throws only when no kernel can
// result (CompileError, or an NVRTC failure); a disk that cannot be written degrades the cache to memory-only
// with one warning. A disk entry checks itself (magic, format version, lengths, SHA-256 of its content, its
// full key): anything that does not check out is a miss, rebuilt and replaced, never loaded. Entries are
// published atomically (unique temporary file in the same directory, then rename), readers never lock, and
// several processes may fill one directory at once (at worst they compile the same kernel twice).
#pragma once

#include "bfly/emit/generate.hpp"
#include "bfly/jit/compile.hpp"
#include "bfly/jit/environment.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace bfly::rt {

// Bumped whenever the entry layout or the meaning of a key field changes.
// Version 2: entries and keys hold the kernel's family and launch geometry.
// Version 3: the geometry holds ctas_per_row and parts_per_row (sample_split).
inline constexpr int kCacheFormatVersion = 3;

// How every entry's name ends ("<kernel>_sm90_nvrtc13.0_<16 digits>.bfly"); a saved source adds ".cu".
inline constexpr std::string_view kCacheEntryExtension = ".bfly";

struct CacheKey {
  std::string digest;     // 64 hex digits: SHA-256 of the key fields; the memory key and the disk key
  std::string file_name;  // "<kernel>_sm90_nvrtc13.0_<first 16 digits>.bfly"
};

// The one function that composes a key: kernel name, full generated source, family and every field of the launch
// geometry, NVRTC option list, NVRTC version and build, architecture, templates hash, bfly version and cache format
// version, joined by NUL (which none of them contains).
CacheKey cache_key(const gen::Source& source, const CompileOptions& options,
                   const NvrtcVersion& nvrtc = nvrtc_version());

// Serialised entry: fixed header (magic, format version, metadata and payload lengths, SHA-256 of both) followed
// by the metadata (key, kernel name, family, launch geometry, arch, options, log, resources) and the payload
// (cubin or PTX).
std::string encode_entry(const CacheKey& key, const CompiledKernel& kernel);

// The kernel stored in `bytes` if the entry is intact and belongs to `key` (any key when null); otherwise
// nullopt with the reason in *why. Never throws.
std::optional<CompiledKernel> decode_entry(std::string_view bytes, const CacheKey* key, std::string* why = nullptr);

// The kernel stored in `bytes`, found under the entry name `name`, if the entry is intact and is the one that name
// stands for (its kernel name, architecture and key digest are those of the name; the runtime looks entries up
// by name and rejects any other); otherwise nullopt with the reason in *why. Never throws.
std::optional<CompiledKernel> decode_stored_entry(std::string_view bytes, std::string_view name,
                                                  std::string* why = nullptr);

// Where disk entries live: the one interface the cache, `cache list` and `cache clear` go through, so tests can
// substitute their own.
class CacheStorage {
 public:
  virtual ~CacheStorage() = default;
  // The bytes stored under `name`, or nullopt when there are none or they cannot be read. Never throws.
  virtual std::optional<std::string> load(const std::string& name) noexcept = 0;
  // Publishes `bytes` under `name` atomically; throws bfly::Error when it cannot.
  virtual void save(const std::string& name, std::string_view bytes) = 0;
  // How to find `name` (a path for a directory), for reports.
  virtual std::string locate(const std::string& name) const = 0;
  // Every name stored, sorted: entries (ending in kCacheEntryExtension), saved sources ("<entry>.cu") and
  // whatever else of the cache's the storage holds (a directory's temporary files from an interrupted save).
  // Empty when nothing was ever stored (a directory not yet created); throws bfly::Error when it cannot be read.
  virtual std::vector<std::string> list() const = 0;
  // Removes what is stored under `name` (nothing when there is none); throws bfly::Error when it cannot.
  virtual void remove(const std::string& name) = 0;
};

// Entries as files of one directory, created on first save. list() names the directory's entries, saved
// sources and leftover temporary files, nothing else in it.
class DirectoryStorage final : public CacheStorage {
 public:
  explicit DirectoryStorage(std::filesystem::path directory) : directory_(std::move(directory)) {}
  std::optional<std::string> load(const std::string& name) noexcept override;
  void save(const std::string& name, std::string_view bytes) override;
  std::string locate(const std::string& name) const override { return (directory_ / name).string(); }
  std::vector<std::string> list() const override;
  void remove(const std::string& name) override;
  const std::filesystem::path& directory() const { return directory_; }

 private:
  std::filesystem::path directory_;
};

enum class CacheLevel { memory, disk, built };
std::string_view name_of(CacheLevel level);  // "memory", "disk", "built"

// Hit and miss counters per level, since the cache was made.
struct CacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t memory_misses = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t disk_misses = 0;     // no entry, or disk off
  std::uint64_t disk_rejected = 0;   // entries present but damaged or stale (counted in disk_misses too)
  std::uint64_t disk_writes = 0;
  std::uint64_t builds = 0;
};

struct CacheLookup {
  std::shared_ptr<const CompiledKernel> kernel;
  CacheLevel level = CacheLevel::built;
  std::string entry;  // where the disk entry is (empty for a memory-only cache)
};

class KernelCache {
 public:
  // `disk` null: memory only. `save_source`: also store the source as "<entry>.cu".
  explicit KernelCache(std::unique_ptr<CacheStorage> disk, bool save_source = false);

  // Memory, then disk, then NVRTC (storing the result in both). Throws CompileError when the source does not
  // compile, bfly::Error when NVRTC fails otherwise.
  CacheLookup get(const gen::Source& source, const CompileOptions& options);

  // The same for the kernel of `spec`. A spec's generated source never changes within a process, so after the
  // first call the key is remembered and a memory hit needs neither generating the source nor hashing it.
  CacheLookup get(const gen::KernelSpec& spec, const CompileOptions& options);

  // The kernel under `key` from memory or disk (then also kept in memory), or null. Never throws.
  std::shared_ptr<const CompiledKernel> try_load(const CacheKey& key, CacheLevel* level = nullptr) noexcept;

  CacheStats stats() const;
  bool disk_enabled() const { return disk_ != nullptr && disk_usable_.load(); }
  std::string locate(const CacheKey& key) const;  // empty for a memory-only cache

 private:
  CacheLookup get(const gen::Source& source, const CompileOptions& options, const CacheKey& key);
  void store_on_disk(const CacheKey& key, const gen::Source& source, const CompiledKernel& kernel);

  std::unique_ptr<CacheStorage> disk_;
  bool save_source_;
  std::atomic<bool> disk_usable_{true};
  mutable std::mutex mutex_;  // guards memory_ and stats_
  std::unordered_map<std::string, std::shared_ptr<const CompiledKernel>> memory_;
  std::unordered_map<std::string, CacheKey> spec_keys_;  // kernel name + options -> key of its source
  CacheStats stats_;
};

// The disk storage the environment asks for (BFLY_CACHE, BFLY_CACHE_DIR ...), or null for memory only.
std::unique_ptr<DirectoryStorage> storage_from_environment(const Environment& env);

// The process-wide cache, made from environment() on first use.
KernelCache& default_cache();

}  // namespace bfly::rt
