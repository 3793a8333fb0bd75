// The tables of a layout as bit permutations: each table moves its prefix blocks to the most
// significant end of the key. Internal to the index.
#pragma once

#include <simdup/plan.hpp>

#include <bit>
#include <cstdint>
#include <vector>

namespace simdup::detail {

/// A contiguous run of bits moved as a unit: `width` bits taken at `src_shift` of the
/// fingerprint land at `dst_shift` of the key.
struct bit_move {
  int src_shift;
  int dst_shift;
  uint64_t mask;  ///< width ones, low bits
};

/// One table: a bit permutation whose first `prefix_bits` key bits are the table's blocks.
struct table_perm {
  std::vector<bit_move> moves;
  int prefix_bits = 0;
  /// Fingerprint bits of the prefix (in fingerprint coordinates).
  uint64_t prefix_mask = 0;

  uint64_t apply(uint64_t x) const noexcept {
    uint64_t out = 0;
    for (const bit_move& m : moves) out |= ((x >> m.src_shift) & m.mask) << m.dst_shift;
    return out;
  }
};

/// Tables of a valid layout in a fixed order (level-1 choices lexicographic, then level 2).
/// The order defines "first table" for reporting each pair once.
std::vector<table_perm> build_tables(const index_layout& layout);

/// For the "report once" rule: true when some table before `t` has a prefix on which the two
/// fingerprints (x = a ^ b in fingerprint coordinates) agree.
inline bool earlier_table_matches(const std::vector<table_perm>& tables, std::size_t t,
                                  uint64_t x) noexcept {
  for (std::size_t u = 0; u < t; ++u)
    if ((x & tables[u].prefix_mask) == 0) return true;
  return false;
}

/// True when table `t` is the first whose whole prefix the two fingerprints share: the one
/// table that reports the pair. Probes that look at only part of a prefix need both tests.
inline bool reporting_table(const std::vector<table_perm>& tables, std::size_t t,
                            uint64_t x) noexcept {
  return (x & tables[t].prefix_mask) == 0 && !earlier_table_matches(tables, t, x);
}

/// Even split of `bits` into `blocks` widths, wider blocks first.
std::vector<int> even_widths(int bits, int blocks);

}  // namespace simdup::detail
