// Segments of the online index: building, merging, adopting (from a file), probing.
#include "index/segment.hpp"

#include <algorithm>
#include <bit>

#include "index/huge_block.hpp"
#include "index/online_layout.hpp"

namespace simdup::detail {
namespace {

inline std::size_t slot_of(uint64_t key, int bits) noexcept {
  return bits == 0 ? 0 : static_cast<std::size_t>(key >> (64 - bits));
}

/// Word counts of a sealed block's parts (docs/index-format.md): header, entry columns, the
/// ordinal words of tables 1.., then per table a directory of 2^d + 1 one-word slots.
struct block_shape {
  std::size_t n, tables;
  int dir_bits;
  std::size_t order_words() const { return (n + 1) / 2; }
  std::size_t dir_slots() const { return (std::size_t{1} << dir_bits) + 1; }
  std::size_t order_offset(std::size_t t) const {
    return segment_header_words + 3 * n + (t - 1) * order_words();
  }
  std::size_t dir_offset(std::size_t t) const {
    return segment_header_words + 3 * n + (tables - 1) * order_words() + t * dir_slots();
  }
  std::size_t total_words() const { return dir_offset(tables); }
};

/// Words of a version 1 or 2 block with d directory bits: its columns sit where this form's
/// do, but its directories are 2^d + 1 uint32 per table, zero padded to a word.
std::size_t legacy_total_words(std::size_t n, std::size_t tables, int d) {
  return block_shape{n, tables, d}.dir_offset(0) + tables * (((std::size_t{1} << d) + 2) / 2);
}

/// A directory slot: the offset of its first entry (low half) and its presence mask (high
/// half): bit v set when some entry of the slot has presence value v (below).
inline uint32_t slot_start(uint64_t slot) noexcept {
  return static_cast<uint32_t>(slot);
}
inline bool slot_has(uint64_t slot, uint32_t value) noexcept {
  return (slot >> (32 + value)) & 1;
}

/// Presence bits of a table: the key bits right after the directory bits that the slot masks
/// cover, at most 5 and only inside the table's prefix (0 bits: every entry has value 0).
inline int presence_bits(int prefix_bits, int d) noexcept {
  return std::min(presence_bits_max, prefix_bits - d);
}

inline bool live_entry(int64_t ts, const probe_params& p) noexcept {
  return ts >= p.min_live_ts;
}

/// Low bits of an ordinal word that hold the ordinal, in a block of n entries (header word 5).
inline int ordinal_bits(std::size_t n) noexcept {
  return n <= 1 ? 1 : static_cast<int>(std::bit_width(n - 1));
}

/// Filter bits of a table's ordinal words: the key bits right after the d directory bits, as
/// many as fit beside the ordinal and lie inside the table's prefix (only an entry that shares
/// the whole prefix with a query can be reported by that table).
inline int filter_bits(int ord_bits, int prefix_bits, int d) noexcept {
  return std::min(32 - ord_bits, prefix_bits - d);
}

/// Fewer filter bits reject too few entries (half with one bit) to pay for testing them: a probe
/// then reads every entry of the slot, as without filter bits. Many-table layouts (k = 8) have one
/// or two filter bits, where testing cost 20 to 40% of batch query time.
constexpr int min_useful_filter_bits = 3;

inline uint32_t filter_of(uint64_t key, int d, int bits) noexcept {
  return bits == 0 ? 0 : static_cast<uint32_t>((key << d) >> (64 - bits));
}

/// Hash of a document id to `bits` bits (ids are often sequential: multiply-shift spreads them).
inline std::size_t id_slot(uint64_t id, int bits) noexcept {
  return bits == 0 ? 0 : static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

}  // namespace

void sealed_segment::bind(const probe_context& ctx) {
  const uint64_t* w = words_.data();
  n_ = static_cast<std::size_t>(w[0]);
  dir_bits_ = static_cast<int>(w[1]);
  min_ts_ = static_cast<int64_t>(w[3]);
  max_ts_ = static_cast<int64_t>(w[4]);
  const std::size_t tables = ctx.tables->size();
  ord_bits_ = static_cast<int>(w[5]);
  ord_mask_ = ord_bits_ == 32 ? UINT32_MAX : (uint32_t{1} << ord_bits_) - 1;
  filter_bits_.assign(tables, 0);
  presence_bits_.assign(tables, 0);
  ranked_.assign(tables, 0);
  for (std::size_t t = 0; t < tables; ++t) {
    const int prefix = (*ctx.tables)[t].prefix_bits;
    if (t > 0) filter_bits_[t] = filter_bits(ord_bits_, prefix, dir_bits_);
    presence_bits_[t] = presence_bits(prefix, dir_bits_);
    ranked_[t] = t > 0 && filter_bits_[t] >= presence_bits_[t];
  }
  const block_shape shape{n_, tables, dir_bits_};
  fp_ = w + segment_header_words;
  id_ = fp_ + n_;
  ts_ = reinterpret_cast<const int64_t*>(id_ + n_);
  order_.assign(tables, nullptr);
  dir_.assign(tables, nullptr);
  for (std::size_t t = 1; t < tables; ++t)
    order_[t] = reinterpret_cast<const uint32_t*>(w + shape.order_offset(t));
  for (std::size_t t = 0; t < tables; ++t) dir_[t] = w + shape.dir_offset(t);
  deleted_count_ = 0;
  for (uint64_t word : deleted_) deleted_count_ += static_cast<std::size_t>(std::popcount(word));
}

namespace {

/// Counts entry `key` in a directory being built: slot s's count in the low half of dir[s + 1],
/// its presence mask in the high half (both in one pass over the entries, one access each).
inline void count_entry(uint64_t* dir, uint64_t key, int d, int pb) noexcept {
  uint64_t& c = dir[slot_of(key, d) + 1];
  c = (c + 1) | uint64_t{1} << (32 + filter_of(key, d, pb));
}

/// Turns the counts and masks of count_entry into the slots: start offset and own mask.
void counts_to_slots(uint64_t* dir, std::size_t slots) {
  uint64_t start = 0;
  for (std::size_t s = 0; s + 1 < slots; ++s) {
    const uint64_t next = dir[s + 1];
    dir[s] = start | (next >> 32 << 32);
    start += static_cast<uint32_t>(next);
  }
  dir[slots - 1] = start;
}

/// Sorts a slot's ordinal words (distinct: each holds its own ordinal). The usual handful go
/// by rank: each word's place is the number of smaller words, counted without branches
/// (insertion sort mispredicted about once per word and cost half as much again; std::sort
/// twice as much). Crowded slots go to std::sort.
void sort_slot(uint32_t* first, uint32_t* last) {
  constexpr std::ptrdiff_t small = 16;
  const std::ptrdiff_t m = last - first;
  if (m > small) {
    std::sort(first, last);
    return;
  }
  uint32_t sorted[small];
  for (std::ptrdiff_t i = 0; i < m; ++i) {
    std::ptrdiff_t rank = 0;
    for (std::ptrdiff_t j = 0; j < m; ++j) rank += first[j] < first[i];
    sorted[rank] = first[i];
  }
  std::copy(sorted, sorted + m, first);
}

/// Which way a table's ordinal words get their order within slots (see fill_table).
enum class slot_order {
  ordinals,  ///< no filter bits: ordinals ascending are already in order
  sorted,    ///< slots of a handful of words, sorted one by one
  radix,     ///< slots of over 8 words on average, by LSD radix passes
};

/// Filter bits up to which crowded slots go by radix passes (2^bits counters). More occur only
/// in blocks of at most 2^19 entries (ordinals of under 20 bits), which sort their slots.
constexpr int radix_filter_bits_max = 12;

/// How table `table` in a block of n entries (ordinal bits b, directory bits d) orders its slots.
/// Radix passes where slots hold over 8 words on average: most blocks (8 to 16 words a slot),
/// and the crowded slots of a directory capped at the tables' shortest prefix, which went to
/// std::sort (a third to half less build time there with 4 tables). Otherwise (slots of at
/// most 8 words, or more than 12 filter bits, which only blocks under 2^20 entries have) the
/// slots are sorted one by one, by rank.
inline slot_order order_of(const table_perm& table, std::size_t n, int b, int d) noexcept {
  const int pf = filter_bits(b, table.prefix_bits, d);
  if (pf == 0) return slot_order::ordinals;
  const bool crowded = n > (std::size_t{8} << d);
  return crowded && pf <= radix_filter_bits_max ? slot_order::radix : slot_order::sorted;
}

/// Fills table `table`'s directory `dir` (zeroed) and ordinal words `order` (ordinal i, filter
/// bits above; i indexes `fp`, table 0's order), the words ordered by slot, within a slot by
/// filter bits (so by presence value), then ordinal. `cursor` has room for one per slot.
/// slot_order::radix is an LSD radix order: ordinals (ascending) are first placed by filter
/// value into `scratch` (n words, each the ordinal word with its slot above; `at` holds the
/// count of each filter value at [value + 1]), then from there by slot, which keeps the
/// (filter, ordinal) order within each slot.
void fill_table(const table_perm& table, const uint64_t* fp, std::size_t n, int d, int b,
                uint64_t* dir, std::size_t dir_slots, std::vector<uint32_t>& cursor,
                std::vector<uint32_t>& at, uint64_t* scratch, uint32_t* order) {
  const int pb = presence_bits(table.prefix_bits, d);
  const int pf = filter_bits(b, table.prefix_bits, d);
  auto word = [&](uint64_t key, std::size_t i) {
    return static_cast<uint32_t>(i | (uint64_t{filter_of(key, d, pf)} << b));
  };
  const slot_order how = order_of(table, n, b, d);
  if (how == slot_order::radix) {
    for (std::size_t v = 1; v < at.size(); ++v) at[v] += at[v - 1];
    for (std::size_t i = 0; i < n; ++i) {
      const uint64_t key = table.apply(fp[i]);
      count_entry(dir, key, d, pb);
      scratch[at[filter_of(key, d, pf)]++] = uint64_t{word(key, i)} | slot_of(key, d) << 32;
    }
    counts_to_slots(dir, dir_slots);
    for (std::size_t s = 0; s < cursor.size(); ++s) cursor[s] = slot_start(dir[s]);
    for (std::size_t i = 0; i < n; ++i)
      order[cursor[scratch[i] >> 32]++] = static_cast<uint32_t>(scratch[i]);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) count_entry(dir, table.apply(fp[i]), d, pb);
  counts_to_slots(dir, dir_slots);
  for (std::size_t s = 0; s < cursor.size(); ++s) cursor[s] = slot_start(dir[s]);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t key = table.apply(fp[i]);
    order[cursor[slot_of(key, d)]++] = word(key, i);
  }
  if (how == slot_order::ordinals) return;
  for (std::size_t s = 0; s < cursor.size(); ++s)
    sort_slot(order + slot_start(dir[s]), order + slot_start(dir[s + 1]));
}

/// Fills a sealed block with n entries. visit(f) calls f(fp, id, ts) for each entry, in the
/// same order every time (it is called two or three times). Directory slots are recomputed
/// rather than stored, and radix passes use the id column as their scratch before the ids are
/// written (by a third visit), so the block (and one directory's cursors) is all the memory a
/// build needs.
template <class Visit>
std::shared_ptr<huge_block> fill_block(const probe_context& ctx, std::size_t n,
                                       const Visit& visit) {
  const auto& tables = *ctx.tables;
  const int d = directory_bits(n, ctx.min_prefix_bits);
  const block_shape shape{n, tables.size(), d};
  auto storage = huge_block::make(shape.total_words());
  uint64_t* w = storage->data;
  w[0] = n;
  w[1] = static_cast<uint64_t>(d);
  w[2] = tables.size();
  const int b = ordinal_bits(n);
  w[5] = static_cast<uint64_t>(b);
  w[6] = segment_form;

  // Table 0: counting sort of the entries themselves by directory slot.
  uint64_t* dir0 = w + shape.dir_offset(0);
  const int pb0 = presence_bits(tables[0].prefix_bits, d);
  int64_t lo_ts = INT64_MAX, hi_ts = INT64_MIN;
  visit([&](uint64_t f, uint64_t, int64_t t) {
    lo_ts = std::min(lo_ts, t);
    hi_ts = std::max(hi_ts, t);
    count_entry(dir0, tables[0].apply(f), d, pb0);
  });
  if (n == 0) lo_ts = hi_ts = 0;
  w[3] = static_cast<uint64_t>(lo_ts);
  w[4] = static_cast<uint64_t>(hi_ts);
  counts_to_slots(dir0, shape.dir_slots());
  std::vector<uint32_t> cursor(shape.dir_slots() - 1);
  auto starts = [&](const uint64_t* dir) {
    for (std::size_t s = 0; s < cursor.size(); ++s) cursor[s] = slot_start(dir[s]);
  };
  // Filter value counts of the radix tables (see fill_table).
  std::vector<std::vector<uint32_t>> at(tables.size());
  std::vector<std::pair<std::size_t, int>> radix;  // table, filter bits
  for (std::size_t t = 1; t < tables.size(); ++t)
    if (order_of(tables[t], n, b, d) == slot_order::radix) {
      const int pf = filter_bits(b, tables[t].prefix_bits, d);
      at[t].assign((std::size_t{1} << pf) + 1, 0);
      radix.emplace_back(t, pf);
    }
  starts(dir0);
  uint64_t* fp = w + segment_header_words;
  uint64_t* id = fp + n;
  uint64_t* ts = id + n;
  visit([&](uint64_t f, uint64_t i, int64_t t) {
    const uint32_t pos = cursor[slot_of(tables[0].apply(f), d)]++;
    fp[pos] = f;
    if (radix.empty()) id[pos] = i;
    ts[pos] = static_cast<uint64_t>(t);
    for (const auto& [r, pf] : radix) ++at[r][filter_of(tables[r].apply(f), d, pf) + 1];
  });
  // Tables 1..: ordinal words (positions in table 0's order, filter bits above) by slot.
  for (std::size_t t = 1; t < tables.size(); ++t)
    fill_table(tables[t], fp, n, d, b, w + shape.dir_offset(t), shape.dir_slots(), cursor, at[t],
               id, reinterpret_cast<uint32_t*>(w + shape.order_offset(t)));
  if (radix.empty()) return storage;
  starts(dir0);
  visit([&](uint64_t f, uint64_t i, int64_t) { id[cursor[slot_of(tables[0].apply(f), d)]++] = i; });
  return storage;
}

/// One query through `group(queries, scratch, emit)`, with one Scratch per table: on the stack
/// for the usual table counts. Even one query is probed stage-wise: its tables' misses overlap.
template <class Scratch, class Group>
void probe_one(std::size_t tables, uint64_t q, std::vector<index_match>& out, Group&& group) {
  constexpr std::size_t on_stack = 64;
  Scratch local[on_stack];
  std::vector<Scratch> heap(tables > on_stack ? tables : 0);
  group(std::span(&q, 1), tables > on_stack ? heap.data() : local,
        [&](std::size_t, const index_match& m) { out.push_back(m); });
}

/// Queries through `group` in groups of 16, whose stages overlap their misses; out[i] gets
/// query i's matches.
template <class Scratch, class Group>
void probe_in_groups(std::size_t tables, std::span<const uint64_t> qs,
                     std::vector<std::vector<index_match>>& out, Group&& group) {
  constexpr std::size_t size = 16;
  std::vector<Scratch> scratch(size * tables);
  for (std::size_t g0 = 0; g0 < qs.size(); g0 += size) {
    group(qs.subspan(g0, std::min(size, qs.size() - g0)), scratch.data(),
          [&, g0](std::size_t j, const index_match& m) { out[g0 + j].push_back(m); });
  }
}

}  // namespace

std::shared_ptr<sealed_segment> sealed_segment::from_block(
    const probe_context& ctx, std::shared_ptr<const huge_block> block) {
  const std::span<const uint64_t> words(block->data, block->words);
  return assemble(ctx, words, std::vector<uint64_t>((words[0] + 63) / 64, 0), std::move(block));
}

std::shared_ptr<sealed_segment> sealed_segment::assemble(const probe_context& ctx,
                                                         std::span<const uint64_t> words,
                                                         std::vector<uint64_t> deleted,
                                                         std::shared_ptr<const void> owner) {
  std::shared_ptr<sealed_segment> seg(new sealed_segment());
  seg->words_ = words;
  seg->owner_ = std::move(owner);
  seg->deleted_ = std::move(deleted);
  seg->bind(ctx);
  return seg;
}

std::shared_ptr<sealed_segment> sealed_segment::build(const probe_context& ctx,
                                                      const entry_columns& e) {
  auto visit = [&](auto&& f) {
    for (std::size_t i = 0; i < e.size(); ++i) f(e.fp[i], e.id[i], e.ts[i]);
  };
  return from_block(ctx, fill_block(ctx, e.size(), visit));
}

std::shared_ptr<sealed_segment> sealed_segment::merge(
    const probe_context& ctx, std::span<const std::shared_ptr<sealed_segment>> inputs,
    int64_t min_live_ts) {
  auto visit = [&](auto&& f) {
    for (const auto& s : inputs)
      for (std::size_t i = 0; i < s->n_; ++i)
        if (!s->is_deleted(i) && s->ts_[i] >= min_live_ts) f(s->fp_[i], s->id_[i], s->ts_[i]);
  };
  std::size_t n = 0;
  visit([&](uint64_t, uint64_t, int64_t) { ++n; });
  return from_block(ctx, fill_block(ctx, n, visit));
}

std::shared_ptr<sealed_segment> sealed_segment::adopt(const probe_context& ctx,
                                                      std::span<const uint64_t> words,
                                                      std::vector<uint64_t> deleted,
                                                      std::shared_ptr<const void> owner) {
  if (words.size() < segment_header_words) return nullptr;
  const uint64_t n = words[0], d = words[1];
  const std::size_t tables = ctx.tables->size();
  if (n >= UINT32_MAX || words[2] != tables || deleted.size() != (n + 63) / 64) return nullptr;
  if (n % 64 && !deleted.empty() && (deleted.back() >> (n % 64)) != 0) return nullptr;
  if (words[6] == 0) {
    // A version 1 or 2 block: only its columns are read (their place depends on n alone), to
    // build this form's block from the entries not deleted, as a merge of one segment would.
    const int old_d = legacy_directory_bits(n, ctx.min_prefix_bits);
    if (d != static_cast<uint64_t>(old_d) || words.size() != legacy_total_words(n, tables, old_d))
      return nullptr;
    const uint64_t* fp = words.data() + segment_header_words;
    const uint64_t* id = fp + n;
    const auto* ts = reinterpret_cast<const int64_t*>(id + n);
    auto gone = [&](std::size_t i) { return (deleted[i >> 6] >> (i & 63)) & 1; };
    auto visit = [&](auto&& f) {
      for (std::size_t i = 0; i < n; ++i)
        if (!gone(i)) f(fp[i], id[i], ts[i]);
    };
    std::size_t live = n;
    for (uint64_t word : deleted) live -= static_cast<std::size_t>(std::popcount(word));
    return from_block(ctx, fill_block(ctx, live, visit));
  }
  if (words[6] != segment_form) return nullptr;
  if (d != static_cast<uint64_t>(directory_bits(n, ctx.min_prefix_bits))) return nullptr;
  const block_shape shape{static_cast<std::size_t>(n), tables, static_cast<int>(d)};
  if (words.size() != shape.total_words()) return nullptr;
  // Ordinal bits: enough for every ordinal, at most 32.
  const uint64_t b = words[5];
  if (b > 32 || b < static_cast<uint64_t>(ordinal_bits(n))) return nullptr;
  const int ob = static_cast<int>(b);
  const uint32_t mask = ob == 32 ? UINT32_MAX : (uint32_t{1} << ob) - 1;
  // Every directory must be a monotone cover of [0, n] and every ordinal in range, so that no
  // probe can read outside the block whatever the file holds, and each table's ordinals a
  // permutation, so that no entry is reported twice (the fuzz campaign's find: a repeated
  // ordinal answered one entry twice). Presence masks are only checked for bits past the
  // table's values: a wrong mask can hide entries, never read past the block or repeat one.
  std::vector<uint64_t> seen((n + 63) / 64);
  for (std::size_t t = 0; t < tables; ++t) {
    const int prefix = (*ctx.tables)[t].prefix_bits;
    const uint64_t* dir = words.data() + shape.dir_offset(t);
    const std::size_t last = shape.dir_slots() - 1;
    if (slot_start(dir[0]) != 0 || dir[last] != n) return nullptr;
    const int values = 1 << presence_bits(prefix, static_cast<int>(d));
    for (std::size_t s = 0; s < last; ++s)
      if (slot_start(dir[s + 1]) < slot_start(dir[s]) || (dir[s] >> 32 >> values) != 0)
        return nullptr;
    if (t == 0) continue;
    const int pf = filter_bits(ob, prefix, static_cast<int>(d));
    const auto* order = reinterpret_cast<const uint32_t*>(words.data() + shape.order_offset(t));
    std::fill(seen.begin(), seen.end(), 0);
    for (std::size_t i = 0; i < n; ++i) {
      const uint32_t o = order[i] & mask;
      if (o >= n || (uint64_t{order[i]} >> ob >> pf) != 0) return nullptr;
      uint64_t& word = seen[o >> 6];
      const uint64_t bit = uint64_t{1} << (o & 63);
      if (word & bit) return nullptr;
      word |= bit;
    }
  }
  return assemble(ctx, words, std::move(deleted), std::move(owner));
}

template <class Emit>
void sealed_segment::scan(const probe_context& ctx, std::size_t t, uint64_t q,
                          const probe_params& p, const table_probe& tp, Emit&& emit) const {
  auto check = [&](uint32_t o) {
    const uint64_t x = fp_[o] ^ q;
    const int dist = std::popcount(x);
    // Report an entry only from the first table whose whole prefix it shares with q.
    if (dist > p.k || !reporting_table(*ctx.tables, t, x)) return;
    if (is_deleted(o) || !live_entry(ts_[o], p)) return;
    emit(index_match{id_[o], fp_[o], ts_[o], dist});
  };
  const uint32_t* order = order_[t];
  if (!order) {
    for (uint32_t i = tp.lo; i < tp.hi; ++i) check(i);
    return;
  }
  if (ranked_[t] || filter_bits_[t] < min_useful_filter_bits) {
    for (uint32_t i = tp.lo; i < tp.hi; ++i) check(order[i] & ord_mask_);
    return;
  }
  // Entries whose filter bits differ from the query's cannot share the table's prefix: skipped
  // without touching the entry arrays. The survivors are gathered without branches first, so
  // that the test costs no mispredicted branch.
  uint32_t keep[64];
  for (uint32_t i = tp.lo; i < tp.hi;) {
    std::size_t kept = 0;
    for (const uint32_t end = tp.hi - i > 64 ? i + 64 : tp.hi; i < end; ++i) {
      keep[kept] = order[i] & ord_mask_;
      kept += (uint64_t{order[i]} >> ord_bits_) == tp.filter;
    }
    for (std::size_t c = 0; c < kept; ++c) check(keep[c]);
  }
}

template <class Emit>
void sealed_segment::probe_group(const probe_context& ctx, std::span<const uint64_t> qs,
                                 const probe_params& p, table_probe* tp, Emit&& emit) const {
  const auto& tables = *ctx.tables;
  const std::size_t nt = tables.size();
  // Stage by stage over every table of every query, prefetching what the next stage reads: the
  // directory slot, then (only where the slot's presence mask has the query's value, for a new
  // document rarely) the ordinal words or entries from where the query's value can start, then
  // the entries of the ordinal words whose filter bits match (the others are never read).
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 0; t < nt; ++t) {
      const uint64_t key = tables[t].apply(qs[j]);
      const auto s = static_cast<uint32_t>(slot_of(key, dir_bits_));
      tp[j * nt + t] = {0, 0, s, filter_of(key, dir_bits_, filter_bits_[t]),
                        filter_of(key, dir_bits_, presence_bits_[t])};
      __builtin_prefetch(dir_[t] + s);
    }
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 0; t < nt; ++t) {
      table_probe& x = tp[j * nt + t];
      const uint64_t slot = dir_[t][x.slot];
      // Without a branch (presence is unpredictable): an absent value leaves an empty range
      // and prefetches the start of the array, which is cheap.
      const bool present = slot_has(slot, x.value);
      x.lo = present ? slot_start(slot) : 0;
      x.hi = present ? slot_start(dir_[t][x.slot + 1]) : 0;
      // Ranked tables: the slot's words are sorted by presence value, and each smaller value
      // present in the mask has at least one word, so the query's run starts no earlier.
      if (ranked_[t]) {
        const auto below = static_cast<uint32_t>(
            std::popcount(static_cast<uint32_t>(slot >> 32) & ((uint32_t{1} << x.value) - 1)));
        x.lo += std::min(below, x.hi - x.lo);
      }
      __builtin_prefetch(order_[t] ? static_cast<const void*>(order_[t] + x.lo)
                                   : static_cast<const void*>(fp_ + x.lo));
    }
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 1; t < nt; ++t) {
      table_probe& x = tp[j * nt + t];
      if (ranked_[t]) {
        // Narrow the range to the words whose filter bits equal the query's (sorted: a run),
        // and prefetch their entries.
        const uint32_t* order = order_[t];
        uint32_t i = x.lo;
        while (i < x.hi && (uint64_t{order[i]} >> ord_bits_) < x.filter) ++i;
        x.lo = i;
        while (i < x.hi && (uint64_t{order[i]} >> ord_bits_) == x.filter)
          __builtin_prefetch(fp_ + (order[i++] & ord_mask_));
        x.hi = i;
        continue;
      }
      const bool filtered = filter_bits_[t] >= min_useful_filter_bits;
      for (uint32_t i = x.lo; i < x.hi; ++i) {
        // Without a branch (see scan): a filtered-out entry prefetches fp_[0], which is cheap.
        const uint32_t w = order_[t][i];
        const bool skip = filtered && (uint64_t{w} >> ord_bits_) != x.filter;
        __builtin_prefetch(fp_ + ((w & ord_mask_) & (skip ? 0u : UINT32_MAX)));
      }
    }
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 0; t < nt; ++t)
      scan(ctx, t, qs[j], p, tp[j * nt + t], [&](const index_match& m) { emit(j, m); });
}

void sealed_segment::probe(const probe_context& ctx, uint64_t q, const probe_params& p,
                           std::vector<index_match>& out) const {
  if (n_ == 0) return;
  probe_one<table_probe>(ctx.tables->size(), q, out, [&](auto qs, auto* tp, auto&& emit) {
    probe_group(ctx, qs, p, tp, emit);
  });
}

void sealed_segment::probe_batch(const probe_context& ctx, std::span<const uint64_t> qs,
                                 const probe_params& p,
                                 std::vector<std::vector<index_match>>& out) const {
  if (n_ == 0) return;
  probe_in_groups<table_probe>(ctx.tables->size(), qs, out, [&](auto group, auto* tp, auto&& emit) {
    probe_group(ctx, group, p, tp, emit);
  });
}

void sealed_segment::find_id(uint64_t id, std::vector<uint32_t>& out) {
  if (n_ == 0) return;
  // Linear probing at a load factor of 0.4 to 0.8: 5 to 10 bytes per entry.
  const int bits = static_cast<int>(std::bit_width(n_ + n_ / 4));
  const std::size_t mask = (std::size_t{1} << bits) - 1;
  if (id_table_.empty()) {
    id_table_.assign(mask + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) {
      std::size_t s = id_slot(id_[i], bits);
      while (id_table_[s] != 0) s = (s + 1) & mask;
      id_table_[s] = static_cast<uint32_t>(i + 1);
    }
    id_table_bytes_.store(id_table_.size() * 4);
  }
  // Equal ids share a probe run: collect them all.
  for (std::size_t s = id_slot(id, bits); id_table_[s] != 0; s = (s + 1) & mask) {
    const uint32_t i = id_table_[s] - 1;
    if (id_[i] == id && !is_deleted(i)) out.push_back(i);
  }
}

void sealed_segment::mark_deleted(std::span<const uint32_t> positions) {
  for (uint32_t i : positions)
    if (!is_deleted(i)) {
      deleted_[i >> 6] |= uint64_t{1} << (i & 63);
      ++deleted_count_;
    }
}

mutable_segment::mutable_segment(const probe_context& ctx, std::size_t capacity)
    : capacity_(capacity),
      bucket_bits_(std::min(static_cast<int>(std::bit_width(capacity)), ctx.min_prefix_bits)),
      id_bits_(static_cast<int>(std::bit_width(capacity))) {
  fp_.reserve(capacity);
  id_.reserve(capacity);
  ts_.reserve(capacity);
  heads_.assign(ctx.tables->size(), std::vector<uint32_t>(std::size_t{1} << bucket_bits_, none));
  next_.assign(ctx.tables->size(), std::vector<uint32_t>(capacity));
  id_heads_.assign(std::size_t{1} << id_bits_, none);
  id_next_.resize(capacity);
}

void mutable_segment::insert(const probe_context& ctx, const index_entry& e) {
  const auto i = static_cast<uint32_t>(fp_.size());
  fp_.push_back(e.fingerprint);
  id_.push_back(e.id);
  ts_.push_back(e.timestamp);
  deleted_.push_back(false);
  uint32_t& id_head = id_heads_[id_slot(e.id, id_bits_)];
  id_next_[i] = id_head;
  id_head = i;
  for (std::size_t t = 0; t < heads_.size(); ++t) {
    uint32_t& head = heads_[t][slot_of((*ctx.tables)[t].apply(e.fingerprint), bucket_bits_)];
    next_[t][i] = head;
    head = i;
  }
}

template <class Emit>
void mutable_segment::probe_group(const probe_context& ctx, std::span<const uint64_t> qs,
                                  const probe_params& p, uint32_t* cursor, Emit&& emit) const {
  const auto& tables = *ctx.tables;
  const std::size_t nt = tables.size();
  // Stage by stage, as in sealed segments: the bucket heads of every table, then the newest
  // entry of each bucket and its link, then the chains (mostly of one entry or none).
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 0; t < nt; ++t) {
      const auto s = static_cast<uint32_t>(slot_of(tables[t].apply(qs[j]), bucket_bits_));
      cursor[j * nt + t] = s;
      __builtin_prefetch(heads_[t].data() + s);
    }
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 0; t < nt; ++t) {
      const uint32_t i = heads_[t][cursor[j * nt + t]];
      cursor[j * nt + t] = i;
      if (i == none) continue;
      __builtin_prefetch(fp_.data() + i);
      __builtin_prefetch(next_[t].data() + i);
    }
  for (std::size_t j = 0; j < qs.size(); ++j)
    for (std::size_t t = 0; t < nt; ++t)
      for (uint32_t i = cursor[j * nt + t]; i != none; i = next_[t][i]) {
        const uint64_t x = fp_[i] ^ qs[j];
        const int dist = std::popcount(x);
        if (dist > p.k || !reporting_table(tables, t, x)) continue;
        if (deleted_[i] || !live_entry(ts_[i], p)) continue;
        emit(j, index_match{id_[i], fp_[i], ts_[i], dist});
      }
}

void mutable_segment::probe(const probe_context& ctx, uint64_t q, const probe_params& p,
                            std::vector<index_match>& out) const {
  probe_one<uint32_t>(ctx.tables->size(), q, out, [&](auto qs, auto* cursor, auto&& emit) {
    probe_group(ctx, qs, p, cursor, emit);
  });
}

void mutable_segment::probe_batch(const probe_context& ctx, std::span<const uint64_t> qs,
                                  const probe_params& p,
                                  std::vector<std::vector<index_match>>& out) const {
  probe_in_groups<uint32_t>(
      ctx.tables->size(), qs, out,
      [&](auto group, auto* cursor, auto&& emit) { probe_group(ctx, group, p, cursor, emit); });
}

void mutable_segment::collect(entry_columns& e, int64_t min_live_ts) const {
  for (std::size_t i = 0; i < fp_.size(); ++i)
    if (!deleted_[i] && ts_[i] >= min_live_ts) e.push(fp_[i], id_[i], ts_[i]);
}

std::size_t mutable_segment::remove(uint64_t id) {
  std::size_t count = 0;
  for (uint32_t i = id_heads_[id_slot(id, id_bits_)]; i != none; i = id_next_[i])
    if (id_[i] == id && !deleted_[i]) {
      deleted_[i] = true;
      ++count;
    }
  deleted_count_ += count;
  return count;
}

std::size_t mutable_segment::memory_bytes() const noexcept {
  std::size_t bytes = capacity_ * 24 + capacity_ / 8;
  for (const auto& h : heads_) bytes += h.size() * 4;
  for (const auto& nx : next_) bytes += nx.size() * 4;
  return bytes + (id_heads_.size() + id_next_.size()) * 4;
}

}  // namespace simdup::detail
