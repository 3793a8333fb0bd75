// The in-memory MinHash band index of a collection (RocksDB store): which stored documents
// share a band key with a query. Each (band, key) of a document is one entry of an id_map (8
// bytes a slot: a tag of the key's hash beside the document's number), so a probe is one hash
// lookup per band and a document costs about 11 bytes per band. A tag shared by two keys only
// adds a candidate, which verification then rejects. Used under the collection lock; the
// window is the caller's to apply (entries go when their records expire).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "store/backend.hpp"
#include "store/id_map.hpp"

namespace simdup::detail {

class band_index {
 public:
  /// None when the collection has no bands (MinHash off, or no verification to confirm them).
  static std::optional<band_index> create(const collection_config& config);

  /// Entries of document `num`; keys.size() must be bands().
  void insert(uint64_t num, std::span<const uint64_t> keys);
  /// Makes room for about `documents` documents' entries.
  void reserve(std::size_t documents) { map_.reserve(documents * bands_); }
  /// Starts loading the slots an insert, erase or find of `keys` reads first.
  void prefetch(std::span<const uint64_t> keys) const noexcept;
  /// Removes the entries insert(num, keys) added.
  void erase(uint64_t num, std::span<const uint64_t> keys);
  /// Appends to `out` the numbers of documents sharing a band key with `keys`, each once, at most
  /// max_bucket per band: the oldest (lowest numbers) of a bucket, so that a family of thousands
  /// of copies costs a few verifications and still links to the same documents.
  void find(std::span<const uint64_t> keys, std::vector<uint64_t>& out) const;

  std::size_t bands() const noexcept { return bands_; }
  std::size_t memory_bytes() const noexcept { return map_.memory_bytes(); }

 private:
  band_index(std::size_t bands, std::size_t max_bucket) : bands_(bands), max_bucket_(max_bucket) {}
  /// The entry's 64-bit hash: the band's key with its band's number folded in, so that equal
  /// keys of two bands do not meet.
  static uint64_t entry_hash(std::size_t band, uint64_t key) noexcept;

  id_map map_;
  std::size_t bands_;
  std::size_t max_bucket_;
};

}  // namespace simdup::detail
