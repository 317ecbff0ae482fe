// write_if_different: how bfly's tools write generated files (bfly-gen generate and the build-time emitters), so
// that an unchanged file keeps its timestamp and triggers no rebuild.
#pragma once

#include <string>

namespace bfly::gen {

// Writes `content` to `path` unless the file already holds exactly it; a changed file is replaced atomically
// (temporary file in the same directory, then rename). Returns true when the file was written.
// Only regular files are written: a device, FIFO, directory or a link to one is refused (bfly/output_file.hpp).
// Throws bfly::Error naming the file and the cause ("disk full") when it cannot write.
bool write_if_different(const std::string& path, const std::string& content);

}  // namespace bfly::gen
