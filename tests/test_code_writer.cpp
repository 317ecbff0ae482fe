// CodeWriter scopes and indentation; fill_template placeholders, re-indentation and strictness.
#include "bfly/error.hpp"
#include "bfly/emit/code_writer.hpp"
#include "template_fill.hpp"

#include <gtest/gtest.h>

namespace {

using bfly::gen::CodeWriter;
using bfly::gen::fill_template;

TEST(CodeWriter, IndentsScopesAndLabelsTheirEnds) {
  CodeWriter w;
  {
    auto outer = w.scope("for (int b = 0; b < 4; ++b)", "for each block");
    w.line("x += {};", 1);
    auto inner = w.scope("");
    w.lines("a;\n  b;\n");
  }
  EXPECT_EQ(w.text(), "for (int b = 0; b < 4; ++b) {\n  x += 1;\n  {\n    a;\n      b;\n  }\n}  // for each block\n");
  EXPECT_EQ(w.line_count(), 7);
}

TEST(FillTemplate, ReindentsMultiLineValuesAndSubstitutesInline) {
  const std::string out = fill_template("t", "int {{name}}() {\n  {{body}}\n}\n", {{"name", "f"}, {"body", "a;\nb;"}});
  EXPECT_EQ(out, "int f() {\n  a;\n  b;\n}\n");
}

TEST(FillTemplate, RejectsUnknownAndUnusedPlaceholders) {
  EXPECT_THROW(fill_template("t", "{{missing}}\n", {}), bfly::Error);
  EXPECT_THROW(fill_template("t", "plain\n", {{"extra", "x"}}), bfly::Error);
  EXPECT_THROW(fill_template("t", "x = {{v}};\n", {{"v", "1\n2"}}), bfly::Error);
  try {
    fill_template("skeleton.cuh", "a\n{{nope}}\n", {});
  } catch (const bfly::Error& e) {
    EXPECT_NE(std::string(e.what()).find("skeleton.cuh line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
