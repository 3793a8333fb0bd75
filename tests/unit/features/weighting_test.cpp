#include <gtest/gtest.h>

#include "features/weighting.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace simdup::detail {
namespace {

class Weighting : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("simdup_weighting_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  static std::vector<feature_view> weigh(const feature_weigher& w,
                                         std::vector<std::string_view> tokens) {
    std::vector<feature_view> out;
    w.weigh(tokens, true, out);
    return out;
  }

  std::filesystem::path dir_;
};

feature_weigher make(const weighting_options& o, std::size_t min_len = 1) {
  auto w = feature_weigher::create(o, min_len);
  EXPECT_TRUE(w) << w.error().message;
  return std::move(*w);
}

TEST_F(Weighting, CountIsOccurrencesHeaviestFirst) {
  const auto out = weigh(make({}), {"b", "a", "b", "c", "b", "a"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, "b");
  EXPECT_EQ(out[0].weight, 3);
  EXPECT_EQ(out[1].text, "a");
  EXPECT_EQ(out[1].weight, 2);
  EXPECT_EQ(out[2].text, "c");
  EXPECT_EQ(out[2].weight, 1);
}

TEST_F(Weighting, BinaryIsOnePerDistinctFeatureInFirstOccurrenceOrder) {
  weighting_options o;
  o.scheme = weighting_scheme::binary;
  const auto out = weigh(make(o), {"b", "a", "b", "c"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].text, "b");
  EXPECT_EQ(out[1].text, "a");
  EXPECT_EQ(out[2].text, "c");
  for (const auto& f : out) EXPECT_EQ(f.weight, 1);
}

TEST_F(Weighting, TopKKeepsHeaviestWithTiesInFirstOccurrenceOrder) {
  weighting_options o;
  o.top_k = 2;
  // x, y, z all occur twice; w once. Ties keep first occurrence order: y before x before z.
  const auto out = weigh(make(o), {"w", "y", "x", "y", "z", "x", "z"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "y");
  EXPECT_EQ(out[1].text, "x");
}

TEST_F(Weighting, TfidfFollowsExtractTags) {
  weighting_options o;
  o.scheme = weighting_scheme::tfidf;
  // Sorted IDFs 1, 2, 4, 8: the median is the value at index 4 / 2 = 2, i.e. 4.
  o.idf_path = write("idf.txt", "apple 2.0\nbanana 8\n\ncherry 1\ndate 3\ndate 4\n");
  const auto out = weigh(make(o), {"apple", "unknown", "apple", "banana"});
  ASSERT_EQ(out.size(), 3u);
  // total = 4 kept tokens; weight = count * (idf / total)
  EXPECT_EQ(out[0].text, "banana");
  EXPECT_DOUBLE_EQ(out[0].weight, 1 * (8.0 / 4));
  EXPECT_EQ(out[1].text, "apple");
  EXPECT_DOUBLE_EQ(out[1].weight, 2 * (2.0 / 4));
  EXPECT_EQ(out[2].text, "unknown");
  EXPECT_DOUBLE_EQ(out[2].weight, 1 * (4.0 / 4));  // the median; "date" is 4 (last line wins)

  o.unknown_idf = 10;
  const auto fixed = weigh(make(o), {"unknown", "apple"});
  EXPECT_EQ(fixed[0].text, "unknown");
  EXPECT_DOUBLE_EQ(fixed[0].weight, 10.0 / 2);
}

TEST_F(Weighting, StopWordsAreCaseInsensitiveAndMinLengthCountsCodePoints) {
  weighting_options o;
  o.stopwords_path = write("stop.txt", "The\n  of \n\n");
  const auto w = make(o, 2);
  EXPECT_FALSE(w.keep("the"));
  EXPECT_FALSE(w.keep("THE"));
  EXPECT_FALSE(w.keep("of"));
  EXPECT_TRUE(w.keep("cat"));
  EXPECT_FALSE(w.keep("a"));    // 1 code point
  EXPECT_TRUE(w.keep("中文"));  // 2 code points, 6 bytes
  EXPECT_FALSE(w.keep("中"));
  EXPECT_FALSE(w.keep(" x "));  // trimmed to 1 code point
  const auto out = weigh(w, {"The", "cat", "of", "a", "cat"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "cat");
  EXPECT_EQ(out[0].weight, 2);
}

TEST_F(Weighting, WhitespaceTokensAreAlwaysDropped) {
  const auto w = make({});
  EXPECT_FALSE(w.keep(" "));
  EXPECT_FALSE(w.keep("\t\n"));
  EXPECT_TRUE(w.keep("a"));
}

TEST_F(Weighting, MissingFilesAreNotFoundNamingThePath) {
  weighting_options o;
  o.scheme = weighting_scheme::tfidf;
  o.idf_path = (dir_ / "no_such_idf.txt").string();
  auto w = feature_weigher::create(o, 1);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, errc::not_found);
  EXPECT_NE(w.error().message.find(o.idf_path), std::string::npos);

  weighting_options s;
  s.stopwords_path = (dir_ / "no_such_stop.txt").string();
  auto w2 = feature_weigher::create(s, 1);
  ASSERT_FALSE(w2);
  EXPECT_EQ(w2.error().code, errc::not_found);
  EXPECT_NE(w2.error().message.find(s.stopwords_path), std::string::npos);
}

TEST_F(Weighting, BadIdfLineNamesPathAndLine) {
  weighting_options o;
  o.scheme = weighting_scheme::tfidf;
  for (const char* bad : {"word\n", "word abc\n", "word 1.5x\n", "word inf\n"}) {
    o.idf_path = write("bad.txt", std::string("ok 1.0\n") + bad);
    auto w = feature_weigher::create(o, 1);
    ASSERT_FALSE(w) << bad;
    EXPECT_EQ(w.error().code, errc::invalid_input);
    EXPECT_NE(w.error().message.find(o.idf_path + ":2"), std::string::npos) << w.error().message;
  }
  o.idf_path = write("empty.txt", "\n\n");
  auto empty = feature_weigher::create(o, 1);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, errc::invalid_input);
}

TEST_F(Weighting, TfidfWithoutIdfFileIsInvalidArgument) {
  weighting_options o;
  o.scheme = weighting_scheme::tfidf;
  auto w = feature_weigher::create(o, 1);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, errc::invalid_argument);
}

}  // namespace
}  // namespace simdup::detail
