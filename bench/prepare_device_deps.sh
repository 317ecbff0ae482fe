#!/usr/bin/env bash
# Run HERE (the build machine), from the repository root, before a device run that builds bfly:
#   bash bench/prepare_device_deps.sh
# The GPU machine has no libfmt-dev. This copies this machine's fmt headers into build-deps/fmt (ignored by git
# through the /build*/ pattern, so it can travel with `carry: ["build-deps"]`) with a minimal CMake package
# that offers fmt::fmt-header-only (and fmt::fmt as the same thing). bench/run_on_device.sh points CMake at it
# when it is there. About 0.6 MB.
set -euo pipefail
root=$(pwd)
[[ -f "$root/CMakeLists.txt" && -d "$root/bench" ]] || { echo "run from the repository root" >&2; exit 2; }
src_include=${FMT_INCLUDE_DIR:-/usr/include/fmt}
src_cmake=${FMT_CMAKE_DIR:-/usr/lib/x86_64-linux-gnu/cmake/fmt}
[[ -f "$src_include/format.h" ]] || { echo "no fmt headers at $src_include (apt-get install libfmt-dev)" >&2; exit 1; }
[[ -f "$src_cmake/fmt-config-version.cmake" ]] || { echo "no fmt CMake files at $src_cmake" >&2; exit 1; }

dest=$root/build-deps/fmt
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/lib/cmake/fmt"
cp -r "$src_include" "$dest/include/fmt"
cp "$src_cmake/fmt-config-version.cmake" "$dest/lib/cmake/fmt/"
cat > "$dest/lib/cmake/fmt/fmt-config.cmake" <<'CMAKE'
# fmt, header-only, copied by bench/prepare_device_deps.sh (no library file: FMT_HEADER_ONLY=1).
get_filename_component(_bfly_fmt_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET fmt::fmt-header-only)
  add_library(fmt::fmt-header-only INTERFACE IMPORTED)
  set_target_properties(fmt::fmt-header-only PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1"
    INTERFACE_INCLUDE_DIRECTORIES "${_bfly_fmt_prefix}/include")
endif()
if(NOT TARGET fmt::fmt)
  add_library(fmt::fmt INTERFACE IMPORTED)
  set_target_properties(fmt::fmt PROPERTIES INTERFACE_LINK_LIBRARIES fmt::fmt-header-only)
endif()
set(fmt_FOUND TRUE)
unset(_bfly_fmt_prefix)
CMAKE
echo "wrote $dest ($(du -sh "$dest" | cut -f1)); carry \"build-deps\" in the device call"
