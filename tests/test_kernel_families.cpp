// Kernel families as data: each family's argument list is consistent, PackedArgs converts and checks a launch's
// arguments by their roles, and what is derived from a family (the kernel signature, the ahead-of-time launch
// function, the CPU launcher) follows its argument list.
#include "bfly/emit/aot_header.hpp"
#include "bfly/emit/cpu_launcher.hpp"
#include "bfly/emit/generate.hpp"
#include "bfly/error.hpp"
#include "bfly/spec/choose.hpp"
#include "bfly/spec/kernel_args.hpp"
#include "bfly/spec/kernel_family.hpp"
#include "bfly/spec/spec_catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <tuple>

namespace {

using namespace bfly::gen;

std::string thrown(auto&& f) {
  try {
    f();
  } catch (const bfly::Error& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

// The text with every newline and the indentation after it collapsed to one space.
std::string one_line(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    out += ' ';
  }
  return out;
}

TEST(KernelFamilies, ArgumentListsAreConsistent) {
  std::set<std::string_view> names;
  for (const KernelFamily* f : kernel_families()) {
    EXPECT_TRUE(names.insert(f->name).second) << f->name;
    EXPECT_EQ(&family(f->name), f);
    std::set<std::string_view> arg_names;
    int items = 0;
    for (const KernelArg& arg : f->args) {
      EXPECT_TRUE(arg_names.insert(arg.name).second) << f->name << ": " << arg.name << " twice";
      const bool array_role = arg.role == ArgRole::input || arg.role == ArgRole::optional_input ||
                              arg.role == ArgRole::output || arg.role == ArgRole::scratch ||
                              arg.role == ArgRole::counters;
      EXPECT_EQ(is_pointer(arg.type), array_role) << f->name << ": " << arg.name;
      EXPECT_FALSE(arg.doc.empty()) << f->name << ": " << arg.name;
      items += arg.role == ArgRole::items;
    }
    EXPECT_EQ(items, 1) << f->name << " must have one argument the grid covers";
    // Every kernel that splits rows over CTAs can draw part of a batch (the rows past a row kernel's last wave).
    const bool numbers_rows = std::any_of(f->args.begin(), f->args.end(), [](const KernelArg& a) {
      return a.name == "first_row" && a.type == ArgType::i32;
    });
    EXPECT_EQ(numbers_rows, f->name.starts_with("sample_split")) << f->name;
  }
  EXPECT_NE(thrown([] { family("nope"); })
                .find("families: sample, sample_draws, sample_distinct, sample_logits, sample_logits_distinct, "
                      "sample_split, sample_split_draws, sample_split_distinct, sample_split_logits, "
                      "sample_split_logits_distinct, sample_small, sample_pairs, sample_split_pairs, lda_z, lda_z_doc, "
                      "lda_alg1, lda_alg4"),
            std::string::npos);
}

TEST(KernelFamilies, EachSpecsFamilyIsItsOperations) {
  EXPECT_EQ(family_of(choose_sample_spec(100, ElementType::f32)).name, "sample");
  EXPECT_EQ(family_of(choose_sample_spec(3, ElementType::f32)).name, "sample_small");
  EXPECT_EQ(family_of(choose_sample_spec(131072, ElementType::f32, {}, 16)).name, "sample_split");
  EXPECT_EQ(family_of(choose_sample_spec(100, ElementType::bf16)).name, "sample_pairs");
  EXPECT_EQ(family_of(choose_sample_spec(131072, ElementType::bf16, {}, 16)).name, "sample_split_pairs");
  EXPECT_EQ(family_of(choose_sample_spec(131071, ElementType::bf16, {}, 16)).name, "sample_split_pairs");  // K odd
  EXPECT_EQ(family_of(choose_sample_spec(131072, ElementType::f32, {}, 16)).name, "sample_split");
  // sample_small and sample_pairs take the sample kernel's arguments; sample_split adds its scratch, and
  // sample_split_pairs takes sample_split's.
  EXPECT_EQ(family("sample_small").args.size(), family("sample").args.size());
  EXPECT_EQ(family("sample_pairs").args.size(), family("sample").args.size());
  EXPECT_TRUE(family("sample_pairs").rows_in_pairs);
  EXPECT_FALSE(family("sample").rows_in_pairs);
  EXPECT_EQ(family("sample_split").arg(ArgRole::scratch).name, "part_totals");
  EXPECT_EQ(family("sample_split_pairs").args.size(), family("sample_split").args.size());
  EXPECT_TRUE(family("sample_split_pairs").rows_in_pairs);
  EXPECT_FALSE(family("sample_split").rows_in_pairs);
  EXPECT_EQ(family_of(choose_lda_z_spec(100, ElementType::f32)).name, "lda_z_doc");
  // The forms of sample (BFLY_SAMPLE_FORMS): each input kind and draws its family; logits with one draw has none.
  SampleChoice row_kernel;
  row_kernel.operation = Operation::sample;
  KernelSpec form = choose_sample_spec(100, ElementType::bf16, row_kernel);
  const std::pair<std::pair<InputKind, Draws>, std::string_view> forms[] = {
      {{InputKind::weights, Draws::with_replacement}, "sample_draws"},
      {{InputKind::weights, Draws::without_replacement}, "sample_distinct"},
      {{InputKind::logits, Draws::with_replacement}, "sample_logits"},
      {{InputKind::logits, Draws::without_replacement}, "sample_logits_distinct"}};
  for (const auto& [which, name] : forms) {
    std::tie(form.input, form.draws) = which;
    EXPECT_EQ(family_of(form).name, name);
    EXPECT_EQ(family_of(form).index_of("num_samples"), 3u + (form.input == InputKind::logits));
  }
  form.draws = Draws::one;
  EXPECT_NE(thrown([&] { form.validate(); }).find("logits are drawn with draws = with_replacement"),
            std::string::npos);
  // sample_split's forms: the row kernel's, less one draw from logits, with the scratch after the counters.
  SampleChoice split_kernel;
  split_kernel.operation = Operation::sample_split;
  KernelSpec split = choose_sample_spec(131072, ElementType::bf16, split_kernel, 16);
  const std::pair<std::pair<InputKind, Draws>, std::string_view> split_forms[] = {
      {{InputKind::weights, Draws::one}, "sample_split"},
      {{InputKind::weights, Draws::with_replacement}, "sample_split_draws"},
      {{InputKind::weights, Draws::without_replacement}, "sample_split_distinct"},
      {{InputKind::logits, Draws::with_replacement}, "sample_split_logits"},
      {{InputKind::logits, Draws::without_replacement}, "sample_split_logits_distinct"}};
  for (const auto& [which, name] : split_forms) {
    std::tie(split.input, split.draws) = which;
    split.validate();
    EXPECT_EQ(family_of(split).name, name);
    EXPECT_EQ(parse_kernel_name(kernel_name(split)), split) << kernel_name(split);
    EXPECT_EQ(family_of(split).index_of("arrivals"), family_of(split).index_of("part_totals") + 1);
  }
  split.draws = Draws::one;
  EXPECT_NE(thrown([&] { split.validate(); }).find("is not a sample_split kernel"), std::string::npos);
  KernelSpec small = choose_sample_spec(5, ElementType::f32);
  small.draws = Draws::with_replacement;
  EXPECT_NE(thrown([&] { small.validate(); }).find("only sample and sample_split kernels"), std::string::npos);
  EXPECT_EQ(family_of(LdaBaselineSpec{LdaBaseline::alg1, 10, ElementType::f64}).name, "lda_alg1");
  EXPECT_EQ(family_of(LdaBaselineSpec{LdaBaseline::alg4, 10, ElementType::f64}).name, "lda_alg4");
}

// A sample_pairs kernel loads two weights at once: its packing refuses an odd ld and weights off a pair.
TEST(PackedArgs, PairsKernelsNeedRowsThatStartOnAPair) {
  alignas(16) float weights[8] = {};
  int out[2] = {};
  EXPECT_NO_THROW(PackedArgs(family("sample_pairs"), ElementType::f32, "t", {weights, 2, 4ll, out, nullptr, 7ull, 3u}, 4));
  EXPECT_NE(thrown([&] {
              PackedArgs(family("sample_pairs"), ElementType::f32, "t", {weights, 2, 5ll, out, nullptr, 7ull, 3u}, 4);
            }).find("ld = 5 is odd"),
            std::string::npos);
  EXPECT_NE(thrown([&] {
              PackedArgs(family("sample_pairs"), ElementType::f32, "t", {weights + 1, 2, 4ll, out, nullptr, 7ull, 3u},
                         4);
            }).find("weights is not aligned to 8 bytes"),
            std::string::npos);
  EXPECT_NO_THROW(PackedArgs(family("sample"), ElementType::f32, "t", {weights + 1, 2, 5ll, out, nullptr, 7ull, 3u}, 4));
}

TEST(PackedArgs, StoresEachArgumentInItsParameterType) {
  float weights[4] = {};
  int out[2] = {};
  PackedArgs args(family("sample"), ElementType::f32, "t", {weights, 2, 2ll, out, nullptr, 7ull, 3u}, 2);
  void** p = args.data();
  EXPECT_EQ(*static_cast<void**>(p[0]), static_cast<void*>(weights));
  EXPECT_EQ(*static_cast<long long*>(p[1]), 2);  // an int given for a long long parameter
  EXPECT_EQ(*static_cast<long long*>(p[2]), 2);
  EXPECT_EQ(*static_cast<void**>(p[3]), static_cast<void*>(out));
  EXPECT_EQ(*static_cast<void**>(p[4]), nullptr);
  EXPECT_EQ(*static_cast<unsigned long long*>(p[5]), 7ull);
  EXPECT_EQ(*static_cast<unsigned int*>(p[6]), 3u);
  EXPECT_EQ(args.items(), 2);
  unsigned long long counters[2];
  args.set("invalid_rows", counters);
  EXPECT_EQ(*static_cast<void**>(p[4]), static_cast<void*>(counters));
}

TEST(PackedArgs, RolesGiveTheChecksAndMessages) {
  float w[1];
  int o[1];
  const KernelFamily& sample = family("sample");
  const auto pack = [&](std::initializer_list<ArgValue> values) {
    return thrown([&] { PackedArgs(sample, ElementType::f32, "Sampler::sample", values, 10); });
  };
  EXPECT_EQ(pack({w, 3, 10, o, nullptr, 1ull, 0u}), "(nothing thrown)");
  EXPECT_EQ(pack({w, -1, 10, o, nullptr, 1ull, 0u}), "Sampler::sample: M = -1 is negative; M is the number of rows");
  EXPECT_EQ(pack({w, 3, 9, o, nullptr, 1ull, 0u}), "Sampler::sample: ld = 9 is less than K = 10");
  EXPECT_EQ(pack({nullptr, 3, 10, o, nullptr, 1ull, 0u}), "Sampler::sample: weights is null (M = 3)");
  EXPECT_EQ(pack({w, 3, 10, nullptr, nullptr, 1ull, 0u}), "Sampler::sample: out is null (M = 3)");
  EXPECT_EQ(pack({nullptr, 0, 10, nullptr, nullptr, 1ull, 0u}), "(nothing thrown)") << "no work, no array read";
  EXPECT_NE(pack({w, 3, 10, o, nullptr, 1ull}).find("sample kernels take 7 arguments (weights, M, ld, out, "
                                                    "invalid_rows, seed, iteration), got 6"),
            std::string::npos);
  EXPECT_NE(pack({w, 3, 10, o, nullptr, 1ull, -1}).find("iteration = -1 does not fit its type unsigned int"),
            std::string::npos);
  EXPECT_NE(pack({w, w, 10, o, nullptr, 1ull, 0u}).find("M must be an integer (long long), got a pointer"),
            std::string::npos);
  EXPECT_NE(pack({w, 3, 10, 5, nullptr, 1ull, 0u}).find("out must be a pointer (int*), got an integer"),
            std::string::npos);
  EXPECT_NE(pack({w, 3, 10, o, nullptr, -2, 0u}).find("seed = -2 does not fit its type unsigned long long"),
            std::string::npos);
}

TEST(KernelFamilies, GeneratedSignaturesFollowTheFamily) {
  std::vector<Source> sources;
  for (const KernelSpec& spec : draw_test_specs()) sources.push_back(generate(spec));
  for (const KernelSpec& spec : lda_test_specs()) sources.push_back(generate(spec));
  for (const LdaBaselineSpec& spec : lda_baseline_test_specs()) sources.push_back(generate_lda_baseline(spec));
  for (const Source& source : sources) {
    const KernelFamily& f = family(source.family);
    const std::string signature = source.kernel_name + "(" + parameter_list(f, source.type, true) + ") {";
    EXPECT_NE(one_line(source.text).find(signature), std::string::npos) << source.kernel_name;
    const std::string check = std::string(", ") + std::string(f.arg(ArgRole::items).name) + ");  // the launch contract";
    EXPECT_NE(source.text.find("bfly::require_launch(THREADS, "), std::string::npos) << source.kernel_name;
    EXPECT_NE(source.text.find(check), std::string::npos) << source.kernel_name;
    // The CPU launcher reads every argument, in order, in its parameter type.
    const std::string launcher = cpu_launcher(source, family(source.family), "run_it");
    for (std::size_t i = 0; i < f.args.size(); ++i) {
      const std::string read = "args[" + std::to_string(i) + "]";
      EXPECT_NE(launcher.find(read), std::string::npos) << source.kernel_name << " " << f.args[i].name;
      EXPECT_NE(launcher.find("// " + std::string(f.args[i].name) + "\n"), std::string::npos) << source.kernel_name;
    }
    EXPECT_EQ(launcher.find("args[" + std::to_string(f.args.size()) + "]"), std::string::npos);
  }
}

TEST(KernelFamilies, TheAheadOfTimeLaunchFunctionFollowsTheFamily) {
  SampleChoice split;
  split.operation = Operation::sample_split;
  for (const KernelSpec& spec : {choose_sample_spec(100, ElementType::f64), choose_lda_z_spec(300, ElementType::f32),
                                 choose_sample_spec(5000, ElementType::f32, split)}) {
    EXPECT_EQ(aot_header(spec).rfind("// SPDX-License-Identifier: MIT\n// " + kernel_name(spec) + ": ", 0), 0u);
    const std::string header = one_line(aot_header(spec));
    const KernelFamily& f = family_of(spec);
    std::string parameters, arguments;
    for (const KernelArg& arg : f.args) {
      parameters += c_type(arg.type, spec.type) + " " + std::string(arg.name) + ", ";
      arguments += (arguments.empty() ? "" : ", ") + std::string(arg.name);
    }
    EXPECT_NE(header.find(kernel_name(spec) + "_launch( " + parameters + "cudaStream_t stream = 0)"), std::string::npos)
        << header;
    EXPECT_NE(header.find("<<<grid_dim, block_dim, 0, stream>>>( " + arguments + ");"), std::string::npos);
    EXPECT_NE(header.find(std::string(f.arg(ArgRole::items).name) + " < 0"), std::string::npos);
  }
}

}  // namespace
