#include "bfly/jit/environment.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace bfly::rt {
namespace {

const char* get(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// Accepts 0/1, false/true, off/on, no/yes; anything else warns and keeps `fallback`.
bool flag(const char* name, bool fallback) {
  const char* value = get(name);
  if (value == nullptr) return fallback;
  const std::string_view text(value);
  if (text == "1" || text == "true" || text == "on" || text == "yes") return true;
  if (text == "0" || text == "false" || text == "off" || text == "no") return false;
  warn_once(fmt::format("{}={:?} is not understood; accepted values are 1/true/on/yes and 0/false/off/no; "
                        "using the default {}",
                        name, text, fallback ? 1 : 0));
  return fallback;
}

}  // namespace

Environment read_environment() {
  Environment env;
  if (const char* dir = get("BFLY_CACHE_DIR")) {
    env.cache_dir = std::filesystem::path(dir);
  } else if (const char* xdg = get("XDG_CACHE_HOME")) {
    env.cache_dir = std::filesystem::path(xdg) / "bfly";
  } else if (const char* home = get("HOME")) {
    env.cache_dir = std::filesystem::path(home) / ".cache" / "bfly";
  }
  env.disk_cache = flag("BFLY_CACHE", env.disk_cache);
  env.save_source = flag("BFLY_CACHE_SAVE_SOURCE", env.save_source);
  env.dump_source_on_error = flag("BFLY_DUMP_SOURCE_ON_ERROR", env.dump_source_on_error);
  env.compile_with_debug = flag("BFLY_COMPILE_WITH_DEBUG", env.compile_with_debug);
  return env;
}

const Environment& environment() {
  static const Environment env = read_environment();
  return env;
}

void warn_once(std::string_view message) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> seen;
  const std::lock_guard lock(mutex);
  if (!seen.emplace(message).second) return;
  std::fprintf(stderr, "bfly: warning: %.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace bfly::rt
