#include <gtest/gtest.h>
#include <simdup/simhash.hpp>

namespace simdup {
namespace {

TEST(Hex, RoundTripsAndPads) {
  EXPECT_EQ(to_hex(0), "0000000000000000");
  EXPECT_EQ(to_hex(0xdeadbeefULL), "00000000deadbeef");
  EXPECT_EQ(to_hex(~0ULL), "ffffffffffffffff");
  auto v = parse_hex("00000000DEADbeef");
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 0xdeadbeefULL);
}

TEST(Hex, RejectsWrongLengthAndDigits) {
  EXPECT_EQ(parse_hex("abc").error().code, errc::invalid_input);
  EXPECT_EQ(parse_hex("000000000000000g").error().code, errc::invalid_input);
  EXPECT_EQ(parse_hex("").error().code, errc::invalid_input);
}

TEST(Hamming, CountsDifferingBits) {
  EXPECT_EQ(hamming_distance(0, 0), 0);
  EXPECT_EQ(hamming_distance(0, ~0ULL), 64);
  EXPECT_EQ(hamming_distance(0b1011, 0b0001), 2);
}

}  // namespace
}  // namespace simdup
