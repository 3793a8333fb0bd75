// Batch all-pairs: every pair of fingerprints within Hamming distance k, with no resident
// index. Tables sharing a leading block share one scatter into small buckets; inside a bucket,
// entries are grouped by each table's prefix bits and only co-grouped ones are compared.
// Each pair is reported once (from the first table whose prefix it shares); memory O(n); all cores.
// With a memory limit smaller than the whole input needs, the input is read several times
// (all_pairs over a fingerprint_scan): each pass holds the fingerprints of one table group that
// share some low bits of the group's first block, so the pairs are the same at any limit.
#pragma once

#include <simdup/error.hpp>
#include <simdup/fingerprint_scan.hpp>
#include <simdup/plan.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

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
  /// Worker threads; 0 (default): one per CPU this process may run on (simdup::pipeline_threads).
  unsigned threads = 0;
  /// Bytes the run may hold (its working set, not the caller's copy of the input nor the
  /// sink's state); 0 (default): no limit, one pass over the whole input in memory. Under a
  /// smaller limit the input is read in several passes.
  uint64_t memory_limit = 0;
  /// Of memory_limit, bytes the caller already holds (its copy of the input, its own state).
  uint64_t memory_taken = 0;
  /// One input against another: when > 0, only pairs (a, b) with a < cross_split <= b are
  /// reported (fingerprints [0, cross_split) against the rest; `simdup dedup --against`).
  uint32_t cross_split = 0;
  /// Called before each pass with (pass, passes), 1-based; may be empty.
  std::function<void(uint64_t pass, uint64_t passes)> on_pass;
};

/// Summary of a run.
struct all_pairs_stats {
  /// The plan used.
  index_plan plan;
  /// Pairs whose prefixes matched in some table (checked with popcount).
  uint64_t candidates = 0;
  /// Pairs reported.
  uint64_t pairs = 0;
  /// Passes over the input (1 when the whole input fitted in the limit).
  uint64_t passes = 0;
  /// Bytes the largest pass needed (an estimate from its record count).
  uint64_t working_bytes = 0;
};

/// Bytes a pass over `n` fingerprints needs on `threads` threads (the estimate that memory
/// limits are checked against).
uint64_t all_pairs_pass_bytes(uint64_t n, unsigned threads);

/// Finds every pair (i, j), i < j, with popcount(fp[i] ^ fp[j]) <= k. Equal fingerprints are
/// pairs at distance 0. errc::invalid_argument for a bad layout, too_large for more than
/// 2^32 - 1 fingerprints or a budget the plan cannot meet.
result<all_pairs_stats> all_pairs(std::span<const uint64_t> fingerprints,
                                  const all_pairs_options& options, const pair_sink& sink);

/// The same over a scan, in as many passes as options.memory_limit needs. Errors also:
/// too_large when the limit cannot hold the fewest fingerprints one pass must hold together
/// (the message names the smallest limit that can), and the scan's own errors.
result<all_pairs_stats> all_pairs(const fingerprint_scan& input, const all_pairs_options& options,
                                  const pair_sink& sink);

}  // namespace simdup
