// Without clang's libFuzzer: replays fuzz/corpus/request and many random mutations of it
// through the request parsers, under the sanitizers of the unit test build. Every input must
// give a value or an error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "service/request.hpp"
#include "store/backend.hpp"

namespace simdup::detail {
namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(SIMDUP_SOURCE_DIR "/fuzz/corpus/request")) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  return out;
}

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
  collection_config base;
  base.name = "fuzz";
  if (auto c = config_from_json(body, base)) {
    ASSERT_TRUE(validate(*c));
  }
}

TEST(RequestFuzz, CorpusParses) {
  const auto inputs = corpus();
  ASSERT_GE(inputs.size(), 5u);
  int parsed = 0;
  for (const auto& body : inputs) {
    exercise(body);
    if (parse_request(body, {})) ++parsed;
  }
  EXPECT_GE(parsed, 4);  // the corpus is mostly valid requests, so mutations start deep
}

TEST(RequestFuzz, RandomMutationsNeverCrash) {
  const auto inputs = corpus();
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
        case 2:  // insert a JSON-ish token
          s.insert(pos, tokens[rng() % std::size(tokens)]);
          break;
        default:  // duplicate a slice (nesting, repeated keys)
          s.insert(pos, s.substr(rng() % (s.size() + 1), rng() % 32));
      }
    }
    exercise(s);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "input: " << s;
      return;
    }
  }
}

}  // namespace
}  // namespace simdup::detail
