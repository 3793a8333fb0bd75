#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "store/backend.hpp"
#include "support/rocks_store_test.hpp"

namespace simdup::detail {
namespace {

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

class RocksBackend : public test_support::rocks_store_test {
 protected:
  void SetUp() override {
    rocks_store_test::SetUp();
    config_.window_s = 100;
  }

  /// With the default options (segment files by count and age, too).
  std::unique_ptr<backend> open() {
    auto b = open_rocks_backend(dir_.string());
    EXPECT_TRUE(b) << b.error().message;
    return b ? std::move(*b) : nullptr;
  }
};

TEST_F(RocksBackend, AnswersAboutUnsyncedDocumentsWaitForTheirSync) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  const auto pending = [&](doc_op op, std::string id, uint64_t fp) {
    doc_input in{std::move(id), fp, 1000};
    doc_outcome out;
    auto t = b->apply_pending(config_, op, std::span(&in, 1), 1000, 10, std::span(&out, 1));
    EXPECT_TRUE(t) << t.error().message;
    return std::make_pair(t ? *t : 0, out);
  };
  // Not waited for: the insert of "a" may still be in the WAL buffer only.
  const auto [inserted, a] = pending(doc_op::check_insert, "a", 0xF0F0);
  ASSERT_TRUE(a.inserted);
  ASSERT_GT(inserted, 0u);
  // Every answer that reports "a" carries a ticket that covers a's write.
  const auto [dup_ticket, dup] = pending(doc_op::check_insert, "b", 0xF0F1);
  EXPECT_FALSE(dup.inserted);
  ASSERT_EQ(dup.matches.size(), 1u);
  EXPECT_GE(dup_ticket, inserted);
  const auto [check_ticket, check] = pending(doc_op::check, "q", 0xF0F3);
  ASSERT_EQ(check.matches.size(), 1u);
  EXPECT_GE(check_ticket, inserted);
  // A check that finds nothing reports nothing unsynced.
  EXPECT_EQ(pending(doc_op::check, "far", ~uint64_t{0xF0F0}).first, 0u);
  // Removals: found, and not found (perhaps because of a removal not synced yet).
  auto removed = b->remove_pending(config_, "a");
  ASSERT_TRUE(removed && removed->removed);
  EXPECT_GT(removed->ticket, inserted);
  auto missing = b->remove_pending(config_, "a");
  ASSERT_TRUE(missing && !missing->removed);
  EXPECT_GE(missing->ticket, removed->ticket);
  EXPECT_TRUE(b->wait_durable(missing->ticket));
}

TEST_F(RocksBackend, CheckInsertPersistsAcrossReopen) {
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

TEST_F(RocksBackend, CreateRefusesOtherSettings) {
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

TEST_F(RocksBackend, DeleteAndReplaceById) {
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

TEST_F(RocksBackend, ExpiryFollowsTheWindow) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  one(*b, doc_op::insert, "old", 0xAAAA, 1000);
  one(*b, doc_op::insert, "new", 0x5555, 1050);
  // Live while time + window > the query's time, before any expiry runs.
  EXPECT_EQ(one(*b, doc_op::check, "q", 0xAAAA, 1099).matches.size(), 1u);
  EXPECT_TRUE(one(*b, doc_op::check, "q", 0xAAAA, 1100).matches.empty());
  ASSERT_TRUE(b->expire(config_, 1099));
  EXPECT_EQ(b->stats(config_)->documents, 2u);
  ASSERT_TRUE(b->expire(config_, 1100));
  auto st = b->stats(config_);
  EXPECT_EQ(st->documents, 1u);
  EXPECT_EQ(st->expired, 1u);
  b.reset();
  b = open();
  EXPECT_EQ(b->stats(config_)->documents, 1u);
}

// Many threads racing check-insert on near-duplicates: exactly one wins per cluster.
TEST_F(RocksBackend, ConcurrentCheckInsertIsAtomic) {
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
TEST_F(RocksBackend, ConcurrentBatchCheckInsertIsAtomic) {
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
TEST_F(RocksBackend, ConcurrentInsertsOfTheSameIdsKeepOneDocumentEach) {
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

// A document deleted between another request's probe and its insert is not reported.
TEST_F(RocksBackend, DeletedDocumentIsNoLongerADuplicate) {
  auto b = open();
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(one(*b, doc_op::check_insert, "a", 0xF0F0, 10).inserted);
  ASSERT_TRUE(*b->remove(config_, "a"));
  const doc_outcome again = one(*b, doc_op::check_insert, "b", 0xF0F1, 10);
  EXPECT_TRUE(again.inserted);
  EXPECT_TRUE(again.matches.empty());
}

}  // namespace
}  // namespace simdup::detail
