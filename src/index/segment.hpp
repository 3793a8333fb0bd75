// Segments of the online index. A mutable segment takes inserts (per table, hash chains on the
// key prefix); a sealed segment is immutable: entries stored in table 0's prefix order, and per
// table a directory on the top d key bits whose slots also hold a presence mask over the next
// 5 key bits, so that most probes stop at the slot (plus, for tables 1.., the ordinals in that
// order, each with the next few key bits of the table's prefix beside it, so that a probe skips
// most entries of its slot without reading them).
// Sealed segments live in one block of 64-bit words that is also their on-disk form
// (docs/index-format.md), so a loaded file is used in place.
#pragma once

#include <simdup/online_index.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "index/tables.hpp"

namespace simdup::detail {

/// What a probe needs, fixed per index.
struct probe_context {
  const std::vector<table_perm>* tables;
  int min_prefix_bits;
};

/// Per-query settings resolved from query_params.
struct probe_params {
  int k;
  /// Entries with a smaller timestamp are outside the window (INT64_MIN: no window).
  int64_t min_live_ts;
};

/// Live entries of mutable segments, gathered for sealing or saving.
struct entry_columns {
  std::vector<uint64_t> fp, id;
  std::vector<int64_t> ts;
  void reserve(std::size_t n) {
    fp.reserve(n);
    id.reserve(n);
    ts.reserve(n);
  }
  void push(uint64_t f, uint64_t i, int64_t t) {
    fp.push_back(f);
    id.push_back(i);
    ts.push_back(t);
  }
  std::size_t size() const noexcept { return fp.size(); }
};

struct huge_block;

/// Words of the fixed header at the start of a sealed segment's block.
inline constexpr std::size_t segment_header_words = 8;
/// Header word 6 of a block in the current form (index file version 3). Blocks of version 1
/// and 2 files have 0 there (a directory of 4-byte offsets); they are rebuilt on load.
inline constexpr uint64_t segment_form = 3;

class sealed_segment {
 public:
  /// Builds from entries (any order).
  static std::shared_ptr<sealed_segment> build(const probe_context& ctx, const entry_columns& e);
  /// Builds one segment from the live, not deleted entries (ts >= min_live_ts) of `inputs`,
  /// read in place: the merged block is the only new memory (no copy of the entries, no
  /// per-entry scratch), which bounds the transient of a merge. The caller keeps the inputs'
  /// deletion bits stable meanwhile (the online index's maintenance lock).
  static std::shared_ptr<sealed_segment> merge(
      const probe_context& ctx, std::span<const std::shared_ptr<sealed_segment>> inputs,
      int64_t min_live_ts);
  /// Uses `words` in place (kept alive by `owner`), after checking every size and index in it.
  /// `deleted` is the deletion bitmap (ceil(n / 64) words). A block of a version 1 or 2 file
  /// (header word 6 zero) is instead rebuilt into this form from its entries not deleted (the
  /// result then owns new memory and has no deletions). Null on any inconsistency.
  static std::shared_ptr<sealed_segment> adopt(const probe_context& ctx,
                                               std::span<const uint64_t> words,
                                               std::vector<uint64_t> deleted,
                                               std::shared_ptr<const void> owner);

  /// Appends matches of `q` to `out`.
  void probe(const probe_context& ctx, uint64_t q, const probe_params& p,
             std::vector<index_match>& out) const;
  /// Probes a batch, interleaving queries to overlap cache misses; out[i] gets query i's.
  void probe_batch(const probe_context& ctx, std::span<const uint64_t> qs, const probe_params& p,
                   std::vector<std::vector<index_match>>& out) const;

  /// Appends the positions of not yet deleted entries with this id to `out`. Builds the id
  /// table on first use (O(size)); the online index calls it only under its maintenance lock,
  /// which serialises every user of the id table.
  void find_id(uint64_t id, std::vector<uint32_t>& out);
  /// Marks these positions (from find_id) deleted; caller holds the index's exclusive lock.
  void mark_deleted(std::span<const uint32_t> positions);

  std::size_t size() const noexcept { return n_; }
  std::size_t live() const noexcept { return n_ - deleted_count_; }
  int64_t min_ts() const noexcept { return min_ts_; }
  int64_t max_ts() const noexcept { return max_ts_; }
  std::span<const uint64_t> words() const noexcept { return words_; }
  const std::vector<uint64_t>& deleted() const noexcept { return deleted_; }
  std::size_t memory_bytes() const noexcept {
    return words_.size() * 8 + deleted_.size() * 8 + id_table_bytes_.load();
  }

 private:
  sealed_segment() = default;
  /// A new segment over a block just filled (no deletions), which it keeps alive.
  static std::shared_ptr<sealed_segment> from_block(const probe_context& ctx,
                                                    std::shared_ptr<const huge_block> block);
  /// A segment over `words` (already checked) with deletion bitmap `deleted`, kept alive by
  /// `owner`.
  static std::shared_ptr<sealed_segment> assemble(const probe_context& ctx,
                                                  std::span<const uint64_t> words,
                                                  std::vector<uint64_t> deleted,
                                                  std::shared_ptr<const void> owner);
  /// What a probe of one table found in the directory, for one query.
  struct table_probe {
    uint32_t lo, hi;  ///< the slot's range of ordinal words (table 0: of entries)
    uint32_t slot;    ///< directory slot
    uint32_t filter;  ///< the query's filter bits for this table (0 when it has none)
    uint32_t value;   ///< the query's presence value: its bit in the slot's presence mask
  };

  void bind(const probe_context& ctx);
  bool is_deleted(std::size_t i) const noexcept { return (deleted_[i >> 6] >> (i & 63)) & 1; }
  /// Probes queries qs (as many as `tp` has room for: qs.size() * tables) stage by stage over
  /// all of them, prefetching what the next stage reads; emit(j, match) for query j's matches.
  template <class Emit>
  void probe_group(const probe_context& ctx, std::span<const uint64_t> qs, const probe_params& p,
                   table_probe* tp, Emit&& emit) const;
  template <class Emit>
  void scan(const probe_context& ctx, std::size_t t, uint64_t q, const probe_params& p,
            const table_probe& tp, Emit&& emit) const;

  std::span<const uint64_t> words_;
  std::shared_ptr<const void> owner_;  ///< keeps words_ alive (a vector or a file mapping)
  std::size_t n_ = 0;
  int dir_bits_ = 0;
  int64_t min_ts_ = 0, max_ts_ = 0;
  const uint64_t* fp_ = nullptr;
  const uint64_t* id_ = nullptr;
  const int64_t* ts_ = nullptr;
  /// Ordinal words of tables 1..: the ordinal in the low ord_bits_ bits, filter bits above.
  int ord_bits_ = 32;
  uint32_t ord_mask_ = UINT32_MAX;
  /// Per table: filter bits in its ordinal words (0 for table 0).
  std::vector<int> filter_bits_;
  /// Per table: key bits after the directory bits that its presence masks cover (0 to 5).
  std::vector<int> presence_bits_;
  /// Per table: its ordinal words carry the whole presence value in their filter bits (tables
  /// 1.. unless the ordinals take more than 27 bits), so a probe can skip to the query's run.
  std::vector<uint8_t> ranked_;
  std::vector<const uint32_t*> order_;  ///< per table (table 0: null, entries are in its order)
  /// Per table, 2^d + 1 slots: start offset in the low half, presence mask in the high half.
  std::vector<const uint64_t*> dir_;
  std::vector<uint64_t> deleted_;
  std::size_t deleted_count_ = 0;
  /// Open-addressing hash of ids: position + 1, 0 for an empty slot. In memory only (rebuilt
  /// on demand after a load or merge), so only indexes that remove pay for it.
  std::vector<uint32_t> id_table_;
  /// Its size in bytes, for memory_bytes() from threads that do not hold the maintenance lock.
  std::atomic<std::size_t> id_table_bytes_{0};
};

class mutable_segment {
 public:
  mutable_segment(const probe_context& ctx, std::size_t capacity);

  bool full() const noexcept { return fp_.size() == capacity_; }
  void insert(const probe_context& ctx, const index_entry& e);
  void probe(const probe_context& ctx, uint64_t q, const probe_params& p,
             std::vector<index_match>& out) const;
  /// Probes a batch, interleaving queries to overlap cache misses; out[i] gets query i's.
  void probe_batch(const probe_context& ctx, std::span<const uint64_t> qs, const probe_params& p,
                   std::vector<std::vector<index_match>>& out) const;
  void collect(entry_columns& e, int64_t min_live_ts) const;
  std::size_t remove(uint64_t id);

  std::size_t size() const noexcept { return fp_.size(); }
  std::size_t live() const noexcept { return fp_.size() - deleted_count_; }
  std::size_t memory_bytes() const noexcept;

 private:
  static constexpr uint32_t none = UINT32_MAX;
  /// Probes queries qs (`cursor` has room for qs.size() * tables) stage by stage over all of
  /// them, prefetching what the next stage reads; emit(j, match) for query j's matches.
  template <class Emit>
  void probe_group(const probe_context& ctx, std::span<const uint64_t> qs, const probe_params& p,
                   uint32_t* cursor, Emit&& emit) const;

  std::size_t capacity_;
  int bucket_bits_;
  int id_bits_;  ///< id hash buckets: between capacity and 2 * capacity
  std::vector<uint64_t> fp_, id_;
  std::vector<int64_t> ts_;
  std::vector<bool> deleted_;
  std::size_t deleted_count_ = 0;
  std::vector<std::vector<uint32_t>> heads_;  ///< per table: bucket -> newest entry
  std::vector<std::vector<uint32_t>> next_;   ///< per table: entry -> older entry in its bucket
  std::vector<uint32_t> id_heads_;            ///< id hash bucket -> newest entry
  std::vector<uint32_t> id_next_;             ///< entry -> older entry in its id bucket
};

}  // namespace simdup::detail
