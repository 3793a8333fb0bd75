// compat jieba-tfidf through the public fingerprinter: extract_tags' keywords and weights.
#include <simdup/fingerprint.hpp>

#include "jieba_test_util.hpp"

#include <gtest/gtest.h>

namespace simdup {
namespace {

TEST(JiebaKeywords, MatchExtractTagsGolden) {
  fingerprint_options o;
  o.compat = compat_mode::jieba_tfidf;
  o.weighting.top_k = 20;
  auto fp = fingerprinter::create(o);
  ASSERT_TRUE(fp) << fp.error().message;
  for (simdjson::dom::element c : test::jieba_golden()["keywords"].get_array()) {
    simdjson::dom::array pair = c.get_array();
    const std::string text(std::string_view(pair.at(0).get_string()));
    std::vector<weighted_feature> expected;
    for (simdjson::dom::element kw : pair.at(1).get_array()) {
      simdjson::dom::array a = kw.get_array();
      expected.push_back(
          {std::string(std::string_view(a.at(0).get_string())), double(a.at(1).get_double())});
    }
    const auto got = fp->features(text);
    ASSERT_EQ(got.size(), expected.size()) << text;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].text, expected[i].text) << text;
      EXPECT_EQ(got[i].weight, expected[i].weight) << got[i].text;  // bit for bit
    }
    const auto r = fp->fingerprint(text);
    EXPECT_EQ(r.status, fingerprint_status::ok);
    EXPECT_EQ(r.features, expected.size());
    EXPECT_EQ(r.fingerprint, fp->fingerprint_features(expected).fingerprint);
  }
}

TEST(JiebaKeywords, TextWithoutKeywordsIsTooShort) {
  fingerprint_options o;
  o.compat = compat_mode::jieba_tfidf;
  auto fp = fingerprinter::create(o);
  ASSERT_TRUE(fp) << fp.error().message;
  for (const char* text : {"", "的了是", "，。！", "the of and", "\xff\xfe"}) {
    const auto r = fp->fingerprint(text);
    EXPECT_EQ(r.status, fingerprint_status::too_short) << text;
    EXPECT_EQ(r.fingerprint, 0u);
  }
}

TEST(JiebaKeywords, JiebaFeatureKindCountsNormalisedWords) {
  fingerprint_options o;
  o.features.kind = feature_kind::jieba;
  auto fp = fingerprinter::create(o);
  ASSERT_TRUE(fp) << fp.error().message;
  const auto f = fp->features("我来到北京清华大学，北京欢迎你");
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].text, "北京");
  EXPECT_EQ(f[0].weight, 2);
}

}  // namespace
}  // namespace simdup
