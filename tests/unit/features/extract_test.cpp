#include <gtest/gtest.h>

#include "features/extract.hpp"

#include <string>
#include <vector>

namespace simdup::detail {
namespace {

std::vector<std::string> shingles(std::string_view text, std::size_t width) {
  std::vector<std::string> out;
  for_each_shingle(text, width, [&](std::string_view s) { out.emplace_back(s); });
  return out;
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string_view> views;
  split_words(text, views);
  return {views.begin(), views.end()};
}

using list = std::vector<std::string>;

TEST(Shingles, OverlappingCodePointWindowsIncludingSpaces) {
  EXPECT_EQ(shingles("hello world", 4),
            (list{"hell", "ello", "llo ", "lo w", "o wo", " wor", "worl", "orld"}));
  EXPECT_EQ(shingles("abc", 1), (list{"a", "b", "c"}));
}

TEST(Shingles, CountCodePointsNotBytes) {
  EXPECT_EQ(shingles("中文特征提取", 4), (list{"中文特征", "文特征提", "特征提取"}));
  EXPECT_EQ(shingles("é😀ab", 2), (list{"é😀", "😀a", "ab"}));
}

TEST(Shingles, ShortTextIsOneFeatureAndEmptyIsNone) {
  EXPECT_EQ(shingles("abc", 4), (list{"abc"}));
  EXPECT_EQ(shingles("abcd", 4), (list{"abcd"}));
  EXPECT_EQ(shingles("中文", 4), (list{"中文"}));
  EXPECT_TRUE(shingles("", 4).empty());
}

// Reference: decode to code points, slide, re-encode. Exercises the ASCII-run fast path at
// every mix of ASCII and multi-byte code points.
TEST(Shingles, MatchNaiveSlidingWindowOnMixedText) {
  const std::string text = "ab中c d😀efgh ij é kl中文字mnopq rstuvwx中 yz";
  std::vector<std::string> cps;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_lead_length(static_cast<unsigned char>(text[i]));
    cps.push_back(text.substr(i, len));
    i += len;
  }
  for (std::size_t width = 1; width <= 7; ++width) {
    list expected;
    for (std::size_t i = 0; i + width <= cps.size(); ++i) {
      std::string s;
      for (std::size_t k = 0; k < width; ++k) s += cps[i + k];
      expected.push_back(s);
    }
    EXPECT_EQ(shingles(text, width), expected) << "width " << width;
  }
}

TEST(Shingles, StrayBytesAlwaysAdvance) {
  // Not produced by the normaliser, but a scan must terminate on anything.
  EXPECT_EQ(shingles("\x80\xe4", 1).size(), 2u);
  EXPECT_EQ(shingles("a\xf0", 2), (list{"a\xf0"}));
}

TEST(Words, LettersDigitsAndMarksFormWords) {
  EXPECT_EQ(words("Hello, world! It's 2024."), (list{"Hello", "world", "It", "s", "2024"}));
  EXPECT_EQ(words("cafe\u0301 na\u00efve"), (list{"cafe\u0301", "na\u00efve"}));
  EXPECT_EQ(words("snake_case"), (list{"snake", "case"}));
  EXPECT_TRUE(words("  ...  ").empty());
}

TEST(Words, EachCjkIdeographIsAWord) {
  EXPECT_EQ(words("我爱北京 abc天安门"), (list{"我", "爱", "北", "京", "abc", "天", "安", "门"}));
  EXPECT_EQ(words("ひらがな"), (list{"ひらがな"}));  // kana are letters, not ideographs
}

TEST(WordNgrams, JoinedByOneSpace) {
  std::vector<std::string_view> w{"a", "quick", "brown", "fox"};
  std::vector<std::string> out;
  word_ngrams(w, 2, out);
  EXPECT_EQ(out, (list{"a quick", "quick brown", "brown fox"}));
  out.clear();
  word_ngrams(w, 3, out);
  EXPECT_EQ(out, (list{"a quick brown", "quick brown fox"}));
}

TEST(WordNgrams, FewerWordsThanNGiveOneNgram) {
  std::vector<std::string_view> w{"only", "two"};
  std::vector<std::string> out;
  word_ngrams(w, 3, out);
  EXPECT_EQ(out, (list{"only two"}));
  out.clear();
  word_ngrams({}, 2, out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace simdup::detail
