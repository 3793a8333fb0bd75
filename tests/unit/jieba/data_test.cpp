// Loading: default location, missing and corrupt files, user dictionary errors.
#include <simdup/jieba.hpp>

#include "jieba_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace simdup {
namespace {

namespace fs = std::filesystem;

class JiebaData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("simdup-jieba-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string original() const { return jieba_data_dir("") + "/jieba.bin"; }

  std::string read_original() const {
    std::ifstream in(original(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string write(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  result<std::shared_ptr<const jieba_segmenter>> load(const std::string& dict) const {
    jieba_options o;
    o.dict = dict;
    return jieba_segmenter::create(o);
  }

  fs::path dir_;
};

TEST_F(JiebaData, PathResolution) {
  EXPECT_EQ(jieba_data_dir("/x/y/jieba.bin"), "/x/y");
  EXPECT_EQ(jieba_data_dir("/x/y"), "/x/y");
  EXPECT_EQ(jieba_data_dir(""), jieba_default_dir());
  const char* old = std::getenv("SIMDUP_JIEBA_DIR");
  const std::string saved = old ? old : "";
  ::setenv("SIMDUP_JIEBA_DIR", dir_.c_str(), 1);
  EXPECT_EQ(jieba_default_dir(), dir_.string());
  if (old)
    ::setenv("SIMDUP_JIEBA_DIR", saved.c_str(), 1);
  else
    ::unsetenv("SIMDUP_JIEBA_DIR");
}

TEST_F(JiebaData, LoadsFromDirectoryOrFile) {
  auto a = load(jieba_data_dir(""));
  ASSERT_TRUE(a) << a.error().message;
  auto b = load(original());
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ((*a)->total(), (*b)->total());
}

TEST_F(JiebaData, MissingDictionaryIsNotFoundNamingTheFile) {
  auto r = load((dir_ / "nowhere").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, errc::not_found);
  EXPECT_NE(r.error().message.find((dir_ / "nowhere" / "jieba.bin").string()), std::string::npos);
}

TEST_F(JiebaData, CorruptDictionariesAreRejectedNamingTheFile) {
  const std::string good = read_original();
  ASSERT_GT(good.size(), 1000u);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  std::string bad_version = good;
  bad_version[8] = 99;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"text", "这不是词典 1 n\n"},
      {"truncated", good.substr(0, good.size() / 3)},
      {"header-only", good.substr(0, 24)},
      {"flipped", flipped},
      {"version", bad_version},
      {"padded", good + "x"},
  };
  for (const auto& [name, bytes] : cases) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    std::ofstream(d / "jieba.bin", std::ios::binary) << bytes;
    auto r = load(d.string());
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code, errc::corrupt_data) << name;
    EXPECT_NE(r.error().message.find((d / "jieba.bin").string()), std::string::npos) << name;
  }
}

TEST_F(JiebaData, UserDictionaryErrors) {
  jieba_options o;
  o.user_dicts = {(dir_ / "missing.txt").string()};
  auto missing = jieba_segmenter::create(o);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, errc::not_found);
  EXPECT_NE(missing.error().message.find("missing.txt"), std::string::npos);

  o.user_dicts = {write("bad.txt", "好词 3\n坏\xff词 2 n\n")};
  auto bad = jieba_segmenter::create(o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::invalid_input);
  EXPECT_NE(bad.error().message.find("bad.txt:2"), std::string::npos) << bad.error().message;

  o.user_dicts = {write("huge.txt", "好词 99999999999999999999999\n")};
  auto huge = jieba_segmenter::create(o);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, errc::invalid_input);
}

TEST_F(JiebaData, UserDictionaryLinesInJiebaFormat) {
  jieba_options o;
  // BOM, CRLF, blank lines, a word with a space, a tag without a frequency.
  o.user_dicts = {write("u.txt", "\xEF\xBB\xBF词典甲 7 n\r\n\r\n\n大 数据 12\n乙丙丁 nz\n")};
  auto seg = jieba_segmenter::create(o);
  ASSERT_TRUE(seg) << seg.error().message;
  EXPECT_EQ((*seg)->frequency("词典甲"), 7u);
  EXPECT_EQ((*seg)->frequency("大 数据"), 12u);
  EXPECT_EQ((*seg)->frequency("乙丙丁"), 1u);  // jieba's suggest_freq; checked with Python
  // What Python jieba says with this dictionary: the words are known, but the route prefers
  // 词典 + an HMM word.
  EXPECT_EQ(test::cut(**seg, "词典甲乙丙丁"), (std::vector<std::string>{"词典", "甲乙丙丁"}));
}

}  // namespace
}  // namespace simdup
