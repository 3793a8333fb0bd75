// SimHash primitives: feature hashes, weighted bit votes, Hamming distance, hex form.
#pragma once

#include <simdup/error.hpp>

#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace simdup {

/// Stable 64-bit feature hashes. Never a per-process seeded hash.
enum class hash_kind {
  xxh3,   ///< XXH3-64 with seed 0 (default): fast and stable across runs and machines
  fnv1a,  ///< FNV-1a 64
  md5,    ///< last 8 bytes of MD5, big-endian (python-simhash compatibility)
};

/// Hashes one feature's UTF-8 bytes.
uint64_t hash_feature(hash_kind kind, std::string_view feature) noexcept;

/// Number of differing bits.
inline int hamming_distance(uint64_t a, uint64_t b) noexcept {
  return std::popcount(a ^ b);
}

/// "0123456789abcdef": 16 lowercase hex digits, zero padded.
std::string to_hex(uint64_t fingerprint);

/// Parses exactly 16 hex digits (either case). Anything else is errc::invalid_input.
result<uint64_t> parse_hex(std::string_view text);

}  // namespace simdup
