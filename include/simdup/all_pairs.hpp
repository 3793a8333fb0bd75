// Batch all-pairs: every pair of fingerprints within Hamming distance k, with no resident
// index. Tables sharing a leading block share one scatter into small buckets; inside a bucket,
// entries are grouped by each table's prefix bits and only co-grouped ones are compared.
// Each pair is reported once (from the first table whose prefix it shares); memory O(n); all cores.
#pragma once

#include <simdup/error.hpp>
#include <simdup/plan.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace simdup {

/// A pair of input positions (ordinals into the fingerprint span), a < b, and their distance.
struct index_pair {
  uint32_t a = 0;
  uint32_t b = 0;
  int distance = 0;

  friend bool operator==(const index_pair&, const index_pair&) = default;
};

/// Receives pairs in batches (unordered). Calls are serialised: the sink needs no locking.
/// Return false to stop the run early (all_pairs then returns ok).
using pair_sink = std::function<bool(std::span<const index_pair> pairs)>;

struct all_pairs_options {
  /// The largest distance (inclusive), layout.k (default 3), and the blocks; when
  /// `layout.widths` is empty (default) make_plan chooses them for the input size, layout.k and
  /// `memory` (plan_purpose::batch). The layout is the one holder of k.
  index_layout layout{.k = 3, .widths = {}, .second_level_blocks = 0};
  /// Memory budget in bytes for the planner; 0 (default): no limit.
  uint64_t memory = 0;
  /// Worker threads; 0 (default): std::thread::hardware_concurrency().
  unsigned threads = 0;
};

/// Summary of a run.
struct all_pairs_stats {
  /// The plan used.
  index_plan plan;
  /// Pairs whose prefixes matched in some table (checked with popcount).
  uint64_t candidates = 0;
  /// Pairs reported.
  uint64_t pairs = 0;
};

/// Finds every pair (i, j), i < j, with popcount(fp[i] ^ fp[j]) <= k. Equal fingerprints are
/// pairs at distance 0. errc::invalid_argument for a bad layout, too_large for more than
/// 2^32 - 1 fingerprints or a budget the plan cannot meet.
result<all_pairs_stats> all_pairs(std::span<const uint64_t> fingerprints,
                                  const all_pairs_options& options, const pair_sink& sink);

/// The plain baseline of the same method: single-threaded, per table std::sort of
/// (key, ordinal) and a scan. For benchmarks and tests; same results as all_pairs.
result<all_pairs_stats> all_pairs_baseline(std::span<const uint64_t> fingerprints,
                                           const all_pairs_options& options, const pair_sink& sink);

}  // namespace simdup
