// PackedArgs: conversion of the caller's values to the kernel's parameter types, and the checks its roles imply.
#include "bfly/spec/kernel_args.hpp"

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>

namespace bfly::gen {
namespace {

std::string_view kind_name(ArgValue::Kind kind) {
  switch (kind) {
    case ArgValue::Kind::pointer: return "a pointer";
    case ArgValue::Kind::signed_integer: return "an integer";
    case ArgValue::Kind::unsigned_integer: return "an integer";
    case ArgValue::Kind::real: return "a floating-point number";
  }
  return "a value";
}

// The value as a signed 64-bit integer, when it is an integer that fits.
bool as_int64(const ArgValue& value, std::int64_t& out) {
  if (value.kind() == ArgValue::Kind::signed_integer) {
    out = value.signed_value();
    return true;
  }
  if (value.kind() == ArgValue::Kind::unsigned_integer &&
      value.unsigned_value() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    out = static_cast<std::int64_t>(value.unsigned_value());
    return true;
  }
  return false;
}

template <typename V>
void put(std::uint64_t& slot, V value) {
  static_assert(sizeof(V) <= sizeof(slot));
  slot = 0;
  std::memcpy(&slot, &value, sizeof(V));
}

}  // namespace

PackedArgs::PackedArgs(const KernelFamily& family, ElementType element, std::string_view caller,
                       std::initializer_list<ArgValue> values, long long min_row_stride)
    : family_(&family), element_(element), caller_(caller), min_row_stride_(min_row_stride) {
  if (values.size() != family.args.size()) {
    std::string names;
    for (const KernelArg& arg : family.args) names += (names.empty() ? "" : ", ") + std::string(arg.name);
    throw Error(fmt::format("{}: {} kernels take {} arguments ({}), got {}", caller_, family.name, family.args.size(),
                            names, values.size()));
  }
  storage_.resize(values.size());
  pointers_.resize(values.size());
  for (std::size_t i = 0; i < storage_.size(); ++i) pointers_[i] = &storage_[i];
  std::size_t index = 0;
  for (const ArgValue& value : values) store(index++, value);
  check_arrays();
}

void PackedArgs::set(std::string_view name, ArgValue value) {
  store(family_->index_of(name), value);
  check_arrays();
}

void PackedArgs::store(std::size_t index, const ArgValue& value) {
  const KernelArg& arg = family_->args[index];
  std::uint64_t& slot = storage_[index];
  const auto wrong_kind = [&](std::string_view expected) {
    return Error(fmt::format("{}: {} must be {} ({}), got {}", caller_, arg.name, expected, c_type(arg.type, element_),
                             kind_name(value.kind())));
  };
  if (is_pointer(arg.type)) {
    if (value.kind() != ArgValue::Kind::pointer) throw wrong_kind("a pointer");
    if (rows_on_pairs_required(*family_, min_row_stride_) && arg.role == ArgRole::input &&
        !starts_on_pair(value.pointer(), element_))
      throw Error(fmt::format("{}: {} is not aligned to {} bytes: {} kernels load two adjacent elements at once "
                              "(bfly::gen::fit_to_rows picks the same kernel over single elements for such rows)",
                              caller_, arg.name, 2 * size_of(element_), family_->name));
    put(slot, value.pointer());
    return;
  }
  if (arg.type == ArgType::f64) {
    std::int64_t integer = 0;
    if (value.kind() == ArgValue::Kind::real) put(slot, value.real());
    else if (as_int64(value, integer)) put(slot, static_cast<double>(integer));
    else throw wrong_kind("a number");
    return;
  }
  // Integers: the value must fit the parameter's type.
  if (value.kind() == ArgValue::Kind::pointer || value.kind() == ArgValue::Kind::real) throw wrong_kind("an integer");
  const auto out_of_range = [&](auto lo, auto hi) {
    const std::string shown = value.kind() == ArgValue::Kind::signed_integer ? std::to_string(value.signed_value())
                                                                             : std::to_string(value.unsigned_value());
    return Error(fmt::format("{}: {} = {} does not fit its type {} ([{}, {}])", caller_, arg.name, shown,
                             c_type(arg.type, element_), lo, hi));
  };
  if (arg.type == ArgType::u64) {
    if (value.kind() == ArgValue::Kind::signed_integer && value.signed_value() < 0)
      throw out_of_range(0ull, std::numeric_limits<unsigned long long>::max());
    put(slot, value.kind() == ArgValue::Kind::signed_integer ? static_cast<unsigned long long>(value.signed_value())
                                                               : static_cast<unsigned long long>(value.unsigned_value()));
    return;
  }
  std::int64_t v = 0;
  if (!as_int64(value, v)) throw out_of_range(std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max());
  switch (arg.type) {
    case ArgType::i64:
      put(slot, static_cast<long long>(v));
      break;
    case ArgType::i32:
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
        throw out_of_range(std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
      put(slot, static_cast<int>(v));
      break;
    case ArgType::u32:
      if (v < 0 || v > std::numeric_limits<unsigned int>::max())
        throw out_of_range(0u, std::numeric_limits<unsigned int>::max());
      put(slot, static_cast<unsigned int>(v));
      break;
    default:
      throw Error(fmt::format("{}: {} has an unsupported parameter type", caller_, arg.name));
  }
  if (arg.role == ArgRole::items && v < 0)
    throw Error(fmt::format("{}: {} = {} is negative; {} is the number of {}s", caller_, arg.name, v, arg.name,
                            family_->item));
  if (arg.role == ArgRole::row_stride && v < min_row_stride_)
    throw Error(fmt::format("{}: {} = {} is less than K = {}", caller_, arg.name, v, min_row_stride_));
  if (arg.role == ArgRole::row_stride && rows_on_pairs_required(*family_, min_row_stride_) && v % 2 != 0)
    throw Error(fmt::format("{}: {} = {} is odd: {} kernels load two adjacent elements at once, so every row must "
                            "start on a pair (bfly::gen::fit_to_rows picks the same kernel over single elements for "
                            "such rows)", caller_, arg.name, v, family_->name));
}

void PackedArgs::check_arrays() {
  items_ = 1;
  const KernelArg* items_arg = nullptr;
  for (std::size_t i = 0; i < storage_.size(); ++i)
    if (family_->args[i].role == ArgRole::items) {
      items_arg = &family_->args[i];
      std::memcpy(&items_, &storage_[i], sizeof(long long));
    }
  if (items_ == 0) return;  // nothing is launched, so no array is read
  for (std::size_t i = 0; i < storage_.size(); ++i) {
    const KernelArg& arg = family_->args[i];
    const bool required = arg.role == ArgRole::input || arg.role == ArgRole::output || arg.role == ArgRole::scratch;
    if (required && storage_[i] == 0)
      throw Error(items_arg != nullptr
                      ? fmt::format("{}: {} is null ({} = {})", caller_, arg.name, items_arg->name, items_)
                      : fmt::format("{}: {} is null", caller_, arg.name));
  }
}

std::int64_t PackedArgs::integer(std::string_view name) const {
  const std::size_t index = family_->index_of(name);
  const ArgType type = family_->args[index].type;
  const std::uint64_t slot = storage_[index];
  switch (type) {
    case ArgType::i32: { int v; std::memcpy(&v, &slot, sizeof v); return v; }
    case ArgType::u32: { unsigned int v; std::memcpy(&v, &slot, sizeof v); return v; }
    case ArgType::i64: { long long v; std::memcpy(&v, &slot, sizeof v); return v; }
    case ArgType::u64: return static_cast<std::int64_t>(slot);
    default: throw Error(fmt::format("{}: {} is not an integer argument", caller_, name));
  }
}

void* PackedArgs::pointer(std::string_view name) const {
  const std::size_t index = family_->index_of(name);
  if (!is_pointer(family_->args[index].type)) throw Error(fmt::format("{}: {} is not a pointer argument", caller_, name));
  void* p = nullptr;
  std::memcpy(&p, &storage_[index], sizeof p);
  return p;
}

}  // namespace bfly::gen
