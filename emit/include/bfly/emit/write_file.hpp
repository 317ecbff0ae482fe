// write_if_different: how bfly's tools write generated files (bfly-gen generate and the build-time emitters), so
// that an unchanged file keeps its timestamp and triggers no rebuild.
#pragma once

#include <string>

namespace bfly::gen {

// Writes `content` to `path` unless the file already holds exactly it; a changed file is replaced atomically
// (temporary file in the same directory, then rename). Returns true when the file was written.
// Throws bfly::Error when it cannot write.
bool write_if_different(const std::string& path, const std::string& content);

}  // namespace bfly::gen
