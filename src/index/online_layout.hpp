// Sizing rules of the online index's sealed segments, shared with the planner.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace simdup::detail {

/// Directory bits of a sealed segment with n entries: about two entries per directory slot
/// (a slot is 4 bytes, so ~2 bytes per entry per table), never more than the shortest prefix.
inline int directory_bits(uint64_t n, int min_prefix_bits) {
  const int bits = std::bit_width(n) - 2;
  return std::clamp(bits, 0, min_prefix_bits);
}

/// Resident bytes per entry of a sealed segment: fingerprint, id and timestamp (24), one
/// 4-byte ordinal per table but the first (entries are stored in table 0's order), the
/// directories and the deletion bitmap.
inline double online_bytes_per_entry(uint64_t n, std::size_t tables, int min_prefix_bits) {
  if (n == 0) n = 1;
  const double dir_slots =
      static_cast<double>((uint64_t{1} << directory_bits(n, min_prefix_bits)) + 1);
  return 24.0 + 4.0 * static_cast<double>(tables - 1) +
         4.0 * dir_slots * static_cast<double>(tables) / static_cast<double>(n) + 0.125;
}

}  // namespace simdup::detail
