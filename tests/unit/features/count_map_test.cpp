#include <gtest/gtest.h>

#include "features/detail/count_map.hpp"

#include <string>
#include <vector>

namespace simdup {
namespace {

TEST(ShortEqual, FindsADifferenceAtEveryPositionOfEveryLength) {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string a;
    for (std::size_t i = 0; i < n; ++i) a += static_cast<char>('a' + i % 26);
    EXPECT_TRUE(detail::short_equal(a.data(), std::string(a).data(), n)) << n;
    for (std::size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] = static_cast<char>(b[i] ^ 0x80);
      EXPECT_FALSE(detail::short_equal(a.data(), b.data(), n)) << "length " << n << ", at " << i;
    }
  }
}

TEST(CountMap, CountsKeysOfEveryLengthInFirstOccurrenceOrder) {
  // Keys that share prefixes and suffixes and differ only in length or one middle byte, plus
  // enough of them to make the table grow several times.
  std::vector<std::string> keys;
  for (std::size_t n = 0; n <= 24; ++n) keys.push_back(std::string(n, 'x'));
  for (int i = 0; i < 500; ++i) keys.push_back("key-" + std::to_string(i) + "-中文");
  detail::count_map counts;
  for (int rep = 1; rep <= 3; ++rep) {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (k % 3 + 1 >= static_cast<std::size_t>(rep)) counts.add(keys[k]);
    }
  }
  ASSERT_EQ(counts.entries().size(), keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    EXPECT_EQ(counts.entries()[k].key, keys[k]);
    EXPECT_EQ(counts.entries()[k].count, k % 3 + 1) << keys[k];
    EXPECT_EQ(counts.entries()[k].hash, detail::xxh3_64(keys[k]));
  }
  counts.clear();
  EXPECT_TRUE(counts.entries().empty());
  counts.add("again", 5);
  ASSERT_EQ(counts.entries().size(), 1u);
  EXPECT_EQ(counts.entries()[0].count, 5u);
}

TEST(CountMap, WorksAfterAHugeDocument) {
  detail::count_map counts;
  std::vector<std::string> keys;
  for (int i = 0; i < 200000; ++i) keys.push_back(std::to_string(i));
  for (const auto& k : keys) counts.add(k);
  EXPECT_EQ(counts.entries().size(), keys.size());
  for (int round = 0; round < 3; ++round) {  // the table is released and regrown
    counts.clear();
    counts.add("a");
    counts.add("b");
    counts.add("a");
    ASSERT_EQ(counts.entries().size(), 2u);
    EXPECT_EQ(counts.entries()[0].count, 2u);
    EXPECT_EQ(counts.entries()[1].count, 1u);
  }
}

}  // namespace
}  // namespace simdup
