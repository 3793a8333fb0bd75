// Without clang's libFuzzer: replays fuzz/corpus/http and random mutations of it through the
// checks of fuzz/http_parser_fuzz_check.hpp (split-point agreement, `want` hints, limits), under
// the sanitizers of the unit test build.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "../../../fuzz/http_parser_fuzz_check.hpp"
#include "support/fuzz_replay.hpp"

namespace simdup::detail::http {
namespace {

using simdup::test_support::mutate;
using simdup::test_support::read_fuzz_corpus;

TEST(HttpParserFuzz, CorpusHoldsTheInvariants) {
  const auto inputs = read_fuzz_corpus("http");
  ASSERT_GE(inputs.size(), 8u);
  int complete = 0;
  int errors = 0;
  for (const auto& in : inputs) {
    EXPECT_EQ(simdup::fuzz::check_http_parser(in), "") << in;
    const auto r = parse_request(in, simdup::fuzz::http_fuzz_limits());
    complete += r.state == parse_status::complete;
    errors += r.state == parse_status::error;
  }
  // Both valid requests and each kind of rejection are represented, so mutations start deep.
  EXPECT_GE(complete, 5);
  EXPECT_GE(errors, 3);
}

TEST(HttpParserFuzz, RandomMutationsHoldTheInvariants) {
  const auto inputs = read_fuzz_corpus("http");
  std::mt19937 rng(20261121);
  const std::string tokens[] = {"\r\n",
                                "\r\n\r\n",
                                "\n",
                                "\r",
                                " ",
                                "\t",
                                ":",
                                ";",
                                ",",
                                "0\r\n\r\n",
                                "ffffffff\r\n",
                                "Content-Length: 5\r\n",
                                "Content-Length: 99999999999999999999\r\n",
                                "Transfer-Encoding: chunked\r\n",
                                "Connection: close\r\n",
                                "Expect: 100-continue\r\n",
                                "Authorization: Bearer x\r\n",
                                "HTTP/1.0",
                                "HTTP/1.1",
                                "%2",
                                "%zz",
                                "\x7f",
                                "\xff",
                                std::string(1, '\0'),
                                std::string(600, 'a')};
  for (int iter = 0; iter < 20000; ++iter) {
    const std::string s = mutate(inputs[rng() % inputs.size()], tokens, rng, 64);
    const std::string broke = simdup::fuzz::check_http_parser(s);
    if (!broke.empty()) {
      ADD_FAILURE() << broke << "\ninput: " << ::testing::PrintToString(s);
      return;
    }
  }
}

}  // namespace
}  // namespace simdup::detail::http
