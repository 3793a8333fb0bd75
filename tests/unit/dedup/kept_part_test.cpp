// write_kept_part: one part of a corpus's kept records, as the dedup job writes kept.<ext>.
#include <simdup/dedup_job.hpp>

#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace simdup {
namespace {

namespace fs = std::filesystem;

class KeptPart : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("simdup-kept-part-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  static reader csv(std::string data) {
    reader_options options;
    options.format = input_format::csv;
    return reader::from_memory("part.csv", std::move(data), options);
  }

  fs::path dir_;
};

TEST_F(KeptPart, WritesFlaggedRecordsAsReadWithTheCsvHeader) {
  reader in = csv("id,text\n1,alpha\n2,\"beta, quoted\"\n");
  const uint8_t keep[] = {0, 1};
  auto written = write_kept_part(in, keep, dir_.string(), "kept-00007", false, input_format::jsonl);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, 1u);
  EXPECT_EQ(slurp(dir_ / "kept-00007.csv"), "id,text\n2,\"beta, quoted\"\n");
}

TEST_F(KeptPart, BadRecordsArePassedOverNotCounted) {
  reader in = reader::from_memory(
      "part.jsonl", "{\"id\":1,\"text\":\"a\"}\n{not json\n{\"id\":2,\"text\":\"b\"}\n",
      reader_options{});
  const uint8_t keep[] = {1, 1};
  auto written = write_kept_part(in, keep, dir_.string(), "kept", false, input_format::jsonl);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(slurp(dir_ / "kept.jsonl"), "{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":\"b\"}\n");
}

TEST_F(KeptPart, ZstdFileDecompressesToThePlainOne) {
  reader in = csv("id,text\n1,alpha\n2,beta\n");
  const uint8_t keep[] = {1, 1};
  ASSERT_TRUE(write_kept_part(in, keep, dir_.string(), "kept", true, input_format::jsonl));
  const std::string packed = slurp(dir_ / "kept.csv.zst");
  std::string plain(
      ZSTD_getFrameContentSize(packed.data(), packed.size()) == ZSTD_CONTENTSIZE_UNKNOWN
          ? 4096
          : ZSTD_getFrameContentSize(packed.data(), packed.size()),
      '\0');
  const std::size_t n = ZSTD_decompress(plain.data(), plain.size(), packed.data(), packed.size());
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  plain.resize(n);
  EXPECT_EQ(plain, "id,text\n1,alpha\n2,beta\n");
}

TEST_F(KeptPart, NothingKeptStillWritesAnEmptyFileOfTheGivenFormat) {
  reader in = csv("id,text\n1,alpha\n");
  const uint8_t keep[] = {0};
  auto written = write_kept_part(in, keep, dir_.string(), "kept-00001", false, input_format::text);
  ASSERT_TRUE(written);
  EXPECT_EQ(*written, 0u);
  EXPECT_TRUE(fs::exists(dir_ / "kept-00001.txt"));
  EXPECT_EQ(fs::file_size(dir_ / "kept-00001.txt"), 0u);
}

TEST_F(KeptPart, MoreOrFewerRecordsThanFlagsIsAnError) {
  const uint8_t one[] = {1};
  reader more = csv("id,text\n1,alpha\n2,beta\n");
  auto a = write_kept_part(more, one, dir_.string(), "a", false, input_format::csv);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, errc::io_error);
  EXPECT_NE(a.error().message.find("more records"), std::string::npos);
  const uint8_t three[] = {1, 1, 1};
  reader fewer = csv("id,text\n1,alpha\n");
  auto b = write_kept_part(fewer, three, dir_.string(), "b", false, input_format::csv);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("fewer records"), std::string::npos);
}

}  // namespace
}  // namespace simdup
