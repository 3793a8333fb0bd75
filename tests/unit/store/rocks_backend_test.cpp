// The RocksDB backend where it differs from the others: durability tickets, and expiry only
// when expire() runs. What every backend promises is backend_contract_test.cpp, run on this
// one too.
#include <gtest/gtest.h>

#include "store/backend.hpp"
#include "support/rocks_store_test.hpp"

namespace simdup::detail {
namespace {

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

}  // namespace
}  // namespace simdup::detail
