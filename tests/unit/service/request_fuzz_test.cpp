// Without clang's libFuzzer: replays fuzz/corpus/request and many random mutations of it
// through the request parsers, under the sanitizers of the unit test build. Every input must
// give a value or an error.
#include <gtest/gtest.h>

#include <random>

#include "service/request.hpp"
#include "store/backend.hpp"
#include "support/fuzz_replay.hpp"

namespace simdup::detail {
namespace {

using simdup::test_support::mutate;
using simdup::test_support::read_fuzz_corpus;

void exercise(std::string_view body) {
  request_limits limits;
  limits.max_documents = 64;
  if (auto r = parse_request(body, limits)) {
    ASSERT_FALSE(r->docs.empty());
    ASSERT_LE(r->docs.size(), limits.max_documents);
    for (const auto& d : r->docs) {
      ASSERT_FALSE(d.id.empty());
      ASSERT_LE(d.id.size(), limits.max_id_bytes);
      ASSERT_TRUE(d.fingerprint.has_value() || d.text.size() < body.size());
    }
  } else {
    ASSERT_FALSE(r.error().message.empty());
  }
  if (auto name = parse_export_name(body)) {
    ASSERT_TRUE(valid_collection_name(*name));
    ASSERT_NE(name->front(), '.');
  }
  collection_config base;
  base.name = "fuzz";
  if (auto c = config_from_json(body, base)) {
    ASSERT_TRUE(validate(*c));
  }
}

TEST(RequestFuzz, CorpusParses) {
  const auto inputs = read_fuzz_corpus("request");
  ASSERT_GE(inputs.size(), 5u);
  int parsed = 0;
  for (const auto& body : inputs) {
    exercise(body);
    if (parse_request(body, {})) ++parsed;
  }
  EXPECT_GE(parsed, 4);  // the corpus is mostly valid requests, so mutations start deep
}

TEST(RequestFuzz, RandomMutationsNeverCrash) {
  const auto inputs = read_fuzz_corpus("request");
  std::mt19937 rng(20241121);
  const std::string tokens[] = {"{",
                                "}",
                                "[",
                                "]",
                                ",",
                                ":",
                                "\"",
                                "\\u0000",
                                "\\ud800",
                                "1e999",
                                "-0",
                                "null",
                                "\"documents\"",
                                "\"id\"",
                                "\"fingerprint\"",
                                "\"time\"",
                                "\xff",
                                "\xc3",
                                "9223372036854775808"};
  for (int iter = 0; iter < 20000; ++iter) {
    const std::string s = mutate(inputs[rng() % inputs.size()], tokens, rng, 32);
    exercise(s);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "input: " << s;
      return;
    }
  }
}

}  // namespace
}  // namespace simdup::detail
