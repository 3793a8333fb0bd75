#include <gtest/gtest.h>
#include <simdup/fingerprint.hpp>

#include "features/golden_io.hpp"
#include "features/python_simhash.hpp"

#include <vector>

namespace simdup {
namespace {

using testing::field;
using testing::hex64;

fingerprinter make_compat() {
  fingerprint_options o;
  o.compat = compat_mode::python_simhash;
  auto fp = fingerprinter::create(o);
  EXPECT_TRUE(fp);
  return std::move(*fp);
}

std::string lower(std::string_view s) {
  std::string out;
  detail::python_lower(s, out);
  return out;
}

std::string prepare(std::string_view s) {
  std::string out;
  detail::python_simhash_prepare(s, out);
  return out;
}

TEST(PythonLower, MatchesStrLower) {
  EXPECT_EQ(lower("HeLLo ÀÉÎ"), "hello àéî");
  EXPECT_EQ(lower("İ"), "i\u0307");  // the one multi-code-point lowercase mapping
  EXPECT_EQ(lower("ΟΔΟΣ"), "οδος");  // final sigma
  EXPECT_EQ(lower("ΟΔΟΣ ΟΔΟΣ."), "οδος οδος.");
  EXPECT_EQ(lower("Σ"), "σ");              // no cased letter before it
  EXPECT_EQ(lower("ΣΑΣ.ΣΑΣ"), "σασ.σας");  // "." is case-ignorable: a letter follows
  EXPECT_EQ(lower("ΑΣ'Α"), "ασ'α");        // the apostrophe is case-ignorable: a letter follows
  EXPECT_EQ(lower("ǅ"), "ǆ");
  EXPECT_EQ(lower("ⓐΣ"), "ⓐς");  // circled letters are cased
  EXPECT_EQ(lower("ʰΣ"), "ʰσ");  // modifier letters are case-ignorable
}

TEST(PythonSimhashPrepare, KeepsOnlyWordCharacters) {
  EXPECT_EQ(prepare("Hello, World!"), "helloworld");
  EXPECT_EQ(prepare("snake_case 42"), "snake_case42");
  EXPECT_EQ(prepare("Cafe\u0301"), "cafe");  // combining marks are not \w
  EXPECT_EQ(prepare("x² ½"), "x²½");         // No is numeric
  EXPECT_EQ(prepare("你好，世界！"), "你好世界");
  EXPECT_EQ(prepare("ＡＢＣ"), "ａｂｃ");  // no NFKC in the package
  EXPECT_EQ(prepare("😀!"), "");
}

TEST(PythonSimhash, MatchesEveryGoldenVector) {
  const fingerprinter fp = make_compat();
  std::size_t texts = 0, feature_lists = 0;
  testing::for_each_golden_row("python_simhash.jsonl", [&](simdjson::dom::element row) {
    const uint64_t expected = hex64(field(row, "fingerprint"));
    std::string_view text;
    if (!row["text"].get(text)) {
      const auto r = fp.fingerprint(text);
      EXPECT_EQ(to_hex(r.fingerprint), to_hex(expected)) << "text: " << text;
      ++texts;
      return;
    }
    simdjson::dom::array features;
    ASSERT_FALSE(row["features"].get(features));
    std::vector<weighted_feature> supplied;
    for (simdjson::dom::element f : features) {
      std::string_view token;
      if (!f.get(token)) {
        supplied.push_back({std::string(token), 1.0});
      } else {
        simdjson::dom::array pair = f.get_array();
        supplied.push_back(
            {std::string(pair.at(0).get_string().value()), pair.at(1).get_double().value()});
      }
    }
    EXPECT_EQ(to_hex(fp.fingerprint_features(supplied).fingerprint), to_hex(expected))
        << simdjson::minify(row);
    ++feature_lists;
  });
  EXPECT_GE(texts, 90u);
  EXPECT_GE(feature_lists, 10u);
}

TEST(PythonSimhash, EmptyTextKeepsPythonValueButIsTooShort) {
  const fingerprinter fp = make_compat();
  for (const char* text : {"", "!!!", "😀 ..."}) {
    const auto r = fp.fingerprint(text);
    EXPECT_EQ(r.status, fingerprint_status::too_short) << text;
    EXPECT_EQ(r.fingerprint, 0xe9800998ecf8427eULL) << text;  // the one feature ''
  }
  const auto ok = fp.fingerprint("ab");
  EXPECT_EQ(ok.status, fingerprint_status::ok);
  EXPECT_EQ(ok.features, 1u);
}

TEST(PythonSimhash, DistinctShinglesAreCounted) {
  const fingerprinter fp = make_compat();
  // "aaaaaa" -> shingles aaaa x3: one distinct feature with weight 3.
  EXPECT_EQ(fp.fingerprint("aaaaaa").features, 1u);
  const auto feats = fp.features("aaaaab");
  ASSERT_EQ(feats.size(), 2u);
  EXPECT_EQ(feats[0].text, "aaaa");
  EXPECT_EQ(feats[0].weight, 2);
  EXPECT_EQ(feats[1].text, "aaab");
}

TEST(PythonSimhash, InvalidUtf8IsReplacedAndCounted) {
  const fingerprinter fp = make_compat();
  const auto r = fp.fingerprint(
      "ab\xff\xfe"
      "cd");
  EXPECT_EQ(r.invalid_utf8, 2u);
  EXPECT_EQ(r.fingerprint, fp.fingerprint("abcd").fingerprint);  // U+FFFD is not \w
}

TEST(PythonSimhash, NonPositiveIntegralWeightsOnlyCountTowardsTheTotal) {
  const fingerprinter fp = make_compat();
  // Python repeats the digest w times: w = 0 or -2 adds nothing to the bit sums.
  const std::vector<weighted_feature> with_zero{{"a", 3}, {"b", 0}};
  const std::vector<weighted_feature> alone{{"a", 3}};
  EXPECT_EQ(fp.fingerprint_features(with_zero).fingerprint,
            fp.fingerprint_features(alone).fingerprint);
  const std::vector<weighted_feature> negative{{"a", 3}, {"b", -2}};
  // Total 1: bits set in "a" sum to 3 > 0.5, the others to 0, so the result is a's hash.
  EXPECT_EQ(fp.fingerprint_features(negative).fingerprint, hash_feature(hash_kind::md5, "a"));
}

}  // namespace
}  // namespace simdup
