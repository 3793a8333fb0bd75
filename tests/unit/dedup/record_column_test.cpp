// record_column: the same records by scan and gather in memory, after spill(), and with the
// newest appends still in the write buffer.
#include "dedup/record_column.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>
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

// A file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) stands for a full --tmp-dir: the kernel
// refuses the write as a full disk would. The error names the column, its directory, the
// reason and the bytes it needed, and every later call fails the same way.
TEST(RecordColumn, AFailedWriteNamesTheBytesNeededAndStaysFailed) {
  rlimit previous{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &previous), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = previous;
  small.rlim_cur = 256 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  constexpr std::size_t width = 64;
  record_column c(width, "the test column");
  ASSERT_TRUE(c.append(record(0, width)));
  const std::string dir = ::testing::TempDir();
  status spilled = c.spill(dir);  // one record: within the limit
  status st = spilled;
  uint32_t appended = 1;
  for (; st && appended < 100000; ++appended) st = c.append(record(appended, width));
  status again = c.append(record(appended, width));
  status flushed = c.flush();
  ::setrlimit(RLIMIT_FSIZE, &previous);
  std::signal(SIGXFSZ, previous_handler);

  ASSERT_TRUE(spilled) << spilled.error().message;
  ASSERT_FALSE(st);
  // The first 1 MiB block (16,384 records after the spilled one) is the write that fails.
  EXPECT_EQ(appended, 1u + (1u << 20) / width);
  const std::string& message = st.error().message;
  EXPECT_NE(message.find("the test column in " + dir), std::string::npos) << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_NE(message.find("1048576 more bytes needed, 64 written so far"), std::string::npos)
      << message;
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, message);
  ASSERT_FALSE(flushed);
  EXPECT_EQ(flushed.error().message, message);
}

}  // namespace
}  // namespace simdup::detail
