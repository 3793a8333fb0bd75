// Sealed segments against brute force (several layouts and sizes, deletions, expiry), and
// against blocks written by hand from docs/index-format.md (independently of the builder),
// including the older block form of version 1 and 2 files, which is rebuilt on adopt.
#include "index/segment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <random>
#include <string>
#include <tuple>

namespace simdup::detail {
namespace {

using hit = std::tuple<uint64_t, int>;  // id, distance

/// The tables of a layout and the probe context over them.
struct fixture {
  std::vector<table_perm> tables;
  probe_context ctx{};

  explicit fixture(const index_layout& layout) : tables(build_tables(layout)) {
    int min_prefix = 64;
    for (const auto& t : tables) min_prefix = std::min(min_prefix, t.prefix_bits);
    ctx = probe_context{&tables, min_prefix};
  }
};

/// n entries: random fingerprints, every third one a copy of an earlier one with 0..k+1 bits
/// flipped (planted near-duplicates); id = 1000 + position, timestamp = position.
entry_columns make_entries(std::size_t n, int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  entry_columns e;
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t f = rng();
    if (i % 3 == 2) {
      f = e.fp[rng() % i];
      const int d = static_cast<int>(i / 3 % static_cast<std::size_t>(k + 2));
      for (int b = 0; b < d; ++b) f ^= uint64_t{1} << (rng() % 64);
    }
    e.push(f, 1000 + i, static_cast<int64_t>(i));
  }
  return e;
}

std::vector<uint64_t> make_queries(const entry_columns& e, std::size_t count, int k,
                                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> qs;
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 4 == 3 || e.size() == 0) {
      qs.push_back(rng());
      continue;
    }
    uint64_t q = e.fp[rng() % e.size()];
    const int d = static_cast<int>(i % static_cast<std::size_t>(k + 2));
    for (int b = 0; b < d; ++b) q ^= uint64_t{1} << (rng() % 64);
    qs.push_back(q);
  }
  return qs;
}

std::vector<hit> brute(const entry_columns& e, uint64_t q, int k) {
  std::vector<hit> out;
  for (std::size_t i = 0; i < e.size(); ++i) {
    const int d = std::popcount(e.fp[i] ^ q);
    if (d <= k) out.emplace_back(e.id[i], d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<hit> hits(const std::vector<index_match>& ms) {
  std::vector<hit> out;
  for (const auto& m : ms) out.emplace_back(m.id, m.distance);
  std::sort(out.begin(), out.end());
  return out;
}

/// A segment block written from docs/index-format.md alone, in the current form (directory
/// slots with presence masks, header word 6 = 3; ordinal words with ord_bits bits of ordinal
/// and filter bits above, sorted within a slot), or with `legacy` in the form of version 1 and 2
/// files (4-byte directory slots, no masks; ord_bits 0: plain ordinals without filter bits).
std::vector<uint64_t> hand_block(const fixture& f, const entry_columns& e, int ord_bits,
                                 bool legacy = false) {
  const std::size_t n = e.size(), nt = f.tables.size();
  const int d =
      std::clamp(static_cast<int>(std::bit_width(n)) - (legacy ? 2 : 4), 0, f.ctx.min_prefix_bits);
  auto slot = [&](std::size_t t, uint64_t fp) -> uint64_t {
    return d == 0 ? 0 : f.tables[t].apply(fp) >> (64 - d);
  };
  // Presence value: the min(5, P_t - d) key bits after the directory bits.
  auto value = [&](std::size_t t, uint64_t fp) -> uint64_t {
    const int pb = std::min(5, f.tables[t].prefix_bits - d);
    return pb == 0 ? 0 : (f.tables[t].apply(fp) << d) >> (64 - pb);
  };
  // Entries in table 0's slot order (stable: insertion order within a slot).
  std::vector<std::size_t> pos(n);
  std::iota(pos.begin(), pos.end(), 0);
  std::stable_sort(pos.begin(), pos.end(), [&](std::size_t a, std::size_t b) {
    return slot(0, e.fp[a]) < slot(0, e.fp[b]);
  });
  const std::size_t order_words = (n + 1) / 2;
  const std::size_t dir_slots = (std::size_t{1} << d) + 1;
  const std::size_t dir_words = legacy ? (dir_slots + 1) / 2 : dir_slots;
  std::vector<uint64_t> w(8 + 3 * n + (nt - 1) * order_words + nt * dir_words, 0);
  w[0] = n;
  w[1] = static_cast<uint64_t>(d);
  w[2] = nt;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (std::size_t i = 0; i < n; ++i) {
    lo = std::min(lo, e.ts[i]);
    hi = std::max(hi, e.ts[i]);
  }
  w[3] = static_cast<uint64_t>(n ? lo : 0);
  w[4] = static_cast<uint64_t>(n ? hi : 0);
  w[5] = static_cast<uint64_t>(ord_bits);
  w[6] = legacy ? 0 : 3;
  std::vector<uint64_t> fp(n);
  for (std::size_t i = 0; i < n; ++i) {
    fp[i] = e.fp[pos[i]];
    w[8 + i] = fp[i];
    w[8 + n + i] = e.id[pos[i]];
    w[8 + 2 * n + i] = static_cast<uint64_t>(e.ts[pos[i]]);
  }
  auto* order_base = reinterpret_cast<uint32_t*>(w.data() + 8 + 3 * n);
  const std::size_t dir_base = 8 + 3 * n + (nt - 1) * order_words;
  for (std::size_t t = 0; t < nt; ++t) {
    // Start offsets from slot counts; then (current form) presence masks in the high halves.
    std::vector<uint64_t> start(dir_slots, 0);
    for (std::size_t i = 0; i < n; ++i) ++start[slot(t, fp[i]) + 1];
    for (std::size_t s = 1; s < dir_slots; ++s) start[s] += start[s - 1];
    for (std::size_t s = 0; s < dir_slots; ++s) {
      if (legacy)
        reinterpret_cast<uint32_t*>(w.data() + dir_base + t * dir_words)[s] =
            static_cast<uint32_t>(start[s]);
      else
        w[dir_base + t * dir_words + s] = start[s];
    }
    if (!legacy)
      for (std::size_t i = 0; i < n; ++i)
        w[dir_base + t * dir_words + slot(t, fp[i])] |= uint64_t{1} << (32 + value(t, fp[i]));
    if (t == 0) continue;
    std::vector<std::size_t> ord(n);
    std::iota(ord.begin(), ord.end(), 0);
    std::stable_sort(ord.begin(), ord.end(),
                     [&](std::size_t a, std::size_t b) { return slot(t, fp[a]) < slot(t, fp[b]); });
    uint32_t* order = order_base + (t - 1) * order_words * 2;
    const int pf = ord_bits == 0 ? 0 : std::min(32 - ord_bits, f.tables[t].prefix_bits - d);
    for (std::size_t i = 0; i < n; ++i) {
      const uint64_t key = f.tables[t].apply(fp[ord[i]]);
      const uint64_t filter = pf == 0 ? 0 : (key << d) >> (64 - pf);
      order[i] = static_cast<uint32_t>(ord[i] | (ord_bits == 0 ? 0 : filter << ord_bits));
    }
    // Current form: within a slot, words in increasing order (filter bits, then ordinal).
    if (!legacy)
      for (std::size_t s = 0; s + 1 < dir_slots; ++s)
        std::sort(order + start[s], order + start[s + 1]);
  }
  return w;
}

/// The fewest ordinal bits for n entries, which the builder writes.
int min_ordinal_bits(std::size_t n) {
  return n <= 1 ? 1 : static_cast<int>(std::bit_width(n - 1));
}

std::shared_ptr<sealed_segment> adopt(const fixture& f, const std::vector<uint64_t>& words) {
  return sealed_segment::adopt(f.ctx, words, std::vector<uint64_t>((words[0] + 63) / 64, 0),
                               nullptr);
}

/// probe() and probe_batch() of `seg` against brute force over `e`, at k and k - 1.
void expect_brute(const fixture& f, const sealed_segment& seg, const entry_columns& e, int k,
                  std::span<const uint64_t> qs) {
  for (int kk : {k, k - 1}) {
    if (kk < 0) continue;
    const probe_params p{kk, INT64_MIN};
    std::vector<std::vector<index_match>> batch(qs.size());
    seg.probe_batch(f.ctx, qs, p, batch);
    for (std::size_t i = 0; i < qs.size(); ++i) {
      std::vector<index_match> one;
      seg.probe(f.ctx, qs[i], p, one);
      const auto expected = brute(e, qs[i], kk);
      ASSERT_EQ(hits(one), expected) << "query " << i << " k " << kk;
      ASSERT_EQ(hits(batch[i]), expected) << "batch query " << i << " k " << kk;
    }
  }
}

struct layout_case {
  const char* name;
  index_layout layout;
};

// Prefixes from 7 bits (9 blocks, k=8: at a few thousand entries the directory takes all but
// one or none of them, leaving presence masks of 1 bit or none) to 64 (k=0: one table).
std::vector<layout_case> layouts() {
  return {{"13,13,13,13,12 k=3", *index_layout::parse(3, "13,13,13,13,12")},
          {"4 x 16 k=3", index_layout::even(3, 4)},
          {"4/4 k=3", index_layout::two_level(3, 4, 4)},
          {"12 blocks k=8", index_layout::even(8, 12)},
          {"9 blocks k=8", index_layout::even(8, 9)},
          {"one table k=0", index_layout::even(0, 1)},
          {"3/3 k=1", index_layout::two_level(1, 3, 3)}};
}

/// Sizes around the directory-bit boundaries (powers of two) and the trivial ones.
const std::size_t small_sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65, 300};

TEST(SealedSegment, BuildWritesTheDocumentedBlock) {
  for (const auto& lc : layouts()) {
    SCOPED_TRACE(lc.name);
    const fixture f(lc.layout);
    const bool many = f.tables.size() > 20;
    for (std::size_t n : small_sizes) {
      if (many && n > 65) continue;
      SCOPED_TRACE("n=" + std::to_string(n));
      const auto e = make_entries(n, lc.layout.k, n + 1);
      const auto seg = sealed_segment::build(f.ctx, e);
      const auto words = seg->words();
      ASSERT_EQ(std::vector<uint64_t>(words.begin(), words.end()),
                hand_block(f, e, min_ordinal_bits(n)));
    }
  }
}

TEST(SealedSegment, ProbesMatchBruteForce) {
  for (const auto& lc : layouts()) {
    SCOPED_TRACE(lc.name);
    const fixture f(lc.layout);
    const int k = lc.layout.k;
    const bool many = f.tables.size() > 20;
    for (std::size_t n :
         {0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 65, 256, 257, 1000, 4096, 4097, 8191, 8192}) {
      if (many && n > 1000) continue;
      SCOPED_TRACE("n=" + std::to_string(n));
      const auto e = make_entries(n, k, 3 * n + 7);
      const auto qs = make_queries(e, many ? 37 : 101, k, n);
      expect_brute(f, *sealed_segment::build(f.ctx, e), e, k, qs);
    }
  }
}

TEST(SealedSegment, CrowdedSlotsReportEveryEntry) {
  // Hundreds of equal or nearly equal fingerprints share one slot per table: the filter test
  // works through a slot in chunks, and every entry of the slot passes it.
  for (const auto& lc : layouts()) {
    SCOPED_TRACE(lc.name);
    const fixture f(lc.layout);
    const int k = lc.layout.k;
    std::mt19937_64 rng(77);
    const uint64_t a = rng();
    entry_columns e;
    for (std::size_t i = 0; i < 1000; ++i) {
      uint64_t fp = rng();
      if (i % 3 == 0) fp = a;
      if (i % 3 == 1) fp = a ^ (uint64_t{1} << (i % 64));
      e.push(fp, i, static_cast<int64_t>(i));
    }
    const std::vector<uint64_t> qs{a, a ^ 1, a ^ 0x8000000000000001ull, ~a, rng()};
    expect_brute(f, *sealed_segment::build(f.ctx, e), e, k, qs);
  }
}

TEST(SealedSegment, EveryOrdinalWidthProbes) {
  // Blocks may give the ordinal more bits than it needs (up to all 32), leaving 1 or 2 filter
  // bits or none. All probe alike.
  for (const auto& lc : layouts()) {
    SCOPED_TRACE(lc.name);
    const fixture f(lc.layout);
    const int k = lc.layout.k;
    const std::size_t n = f.tables.size() > 20 ? 300 : 2000;
    const auto e = make_entries(n, k, 11);
    const auto qs = make_queries(e, 61, k, 12);
    for (int b : {min_ordinal_bits(n), 20, 30, 31, 32}) {
      SCOPED_TRACE("ordinal bits " + std::to_string(b));
      const auto words = hand_block(f, e, b);
      const auto seg = adopt(f, words);
      ASSERT_NE(seg, nullptr);
      expect_brute(f, *seg, e, k, qs);
    }
  }
}

TEST(SealedSegment, PresenceMasksDecideWhichSlotsAreRead) {
  // The same block with every presence mask cleared finds nothing: a probe whose value is
  // absent from its slot reads neither ordinal words nor entries.
  const fixture f(*index_layout::parse(3, "13,13,13,13,12"));
  const auto e = make_entries(1000, 3, 41);  // d = 6: 65 slots per table
  constexpr std::size_t slots = 65;
  auto words = hand_block(f, e, min_ordinal_bits(1000));
  const auto qs = make_queries(e, 50, 3, 42);
  expect_brute(f, *adopt(f, words), e, 3, qs);
  const std::size_t n = e.size(), nt = f.tables.size();
  const std::size_t dir0 = 8 + 3 * n + (nt - 1) * ((n + 1) / 2);
  for (std::size_t i = dir0; i < words.size(); ++i) words[i] &= UINT32_MAX;
  const auto blind = adopt(f, words);
  ASSERT_NE(blind, nullptr);
  for (uint64_t q : qs) {
    std::vector<index_match> out;
    blind->probe(f.ctx, q, {3, INT64_MIN}, out);
    EXPECT_TRUE(out.empty());
  }
  // Every mask full (but the end slots'): a probe skips as many words as the mask has values
  // below the query's, more than the slot holds, and must stay inside the slot. It then finds
  // a subset of the true matches.
  for (std::size_t t = 0; t < nt; ++t)
    for (std::size_t i = 0; i + 1 < slots; ++i)
      words[dir0 + t * slots + i] |= uint64_t{UINT32_MAX} << 32;
  const auto full = adopt(f, words);
  ASSERT_NE(full, nullptr);
  for (uint64_t q : qs) {
    std::vector<index_match> out;
    full->probe(f.ctx, q, {3, INT64_MIN}, out);
    const auto found = hits(out), expected = brute(e, q, 3);
    EXPECT_TRUE(std::includes(expected.begin(), expected.end(), found.begin(), found.end()));
  }
}

TEST(SealedSegment, OlderBlocksAreRebuiltOnAdopt) {
  // Blocks of version 1 (plain ordinals) and 2 (filter bits) files become the block a build of
  // their entries writes; entries marked deleted in them are left out.
  for (const auto& lc : layouts()) {
    SCOPED_TRACE(lc.name);
    const fixture f(lc.layout);
    const int k = lc.layout.k;
    const bool many = f.tables.size() > 20;
    for (std::size_t n : {0, 1, 5, 64, 65, 700}) {
      if (many && n > 65) continue;
      SCOPED_TRACE("n=" + std::to_string(n));
      const auto e = make_entries(n, k, n + 5);
      for (int b : {0, min_ordinal_bits(n), 32}) {
        const auto old = hand_block(f, e, b, true);
        const auto seg = adopt(f, old);
        ASSERT_NE(seg, nullptr);
        const auto words = seg->words();
        // The old block holds the entries in its table-0 order, which the rebuild keeps.
        entry_columns in_order;
        for (std::size_t i = 0; i < n; ++i)
          in_order.push(old[8 + i], old[8 + n + i], static_cast<int64_t>(old[8 + 2 * n + i]));
        ASSERT_EQ(std::vector<uint64_t>(words.begin(), words.end()),
                  hand_block(f, in_order, min_ordinal_bits(n)));
      }
      if (n < 5) continue;
      // Every third position deleted in the file: the rebuilt segment holds the others.
      const auto old = hand_block(f, e, min_ordinal_bits(n), true);
      std::vector<uint64_t> deleted((n + 63) / 64, 0);
      entry_columns kept;
      for (std::size_t i = 0; i < n; ++i) {
        if (i % 3 == 0)
          deleted[i / 64] |= uint64_t{1} << (i % 64);
        else
          kept.push(old[8 + i], old[8 + n + i], static_cast<int64_t>(old[8 + 2 * n + i]));
      }
      const auto seg = sealed_segment::adopt(f.ctx, old, deleted, nullptr);
      ASSERT_NE(seg, nullptr);
      EXPECT_EQ(seg->size(), kept.size());
      EXPECT_EQ(seg->live(), kept.size());
      expect_brute(f, *seg, kept, k, make_queries(e, 40, k, n));
    }
  }
}

TEST(SealedSegment, MergesRebuiltAndBuiltSegments) {
  const fixture f(*index_layout::parse(3, "13,13,13,13,12"));
  const auto a = make_entries(700, 3, 21), b = make_entries(900, 3, 22);
  const auto old_words = hand_block(f, a, 0, true);
  const std::vector<std::shared_ptr<sealed_segment>> inputs{adopt(f, old_words),
                                                            sealed_segment::build(f.ctx, b)};
  ASSERT_NE(inputs[0], nullptr);
  const auto merged = sealed_segment::merge(f.ctx, inputs, INT64_MIN);
  entry_columns all = a;
  for (std::size_t i = 0; i < b.size(); ++i) all.push(b.fp[i], b.id[i], b.ts[i]);
  ASSERT_EQ(merged->size(), all.size());
  // The merged block holds the inputs' entries in their order.
  const auto words = merged->words();
  entry_columns in_order;
  for (const auto& s : inputs)
    for (std::size_t i = 0; i < s->size(); ++i)
      in_order.push(s->words()[8 + i], s->words()[8 + s->size() + i],
                    static_cast<int64_t>(s->words()[8 + 2 * s->size() + i]));
  EXPECT_EQ(std::vector<uint64_t>(words.begin(), words.end()), hand_block(f, in_order, 11));
  expect_brute(f, *merged, all, 3, make_queries(all, 200, 3, 23));
}

TEST(SealedSegment, CrowdedSlotsWriteTheDocumentedBlock) {
  // The directory is capped at the shortest prefix (10 bits here), so 20000 entries crowd about
  // 20 to a slot. The longer prefixes leave 12 filter bits (22-bit tables) or 14 (24 bits), the
  // shortest none; slots of more than 16 words are common. Built and merged blocks (the merge
  // leaving out deleted and expired entries) are the documented ones.
  for (const char* widths : {"22,22,10,10", "24,20,10,10", "7,7,7,7,7,7,7,7,8"}) {
    SCOPED_TRACE(widths);
    const int k = widths[0] == '7' ? 8 : 3;
    const fixture f(*index_layout::parse(k, widths));
    const auto e = make_entries(20000, k, 61);
    const auto seg = sealed_segment::build(f.ctx, e);
    auto words = seg->words();
    ASSERT_EQ(std::vector<uint64_t>(words.begin(), words.end()),
              hand_block(f, e, min_ordinal_bits(e.size())));
    const auto more = sealed_segment::build(f.ctx, make_entries(3000, k, 62));
    std::vector<uint32_t> gone;
    for (uint32_t i = 0; i < seg->size(); i += 7) gone.push_back(i);
    seg->mark_deleted(gone);
    const int64_t min_ts = 500;
    const std::vector<std::shared_ptr<sealed_segment>> inputs{seg, more};
    const auto merged = sealed_segment::merge(f.ctx, inputs, min_ts);
    entry_columns kept;
    for (const auto& s : inputs) {
      const auto w = s->words();
      const std::size_t n = s->size();
      for (std::size_t i = 0; i < n; ++i)
        if ((s != seg || i % 7 != 0) && static_cast<int64_t>(w[8 + 2 * n + i]) >= min_ts)
          kept.push(w[8 + i], w[8 + n + i], static_cast<int64_t>(w[8 + 2 * n + i]));
    }
    words = merged->words();
    ASSERT_EQ(std::vector<uint64_t>(words.begin(), words.end()),
              hand_block(f, kept, min_ordinal_bits(kept.size())));
    expect_brute(f, *merged, kept, k, make_queries(kept, 60, k, 63));
  }
}

TEST(SealedSegment, DeletionsAndExpiryHideEntries) {
  for (const auto& lc : layouts()) {
    SCOPED_TRACE(lc.name);
    const fixture f(lc.layout);
    const int k = lc.layout.k;
    const std::size_t n = f.tables.size() > 20 ? 300 : 3000;
    const auto e = make_entries(n, k, 51);
    const auto seg = sealed_segment::build(f.ctx, e);
    // Remove every fifth id; planted copies share fingerprints but not ids.
    std::vector<uint32_t> positions;
    std::vector<bool> removed(n, false);
    for (std::size_t i = 0; i < n; i += 5) {
      std::vector<uint32_t> found;
      seg->find_id(e.id[i], found);
      ASSERT_EQ(found.size(), 1u);
      positions.push_back(found[0]);
      removed[i] = true;
    }
    seg->mark_deleted(positions);
    seg->mark_deleted(positions);  // twice: counted once
    EXPECT_EQ(seg->live(), n - positions.size());
    const int64_t min_ts = static_cast<int64_t>(n / 3);
    entry_columns visible;
    for (std::size_t i = 0; i < n; ++i)
      if (!removed[i] && e.ts[i] >= min_ts) visible.push(e.fp[i], e.id[i], e.ts[i]);
    const auto qs = make_queries(e, 80, k, 52);
    std::vector<std::vector<index_match>> batch(qs.size());
    seg->probe_batch(f.ctx, qs, {k, min_ts}, batch);
    for (std::size_t i = 0; i < qs.size(); ++i) {
      std::vector<index_match> one;
      seg->probe(f.ctx, qs[i], {k, min_ts}, one);
      ASSERT_EQ(hits(one), brute(visible, qs[i], k)) << "query " << i;
      ASSERT_EQ(hits(batch[i]), brute(visible, qs[i], k)) << "batch query " << i;
    }
  }
}

TEST(SealedSegment, AdoptRejectsBadBlocks) {
  const fixture f(*index_layout::parse(3, "13,13,13,13,12"));
  const std::size_t n = 1000;  // 10 ordinal bits; d = 6, so 19 filter bits per table
  const std::size_t nt = f.tables.size(), slots = (std::size_t{1} << 6) + 1;
  const auto e = make_entries(n, 3, 31);
  const auto good = hand_block(f, e, 10);
  ASSERT_NE(adopt(f, good), nullptr);
  const std::size_t order0 = 8 + 3 * n;  // first word of table 1's ordinal words
  const std::size_t dir0 = order0 + (nt - 1) * ((n + 1) / 2);  // table 0's first slot
  auto with = [&](auto&& change) {
    auto w = good;
    change(w);
    return adopt(f, w);
  };
  auto set_ordinal = [&](std::vector<uint64_t>& w, std::size_t i, uint32_t word) {
    reinterpret_cast<uint32_t*>(w.data() + order0)[i] = word;
  };
  auto get_ordinal = [&](const std::vector<uint64_t>& w, std::size_t i) {
    return reinterpret_cast<const uint32_t*>(w.data() + order0)[i];
  };
  // Ordinal part n (= 1000 < 1024) with the filter bits kept: out of range.
  EXPECT_EQ(with([&](auto& w) { set_ordinal(w, 5, (get_ordinal(w, 5) & ~1023u) | 1000u); }),
            nullptr);
  EXPECT_EQ(with([&](auto& w) {
              set_ordinal(w, 2 * n - 1, (get_ordinal(w, 2 * n - 1) & ~1023u) | 1023u);
            }),
            nullptr);
  // An ordinal twice in one table (and so another never): the entry would be reported twice.
  EXPECT_EQ(with([&](auto& w) {
              set_ordinal(w, 9, (get_ordinal(w, 9) & ~1023u) | (get_ordinal(w, 8) & 1023u));
            }),
            nullptr);
  // Ordinal bits 0 (only older blocks had plain ordinals), out of 1..32, or too few for n.
  EXPECT_EQ(with([&](auto& w) { w[5] = 0; }), nullptr);
  EXPECT_EQ(with([&](auto& w) { w[5] = 33; }), nullptr);
  EXPECT_EQ(with([&](auto& w) { w[5] = 9; }), nullptr);
  // A filter bit above the table's filter width (10 + 19 = 29 bits at most here).
  EXPECT_EQ(with([&](auto& w) { set_ordinal(w, 7, get_ordinal(w, 7) | (1u << 31)); }), nullptr);
  // Directories: not starting at 0, decreasing, not ending at n, past n, a mask on the end
  // slot; an unknown form; directory bits off the rule.
  EXPECT_EQ(with([&](auto& w) { w[dir0 + slots] += 1; }), nullptr);  // table 1's slot 0
  EXPECT_EQ(with([&](auto& w) { w[dir0 + 5] = (w[dir0 + 5] & ~uint64_t{UINT32_MAX}) | 999; }),
            nullptr);
  EXPECT_EQ(with([&](auto& w) { w[dir0 + slots - 1] = n - 1; }), nullptr);
  EXPECT_EQ(with([&](auto& w) { w[dir0 + 3 * slots - 1] = n + 1; }), nullptr);
  EXPECT_EQ(with([&](auto& w) { w[dir0 + slots - 1] |= uint64_t{1} << 32; }), nullptr);
  EXPECT_EQ(with([&](auto& w) { w[6] = 2; }), nullptr);
  EXPECT_EQ(with([&](auto& w) { w[1] = 8; }), nullptr);
  // A presence bit past 2^pb values where a table's prefix leaves fewer than 5 bits: the
  // 9-block k=8 layout leads with one block of 7 or 8 bits.
  {
    const fixture g(index_layout::even(8, 9));
    const std::size_t m = 4096;  // d = 7 = the shortest prefix: 0 or 1 presence bit
    const auto ge = make_entries(m, 8, 32);
    auto w = hand_block(g, ge, min_ordinal_bits(m));
    ASSERT_NE(adopt(g, w), nullptr);
    const std::size_t gd0 = 8 + 3 * m + (g.tables.size() - 1) * ((m + 1) / 2);
    w[gd0] |= uint64_t{1} << 34;
    EXPECT_EQ(adopt(g, w), nullptr);
  }
  // Older blocks: the size must match their own directory rule.
  auto old = hand_block(f, e, 0, true);
  ASSERT_NE(adopt(f, old), nullptr);
  old.push_back(0);
  EXPECT_EQ(adopt(f, old), nullptr);
  old.pop_back();
  old[1] = 7;  // their rule says 8
  EXPECT_EQ(adopt(f, old), nullptr);
}

}  // namespace
}  // namespace simdup::detail
