// Without clang's libFuzzer: replays the corpora of fuzz/jieba_dict_fuzz.cpp,
// fuzz/user_dict_fuzz.cpp and fuzz/weight_files_fuzz.cpp and random mutations of them through
// their checks (fuzz/jieba_fuzz_check.hpp), under the sanitizers of the unit test build.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "../../../fuzz/jieba_fuzz_check.hpp"
#include "support/fuzz_replay.hpp"

namespace simdup::fuzz {
namespace {

using simdup::test_support::mutate;
using simdup::test_support::read_fuzz_corpus;

const std::string kJiebaTokens[] = {"\n",
                                    " ",
                                    "\t",
                                    "\r\n",
                                    "0",
                                    " 9",
                                    " n",
                                    "99999999999999999999",
                                    "\xef\xbb\xbf",
                                    "\xff",
                                    "\xe4\xb8",
                                    "中文",
                                    "分词",
                                    "nan",
                                    "1e308",
                                    "-1e308",
                                    "inf",
                                    std::string(4, '\0'),
                                    std::string(8, '\xff')};

TEST(JiebaFuzz, SmallDictionaryLoads) {
  const shm_dir dir;
  dir.write("jieba.bin", jieba_bin::small());
  jieba_options o;
  o.dict = dir.path();
  auto seg = jieba_segmenter::create(o);
  ASSERT_TRUE(seg) << seg.error().message;
  EXPECT_EQ((*seg)->frequency("自然语言"), 35u);
  std::vector<std::string_view> words;
  (*seg)->segment("自然语言", words);
  EXPECT_EQ(words, std::vector<std::string_view>({"自然语言"}));
}

// Found by fuzz/jieba_dict_fuzz.cpp: a word count beyond what the file can hold (here 2^24,
// with the CRC fixed) sized the frequency table before the truncation was noticed: 128 MiB
// here, 32 GiB for 2^32. It is refused first.
TEST(JiebaFuzz, WordCountLargerThanTheFileIsRefusedBeforeAllocating) {
  std::string bin = jieba_bin::small();
  const uint32_t count = 1u << 24;
  std::memcpy(bin.data() + 24 + 8, &count, 4);  // header, then total (u64), then the count
  ASSERT_TRUE(jieba_bin::refresh(bin));
  const shm_dir dir;
  dir.write("jieba.bin", bin);
  jieba_options o;
  o.dict = dir.path();
  auto seg = jieba_segmenter::create(o);
  ASSERT_FALSE(seg);
  EXPECT_EQ(seg.error().code, errc::corrupt_data);
  EXPECT_NE(seg.error().message.find("word count larger than the file"), std::string::npos)
      << seg.error().message;
}

TEST(JiebaFuzz, DictionaryCorpusAndMutations) {
  const shm_dir dir;
  const auto inputs = read_fuzz_corpus("jieba_dict");
  ASSERT_GE(inputs.size(), 2u);
  for (const auto& in : inputs) EXPECT_EQ(check_jieba_dict(in, dir), "");
  std::mt19937 rng(20261125);
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string s = mutate(inputs[rng() % inputs.size()], kJiebaTokens, rng, 16);
    ASSERT_EQ(check_jieba_dict(s, dir), "") << "iteration " << iter;
  }
}

TEST(JiebaFuzz, UserDictionaryCorpusAndMutations) {
  const auto inputs = read_fuzz_corpus("user_dict");
  ASSERT_GE(inputs.size(), 3u);
  for (const auto& in : inputs) EXPECT_EQ(check_user_dict(in), "") << in;
  std::mt19937 rng(20261126);
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string s = mutate(inputs[rng() % inputs.size()], kJiebaTokens, rng, 32);
    ASSERT_EQ(check_user_dict(s), "") << "input: " << s;
  }
}

TEST(JiebaFuzz, WeightFilesCorpusAndMutations) {
  const auto inputs = read_fuzz_corpus("weight_files");
  ASSERT_GE(inputs.size(), 3u);
  for (const auto& in : inputs) EXPECT_EQ(check_weight_files(in), "") << in;
  std::mt19937 rng(20261127);
  for (int iter = 0; iter < 1000; ++iter) {
    const std::string s = mutate(inputs[rng() % inputs.size()], kJiebaTokens, rng, 32);
    ASSERT_EQ(check_weight_files(s), "") << "input: " << s;
  }
}

}  // namespace
}  // namespace simdup::fuzz
