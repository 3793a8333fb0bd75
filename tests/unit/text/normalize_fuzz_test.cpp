// Without clang's libFuzzer: replays fuzz/corpus/normalize and random mutations of it through
// the checks of fuzz/normalize_fuzz.cpp, under the sanitizers of the unit test build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../../fuzz/normalize_fuzz_check.hpp"

namespace simdup::fuzz {
namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(SIMDUP_SOURCE_DIR "/fuzz/corpus/normalize")) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

const normalize_checker& checker() {
  static const normalize_checker c = [] {
    normalize_checker made;
    std::string error;
    EXPECT_TRUE(made.init(error)) << error;
    return made;
  }();
  return c;
}

TEST(NormalizeFuzz, CorpusKeepsInvariants) {
  const auto inputs = corpus();
  ASSERT_GE(inputs.size(), 8u);
  for (const auto& text : inputs) EXPECT_EQ(checker().check(text), "") << text;
}

TEST(NormalizeFuzz, RandomMutationsKeepInvariants) {
  const auto inputs = corpus();
  ASSERT_FALSE(inputs.empty());
  std::mt19937 rng(20261121);
  // Pieces that reach the interesting paths: HTML syntax and references, ill-formed and
  // truncated UTF-8, combining marks after ASCII, Hangul jamo, full-width forms, traditional
  // Chinese, ignorables, NUL.
  const std::string tokens[] = {"<",
                                ">",
                                "</script>",
                                "<style>",
                                "<!--",
                                "-->",
                                "&amp;",
                                "&#x4e2d;",
                                "&#0;",
                                "&#1114112;",
                                "&nbsp",
                                "\xff",
                                "\xc3",
                                "\xe4\xb8",
                                "\xf0\x9f",
                                "\xed\xa0\x80",
                                "e\xcc\x81",
                                "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8",
                                "\xef\xbc\xa1",
                                "\xef\xbc\x8c",
                                "\xe9\xab\x94",
                                "\xe8\x87\xba\xe7\x81\xa3",
                                "\xc2\xad",
                                "\xe2\x80\x8b",
                                std::string(1, '\0'),
                                "  ",
                                "\xe3\x80\x80",
                                "\xef\xb7\xba"};
  for (int iter = 0; iter < 1500; ++iter) {
    std::string s = inputs[rng() % inputs.size()];
    for (int m = 1 + static_cast<int>(rng() % 4); m > 0; --m) {
      const std::size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
      switch (rng() % 4) {
        case 0:  // flip a byte
          if (!s.empty()) s[pos % s.size()] = static_cast<char>(rng());
          break;
        case 1:  // delete a run
          s.erase(pos, rng() % 8);
          break;
        case 2:  // insert a token
          s.insert(pos, tokens[rng() % std::size(tokens)]);
          break;
        default:  // duplicate a slice
          s.insert(pos, s.substr(rng() % (s.size() + 1), rng() % 64));
      }
    }
    const std::string broken = checker().check(s);
    if (!broken.empty()) {
      ADD_FAILURE() << broken << "\ninput: " << s;
      return;
    }
  }
}

}  // namespace
}  // namespace simdup::fuzz
