#include <simdup/keep_policy.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace simdup {
namespace {

TEST(ParseKeepPolicy, AcceptsTheFourPolicies) {
  EXPECT_EQ(parse_keep_policy("first")->rule, keep_rule::first);
  EXPECT_EQ(parse_keep_policy("longest")->rule, keep_rule::longest);
  EXPECT_EQ(parse_keep_policy("newest")->rule, keep_rule::newest);
  const auto f = parse_keep_policy("field:score");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->rule, keep_rule::field);
  EXPECT_EQ(f->field, "score");
  for (const char* bad : {"", "field:", "last", "First"}) {
    const auto r = parse_keep_policy(bad);
    ASSERT_FALSE(r) << bad;
    // The library names the parameter; the CLI turns it into --keep.
    EXPECT_EQ(r.error().message.rfind("keep: expected", 0), 0u) << r.error().message;
  }
}

TEST(KeepBefore, OrdersByRuleThenEarliest) {
  const keep_rank early{1, 10, 100, 1.0}, late_long{2, 20, 50, 0.5};
  EXPECT_TRUE(keep_before(keep_rule::first, early, late_long));
  EXPECT_FALSE(keep_before(keep_rule::first, late_long, early));
  EXPECT_TRUE(keep_before(keep_rule::longest, late_long, early));
  EXPECT_TRUE(keep_before(keep_rule::newest, early, late_long));
  EXPECT_TRUE(keep_before(keep_rule::field, early, late_long));
  const keep_rank tie{3, 10, 100, 1.0};
  for (keep_rule rule :
       {keep_rule::first, keep_rule::longest, keep_rule::newest, keep_rule::field}) {
    EXPECT_TRUE(keep_before(rule, early, tie));
    EXPECT_FALSE(keep_before(rule, tie, early));
    EXPECT_FALSE(keep_before(rule, early, early));
  }
  const keep_rank missing{0, 0, std::numeric_limits<int64_t>::min(),
                          -std::numeric_limits<double>::infinity()};
  EXPECT_TRUE(keep_before(keep_rule::newest, early, missing));
  EXPECT_TRUE(keep_before(keep_rule::field, early, missing));
}

}  // namespace
}  // namespace simdup
