#include <gtest/gtest.h>
#include <simdup/fingerprint.hpp>

#include "features/golden_io.hpp"
#include "features/python_simhash.hpp"

#include <simdup/utf8.hpp>

#include <optional>
#include <string>
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

// The code points of UTF-8 `s` as UCS-2 (how Python stores it), or nothing when one is beyond
// U+FFFF.
std::optional<std::u16string> ucs2(std::string_view s) {
  std::u16string out;
  std::size_t invalid = 0;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t c = utf8::decode(s, i, invalid);
    if (c > 0xffff) return std::nullopt;
    out.push_back(static_cast<char16_t>(c));
  }
  return out;
}

std::string prepare_ucs2(std::u16string_view s) {
  std::string out;
  detail::python_simhash_prepare_ucs2(s, out);
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

TEST(PythonLower, TextWithAndWithoutCapitalSigmaAgree) {
  // Text without U+03A3 streams; text with it is lowered with context on both sides.
  EXPECT_EQ(lower("İSTANBUL 中文 ΑΒΓ"), "i\u0307stanbul 中文 αβγ");
  EXPECT_EQ(lower("İSTANBUL 中文 ΟΔΟΣ"), "i\u0307stanbul 中文 οδος");
  EXPECT_EQ(lower("\xff"
                  "AB\xce"),
            "\ufffdab\ufffd");  // a lone CE is not a sigma
  EXPECT_EQ(lower("\xff"
                  "AB\xce\xa3"),
            "\ufffdabς");
}

TEST(PythonLower, AppendsAndGrowsPastTheInputSize) {
  std::string out = "x";
  detail::python_lower("AB", out);
  EXPECT_EQ(out, "xab");
  // Every invalid byte becomes a 3-byte U+FFFD: three times the input.
  const std::string invalid(1000, '\xff');
  std::string expected;
  for (int i = 0; i < 1000; ++i) expected += "\ufffd";
  EXPECT_EQ(lower(invalid), expected);
  std::string word = "w";
  detail::python_simhash_prepare("İ" + invalid + "Z", word);
  EXPECT_EQ(word, "wiz");  // U+0307 and U+FFFD are not \w
}

TEST(PythonSimhashPrepare, KeepsKanaAndIdeographs) {
  // From Python 3: ''.join(re.findall(r'[\w\u4e00-\u9fcc]+', text.lower())).
  EXPECT_EQ(prepare("カタカナ、ひらがな。漢字ー〇"), "カタカナひらがな漢字ー〇");
  EXPECT_EQ(prepare("〇〡〸㐀䶵鿌鿍"), "〇〡〸㐀䶵鿌鿍");
}

TEST(PythonSimhash, FingerprintMatchesTheWeightedPathColdAndWarm) {
  // The fingerprint hashes shingles through a per-thread cache and batched MD5; the weighted path
  // hashes each supplied feature directly. Thousands of distinct shingles fill whole batches,
  // leave a partial one and collide in the cache.
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += "词" + std::to_string(i * 7919 % 10007) + (i % 5 == 0 ? "文本" : "");
  }
  for (const std::string& t : {text, text.substr(0, 91), text, std::string("abcde")}) {
    std::string prepared;
    detail::python_simhash_prepare(t, prepared);
    detail::count_map counts;
    detail::python_simhash_shingles(prepared, counts);
    std::vector<weighted_feature> features;
    for (const auto& e : counts.entries())
      features.push_back({std::string(e.key), static_cast<double>(e.count)});
    const auto counted = detail::python_simhash_fingerprint(prepared);
    EXPECT_EQ(to_hex(counted.fingerprint), to_hex(detail::python_simhash_weighted(features)))
        << t.size() << " bytes";
    EXPECT_EQ(counted.features, counts.entries().size());
  }
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

TEST(PythonSimhashPrepare, Ucs2MatchesUtf8) {
  for (const char* text :
       {"Hello, World! snake_case 42", "İSTANBUL 中文 ΟΔΟΣ ΣΑΣ.ΣΑΣ", "ΑΣ'Α ⓐΣ ʰΣ",
        "カタカナ、ひらがな。漢字ー〇", "Cafe\u0301 x² ½ ＡＢＣ", "“quoted” — dash"}) {
    EXPECT_EQ(prepare_ucs2(*ucs2(text)), prepare(text)) << text;
  }
  // Python keeps a lone surrogate as a code point; it is not a word character, here or there.
  EXPECT_EQ(prepare_ucs2(u"ab\xd800"
                         u"cd"),
            "abcd");
  EXPECT_EQ(prepare_ucs2(u"\xdc00\x03a3\xd800"), "σ");  // neither side is cased
  EXPECT_EQ(prepare_ucs2(u"A\x03a3\xd800"), "aς");
  std::string out = "x";
  detail::python_simhash_prepare_ucs2(u"AB", out);
  EXPECT_EQ(out, "xab");  // appends
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
      EXPECT_EQ(to_hex(python_simhash_value(text)), to_hex(expected)) << "text: " << text;
      if (const auto units = ucs2(text)) {
        EXPECT_EQ(to_hex(python_simhash_value(*units)), to_hex(expected)) << "UCS-2: " << text;
      }
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
