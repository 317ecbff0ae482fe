// The BFLY_* environment variables, read in this one place and nowhere else.
//
//   BFLY_CACHE_DIR             disk cache directory (default $XDG_CACHE_HOME/bfly, else ~/.cache/bfly)
//   BFLY_CACHE=0|1             0 turns the disk cache off (default 1)
//   BFLY_CACHE_SAVE_SOURCE=0|1 1 writes the generated source as <entry>.cu beside each entry (default 0)
//   BFLY_DUMP_SOURCE_ON_ERROR=0|1  1 prints the numbered source of a kernel that fails to compile (default 0)
//   BFLY_COMPILE_WITH_DEBUG=0|1    1 compiles with line info (-lineinfo) (default 0)
//
// A malformed value is ignored (the default applies) with a warning naming the variable and the values it accepts.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace bfly::rt {

struct Environment {
  std::optional<std::filesystem::path> cache_dir;  // empty when no directory could be derived (no HOME)
  bool disk_cache = true;
  bool save_source = false;
  bool dump_source_on_error = false;
  bool compile_with_debug = false;
};

// Reads the variables now (tests call this after setenv).
Environment read_environment();

// The environment as read once, on first use, for the rest of the process.
const Environment& environment();

// Prints "bfly: warning: <message>" to stderr, once per distinct message per process.
void warn_once(std::string_view message);

}  // namespace bfly::rt
