// The element types of weights and running sums: one row per type in BFLY_ELEMENT_TYPES, and everything else (the
// enum, the name in kernel names, the CUDA type, the host type, the size, the accumulator) derived from that row.
//
// Adding a type is one row here plus its device overloads in templates/bfly/ (docs/EXTENDING.md).
#pragma once

#include "bfly/half_types.hpp"

#include <string_view>
#include <type_traits>

namespace bfly::gen {

// X(tag, CUDA type, host C++ type, bytes, accumulator tag): the tag names the type in kernel names and on command
// lines ("f32"); the CUDA type is what generated code declares; the host type is what the C++ APIs take; the
// accumulator is the type of the running sums (the type itself for f32 and f64). f16 and bf16 are storage types
// (bfly/half_types.hpp): the kernels widen each weight to the accumulator, f32, when they load it.
#define BFLY_ELEMENT_TYPES(X)                            \
  X(f32, float, float, 4, f32)                           \
  X(f64, double, double, 8, f64)                         \
  X(f16, bfly::half_bits, bfly::half_bits, 2, f32)       \
  X(bf16, bfly::bf16_bits, bfly::bf16_bits, 2, f32)

enum class ElementType {
#define BFLY_ELEMENT_TYPE_ENUM(tag, cuda, host, bytes, accumulator) tag,
  BFLY_ELEMENT_TYPES(BFLY_ELEMENT_TYPE_ENUM)
#undef BFLY_ELEMENT_TYPE_ENUM
};

struct ElementTypeInfo {
  ElementType type;
  std::string_view tag;        // "f32"
  std::string_view cuda_type;  // "float"
  std::string_view host_type;  // "float"
  int size;                    // bytes of one element
  ElementType accumulator;     // type of the running sums
  // A storage type whose sums are kept in a wider accumulator (f16, bf16): the LDA kernels take only the others.
  constexpr bool narrow() const { return accumulator != type; }
};

// Every element type, in the order of BFLY_ELEMENT_TYPES.
inline constexpr ElementTypeInfo kElementTypes[] = {
#define BFLY_ELEMENT_TYPE_ROW(tag, cuda, host, bytes, accumulator) \
  {ElementType::tag, #tag, #cuda, #host, bytes, ElementType::accumulator},
    BFLY_ELEMENT_TYPES(BFLY_ELEMENT_TYPE_ROW)
#undef BFLY_ELEMENT_TYPE_ROW
};

const ElementTypeInfo& info(ElementType type);  // throws bfly::Error for a value outside the enum
std::string_view name_of(ElementType type);     // "f32"
std::string_view cuda_type(ElementType type);   // "float"
int size_of(ElementType type);                  // 4
ElementType accumulator_of(ElementType type);   // f32
bool is_narrow(ElementType type);               // true for f16 and bf16: stored narrow, summed in the accumulator
// Throws bfly::Error listing the allowed tags.
ElementType parse_element_type(std::string_view text);

// The element type of host type T at compile time; a type without a row does not compile.
template <typename T>
struct ElementTypeOf;
#define BFLY_ELEMENT_TYPE_TRAIT(tag, cuda, host, bytes, accumulator) \
  template <>                                                     \
  struct ElementTypeOf<host> {                                    \
    static constexpr ElementType value = ElementType::tag;        \
  };
BFLY_ELEMENT_TYPES(BFLY_ELEMENT_TYPE_TRAIT)
#undef BFLY_ELEMENT_TYPE_TRAIT
template <typename T>
inline constexpr ElementType element_type_of = ElementTypeOf<std::remove_cv_t<T>>::value;

// Calls f(std::type_identity<host type>{}) for the host type of `type`: typed code for a type known at run time.
template <typename F>
decltype(auto) visit_element_type(ElementType type, F&& f) {
  switch (type) {
#define BFLY_ELEMENT_TYPE_CASE(tag, cuda, host, bytes, accumulator) \
  case ElementType::tag:                                         \
    return f(std::type_identity<host>{});
    BFLY_ELEMENT_TYPES(BFLY_ELEMENT_TYPE_CASE)
#undef BFLY_ELEMENT_TYPE_CASE
  }
  info(type);  // throws for a value outside the enum
  return f(std::type_identity<float>{});
}

}  // namespace bfly::gen
