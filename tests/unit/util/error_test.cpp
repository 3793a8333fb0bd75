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

TEST(InvalidParameter, MessageIsTheWordsThenTheReasonAndWhatIsNeeded) {
  const error_info range = invalid_parameter(
      {.name = "k", .value = "40", .allowed = "0..32", .reason = "must be in 0..32, got 40"});
  EXPECT_EQ(range.code, errc::invalid_argument);
  EXPECT_EQ(range.message, "k must be in 0..32, got 40");
  ASSERT_TRUE(range.parameter);
  EXPECT_EQ(range.parameter->name, "k");
  EXPECT_EQ(range.parameter->value, "40");
  EXPECT_EQ(range.parameter->allowed, "0..32");
  // A reason that starts with ':' follows the name directly; `words` replace the name.
  EXPECT_EQ(invalid_parameter({.name = "keep", .reason = ": expected first"}).message,
            "keep: expected first");
  const error_info needs = invalid_parameter(
      {.name = "clustering", .value = "anchored", .reason = "needs", .needs = "verify"},
      "anchored clustering");
  EXPECT_EQ(needs.message, "anchored clustering needs verify");
  EXPECT_EQ(needs.parameter->name, "clustering");
  EXPECT_EQ(
      invalid_parameter({.name = "memory_limit", .reason = "is too small"}, {}, errc::too_large)
          .code,
      errc::too_large);
  // Other errors carry no parameter.
  EXPECT_FALSE(make_error(errc::io_error, "disk full").parameter);
}

}  // namespace
}  // namespace simdup
