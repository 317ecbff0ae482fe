// The argument checks shared by the LDA z-step launchers (LdaZStep::run, LdaBaselineStep::run), which take the same
// theta, phi and document arrays: the same rules, the same messages, before anything touches the GPU.
#pragma once

#include "bfly/error.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <string_view>
#include <utility>

namespace bfly::rt {

// Row strides of at least K and a non-negative document count; `caller` starts every message.
inline void check_lda_shape(std::string_view caller, int K, long long ld_theta, long long ld_phi, long long D) {
  if (ld_theta < K) throw Error(fmt::format("{}: ld_theta = {} is less than K = {}", caller, ld_theta, K));
  if (ld_phi < K) throw Error(fmt::format("{}: ld_phi = {} is less than K = {}", caller, ld_phi, K));
  if (D < 0) throw Error(fmt::format("{}: D = {} is negative; D is the number of documents", caller, D));
}

// Every named device array is non-null (checked when D > 0, the only case that launches).
inline void check_lda_pointers(std::string_view caller, long long D,
                               std::initializer_list<std::pair<const void*, const char*>> pointers) {
  for (const auto& [pointer, name] : pointers)
    if (pointer == nullptr) throw Error(fmt::format("{}: {} is null (D = {})", caller, name, D));
}

}  // namespace bfly::rt
