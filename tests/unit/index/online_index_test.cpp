// Online index against brute force, windows, removal, check-insert, save/load and old files.
#include <simdup/online_index.hpp>
#include "test_paths.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include <unistd.h>
#include <xxhash.h>

namespace simdup {
namespace {

using hit = std::tuple<uint64_t, int>;  // id, distance

std::vector<hit> hits(const std::vector<index_match>& ms) {
  std::vector<hit> out;
  for (const auto& m : ms) out.emplace_back(m.id, m.distance);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<hit> brute(const std::vector<index_entry>& es, uint64_t q, int k,
                       int64_t min_ts = INT64_MIN, const std::set<uint64_t>& gone = {}) {
  std::vector<hit> out;
  for (const auto& e : es) {
    const int d = std::popcount(e.fingerprint ^ q);
    if (d <= k && e.timestamp >= min_ts && !gone.count(e.id)) out.emplace_back(e.id, d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// n entries: random fingerprints, every other one a copy of an earlier one with 0..k+1 bits
/// flipped; id = position, timestamp = position.
std::vector<index_entry> make_entries(std::size_t n, int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<index_entry> es;
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t f = rng();
    if (i % 2 == 1) {
      f = es[rng() % i].fingerprint;
      const int d = static_cast<int>(i / 2 % static_cast<std::size_t>(k + 2));
      for (int b = 0; b < d; ++b) f ^= uint64_t{1} << (rng() % 64);
    }
    es.push_back({f, i, static_cast<int64_t>(i)});
  }
  return es;
}

online_index make(const char* blocks, int k, std::size_t capacity, int64_t window = 0) {
  online_index_options o;
  auto l = index_layout::parse(k, blocks);
  EXPECT_TRUE(l.has_value());
  o.layout = *l;
  o.segment_capacity = capacity;
  o.window = window;
  o.clock = [] { return int64_t{1'000'000}; };
  auto idx = online_index::create(o);
  EXPECT_TRUE(idx.has_value()) << idx.error().message;
  return std::move(*idx);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// An index whose owner calls maintain() (as the service does): inserts only set full
/// segments aside.
online_index owner_maintained(std::size_t capacity) {
  online_index_options o;
  o.layout = *index_layout::parse(3, "5");
  o.segment_capacity = capacity;
  o.maintain_on_insert = false;
  auto idx = online_index::create(o);
  EXPECT_TRUE(idx.has_value()) << idx.error().message;
  return std::move(*idx);
}

/// Single and batch queries for `qs` agree with brute force over `es` without `gone` (k = 3).
void expect_brute_force(const online_index& idx, const std::vector<index_entry>& es,
                        const std::vector<uint64_t>& qs, const std::set<uint64_t>& gone = {}) {
  query_results batch;
  idx.query(qs, batch);
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const auto expected = brute(es, qs[i], 3, INT64_MIN, gone);
    ASSERT_EQ(hits(idx.query(qs[i])), expected) << "query " << i;
    ASSERT_EQ(hits({batch[i].begin(), batch[i].end()}), expected) << "batch query " << i;
  }
}

TEST(OnlineIndex, MatchesBruteForce) {
  struct cfg {
    const char* blocks;
    int k;
    std::size_t capacity;
  };
  for (const cfg& c :
       {cfg{"4", 3, 16}, cfg{"5", 3, 50}, cfg{"6", 3, 7}, cfg{"4/4", 3, 33}, cfg{"1", 0, 8},
        cfg{"3", 2, 1}, cfg{"8", 6, 40}, cfg{"20,5,9,30", 3, 64}, cfg{"13", 12, 100}}) {
    SCOPED_TRACE(std::string(c.blocks) + " k=" + std::to_string(c.k));
    auto idx = make(c.blocks, c.k, c.capacity);
    const auto es = make_entries(900, c.k, 5);
    // Inserted one by one and in batches, so mutable, frozen and merged segments all occur.
    for (std::size_t i = 0; i < 300; ++i) idx.insert(es[i]);
    idx.insert(std::span(es).subspan(300));
    std::mt19937_64 rng(9);
    std::vector<uint64_t> qs;
    for (std::size_t i = 0; i < es.size(); i += 7) qs.push_back(es[i].fingerprint ^ (rng() & 3));
    query_results batch;
    idx.query(qs, batch);
    ASSERT_EQ(batch.size(), qs.size());
    for (std::size_t i = 0; i < qs.size(); ++i) {
      const auto expected = brute(es, qs[i], c.k);
      ASSERT_EQ(hits(idx.query(qs[i])), expected) << "query " << i;
      ASSERT_EQ(hits({batch[i].begin(), batch[i].end()}), expected) << "batch query " << i;
      if (c.k > 0) {
        ASSERT_EQ(hits(idx.query(qs[i], {.k = c.k - 1})), brute(es, qs[i], c.k - 1));
      }
    }
    EXPECT_EQ(idx.stats().size, es.size());
    idx.compact();
    EXPECT_EQ(idx.stats().sealed_segments, 1u);
    for (std::size_t i = 0; i < qs.size(); ++i)
      ASSERT_EQ(hits(idx.query(qs[i])), brute(es, qs[i], c.k));
  }
}

TEST(OnlineIndex, MaintenanceByTheOwnerFindsTheSameEntries) {
  auto idx = owner_maintained(32);
  const auto es = make_entries(700, 3, 21);
  for (std::size_t i = 0; i < 200; ++i) idx.insert(es[i]);
  idx.insert(std::span(es).subspan(200));
  // Full segments were only set aside: nothing sealed, every entry still found.
  EXPECT_EQ(idx.awaiting_maintenance(), 700u / 32);
  EXPECT_EQ(idx.stats().sealed_segments, 0u);
  EXPECT_GT(idx.stats().segments, 20u);
  std::vector<uint64_t> qs;
  for (std::size_t i = 0; i < es.size(); i += 5) qs.push_back(es[i].fingerprint ^ 1);
  expect_brute_force(idx, es, qs);
  // The owner's maintain() seals and merges them (from another thread here, as the service
  // does), while queries go on.
  std::thread maintainer([&] { idx.maintain(); });
  expect_brute_force(idx, es, qs);
  maintainer.join();
  EXPECT_EQ(idx.awaiting_maintenance(), 0u);
  EXPECT_GT(idx.stats().sealed_segments, 0u);
  EXPECT_LT(idx.stats().segments, 20u);
  EXPECT_EQ(idx.stats().size, es.size());
  expect_brute_force(idx, es, qs);
}

TEST(OnlineIndex, DeferredRemovalsHideAtOnceAndApplyAtMaintenance) {
  auto idx = make("5", 3, 16);
  auto es = make_entries(300, 3, 33);
  idx.insert(es);
  idx.compact();  // every entry in a sealed segment, so removals go through the id tables
  std::set<uint64_t> gone;
  for (uint64_t id = 0; id < 300; id += 3) {
    idx.remove_deferred(id);
    gone.insert(id);
  }
  EXPECT_EQ(idx.stats().removed, 0u);  // not applied yet
  EXPECT_GT(idx.awaiting_maintenance(), 0u);
  std::vector<uint64_t> qs;
  for (const auto& e : es) qs.push_back(e.fingerprint);
  const auto check_all = [&] { expect_brute_force(idx, es, qs, gone); };
  check_all();
  // check_insert does not count a removed entry as a duplicate (id 0 is removed).
  const index_entry again{es[0].fingerprint, 1000, 1};
  const auto expected = brute(es, again.fingerprint, 3, INT64_MIN, gone);
  EXPECT_EQ(hits(idx.check_insert(again)), expected);
  if (expected.empty()) es.push_back(again);
  // Taking one back before it is applied: its entry is found again.
  EXPECT_TRUE(idx.cancel_removal(3));
  gone.erase(3);
  EXPECT_FALSE(idx.cancel_removal(4));  // never removed
  check_all();
  idx.maintain();
  EXPECT_EQ(idx.awaiting_maintenance(), 0u);
  EXPECT_EQ(idx.stats().removed, gone.size());
  EXPECT_FALSE(idx.cancel_removal(0));  // applied already
  check_all();
}

TEST(OnlineIndex, ConcurrentDeferredRemovalsAndMaintenance) {
  auto idx = owner_maintained(64);
  const auto es = make_entries(4000, 3, 41);
  std::atomic<std::size_t> inserted{0};
  // One thread inserts and maintains (seals, merges) as the service's threads do ...
  std::thread writer([&] {
    for (std::size_t i = 0; i < es.size(); i += 100) {
      idx.insert(std::span(es).subspan(i, 100));
      inserted = i + 100;
      idx.maintain();
    }
  });
  // ... while another removes every fifth entry once inserted, deferred, and queries.
  std::set<uint64_t> gone;
  for (std::size_t next = 0; next < es.size();) {
    for (const std::size_t have = inserted; next < have; ++next) {
      if (next % 5 == 0) {
        idx.remove_deferred(es[next].id);
        gone.insert(es[next].id);
      }
    }
    (void)idx.query(es[next % es.size()].fingerprint);
  }
  writer.join();
  idx.maintain();
  EXPECT_EQ(idx.stats().removed, gone.size());
  for (std::size_t i = 0; i < es.size(); i += 7)
    ASSERT_EQ(hits(idx.query(es[i].fingerprint)), brute(es, es[i].fingerprint, 3, INT64_MIN, gone));
}

TEST(OnlineIndex, EqualFingerprintsAndEmpty) {
  auto idx = make("4", 3, 4);
  EXPECT_TRUE(idx.query(0).empty());
  for (uint64_t id = 0; id < 10; ++id) idx.insert({0, id, 0});
  idx.insert({0, 3, 0});  // a duplicate id is a separate entry
  const auto ms = idx.query(0);
  ASSERT_EQ(ms.size(), 11u);
  for (const auto& m : ms) EXPECT_EQ(m.distance, 0);
  EXPECT_EQ(idx.remove(3), 2u);
  EXPECT_EQ(idx.query(0).size(), 9u);
  EXPECT_EQ(idx.remove(3), 0u);
  EXPECT_EQ(idx.stats().removed, 2u);
  EXPECT_EQ(idx.stats().size, 9u);
}

// remove(id) goes through per-segment id tables: they must find every copy of an id in the
// mutable, frozen and sealed segments, be rebuilt after merges and loads, and not resurrect
// or double-count anything.
TEST(OnlineIndex, RemoveMatchesBruteForce) {
  auto idx = make("5", 3, 16);
  auto es = make_entries(600, 3, 11);
  for (std::size_t i = 0; i < es.size(); i += 5) es[i].id = es[i / 2].id;  // duplicate ids
  std::vector<index_entry> live;  // inserted and not removed
  auto insert = [&](std::size_t from, std::size_t to) {
    idx.insert(std::span(es).subspan(from, to - from));
    live.insert(live.end(), es.begin() + static_cast<std::ptrdiff_t>(from),
                es.begin() + static_cast<std::ptrdiff_t>(to));
  };
  std::mt19937_64 rng(12);
  auto remove_some = [&](std::size_t count) {
    for (std::size_t r = 0; r < count; ++r) {
      const uint64_t id = rng() % 700;  // ids 600..699 are never inserted
      const std::size_t expected =
          std::erase_if(live, [&](const index_entry& e) { return e.id == id; });
      ASSERT_EQ(idx.remove(id), expected) << "id " << id;
    }
  };
  auto check = [&](const online_index& x) {
    EXPECT_EQ(x.stats().size, live.size());
    for (std::size_t i = 0; i < es.size(); i += 3)
      ASSERT_EQ(hits(x.query(es[i].fingerprint)), brute(live, es[i].fingerprint, 3))
          << "query " << i;
  };
  insert(0, 250);  // sealed and merged segments, and a mutable one
  remove_some(40);
  check(idx);
  insert(250, es.size());  // some ids removed above come back as new entries
  remove_some(40);         // new sealed segments: their id tables are built now
  check(idx);
  idx.compact();  // one merged segment without the removed entries
  EXPECT_EQ(idx.stats().sealed_segments, 1u);
  remove_some(40);
  check(idx);

  const std::string path = ::testing::TempDir() + "remove_" + std::to_string(::getpid());
  ASSERT_TRUE(idx.save(path));
  auto back = online_index::load(path);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  std::filesystem::remove(path);
  idx = std::move(*back);
  remove_some(40);  // the loaded segment builds its id table from the file's columns
  check(idx);

  // A removed id inserted again is a new entry, and removable again.
  const uint64_t id = 650;
  idx.insert({es[0].fingerprint, id, 0});
  const auto ms = idx.query(es[0].fingerprint);
  EXPECT_TRUE(std::any_of(ms.begin(), ms.end(), [&](const index_match& m) { return m.id == id; }));
  EXPECT_EQ(idx.remove(id), 1u);
  EXPECT_EQ(idx.remove(id), 0u);
}

TEST(OnlineIndex, WindowFiltersAndExpires) {
  auto idx = make("5", 3, 10, /*window=*/100);
  // 50 entries per time step of 10: fingerprints equal, so every query sees all live ones.
  std::vector<index_entry> es;
  for (uint64_t i = 0; i < 200; ++i) es.push_back({42, i, static_cast<int64_t>(i / 10 * 10)});
  idx.insert(es);
  // now = 200: live while ts + 100 > 200, i.e. ts >= 101 (ts 110..190: 90 entries).
  EXPECT_EQ(idx.query(42, {.k = -1, .now = 200}).size(), 90u);
  EXPECT_EQ(idx.query(42, {.k = -1, .now = 1'000}).size(), 0u);
  // Automatic expiry at the newest timestamp (190): segments whose newest ts < 91 are gone.
  EXPECT_GT(idx.stats().expired, 0u);
  EXPECT_EQ(hits(idx.query(42, {.k = -1, .now = 190})), brute(es, 42, 3, 91));
  const auto before = idx.stats();
  EXPECT_EQ(idx.expire(10'000), before.size - 10);  // all but the 10 still in the mutable segment
  EXPECT_EQ(idx.stats().size, 10u);
  // The injected clock (1'000'000) is the default now: nothing is live.
  EXPECT_TRUE(idx.query(42).empty());
}

TEST(OnlineIndex, CheckInsert) {
  auto idx = make("4", 3, 3);
  EXPECT_TRUE(idx.check_insert({0xff, 1, 0}).empty());
  const auto dup = idx.check_insert({0xfe, 2, 0});
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_EQ(dup[0].id, 1u);
  EXPECT_EQ(dup[0].distance, 1);
  EXPECT_EQ(idx.stats().size, 1u);  // not inserted
  EXPECT_TRUE(idx.check_insert({~uint64_t{0xff}, 3, 0}).empty());
  EXPECT_TRUE(idx.check_insert({0xff00ff, 4, 0}, {.k = 0}).empty());
  EXPECT_EQ(idx.stats().size, 3u);
}

TEST(OnlineIndex, ManyTableLayoutsStartSmall) {
  // k = 8 over 12 blocks needs 495 tables; a mutable segment of 65536 entries would hold
  // about 390 MB of chains before the first insert.
  online_index_options o;
  o.layout = index_layout::even(8, 12);
  auto idx = online_index::create(o);
  ASSERT_TRUE(idx.has_value());
  EXPECT_LT(idx->stats().memory_bytes, 16u << 20);
  for (uint64_t i = 0; i < 3000; ++i) idx->insert({i * 0x9E3779B97F4A7C15ULL, i, 0});
  const auto found = idx->query(1000 * 0x9E3779B97F4A7C15ULL ^ 0xF0F);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].id, 1000u);
  EXPECT_EQ(found[0].distance, 8);
}

TEST(OnlineIndex, EmptyIndexIsSmallAndGrowsToFullSegments) {
  // The service's collections (k = 3, automatic capacity): the first mutable segment holds
  // 1,024 entries and each next one twice as many, up to the full 65,536.
  online_index_options o;
  o.layout = index_layout::even(3, 6);
  auto idx = online_index::create(o);
  ASSERT_TRUE(idx.has_value());
  EXPECT_LT(idx->stats().memory_bytes, 512u << 10);  // was about 8 MB
  std::vector<index_entry> es;
  std::mt19937_64 rng(17);
  for (uint64_t i = 0; i < 200'000; ++i) es.push_back({rng(), i, 0});
  for (const auto& e : es) idx->insert(e);
  EXPECT_EQ(idx->stats().size, es.size());
  for (std::size_t i = 0; i < es.size(); i += 9973) {
    const auto found = idx->query(es[i].fingerprint ^ 0x8001);
    EXPECT_EQ(hits(found), brute(es, es[i].fingerprint ^ 0x8001, 3)) << i;
  }
  // Full segments once grown: 200,000 entries are not hundreds of small segments.
  EXPECT_LT(idx->stats().segments, 12u) << idx->stats().segments;
}

TEST(OnlineIndex, PlansForTheLayoutsK) {
  // No widths: the planner chooses blocks for layout.k, the one holder of k, and queries
  // reach that distance.
  online_index_options o;
  o.layout.k = 6;
  o.expected_size = 1000;
  auto idx = online_index::create(o);
  ASSERT_TRUE(idx.has_value()) << idx.error().message;
  EXPECT_EQ(idx->layout().k, 6);
  const uint64_t fp = 0x0123456789abcdefULL;
  idx->insert({fp ^ 0x3f, 1, 0});  // 6 bits away
  const auto found = idx->query(fp, {.k = -1, .now = 0});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].distance, 6);
}

TEST(OnlineIndex, RejectsBadOptions) {
  online_index_options o;
  o.segment_capacity = UINT32_MAX;
  EXPECT_EQ(online_index::create(o).error().code, errc::invalid_argument);
  o = {};
  o.merge_fanout = 1;
  EXPECT_FALSE(online_index::create(o).has_value());
  o = {};
  o.layout.k = 3;
  o.layout.widths = {32, 32};
  EXPECT_FALSE(online_index::create(o).has_value());
  o = {};
  o.layout.k = 40;  // planned (no widths): the planner's check, the one range check of k
  EXPECT_EQ(online_index::create(o).error().message, "k must be in 0..32, got 40");
  o = {};
  o.merge_cap_floor = 0;
  EXPECT_EQ(online_index::create(o).error().code, errc::invalid_argument);
}

TEST(OnlineIndex, MergesRespectTheCap) {
  // Segments of 64 entries, merged four at a time (tiers 64, 256, 1024, 4096, 16384), with a
  // cap of max(live / 8, 512): at 20,000 entries no merge may build more than 2,500.
  auto build = [](std::size_t divisor) -> online_index {
    online_index_options o;
    o.layout = *index_layout::parse(3, "5");
    o.segment_capacity = 64;
    o.merge_cap_divisor = divisor;
    o.merge_cap_floor = 512;
    auto idx = online_index::create(o);
    EXPECT_TRUE(idx.has_value());
    return std::move(*idx);
  };
  const auto es = make_entries(20'000, 3, 21);
  auto capped = build(8);
  std::size_t largest = 0;
  for (std::size_t i = 0; i < es.size(); i += 100) {
    capped.insert(std::span(es).subspan(i, 100));
    const auto st = capped.stats();
    ASSERT_LE(st.largest_segment, std::max<uint64_t>(st.size / 8, 512)) << "after " << i + 100;
    largest = std::max<std::size_t>(largest, st.largest_segment);
  }
  EXPECT_EQ(largest, 1024u);  // four segments of 256; four of 1024 would exceed the cap
  // Segments held back while the index was small merge once it has grown: the newest run of
  // four 1024s merges as soon as 4096 <= live / 8, and older runs follow.
  for (std::size_t i = 0; i < 20'000; i += 100) {
    std::vector<index_entry> more(es.begin() + static_cast<std::ptrdiff_t>(i),
                                  es.begin() + static_cast<std::ptrdiff_t>(i + 100));
    for (auto& e : more) e.id += 20'000;
    capped.insert(more);
  }
  EXPECT_EQ(capped.stats().largest_segment, 4096u);
  std::mt19937_64 rng(3);
  for (std::size_t i = 0; i < es.size(); i += 97) {
    const uint64_t q = es[i].fingerprint ^ (rng() & 5);
    auto expected = brute(es, q, 3);
    for (const auto& [id, d] : brute(es, q, 3)) expected.emplace_back(id + 20'000, d);
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(hits(capped.query(q)), expected) << "query " << i;
  }
  // Without the cap the same inserts build a segment of 16384; compact() ignores the cap.
  auto uncapped = build(0);
  uncapped.insert(es);
  EXPECT_EQ(uncapped.stats().largest_segment, 16384u);
  capped.compact();
  EXPECT_EQ(capped.stats().sealed_segments, 1u);
  EXPECT_EQ(capped.stats().largest_segment, 40'000u);
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("simdup_") + name + "_" + std::to_string(::getpid())))
      .string();
}

TEST(OnlineIndex, SaveLoadRoundTrip) {
  auto idx = make("5", 3, 32);
  const auto es = make_entries(500, 3, 11);
  idx.insert(es);
  idx.remove(7);
  const std::string path = temp_path("roundtrip");
  ASSERT_TRUE(idx.save(path));
  online_index_options o;
  o.segment_capacity = 32;
  auto back = online_index::load(path, o);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->layout().describe(), idx.layout().describe());
  EXPECT_EQ(back->stats().size, idx.stats().size);
  EXPECT_EQ(back->stats().removed, 1u);
  for (std::size_t i = 0; i < es.size(); i += 5)
    ASSERT_EQ(hits(back->query(es[i].fingerprint)),
              brute(es, es[i].fingerprint, 3, INT64_MIN, {7}));
  // The loaded index takes inserts and removals; the mapping stays read-only.
  back->insert({es[0].fingerprint, 9999, 0});
  EXPECT_EQ(back->remove(0), 1u);
  auto ms = hits(back->query(es[0].fingerprint));
  EXPECT_TRUE(std::find(ms.begin(), ms.end(), hit{9999, 0}) != ms.end());
  back->compact();
  EXPECT_EQ(back->stats().size, idx.stats().size);
  std::filesystem::remove(path);
}

TEST(OnlineIndex, LoadRejectsDamagedFiles) {
  EXPECT_EQ(online_index::load(temp_path("missing")).error().code, errc::not_found);
  auto idx = make("4", 3, 8);
  idx.insert(make_entries(40, 3, 2));
  const std::string path = temp_path("damaged");
  ASSERT_TRUE(idx.save(path));
  std::string bytes = file_bytes(path);
  auto write = [&](const std::string& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  };
  for (std::size_t pos : {std::size_t{0}, std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    std::string b = bytes;
    b[pos] ^= 0x10;
    write(b);
    EXPECT_EQ(online_index::load(path).error().code, errc::corrupt_data) << pos;
  }
  write(bytes.substr(0, bytes.size() - 8));
  EXPECT_EQ(online_index::load(path).error().code, errc::corrupt_data);
  write("");
  EXPECT_EQ(online_index::load(path).error().code, errc::corrupt_data);
  std::filesystem::remove(path);
}

/// What the fixture files hold: make_entries(300, 3, 2026), layout "5", id 5 removed.
void expect_fixture_contents(const online_index& idx, const std::vector<index_entry>& es) {
  EXPECT_EQ(idx.layout().describe(), "13,13,13,13,12");
  EXPECT_EQ(idx.stats().size, 299u);
  for (const auto& e : es)
    ASSERT_EQ(hits(idx.query(e.fingerprint)), brute(es, e.fingerprint, 3, INT64_MIN, {5}));
}

// tests/data/index/v1_small.simdupix was written by the version-1 writer (old-form segments:
// plain ordinals) from make_entries(300, 3, 2026) with layout "5", segment capacity 64, id 5
// removed. It must keep loading as the format evolves; the version-1 writer is gone, so it
// can no longer be rewritten.
TEST(OnlineIndex, OldFileStillLoads) {
  const std::string path = std::string(SIMDUP_TEST_DATA_DIR) + "/index/v1_small.simdupix";
  const auto es = make_entries(300, 3, 2026);
  auto idx = online_index::load(path);
  ASSERT_TRUE(idx.has_value()) << idx.error().message;
  expect_fixture_contents(*idx, es);
  // Saved again (a version-3 file: loading rebuilt the segments), then compacted and saved
  // again: both load and answer alike.
  const std::string again = temp_path("v1_again");
  for (int round = 0; round < 2; ++round) {
    if (round == 1) idx->compact();
    ASSERT_TRUE(idx->save(again));
    auto back = online_index::load(again);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    for (const auto& e : es)
      ASSERT_EQ(hits(back->query(e.fingerprint)), brute(es, e.fingerprint, 3, INT64_MIN, {5}));
  }
  std::filesystem::remove(again);
}

// tests/data/index/v2_small.simdupix was written by the version-2 writer (ordinal words with
// filter bits) from the same entries, layout and removal as v1_small; the version-2 writer is
// gone too.
TEST(OnlineIndex, Version2FileStillLoads) {
  const std::string path = std::string(SIMDUP_TEST_DATA_DIR) + "/index/v2_small.simdupix";
  const auto es = make_entries(300, 3, 2026);
  auto idx = online_index::load(path);
  ASSERT_TRUE(idx.has_value()) << idx.error().message;
  expect_fixture_contents(*idx, es);
}

// tests/data/index/v3_small.simdupix was written by the version-3 writer (directory slots with
// presence masks) from the same entries, layout and removal. SIMDUP_WRITE_INDEX_FIXTURE=1
// rewrites it (only for a new version's fixture: keep the old file).
TEST(OnlineIndex, Version3FileStillLoads) {
  const std::string path = std::string(SIMDUP_TEST_DATA_DIR) + "/index/v3_small.simdupix";
  const auto es = make_entries(300, 3, 2026);
  if (std::getenv("SIMDUP_WRITE_INDEX_FIXTURE")) {
    auto idx = make("5", 3, 64);
    idx.insert(es);
    idx.remove(5);
    ASSERT_TRUE(idx.save(path));
  }
  auto idx = online_index::load(path);
  ASSERT_TRUE(idx.has_value()) << idx.error().message;
  expect_fixture_contents(*idx, es);
}

TEST(OnlineIndex, VersionOneFileWithFilterBitsIsCorrupt) {
  // A version-3 file relabelled as version 1 or 2 (checksum made valid again): its segments
  // carry filter bits, which version 1 never had, and the version-3 block form.
  auto idx = make("5", 3, 64);
  idx.insert(make_entries(200, 3, 4));
  const std::string path = temp_path("relabelled");
  ASSERT_TRUE(idx.save(path));
  std::string bytes = file_bytes(path);
  ASSERT_GT(bytes.size(), 72u);
  auto rewrite = [&](uint32_t version) {
    std::string b = bytes;
    std::memcpy(b.data() + 8, &version, 4);
    const uint64_t sum = XXH3_64bits(b.data(), b.size() - 8);
    std::memcpy(b.data() + b.size() - 8, &sum, 8);
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(b.data(), static_cast<std::streamsize>(b.size()));
  };
  rewrite(1);
  EXPECT_EQ(online_index::load(path).error().code, errc::corrupt_data);
  rewrite(2);
  EXPECT_EQ(online_index::load(path).error().code, errc::corrupt_data);
  rewrite(4);
  EXPECT_EQ(online_index::load(path).error().code, errc::unsupported);
  rewrite(3);
  EXPECT_TRUE(online_index::load(path).has_value());
  std::filesystem::remove(path);
}

TEST(OnlineIndexConcurrent, QueriesDuringInserts) {
  auto idx = make("5", 3, 64);
  const auto base = make_entries(400, 3, 3);
  idx.insert(base);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&, r] {
      std::size_t i = static_cast<std::size_t>(r);
      while (!done.load()) {
        const auto& e = base[i % base.size()];
        const auto ms = idx.query(e.fingerprint);
        const bool found = std::any_of(ms.begin(), ms.end(), [&](const index_match& m) {
          return m.id == e.id && m.distance == 0;
        });
        if (!found) ++failures;
        (void)idx.stats();
        i += 13;
      }
    });
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&, w] {
      std::mt19937_64 rng(static_cast<uint64_t>(w));
      for (uint64_t i = 0; i < 3000; ++i)
        idx.insert({rng(), 100'000 + static_cast<uint64_t>(w) * 10'000 + i, 0});
    });
  for (auto& t : writers) t.join();
  idx.compact();
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(idx.stats().size, 400u + 6000u);
}

TEST(OnlineIndexConcurrent, QueriesDuringRemoves) {
  auto idx = make("5", 3, 32);
  const auto base = make_entries(800, 3, 8);
  idx.insert(base);
  // Readers look for the entries with even ids, which are never removed; the writer removes
  // the odd ids and inserts new entries (sealing and merging run meanwhile).
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&, r] {
      std::size_t i = static_cast<std::size_t>(r) * 2;
      while (!done.load()) {
        const auto& e = base[i % base.size()];
        const auto ms = idx.query(e.fingerprint);
        if (std::none_of(ms.begin(), ms.end(), [&](const index_match& m) { return m.id == e.id; }))
          ++failures;
        (void)idx.stats();
        i += 2;
      }
    });
  std::size_t removed = 0;
  std::mt19937_64 rng(5);
  for (uint64_t id = 1; id < base.size(); id += 2) {
    removed += idx.remove(id);
    idx.insert({rng(), 10'000 + id, 0});
  }
  idx.compact();
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(removed, base.size() / 2);
  EXPECT_EQ(idx.stats().size, base.size());
  for (uint64_t id = 1; id < base.size(); id += 2) EXPECT_EQ(idx.remove(id), 0u);
}

TEST(OnlineIndexConcurrent, CheckInsertIsAtomic) {
  auto idx = make("4", 3, 16);
  std::vector<uint64_t> fps(500);
  std::mt19937_64 rng(4);
  for (auto& f : fps) f = rng();
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < fps.size(); ++i)
        (void)idx.check_insert({fps[i] ^ (t & 1), t * 1000 + i, 0});  // within 1 of each other
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(idx.stats().size, fps.size());  // exactly one of the three near copies each
}

}  // namespace
}  // namespace simdup
