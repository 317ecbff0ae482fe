// CodeWriter: indentation, multi-line insertion and labelled scopes for the emitters.
#include "bfly/emit/code_writer.hpp"

namespace bfly::gen {

namespace {
constexpr int kIndentWidth = 2;
}

void CodeWriter::line(std::string_view text) {
  if (!text.empty()) text_.append(static_cast<std::size_t>(indent_ * kIndentWidth), ' ');
  text_.append(text);
  text_.push_back('\n');
  ++line_count_;
}

void CodeWriter::lines(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    line(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

CodeWriter::Scope::Scope(CodeWriter& writer, std::string_view header, std::string closing_label)
    : writer_(writer), closing_label_(std::move(closing_label)) {
  writer_.line(std::string(header) + (header.empty() ? "{" : " {"));
  ++writer_.indent_;
}

CodeWriter::Scope::~Scope() {
  --writer_.indent_;
  writer_.line(closing_label_.empty() ? std::string("}") : "}  // " + closing_label_);
}

}  // namespace bfly::gen
