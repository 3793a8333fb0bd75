// The in-memory MinHash band index of a collection (RocksDB store): which stored documents
// share a band key with a query. Each (band, key) of a document is one entry of an online_index
// at k = 0, so windows, removal by number, concurrent queries and background merging work as
// for the SimHash index beside it.
#pragma once

#include <simdup/online_index.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "store/backend.hpp"

namespace simdup::detail {

class band_index {
 public:
  /// None when the collection has no bands (MinHash off, or no verification to confirm them).
  static result<std::optional<band_index>> create(const collection_config& config,
                                                  const online_index_options& base);

  /// Entries of document `num` (alive from `time`); keys.size() must be the collection's bands.
  void insert(uint64_t num, int64_t time, std::span<const uint64_t> keys);
  /// Appends to `out` the numbers of live documents (at time `now`) sharing a band key with
  /// `keys`, each once, at most max_bucket per band: the oldest of a bucket, so a family of
  /// thousands of copies costs a few verifications and still links to the same documents.
  void query(std::span<const uint64_t> keys, int64_t now, std::vector<uint64_t>& out) const;

  void remove(uint64_t num) { index_.remove(num); }
  void remove_deferred(uint64_t num) { index_.remove_deferred(num); }
  bool cancel_removal(uint64_t num) { return index_.cancel_removal(num); }
  void expire(int64_t now) { index_.expire(now); }
  void compact() { index_.compact(); }
  void maintain() { index_.maintain(); }
  std::size_t awaiting_maintenance() const { return index_.awaiting_maintenance(); }
  uint64_t memory_bytes() const { return index_.stats().memory_bytes; }
  std::size_t bands() const noexcept { return bands_; }

 private:
  band_index(online_index index, std::size_t bands, std::size_t max_bucket)
      : index_(std::move(index)), bands_(bands), max_bucket_(max_bucket) {}
  /// The entry's 64-bit key: the band's key mixed with the band's number, so that equal keys
  /// of two bands never meet.
  static uint64_t entry_key(std::size_t band, uint64_t key);

  online_index index_;
  std::size_t bands_;
  std::size_t max_bucket_;
};

}  // namespace simdup::detail
