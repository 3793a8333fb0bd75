// Verification in the RocksDB store: a candidate within k is a duplicate only when the Jaccard
// of the two documents' sketches reaches the collection's threshold; sketches are kept in the
// records, so the decision is the same after a restart; a store of format 4 (no sketches, no
// verify setting) opens with its settings as they were.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <simdup/verify.hpp>

#include <span>
#include <string>
#include <vector>

#include "store/backend.hpp"
#include "store/rocks_keys.hpp"
#include "support/rocks_store_test.hpp"

namespace simdup::detail {
namespace {

/// The sketch size of a new collection.
const std::size_t kSketch = static_cast<std::size_t>(collection_config{}.sketch);

/// The sketch the service keeps of a (normalised) text.
std::vector<uint32_t> sketch_of(std::string_view text) {
  std::vector<uint32_t> out;
  shingle_hashes(text, 5, kSketch, out);
  return out;
}

constexpr std::string_view original =
    "the central bank raised its main interest rate by half a point on tuesday";
constexpr std::string_view edited =
    "the central bank raised its main interest rate by half a point on tuesday morning";
constexpr std::string_view unrelated =
    "a storm closed the mountain roads and schools stayed shut for the whole week";

class RocksVerify : public test_support::rocks_store_test {
 protected:
  void SetUp() override {
    rocks_store_test::SetUp();
    config_.k = 8;
    config_.verify = 0.8;
  }

  doc_outcome apply(backend& b, doc_op op, std::string id, uint64_t fp, std::string_view text) {
    doc_input in{std::move(id), fp, 1000, text.empty() ? std::vector<uint32_t>{} : sketch_of(text)};
    doc_outcome out;
    auto st = b.apply(config_, op, std::span(&in, 1), 1000, 10, std::span(&out, 1));
    EXPECT_TRUE(st) << st.error().message;
    return out;
  }
};

TEST_F(RocksVerify, CandidatesWithinKAreDuplicatesOnlyAboveTheThreshold) {
  const double expected = sketch_jaccard(sketch_of(original), sketch_of(edited), kSketch);
  ASSERT_GE(expected, 0.8);
  ASSERT_LT(sketch_jaccard(sketch_of(original), sketch_of(unrelated), kSketch), 0.8);
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    EXPECT_TRUE(apply(*b, doc_op::check_insert, "a", 0xF0F0, original).inserted);
    // Within k (distance 2) but another text: new.
    auto o = apply(*b, doc_op::check_insert, "u", 0xF0F3, unrelated);
    EXPECT_TRUE(o.inserted);
    EXPECT_TRUE(o.matches.empty());
    // Within k and a light edit: a duplicate of a (u is rejected), with the Jaccard.
    o = apply(*b, doc_op::check_insert, "e", 0xF0F1, edited);
    EXPECT_FALSE(o.inserted);
    ASSERT_EQ(o.matches.size(), 1u);
    EXPECT_EQ(o.matches[0].id, "a");
    EXPECT_EQ(o.matches[0].distance, 1);
    ASSERT_TRUE(o.matches[0].jaccard);
    EXPECT_DOUBLE_EQ(*o.matches[0].jaccard, expected);
    // Sent as a fingerprint: no sketch, so the distance alone decides (a and u), unverified.
    o = apply(*b, doc_op::check, "q", 0xF0F0, "");
    ASSERT_EQ(o.matches.size(), 2u);
    EXPECT_FALSE(o.matches[0].jaccard);
    EXPECT_FALSE(o.matches[1].jaccard);
  }
  // After a restart the sketches come from the records: the same answers.
  auto b = open(dir_);
  auto o = apply(*b, doc_op::check, "e2", 0xF0F1, edited);
  ASSERT_EQ(o.matches.size(), 1u);
  EXPECT_EQ(o.matches[0].id, "a");
  ASSERT_TRUE(o.matches[0].jaccard);
  EXPECT_DOUBLE_EQ(*o.matches[0].jaccard, expected);
  // A document stored without a sketch is matched by distance, unverified.
  EXPECT_TRUE(apply(*b, doc_op::insert, "f", 0x0F00000000000000, "").inserted);
  o = apply(*b, doc_op::check, "g", 0x0F00000000000001, unrelated);
  ASSERT_EQ(o.matches.size(), 1u);
  EXPECT_EQ(o.matches[0].id, "f");
  EXPECT_FALSE(o.matches[0].jaccard);
}

TEST_F(RocksVerify, OneRequestVerifiesAgainstItsOwnEarlierDocuments) {
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  std::vector<doc_input> docs = {{"a", 0xF0F0, 1000, sketch_of(original)},
                                 {"u", 0xF0F3, 1000, sketch_of(unrelated)},
                                 {"e", 0xF0F1, 1000, sketch_of(edited)}};
  std::vector<doc_outcome> out(docs.size());
  ASSERT_TRUE(b->apply(config_, doc_op::check_insert, docs, 1000, 10, out));
  EXPECT_TRUE(out[0].inserted);
  EXPECT_TRUE(out[1].inserted);
  EXPECT_FALSE(out[2].inserted);
  ASSERT_EQ(out[2].matches.size(), 1u);
  EXPECT_EQ(out[2].matches[0].id, "a");
  EXPECT_TRUE(out[2].matches[0].jaccard);
}

TEST_F(RocksVerify, OffDecidesByDistanceAndReportsNoJaccard) {
  config_.verify = 0;
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(apply(*b, doc_op::check_insert, "a", 0xF0F0, original).inserted);
  auto o = apply(*b, doc_op::check_insert, "u", 0xF0F3, unrelated);
  EXPECT_FALSE(o.inserted);
  ASSERT_EQ(o.matches.size(), 1u);
  EXPECT_FALSE(o.matches[0].jaccard);
}

// A format 4 store, as the previous release wrote it: the format key "4", settings without
// "verify", records without sketches. It opens (and is marked format 5), keeps its settings
// (no verification, its own k) and its documents.
TEST_F(RocksVerify, StoreOfFormat4OpensWithItsSettings) {
  config_.k = 3;
  config_.verify = 0;
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    EXPECT_TRUE(apply(*b, doc_op::insert, "old", 0xABCD, "").inserted);
  }
  with_raw_db([](rocksdb::DB& db) {
    ASSERT_TRUE(db.Put(rocksdb::WriteOptions(), "f", "4").ok());
    // The settings exactly as format 4 builds wrote them.
    ASSERT_TRUE(db.Put(rocksdb::WriteOptions(), rocks_keys::single('c', "c"),
                       R"({"name":"c","k":3,"window_s":0,"compat":"none","shingle_width":4,)"
                       R"("features":"shingles","top_k":0})")
                    .ok());
  });
  {
    auto b = open(dir_);
    ASSERT_TRUE(b);
    auto all = b->collections();
    ASSERT_TRUE(all);
    ASSERT_EQ(all->size(), 1u);
    EXPECT_EQ((*all)[0].k, 3);
    EXPECT_EQ((*all)[0].verify, 0);
    EXPECT_EQ(ids_at(*b, 0xABCD), std::vector<std::string>{"old"});
  }
  with_raw_db([](rocksdb::DB& db) {
    std::string format;
    ASSERT_TRUE(db.Get(rocksdb::ReadOptions(), "f", &format).ok());
    EXPECT_EQ(format, rocks_keys::format_version);
  });
}

}  // namespace
}  // namespace simdup::detail
