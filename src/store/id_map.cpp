#include "store/id_map.hpp"

#include <cmath>
#include <functional>

namespace simdup::detail {
namespace {

/// Past this load a shard grows by grow_factor: linear probing's scans stay short (about 20
/// slots, three cache lines, for an absent id) and the map averages about 11 bytes per id.
constexpr double max_load = 0.85;
constexpr double grow_factor = 1.4;
constexpr std::size_t min_slots = 16;

constexpr uint64_t number_mask = id_map::max_number;

uint32_t slot_tag(uint64_t slot) noexcept {
  return static_cast<uint32_t>(slot >> 40);
}

}  // namespace

uint64_t id_map::hash(std::string_view id) noexcept {
  return std::hash<std::string_view>{}(id);
}

void id_map::find(uint64_t h, std::vector<uint64_t>& out) const {
  const shard& s = shards_[h >> (64 - shard_bits)];
  if (s.slots.empty()) return;
  const uint32_t tag = tag_of(h);
  for (std::size_t i = s.home(tag); s.slots[i] != 0; i = s.next(i)) {
    if (slot_tag(s.slots[i]) == tag) out.push_back(s.slots[i] & number_mask);
  }
}

void id_map::insert(uint64_t h, uint64_t number) {
  shard& s = shard_of(shards_, h);
  if (static_cast<double>(s.used + 1) > max_load * static_cast<double>(s.slots.size())) s.grow();
  s.place(uint64_t{tag_of(h)} << 40 | (number & number_mask));
  ++s.used;
  ++size_;
}

bool id_map::erase(uint64_t h, uint64_t number) {
  shard& s = shard_of(shards_, h);
  if (s.slots.empty()) return false;
  const uint64_t wanted = uint64_t{tag_of(h)} << 40 | (number & number_mask);
  std::size_t i = s.home(tag_of(h));
  while (s.slots[i] != wanted) {
    if (s.slots[i] == 0) return false;
    i = s.next(i);
  }
  // Backward shift: each later entry of the run that may sit at the hole (its home is not
  // between the hole and itself) moves into it, so no scan ever stops early at a gap.
  for (std::size_t j = s.next(i); s.slots[j] != 0; j = s.next(j)) {
    const std::size_t home = s.home(slot_tag(s.slots[j]));
    const bool home_in_between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (home_in_between) continue;
    s.slots[i] = s.slots[j];
    i = j;
  }
  s.slots[i] = 0;
  --s.used;
  --size_;
  return true;
}

std::size_t id_map::memory_bytes() const noexcept {
  std::size_t bytes = shards_.size() * sizeof(shard);
  for (const shard& s : shards_) bytes += s.slots.capacity() * sizeof(uint64_t);
  return bytes;
}

void id_map::shard::place(uint64_t slot) {
  std::size_t i = home(slot_tag(slot));
  while (slots[i] != 0) i = next(i);
  slots[i] = slot;
}

void id_map::shard::grow() {
  resize(std::max(min_slots,
                  static_cast<std::size_t>(static_cast<double>(slots.size()) * grow_factor)));
}

void id_map::shard::resize(std::size_t size) {
  std::vector<uint64_t> old(size, 0);
  old.swap(slots);
  for (uint64_t slot : old)
    if (slot != 0) place(slot);
}

void id_map::reserve(std::size_t n) {
  // Room for three standard deviations above a shard's average share below the growth
  // threshold, so that the fuller shards do not grow at once either (about 0.8 of a load at
  // 10M ids, less for small maps).
  const double share = static_cast<double>(n) / static_cast<double>(shards_.size());
  const auto per_shard = static_cast<std::size_t>((share + 3 * std::sqrt(share)) / max_load) + 1;
  for (shard& s : shards_)
    if (s.slots.size() < per_shard) s.resize(per_shard);
}

}  // namespace simdup::detail
