// The RocksDB backend keeps one record per request (rocks_keys.hpp) and an in-memory id map:
// documents replaced or deleted out of a shared record, ids whose hashes share the map's tag,
// and records that expire by their newest document, before and after a restart.
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "store/backend.hpp"
#include "store/id_map.hpp"
#include "store/rocks_keys.hpp"
#include "support/rocks_store_test.hpp"

namespace simdup::detail {
namespace {

class RocksRecords : public test_support::rocks_store_test {
 protected:
  void insert_batch(backend& b, std::vector<doc_input> docs) {
    std::vector<doc_outcome> out(docs.size());
    auto st = b.apply(config_, doc_op::insert, docs, 1000, 10, out);
    ASSERT_TRUE(st) << st.error().message;
  }
};

using ids = std::vector<std::string>;

TEST_F(RocksRecords, ReplacedAndDeletedDocumentsLeaveTheirRecord) {
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  insert_batch(*b,
               {{"a", fp(0), 1000}, {"b", fp(1), 1000}, {"c", fp(2), 1000}, {"d", fp(3), 1000}});
  // Replace b (out of the first record) and delete d, in requests of their own.
  insert_batch(*b, {{"b", fp(4), 1000}, {"e", fp(5), 1000}});
  ASSERT_TRUE(*b->remove(config_, "d"));
  // Then the rest of the first record: the record goes when its last document does.
  ASSERT_TRUE(*b->remove(config_, "a"));
  insert_batch(*b, {{"c", fp(6), 1000}});
  const auto expect_state = [&](backend& s) {
    EXPECT_EQ(ids_at(s, fp(0)), ids{});
    EXPECT_EQ(ids_at(s, fp(1)), ids{});
    EXPECT_EQ(ids_at(s, fp(2)), ids{});
    EXPECT_EQ(ids_at(s, fp(3)), ids{});
    EXPECT_EQ(ids_at(s, fp(4)), ids{"b"});
    EXPECT_EQ(ids_at(s, fp(5)), ids{"e"});
    EXPECT_EQ(ids_at(s, fp(6)), ids{"c"});
    EXPECT_EQ(documents(s), 3u);
    EXPECT_FALSE(*s.remove(config_, "d"));
  };
  expect_state(*b);
  copy_as_crashed();
  b.reset();
  auto loaded = open(dir_);  // the segment file saved at close
  expect_state(*loaded);
  auto rebuilt = open(crashed());  // no file: rebuilt from the records
  expect_state(*rebuilt);
}

TEST_F(RocksRecords, IdsWhoseHashesShareATagStayApart) {
  // Two ids whose hashes agree in the top 36 bits (the id map's shard and tag): the map cannot
  // tell them apart, the stored records must.
  std::unordered_map<uint64_t, std::string> seen;
  std::string first, second;
  for (int i = 0; second.empty(); ++i) {
    std::string id = "id" + std::to_string(i);
    auto [it, added] = seen.emplace(id_map::hash(id) >> 28, id);
    if (!added) {
      first = it->second;
      second = id;
    }
  }
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  insert_batch(*b, {{first, fp(0), 1000}});
  insert_batch(*b, {{second, fp(1), 1000}});
  EXPECT_EQ(documents(*b), 2u);
  EXPECT_EQ(ids_at(*b, fp(0)), ids{first});
  EXPECT_EQ(ids_at(*b, fp(1)), ids{second});
  // Replacing one replaces only that one.
  insert_batch(*b, {{second, fp(2), 1000}});
  EXPECT_EQ(ids_at(*b, fp(0)), ids{first});
  EXPECT_EQ(ids_at(*b, fp(1)), ids{});
  EXPECT_EQ(documents(*b), 2u);
  ASSERT_TRUE(*b->remove(config_, first));
  EXPECT_FALSE(*b->remove(config_, first));
  b.reset();
  b = open(dir_);
  EXPECT_EQ(ids_at(*b, fp(0)), ids{});
  EXPECT_EQ(ids_at(*b, fp(2)), ids{second});
  EXPECT_EQ(documents(*b), 1u);
}

TEST_F(RocksRecords, ARecordExpiresWithItsNewestDocument) {
  config_.window_s = 100;
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  std::vector<doc_input> docs = {{"old", fp(0), 1000}, {"new", fp(1), 1050}};
  std::vector<doc_outcome> out(2);
  ASSERT_TRUE(b->apply(config_, doc_op::insert, docs, 1050, 10, out));
  // Queries follow each document's own time at once; the store drops the record only once
  // all of it is out of the window.
  EXPECT_EQ(ids_at(*b, fp(0), 1100), ids{});
  ASSERT_TRUE(b->expire(config_, 1100));
  EXPECT_EQ(documents(*b), 2u);
  ASSERT_TRUE(b->expire(config_, 1150));
  EXPECT_EQ(documents(*b), 0u);
  EXPECT_EQ(b->stats(config_)->expired, 2u);
  // An expired id is new again, not a replacement.
  const auto again = one(*b, doc_op::insert, "old", fp(2), 1200);
  EXPECT_TRUE(again.inserted);
  EXPECT_EQ(documents(*b), 1u);
  b.reset();
  b = open(dir_);
  EXPECT_EQ(documents(*b), 1u);
  EXPECT_EQ(ids_at(*b, fp(2), 1200), ids{"old"});
}

TEST(RocksRecordEncoding, RoundTripsAndRefusesTruncatedRecords) {
  using rocks_keys::stored_doc;
  std::string record;
  rocks_keys::append_doc(record, {7, 0x1234, -5, "first"});
  rocks_keys::append_doc(record, {9, ~uint64_t{0}, 1700000000, ""});
  std::vector<stored_doc> docs;
  ASSERT_TRUE(rocks_keys::decode_record(record, docs));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].num, 7u);
  EXPECT_EQ(docs[0].fingerprint, 0x1234u);
  EXPECT_EQ(docs[0].time, -5);
  EXPECT_EQ(docs[0].id, "first");
  EXPECT_EQ(docs[1].num, 9u);
  EXPECT_EQ(docs[1].fingerprint, ~uint64_t{0});
  EXPECT_EQ(docs[1].id, "");
  // 28 bytes of fields plus the id, per document.
  EXPECT_EQ(record.size(), 28u + 5 + 28);
  for (std::size_t n = 1; n < record.size(); ++n) {
    if (n == 33) continue;  // exactly the first document
    EXPECT_FALSE(rocks_keys::decode_record(std::string_view(record).substr(0, n), docs)) << n;
  }
  EXPECT_TRUE(rocks_keys::decode_record("", docs));
  EXPECT_TRUE(docs.empty());
}

// Format 5: a document may carry its verification sketch after the id (flagged in the id's
// length); documents without one are encoded exactly as format 4 encoded them.
TEST(RocksRecordEncoding, SketchesRoundTripBesideDocumentsWithout) {
  using rocks_keys::stored_doc;
  const std::vector<uint32_t> hashes = {3, 70000, 0xFFFFFFFFu};
  const std::string sketch(rocks_keys::stored_bytes(std::span<const uint32_t>(hashes)));
  EXPECT_EQ(sketch.size(), 12u);
  std::string record;
  rocks_keys::append_doc(record, {7, 0x1234, -5, "with", sketch});
  rocks_keys::append_doc(record, {9, 0x99, 8, "without"});
  // 28 bytes of fields and the id, then 2 bytes of count and 4 per hash; the second as format 4.
  EXPECT_EQ(record.size(), 28u + 4 + 2 + 12 + 28 + 7);
  std::vector<stored_doc> docs;
  ASSERT_TRUE(rocks_keys::decode_record(record, docs));
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].id, "with");
  std::vector<uint32_t> back;
  rocks_keys::decode_sketch(docs[0].sketch, back);
  EXPECT_EQ(back, hashes);
  EXPECT_EQ(docs[1].id, "without");
  EXPECT_TRUE(docs[1].sketch.empty());
  // Rewriting a record (a document deleted out of it) keeps the others' sketches.
  std::string rewritten;
  rocks_keys::append_doc(rewritten, docs[0]);
  EXPECT_EQ(rewritten, record.substr(0, 28 + 4 + 2 + 12));
  const std::string format4 = record.substr(28 + 4 + 2 + 12);
  std::string expected4;
  rocks_keys::append_doc(expected4, {9, 0x99, 8, "without"});
  EXPECT_EQ(format4, expected4);
  for (std::size_t n = 1; n < 28 + 4 + 2 + 12; ++n) {
    EXPECT_FALSE(rocks_keys::decode_record(std::string_view(record).substr(0, n), docs)) << n;
  }
}

}  // namespace
}  // namespace simdup::detail
