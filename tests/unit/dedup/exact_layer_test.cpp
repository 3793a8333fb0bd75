#include <simdup/exact_layer.hpp>

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace simdup {
namespace {

TEST(NormalizeUrl, DropsSchemeWwwDefaultPortFragmentAndTrailingSlash) {
  EXPECT_EQ(normalize_url("https://www.Example.COM:443/a/b/#top"), "example.com/a/b");
  EXPECT_EQ(normalize_url("http://example.com:80/a/b"), "example.com/a/b");
  EXPECT_EQ(normalize_url("  example.com/a/b/  "), "example.com/a/b");
  EXPECT_EQ(normalize_url("HTTP://user:pw@Example.com/"), "example.com");
}

TEST(NormalizeUrl, OtherSchemesKeepSchemeAndFragment) {
  EXPECT_EQ(normalize_url("FILE:///usr/share/doc/a.html#part-2"),
            "file:///usr/share/doc/a.html#part-2");
  EXPECT_NE(url_key("file:///a.html#part-1"), url_key("file:///a.html#part-2"));
  EXPECT_NE(url_key("file:///a.html"), url_key("http://a.html"));
  EXPECT_EQ(normalize_url("https://e.com/app/#!/item/7"), "e.com/app#!/item/7");
}

TEST(NormalizeUrl, KeepsPathCaseAndNonDefaultPort) {
  EXPECT_EQ(normalize_url("http://example.com:8080/A/B"), "example.com:8080/A/B");
  EXPECT_NE(normalize_url("http://example.com/A"), normalize_url("http://example.com/a"));
}

TEST(NormalizeUrl, SortsQueryAndDropsTrackingParameters) {
  EXPECT_EQ(normalize_url("http://e.com/p?b=2&utm_source=x&a=1&fbclid=zz&UTM_Medium=m"),
            "e.com/p?a=1&b=2");
  EXPECT_EQ(normalize_url("http://e.com/p?utm_source=x"), "e.com/p");
  EXPECT_EQ(normalize_url("http://e.com/p?&&q=1&"), "e.com/p?q=1");
}

TEST(NormalizeUrl, UppercasesPercentEscapes) {
  EXPECT_EQ(normalize_url("http://e.com/a%2fb%c3%a9"), "e.com/a%2Fb%C3%A9");
  EXPECT_EQ(normalize_url("http://e.com/100%"), "e.com/100%");
  EXPECT_EQ(normalize_url("http://e.com/%zz"), "e.com/%zz");
}

TEST(NormalizeUrl, EmptyAndBlank) {
  EXPECT_EQ(normalize_url(""), "");
  EXPECT_EQ(normalize_url("   "), "");
  EXPECT_EQ(url_key(""), 0u);
  EXPECT_EQ(url_key(" \t"), 0u);
  EXPECT_EQ(url_key("http://www.a.com/x/"), url_key("https://a.com/x"));
  EXPECT_NE(url_key("http://a.com/x"), url_key("http://a.com/y"));
}

TEST(ExactKey, EmptyIsNoKeyAndOtherwiseNonZero) {
  EXPECT_EQ(exact_key(""), 0u);
  EXPECT_NE(exact_key("a"), 0u);
  EXPECT_EQ(exact_key("same text"), exact_key("same text"));
  EXPECT_NE(exact_key("same text"), exact_key("same text."));
}

TEST(ExactTable, FirstInsertWinsAndKeyZeroIsIgnored) {
  exact_table table;
  EXPECT_FALSE(table.find_or_insert(0, 1).has_value());
  EXPECT_FALSE(table.find(0).has_value());
  EXPECT_EQ(table.size(), 0u);
  EXPECT_FALSE(table.find_or_insert(42, 7).has_value());
  EXPECT_EQ(table.find_or_insert(42, 9), std::optional<uint32_t>(7));
  EXPECT_EQ(table.find(42), std::optional<uint32_t>(7));
  EXPECT_FALSE(table.find(43).has_value());
  EXPECT_EQ(table.size(), 1u);
}

TEST(ExactTable, AgreesWithStdMapThroughGrowth) {
  std::mt19937_64 rng(5);
  exact_table table;
  std::unordered_map<uint64_t, uint32_t> reference;
  for (uint32_t i = 0; i < 50000; ++i) {
    // Few distinct keys in the low range forces repeats; colliding low bits force probing.
    const uint64_t key = (i % 3 == 0) ? (rng() % 5000 + 1) : ((rng() << 20) | 1);
    const auto got = table.find_or_insert(key, i);
    const auto [it, inserted] = reference.emplace(key, i);
    if (inserted) {
      EXPECT_FALSE(got.has_value());
    } else {
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(*got, it->second);
    }
  }
  EXPECT_EQ(table.size(), reference.size());
  for (const auto& [key, value] : reference) EXPECT_EQ(table.find(key), std::optional(value));
  EXPECT_GE(table.memory_bytes(), reference.size() * 12);
}

}  // namespace
}  // namespace simdup
