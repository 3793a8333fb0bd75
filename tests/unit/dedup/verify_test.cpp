#include <simdup/verify.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

namespace simdup {
namespace {

std::vector<uint32_t> shingles(std::string_view text, std::size_t width, std::size_t cap = 0) {
  std::vector<uint32_t> out;
  shingle_hashes(text, width, cap, out);
  return out;
}

TEST(ParseVerifySpec, AcceptsJaccardThresholds) {
  auto v = parse_verify_spec("jaccard:0.8");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->threshold, 0.8);
  EXPECT_EQ(v->shingle_width, 5u);
  ASSERT_TRUE(parse_verify_spec("jaccard:1"));
  for (const char* bad : {"jaccard:0", "jaccard:1.5", "jaccard:", "jaccard:x", "cosine:0.5",
                          "jaccard:0.5x", "jaccard:-0.1", "jaccard:nan"}) {
    const auto r = parse_verify_spec(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, errc::invalid_argument);
    EXPECT_NE(r.error().message.find("--verify"), std::string::npos);
  }
}

TEST(ShingleHashes, CountsDistinctCodePointShingles) {
  // abc bca cab abc: three distinct 3-shingles.
  EXPECT_EQ(shingles("abcabc", 3).size(), 3u);
  // Code points, not bytes: five CJK characters have three 3-shingles.
  EXPECT_EQ(shingles("中文字符串", 3).size(), 3u);
  // Shorter than the width: the whole text is one shingle.
  EXPECT_EQ(shingles("ab", 5).size(), 1u);
  EXPECT_EQ(shingles("ab", 5), shingles("ab", 2));
  EXPECT_TRUE(shingles("", 5).empty());
  const auto s = shingles("the quick brown fox jumps", 5);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::adjacent_find(s.begin(), s.end()), s.end());
}

TEST(ShingleHashes, CapKeepsTheSmallestHashes) {
  const auto all = shingles("the quick brown fox jumps over the lazy dog", 5);
  const auto cut = shingles("the quick brown fox jumps over the lazy dog", 5, 10);
  ASSERT_EQ(cut.size(), 10u);
  EXPECT_TRUE(std::equal(cut.begin(), cut.end(), all.begin()));
}

TEST(SketchJaccard, ExactOnSmallSets) {
  const std::vector<uint32_t> a{1, 2, 3}, b{2, 3, 4}, empty;
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, b, 0), 0.5);
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, a, 0), 1.0);
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, empty, 0), 0.0);
  EXPECT_DOUBLE_EQ(sketch_jaccard(empty, empty, 0), 0.0);
  // Under the cap the arrays are whole sets: still exact.
  EXPECT_DOUBLE_EQ(sketch_jaccard(a, b, 8), 0.5);
}

TEST(SketchJaccard, ExactOnTextShingles) {
  // abcde bcdef cdefg defgh vs abcde bcdef cdefg defgx: 3 shared of 5.
  EXPECT_DOUBLE_EQ(sketch_jaccard(shingles("abcdefgh", 5), shingles("abcdefgx", 5), 0), 0.6);
}

TEST(SketchJaccard, BottomKEstimateIsCloseAndUsesOnlyComparableHashes) {
  std::mt19937 rng(11);
  std::set<uint32_t> shared, only_a, only_b;
  while (shared.size() < 3000) shared.insert(rng());
  while (only_a.size() < 500) only_a.insert(rng());
  while (only_b.size() < 500) only_b.insert(rng());
  std::vector<uint32_t> a(shared.begin(), shared.end()), b = a;
  a.insert(a.end(), only_a.begin(), only_a.end());
  b.insert(b.end(), only_b.begin(), only_b.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  const double exact = sketch_jaccard(a, b, 0);
  EXPECT_NEAR(exact, 3000.0 / 4000.0, 0.01);
  std::vector<uint32_t> ca(a.begin(), a.begin() + 256), cb(b.begin(), b.begin() + 256);
  EXPECT_NEAR(sketch_jaccard(ca, cb, 256), exact, 0.1);
  // A full small set against a cut large one: only hashes below the cut are compared.
  const std::vector<uint32_t> small{a[0], a[1]};
  EXPECT_DOUBLE_EQ(sketch_jaccard(small, ca, 256), 2.0 / 256.0);
}

TEST(ShingleStore, StoresArraysByOrdinalWithGaps) {
  shingle_store store;
  const std::vector<uint32_t> a{1, 2, 3}, c{2, 3, 4};
  store.put(0, a);
  store.put(2, c);
  EXPECT_EQ(store.get(0).size(), 3u);
  EXPECT_TRUE(store.get(1).empty());
  EXPECT_EQ(store.get(2).size(), 3u);
  EXPECT_TRUE(store.get(99).empty());
  EXPECT_DOUBLE_EQ(store.jaccard(0, 2), 0.5);
  EXPECT_GT(store.memory_bytes(), 0u);
}

}  // namespace
}  // namespace simdup
