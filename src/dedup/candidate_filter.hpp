// Cheap checks of a near candidate pair before its exact Jaccard is read from the shingle store:
// the sizes of the two shingle sets (a pair whose smaller set is too small for the threshold
// cannot reach it) and a 64-byte one-permutation MinHash sketch per document held in memory,
// whose agreement estimates the Jaccard. Most candidates of SimHash at k = 8 and of MinHash
// bands are far below the threshold (Jaccard 0.2 to 0.5: shared boilerplate, licence texts,
// short poems), and both checks reject them without reading or decoding an array.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace simdup::detail {

/// The sketch: 128 bins of the hash range (the top 7 bits), each holding 4 bits of its
/// smallest hash (empty bins take the next filled bin's, offset by the distance: rotation
/// densification), two bins per byte.
inline constexpr std::size_t pair_sketch_bins = 128;
inline constexpr std::size_t pair_sketch_bytes = pair_sketch_bins / 2;

/// Appends the sketch of the sorted distinct `hashes` (shingle_hashes) to `out`; an empty set
/// gives zeros.
void append_pair_sketch(std::span<const uint32_t> hashes, std::vector<uint8_t>& out);

/// Bins on which two sketches agree (0..pair_sketch_bins).
std::size_t pair_sketch_matches(const uint8_t* a, const uint8_t* b) noexcept;

/// Decides whether a candidate pair may reach the Jaccard threshold. A pair at the threshold
/// agrees on a bin with probability at least the threshold; the bins needed are set so that
/// such a pair is rejected with probability under 1e-7 (a binomial tail over the bins its
/// smaller set fills), so in practice only pairs far below it are. The size check is exact.
class candidate_filter {
 public:
  explicit candidate_filter(double threshold);
  /// false when the pair cannot (sizes) or almost surely does not (sketches) reach the
  /// threshold. na, nb: distinct shingles; sa, sb: sketches (null: sizes only).
  bool may_reach(std::size_t na, std::size_t nb, const uint8_t* sa, const uint8_t* sb) const;

 private:
  double threshold_;
  // needed_[f]: agreeing bins required when the smaller set fills about f bins.
  std::array<uint16_t, pair_sketch_bins + 1> needed_{};
};

}  // namespace simdup::detail
