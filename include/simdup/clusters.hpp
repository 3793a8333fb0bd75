// Clusters from pairs: connected components (union-find), a star mode that links each
// document only to its cluster's representative (no chaining A~B~C with A far from C), or
// clusters around centers (correlation clustering by pivots).
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/error.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace simdup {

/// Cluster shape. cluster_builder makes components, stars or clusters around centers; anchored
/// clusters are components that anchor_clusters then splits (the dedup job does both).
enum class cluster_linking {
  /// Connected components of all duplicate links (union-find): chains A~B~C form one cluster;
  /// representative = the smallest ordinal.
  components,
  /// Every duplicate is linked directly to its representative, no chaining. cluster_builder:
  /// greedy in ordinal order, an unassigned document becomes a representative and takes every
  /// unassigned document paired with it (every member is within k of its representative).
  /// The dedup job visits documents best first by its keep policy instead.
  star,
  /// Components of the verified links, anchored: every member's similarity with its
  /// representative is at least a floor (anchor_clusters); members under it split off into
  /// clusters of their own. cluster_builder builds the components.
  anchored,
  /// Clusters around centers (center_clusters): every member is linked to its cluster's
  /// center, and members move to the cluster that agrees with more of their links. With
  /// verified links at Jaccard >= t, every member is >= 2t - 1 with its representative (Jaccard
  /// distance is a metric): 0.6 at t = 0.8. Representative = the smallest ordinal.
  centers,
};
/// "components", "star", "anchored", "centers".
const char* linking_name(cluster_linking linking) noexcept;
/// Parses a linking_name; the error names the parameter `clustering`.
result<cluster_linking> parse_linking(std::string_view name);

/// Collects pairs (from an all_pairs sink) and assigns clusters. Not thread safe; all_pairs
/// serialises its sink calls.
class cluster_builder {
 public:
  /// `n` documents with ordinals 0..n-1. `weights`: for centers, as center_clusters takes them.
  cluster_builder(std::size_t n, cluster_linking mode, std::vector<uint32_t> weights = {});

  /// Adds pairs; ordinals must be < n (others are ignored).
  void add(std::span<const index_pair> pairs);
  /// representative[i] for each ordinal (i itself for a document with no partner).
  std::vector<uint32_t> finish();

 private:
  std::size_t n_;
  cluster_linking mode_;
  std::vector<uint32_t> parent_;   ///< union-find forest (components)
  std::vector<index_pair> pairs_;  ///< kept pairs (star, centers)
  std::vector<uint32_t> weights_;  ///< centers
};

/// Clusters around centers, a pivot algorithm for correlation clustering on the `links`
/// (pairs of ordinals < n): documents in decreasing order of their number of links (ties: the
/// smaller ordinal first) each become a center unless already taken, and take every untaken
/// document linked to them. Then, for a few rounds in ordinal order, a member (or a center left
/// alone) moves to another cluster whose center it is linked to when that cluster holds more
/// of its links than non-links relative to its own (2 x links - size, the correlation
/// clustering objective). So every member stays linked to its center. `weights` (empty: all 1,
/// else n values >= 1) counts the documents each ordinal stands for (an exact group's leader
/// stands for its copies) in links and sizes. Returns representative[i] = the smallest ordinal
/// of i's cluster. Per component, the result depends only on that component's links and
/// weights and the order of its ordinals.
std::vector<uint32_t> center_clusters(std::size_t n, std::span<const index_pair> links,
                                      std::span<const uint32_t> weights);

/// Similarity of each (member, representative) pair into out (one value per pair, in order).
using pair_similarity_fn = std::function<status(
    std::span<const std::pair<uint32_t, uint32_t>> pairs, std::vector<double>& out)>;

/// Anchors clusters to their representatives: `rep` (representative[i] for each ordinal, as
/// cluster_builder::finish gives for components: the smallest ordinal of each cluster) is
/// changed so that every member's similarity to its representative is >= `floor`. Members
/// under the floor leave their cluster; they form new clusters among themselves by the
/// `links` (pairs of ordinals) joining two of them, each with its smallest ordinal as
/// representative, and the check repeats until every member passes. So each cluster stays
/// connected by links, and no member is kept apart from a representative it is far from: the
/// recall of components without their drift. Fails with `similarity`'s error.
status anchor_clusters(std::vector<uint32_t>& rep, std::span<const index_pair> links, double floor,
                       const pair_similarity_fn& similarity);

}  // namespace simdup
