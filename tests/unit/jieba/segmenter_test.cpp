#include <simdup/jieba.hpp>
#include "test_paths.hpp"

#include "jieba_test_util.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>

namespace simdup {
namespace {

using test::cut;
using test::default_jieba;
using test::golden_cases;

std::string join(const std::vector<std::string>& words) {
  return std::accumulate(words.begin(), words.end(), std::string());
}

TEST(JiebaSegmenter, MatchesPythonJiebaWithHmm) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  for (const auto& [text, words] : golden_cases("hmm")) EXPECT_EQ(cut(*seg, text), words) << text;
}

TEST(JiebaSegmenter, MatchesPythonJiebaWithoutHmm) {
  jieba_options o;
  o.hmm = false;
  auto seg = jieba_segmenter::create(o);
  ASSERT_TRUE(seg) << seg.error().message;
  for (const auto& [text, words] : golden_cases("no_hmm"))
    EXPECT_EQ(cut(**seg, text), words) << text;
}

TEST(JiebaSegmenter, DictionaryTotalMatchesPython) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  EXPECT_EQ(seg->total(), test::jieba_golden()["total"].get_uint64().value());
  EXPECT_GT(seg->frequency("北京"), 0u);
  EXPECT_EQ(seg->frequency("北京大"), 0u);  // a prefix of 北京大学, not a word
  EXPECT_EQ(seg->frequency("不是一个词语吧"), 0u);
  EXPECT_EQ(seg->frequency(""), 0u);
}

TEST(JiebaSegmenter, UserDictionaryMatchesPython) {
  jieba_options o;
  o.user_dicts.push_back(std::string(SIMDUP_TEST_DATA_DIR) + "/golden/jieba/userdict.txt");
  auto seg = jieba_segmenter::create(o);
  ASSERT_TRUE(seg) << seg.error().message;
  for (const auto& [text, words] : golden_cases("user")) EXPECT_EQ(cut(**seg, text), words) << text;
  for (auto [word, freq] : test::jieba_golden()["user_freq"].get_object()) {
    EXPECT_EQ((*seg)->frequency(word), freq.get_uint64().value()) << word;
  }
  EXPECT_EQ((*seg)->total(), test::jieba_golden()["user_total"].get_uint64().value());
}

TEST(JiebaSegmenter, WordsCoverTheInputExactly) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  for (const auto& [text, words] : golden_cases("hmm")) EXPECT_EQ(join(cut(*seg, text)), text);
}

TEST(JiebaSegmenter, InvalidUtf8BytesAreWordsOfTheirOwn) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  // Two stray bytes, a truncated sequence, an encoded surrogate, a truncated emoji.
  const std::string text =
      "北京\xff\xfe大学\xe4\xb8"
      "abc\xed\xa0\x80\xf0\x9f\x98";
  const std::vector<std::string> words = cut(*seg, text);
  EXPECT_EQ(join(words), text);
  EXPECT_EQ(words[0], "北京");
  EXPECT_EQ(words[1], "\xff");
  EXPECT_EQ(words[2], "\xfe");
  EXPECT_EQ(words[3], "大学");
  EXPECT_EQ(words[4], "\xe4");  // a truncated sequence: each byte alone
  EXPECT_EQ(words[5], "\xb8");
  EXPECT_EQ(words[6], "abc");
  EXPECT_EQ(words.size(), 7u + 3u + 3u);
}

TEST(JiebaSegmenter, NulAndControlCharactersAreWords) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  const std::string text("中国\0人民\x01", 14);
  EXPECT_EQ(cut(*seg, text),
            (std::vector<std::string>{"中国", std::string(1, '\0'), "人民", "\x01"}));
}

// A document without punctuation is one block for jieba. It is routed in bounded pieces cut
// where no dictionary word crosses, so time is linear and memory bounded; the words still
// cover the input and look like those of short text.
TEST(JiebaSegmenter, HugeDocumentWithoutPunctuation) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  const std::string sentence = "我们研究自然语言处理和中文分词技术在搜索引擎中的应用";
  std::string text;
  const std::size_t target = 50'000'000;
  while (text.size() < target) text += sentence;
  std::vector<std::string_view> words;
  seg->segment(text, words);
  std::size_t bytes = 0;
  for (std::string_view w : words) {
    ASSERT_EQ(w.data(), text.data() + bytes);
    bytes += w.size();
  }
  EXPECT_EQ(bytes, text.size());
  const std::vector<std::string> once = cut(*seg, sentence);
  EXPECT_EQ(std::vector<std::string>(words.begin(), words.begin() + once.size()), once);
}

TEST(JiebaSegmenter, SafeToUseFromManyThreads) {
  auto seg = default_jieba();
  ASSERT_TRUE(seg);
  const auto cases = golden_cases("hmm");
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        for (const auto& [text, words] : cases) failures[t] += cut(*seg, text) != words;
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

}  // namespace
}  // namespace simdup
