// fill_template(): placeholder substitution with re-indentation and strict checking.
#include "template_fill.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <set>

namespace bfly::gen {

std::string fill_template(std::string_view fragment_name, std::string_view text,
                          const std::map<std::string, std::string>& values) {
  std::set<std::string> used;
  const auto value_of = [&](const std::string& key, int line_number) -> const std::string& {
    const auto it = values.find(key);
    if (it == values.end())
      throw Error(fmt::format("template {} line {}: no value for placeholder {{{{{}}}}}", fragment_name, line_number,
                              key));
    used.insert(key);
    return it->second;
  };

  std::string out;
  int line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;

    const std::size_t indent = line.find_first_not_of(' ');
    const bool alone = indent != std::string_view::npos && line.substr(indent).starts_with("{{") &&
                       line.ends_with("}}") && line.find("{{", indent + 2) == std::string_view::npos;
    if (alone) {
      const std::string& value = value_of(std::string(line.substr(indent + 2, line.size() - indent - 4)), line_number);
      std::size_t vstart = 0;
      while (vstart < value.size()) {
        std::size_t vend = value.find('\n', vstart);
        if (vend == std::string::npos) vend = value.size();
        const std::string_view vline(value.data() + vstart, vend - vstart);
        if (!vline.empty()) out.append(indent, ' ');
        out.append(vline);
        out.push_back('\n');
        vstart = vend + 1;
      }
      continue;
    }
    std::size_t pos = 0;
    while (true) {
      const std::size_t open = line.find("{{", pos);
      if (open == std::string_view::npos) {
        out.append(line.substr(pos));
        break;
      }
      const std::size_t close = line.find("}}", open);
      if (close == std::string_view::npos)
        throw Error(fmt::format("template {} line {}: unterminated placeholder", fragment_name, line_number));
      out.append(line.substr(pos, open - pos));
      const std::string& value = value_of(std::string(line.substr(open + 2, close - open - 2)), line_number);
      if (value.find('\n') != std::string::npos)
        throw Error(fmt::format("template {} line {}: multi-line value for an inline placeholder", fragment_name,
                                line_number));
      out.append(value);
      pos = close + 2;
    }
    out.push_back('\n');
  }
  for (const auto& [key, value] : values)
    if (!used.contains(key))
      throw Error(fmt::format("template {}: value given for {{{{{}}}}} but the template has no such placeholder",
                              fragment_name, key));
  return out;
}

std::string without_trailing_newline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace bfly::gen
