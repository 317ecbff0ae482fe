// KernelSpec validation, the type/variant tables, and kernel names (make and parse).
#include "bfly/spec/kernel_spec.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <charconv>
#include <vector>

namespace bfly::gen {
namespace {

struct ElementTypeInfo {
  ElementType type;
  std::string_view name;
  std::string_view cuda;
  int size;
};
// The one table of element types: name in kernel names, CUDA type, size in bytes.
constexpr std::array kElementTypes = {
    ElementTypeInfo{ElementType::f32, "f32", "float", 4},
    ElementTypeInfo{ElementType::f64, "f64", "double", 8},
};

const ElementTypeInfo& info(ElementType type) {
  for (const auto& entry : kElementTypes)
    if (entry.type == type) return entry;
  throw Error("unknown element type");
}

constexpr std::array kVariantNames = {std::pair{Variant::swap, std::string_view("swap")},
                                      std::pair{Variant::addsub, std::string_view("addsub")}};
constexpr std::array kOperationNames = {std::pair{Operation::sample, std::string_view("sample")},
                                        std::pair{Operation::lda_z, std::string_view("lda_z")},
                                        std::pair{Operation::lda_z_doc, std::string_view("lda_z_doc")}};

template <typename Table>
std::string allowed_names(const Table& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    if constexpr (requires { entry.name; }) out += entry.name; else out += entry.second;
  }
  return out;
}

int parse_int(std::string_view text, std::string_view what) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw Error(fmt::format("{} must be an integer, got '{}'", what, text));
  return value;
}

}  // namespace

std::string_view name_of(ElementType type) { return info(type).name; }
std::string_view cuda_type(ElementType type) { return info(type).cuda; }
int size_of(ElementType type) { return info(type).size; }

std::string_view name_of(Variant variant) {
  for (const auto& [v, name] : kVariantNames)
    if (v == variant) return name;
  throw Error("unknown variant");
}

std::string_view name_of(Operation operation) {
  for (const auto& [op, name] : kOperationNames)
    if (op == operation) return name;
  throw Error("unknown operation");
}

ElementType parse_element_type(std::string_view text) {
  for (const auto& entry : kElementTypes)
    if (entry.name == text) return entry.type;
  throw Error(fmt::format("element type '{}' is not supported; allowed: {}", text, allowed_names(kElementTypes)));
}

Variant parse_variant(std::string_view text) {
  for (const auto& [v, name] : kVariantNames)
    if (name == text) return v;
  throw Error(fmt::format("variant '{}' is not supported; allowed: {}", text, allowed_names(kVariantNames)));
}

Operation parse_operation(std::string_view text) {
  for (const auto& [op, name] : kOperationNames)
    if (name == text) return op;
  throw Error(fmt::format("operation '{}' is not supported; allowed: {}", text, allowed_names(kOperationNames)));
}

void KernelSpec::validate() const {
  if (W != 4 && W != 8 && W != 16 && W != 32)
    throw Error(fmt::format("W = {} is not allowed: the group width must be 4, 8, 16 or 32 (a power of two "
                            "that fits in a warp)", W));
  if (K < 1 || K > kMaxK)
    throw Error(fmt::format("K = {} is not allowed: the number of categories must be in [1, {}]", K, kMaxK));
  if (R < 0 || R > W - 1)
    throw Error(fmt::format("R = {} is not allowed: the remnant threshold must be in [0, W-1] = [0, {}] "
                            "(remnants of up to R elements are searched linearly, larger ones padded)", R, W - 1));
  info(type);
  name_of(variant);
  name_of(operation);
}

int KernelSpec::log2_w() const { return std::countr_zero(static_cast<unsigned>(W)); }

std::string kernel_name(const KernelSpec& spec) {
  return fmt::format("bfly_{}_{}_w{}_k{}_r{}_{}", name_of(spec.operation), name_of(spec.type), spec.W, spec.K,
                     spec.R, name_of(spec.variant));
}

KernelSpec parse_kernel_name(std::string_view name) {
  const auto fail = [&](std::string_view why) {
    return Error(fmt::format("'{}' is not a bfly kernel name ({}); expected the form "
                             "bfly_<operation>_<type>_w<W>_k<K>_r<R>_<variant>, e.g. "
                             "bfly_sample_f32_w32_k1024_r8_addsub", name, why));
  };
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = name.find('_', start);
    fields.push_back(name.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  // bfly_<operation>_<type>_w<W>_k<K>_r<R>_<variant>; the operation may itself contain '_' (lda_z_doc).
  if (fields.size() < 7 || fields[0] != "bfly") throw fail("it must have at least 7 fields separated by '_'");
  std::string operation(fields[1]);
  for (std::size_t i = 2; i + 5 < fields.size(); ++i) operation += "_" + std::string(fields[i]);
  fields.erase(fields.begin() + 2, fields.end() - 5);
  const auto tagged = [&](std::string_view field, char tag, std::string_view what) {
    if (field.size() < 2 || field[0] != tag) throw fail(fmt::format("field '{}' must start with '{}'", field, tag));
    return parse_int(field.substr(1), what);
  };
  KernelSpec spec;
  try {
    spec.operation = parse_operation(operation);
    spec.type = parse_element_type(fields[2]);
    spec.W = tagged(fields[3], 'w', "W");
    spec.K = tagged(fields[4], 'k', "K");
    spec.R = tagged(fields[5], 'r', "R");
    spec.variant = parse_variant(fields[6]);
  } catch (const Error& e) {
    throw fail(e.what());
  }
  spec.validate();
  if (kernel_name(spec) != name) throw fail("it is not in canonical form");
  return spec;
}

std::string describe(const KernelSpec& spec) {
  return fmt::format("W={} K={} R={} type={} variant={} operation={}", spec.W, spec.K, spec.R, name_of(spec.type),
                     name_of(spec.variant), name_of(spec.operation));
}

}  // namespace bfly::gen
