// SHA-256 for cache keys and entry checksums (FIPS 180-4); internal to the runtime.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bfly::rt::detail {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  std::array<std::uint8_t, 32> digest();  // finishes the hash; the object must not be updated afterwards
  std::string hex_digest();               // 64 lowercase hex digits

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  // bytes hashed so far
};

inline std::string sha256_hex(std::string_view bytes) { return Sha256().update(bytes).hex_digest(); }

}  // namespace bfly::rt::detail
