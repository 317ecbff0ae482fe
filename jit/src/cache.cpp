#include "bfly/jit/cache.hpp"

#include "bfly/emit/embedded_templates.hpp"
#include "bfly/output_file.hpp"
#include "sha256.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <type_traits>

namespace bfly::rt {
namespace {

constexpr std::string_view kMagic = "BFLYKRNL";
// magic, format version (u32), metadata length (u32), payload length (u64), SHA-256 of metadata + payload.
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 32;

// Little-endian writer of the entry layout.
class Writer {
 public:
  void u32(std::uint32_t value) { integer(value, 4); }
  void u64(std::uint64_t value) { integer(value, 8); }
  void string(std::string_view text) {
    u64(text.size());
    bytes_.append(text);
  }
  void raw(std::string_view bytes) { bytes_.append(bytes); }
  std::string& bytes() { return bytes_; }

 private:
  void integer(std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes_.push_back(static_cast<char>(value >> (8 * i)));
  }
  std::string bytes_;
};

// Reader of the same layout; any read past the end sets ok() to false and returns zeros.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  std::uint32_t u32() { return static_cast<std::uint32_t>(integer(4)); }
  std::uint64_t u64() { return integer(8); }
  std::string_view raw(std::uint64_t size) {
    if (!ok_ || size > bytes_.size()) {
      ok_ = false;
      return {};
    }
    const std::string_view part = bytes_.substr(0, size);
    bytes_.remove_prefix(size);
    return part;
  }
  std::string string() { return std::string(raw(u64())); }
  bool ok() const { return ok_; }
  bool at_end() const { return bytes_.empty(); }

 private:
  std::uint64_t integer(int size) {
    const std::string_view part = raw(size);
    std::uint64_t value = 0;
    for (int i = 0; i < static_cast<int>(part.size()); ++i) value |= std::uint64_t(std::uint8_t(part[i])) << (8 * i);
    return value;
  }
  std::string_view bytes_;
  bool ok_ = true;
};

std::string digest_bytes(std::string_view metadata, std::string_view payload) {
  const auto digest = detail::Sha256().update(metadata).update(payload).digest();
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

// Every field of a LaunchGeometry, in the order the key and the entry hold them. A field added to LaunchGeometry
// must be added here (the static_assert below trips until it is) and bumps kCacheFormatVersion.
template <typename Geometry, typename Visit>
void for_each_geometry_field(Geometry& g, Visit visit) {
  visit(g.threads_per_cta);
  visit(g.rows_per_cta);
  visit(g.chunk_blocks);
  visit(g.chunks);
  visit(g.theta_in_shared);
  visit(g.static_shared_bytes);
  visit(g.blocks_in_flight);
  visit(g.ctas_per_row);
  visit(g.parts_per_row);
}
static_assert(sizeof(gen::LaunchGeometry) == 9 * sizeof(int),  // eight ints and a bool, padded
              "LaunchGeometry changed: update for_each_geometry_field and bump kCacheFormatVersion");

std::string random_suffix() {
  thread_local std::mt19937_64 generator{std::random_device{}() ^ (std::uint64_t(::getpid()) << 32)};
  return fmt::format("{:016x}", generator());
}

}  // namespace

std::string_view name_of(CacheLevel level) {
  switch (level) {
    case CacheLevel::memory: return "memory";
    case CacheLevel::disk: return "disk";
    case CacheLevel::built: return "built";
  }
  return "unknown";
}

CacheKey cache_key(const gen::Source& source, const CompileOptions& options, const NvrtcVersion& nvrtc) {
  const std::string nvrtc_text = fmt::format("{}.{} {}", nvrtc.major, nvrtc.minor, nvrtc.build);
  std::vector<std::string> fields = {
      fmt::format("bfly cache format {}", kCacheFormatVersion),
      fmt::format("bfly {}", gen::bfly_version()),  // a new bfly never loads an older one's kernels
      source.kernel_name,
      source.text,
      source.family,
      nvrtc_text,
      options.arch.option(),
      std::string(gen::embedded_templates_hash()),
  };
  for_each_geometry_field(source.geometry, [&](auto value) { fields.push_back(std::to_string(value)); });
  for (std::string& option : nvrtc_options(options)) fields.push_back(std::move(option));
  detail::Sha256 hash;
  for (const std::string& field : fields) {
    hash.update(field);
    hash.update(std::string_view("\0", 1));  // NUL cannot occur in any field, so the joining is unambiguous
  }
  CacheKey key;
  key.digest = hash.hex_digest();
  key.file_name = fmt::format("{}_{}_nvrtc{}.{}_{}{}", source.kernel_name, options.arch.tag(), nvrtc.major,
                              nvrtc.minor, key.digest.substr(0, 16), kCacheEntryExtension);
  return key;
}

std::string encode_entry(const CacheKey& key, const CompiledKernel& kernel) {
  Writer metadata;
  metadata.string(key.digest);
  metadata.string(kernel.kernel_name);
  metadata.string(kernel.family);
  for_each_geometry_field(kernel.geometry, [&](auto value) { metadata.u32(static_cast<std::uint32_t>(value)); });
  metadata.u32(static_cast<std::uint32_t>(kernel.arch.cc));
  metadata.u32(kernel.arch.cubin ? 1 : 0);
  metadata.u32(static_cast<std::uint32_t>(kernel.options.size()));
  for (const std::string& option : kernel.options) metadata.string(option);
  metadata.string(kernel.log);
  const ResourceUsage& r = kernel.resources;
  for (int value : {r.known ? 1 : 0, r.registers, r.spill_store_bytes, r.spill_load_bytes, r.local_bytes,
                    r.static_shared_bytes}) {
    metadata.u32(static_cast<std::uint32_t>(value));
  }
  Writer entry;
  entry.raw(kMagic);
  entry.u32(kCacheFormatVersion);
  entry.u32(static_cast<std::uint32_t>(metadata.bytes().size()));
  entry.u64(kernel.binary.size());
  entry.raw(digest_bytes(metadata.bytes(), kernel.binary));
  entry.raw(metadata.bytes());
  entry.raw(kernel.binary);
  return std::move(entry.bytes());
}

namespace {

// decode_entry, also giving the key digest the entry was stored under.
std::optional<CompiledKernel> decode(std::string_view bytes, const CacheKey* key, std::string* why,
                                     std::string* stored_digest) {
  const auto reject = [why](std::string reason) -> std::optional<CompiledKernel> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (bytes.size() < kHeaderBytes) return reject(fmt::format("truncated header ({} bytes)", bytes.size()));
  Reader header(bytes.substr(0, kHeaderBytes));
  if (header.raw(kMagic.size()) != kMagic) return reject("not a bfly cache entry (bad magic)");
  const std::uint32_t version = header.u32();
  if (version != kCacheFormatVersion) {
    return reject(fmt::format("format version {} (this bfly reads {})", version, kCacheFormatVersion));
  }
  const std::uint64_t metadata_size = header.u32();
  const std::uint64_t payload_size = header.u64();
  const std::string_view digest = header.raw(32);
  const std::string_view body = bytes.substr(kHeaderBytes);
  if (body.size() != metadata_size + payload_size) {
    return reject(fmt::format("length {} does not match the header's {}", body.size(), metadata_size + payload_size));
  }
  const std::string_view metadata_bytes = body.substr(0, metadata_size);
  const std::string_view payload = body.substr(metadata_size);
  if (digest_bytes(metadata_bytes, payload) != digest) return reject("content does not match its SHA-256");

  Reader metadata(metadata_bytes);
  CompiledKernel kernel;
  const std::string stored_key = metadata.string();
  kernel.kernel_name = metadata.string();
  kernel.family = metadata.string();
  for_each_geometry_field(kernel.geometry, [&](auto& field) {
    field = static_cast<std::remove_reference_t<decltype(field)>>(static_cast<int>(metadata.u32()));
  });
  kernel.arch.cc = static_cast<int>(metadata.u32());
  kernel.arch.cubin = metadata.u32() != 0;
  const std::uint32_t option_count = metadata.u32();
  for (std::uint32_t i = 0; i < option_count && metadata.ok(); ++i) kernel.options.push_back(metadata.string());
  kernel.log = metadata.string();
  ResourceUsage& r = kernel.resources;
  r.known = metadata.u32() != 0;
  for (int* field : {&r.registers, &r.spill_store_bytes, &r.spill_load_bytes, &r.local_bytes,
                     &r.static_shared_bytes}) {
    *field = static_cast<int>(metadata.u32());
  }
  if (!metadata.ok() || !metadata.at_end()) return reject("metadata does not parse");
  if (key != nullptr && stored_key != key->digest) return reject("entry belongs to another key");
  kernel.binary = std::string(payload);
  if (stored_digest != nullptr) *stored_digest = stored_key;
  return kernel;
}

}  // namespace

std::optional<CompiledKernel> decode_entry(std::string_view bytes, const CacheKey* key, std::string* why) {
  return decode(bytes, key, why, nullptr);
}

std::optional<CompiledKernel> decode_stored_entry(std::string_view bytes, std::string_view name, std::string* why) {
  std::string digest;
  std::optional<CompiledKernel> kernel = decode(bytes, nullptr, why, &digest);
  if (!kernel) return kernel;
  // The name cache_key gives this entry, but for the NVRTC version, which the entry does not record (an entry of
  // another NVRTC is intact, only not this bfly's).
  const std::string prefix = fmt::format("{}_{}_nvrtc", kernel->kernel_name, kernel->arch.tag());
  const std::string suffix = fmt::format("_{}{}", digest.substr(0, 16), kCacheEntryExtension);
  if (!name.starts_with(prefix) || !name.ends_with(suffix) || name.size() < prefix.size() + suffix.size()) {
    if (why != nullptr) {
      *why = fmt::format("holds {} for {} under key {}, which is not the entry this name stands for "
                         "(expected {}*{})",
                         kernel->kernel_name, kernel->arch.option(), digest.substr(0, 16), prefix, suffix);
    }
    return std::nullopt;
  }
  return kernel;
}

std::optional<std::string> DirectoryStorage::load(const std::string& name) noexcept {
  try {
    std::ifstream file(directory_ / name, std::ios::binary);
    if (!file) return std::nullopt;
    std::ostringstream bytes;
    bytes << file.rdbuf();
    if (file.bad()) return std::nullopt;
    return std::move(bytes).str();
  } catch (...) {
    return std::nullopt;
  }
}

std::vector<std::string> DirectoryStorage::list() const {
  std::vector<std::string> names;
  std::error_code error;
  if (!std::filesystem::is_directory(directory_, error)) return names;
  for (auto file = std::filesystem::directory_iterator(directory_, error);
       !error && file != std::filesystem::directory_iterator(); file.increment(error)) {
    const std::string name = file->path().filename().string();
    const bool ours = name.ends_with(kCacheEntryExtension) || name.ends_with(".bfly.cu") ||
                      (name.starts_with(".") && name.ends_with(".tmp"));
    std::error_code not_regular;
    if (ours && file->is_regular_file(not_regular)) names.push_back(name);
  }
  if (error) throw Error(fmt::format("cannot list cache directory {}: {}", directory_.string(), error.message()));
  std::sort(names.begin(), names.end());
  return names;
}

void DirectoryStorage::remove(const std::string& name) {
  std::error_code error;
  if (!std::filesystem::remove(directory_ / name, error) && error) {
    throw Error(fmt::format("cannot remove {}: {}", (directory_ / name).string(), error.message()));
  }
}

void DirectoryStorage::save(const std::string& name, std::string_view bytes) {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) {
    throw Error(fmt::format("cannot create cache directory {}: {}", directory_.string(), error.message()));
  }
  // A uniquely named file in the same directory, renamed over the entry: readers see the old entry or the new
  // one, never a partial file, and concurrent writers of one entry each publish a whole copy.
  const std::filesystem::path temporary = directory_ / fmt::format(".{}.{}.tmp", name, random_suffix());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error(fmt::format("cannot write in cache directory {}: {}", directory_.string(), std::strerror(errno)));
  }
  try {
    write_all(fd, bytes.data(), bytes.size(), temporary.string());  // "<file>: cannot write: disk full", ...
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::close(fd) != 0 || ::rename(temporary.c_str(), (directory_ / name).c_str()) != 0) {
    const int code = errno;
    ::unlink(temporary.c_str());
    throw Error(fmt::format("cannot publish {}: {}", (directory_ / name).string(), std::strerror(code)));
  }
}

KernelCache::KernelCache(std::unique_ptr<CacheStorage> disk, bool save_source)
    : disk_(std::move(disk)), save_source_(save_source) {}

std::shared_ptr<const CompiledKernel> KernelCache::try_load(const CacheKey& key, CacheLevel* level) noexcept {
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = memory_.find(key.digest); found != memory_.end()) {
      ++stats_.memory_hits;
      if (level != nullptr) *level = CacheLevel::memory;
      return found->second;
    }
    ++stats_.memory_misses;
  }
  std::optional<CompiledKernel> kernel;
  bool rejected = false;
  if (disk_enabled()) {
    if (const std::optional<std::string> bytes = disk_->load(key.file_name)) {
      kernel = decode_entry(*bytes, &key);
      rejected = !kernel.has_value();
    }
  }
  const std::lock_guard lock(mutex_);
  if (!kernel) {
    ++stats_.disk_misses;
    if (rejected) ++stats_.disk_rejected;
    return nullptr;
  }
  ++stats_.disk_hits;
  if (level != nullptr) *level = CacheLevel::disk;
  // Another thread may have stored the same kernel meanwhile; keep the first so every caller shares one.
  return memory_.emplace(key.digest, std::make_shared<const CompiledKernel>(std::move(*kernel))).first->second;
}

CacheLookup KernelCache::get(const gen::Source& source, const CompileOptions& options) {
  return get(source, options, cache_key(source, options));
}

CacheLookup KernelCache::get(const gen::KernelSpec& spec, const CompileOptions& options) {
  std::string memo = gen::kernel_name(spec);
  for (const std::string& option : nvrtc_options(options)) (memo += '\0') += option;
  {
    const std::lock_guard lock(mutex_);
    if (const auto key = spec_keys_.find(memo); key != spec_keys_.end())
      if (const auto hit = memory_.find(key->second.digest); hit != memory_.end()) {
        ++stats_.memory_hits;
        return CacheLookup{hit->second, CacheLevel::memory, locate(key->second)};
      }
  }
  const gen::Source source = gen::generate(spec);
  const CacheKey key = cache_key(source, options);
  CacheLookup lookup = get(source, options, key);
  const std::lock_guard lock(mutex_);
  spec_keys_.emplace(std::move(memo), key);
  return lookup;
}

CacheLookup KernelCache::get(const gen::Source& source, const CompileOptions& options, const CacheKey& key) {
  CacheLookup lookup;
  lookup.entry = locate(key);
  if ((lookup.kernel = try_load(key, &lookup.level))) return lookup;
  // Threads (and processes) that miss together each compile; the results are identical and the first stays.
  auto built = std::make_shared<const CompiledKernel>(compile(source, options));
  if (disk_enabled()) store_on_disk(key, source, *built);
  const std::lock_guard lock(mutex_);
  ++stats_.builds;
  lookup.kernel = memory_.emplace(key.digest, std::move(built)).first->second;
  lookup.level = CacheLevel::built;
  lookup.entry = locate(key);
  return lookup;
}

void KernelCache::store_on_disk(const CacheKey& key, const gen::Source& source, const CompiledKernel& kernel) {
  try {
    disk_->save(key.file_name, encode_entry(key, kernel));
    if (save_source_) disk_->save(key.file_name + ".cu", source.text);
    const std::lock_guard lock(mutex_);
    ++stats_.disk_writes;
  } catch (const Error& error) {
    if (disk_usable_.exchange(false)) {
      warn_once(fmt::format("{}; the kernel cache keeps compiled kernels in memory only for this process "
                            "(set BFLY_CACHE_DIR to a writable directory, or BFLY_CACHE=0 to silence this)",
                            error.what()));
    }
  }
}

CacheStats KernelCache::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

std::string KernelCache::locate(const CacheKey& key) const {
  return disk_enabled() ? disk_->locate(key.file_name) : std::string();
}

std::unique_ptr<DirectoryStorage> storage_from_environment(const Environment& env) {
  if (!env.disk_cache) return nullptr;
  if (!env.cache_dir) {
    warn_once("no cache directory (BFLY_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset); "
              "the kernel cache keeps compiled kernels in memory only");
    return nullptr;
  }
  return std::make_unique<DirectoryStorage>(*env.cache_dir);
}

KernelCache& default_cache() {
  static KernelCache cache(storage_from_environment(environment()), environment().save_source);
  return cache;
}

}  // namespace bfly::rt
