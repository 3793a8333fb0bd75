#include <gtest/gtest.h>
#include <simdup/error.hpp>

namespace simdup {
namespace {

result<int> parse_positive(int x) {
  if (x <= 0) return make_error(errc::invalid_argument, "must be positive");
  return x;
}

TEST(Result, HoldsValueOrError) {
  auto ok = parse_positive(3);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 3);
  auto bad = parse_positive(-1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, errc::invalid_argument);
  EXPECT_EQ(bad.error().message, "must be positive");
  EXPECT_STREQ(errc_name(bad.error().code), "invalid_argument");
}

TEST(Result, VoidStatus) {
  status s;
  EXPECT_TRUE(s);
  status f = make_error(errc::io_error, "disk full");
  EXPECT_FALSE(f);
  EXPECT_EQ(f.error().code, errc::io_error);
}

TEST(Result, EveryCodeHasItsName) {
  // The names are the service's JSON error codes (docs/service.md).
  EXPECT_STREQ(errc_name(errc::unavailable), "unavailable");
  EXPECT_STREQ(errc_name(errc::internal), "internal");
  EXPECT_STREQ(errc_name(errc::no_space), "no_space");
}

}  // namespace
}  // namespace simdup
