// Without clang's libFuzzer: replays fuzz/corpus/normalize and random mutations of it through
// the checks of fuzz/normalize_fuzz.cpp, under the sanitizers of the unit test build.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "../../../fuzz/normalize_fuzz_check.hpp"
#include "support/fuzz_replay.hpp"

namespace simdup::fuzz {
namespace {

using simdup::test_support::mutate;
using simdup::test_support::read_fuzz_corpus;

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
  const auto inputs = read_fuzz_corpus("normalize");
  ASSERT_GE(inputs.size(), 8u);
  for (const auto& text : inputs) EXPECT_EQ(checker().check(text), "") << text;
}

TEST(NormalizeFuzz, RandomMutationsKeepInvariants) {
  const auto inputs = read_fuzz_corpus("normalize");
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
    const std::string s = mutate(inputs[rng() % inputs.size()], tokens, rng, 64);
    const std::string broken = checker().check(s);
    if (!broken.empty()) {
      ADD_FAILURE() << broken << "\ninput: " << s;
      return;
    }
  }
}

}  // namespace
}  // namespace simdup::fuzz
