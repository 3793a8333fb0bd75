// Online Hamming index: insert, remove, query and check-insert of (fingerprint, id, timestamp)
// entries, with a time window, safe for concurrent queries while inserting, and a versioned,
// memory-mappable file format (docs/index-format.md).
//
// Entries live in time-ordered segments: a small mutable newest segment (hash chains per table)
// and immutable sealed segments (per table, ordinals grouped by key prefix with a directory).
// Sealed segments of similar size are merged (tiered) so queries see few segments; a time
// window drops whole segments once their newest entry is older than the window.
#pragma once

#include <simdup/error.hpp>
#include <simdup/plan.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace simdup {

/// One indexed document. The index knows nothing about text; ids are the caller's (duplicates
/// allowed: remove(id) removes them all).
struct index_entry {
  uint64_t fingerprint = 0;
  uint64_t id = 0;
  /// In the caller's unit (the window and the clock use the same unit; seconds by default).
  int64_t timestamp = 0;
};

/// An indexed entry found within k of a query.
struct index_match {
  uint64_t id = 0;
  uint64_t fingerprint = 0;
  int64_t timestamp = 0;
  /// Hamming distance to the query, 0..k.
  int distance = 0;

  friend bool operator==(const index_match&, const index_match&) = default;
};

/// Sentinel for `now`: ask the index's clock (online_index_options::clock).
inline constexpr int64_t use_clock = std::numeric_limits<int64_t>::min();

struct online_index_options {
  /// The largest distance (inclusive) queries can ask for, layout.k (default 3), and the
  /// blocks; when `layout.widths` is empty (default) make_plan chooses them for
  /// `expected_size` entries, layout.k and `memory` (plan_purpose::online). The layout is the
  /// one holder of k; load() ignores it (the file has its own).
  index_layout layout{.k = 3, .widths = {}, .second_level_blocks = 0};
  /// Expected number of live entries, for the planner. Default 10M.
  uint64_t expected_size = 10'000'000;
  /// Memory budget in bytes for the planner; 0 (default): no limit.
  uint64_t memory = 0;
  /// Time window in timestamp units; 0 (default): entries never expire. An entry is live while
  /// timestamp + window > now; queries only match live entries, and sealed segments whose
  /// newest entry is not live are dropped: by expire(now), and automatically when segments are
  /// sealed, taking the newest timestamp inserted so far as now (so replays of old data with
  /// their own timestamps expire by data time, not by the wall clock).
  int64_t window = 0;
  /// Entries in the mutable segment before it is sealed; at least 1. 0 (default): chosen from
  /// the table count so that the mutable segment's per-table chains stay near 8 MB (65536
  /// entries up to 10 tables, fewer with more tables, never below 1024).
  std::size_t segment_capacity = 0;
  /// Tiered merging: this many adjacent sealed segments of the same size class are merged into
  /// one. Default 4; at least 2.
  std::size_t merge_fanout = 4;
  /// Bounds the transient memory of merging: a merge builds its output while its inputs are
  /// still being queried (about 80 bytes per merged entry with 10 tables, on top of the
  /// inputs). The merges done while inserting never build a segment of more than
  /// max(live entries / merge_cap_divisor, merge_cap_floor) entries; segments that would
  /// exceed it stay apart (each costs a probe per table per query) until the index has grown
  /// enough. Default 2: a merge adds at most about half the index's memory, and the usual
  /// shapes (four 1M segments into one at 8M) still merge, so queries stay fast; 8 bounds the
  /// peak further at the price of about ten segments at 10M (2 to 3 times slower queries).
  /// 0: no cap. compact() ignores the cap.
  std::size_t merge_cap_divisor = 2;
  /// Smallest cap in entries, so that small indexes still merge into few segments. Default
  /// 2^20; at least 1.
  std::size_t merge_cap_floor = std::size_t{1} << 20;
  /// Returns "now" in timestamp units when a call passes use_clock. Default (empty): seconds
  /// since the Unix epoch from std::chrono::system_clock. Injectable for tests and replays.
  std::function<int64_t()> clock;
  /// Whether insert and check_insert seal and merge full segments themselves, on the inserting
  /// thread (default). false: they only set full segments aside (still queried, as hash
  /// chains) and the owner calls maintain() from a thread of its own, so that a writer holding
  /// a lock of its own is not held up by a merge (seconds at 10M entries).
  bool maintain_on_insert = true;
};

/// Per-call query settings.
struct query_params {
  /// Largest distance (inclusive); -1 (default) or anything above the index's k means the
  /// index's k.
  int k = -1;
  /// Time for the window test; use_clock (default) asks the clock. Unused when window is 0.
  int64_t now = use_clock;
};

/// Results of a batch query: matches of query i are matches[offsets[i] .. offsets[i+1]).
struct query_results {
  std::vector<index_match> matches;
  std::vector<std::size_t> offsets;

  std::size_t size() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::span<const index_match> operator[](std::size_t i) const {
    return std::span<const index_match>(matches).subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

struct index_stats {
  /// Live entries: inserted, not removed, not dropped by expiry (entries older than the window
  /// inside a segment that still holds newer ones are counted until their segment goes).
  uint64_t size = 0;
  /// All segments, the mutable one included.
  uint64_t segments = 0;
  /// Sealed (immutable, sorted) segments.
  uint64_t sealed_segments = 0;
  /// Entries dropped by expiry since creation (or load).
  uint64_t expired = 0;
  /// Entries removed by remove() since creation (or load).
  uint64_t removed = 0;
  /// Approximate bytes held by the index's tables and entries.
  uint64_t memory_bytes = 0;
  /// Entries (removed and expired ones included) in the largest sealed segment; bounded by
  /// the merge cap (online_index_options::merge_cap_divisor) when that segment was built,
  /// unless compact() built it.
  uint64_t largest_segment = 0;
};

/// Thread safety: every const method may run concurrently with each other and with insert,
/// check_insert, remove, expire and compact from other threads; all methods synchronise
/// internally. Matches are sorted by (distance, timestamp, id).
class online_index {
 public:
  /// Plans the layout if needed and validates the options (errc::invalid_argument).
  static result<online_index> create(online_index_options options = {});
  /// Opens a file written by save() (memory-mapped; sealed segments are used in place). The
  /// file's layout wins over options.layout; the other options apply. errc::not_found,
  /// io_error, corrupt_data (bad magic, checksum, sizes) or unsupported (newer version).
  static result<online_index> load(const std::string& path, online_index_options options = {});

  online_index(online_index&&) noexcept;
  online_index& operator=(online_index&&) noexcept;
  ~online_index();

  void insert(const index_entry& entry);
  void insert(std::span<const index_entry> entries);

  /// Live entries within params.k of `fingerprint`.
  std::vector<index_match> query(uint64_t fingerprint, const query_params& params = {}) const;
  /// Batch form (faster per query: probes are interleaved to overlap memory latency).
  void query(std::span<const uint64_t> fingerprints, query_results& out,
             const query_params& params = {}) const;

  /// Atomically (no other insert in between): finds live entries within params.k of
  /// entry.fingerprint; inserts the entry only if there are none. Returns the matches (empty
  /// means inserted). The streaming "query then insert" step of dedup and the service.
  std::vector<index_match> check_insert(const index_entry& entry, const query_params& params = {});

  /// Removes every entry with this id. Returns how many. Cost: a hash probe per segment; the
  /// first remove after a load or a merge builds the affected segments' id tables (O(size),
  /// 5 to 10 bytes per entry, queries keep running meanwhile).
  std::size_t remove(uint64_t id);
  /// Like remove(), without waiting for a maintenance in progress (a merge holds it for
  /// seconds at 10M entries): queries skip the id at once, and its entries are marked removed
  /// by the next maintain(), save() or remove() (stats count them then). The id must not be
  /// inserted again before that (cancel_removal takes a removal back).
  void remove_deferred(uint64_t id);
  /// Takes back a remove_deferred not applied yet (waits for a maintenance in progress);
  /// false when it was applied already, or never made.
  bool cancel_removal(uint64_t id);
  /// Drops sealed segments whose newest entry is no longer live at `now`. Returns entries
  /// dropped. Also done automatically (see online_index_options::window).
  std::size_t expire(int64_t now = use_clock);
  /// Seals the mutable segment and merges sealed segments into as few as possible (segments are
  /// not merged across more than a quarter of the window, so expiry stays fine-grained). The
  /// merge cap does not apply: merging everything needs up to the index's size again, briefly.
  void compact();
  /// Seals the segments inserts set aside and merges sealed ones by tier; safe to call from any
  /// thread at any time (one maintenance runs at a time; queries and inserts go on). Needed only
  /// with online_index_options::maintain_on_insert = false.
  void maintain();
  /// Work waiting for maintain(): full segments set aside, plus one when deferred removals
  /// wait (0: none).
  std::size_t awaiting_maintenance() const;

  index_stats stats() const;
  /// The layout in use (its k is the largest distance queries can ask for).
  const index_layout& layout() const noexcept;

  /// Writes a snapshot to `path` (written to path + ".tmp", then renamed). Safe to call while
  /// other threads insert (they wait only while the snapshot is taken, not while it is written).
  status save(const std::string& path) const;

 private:
  struct impl;
  explicit online_index(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
