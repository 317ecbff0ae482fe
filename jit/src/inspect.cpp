#include "bfly/jit/inspect.hpp"

#include "bfly/emit/generate.hpp"
#include "bfly/jit/driver.hpp"
#include "bfly/jit/environment.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

namespace bfly::rt {
namespace {

Arch arch_for_inspect(const std::optional<std::string>& arch) {
  if (arch) return parse_arch(*arch);
  std::string why;
  if (!gpu_available(&why)) {
    throw Error(fmt::format("no architecture given and no device to read it from ({}); pass --arch sm_90 "
                            "(or another of: {})",
                            why, fmt::join(nvrtc_supported_archs(), ", ")));
  }
  return current_device_arch();
}

}  // namespace

KernelReport inspect(const gen::KernelSpec& spec, const std::optional<std::string>& arch) {
  spec.validate();
  return inspect(gen::generate(spec), arch);
}

KernelReport inspect(const gen::Source& source, const std::optional<std::string>& arch) {
  const CompileOptions options = default_compile_options(arch_for_inspect(arch));
  const CacheLookup lookup = default_cache().get(source, options);
  KernelReport report;
  report.kernel_name = lookup.kernel->kernel_name;
  report.spec = source.spec;
  report.description = gen::describe(source);
  report.arch = lookup.kernel->arch;
  report.options = lookup.kernel->options;
  report.resources = lookup.kernel->resources;
  report.cache_entry = lookup.entry;
  report.level = lookup.level;
  report.stats = default_cache().stats();
  return report;
}

std::string format_report(const KernelReport& report) {
  std::string text = fmt::format("kernel        {}\nspec          {}\narch          {}\noptions       {}\n",
                                 report.kernel_name, report.description, report.arch.option(),
                                 fmt::join(report.options, " "));
  const ResourceUsage& r = report.resources;
  if (r.known) {
    text += fmt::format(
        "registers     {} per thread\nspills        {} bytes stored, {} bytes loaded per thread\n"
        "local memory  {} bytes per thread (stack frame)\nshared memory {} bytes per CTA (static)\n",
        r.registers, r.spill_store_bytes, r.spill_load_bytes, r.local_bytes, r.static_shared_bytes);
  } else {
    text += "resources     unknown: a PTX target is compiled by the driver at load time\n";
  }
  const CacheStats& s = report.stats;
  text += fmt::format("cache entry   {}\ncache         {} (memory {} hits {} misses, disk {} hits {} misses)\n",
                      report.cache_entry.empty() ? "(disk cache off)" : report.cache_entry,
                      report.level == CacheLevel::built ? "miss, compiled now" : fmt::format("{} hit", name_of(report.level)),
                      s.memory_hits, s.memory_misses, s.disk_hits, s.disk_misses);
  return text;
}

std::optional<std::filesystem::path> cache_directory() {
  const Environment& env = environment();
  if (!env.disk_cache) return std::nullopt;
  return env.cache_dir;
}

namespace {

// The storage default_cache() uses, or null when the disk cache is off (checked first, so that listing or
// clearing an absent cache warns about nothing).
std::unique_ptr<CacheStorage> environment_storage() {
  if (!cache_directory()) return nullptr;
  return storage_from_environment(environment());
}

}  // namespace

std::vector<CacheEntryInfo> list_cache(CacheStorage& storage) {
  std::vector<CacheEntryInfo> entries;
  for (const std::string& name : storage.list()) {
    if (!name.ends_with(kCacheEntryExtension)) continue;  // saved sources, temporary files
    CacheEntryInfo info;
    info.name = name;
    info.path = storage.locate(name);
    const std::optional<std::string> bytes = storage.load(name);
    if (!bytes) {
      info.problem = "cannot be read";
    } else {
      info.bytes = bytes->size();
      if (const std::optional<CompiledKernel> kernel = decode_stored_entry(*bytes, name, &info.problem)) {
        info.valid = true;
        info.kernel_name = kernel->kernel_name;
        info.arch = kernel->arch;
        info.resources = kernel->resources;
      }
    }
    entries.push_back(std::move(info));
  }
  std::sort(entries.begin(), entries.end(),
            [](const CacheEntryInfo& a, const CacheEntryInfo& b) { return a.name < b.name; });
  return entries;
}

std::vector<CacheEntryInfo> list_cache() {
  const std::unique_ptr<CacheStorage> storage = environment_storage();
  return storage ? list_cache(*storage) : std::vector<CacheEntryInfo>{};
}

std::string format_cache_list(const std::vector<CacheEntryInfo>& entries, std::string_view location) {
  std::string text = fmt::format("{}: {} entries\n", location, entries.size());
  for (const CacheEntryInfo& entry : entries) {
    if (!entry.valid) {
      text += fmt::format("  {}  {} bytes  INVALID: {} (rebuilt on next use)\n", entry.name, entry.bytes,
                          entry.problem);
    } else {
      text += fmt::format("  {}  {} bytes  {}  {} registers, {} B spilled, {} B local\n", entry.name, entry.bytes,
                          entry.arch.option(), entry.resources.registers, entry.resources.spill_store_bytes,
                          entry.resources.local_bytes);
    }
  }
  return text;
}

std::string format_cache_list(const std::vector<CacheEntryInfo>& entries) {
  const std::optional<std::filesystem::path> directory = cache_directory();
  if (!directory) return "disk cache is off (BFLY_CACHE=0, or no cache directory)\n";
  return format_cache_list(entries, directory->string());
}

std::size_t clear_cache(CacheStorage& storage) {
  std::size_t removed = 0;
  for (const std::string& name : storage.list()) {
    storage.remove(name);
    if (name.ends_with(kCacheEntryExtension)) ++removed;
  }
  return removed;
}

std::size_t clear_cache() {
  const std::unique_ptr<CacheStorage> storage = environment_storage();
  return storage ? clear_cache(*storage) : 0;
}

}  // namespace bfly::rt
