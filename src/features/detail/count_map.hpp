// Counts occurrences of string features without allocating per feature: an open-addressing
// table of indices into an entry vector kept in first-occurrence order. Keys are views; the
// text they point into must outlive the map's use.
#pragma once

#include "features/hash.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace simdup::detail {

class count_map {
 public:
  struct entry {
    std::string_view key;
    uint64_t hash;  ///< XXH3-64 of key (the default feature hash, so callers can reuse it)
    uint64_t count;
  };

  /// Empties the map, keeping its memory.
  void clear() noexcept {
    entries_.clear();
    std::fill(slots_.begin(), slots_.end(), 0u);
  }

  void add(std::string_view key, uint64_t count = 1) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const uint64_t h = xxh3_64(key);
    std::size_t i = h & mask_;
    while (uint32_t slot = slots_[i]) {
      entry& e = entries_[slot - 1];
      if (e.hash == h && e.key == key) {
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

  std::vector<uint32_t> slots_;  // 0 = empty, otherwise index + 1 into entries_
  std::vector<entry> entries_;
  std::size_t mask_ = 0;
};

}  // namespace simdup::detail
