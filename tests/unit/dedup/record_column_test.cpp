// record_column: the same records by scan and gather in memory, after spill(), and with the
// newest appends still in the write buffer.
#include "dedup/record_column.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace simdup::detail {
namespace {

std::vector<uint8_t> record(uint32_t i, std::size_t width) {
  std::vector<uint8_t> r(width);
  for (std::size_t b = 0; b < width; ++b) r[b] = static_cast<uint8_t>(i * 31 + b * 7);
  return r;
}

void expect_records(const record_column& c, uint32_t n) {
  uint32_t seen = 0;
  ASSERT_TRUE(c.scan([&](uint32_t first, std::span<const uint8_t> block) {
    for (std::size_t at = 0; at < block.size(); at += c.width(), ++seen) {
      ASSERT_EQ(first + at / c.width(), seen);
      ASSERT_EQ(std::memcmp(block.data() + at, record(seen, c.width()).data(), c.width()), 0);
    }
  }));
  EXPECT_EQ(seen, n);
  std::vector<uint32_t> some{0, 1, 2, n / 2, n / 2 + 1, n - 2, n - 1};
  std::vector<uint8_t> got;
  ASSERT_TRUE(c.gather(some, got));
  for (std::size_t j = 0; j < some.size(); ++j) {
    EXPECT_EQ(std::memcmp(got.data() + j * c.width(), record(some[j], c.width()).data(), c.width()),
              0)
        << some[j];
  }
  uint64_t sum = 0;
  ASSERT_TRUE(for_each_word(c, 1, [&](uint32_t i, uint64_t v) {
    uint64_t want;
    std::memcpy(&want, record(i, c.width()).data() + 8, 8);
    EXPECT_EQ(v, want);
    ++sum;
  }));
  EXPECT_EQ(sum, n);
}

TEST(RecordColumn, SameRecordsInMemorySpilledAndBuffered) {
  constexpr std::size_t width = 80;
  constexpr uint32_t n = 40000;  // 3.2 MB: several 1 MiB blocks on file and a partial buffer
  record_column c(width, "the test column");
  for (uint32_t i = 0; i < n / 2; ++i) ASSERT_TRUE(c.append(record(i, width)));
  EXPECT_FALSE(c.spilled());
  expect_records(c, n / 2);
  ASSERT_TRUE(c.spill(""));
  EXPECT_TRUE(c.spilled());
  EXPECT_EQ(c.spilled_bytes(), uint64_t{n / 2} * width);
  for (uint32_t i = n / 2; i < n; ++i) ASSERT_TRUE(c.append(record(i, width)));
  EXPECT_LT(c.memory_bytes(), std::size_t{2} << 20);
  expect_records(c, n);  // the tail is read from the write buffer
  ASSERT_TRUE(c.flush());
  EXPECT_EQ(c.spilled_bytes(), uint64_t{n} * width);
  expect_records(c, n);
  c.release();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.spilled_bytes(), uint64_t{n} * width);
}

TEST(RecordColumn, SpillToAMissingDirectoryNamesIt) {
  record_column c(8, "the test column");
  ASSERT_TRUE(c.append(record(0, 8)));
  const auto st = c.spill("/nonexistent/simdup-dir");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("the test column in /nonexistent/simdup-dir"),
            std::string::npos)
      << st.error().message;
}

}  // namespace
}  // namespace simdup::detail
