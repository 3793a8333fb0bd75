// The exact layer of the dedup job: keys for normalised URL, title and content, and a compact
// first-seen table from key to document ordinal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// Canonical form of a URL, so that trivially different spellings of one address compare equal:
/// for web URLs (http, https, or no scheme) the scheme is dropped (http and https are one page)
/// and the fragment too unless it is a "#!" route; other schemes (file://, ftp://) keep both,
/// as fragments there may name distinct parts of one file. Host lowercased without a leading
/// "www." and without a default port (80, 443), percent escapes upper-cased, tracking
/// query parameters (utm_*, fbclid, gclid, mc_cid, mc_eid) dropped and the rest sorted, and a
/// trailing "/" removed from the path. Input without "scheme://" is read as host + path.
/// Surrounding whitespace is ignored; an empty or blank URL gives "".
std::string normalize_url(std::string_view url);

/// 64-bit key of a string (XXH3, seed 0). Never 0: the tables use 0 for "no key", so a hash of 0
/// is mapped to 1. Empty input means "no key" and returns 0.
uint64_t exact_key(std::string_view text) noexcept;

/// Key of a URL after normalize_url; 0 when the URL is empty.
uint64_t url_key(std::string_view url);

/// Maps 64-bit keys (never 0) to the ordinal of the document that first had the key. Open
/// addressing with linear probing: 12 bytes per slot, load factor at most 0.7.
class exact_table {
 public:
  /// The ordinal stored under `key`, or nullopt. `key` 0 is never stored.
  std::optional<uint32_t> find(uint64_t key) const noexcept;
  /// When `key` is present returns its ordinal; otherwise stores `ordinal` and returns nullopt.
  /// `key` 0 is ignored (returns nullopt, stores nothing).
  std::optional<uint32_t> find_or_insert(uint64_t key, uint32_t ordinal);
  /// Number of keys stored.
  std::size_t size() const noexcept { return size_; }
  /// Bytes held by the slots.
  std::size_t memory_bytes() const noexcept {
    return keys_.capacity() * sizeof(uint64_t) + values_.capacity() * sizeof(uint32_t);
  }

 private:
  void grow();
  // Fibonacci hashing: the high bits of key * 2^64/phi, so keys that differ only in their high
  // bits (fingerprints, structured ids) still spread over the slots.
  std::size_t slot(uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  std::size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace simdup
