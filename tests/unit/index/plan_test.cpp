// Layouts (parsing, validation, tables) and the planner's choices.
#include <simdup/plan.hpp>

#include <gtest/gtest.h>

#include <random>

#include "index/tables.hpp"

namespace simdup {
namespace {

TEST(IndexLayout, ParsesAndDescribes) {
  auto a = index_layout::parse(3, "6");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->widths, (std::vector<int>{11, 11, 11, 11, 10, 10}));
  EXPECT_EQ(a->describe(), "11,11,11,11,10,10");
  auto b = index_layout::parse(3, "16,16,16,16");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->table_count(), 4u);
  auto c = index_layout::parse(3, "4/4");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->second_level_blocks, 4);
  EXPECT_EQ(c->table_count(), 16u);
  EXPECT_EQ(c->describe(), "16,16,16,16/4");
  auto back = index_layout::parse(3, c->describe());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->widths, c->widths);
  EXPECT_EQ(back->second_level_blocks, 4);
  EXPECT_EQ(index_layout::even(3, 6).table_count(), 20u);
}

TEST(IndexLayout, RejectsBadLayouts) {
  for (const char* text : {"", "x", "3", "16,16,16", "16,16,16,17", "0", "65", "4/3", "4/",
                           "16,,16,32", "16,16,16,16,", "64,0,0,0"}) {
    auto l = index_layout::parse(3, text);
    ASSERT_FALSE(l.has_value()) << text;
    EXPECT_EQ(l.error().code, errc::invalid_argument);
  }
  EXPECT_FALSE(index_layout::even(-1, 4).validate());
  EXPECT_FALSE(index_layout::even(max_index_k + 1, 64).validate());
  EXPECT_FALSE(index_layout::even(12, 40).validate());  // C(40, 28) tables
}

TEST(IndexLayout, OneRangeCheckOfKNamesTheParameter) {
  EXPECT_TRUE(validate_k(0));
  EXPECT_TRUE(validate_k(max_index_k));
  EXPECT_EQ(validate_k(33).error().message, "k must be in 0..32, got 33");
  EXPECT_EQ(validate_k(-1, "default_k").error().message, "default_k must be in 0..32, got -1");
  // The layout and the planner use it, so their messages are the same.
  EXPECT_EQ(index_layout::even(40, 64).validate().error().message, "k must be in 0..32, got 40");
  EXPECT_EQ(
      make_plan({.n = 10, .k = 40, .memory = 0, .purpose = plan_purpose::batch}).error().message,
      "k must be in 0..32, got 40");
}

TEST(IndexLayout, TablesPutTheirBlocksFirst) {
  const auto tables = detail::build_tables(index_layout::even(3, 4));
  ASSERT_EQ(tables.size(), 4u);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(tables[t].prefix_bits, 16);
    const uint64_t block = uint64_t{0xffff} << (48 - 16 * t);
    EXPECT_EQ(tables[t].prefix_mask, block);
    // The block's bits lead the key; the permutation keeps every bit.
    EXPECT_EQ(tables[t].apply(block), uint64_t{0xffff} << 48);
    EXPECT_EQ(tables[t].apply(~uint64_t{0}), ~uint64_t{0});
  }
  const auto two = detail::build_tables(index_layout::two_level(3, 4, 4));
  ASSERT_EQ(two.size(), 16u);
  for (const auto& t : two) {
    EXPECT_EQ(t.prefix_bits, 28);
    EXPECT_EQ(std::popcount(t.prefix_mask), 28);
  }
}

TEST(IndexLayout, PermutationsAreBijections) {
  std::mt19937_64 rng(1);
  for (const char* text : {"6", "20,5,9,30", "5/4", "1,1,1,61", "13"}) {
    auto l = index_layout::parse(3, text);
    ASSERT_TRUE(l.has_value()) << text;
    for (const auto& t : detail::build_tables(*l)) {
      for (int bit = 0; bit < 64; ++bit)
        EXPECT_EQ(std::popcount(t.apply(uint64_t{1} << bit)), 1) << text;
      const uint64_t x = rng();
      EXPECT_EQ(std::popcount(t.apply(x)), std::popcount(x));
      EXPECT_EQ(t.apply(t.prefix_mask) >> (64 - t.prefix_bits), (uint64_t{1} << t.prefix_bits) - 1);
    }
  }
}

TEST(Planner, BatchAndOnlineChoices) {
  auto batch = make_plan({.n = 11'000'000, .k = 3, .memory = 0, .purpose = plan_purpose::batch});
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->tables, 10u);  // 5 blocks, prefixes of 25-26 bits
  EXPECT_EQ(batch->min_prefix_bits, 25);
  EXPECT_LE(batch->bytes_per_entry, 40);
  auto online = make_plan({.n = 10'000'000, .k = 3, .memory = 0, .purpose = plan_purpose::online});
  ASSERT_TRUE(online.has_value());
  EXPECT_LE(online->bytes_per_entry, 100);
  EXPECT_GE(online->min_prefix_bits, 22);
  EXPECT_NE(online->describe().find("tables:"), std::string::npos);
}

TEST(Planner, MemoryBudgetChoosesFewerTables) {
  const uint64_t n = 10'000'000;
  auto tight = make_plan({.n = n, .k = 3, .memory = 80 * n, .purpose = plan_purpose::online});
  ASSERT_TRUE(tight.has_value());
  EXPECT_LE(tight->bytes_per_entry * static_cast<double>(n), 80.0 * static_cast<double>(n));
  auto loose = make_plan({.n = n, .k = 3, .memory = 0, .purpose = plan_purpose::online});
  ASSERT_TRUE(loose.has_value());
  EXPECT_LE(tight->tables, loose->tables);
  auto impossible = make_plan({.n = n, .k = 3, .memory = n, .purpose = plan_purpose::online});
  ASSERT_FALSE(impossible.has_value());
  EXPECT_EQ(impossible.error().code, errc::too_large);
}

TEST(Planner, HandlesEveryK) {
  for (int k = 0; k <= 12; ++k) {
    auto p = make_plan({.n = 1'000'000, .k = k, .memory = 0, .purpose = plan_purpose::batch});
    ASSERT_TRUE(p.has_value()) << "k=" << k;
    EXPECT_EQ(p->layout.k, k);
    EXPECT_TRUE(p->layout.validate());
    auto e = evaluate_layout(p->layout, 1'000'000, plan_purpose::batch);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->tables, detail::build_tables(p->layout).size());
  }
  EXPECT_FALSE(make_plan({.n = 10, .k = -1, .memory = 0, .purpose = plan_purpose::batch}));
}

TEST(Planner, TwoLevelCostsMatchTheirTables) {
  const auto l = index_layout::two_level(3, 5, 4);
  auto p = evaluate_layout(l, 1 << 20, plan_purpose::online);
  ASSERT_TRUE(p.has_value());
  const auto tables = detail::build_tables(l);
  ASSERT_EQ(p->tables, tables.size());
  double expected = 0;
  for (const auto& t : tables) expected += std::ldexp(double(1 << 20), -t.prefix_bits);
  EXPECT_NEAR(p->candidates_per_probe, expected, 1e-9 * expected);
}

}  // namespace
}  // namespace simdup
