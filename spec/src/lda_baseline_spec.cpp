// LdaBaselineSpec: validation and kernel names (make and parse).
#include "bfly/spec/lda_baseline.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>
#include <vector>

namespace bfly::gen {
namespace {

constexpr std::array kBaselineNames = {std::pair{LdaBaseline::alg1, std::string_view("alg1")},
                                       std::pair{LdaBaseline::alg4, std::string_view("alg4")}};
constexpr std::string_view kNamePrefix = "bfly_lda_";
constexpr int kBaselineThreadsPerCta = 128;  // as bfly's lda_z kernel: one document per thread

}  // namespace

std::string_view name_of(LdaBaseline baseline) {
  for (const auto& [b, name] : kBaselineNames)
    if (b == baseline) return name;
  throw Error("unknown LDA baseline");
}

LdaBaseline parse_lda_baseline(std::string_view text) {
  for (const auto& [b, name] : kBaselineNames)
    if (name == text) return b;
  throw Error(fmt::format("LDA baseline '{}' is not known; allowed: alg1 (Algorithm 1 with Algorithm 3), alg4 "
                          "(Algorithm 4 with Algorithms 6 and 3)", text));
}

void LdaBaselineSpec::validate() const {
  name_of(algorithm);
  if (K < 1 || K > KernelSpec::kMaxK)
    throw Error(fmt::format("K = {} is not allowed: the number of topics must be in [1, {}]", K, KernelSpec::kMaxK));
  if (is_narrow(type))
    throw Error(fmt::format("element type {} is not allowed for the LDA baselines: they take f32 or f64", name_of(type)));
}

std::string kernel_name(const LdaBaselineSpec& spec) {
  return fmt::format("{}{}_{}_k{}", kNamePrefix, name_of(spec.algorithm), name_of(spec.type), spec.K);
}

LdaBaselineSpec parse_lda_baseline_name(std::string_view name) {
  const auto fail = [&](std::string_view why) {
    return Error(fmt::format("'{}' is not an LDA baseline kernel name ({}); expected bfly_lda_<alg1|alg4>_<type>_k<K>, "
                             "e.g. bfly_lda_alg4_f32_k1024", name, why));
  };
  if (!name.starts_with(kNamePrefix)) throw fail(fmt::format("it must start with {}", kNamePrefix));
  // The three fields after the prefix: algorithm, type, k<K>.
  std::vector<std::string_view> fields;
  for (std::string_view rest = name.substr(kNamePrefix.size());;) {
    const std::size_t end = rest.find('_');
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest = rest.substr(end + 1);
  }
  if (fields.size() != 3) throw fail("it must have three fields after bfly_lda_");
  LdaBaselineSpec spec;
  try {
    spec.algorithm = parse_lda_baseline(fields[0]);
    spec.type = parse_element_type(fields[1]);
  } catch (const Error& e) {
    throw fail(e.what());
  }
  const std::string_view k_field = fields[2];
  const char* const k_end = k_field.data() + k_field.size();
  const auto [end, error] = std::from_chars(k_field.data() + std::min<std::size_t>(1, k_field.size()), k_end, spec.K);
  if (!k_field.starts_with('k') || error != std::errc() || end != k_end)
    throw fail(fmt::format("field '{}' must be k<K>", k_field));
  try {
    spec.validate();
  } catch (const Error& e) {
    throw fail(e.what());
  }
  if (kernel_name(spec) != name) throw fail("it is not in canonical form");
  return spec;
}

const KernelFamily& family_of(const LdaBaselineSpec& spec) {
  return family(fmt::format("lda_{}", name_of(spec.algorithm)));
}

LaunchGeometry launch_geometry(const LdaBaselineSpec& spec) {
  spec.validate();
  LaunchGeometry g;
  g.threads_per_cta = kBaselineThreadsPerCta;
  g.rows_per_cta = kBaselineThreadsPerCta;  // one document per thread
  return g;
}

std::string describe(const LdaBaselineSpec& spec) {
  return fmt::format("baseline={} K={} type={}", name_of(spec.algorithm), spec.K, name_of(spec.type));
}

}  // namespace bfly::gen
