// Sizing rules of the online index's sealed segments, shared with the planner.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace simdup::detail {

/// Directory slots hold 2^slot_entries_log2 to 2^(slot_entries_log2 + 1) entries on average:
/// with a presence mask per slot, a probe of a slot that holds nothing near the query stops at
/// the slot, so slots can be coarser (and hold a 32-bit mask beside their offset) at half the
/// memory of the finer 4-byte directory they replace (4 to 8 entries probed about 15% faster at
/// 10 bytes more per entry with 10 tables).
inline constexpr int slot_entries_log2 = 3;

/// Key bits after the directory bits that a slot's presence mask covers (32 = 2^5 bits).
inline constexpr int presence_bits_max = 5;

/// Directory bits of a sealed segment with n entries: 8 to 16 entries per directory slot on
/// average (a slot is 8 bytes, so 0.5 to 1 byte per entry per table), never more than the
/// shortest prefix.
inline int directory_bits(uint64_t n, int min_prefix_bits) {
  const int bits = static_cast<int>(std::bit_width(n)) - 1 - slot_entries_log2;
  return std::clamp(bits, 0, min_prefix_bits);
}

/// Directory bits of a version 1 or 2 block (about two entries per 4-byte slot). Also the key
/// bits the planner's cost model takes a sealed-segment probe to resolve before it reads
/// entries (with min_prefix_bits 64), with which its cost constants were fitted: presence masks
/// resolve up to 5 bits more, which the model does not credit (it never credited filter bits
/// either), so plans stay as they were.
inline int legacy_directory_bits(uint64_t n, int min_prefix_bits) {
  return std::clamp(static_cast<int>(std::bit_width(n)) - 2, 0, min_prefix_bits);
}

/// Resident bytes per entry of a sealed segment: fingerprint, id and timestamp (24), one
/// 4-byte ordinal per table but the first (entries are stored in table 0's order), the
/// directories (2^d + 1 slots of 8 bytes per table) and the deletion bitmap.
inline double online_bytes_per_entry(uint64_t n, std::size_t tables, int min_prefix_bits) {
  if (n == 0) n = 1;
  const double dir_slots =
      static_cast<double>((uint64_t{1} << directory_bits(n, min_prefix_bits)) + 1);
  return 24.0 + 4.0 * static_cast<double>(tables - 1) +
         8.0 * dir_slots * static_cast<double>(tables) / static_cast<double>(n) + 0.125;
}

}  // namespace simdup::detail
