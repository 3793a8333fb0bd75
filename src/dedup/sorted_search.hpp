// Galloping search over sorted hashes, for the per-bin minima of one-permutation MinHash (the
// band keys and the candidate sketch): the next bin's first hash is a few steps past the last
// bin's, so doubling steps then a binary search cost O(log gap) per bin, not a pass over every
// hash.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace simdup::detail {

/// The first index at or after `from` (at most sorted.size()) whose hash is at least `value`;
/// sorted.size() when there is none.
inline std::size_t gallop_to(std::span<const uint32_t> sorted, std::size_t from, uint64_t value) {
  const std::size_t n = sorted.size();
  std::size_t step = 1, lo = from;
  while (lo + step < n && sorted[lo + step] < value) {
    lo += step;
    step *= 2;
  }
  const auto begin = sorted.begin() + static_cast<std::ptrdiff_t>(lo);
  const auto end = sorted.begin() + static_cast<std::ptrdiff_t>(std::min(n, lo + step + 1));
  return static_cast<std::size_t>(std::lower_bound(begin, end, value) - sorted.begin());
}

}  // namespace simdup::detail
