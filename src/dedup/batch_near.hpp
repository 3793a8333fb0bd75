// Batch mode's near layer over the leaders of the exact groups (its slots, best first):
// candidate pairs by SimHash (all pairs within k) and by MinHash bands, verified in batches by
// the Jaccard of their shingles, linked into clusters and, for anchored clusters, anchored to
// their representatives.
#pragma once

#include <simdup/error.hpp>

#include "dedup/engine_state.hpp"
#include "dedup/record_column.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace simdup::detail {

/// A verified pair (ordinals, a < b) and its Jaccard, kept for the duplicates' report: with star
/// clusters every near duplicate was verified against its representative, so its Jaccard is
/// known without reading the arrays again.
struct verified_pair {
  uint32_t a;
  uint32_t b;
  float jaccard;
};

/// The Jaccard of the pair (a, b) in any order among `accepted` (sorted by (a, b)); nullopt when
/// the pair was not verified.
std::optional<float> verified_jaccard(const std::vector<verified_pair>& accepted, uint32_t a,
                                      uint32_t b);

/// Jaccard of each (ordinal, ordinal) pair into `out`, read from state.shingles: exact when at
/// least `threshold` (0: always exact). twin[i] is the document whose shingles stand for i.
status ordinal_jaccards(const engine_state& state, std::span<const uint32_t> twin,
                        std::span<const std::pair<uint32_t, uint32_t>> pairs, double threshold,
                        std::vector<double>& out);

/// The near layer's documents: exact-group leaders with a fingerprint, best first.
struct near_slots {
  std::vector<uint32_t> ordinals;      ///< by slot
  std::vector<uint64_t> fingerprints;  ///< by slot
  std::vector<uint32_t> of_rank;       ///< slot of each keep rank; UINT32_MAX when none
  std::vector<uint32_t> documents;     ///< by slot, the documents of its exact group
};

/// The near layer's result.
struct near_links {
  /// By slot, the slot of its cluster's representative.
  std::vector<uint32_t> representatives;
  /// The pairs verification accepted, sorted by (a, b).
  std::vector<verified_pair> accepted;
  /// Candidates only MinHash found (fingerprints more than k apart).
  uint64_t minhash_candidates = 0;
};

/// Finds, verifies (when state.shingles) and clusters the near pairs among `slots`, counting
/// candidates, pairs ruled out before verification (candidate_filter: sizes and `sketches`,
/// one record of pair_sketch_bytes by ordinal; empty: no sketch check) and rejections in
/// `state`. `rank` maps ordinals to keep ranks; `band_keys` (the MinHash keys by ordinal, read a
/// band at a time) is released once used; under state.options.memory_limit the pair search
/// gets what `memory_taken` (the caller's bytes) leaves of it. `phase` is told each step's
/// name. Fails with the shingle store's or the columns' read errors.
result<near_links> link_near_duplicates(engine_state& state, std::span<const uint32_t> twin,
                                        record_column& band_keys, const record_column& sketches,
                                        const near_slots& slots, std::span<const uint32_t> rank,
                                        uint64_t memory_taken,
                                        const std::function<void(std::string_view)>& phase);

}  // namespace simdup::detail
