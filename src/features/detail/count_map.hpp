// Counts occurrences of string features without allocating per feature: an open-addressing
// table of indices into an entry vector kept in first-occurrence order. Keys are views; the
// text they point into must outlive the map's use.
#pragma once

#include "features/hash.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// a[0..n) == b[0..n), inlined for the short keys features are: two overlapping loads cover
/// 4..16 bytes (a width-4 shingle of CJK text is 12), where a call to memcmp cost more than
/// the comparison.
inline bool short_equal(const char* a, const char* b, std::size_t n) noexcept {
  const auto load64 = [](const char* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  const auto load32 = [](const char* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  if (n > 16) return std::memcmp(a, b, n) == 0;
  if (n >= 8) return load64(a) == load64(b) && load64(a + n - 8) == load64(b + n - 8);
  if (n >= 4) return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

class count_map {
 public:
  struct entry {
    std::string_view key;
    uint64_t hash;  ///< XXH3-64 of key (the default feature hash, so callers can reuse it)
    uint64_t count;
  };

  /// Empties the map, keeping its memory unless the table is large and was mostly empty: a
  /// table grown for one huge document would otherwise make every later clear cost as much.
  void clear() noexcept {
    if (slots_.size() > kKeepSlots && entries_.size() * 8 < slots_.size()) {
      slots_ = {};
      entries_ = {};
      mask_ = 0;
      return;
    }
    entries_.clear();
    std::fill(slots_.begin(), slots_.end(), 0u);
  }

  void add(std::string_view key, uint64_t count = 1) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const uint64_t h = xxh3_64_short(key);
    std::size_t i = h & mask_;
    while (uint32_t slot = slots_[i]) {
      entry& e = entries_[slot - 1];
      if (e.hash == h && e.key.size() == key.size() &&
          short_equal(e.key.data(), key.data(), key.size())) {
        e.count += count;
        return;
      }
      i = (i + 1) & mask_;
    }
    entries_.push_back({key, h, count});
    slots_[i] = static_cast<uint32_t>(entries_.size());
  }

  /// Distinct keys, in first-occurrence order.
  const std::vector<entry>& entries() const noexcept { return entries_; }

 private:
  void grow() {
    const std::size_t n = slots_.empty() ? 64 : slots_.size() * 2;
    slots_.assign(n, 0u);
    mask_ = n - 1;
    for (std::size_t k = 0; k < entries_.size(); ++k) {
      std::size_t i = entries_[k].hash & mask_;
      while (slots_[i] != 0) i = (i + 1) & mask_;
      slots_[i] = static_cast<uint32_t>(k + 1);
    }
  }

  static constexpr std::size_t kKeepSlots = std::size_t{1} << 16;  // 256 KiB of slots

  std::vector<uint32_t> slots_;  // 0 = empty, otherwise index + 1 into entries_
  std::vector<entry> entries_;
  std::size_t mask_ = 0;
};

}  // namespace simdup::detail
