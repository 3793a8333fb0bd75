#include "dedup/candidate_filter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace simdup::detail {
namespace {

// Two sorted sets of uniform hashes with `shared` in common and `only` more each: Jaccard
// shared / (shared + 2 only).
std::pair<std::vector<uint32_t>, std::vector<uint32_t>> sets(std::size_t shared, std::size_t only,
                                                             std::mt19937& rng) {
  std::vector<uint32_t> a, b;
  for (std::size_t i = 0; i < shared; ++i) {
    const uint32_t h = rng();
    a.push_back(h);
    b.push_back(h);
  }
  for (std::size_t i = 0; i < only; ++i) a.push_back(rng());
  for (std::size_t i = 0; i < only; ++i) b.push_back(rng());
  for (auto* v : {&a, &b}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return {a, b};
}

// How many of `trials` pairs at Jaccard shared / (shared + 2 only) the filter keeps.
int kept(std::size_t shared, std::size_t only, int trials, double threshold = 0.8) {
  std::mt19937 rng(static_cast<uint32_t>(shared * 7919 + only));
  const candidate_filter filter(threshold);
  int k = 0;
  for (int t = 0; t < trials; ++t) {
    const auto [a, b] = sets(shared, only, rng);
    std::vector<uint8_t> sa, sb;
    append_pair_sketch(a, sa);
    append_pair_sketch(b, sb);
    k += filter.may_reach(a.size(), b.size(), sa.data(), sb.data()) ? 1 : 0;
  }
  return k;
}

TEST(CandidateFilter, SketchesAgreeOnEqualSetsAndRarelyOnUnrelatedOnes) {
  std::mt19937 rng(1);
  const auto [a, b] = sets(0, 2000, rng);
  std::vector<uint8_t> sa, sb, sa2;
  append_pair_sketch(a, sa);
  append_pair_sketch(a, sa2);
  append_pair_sketch(b, sb);
  ASSERT_EQ(sa.size(), pair_sketch_bytes);
  EXPECT_EQ(pair_sketch_matches(sa.data(), sa2.data()), pair_sketch_bins);
  // Unrelated: agreement only by 4-bit collisions, about 1 bin in 16.
  EXPECT_LT(pair_sketch_matches(sa.data(), sb.data()), pair_sketch_bins / 4);
  std::vector<uint8_t> empty;
  append_pair_sketch({}, empty);
  EXPECT_EQ(empty, std::vector<uint8_t>(pair_sketch_bytes, 0));
}

TEST(CandidateFilter, KeepsEveryPairAtTheThreshold) {
  // Jaccard 0.8 (shared 4 x only x 2 ... : 1600 / (1600 + 400)) and above, long and short sets.
  EXPECT_EQ(kept(1600, 200, 500), 500);
  EXPECT_EQ(kept(160, 20, 500), 500);
  EXPECT_EQ(kept(40, 5, 500), 500);
  EXPECT_EQ(kept(8, 1, 500), 500);
  EXPECT_EQ(kept(1800, 100, 200), 200);  // 0.9
}

TEST(CandidateFilter, RejectsMostPairsFarBelowTheThreshold) {
  EXPECT_LT(kept(600, 700, 500), 10);   // Jaccard 0.3
  EXPECT_LT(kept(1000, 500, 500), 50);  // 0.5
  // Few shingles fill few bins: the sketch says less and the filter keeps more.
  EXPECT_GT(kept(6, 7, 200), 0);
}

TEST(CandidateFilter, SizesAloneRuleOutAPairExactly) {
  const candidate_filter filter(0.8);
  EXPECT_FALSE(filter.may_reach(100, 126, nullptr, nullptr));  // at most 100 / 126 < 0.8
  EXPECT_TRUE(filter.may_reach(100, 125, nullptr, nullptr));   // 100 / 125 = 0.8
}

}  // namespace
}  // namespace simdup::detail
