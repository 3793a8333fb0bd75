#include <simdup/clusters.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <vector>

namespace simdup {
namespace {

TEST(Clusters, ComponentsChainAndSmallestRepresentative) {
  cluster_builder b(6, cluster_linking::components);
  const std::vector<index_pair> pairs = {{3, 4, 1}, {1, 3, 2}, {0, 5, 0}, {4, 9, 1}};
  b.add(pairs);  // the pair with ordinal 9 is out of range and ignored
  EXPECT_EQ(b.finish(), (std::vector<uint32_t>{0, 1, 2, 1, 1, 0}));
}

// Similarity given by a table of (member, representative) values; pairs not listed are 0.
pair_similarity_fn table_similarity(std::vector<std::pair<std::pair<uint32_t, uint32_t>, double>> t,
                                    std::size_t& calls) {
  return [t = std::move(t), &calls](std::span<const std::pair<uint32_t, uint32_t>> pairs,
                                    std::vector<double>& out) -> status {
    ++calls;
    out.clear();
    for (const auto& p : pairs) {
      double v = 0;
      for (const auto& [key, value] : t) {
        if (key == p || key == std::make_pair(p.second, p.first)) v = value;
      }
      out.push_back(v);
    }
    return {};
  };
}

TEST(Clusters, AnchoringKeepsMembersAboveTheFloorAndSplitsTheRest) {
  // A chain 0-1-2-3-4 (one component) and 5-6. 2, 3 and 4 are far from 0; 3 and 4 are close
  // to 2, and 4 is linked only through 3. 6 is close to 5.
  const std::vector<index_pair> links = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 4, 0}, {5, 6, 0}};
  std::vector<uint32_t> rep = {0, 0, 0, 0, 0, 5, 5};
  std::size_t calls = 0;
  const auto sim = table_similarity({{{1, 0}, 0.9},
                                     {{2, 0}, 0.5},
                                     {{3, 0}, 0.59},
                                     {{4, 0}, 0.2},
                                     {{3, 2}, 0.6},
                                     {{4, 2}, 0.7},
                                     {{6, 5}, 0.95}},
                                    calls);
  ASSERT_TRUE(anchor_clusters(rep, links, 0.6, sim));
  EXPECT_EQ(rep, (std::vector<uint32_t>{0, 0, 2, 2, 2, 5, 5}));
  EXPECT_EQ(calls, 2u);  // the first check, then 3 and 4 against their new representative 2
}

TEST(Clusters, AnchoringSplitsMembersLeftWithoutALinkIntoSingletons) {
  // 1 and 2 both fail against 0 and are not linked to each other: each keeps itself.
  const std::vector<index_pair> links = {{0, 1, 0}, {0, 2, 0}};
  std::vector<uint32_t> rep = {0, 0, 0};
  std::size_t calls = 0;
  ASSERT_TRUE(anchor_clusters(rep, links, 0.8, table_similarity({{{1, 0}, 0.79}}, calls)));
  EXPECT_EQ(rep, (std::vector<uint32_t>{0, 1, 2}));
  // The floor is inclusive, and floor 0 keeps the components as they are.
  rep = {0, 0, 0};
  ASSERT_TRUE(anchor_clusters(rep, links, 0.79, table_similarity({{{1, 0}, 0.79}}, calls)));
  EXPECT_EQ(rep, (std::vector<uint32_t>{0, 0, 2}));
  rep = {0, 0, 0};
  ASSERT_TRUE(anchor_clusters(rep, links, 0.0, table_similarity({}, calls)));
  EXPECT_EQ(rep, (std::vector<uint32_t>{0, 0, 0}));
}

TEST(Clusters, AnchoringPassesTheSimilarityError) {
  std::vector<uint32_t> rep = {0, 0};
  const std::vector<index_pair> links = {{0, 1, 0}};
  const auto st = anchor_clusters(
      rep, links, 0.5,
      [](std::span<const std::pair<uint32_t, uint32_t>>, std::vector<double>&) -> status {
        return make_error(errc::io_error, "disk gone");
      });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, errc::io_error);
}

TEST(Clusters, StarLinksOnlyToTheRepresentative) {
  // Chain 0~1~2~3: star takes 1 into 0's cluster; 2 is not paired with 0, so it starts its own
  // cluster and takes 3.
  cluster_builder b(5, cluster_linking::star);
  const std::vector<index_pair> pairs = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}};
  b.add(pairs);
  EXPECT_EQ(b.finish(), (std::vector<uint32_t>{0, 0, 2, 2, 4}));
}

// Random fingerprints with planted families (chains of 1-bit steps, so components chain
// beyond k); every pair within k by brute force.
struct random_case {
  std::vector<uint64_t> fps;
  std::vector<index_pair> pairs;
};

random_case make_case(uint32_t seed, std::size_t n, int k) {
  std::mt19937_64 rng(seed);
  random_case c;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && rng() % 3 == 0) {
      c.fps.push_back(c.fps[rng() % i] ^ (uint64_t{1} << (rng() % 64)));
    } else {
      c.fps.push_back(rng());
    }
  }
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b) {
      const int d = std::popcount(c.fps[a] ^ c.fps[b]);
      if (d <= k) c.pairs.push_back({a, b, d});
    }
  std::shuffle(c.pairs.begin(), c.pairs.end(), rng);  // order must not matter
  return c;
}

TEST(Clusters, ComponentsMatchGraphSearchOnRandomInputs) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const auto c = make_case(seed, 300, 3);
    cluster_builder b(c.fps.size(), cluster_linking::components);
    b.add(c.pairs);
    const auto rep = b.finish();
    // Reference: label each component by depth-first search from its smallest ordinal.
    std::vector<std::vector<uint32_t>> adj(c.fps.size());
    for (const auto& p : c.pairs) {
      adj[p.a].push_back(p.b);
      adj[p.b].push_back(p.a);
    }
    std::vector<uint32_t> expected(c.fps.size(), UINT32_MAX);
    for (uint32_t start = 0; start < c.fps.size(); ++start) {
      if (expected[start] != UINT32_MAX) continue;
      std::vector<uint32_t> todo{start};
      expected[start] = start;
      while (!todo.empty()) {
        const uint32_t v = todo.back();
        todo.pop_back();
        for (const uint32_t w : adj[v])
          if (expected[w] == UINT32_MAX) {
            expected[w] = start;
            todo.push_back(w);
          }
      }
    }
    ASSERT_EQ(rep, expected) << "seed " << seed;
  }
}

TEST(Clusters, StarKeepsEveryMemberWithinKOfItsRepresentative) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const int k = 3;
    const auto c = make_case(seed, 300, k);
    cluster_builder b(c.fps.size(), cluster_linking::star);
    b.add(c.pairs);
    const auto rep = b.finish();
    ASSERT_EQ(rep.size(), c.fps.size());
    for (uint32_t i = 0; i < rep.size(); ++i) {
      const uint32_t r = rep[i];
      ASSERT_LE(r, i) << "a representative precedes its members";
      EXPECT_EQ(rep[r], r) << "a representative represents itself";
      EXPECT_LE(std::popcount(c.fps[i] ^ c.fps[r]), k) << "seed " << seed << " doc " << i;
      if (r == i) {
        // Greedy: a representative was not taken by any earlier representative it pairs with.
        for (uint32_t j = 0; j < i; ++j) {
          if (rep[j] == j) {
            EXPECT_GT(std::popcount(c.fps[i] ^ c.fps[j]), k);
          }
        }
      }
    }
  }
}

TEST(Clusters, Empty) {
  cluster_builder b(0, cluster_linking::star);
  EXPECT_TRUE(b.finish().empty());
}

}  // namespace
}  // namespace simdup
