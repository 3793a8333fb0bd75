#include <simdup/utf8.hpp>
#include "test_paths.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace simdup::utf8 {
namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

struct repair_case {
  std::string input;
  std::string repaired;
  std::size_t replacements;
  std::size_t code_points;
};

// tests/data/golden/utf8_repair.tsv, made by Python's decoder (gen_utf8_repair.py).
std::vector<repair_case> load_repair_cases() {
  std::ifstream in(std::string(SIMDUP_TEST_DATA_DIR) + "/golden/utf8_repair.tsv");
  EXPECT_TRUE(in) << "missing tests/data/golden/utf8_repair.tsv";
  std::vector<repair_case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string input, repaired, replacements, code_points;
    std::getline(fields, input, '\t');
    std::getline(fields, repaired, '\t');
    std::getline(fields, replacements, '\t');
    std::getline(fields, code_points, '\t');
    cases.push_back(
        {unhex(input), unhex(repaired), std::stoul(replacements), std::stoul(code_points)});
  }
  return cases;
}

TEST(Utf8, GoldenRepairMatchesPython) {
  const auto cases = load_repair_cases();
  ASSERT_GE(cases.size(), 200u);
  for (const auto& c : cases) {
    std::string out = "prefix";
    EXPECT_EQ(append_repaired(c.input, out), c.replacements) << testing::PrintToString(c.input);
    EXPECT_EQ(out, "prefix" + c.repaired);
    EXPECT_EQ(is_valid(c.input), c.replacements == 0);
    EXPECT_EQ(count_code_points(c.input), c.code_points);
    // decode() one code point at a time agrees with the bulk helpers.
    std::string decoded;
    std::size_t invalid = 0;
    for (const char* p = c.input.data(); p < c.input.data() + c.input.size();) {
      append(decoded, decode(p, c.input.data() + c.input.size(), invalid));
    }
    EXPECT_EQ(decoded, c.repaired);
    EXPECT_EQ(invalid, c.replacements);
  }
}

TEST(Utf8, DecodeAdvancesByMaximalSubpart) {
  const std::string s =
      "\xE4\xB8"
      "a\xF0\x9F\x98\x80";
  std::size_t pos = 0;
  std::size_t invalid = 0;
  EXPECT_EQ(decode(s, pos, invalid), replacement_character);
  EXPECT_EQ(pos, 2u);
  EXPECT_EQ(decode(s, pos, invalid), U'a');
  EXPECT_EQ(decode(s, pos, invalid), U'\U0001F600');
  EXPECT_EQ(pos, s.size());
  EXPECT_EQ(invalid, 1u);
}

TEST(Utf8, DecodeNeverReadsPastEnd) {
  // The buffer continues with valid continuation bytes that lie outside [p, end).
  const std::string buf = "\xE4\xB8\xAD";
  const char* p = buf.data();
  std::size_t invalid = 0;
  EXPECT_EQ(decode(p, buf.data() + 2, invalid), replacement_character);
  EXPECT_EQ(p, buf.data() + 2);
  EXPECT_EQ(invalid, 1u);
}

TEST(Utf8, EncodeRoundTripsEveryScalarValue) {
  char buf[4];
  for (char32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x20000 ? 1 : 97)) {
    if (!is_scalar_value(cp)) continue;
    const std::size_t n = encode(cp, buf);
    const char* p = buf;
    std::size_t invalid = 0;
    ASSERT_EQ(decode(p, buf + n, invalid), cp);
    ASSERT_EQ(p, buf + n);
    ASSERT_EQ(invalid, 0u);
  }
}

TEST(Utf8, EncodeLengthsAndNonScalarValues) {
  char buf[4];
  EXPECT_EQ(encode(U'A', buf), 1u);
  EXPECT_EQ(encode(U'\u00E9', buf), 2u);
  EXPECT_EQ(encode(U'\u4E2D', buf), 3u);
  EXPECT_EQ(std::string(buf, 3), "\xE4\xB8\xAD");
  EXPECT_EQ(encode(U'\U0001F600', buf), 4u);
  EXPECT_EQ(encode(0xD800, buf), 3u);  // a surrogate becomes U+FFFD
  EXPECT_EQ(std::string(buf, 3), "\xEF\xBF\xBD");
  EXPECT_EQ(encode(0x110000, buf), 3u);
  EXPECT_EQ(std::string(buf, 3), "\xEF\xBF\xBD");
}

TEST(Utf8, AsciiPrefixAtEveryOffset) {
  // Exercise the 64- and 16-byte vector loops and the scalar tail around a non-ASCII byte.
  for (std::size_t len : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 200u}) {
    const std::string ascii(len, 'x');
    EXPECT_EQ(ascii_prefix_length(ascii), len);
    for (std::size_t at = 0; at < len; ++at) {
      std::string s = ascii;
      s[at] = '\xC3';
      EXPECT_EQ(ascii_prefix_length(s), at) << "len " << len;
    }
  }
}

TEST(Utf8, CjkIdeographRanges) {
  EXPECT_TRUE(is_cjk_ideograph(U'\u4E2D'));
  EXPECT_TRUE(is_cjk_ideograph(U'\u3400'));
  EXPECT_TRUE(is_cjk_ideograph(U'\uF900'));
  EXPECT_TRUE(is_cjk_ideograph(U'\U00020000'));
  EXPECT_FALSE(is_cjk_ideograph(U'\u3002'));  // ideographic full stop
  EXPECT_FALSE(is_cjk_ideograph(U'\u3042'));  // hiragana
  EXPECT_FALSE(is_cjk_ideograph(U'A'));
}

}  // namespace
}  // namespace simdup::utf8
