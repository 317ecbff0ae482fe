// Philox4x32-10 (Salmon et al., SC'11): the counter-based generator behind every bfly draw (docs/DESIGN.md section 5).
// The same text compiles with NVRTC for the GPU and as C++ for the CPU execution (through bfly/lockstep.hpp),
// so both produce the same uniforms for the same (seed, counter).
// An include guard rather than #pragma once: the ahead-of-time header pastes this text, and two pasted
// copies (two generated headers in one translation unit) must still define everything once.
#ifndef BFLY_PHILOX_CUH
#define BFLY_PHILOX_CUH

namespace bfly {

struct Philox4x32 {
  unsigned int v[4];
};

__device__ __forceinline__ unsigned int philox_mulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}

// Ten rounds of the Philox4x32 bijection of `counter` under `key`.
__device__ __forceinline__ Philox4x32 philox4x32_10(Philox4x32 counter, unsigned int key0, unsigned int key1) {
  const unsigned int kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;      // round multipliers
  const unsigned int kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;    // key schedule increments
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const unsigned int hi0 = philox_mulhi(kMul0, counter.v[0]), lo0 = kMul0 * counter.v[0];
    const unsigned int hi1 = philox_mulhi(kMul1, counter.v[2]), lo1 = kMul1 * counter.v[2];
    counter = Philox4x32{{hi1 ^ counter.v[1] ^ key0, lo1, hi0 ^ counter.v[3] ^ key1, lo0}};
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return counter;
}

// The 32 random bits of draw `draw` for item `index` (a row or a token) in iteration `iteration`:
// key = (seed lo, seed hi), counter = (index lo, index hi, draw, iteration); first output word.
__device__ __forceinline__ unsigned int philox_bits(unsigned long long seed, unsigned long long index,
                                                    unsigned int draw, unsigned int iteration) {
  const Philox4x32 counter{{static_cast<unsigned int>(index), static_cast<unsigned int>(index >> 32), draw,
                            iteration}};
  return philox4x32_10(counter, static_cast<unsigned int>(seed), static_cast<unsigned int>(seed >> 32)).v[0];
}

// 32 random bits to a uniform in [0, 1) that is never 1: 24 bits for float (exact), 32 for double (exact).
__device__ __forceinline__ float uniform_from_bits(unsigned int bits, float) {
  return static_cast<float>(bits >> 8) * 5.9604644775390625e-8f;  // 2^-24
}
__device__ __forceinline__ double uniform_from_bits(unsigned int bits, double) {
  return static_cast<double>(bits) * 2.3283064365386962890625e-10;  // 2^-32
}

}  // namespace bfly

#endif  // BFLY_PHILOX_CUH
