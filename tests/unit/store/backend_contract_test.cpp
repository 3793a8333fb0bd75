// What every store backend promises (store/backend.hpp), run on each: embedded RocksDB in a
// directory per test, and a real redis-server per test (support/redis_server.hpp). "Reopen" is
// a new backend over the same directory, or a new client of the same server.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/backend.hpp"
#include "support/backend_calls.hpp"
#include "support/redis_server.hpp"

namespace simdup::detail {
namespace {

enum class contract_store { rocksdb, redis };

// "t<thread>-<a>-<b>..." built by appends: GCC 12 warns falsely (-Wrestrict) on
// chains of "literal" + std::to_string(...).
std::string thread_doc_id(int thread, std::initializer_list<int> parts) {
  std::string id = "t";
  id += std::to_string(thread);
  for (const int part : parts) {
    id += '-';
    id += std::to_string(part);
  }
  return id;
}

class StoreBackendContract : public ::testing::TestWithParam<contract_store> {
 protected:
  void SetUp() override {
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : test) {
      if (c == '/') c = '_';
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("simdup_contract_" + std::to_string(::getpid()) + "_" + test);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_.name = "c";
    config_.k = 3;
    config_.window_s = 100;
    if (GetParam() == contract_store::redis) {
      server_.start(dir_);
      if (!server_.running()) GTEST_FAIL() << "the Redis backend cannot be tested (see above)";
    }
  }
  void TearDown() override {
    server_.stop();
    std::filesystem::remove_all(dir_);
  }

  /// With the default options.
  std::unique_ptr<backend> open() {
    auto b = GetParam() == contract_store::rocksdb ? open_rocks_backend((dir_ / "store").string())
                                                   : open_redis_backend(server_.url());
    EXPECT_TRUE(b) << b.error().message;
    return b ? std::move(*b) : nullptr;
  }

  doc_outcome one(backend& b, doc_op op, std::string id, uint64_t fp, int64_t time) {
    return test_support::apply_one(b, config_, op, std::move(id), fp, time);
  }

  std::filesystem::path dir_;
  collection_config config_;
  test_support::redis_server server_;
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreBackendContract,
                         ::testing::Values(contract_store::rocksdb, contract_store::redis),
                         [](const ::testing::TestParamInfo<contract_store>& store) {
                           return store.param == contract_store::rocksdb ? "rocksdb" : "redis";
                         });

TEST_P(StoreBackendContract, CheckInsertPersistsAcrossReopen) {
  {
    auto b = open();
    ASSERT_TRUE(b->create(config_));
    EXPECT_TRUE(one(*b, doc_op::check_insert, "a", 0xF0F0, 1000).inserted);
    auto dup = one(*b, doc_op::check_insert, "b", 0xF0F7, 1000);  // distance 3
    EXPECT_FALSE(dup.inserted);
    ASSERT_EQ(dup.matches.size(), 1u);
    EXPECT_EQ(dup.matches[0].id, "a");
    EXPECT_EQ(dup.matches[0].distance, 3);
    EXPECT_TRUE(one(*b, doc_op::check_insert, "c", 0xF0FF, 1000).inserted);  // distance 4
  }
  auto b = open();
  auto all = b->collections();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(to_json((*all)[0]), to_json(config_));
  auto st = b->stats(config_);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->documents, 2u);
  auto hit = one(*b, doc_op::check, "q", 0xF0F3, 1000);  // distance 2 from both
  ASSERT_EQ(hit.matches.size(), 2u);
  EXPECT_EQ(hit.matches[0].id, "a");
  EXPECT_EQ(hit.matches[1].id, "c");
}

TEST_P(StoreBackendContract, CheckReportsWithoutInsertingAndInsertStoresWithoutReporting) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  const doc_outcome none = one(*b, doc_op::check, "q", 0xF0F0, 1000);
  EXPECT_FALSE(none.inserted);
  EXPECT_TRUE(none.matches.empty());
  EXPECT_EQ(b->stats(config_)->documents, 0u);
  // insert stores near duplicates too, and reports nothing.
  for (const auto& [id, fp] :
       {std::pair{"a", uint64_t{0xF0F0}}, {"b", uint64_t{0xF0F1}}, {"c", uint64_t{0xF0F3}}}) {
    const doc_outcome in = one(*b, doc_op::insert, id, fp, 1000);
    EXPECT_TRUE(in.inserted) << id;
    EXPECT_TRUE(in.matches.empty()) << id;
  }
  EXPECT_EQ(b->stats(config_)->documents, 3u);
  // check: closest first, then by id; within k (3) only; nothing stored.
  const doc_outcome hits = one(*b, doc_op::check, "q", 0xF0F1, 1000);
  EXPECT_FALSE(hits.inserted);
  ASSERT_EQ(hits.matches.size(), 3u);
  EXPECT_EQ(hits.matches[0].id, "b");
  EXPECT_EQ(hits.matches[0].distance, 0);
  EXPECT_EQ(hits.matches[1].id, "a");
  EXPECT_EQ(hits.matches[1].distance, 1);
  EXPECT_EQ(hits.matches[2].id, "c");
  EXPECT_EQ(hits.matches[2].distance, 1);
  EXPECT_TRUE(one(*b, doc_op::check, "q", 0x00F0, 1000).matches.empty());  // 4 from a, k + 1
  EXPECT_EQ(b->stats(config_)->documents, 3u);
  // At most the requested number of matches, the closest.
  doc_input q{"q", 0xF0F0, 1000};
  doc_outcome out;
  ASSERT_TRUE(
      b->apply(config_, doc_op::check_insert, std::span(&q, 1), 1000, 1, std::span(&out, 1)));
  EXPECT_FALSE(out.inserted);
  ASSERT_EQ(out.matches.size(), 1u);
  EXPECT_EQ(out.matches[0].id, "a");
  EXPECT_EQ(b->stats(config_)->documents, 3u);
  // Fingerprints alone are not verified: no Jaccard.
  EXPECT_FALSE(out.matches[0].jaccard);
}

TEST_P(StoreBackendContract, CreateRefusesOtherSettings) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(b->create(config_));
  collection_config other = config_;
  other.k = 2;
  auto st = b->create(other);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::invalid_argument);
  other.name = "bad name";
  EXPECT_FALSE(b->create(other));
}

TEST_P(StoreBackendContract, DeleteAndReplaceById) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  one(*b, doc_op::insert, "a", 1, 1000);
  one(*b, doc_op::insert, "a", ~uint64_t{0}, 1000);  // replaces
  EXPECT_TRUE(one(*b, doc_op::check, "q", 1, 1000).matches.empty());
  EXPECT_EQ(one(*b, doc_op::check, "q", ~uint64_t{0}, 1000).matches.size(), 1u);
  auto removed = b->remove(config_, "a");
  ASSERT_TRUE(removed);
  EXPECT_TRUE(*removed);
  removed = b->remove(config_, "a");
  ASSERT_TRUE(removed);
  EXPECT_FALSE(*removed);
  EXPECT_EQ(b->stats(config_)->documents, 0u);
  b.reset();
  b = open();
  EXPECT_EQ(b->stats(config_)->documents, 0u);
}

TEST_P(StoreBackendContract, LookupFindsTheStoredDocument) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  one(*b, doc_op::insert, "a", 0x0123456789ABCDEF, 1042);
  auto found = b->lookup(config_, "a");
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(b->wait_durable(found->ticket));
  ASSERT_TRUE(found->document);
  EXPECT_EQ(found->document->fingerprint, 0x0123456789ABCDEFu);
  EXPECT_EQ(found->document->time, 1042);
  auto missing = b->lookup(config_, "nobody");
  ASSERT_TRUE(missing) << missing.error().message;
  EXPECT_FALSE(missing->document);
}

// The totals count the collection's life: replacements are inserts, DELETE and the window
// count their removals, and all survive a reopen.
TEST_P(StoreBackendContract, StatsCountTheCollectionsLife) {
  {
    auto b = open();
    ASSERT_TRUE(b->create(config_));
    // Request times stay within the window of what is stored until expire(): Redis also
    // expires a bounded share on every request (redis_backend_test.cpp).
    one(*b, doc_op::insert, "a", 0x00FF, 1000);
    one(*b, doc_op::insert, "a", 0x00FF, 1010);  // a replacement, inserted again
    one(*b, doc_op::insert, "b", 0xFF00, 1000);
    ASSERT_TRUE(*b->remove(config_, "b"));
    one(*b, doc_op::insert, "c", 0xFF0000, 1100);
    EXPECT_FALSE(one(*b, doc_op::check_insert, "d", 0x00FE, 1000).inserted);  // a duplicate
    ASSERT_TRUE(b->expire(config_, 1150));  // a's time 1010 + window 100 <= 1150
    auto st = b->stats(config_);
    ASSERT_TRUE(st) << st.error().message;
    EXPECT_EQ(st->documents, 1u);
    EXPECT_EQ(st->inserted, 4u);
    EXPECT_EQ(st->deleted, 1u);
    EXPECT_EQ(st->expired, 1u);
  }
  auto b = open();
  auto st = b->stats(config_);
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->documents, 1u);
  EXPECT_EQ(st->inserted, 4u);
  EXPECT_EQ(st->deleted, 1u);
  EXPECT_EQ(st->expired, 1u);
}

// Live while time + window > the query's time; expire() removes the others, counted, for good.
TEST_P(StoreBackendContract, ExpireRemovesWhatLeftTheWindow) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  one(*b, doc_op::insert, "old", 0xAAAA, 1000);
  one(*b, doc_op::insert, "new", 0x5555, 1050);
  EXPECT_EQ(one(*b, doc_op::check, "q", 0xAAAA, 1099).matches.size(), 1u);
  ASSERT_TRUE(b->expire(config_, 1099));
  EXPECT_EQ(b->stats(config_)->documents, 2u);
  ASSERT_TRUE(b->expire(config_, 1100));
  auto st = b->stats(config_);
  EXPECT_EQ(st->documents, 1u);
  EXPECT_EQ(st->expired, 1u);
  EXPECT_TRUE(one(*b, doc_op::check, "q", 0xAAAA, 1100).matches.empty());
  EXPECT_EQ(one(*b, doc_op::check, "q", 0x5555, 1149).matches.size(), 1u);
  EXPECT_FALSE(b->lookup(config_, "old")->document);
  b.reset();
  b = open();
  EXPECT_EQ(b->stats(config_)->documents, 1u);
  // A collection with no window keeps everything.
  collection_config forever = config_;
  forever.name = "forever";
  forever.window_s = 0;
  ASSERT_TRUE(b->create(forever));
  test_support::apply_one(*b, forever, doc_op::insert, "x", 0xAAAA, 0);
  ASSERT_TRUE(b->expire(forever, int64_t{1} << 40));
  EXPECT_EQ(b->stats(forever)->documents, 1u);
  EXPECT_EQ(test_support::apply_one(*b, forever, doc_op::check, "q", 0xAAAA, int64_t{1} << 40)
                .matches.size(),
            1u);
}

TEST_P(StoreBackendContract, DropRemovesTheCollectionAndItsDocuments) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  collection_config other = config_;
  other.name = "other";
  ASSERT_TRUE(b->create(other));
  one(*b, doc_op::insert, "a", 0xF0F0, 1000);
  test_support::apply_one(*b, other, doc_op::insert, "a", 0xF0F0, 1000);
  ASSERT_TRUE(b->drop("c"));
  auto dropped = b->drop("c");
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().code, errc::not_found);
  auto all = b->collections();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "other");
  // Created again, it starts empty; the other collection kept its document.
  b.reset();
  b = open();
  ASSERT_TRUE(b->create(config_));
  EXPECT_EQ(b->stats(config_)->documents, 0u);
  EXPECT_TRUE(one(*b, doc_op::check, "q", 0xF0F0, 1000).matches.empty());
  EXPECT_EQ(b->stats(other)->documents, 1u);
}

// for_each_document (an export) sees each stored document once, as stored: its id, fingerprint,
// time and sketch; not a replaced or deleted one, nor another collection's.
TEST_P(StoreBackendContract, ForEachDocumentVisitsEveryStoredDocumentOnce) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  collection_config other = config_;
  other.name = "other";
  ASSERT_TRUE(b->create(other));
  test_support::apply_one(*b, other, doc_op::insert, "elsewhere", 1, 1000);
  struct doc {
    uint64_t fingerprint;
    int64_t time;
    std::vector<uint32_t> sketch;
  };
  std::map<std::string, doc> want;
  std::mt19937_64 rng(7);
  // Enough for several Redis SCAN pages and several RocksDB records; every seventh without a
  // sketch (sent as a fingerprint).
  std::vector<doc_input> batch;
  for (int i = 0; i < 2500; ++i) {
    std::string id = "d";  // appended: GCC 12's -Wrestrict misreads "d" + to_string at -O2
    id += std::to_string(i);
    doc_input d{std::move(id), rng(), 1000 + i % 50, {}};
    if (i % 7 != 0) d.sketch = {uint32_t(3 * i), uint32_t(3 * i + 1), uint32_t(3 * i + 2)};
    want[d.id] = {d.fingerprint, d.time, d.sketch};
    batch.push_back(std::move(d));
    if (batch.size() == 500) {
      std::vector<doc_outcome> out(batch.size());
      ASSERT_TRUE(b->apply(config_, doc_op::insert, batch, 1050, 10, out));
      batch.clear();
    }
  }
  one(*b, doc_op::insert, "d5", 0x5555, 1040);  // replaced: no sketch now
  want["d5"] = {0x5555, 1040, {}};
  ASSERT_TRUE(*b->remove(config_, "d6"));
  want.erase("d6");

  std::map<std::string, doc> got;
  std::size_t visits = 0;
  auto ticket = b->for_each_document(config_, [&](const document_view& d) {
    ++visits;
    got[std::string(d.id)] = {d.fingerprint, d.time, {d.sketch.begin(), d.sketch.end()}};
    return status{};
  });
  ASSERT_TRUE(ticket) << ticket.error().message;
  ASSERT_TRUE(b->wait_durable(*ticket));
  EXPECT_EQ(visits, want.size());
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, d] : want) {
    ASSERT_TRUE(got.contains(id)) << id;
    EXPECT_EQ(got[id].fingerprint, d.fingerprint) << id;
    EXPECT_EQ(got[id].time, d.time) << id;
    EXPECT_EQ(got[id].sketch, d.sketch) << id;
  }

  // The visitor's error ends the walk and is returned.
  visits = 0;
  auto stopped = b->for_each_document(config_, [&](const document_view&) {
    ++visits;
    return status(make_error(errc::no_space, "disk full"));
  });
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().code, errc::no_space);
  EXPECT_EQ(visits, 1u);
  collection_config missing = config_;
  missing.name = "missing";
  auto none = b->for_each_document(missing, [](const document_view&) { return status{}; });
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, errc::not_found);

  // RocksDB reads one snapshot: a document inserted during the walk is not in it.
  if (GetParam() == contract_store::rocksdb) {
    bool inserted = false;
    bool late_seen = false;
    auto walked = b->for_each_document(config_, [&](const document_view& d) {
      if (!inserted) {
        one(*b, doc_op::insert, "late", 0x1234, 1000);
        inserted = true;
      }
      late_seen = late_seen || d.id == "late";
      return status{};
    });
    ASSERT_TRUE(walked) << walked.error().message;
    EXPECT_TRUE(inserted);
    EXPECT_FALSE(late_seen);
  }
}

// A document deleted between another request's probe and its insert is not reported.
TEST_P(StoreBackendContract, DeletedDocumentIsNoLongerADuplicate) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(one(*b, doc_op::check_insert, "a", 0xF0F0, 10).inserted);
  ASSERT_TRUE(*b->remove(config_, "a"));
  const doc_outcome again = one(*b, doc_op::check_insert, "b", 0xF0F1, 10);
  EXPECT_TRUE(again.inserted);
  EXPECT_TRUE(again.matches.empty());
}

// Many threads racing check-insert on near-duplicates: exactly one wins per cluster.
TEST_P(StoreBackendContract, ConcurrentCheckInsertIsAtomic) {
  auto b = open();
  config_.window_s = 0;
  ASSERT_TRUE(b->create(config_));
  constexpr int clusters = 16, threads = 4, per_thread = 8;
  std::atomic<int> inserted[clusters] = {};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < per_thread; ++i) {
        for (int c = 0; c < clusters; ++c) {
          // Cluster centres differ in whole bytes (>= 8 bits); variants flip one bit.
          const uint64_t byte = uint64_t{0xFF} << (c % 8 * 8);
          const uint64_t centre = c < 8 ? byte : ~byte;
          const uint64_t fp = centre ^ (uint64_t{1} << (rng() % 64));
          doc_input in{thread_doc_id(t, {i, c}), fp, 0};
          doc_outcome out;
          ASSERT_TRUE(b->apply(config_, doc_op::check_insert, std::span(&in, 1), 0, 10,
                               std::span(&out, 1)));
          if (out.inserted) ++inserted[c];
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int c = 0; c < clusters; ++c) EXPECT_EQ(inserted[c].load(), 1) << c;
}

// Batches probe without the collection lock and re-check under it: racing batches, each holding
// two variants of every cluster, still leave exactly one document per cluster, and a batch
// sees its own earlier documents.
TEST_P(StoreBackendContract, ConcurrentBatchCheckInsertIsAtomic) {
  auto b = open();
  config_.window_s = 0;
  ASSERT_TRUE(b->create(config_));
  constexpr int clusters = 16, threads = 4, rounds = 6;
  std::atomic<int> inserted[clusters] = {};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      for (int r = 0; r < rounds; ++r) {
        std::vector<doc_input> batch;
        for (int v = 0; v < 2; ++v) {
          for (int c = 0; c < clusters; ++c) {
            const uint64_t byte = uint64_t{0xFF} << (c % 8 * 8);
            const uint64_t centre = c < 8 ? byte : ~byte;
            batch.push_back(
                {thread_doc_id(t, {r, v, c}), centre ^ (uint64_t{1} << (rng() % 64)), 0});
          }
        }
        std::vector<doc_outcome> out(batch.size());
        ASSERT_TRUE(b->apply(config_, doc_op::check_insert, batch, 0, 10, out));
        for (std::size_t i = 0; i < batch.size(); ++i) {
          if (out[i].inserted) ++inserted[i % clusters];
          // The second variant always finds at least the first (distance <= 2).
          if (i >= clusters) {
            EXPECT_FALSE(out[i].inserted) << i;
          }
          if (!out[i].inserted) {
            EXPECT_FALSE(out[i].matches.empty()) << i;
          }
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  for (int c = 0; c < clusters; ++c) EXPECT_EQ(inserted[c].load(), 1) << c;
  EXPECT_EQ(b->stats(config_)->documents, static_cast<uint64_t>(clusters));
}

// Ids are looked up before the collection lock and re-checked under it: batches racing to
// (re)insert the same ids leave exactly one document per id, the one written last.
TEST_P(StoreBackendContract, ConcurrentInsertsOfTheSameIdsKeepOneDocumentEach) {
  auto b = open();
  config_.window_s = 0;
  ASSERT_TRUE(b->create(config_));
  constexpr int ids = 32, threads = 4, rounds = 5;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        std::vector<doc_input> batch;
        for (int i = 0; i < ids; ++i) {
          // Fingerprints of one writer and round: far from all others (distinct high bytes).
          const uint64_t fp = (uint64_t(t * rounds + r + 1) << 56) | (uint64_t(i) << 8);
          batch.push_back({"id" + std::to_string(i), fp, 0});
        }
        std::vector<doc_outcome> out(batch.size());
        ASSERT_TRUE(b->apply(config_, doc_op::insert, batch, 0, 10, out));
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(b->stats(config_)->documents, static_cast<uint64_t>(ids));
  // Every id is findable under exactly one fingerprint: count matches of each id over all the
  // fingerprints ever sent for it.
  for (int i = 0; i < ids; ++i) {
    int found = 0;
    for (int w = 1; w <= threads * rounds; ++w) {
      doc_input q{"q", (uint64_t(w) << 56) | (uint64_t(i) << 8), 0};
      doc_outcome out;
      ASSERT_TRUE(b->apply(config_, doc_op::check, std::span(&q, 1), 0, 10, std::span(&out, 1)));
      for (const auto& m : out.matches)
        found += m.distance == 0 && m.id == "id" + std::to_string(i);
    }
    EXPECT_EQ(found, 1) << i;
  }
  b.reset();
  b = open();
  EXPECT_EQ(b->stats(config_)->documents, static_cast<uint64_t>(ids));
}

}  // namespace
}  // namespace simdup::detail
