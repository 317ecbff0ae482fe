// Philox4x32-10 against the known-answer vectors of Random123 (Salmon et al.), and the uniform mapping.
#include "reference_sampler.hpp"

#include <gtest/gtest.h>

namespace {

struct Vector {
  bfly::Philox4x32 counter;
  unsigned int key0, key1;
  bfly::Philox4x32 expected;
};

TEST(Philox, MatchesRandom123KnownAnswers) {
  const Vector vectors[] = {
      {{{0u, 0u, 0u, 0u}}, 0u, 0u, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Vector& v : vectors) {
    const bfly::Philox4x32 out = bfly::philox4x32_10(v.counter, v.key0, v.key1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], v.expected.v[i]) << "word " << i;
  }
}

TEST(Philox, UniformsStayBelowOne) {
  EXPECT_EQ(bfly::uniform_from_bits(0u, 0.0f), 0.0f);
  EXPECT_LT(bfly::uniform_from_bits(0xffffffffu, 0.0f), 1.0f);
  EXPECT_LT(bfly::uniform_from_bits(0xffffffffu, 0.0), 1.0);
  EXPECT_EQ(bfly::uniform_from_bits(0x80000000u, 0.0), 0.5);
  // The counter layout of docs/DESIGN.md section 5: (index lo, index hi, draw, iteration), key (seed lo, seed hi).
  const bfly::Philox4x32 direct = bfly::philox4x32_10({{5u, 1u, 2u, 3u}}, 7u, 9u);
  EXPECT_EQ(bfly::philox_bits((9ull << 32) | 7u, (1ull << 32) | 5u, 2u, 3u), direct.v[0]);
}

}  // namespace
