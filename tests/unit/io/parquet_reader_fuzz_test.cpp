// Without clang's libFuzzer: replays the Parquet reader harness's corpus (fuzz/corpus/
// parquet_reader: DuckDB-written files with row groups, nulls, dates, other field names, a
// mistyped text column, a truncated file) and random mutations of it through its checks
// (fuzz/parquet_fuzz_check.hpp), under the sanitizers of the unit test build.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "../../../fuzz/parquet_fuzz_check.hpp"
#include "io/parquet.hpp"
#include "support/fuzz_replay.hpp"

namespace simdup::fuzz {
namespace {

using simdup::test_support::mutate;
using simdup::test_support::read_fuzz_corpus;

const std::vector<std::string> kParquetTokens = {"PAR1", std::string(4, '\0'), "\xff\xff\xff\x7f",
                                                 "text", "id"};

TEST(ParquetReaderFuzz, CorpusKeepsInvariants) {
  if (!detail::parquet_supported()) GTEST_SKIP() << "built without Parquet";
  const auto inputs = read_fuzz_corpus("parquet_reader");
  ASSERT_GE(inputs.size(), 4u);
  for (const auto& in : inputs) EXPECT_EQ(check_parquet(in), "") << in.size() << " bytes";
}

TEST(ParquetReaderFuzz, SoundFilesReadTheirRows) {
  if (!detail::parquet_supported()) GTEST_SKIP() << "built without Parquet";
  // The oracle's own check: the seed with 40 rows (every seventh text null) reads them all.
  for (const auto& in : read_fuzz_corpus("parquet_reader")) {
    if (in.size() < 1000 || in[0] != 0) continue;
    static mem_file file;
    reader_options options;
    options.format = input_format::parquet;
    parquet_read r;
    ASSERT_EQ(read_parquet_once(file.write(std::string_view(in).substr(1)), options, r), "");
    EXPECT_EQ(r.last, read_status::end);
    EXPECT_EQ(r.ids.size(), 40u);
    EXPECT_EQ(std::count(r.ids.begin(), r.ids.end(), "#bad"), 6);  // rows 3, 10, ..., 38
  }
}

TEST(ParquetReaderFuzz, RandomMutationsKeepInvariants) {
  if (!detail::parquet_supported()) GTEST_SKIP() << "built without Parquet";
  const auto inputs = read_fuzz_corpus("parquet_reader");
  std::mt19937 rng(20261201);
  for (int iter = 0; iter < 100; ++iter) {  // each read opens DuckDB: about 0.1 s a check
    const std::string s = mutate(inputs[rng() % inputs.size()], kParquetTokens, rng, 16);
    ASSERT_EQ(check_parquet(s), "") << "input (" << s.size() << " bytes)";
  }
}

}  // namespace
}  // namespace simdup::fuzz
