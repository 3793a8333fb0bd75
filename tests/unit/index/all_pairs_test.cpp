// Batch all-pairs against brute force: random layouts, planted near-duplicates, edge cases.
#include <simdup/all_pairs.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "index/all_pairs_baseline.hpp"

namespace simdup {
namespace {

using pair_list = std::vector<std::tuple<uint32_t, uint32_t, int>>;

pair_list brute_force(const std::vector<uint64_t>& fps, int k) {
  pair_list out;
  for (uint32_t i = 0; i < fps.size(); ++i)
    for (uint32_t j = i + 1; j < fps.size(); ++j) {
      const int d = std::popcount(fps[i] ^ fps[j]);
      if (d <= k) out.emplace_back(i, j, d);
    }
  return out;
}

/// Runs all_pairs (or the baseline) and returns sorted pairs; fails on a pair reported twice.
pair_list run(const std::vector<uint64_t>& fps, const all_pairs_options& opt,
              bool baseline = false) {
  pair_list out;
  auto sink = [&](std::span<const index_pair> ps) {
    for (const auto& p : ps) {
      EXPECT_LT(p.a, p.b);
      out.emplace_back(p.a, p.b, p.distance);
    }
    return true;
  };
  auto r = baseline ? all_pairs_baseline(fps, opt, sink) : all_pairs(fps, opt, sink);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  if (r) {
    EXPECT_EQ(r->pairs, out.size());
  }
  std::sort(out.begin(), out.end());
  EXPECT_EQ(std::adjacent_find(out.begin(), out.end()), out.end()) << "a pair reported twice";
  return out;
}

/// Random fingerprints plus copies of some of them with exactly d bits flipped, d in 0..k+1.
std::vector<uint64_t> planted(std::size_t n, int k, std::mt19937_64& rng) {
  std::vector<uint64_t> fps(n);
  for (auto& f : fps) f = rng();
  for (std::size_t i = 0; i + 1 < n; i += 3) {
    const int d = static_cast<int>(i / 3 % static_cast<std::size_t>(k + 2));
    uint64_t f = fps[i];
    std::set<int> bits;
    while (static_cast<int>(bits.size()) < d) bits.insert(static_cast<int>(rng() % 64));
    for (int b : bits) f ^= uint64_t{1} << b;
    fps[i + 1] = f;
  }
  return fps;
}

TEST(AllPairs, MatchesBruteForceOverLayouts) {
  std::mt19937_64 rng(42);
  struct cfg {
    int k;
    const char* blocks;
  };
  const cfg cfgs[] = {{0, "1"},   {0, "3"},   {1, "2"},         {1, "5"},      {2, "3"},
                      {2, "7"},   {3, "4"},   {3, "5"},         {3, "6"},      {3, "16,16,16,16"},
                      {3, "4/4"}, {3, "5/4"}, {3, "20,5,9,30"}, {4, "6"},      {5, "7"},
                      {6, "8/7"}, {8, "10"},  {12, "13"},       {2, "1,1,62"}, {1, "60,4"}};
  for (const cfg& c : cfgs) {
    for (std::size_t n : {0u, 1u, 2u, 50u, 700u}) {
      SCOPED_TRACE(std::string("k=") + std::to_string(c.k) + " blocks=" + c.blocks +
                   " n=" + std::to_string(n));
      auto layout = index_layout::parse(c.k, c.blocks);
      ASSERT_TRUE(layout.has_value()) << layout.error().message;
      all_pairs_options opt;
      opt.layout = *layout;
      const auto fps = planted(n, c.k, rng);
      const auto expected = brute_force(fps, c.k);
      EXPECT_EQ(run(fps, opt), expected);
      EXPECT_EQ(run(fps, opt, true), expected);
    }
  }
}

TEST(AllPairs, ClusteredInputWithNearbyBits) {
  // Fingerprints differing only in a few low bits stress long equal-prefix runs.
  std::mt19937_64 rng(7);
  std::vector<uint64_t> fps;
  for (int c = 0; c < 20; ++c) {
    const uint64_t base = rng();
    for (int i = 0; i < 30; ++i) fps.push_back(base ^ (rng() & rng() & rng()));
  }
  for (int k : {0, 2, 3, 5}) {
    // The planner plans for layout.k, the one holder of k.
    all_pairs_options opt;
    opt.layout.k = k;
    EXPECT_EQ(run(fps, opt), brute_force(fps, k)) << "k=" << k;
  }
}

TEST(AllPairs, AllEqualAndAllZero) {
  for (uint64_t v : {uint64_t{0}, uint64_t{0xdeadbeefcafef00d}}) {
    const std::vector<uint64_t> fps(60, v);
    all_pairs_options opt;
    const auto got = run(fps, opt);
    EXPECT_EQ(got.size(), 60u * 59 / 2);
    EXPECT_EQ(got, brute_force(fps, 3));
  }
}

TEST(AllPairs, KZeroFindsOnlyEqual) {
  const std::vector<uint64_t> fps = {5, 5, 4, 7, 5, 4};
  all_pairs_options opt;
  opt.layout.k = 0;
  EXPECT_EQ(run(fps, opt), (pair_list{{0, 1, 0}, {0, 4, 0}, {1, 4, 0}, {2, 5, 0}}));
}

TEST(AllPairs, LargeInputUsesThreadsAndMatchesBaseline) {
  // Above the single-thread threshold: the parallel passes run with 2 threads.
  std::mt19937_64 rng(3);
  auto fps = planted(120'000, 3, rng);
  all_pairs_options opt;
  opt.threads = 2;
  const auto got = run(fps, opt);
  EXPECT_EQ(got, run(fps, opt, true));
  // Every planted pair at distance <= 3 is there.
  std::size_t planted_found = 0;
  for (const auto& [a, b, d] : got) planted_found += (b == a + 1 && a % 3 == 0);
  EXPECT_GE(planted_found, 120'000u / 3 * 4 / 5 - 1);
}

TEST(AllPairs, PartitionedThreadedRunsMatchBaselineOverLayouts) {
  // Large enough for 2 threads and a partition on several key bits; uneven and two-level
  // layouts make tables whose first blocks differ in width and position.
  std::mt19937_64 rng(11);
  // Prefixes of 16 bits or more keep the baseline's all-pairs-per-run cheap under ASan.
  const std::pair<int, const char*> cfgs[] = {
      {3, "5"}, {3, "4/4"}, {2, "20,21,23"}, {3, "16,16,16,16"}, {1, "30,34"}};
  const auto fps = planted(110'000, 3, rng);
  for (const auto& [k, blocks] : cfgs) {
    SCOPED_TRACE(std::string("k=") + std::to_string(k) + " blocks=" + blocks);
    auto layout = index_layout::parse(k, blocks);
    ASSERT_TRUE(layout.has_value()) << layout.error().message;
    all_pairs_options opt;
    opt.layout = *layout;
    opt.threads = 2;
    EXPECT_EQ(run(fps, opt), run(fps, opt, true));
  }
}

TEST(AllPairs, TwoPassScatterMatchesBaseline) {
  // 2^18 fingerprints or more: buckets are split again in cache, and per table the prefix bits
  // outside the partition are extracted exactly in 1, 2 or 3 runs ("10,10,10,34" k=2 and
  // "9,8,8,8,4,27" k=3 have such tables) or hashed. The last third shares its top 6 bits, so
  // the bucket of those bits in the first block's partition is too large to split and takes
  // the hashed path on the whole bucket.
  std::mt19937_64 rng(19);
  auto fps = planted(300'000, 3, rng);
  for (std::size_t i = fps.size() / 3 * 2; i < fps.size(); ++i)
    fps[i] = (uint64_t{0x29} << 58) | (fps[i] >> 6);
  const std::pair<int, const char*> cfgs[] = {{3, "5"}, {2, "10,10,10,34"}, {3, "9,8,8,8,4,27"}};
  for (const auto& [k, blocks] : cfgs) {
    SCOPED_TRACE(std::string("k=") + std::to_string(k) + " blocks=" + blocks);
    auto layout = index_layout::parse(k, blocks);
    ASSERT_TRUE(layout.has_value()) << layout.error().message;
    all_pairs_options opt;
    opt.layout = *layout;
    opt.threads = 2;
    const auto got = run(fps, opt);
    EXPECT_EQ(got, run(fps, opt, true));
    EXPECT_GT(got.size(), 50'000u);
  }
}

TEST(AllPairs, SinkCanStop) {
  const std::vector<uint64_t> fps(100, 1);
  std::size_t calls = 0;
  auto r = all_pairs(fps, {}, [&](std::span<const index_pair>) { return ++calls, false; });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(calls, 1u);
}

TEST(AllPairs, RejectsBadLayout) {
  all_pairs_options opt;
  opt.layout.k = 3;
  opt.layout.widths = {32, 32};
  const std::vector<uint64_t> fps = {1, 2};
  auto r = all_pairs(fps, opt, [](auto) { return true; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::invalid_argument);
}

}  // namespace
}  // namespace simdup
