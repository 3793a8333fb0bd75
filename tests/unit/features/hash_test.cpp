#include <gtest/gtest.h>
#include <simdup/fingerprint.hpp>

#include "features/golden_io.hpp"
#include "features/hash.hpp"

namespace simdup {
namespace {

using testing::field;
using testing::hex64;

TEST(FeatureHash, Fnv1aKnownVectors) {
  EXPECT_EQ(hash_feature(hash_kind::fnv1a, ""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(hash_feature(hash_kind::fnv1a, "a"), 0xaf63dc4c8601ec8cULL);
}

TEST(FeatureHash, Xxh3PublishedVectors) {
  // XXH3-64 of the empty input with seed 0, from the xxHash specification's test vectors.
  EXPECT_EQ(hash_feature(hash_kind::xxh3, ""), 0x2d06800538d394c2ULL);
}

TEST(FeatureHash, Md5IsLastEightBytesBigEndian) {
  // md5("") = d41d8cd98f00b204 e9800998ecf8427e
  EXPECT_EQ(hash_feature(hash_kind::md5, ""), 0xe9800998ecf8427eULL);
  // md5("abc") = 900150983cd24fb0 d6963f7d28e17f72
  EXPECT_EQ(hash_feature(hash_kind::md5, "abc"), 0xd6963f7d28e17f72ULL);
}

// xxh3 values from `xxhsum -H3`; fnv1a and md5 from Python's standard library.
TEST(FeatureHash, MatchesGoldenVectors) {
  std::size_t checked = 0;
  testing::for_each_golden_row("default_simhash.jsonl", [&](simdjson::dom::element row) {
    std::string_view feature;
    if (row["feature"].get(feature)) return;
    EXPECT_EQ(hash_feature(hash_kind::xxh3, feature), hex64(field(row, "xxh3"))) << feature;
    EXPECT_EQ(hash_feature(hash_kind::fnv1a, feature), hex64(field(row, "fnv1a"))) << feature;
    EXPECT_EQ(hash_feature(hash_kind::md5, feature), hex64(field(row, "md5"))) << feature;
    detail::feature_hasher md5(hash_kind::md5);  // the reusable-context path
    EXPECT_EQ(md5(feature), hex64(field(row, "md5"))) << feature;
    EXPECT_EQ(md5(feature), hex64(field(row, "md5"))) << "second use of the context";
    ++checked;
  });
  EXPECT_GE(checked, 20u);
}

}  // namespace
}  // namespace simdup
