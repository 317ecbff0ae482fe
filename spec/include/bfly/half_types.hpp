// The 16-bit storage types of the element-type table on the host: f16 (IEEE binary16) and bf16 (bfloat16), each
// a plain struct of its bits. The generated kernels declare the same structs (templates/bfly/sample_support.cuh,
// under the same guard), so a std::vector<bfly::half_bits> is what Sampler::sample<bfly::half_bits> takes and what
// the CPU execution of a kernel reads. Loads widen them to float, the accumulator of both types.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#ifndef BFLY_HALF_BITS_DEFINED
#define BFLY_HALF_BITS_DEFINED
namespace bfly {
struct half_bits {
  unsigned short bits;
};
struct bf16_bits {
  unsigned short bits;
};
}  // namespace bfly
#endif

namespace bfly {

// Exact widening to float: what the kernels' bfly::widen computes.
inline float to_float(half_bits h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  const std::uint32_t exponent = (h.bits >> 10) & 0x1fu, mantissa = h.bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  const std::uint32_t bits =
      exponent == 31 ? sign | 0x7f800000u | (mantissa << 13) : sign | ((exponent + 112u) << 23) | (mantissa << 13);
  return std::bit_cast<float>(bits);
}
inline float to_float(bf16_bits b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16); }

// Rounding to nearest, ties to even (NaN stays NaN, overflow gives infinity).
inline bf16_bits to_bf16(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16_bits{static_cast<unsigned short>((u >> 16) | 0x40u)};  // NaN
  const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return bf16_bits{static_cast<unsigned short>(rounded >> 16)};
}
inline half_bits to_half(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint32_t>((u >> 16) & 0x8000u);
  const std::uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return half_bits{static_cast<unsigned short>(sign | 0x7e00u)};  // NaN
  if (magnitude >= 0x477ff000u) return half_bits{static_cast<unsigned short>(sign | 0x7c00u)};  // rounds to inf
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half (or zero), in units of 2^-24, ties to even
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // exact: a power-of-two scaling
    const auto whole = static_cast<std::uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(whole);
    const std::uint32_t m = whole + (rest > 0.5f || (rest == 0.5f && (whole & 1u)) ? 1u : 0u);
    return half_bits{static_cast<unsigned short>(sign | m)};
  }
  // Normal: rebias the exponent and round the 23-bit mantissa to 10 bits (a carry may bump the exponent).
  const std::uint32_t rebased = magnitude - (112u << 23);
  const std::uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return half_bits{static_cast<unsigned short>(sign | (rounded >> 13))};
}

}  // namespace bfly
