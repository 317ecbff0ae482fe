// template_source(): find one embedded fragment by name.
#include "bfly/error.hpp"
#include "bfly/emit/embedded_templates.hpp"

#include <string>

namespace bfly::gen {

std::string_view template_source(std::string_view name) {
  std::string known;
  for (const EmbeddedFile& file : embedded_templates()) {
    if (file.name == name) return file.content;
    known += known.empty() ? "" : ", ";
    known += file.name;
  }
  throw Error("no embedded template named '" + std::string(name) + "'; embedded: " + known);
}

}  // namespace bfly::gen
