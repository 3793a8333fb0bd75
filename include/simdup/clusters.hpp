// Clusters from pairs: connected components (union-find), or a star mode that links each
// document only to its cluster's representative (no chaining A~B~C with A far from C).
#pragma once

#include <simdup/all_pairs.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace simdup {

enum class cluster_mode {
  /// Connected components of the pair graph; representative = the smallest ordinal.
  components,
  /// Greedy in ordinal order: an unassigned document becomes a representative and takes every
  /// unassigned document paired with it. Every member is within k of its representative.
  star,
};

/// Collects pairs (from an all_pairs sink) and assigns clusters. Not thread safe; all_pairs
/// serialises its sink calls.
class cluster_builder {
 public:
  /// `n` documents with ordinals 0..n-1.
  cluster_builder(std::size_t n, cluster_mode mode);

  /// Adds pairs; ordinals must be < n (others are ignored).
  void add(std::span<const index_pair> pairs);
  /// representative[i] for each ordinal (i itself for a document with no partner).
  std::vector<uint32_t> finish();

 private:
  std::size_t n_;
  cluster_mode mode_;
  std::vector<uint32_t> parent_;   ///< union-find forest (components)
  std::vector<index_pair> pairs_;  ///< kept pairs (star)
};

}  // namespace simdup
