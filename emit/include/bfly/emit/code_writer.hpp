// CodeWriter: the text sink every emitter writes into; it owns indentation and labelled scopes.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

namespace bfly::gen {

class CodeWriter {
 public:
  // One line at the current indentation (an empty `text` writes an empty line).
  void line(std::string_view text);

  template <typename... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    line(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
  }

  // Several lines (separated by '\n'), each at the current indentation plus its own leading spaces.
  void lines(std::string_view text);

  void blank() { line(std::string_view()); }

  // A block: writes `header {`, indents until the Scope ends, then writes `}` and the optional label
  // (`} // block 3 of 32`), as Halide's close_scope does.
  class Scope {
   public:
    Scope(CodeWriter& writer, std::string_view header, std::string closing_label);
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope();

   private:
    CodeWriter& writer_;
    std::string closing_label_;
  };

  [[nodiscard]] Scope scope(std::string_view header, std::string closing_label = {}) {
    return Scope(*this, header, std::move(closing_label));
  }

  const std::string& text() const { return text_; }
  int line_count() const { return line_count_; }

 private:
  friend class Scope;
  std::string text_;
  int indent_ = 0;
  int line_count_ = 0;
};

}  // namespace bfly::gen
