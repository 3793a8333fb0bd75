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

TEST(Clusters, CentersSplitAChainAroundItsMostLinkedDocuments) {
  // Chain 0~1~2~3~4: 1 (two links, the smaller ordinal) takes 0 and 2, then 3 takes 4. Moving
  // 2 to 3's cluster agrees with as many links as staying, so it stays.
  const std::vector<index_pair> chain = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}};
  EXPECT_EQ(center_clusters(5, chain, {}), (std::vector<uint32_t>{0, 0, 0, 3, 3}));
  // Components would join all five; anchored ones with 0 as representative would split them.
  cluster_builder b(5, cluster_linking::centers);
  b.add(chain);
  EXPECT_EQ(b.finish(), (std::vector<uint32_t>{0, 0, 0, 3, 3}));
}

TEST(Clusters, CentersMoveAMemberToTheClusterHoldingMoreOfItsLinks) {
  // Cliques {0, 1, 2, 3} and {4, 5, 6} bridged by 3~4: the pivot 3 (four links) takes 4, which
  // then moves to 5's cluster, where two of its links are against one in 3's.
  std::vector<index_pair> links;
  for (uint32_t a = 0; a < 4; ++a)
    for (uint32_t b = a + 1; b < 4; ++b) links.push_back({a, b, 1});
  for (uint32_t a = 4; a < 7; ++a)
    for (uint32_t b = a + 1; b < 7; ++b) links.push_back({a, b, 1});
  links.push_back({3, 4, 1});
  links.push_back({4, 3, 1});  // a pair listed twice counts once
  EXPECT_EQ(center_clusters(7, links, {}), (std::vector<uint32_t>{0, 0, 0, 0, 4, 4, 4}));
}

TEST(Clusters, CentersCountTheDocumentsAnOrdinalStandsFor) {
  // 0~1, 1~2, 2~3, 2~4. Alone, 2 (three links) is the center and 1 moves to 0. When 0 stands
  // for five documents, 1 has six partners and becomes the center of 0 and 2; 2 then joins 3.
  const std::vector<index_pair> links = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {2, 4, 1}};
  EXPECT_EQ(center_clusters(5, links, {}), (std::vector<uint32_t>{0, 0, 2, 2, 2}));
  const std::vector<uint32_t> weights = {5, 1, 1, 1, 1};
  EXPECT_EQ(center_clusters(5, links, weights), (std::vector<uint32_t>{0, 0, 2, 2, 4}));
  cluster_builder b(5, cluster_linking::centers, weights);
  b.add(links);
  EXPECT_EQ(b.finish(), (std::vector<uint32_t>{0, 0, 2, 2, 4}));
}

TEST(Clusters, CentersKeepEveryMemberLinkedToACenterOfItsClusterOnRandomInputs) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const int k = 3;
    auto c = make_case(seed, 300, k);
    const auto rep = center_clusters(c.fps.size(), c.pairs, {});
    std::vector<std::vector<uint32_t>> members(c.fps.size());
    for (uint32_t i = 0; i < rep.size(); ++i) {
      ASSERT_LE(rep[i], i) << "the representative is the smallest ordinal";
      members[rep[i]].push_back(i);
    }
    for (const auto& cluster : members) {
      if (cluster.size() < 2) continue;
      // Some member (the center) is within k of every other: members are within 2k.
      const bool centered = std::any_of(cluster.begin(), cluster.end(), [&](uint32_t x) {
        return std::all_of(cluster.begin(), cluster.end(),
                           [&](uint32_t y) { return std::popcount(c.fps[x] ^ c.fps[y]) <= k; });
      });
      EXPECT_TRUE(centered) << "seed " << seed << " cluster of " << cluster.front();
    }
    // The pairs' order does not matter.
    std::shuffle(c.pairs.begin(), c.pairs.end(), std::mt19937_64(seed));
    EXPECT_EQ(center_clusters(c.fps.size(), c.pairs, {}), rep) << "seed " << seed;
  }
}

TEST(Clusters, CentersOfAComponentDoNotDependOnTheOthers) {
  // What the distributed job relies on: clustering each component alone (its ordinals in the
  // same order) gives the clusters of the whole collection.
  const auto c = make_case(7, 400, 3);
  const auto whole = center_clusters(c.fps.size(), c.pairs, {});
  cluster_builder components(c.fps.size(), cluster_linking::components);
  components.add(c.pairs);
  const auto component = components.finish();
  for (uint32_t root = 0; root < component.size(); ++root) {
    if (component[root] != root) continue;
    std::vector<uint32_t> local_of(c.fps.size(), UINT32_MAX), global;
    for (uint32_t i = 0; i < component.size(); ++i) {
      if (component[i] != root) continue;
      local_of[i] = static_cast<uint32_t>(global.size());
      global.push_back(i);
    }
    std::vector<index_pair> local;
    for (const index_pair& p : c.pairs) {
      if (component[p.a] == root) local.push_back({local_of[p.a], local_of[p.b], p.distance});
    }
    const auto alone = center_clusters(global.size(), local, {});
    for (uint32_t x = 0; x < global.size(); ++x) {
      ASSERT_EQ(global[alone[x]], whole[global[x]]) << "document " << global[x];
    }
  }
}

TEST(Clusters, Empty) {
  cluster_builder b(0, cluster_linking::star);
  EXPECT_TRUE(b.finish().empty());
  EXPECT_TRUE(center_clusters(0, {}, {}).empty());
}

}  // namespace
}  // namespace simdup
