// Fingerprint lists under a memory budget: text past the budget is spilled and read back with
// the same fingerprints and ids, binary files are read in place (in input order with spilled
// text-free stdin-like parts), and the spill directory is gone with the list.
#include <simdup/fingerprint_list.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io_test_util.hpp"

namespace simdup {
namespace {

std::vector<uint64_t> scanned(const fingerprint_list& list) {
  std::vector<uint64_t> out;
  auto st = list.scan().read(
      [&](std::span<const uint64_t> b) { out.insert(out.end(), b.begin(), b.end()); });
  EXPECT_TRUE(st.has_value()) << (st ? "" : st.error().message);
  return out;
}

std::string ids_of(const fingerprint_list& list) {
  std::string out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    EXPECT_TRUE(list.append_id(out, i).has_value());
    out += ' ';
  }
  return out;
}

TEST(FingerprintListSpill, TextPastTheBudgetReadsBackTheSame) {
  test::temp_dir dir;
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "{\"id\":\"doc-%d\",\"fingerprint\":\"%016llx\"}\n", i,
                  static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull);
    text += line;
    if (i == 10) text += "{\"id\":\"short\",\"fingerprint\":null,\"status\":\"too_short\"}\n";
  }
  const std::vector<std::string> inputs{dir.write("a.jsonl", text)};
  auto whole = read_fingerprint_list(inputs, {});
  ASSERT_TRUE(whole.has_value());
  EXPECT_FALSE(whole->on_files());
  const std::filesystem::path spill = dir.path() / "spill";
  std::filesystem::create_directory(spill);
  {
    auto spilled =
        read_fingerprint_list(inputs, {.memory_budget = 20'000, .spill_dir = spill.string()});
    ASSERT_TRUE(spilled.has_value()) << spilled.error().message;
    EXPECT_TRUE(spilled->on_files());
    EXPECT_EQ(spilled->size(), 5000u);
    EXPECT_TRUE(spilled->fingerprints.empty());
    EXPECT_GT(spilled->spilled_bytes(), 5000u * 16);
    EXPECT_EQ(scanned(*spilled), whole->fingerprints);
    EXPECT_EQ(scanned(*spilled), whole->fingerprints);  // a second pass reads the same
    EXPECT_EQ(ids_of(*spilled), ids_of(*whole));
    EXPECT_FALSE(std::filesystem::is_empty(spill));
  }
  EXPECT_TRUE(std::filesystem::is_empty(spill));  // removed with the list
  // A budget the whole list fits in: an ordinary list in memory.
  auto fits =
      read_fingerprint_list(inputs, {.memory_budget = 1 << 30, .spill_dir = spill.string()});
  ASSERT_TRUE(fits.has_value());
  EXPECT_FALSE(fits->on_files());
  EXPECT_EQ(fits->fingerprints, whole->fingerprints);
}

TEST(FingerprintListSpill, BinaryFilesInPlaceKeepPositions) {
  test::temp_dir dir;
  std::vector<uint64_t> a(1000), b(300);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = i * 31 + 7;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = ~i;
  const std::vector<std::string> inputs{
      dir.write("a.bin", std::string(reinterpret_cast<const char*>(a.data()), a.size() * 8)),
      dir.write("b.bin", std::string(reinterpret_cast<const char*>(b.data()), b.size() * 8))};
  auto list = read_fingerprint_list(inputs, {.binary = true, .memory_budget = 64});
  ASSERT_TRUE(list.has_value()) << list.error().message;
  EXPECT_TRUE(list->on_files());
  EXPECT_EQ(list->spilled_bytes(), 0u);  // nothing copied
  std::vector<uint64_t> expected = a;
  expected.insert(expected.end(), b.begin(), b.end());
  EXPECT_EQ(scanned(*list), expected);
  std::string id;
  ASSERT_TRUE(list->append_id(id, 1299).has_value());
  EXPECT_EQ(id, "1299");
  // A file whose size is not a multiple of 8 is still refused.
  const std::vector<std::string> odd{dir.write("odd.bin", "12345")};
  auto bad = read_fingerprint_list(odd, {.binary = true, .memory_budget = 64});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, errc::invalid_input);
}

TEST(FingerprintListSpill, UnwritableSpillDirectoryIsAnError) {
  test::temp_dir dir;
  std::string text;
  for (int i = 0; i < 3000; ++i) text += std::to_string(1000000 + i) + "\n";
  const std::vector<std::string> inputs{dir.write("plain.txt", text)};
  auto r = read_fingerprint_list(
      inputs,
      {.skip_bad = true, .memory_budget = 1000, .spill_dir = (dir.path() / "missing").string()});
  ASSERT_FALSE(r.has_value());  // even under skip: a spill failure is not a bad input
  EXPECT_EQ(r.error().code, errc::io_error);
  EXPECT_NE(r.error().message.find("cannot make a spill directory under"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace simdup
