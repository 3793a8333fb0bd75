#include <simdup/clusters.hpp>

#include <gtest/gtest.h>

namespace simdup {
namespace {

TEST(Clusters, ComponentsChainAndSmallestRepresentative) {
  cluster_builder b(6, cluster_mode::components);
  const std::vector<index_pair> pairs = {{3, 4, 1}, {1, 3, 2}, {0, 5, 0}, {4, 9, 1}};
  b.add(pairs);  // the pair with ordinal 9 is out of range and ignored
  EXPECT_EQ(b.finish(), (std::vector<uint32_t>{0, 1, 2, 1, 1, 0}));
}

TEST(Clusters, StarLinksOnlyToTheRepresentative) {
  // Chain 0~1~2~3: star takes 1 into 0's cluster; 2 is not paired with 0, so it starts its own
  // cluster and takes 3.
  cluster_builder b(5, cluster_mode::star);
  const std::vector<index_pair> pairs = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}};
  b.add(pairs);
  EXPECT_EQ(b.finish(), (std::vector<uint32_t>{0, 0, 2, 2, 4}));
}

TEST(Clusters, Empty) {
  cluster_builder b(0, cluster_mode::star);
  EXPECT_TRUE(b.finish().empty());
}

}  // namespace
}  // namespace simdup
