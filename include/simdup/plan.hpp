// Block layouts and the planner of the Hamming index (docs/tuning.md, docs/architecture.md).
//
// Pigeonhole: split the 64 bits into m blocks; two fingerprints within distance k agree on at
// least m - k blocks. Each choice of m - k blocks is one table whose key puts those blocks'
// bits first (the prefix); a probe looks only at entries sharing the prefix. Manku's two-level
// design splits the bits left over after level 1 again, multiplying tables but lengthening
// prefixes with fewer tables than one level would need for the same prefix length.
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// Largest Hamming distance an index layout accepts, and so any k in the library.
inline constexpr int max_index_k = 32;

/// The one range check of a Hamming distance k, shared by layouts, the planner, the detection
/// profile and the service: ok for 0..max_index_k, else errc::invalid_argument naming the
/// parameter ("k must be in 0..32, got 40"; `name` replaces "k").
status validate_k(int k, std::string_view name = "k");

/// Largest number of tables a layout may have (the index keeps or sorts one key per table).
inline constexpr std::size_t max_index_tables = 4096;

/// How the 64 fingerprint bits are cut into blocks, and so which tables exist.
struct index_layout {
  /// Largest Hamming distance found (inclusive), 0..max_index_k. Default 3.
  int k = 3;
  /// Level-1 block widths in bits, most significant block first; they sum to 64 and there are
  /// more than k of them. Uneven widths are allowed. Each table leads with m - k of them.
  std::vector<int> widths;
  /// Level-2 block count (Manku's two-level design); 0 (default) means one level. Otherwise,
  /// for each level-1 choice, the 64 - p1 bits it leaves (in bit order) are split as evenly as
  /// possible (wider blocks first) into this many blocks, must be more than k, and m2 - k of
  /// them extend the prefix. Tables = C(m1, m1-k) * C(m2, m2-k).
  int second_level_blocks = 0;

  /// One level of `blocks` blocks as even as possible (wider first): even(3, 4) is 4 x 16.
  static index_layout even(int k, int blocks);
  /// Two levels of even blocks: two_level(3, 4, 4) is Manku's 16-table design for k = 3.
  static index_layout two_level(int k, int blocks1, int blocks2);
  /// Parses the `--blocks` syntax: "6" (6 even blocks), "16,16,16,16" (explicit widths, MSB
  /// first), "4/4" (two levels of even blocks), "13,13,13,13,12/4" (explicit, then level 2).
  static result<index_layout> parse(int k, std::string_view text);

  /// ok, or errc::invalid_argument naming the rule broken (widths, k, table count).
  status validate() const;
  /// Number of tables (0 when invalid).
  std::size_t table_count() const;
  /// The form parse() reads back: explicit widths, then "/m2" for two levels
  /// ("16,16,16,16", "16,16,16,16/4").
  std::string describe() const;
};

/// What the plan is for: batch all-pairs (one table at a time, no resident index) or the
/// online index (all tables resident).
enum class plan_purpose { batch, online };

struct plan_request {
  /// Number of fingerprints (batch), or expected number of live entries (online).
  uint64_t n = 0;
  /// Largest Hamming distance (inclusive). Default 3.
  int k = 3;
  /// Memory budget in bytes for the index (online) or the run (batch); 0 (default): no limit.
  uint64_t memory = 0;
  plan_purpose purpose = plan_purpose::batch;
};

/// A layout with its estimated costs.
struct index_plan {
  index_layout layout;
  plan_purpose purpose = plan_purpose::batch;
  uint64_t n = 0;
  /// Number of tables.
  std::size_t tables = 0;
  /// Shortest and longest table prefix in bits (equal for even layouts).
  int min_prefix_bits = 0;
  int max_prefix_bits = 0;
  /// Expected entries sharing a probe's prefix, summed over all tables: n * sum(2^-p).
  double candidates_per_probe = 0;
  /// Estimated memory per fingerprint in bytes: the resident index (online) or the peak of a
  /// run (batch, input array included).
  double bytes_per_entry = 0;
  /// Relative cost estimate the planner minimised: ns per query (online) or per input
  /// fingerprint (batch), on one core. Only for comparing plans.
  double cost = 0;

  /// Multi-line human description (layout, tables, prefixes, candidates, memory).
  std::string describe() const;
};

/// Costs of a given layout for n fingerprints (validate() errors are passed on).
result<index_plan> evaluate_layout(const index_layout& layout, uint64_t n, plan_purpose purpose);

/// Chooses the cheapest layout (one level or two) whose memory fits the budget; considers
/// one-level layouts with k+1 .. k+24 even blocks (up to the first past 1024 tables) and
/// two-level layouts up to k+8 blocks per
/// level. errc::too_large when nothing fits the budget, invalid_argument for a bad k.
result<index_plan> make_plan(const plan_request& request);

}  // namespace simdup
