// The BFLY_* environment variables, read in this one place and nowhere else.
//
//   BFLY_CACHE_DIR             disk cache directory (default $XDG_CACHE_HOME/bfly, else ~/.cache/bfly)
//   BFLY_CACHE=0|1             0 turns the disk cache off (default 1)
//   BFLY_CACHE_SAVE_SOURCE=0|1 1 writes the generated source as <entry>.cu beside each entry (default 0)
//   BFLY_DUMP_SOURCE_ON_ERROR=0|1  1 prints the numbered source of a kernel that fails to compile (default 0)
//   BFLY_COMPILE_WITH_DEBUG=0|1    1 compiles with line info (-lineinfo) (default 0)
//   BFLY_LOCKSTEP_THREADS=N    worker threads of the CPU execution, bfly/lockstep.hpp (default: the CPU cores)
//
// A malformed value is ignored (the default applies) with a warning naming the variable and the values it accepts.
//
// Header-only and standard C++ only: bfly/lockstep.hpp includes it, and generated kernels compiled as C++ need
// nothing but -I templates -I cpu/include -I jit/include.
#pragma once

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

namespace bfly::rt {

struct Environment {
  std::optional<std::filesystem::path> cache_dir;  // empty when no directory could be derived (no HOME)
  bool disk_cache = true;
  bool save_source = false;
  bool dump_source_on_error = false;
  bool compile_with_debug = false;
  int lockstep_threads = 1;  // BFLY_LOCKSTEP_THREADS, else the number of CPU cores (at least 1)
};

// Prints "bfly: warning: <message>" to stderr, once per distinct message per process.
inline void warn_once(std::string_view message) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> seen;
  const std::lock_guard lock(mutex);
  if (!seen.emplace(message).second) return;
  std::fprintf(stderr, "bfly: warning: %.*s\n", static_cast<int>(message.size()), message.data());
}

namespace environment_detail {

inline const char* get(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// Accepts 0/1, false/true, off/on, no/yes; anything else warns and keeps `fallback`.
inline bool flag(const char* name, bool fallback) {
  const char* value = get(name);
  if (value == nullptr) return fallback;
  const std::string_view text(value);
  if (text == "1" || text == "true" || text == "on" || text == "yes") return true;
  if (text == "0" || text == "false" || text == "off" || text == "no") return false;
  warn_once(std::string(name) + "=\"" + std::string(text) +
            "\" is not understood; accepted values are 1/true/on/yes and 0/false/off/no; using the default " +
            (fallback ? "1" : "0"));
  return fallback;
}

// Accepts a whole number in [1, 4096]; anything else warns and keeps `fallback`.
inline int count(const char* name, int fallback, std::string_view fallback_text) {
  const char* value = get(name);
  if (value == nullptr) return fallback;
  const std::string_view text(value);
  int number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error == std::errc() && end == text.data() + text.size() && number >= 1 && number <= 4096) return number;
  warn_once(std::string(name) + "=\"" + std::string(text) +
            "\" is not understood; accepted values are whole numbers from 1 to 4096; using " +
            std::string(fallback_text));
  return fallback;
}

}  // namespace environment_detail

// Reads the variables now (tests call this after setenv).
inline Environment read_environment() {
  using environment_detail::flag;
  using environment_detail::get;
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
  const unsigned cores = std::thread::hardware_concurrency();
  const int default_threads = cores == 0 ? 1 : static_cast<int>(cores);
  env.lockstep_threads = environment_detail::count(
      "BFLY_LOCKSTEP_THREADS", default_threads, "the number of CPU cores, " + std::to_string(default_threads));
  return env;
}

// The environment as read once, on first use, for the rest of the process.
inline const Environment& environment() {
  static const Environment env = read_environment();
  return env;
}

}  // namespace bfly::rt
