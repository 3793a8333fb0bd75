// normalizer_pair gives exactly what two normalizers give, whether it normalises once (the
// fingerprint's text made from verification's) or twice; random texts mix the characters where
// the steps interact: punctuation and symbols that NFKC maps to letters or letters to
// punctuation, combining marks after punctuation, digits between t2s phrase characters,
// invalid UTF-8, HTML.
#include <simdup/normalize.hpp>
#include <simdup/normalizer_pair.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace simdup {
namespace {

// The dedup job's verification options made from a fingerprint's (verify_normalize_options).
normalize_options verification_of(normalize_options o) {
  o.strip_punctuation = false;
  o.strip_digits = false;
  o.collapse_whitespace = true;
  o.cjk_content = true;
  return o;
}

const std::vector<std::string>& pieces() {
  static const std::vector<std::string> p = {"word",
                                             "Straße",
                                             " ",
                                             "  ",
                                             "\t\n",
                                             "\x7f",
                                             "\x01",
                                             ",",
                                             "!",
                                             "-",
                                             "'",
                                             "1",
                                             "42",
                                             "\xe2\x84\x83",  // ℃ (So -> °c)
                                             "\xe2\x91\xb4",  // ⑴ (No -> "(1)")
                                             "\xef\xac\x81",  // ﬁ
                                             "\xef\xbc\xa1",
                                             "\xef\xbc\x8c",
                                             "\xef\xbc\x91",  // Ａ ， １
                                             "!\xcc\x81",
                                             "e\xcc\x81",
                                             "\xcc\x81",  // combining acute after "!", "e", alone
                                             "\xc2\xb4",  // ´ (NFKC: space + combining acute)
                                             "\xe4\xb9\xbe\xe7\x87\xa5",  // 乾燥 (a t2s phrase)
                                             "\xe4\xb9\xbe",
                                             "\xe7\x87\xa5",
                                             "\xe8\x87\xba\xe7\x81\xa3",
                                             "\xe9\xab\x94",  // 乾 燥 臺灣 體
                                             "\xe4\xb8\xad\xe6\x96\x87",
                                             "\xe3\x80\x82",
                                             "\xe3\x80\x80",
                                             "\xe3\x80\x8c",  // 中文 。 　 「
                                             "\xe3\x82\xab\xe3\x83\x8a",
                                             "\xd9\xa3",  // カナ, Arabic-Indic three (Nd)
                                             "\xc2\xad",
                                             "\xe2\x80\x8b",
                                             "\xe2\x80\xa8",
                                             "\xc2\x85",  // soft hyphen, ZWSP, LS, NEL
                                             "\xef\xbf\xbd",
                                             "\xff",
                                             "\xc3",
                                             "\xe4\xb8",
                                             "\xed\xa0\x80",  // U+FFFD and invalid UTF-8
                                             "<p>",
                                             "<b>",
                                             "</b>",
                                             "&amp;",
                                             "&#x4e2d;",
                                             "&nbsp;",
                                             "<script>x</script>",
                                             std::string(1, '\0')};
  return p;
}

std::string random_text(std::mt19937& rng) {
  std::string text;
  const std::size_t n = rng() % 40;
  for (std::size_t i = 0; i < n; ++i) text += pieces()[rng() % pieces().size()];
  return text;
}

void expect_same_as_two_normalizers(const normalize_options& fingerprint, bool once) {
  const normalize_options verify = verification_of(fingerprint);
  auto pair = normalizer_pair::create(fingerprint, verify);
  auto f = normalizer::create(fingerprint);
  auto v = normalizer::create(verify);
  ASSERT_TRUE(pair && f && v);
  EXPECT_EQ(pair->normalizes_once(), once);
  std::mt19937 rng(20261126);
  std::string fingerprint_text, verify_text;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = random_text(rng);
    normalize_stats pair_stats, f_stats;
    pair->normalize(text, fingerprint_text, verify_text, &pair_stats);
    ASSERT_EQ(fingerprint_text, f->normalize(text, &f_stats)) << text;
    ASSERT_EQ(verify_text, v->normalize(text)) << text;
    ASSERT_EQ(pair_stats.invalid_utf8, f_stats.invalid_utf8) << text;
  }
}

TEST(NormalizerPair, DefaultsNormaliseOnceAndMatchTwoNormalizers) {
  expect_same_as_two_normalizers(normalize_options{}, true);
}

TEST(NormalizerPair, HtmlNormalisesOnceAndMatches) {
  normalize_options o;
  o.html = true;
  expect_same_as_two_normalizers(o, true);
}

TEST(NormalizerPair, OtherStepsOffNormaliseOnceAndMatch) {
  for (int off = 0; off < 4; ++off) {
    normalize_options o;
    o.nfkc = off != 0;
    o.casefold = off != 1;
    o.t2s = off != 2;
    o.strip_punctuation = off != 3;
    expect_same_as_two_normalizers(o, true);
  }
}

TEST(NormalizerPair, DigitsStrippedWithoutT2sNormaliseOnce) {
  normalize_options o;
  o.strip_digits = true;
  o.t2s = false;
  expect_same_as_two_normalizers(o, true);
}

// "乾1隆" loses its digit in the fingerprint's text, where t2s then sees the phrase 乾隆 (a
// name: 乾 stays); verification's text converts 乾 alone (to 干). A pass that strips the digit
// from verification's text would give 干隆: such options normalise twice.
TEST(NormalizerPair, DigitsStrippedWithT2sNormaliseTwice) {
  normalize_options o;
  o.strip_digits = true;
  expect_same_as_two_normalizers(o, false);
  auto f = normalizer::create(o);
  auto v = normalizer::create(verification_of(o));
  ASSERT_TRUE(f && v);
  const std::string text =
      "\xe4\xb9\xbe"
      "1"
      "\xe9\x9a\x86";                                         // 乾1隆
  EXPECT_EQ(f->normalize(text), "\xe4\xb9\xbe\xe9\x9a\x86");  // 乾隆
  EXPECT_EQ(v->normalize(text),
            "\xe5\xb9\xb2"
            "1"
            "\xe9\x9a\x86");  // 干1隆
}

TEST(NormalizerPair, WhitespaceKeptNormalisesTwice) {
  normalize_options o;
  o.collapse_whitespace = false;
  expect_same_as_two_normalizers(o, false);
}

}  // namespace
}  // namespace simdup
