// The detection profile: what makes two documents near duplicates (fingerprint settings, k,
// verification, MinHash candidates, cluster shape). Defined and validated once here and taken
// by every consumer: the dedup job and its engines, explain, pairs, clusters and the Python
// binding. Defaults are the evaluated ones (docs/tuning.md, "Choosing the dedup defaults").
#pragma once

#include <simdup/clusters.hpp>
#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>
#include <simdup/minhash.hpp>
#include <simdup/plan.hpp>
#include <simdup/verify.hpp>

#include <optional>

namespace simdup {

/// Below this many distinct features a document is "short" for dedup (exact layers only): a
/// handful of shingles votes a fingerprint that unrelated short texts share by accident.
inline constexpr std::size_t detection_min_features = 10;

struct detection_profile {
  /// Normalisation, features, weighting and hash; min_features defaults to
  /// detection_min_features.
  fingerprint_options fingerprint = default_fingerprint();
  /// Near duplicates: fingerprints within this Hamming distance (inclusive), 0..max_index_k
  /// (plan.hpp: batch all-pairs and the online index both plan layouts up to it; validate()
  /// checks k with validate_k, the one range check of k).
  int k = 8;
  /// Confirm near pairs by shingle Jaccard (default jaccard:0.8); unset means every pair within
  /// k is a duplicate.
  std::optional<verify_options> verify = verify_options{};
  /// Batch with verification: MinHash-LSH over the verification shingles as a second candidate
  /// generator beside SimHash (bands 0: off). Default 10 bands of 6 rows.
  minhash_options minhash{.bands = 10, .rows = 6};
  /// Cluster shape (batch): anchored, every dropped document verified >= anchor_floor with the
  /// representative it is dropped for: the fewest true pairs left with both documents kept and
  /// the fewest drops that are not true pairs of the large evaluation (docs/tuning.md, "Kept-set
  /// defaults"); centers give the better cluster-pair F1 but drop documents at Jaccard 0.6 to
  /// 0.8 with what is kept.
  cluster_linking clustering = cluster_linking::anchored;
  /// cluster_linking::anchored: the least Jaccard (inclusive) of a member with its
  /// representative, in [0, 1].
  double anchor_floor = 0.8;

  /// errc::invalid_argument naming the parameter ("k must be in 0..32, got 40") for a value out
  /// of range or a combination that cannot run (MinHash or anchored clusters without
  /// verification).
  status validate() const;
  /// The profile a run uses: MinHash is a batch generator (stream mode probes SimHash only),
  /// and MinHash pairs and anchoring need the shingles only verification keeps (without it,
  /// anchored clusters become star clusters).
  detection_profile effective(bool batch) const;

  /// The all-pairs search of this profile's k (layout.k; the blocks planned for the input).
  all_pairs_options pair_search() const {
    all_pairs_options o;
    o.layout.k = k;
    return o;
  }

  /// A profile of fingerprints alone (`simdup pairs`, `simdup clusters`): no verification, no
  /// MinHash, since there are no texts to take shingles from.
  static detection_profile for_fingerprints(int k, cluster_linking clustering) {
    detection_profile p;
    p.k = k;
    p.verify.reset();
    p.minhash = minhash_options{};
    p.clustering = clustering;
    return p;
  }

  static fingerprint_options default_fingerprint() {
    fingerprint_options o;
    o.min_features = detection_min_features;
    return o;
  }
};

}  // namespace simdup
