#include "dedup/pair_jaccard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"

namespace simdup::detail {
namespace {

using test::temp_dir;

// Arrays that share a common core with some noise, of sizes from 40% to 100% of the largest:
// some pairs reach 0.8, some fail on their sizes alone, some only after merging.
std::vector<std::vector<uint32_t>> family(std::size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> core;
  for (uint32_t i = 0; i < 1500; ++i) core.push_back(static_cast<uint32_t>(rng()));
  std::vector<std::vector<uint32_t>> out;
  for (std::size_t d = 0; d < count; ++d) {
    std::set<uint32_t> set;
    const std::size_t keep = 600 + rng() % 901;
    for (std::size_t i = 0; i < keep; ++i) set.insert(core[i]);
    const std::size_t noise = rng() % 300;
    for (std::size_t i = 0; i < noise; ++i) set.insert(static_cast<uint32_t>(rng()));
    out.emplace_back(set.begin(), set.end());
  }
  return out;
}

TEST(PairJaccards, AgreesWithComparingTheArraysDirectly) {
  temp_dir dir;
  // A small buffer: most arrays are read back from the file, the last ones from the buffer.
  auto store = shingle_store::create(dir.path().string(), 4096);
  ASSERT_TRUE(store) << store.error().message;
  const auto arrays = family(40, 9);
  for (uint32_t i = 0; i < arrays.size(); ++i) ASSERT_TRUE(store->put(i, arrays[i]));
  std::vector<jaccard_job> jobs;
  std::mt19937 rng(4);
  for (uint32_t slot = 0; slot < 600; ++slot) {
    // Repeated first members (groups) and repeated second members (the cache).
    jobs.push_back({static_cast<uint32_t>(rng() % 12), static_cast<uint32_t>(rng() % 40), slot});
  }
  for (const double threshold : {0.8, 0.5, 0.0}) {
    std::vector<jaccard_job> shuffled = jobs;
    std::vector<double> out(jobs.size(), -1.0);
    ASSERT_TRUE(pair_jaccards(*store, shuffled, 0, threshold, out));
    std::size_t reached = 0, ruled_out_by_size = 0;
    for (const jaccard_job& job : jobs) {
      const auto& a = arrays[job.a];
      const auto& b = arrays[job.b];
      const double exact = sketch_jaccard(a, b, 0);
      if (exact >= threshold) {
        ++reached;
        EXPECT_DOUBLE_EQ(out[job.slot], exact) << job.a << " " << job.b << " " << threshold;
      } else {
        EXPECT_LT(out[job.slot], threshold) << job.a << " " << job.b << " " << threshold;
      }
      if (const auto by_size = jaccard_size_bound(a.size(), b.size(), threshold)) {
        ++ruled_out_by_size;
        EXPECT_DOUBLE_EQ(out[job.slot], *by_size);
      }
    }
    // The data exercise both paths at 0.8.
    if (threshold == 0.8) {
      EXPECT_GT(reached, 20u);
      EXPECT_GT(ruled_out_by_size, 100u);
    }
  }
  // Bottom-k sketches go through sketch_jaccard, never the size rule.
  std::vector<double> out(jobs.size(), -1.0);
  std::vector<jaccard_job> shuffled = jobs;
  ASSERT_TRUE(pair_jaccards(*store, shuffled, 100, 0.8, out));
  for (const jaccard_job& job : jobs) {
    EXPECT_DOUBLE_EQ(out[job.slot], sketch_jaccard(arrays[job.a], arrays[job.b], 100));
  }
}

// Families of near copies stored far apart (copy c of text t at ordinal c * texts + t, as
// re-crawls arrive), more documents than the per-thread caches hold, each family compared
// within itself and with a related family: the answers do not depend on what the caches hold.
TEST(PairJaccards, FamiliesSpreadOverTheStoreAgreeWithDirectComparison) {
  temp_dir dir;
  auto store = shingle_store::create(dir.path().string(), 1 << 16);
  ASSERT_TRUE(store) << store.error().message;
  constexpr uint32_t texts = 100, copies = 14;
  std::mt19937 rng(11);
  std::vector<std::vector<uint32_t>> arrays(texts * copies);
  std::vector<uint32_t> base;
  for (uint32_t t = 0; t < texts; ++t) {
    // Text t shares half of text t - 1's hashes (its related family, below 0.8).
    std::set<uint32_t> text;
    for (std::size_t i = 0; t % 2 == 1 && i < base.size() / 2; ++i) text.insert(base[i]);
    while (text.size() < 300) text.insert(static_cast<uint32_t>(rng()));
    base.assign(text.begin(), text.end());
    for (uint32_t c = 0; c < copies; ++c) {
      std::set<uint32_t> copy(base.begin(), base.end());
      for (uint32_t i = 0; i < c % 5; ++i) copy.insert(static_cast<uint32_t>(rng()));
      arrays[c * texts + t].assign(copy.begin(), copy.end());
    }
  }
  for (uint32_t i = 0; i < arrays.size(); ++i) ASSERT_TRUE(store->put(i, arrays[i]));
  ASSERT_TRUE(store->flush());
  std::vector<jaccard_job> jobs;
  for (uint32_t t = 0; t < texts; ++t) {
    for (uint32_t c = 0; c < copies; ++c) {
      for (uint32_t d = c + 1; d < copies; ++d) {
        const auto slot = static_cast<uint32_t>(jobs.size());
        jobs.push_back({c * texts + t, d * texts + t, slot});
        if (t > 0) {
          jobs.push_back({c * texts + t, d * texts + t - 1, slot + 1});
        }
      }
    }
  }
  std::shuffle(jobs.begin(), jobs.end(), rng);
  for (const double threshold : {0.8, 0.0}) {
    std::vector<jaccard_job> sorted = jobs;
    std::vector<double> out(jobs.size(), -1.0);
    ASSERT_TRUE(pair_jaccards(*store, sorted, 0, threshold, out));
    std::size_t reached = 0;
    for (const jaccard_job& job : jobs) {
      const double exact = sketch_jaccard(arrays[job.a], arrays[job.b], 0);
      if (exact >= threshold) {
        ++reached;
        EXPECT_DOUBLE_EQ(out[job.slot], exact) << job.a << " " << job.b << " " << threshold;
      } else {
        EXPECT_LT(out[job.slot], threshold) << job.a << " " << job.b << " " << threshold;
      }
    }
    if (threshold == 0.8) {
      // Copies of one text reach 0.8, copies of related texts do not.
      EXPECT_EQ(reached, std::size_t{texts} * copies * (copies - 1) / 2);
    }
  }
}

}  // namespace
}  // namespace simdup::detail
