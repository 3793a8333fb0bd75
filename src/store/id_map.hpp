// The RocksDB backend's in-memory map from document ids to document numbers, so that an
// insert learns whether its id is new without a RocksDB lookup (and the store needs no key per
// id, whose random order made RocksDB compact it over and over).
//
// It keeps 8 bytes per slot, not the id: a 24-bit tag of the id's hash beside the 40-bit
// number. A lookup returns every number whose tag matches, and the caller checks each against
// the stored document (rocks_backend::find_doc); a tag shared by two ids costs that check, never
// a wrong answer. Open addressing with linear probing in 4096 shards, each grown on its own
// (so growing never doubles the whole map at once); removal shifts entries back instead of
// leaving tombstones, which works because an entry's home slot is a function of its tag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace simdup::detail {

class id_map {
 public:
  /// Numbers are stored in 40 bits: 1 <= number <= max_number.
  static constexpr uint64_t max_number = (uint64_t{1} << 40) - 1;

  static uint64_t hash(std::string_view id) noexcept;

  /// Appends to `out` the numbers stored under `h` (and, rarely, under another hash with the
  /// same shard and tag).
  void find(uint64_t h, std::vector<uint64_t>& out) const;
  /// Starts loading the slots a find, insert or erase of `h` reads first.
  void prefetch(uint64_t h) const noexcept {
    const shard& s = shards_[h >> (64 - shard_bits)];
    if (!s.slots.empty()) __builtin_prefetch(s.slots.data() + s.home(tag_of(h)));
  }
  /// Adds (h, number); 1 <= number <= max_number. Several numbers may share a hash.
  void insert(uint64_t h, uint64_t number);
  /// Removes (h, number); false when it is not there.
  bool erase(uint64_t h, uint64_t number);

  /// Makes room for about `n` ids in all (an estimate: shards still grow as they fill).
  void reserve(std::size_t n);

  std::size_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept;

 private:
  static constexpr int shard_bits = 12;
  struct shard {
    std::vector<uint64_t> slots;  ///< tag << 40 | number; 0 is an empty slot
    std::size_t used = 0;
    std::size_t home(uint32_t tag) const noexcept {
      return static_cast<std::size_t>((uint64_t{tag} * slots.size()) >> 24);
    }
    std::size_t next(std::size_t i) const noexcept { return i + 1 == slots.size() ? 0 : i + 1; }
    void grow();
    void resize(std::size_t slots);
    void place(uint64_t slot);
  };

  static shard& shard_of(std::vector<shard>& shards, uint64_t h) noexcept {
    return shards[h >> (64 - shard_bits)];
  }
  static uint32_t tag_of(uint64_t h) noexcept {
    return static_cast<uint32_t>((h >> (64 - shard_bits - 24)) & 0xFFFFFF);
  }

  std::vector<shard> shards_ = std::vector<shard>(std::size_t{1} << shard_bits);
  std::size_t size_ = 0;
};

}  // namespace simdup::detail
