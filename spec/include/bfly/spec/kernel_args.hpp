// PackedArgs: the arguments of one kernel launch, converted to the parameter types of the kernel's family and
// checked against their roles, laid out as cuLaunchKernel's kernelParams. The GPU launch (bfly::rt::launch) and the
// CPU execution (bfly::cpu::run) take the same PackedArgs, so there is one way to pass arguments to a kernel.
#pragma once

#include "bfly/spec/kernel_family.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bfly::gen {

// One argument as a caller gives it: a device (or, on the CPU, host) pointer, an integer or a double. The
// conversion to the parameter's type happens in PackedArgs, which checks that the value fits.
class ArgValue {
 public:
  enum class Kind { pointer, signed_integer, unsigned_integer, real };

  template <typename P>
  ArgValue(P* pointer) : kind_(Kind::pointer), pointer_(const_cast<void*>(static_cast<const void*>(pointer))) {}
  ArgValue(std::nullptr_t) : kind_(Kind::pointer) {}
  template <std::signed_integral I>
  ArgValue(I value) : kind_(Kind::signed_integer), signed_(value) {}
  template <std::unsigned_integral U>
  ArgValue(U value) : kind_(Kind::unsigned_integer), unsigned_(value) {}
  ArgValue(double value) : kind_(Kind::real), real_(value) {}

  Kind kind() const { return kind_; }
  void* pointer() const { return pointer_; }
  std::int64_t signed_value() const { return signed_; }
  std::uint64_t unsigned_value() const { return unsigned_; }
  double real() const { return real_; }

 private:
  Kind kind_;
  void* pointer_ = nullptr;
  std::int64_t signed_ = 0;
  std::uint64_t unsigned_ = 0;
  double real_ = 0;
};

class PackedArgs {
 public:
  // `values` in the order of family.args. Throws bfly::Error, every message starting with `caller`, for a wrong
  // count, a value of the wrong kind or out of its type's range, a negative item count, a row stride below
  // `min_row_stride` (the kernel's K; 0 skips the check), or a null input, output or scratch array while there
  // is work (item count > 0).
  PackedArgs(const KernelFamily& family, ElementType element, std::string_view caller,
             std::initializer_list<ArgValue> values, long long min_row_stride = 0);
  PackedArgs(PackedArgs&&) noexcept = default;
  PackedArgs& operator=(PackedArgs&&) noexcept = default;
  PackedArgs(const PackedArgs&) = delete;
  PackedArgs& operator=(const PackedArgs&) = delete;

  // Replaces the argument `name` (checked the same way): for values known only after the checks, such as the
  // invalid-item counters a GPU object allocates once it has a context.
  void set(std::string_view name, ArgValue value);

  // The items the grid must cover (the items argument; 1 for a family without one).
  long long items() const { return items_; }
  const KernelFamily& family() const { return *family_; }
  ElementType element() const { return element_; }
  // kernelParams: data()[i] points at argument i, stored in its parameter's type.
  void** data() { return pointers_.data(); }

  // The value of argument `name` as stored (for tests and messages).
  std::int64_t integer(std::string_view name) const;
  void* pointer(std::string_view name) const;

 private:
  void store(std::size_t index, const ArgValue& value);
  void check_arrays();

  const KernelFamily* family_;
  ElementType element_;
  std::string caller_;
  long long min_row_stride_;
  long long items_ = 1;
  std::vector<std::uint64_t> storage_;  // one 8-byte slot per argument, holding it in its parameter's type
  std::vector<void*> pointers_;         // &storage_[i]
};

}  // namespace bfly::gen
