// fill_template(): substitutes {{name}} placeholders in a template fragment.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace bfly::gen {

// A placeholder alone on its line takes a multi-line value, each line re-indented to the placeholder's
// column (as PyTorch's CodeTemplate does); an empty value removes the line. Inline placeholders take
// single-line values. A placeholder without a value, or a value without a placeholder, throws bfly::Error.
std::string fill_template(std::string_view fragment_name, std::string_view text,
                          const std::map<std::string, std::string>& values);

// `text` without its trailing newlines: a CodeWriter's text as the value of a placeholder alone on its line.
std::string without_trailing_newline(std::string text);

}  // namespace bfly::gen
