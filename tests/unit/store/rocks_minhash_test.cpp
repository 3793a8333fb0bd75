// MinHash bands in the RocksDB store: a verified copy whose fingerprint is far beyond k is found
// through a shared band, in the same request and after a restart (the band index is rebuilt from
// the records); deleting or replacing a document takes its bands away; a collection without
// bands finds only what is within k.
#include <gtest/gtest.h>

#include <simdup/minhash.hpp>
#include <simdup/verify.hpp>

#include <span>
#include <string>
#include <vector>

#include "store/backend.hpp"
#include "support/rocks_store_test.hpp"

namespace simdup::detail {
namespace {

constexpr std::string_view original =
    "the central bank raised its main interest rate by half a point on tuesday, its first "
    "increase in two years, and said more rises may follow if prices keep climbing";
constexpr std::string_view edited =
    "the central bank raised its main interest rate by half a point on tuesday, its first "
    "increase in two years, and said further rises may follow if prices keep climbing (via ap)";
constexpr std::string_view unrelated =
    "a storm closed the mountain roads and schools stayed shut for the whole week while crews "
    "cleared fallen trees from the railway line";

// Fingerprints 40 bits apart: only a band can bring the two together.
constexpr uint64_t kNear = 0x0000000000000000ull;
constexpr uint64_t kFar = 0x000000FFFFFFFFFFull;

class RocksMinhash : public test_support::rocks_store_test {
 protected:
  void SetUp() override {
    rocks_store_test::SetUp();
    config_.k = 3;
    config_.verify = 0.8;
  }

  doc_input input(std::string id, uint64_t fp, std::string_view text) const {
    doc_input in{std::move(id), fp, 1000, {}, {}};
    std::vector<uint32_t> all;
    shingle_hashes(text, 5, 0, all);
    minhash_band_keys(all, config_.minhash, in.band_keys);
    const auto cut = std::min(all.size(), static_cast<std::size_t>(config_.sketch));
    in.sketch.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(cut));
    return in;
  }

  doc_outcome apply(backend& b, doc_op op, std::string id, uint64_t fp, std::string_view text) {
    doc_input in = input(std::move(id), fp, text);
    doc_outcome out;
    auto st = b.apply(config_, op, std::span(&in, 1), 1000, 10, std::span(&out, 1));
    EXPECT_TRUE(st) << st.error().message;
    return out;
  }
};

TEST_F(RocksMinhash, AVerifiedCopyBeyondKIsFoundThroughABand) {
  std::vector<uint32_t> a, e;
  shingle_hashes(original, 5, 0, a);
  shingle_hashes(edited, 5, 0, e);
  const double jaccard = sketch_jaccard(a, e, 0);
  ASSERT_GE(jaccard, 0.8);
  {
    auto b = open(dir_);
    ASSERT_TRUE(b->create(config_));
    EXPECT_TRUE(apply(*b, doc_op::check_insert, "a", kNear, original).inserted);
    // Unrelated and as far: new.
    EXPECT_TRUE(apply(*b, doc_op::check, "u", kFar, unrelated).matches.empty());
    auto o = apply(*b, doc_op::check_insert, "e", kFar, edited);
    EXPECT_FALSE(o.inserted);
    ASSERT_EQ(o.matches.size(), 1u);
    EXPECT_EQ(o.matches[0].id, "a");
    EXPECT_EQ(o.matches[0].distance, 40);
    ASSERT_TRUE(o.matches[0].jaccard);
    EXPECT_DOUBLE_EQ(*o.matches[0].jaccard, jaccard);
  }
  // After a restart the bands come back from the records.
  auto b = open(dir_);
  auto o = apply(*b, doc_op::check, "e2", kFar, edited);
  ASSERT_EQ(o.matches.size(), 1u);
  EXPECT_EQ(o.matches[0].id, "a");
  EXPECT_EQ(o.matches[0].distance, 40);
}

TEST_F(RocksMinhash, WithoutBandsOnlyDistanceFindsCandidates) {
  config_.minhash = minhash_options{};
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(apply(*b, doc_op::check_insert, "a", kNear, original).inserted);
  EXPECT_TRUE(apply(*b, doc_op::check_insert, "e", kFar, edited).inserted);
}

TEST_F(RocksMinhash, OneRequestFindsItsOwnEarlierDocumentsThroughBands) {
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  std::vector<doc_input> docs = {input("a", kNear, original), input("u", kFar + 1, unrelated),
                                 input("e", kFar, edited)};
  std::vector<doc_outcome> out(docs.size());
  ASSERT_TRUE(b->apply(config_, doc_op::check_insert, docs, 1000, 10, out));
  EXPECT_TRUE(out[0].inserted);
  EXPECT_TRUE(out[1].inserted);
  EXPECT_FALSE(out[2].inserted);
  ASSERT_EQ(out[2].matches.size(), 1u);
  EXPECT_EQ(out[2].matches[0].id, "a");
}

TEST_F(RocksMinhash, DeletedAndReplacedDocumentsLeaveTheirBands) {
  auto b = open(dir_);
  ASSERT_TRUE(b->create(config_));
  EXPECT_TRUE(apply(*b, doc_op::insert, "a", kNear, original).inserted);
  ASSERT_EQ(apply(*b, doc_op::check, "q", kFar, edited).matches.size(), 1u);
  auto removed = b->remove(config_, "a");
  ASSERT_TRUE(removed);
  EXPECT_TRUE(*removed);
  EXPECT_TRUE(apply(*b, doc_op::check, "q", kFar, edited).matches.empty());
  // The id again, then replaced by another text: its old bands are gone with it.
  EXPECT_TRUE(apply(*b, doc_op::insert, "a", kNear, original).inserted);
  EXPECT_TRUE(apply(*b, doc_op::insert, "a", kNear, unrelated).inserted);
  EXPECT_TRUE(apply(*b, doc_op::check, "q", kFar, edited).matches.empty());
  EXPECT_EQ(documents(*b), 1u);
}

}  // namespace
}  // namespace simdup::detail
