// Access to the CUDA fragments of templates/, embedded into the binary at build time.
#pragma once

#include <string_view>
#include <vector>

namespace bfly::gen {

struct EmbeddedFile {
  std::string_view name;     // path relative to templates/, e.g. "bfly/philox.cuh"
  std::string_view content;  // the file's bytes
};

// Every embedded fragment, in a fixed order.
const std::vector<EmbeddedFile>& embedded_templates();

// SHA-256 over all fragment names and contents, computed at build time (enters the cache key).
std::string_view embedded_templates_hash();

// The content of one fragment; throws bfly::Error naming the known fragments if `name` is unknown.
std::string_view template_source(std::string_view name);

}  // namespace bfly::gen
