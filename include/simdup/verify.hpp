// Verification of candidate pairs by the Jaccard similarity of character-shingle sets, kept as
// compact sorted arrays of 32-bit shingle hashes instead of the documents' text.
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace simdup {

struct verify_options {
  /// A pair is confirmed when its Jaccard similarity is >= threshold (inclusive). In (0, 1].
  double threshold = 0.8;
  /// Code points per shingle. Default 5, the width the evaluation's ground truth uses.
  std::size_t shingle_width = 5;
  /// Keep only the this many smallest hashes of each document (a bottom-k sketch), which bounds
  /// memory at 4 * max_hashes bytes per document; 0 keeps every hash and the Jaccard is exact.
  /// With a cap, documents with at most max_hashes distinct shingles are still compared exactly.
  std::size_t max_hashes = 0;
};

/// Parses the `--verify` value "jaccard:T" (T in (0, 1]) into options with that threshold.
result<verify_options> parse_verify_spec(std::string_view spec);

/// Replaces `out` with the sorted distinct 32-bit hashes (a rolling polynomial hash of the code
/// points, mixed, upper half) of the
/// overlapping `width`-code-point shingles of `text` (already normalised, valid UTF-8). Text
/// shorter than `width` code points gives one shingle, the whole text; empty text gives none.
/// With max_hashes > 0 only the smallest max_hashes hashes are kept.
void shingle_hashes(std::string_view text, std::size_t width, std::size_t max_hashes,
                    std::vector<uint32_t>& out);

/// Jaccard similarity |A ∩ B| / |A ∪ B| of two sets given by shingle_hashes with the same
/// max_hashes. Exact when neither array was cut to max_hashes; otherwise the bottom-k estimate
/// over the union's smallest hashes below both cut-offs. Two empty sets have similarity 0.
double sketch_jaccard(std::span<const uint32_t> a, std::span<const uint32_t> b,
                      std::size_t max_hashes) noexcept;

/// Shingle arrays of many documents in one arena, addressed by document ordinal. Ordinals are
/// appended in order; a document without an array (not verified, not kept) has an empty one.
class shingle_store {
 public:
  explicit shingle_store(std::size_t max_hashes = 0) : max_hashes_(max_hashes) {}
  /// Stores `hashes` for ordinal `ordinal`; ordinals must be given in increasing order (gaps are
  /// empty arrays).
  void put(uint32_t ordinal, std::span<const uint32_t> hashes);
  /// The array of `ordinal` (empty when none was stored).
  std::span<const uint32_t> get(uint32_t ordinal) const noexcept;
  /// sketch_jaccard of two stored documents.
  double jaccard(uint32_t a, uint32_t b) const noexcept {
    return sketch_jaccard(get(a), get(b), max_hashes_);
  }
  /// Bytes held by the arena and the offsets.
  std::size_t memory_bytes() const noexcept {
    return hashes_.capacity() * sizeof(uint32_t) + offsets_.capacity() * sizeof(uint64_t);
  }

 private:
  std::size_t max_hashes_;
  std::vector<uint32_t> hashes_;
  std::vector<uint64_t> offsets_{0};  // offsets_[i]..offsets_[i+1] is ordinal i's array
};

}  // namespace simdup
