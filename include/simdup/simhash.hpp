// Fingerprint helpers of util: Hamming distance and the hex form. The feature hashes are in
// fingerprint.hpp (features).
#pragma once

#include <simdup/error.hpp>

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

namespace simdup {

/// Number of differing bits.
inline int hamming_distance(uint64_t a, uint64_t b) noexcept {
  return std::popcount(a ^ b);
}

/// "0123456789abcdef": 16 lowercase hex digits, zero padded.
std::string to_hex(uint64_t fingerprint);

/// Parses exactly 16 hex digits (either case). Anything else is errc::invalid_input.
result<uint64_t> parse_hex(std::string_view text);

}  // namespace simdup
