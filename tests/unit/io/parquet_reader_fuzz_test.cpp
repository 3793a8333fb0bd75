// Without clang's libFuzzer: replays the Parquet reader harness's corpus (fuzz/corpus/
// parquet_reader: DuckDB-written files with row groups, nulls, dates, other field names, a
// mistyped text column, a truncated file) and random mutations of it through its checks
// (fuzz/parquet_fuzz_check.hpp), under the sanitizers of the unit test build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
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
  for (int iter = 0; iter < 100; ++iter) {  // three reads a check: about 40 ms under ASan
    const std::string s = mutate(inputs[rng() % inputs.size()], kParquetTokens, rng, 16);
    ASSERT_EQ(check_parquet(s), "") << "input (" << s.size() << " bytes)";
  }
}

// The harness rewrites one memfd per input: a file rewritten in place, with the same size, must
// be read anew, not from anything DuckDB kept of the path's earlier contents.
TEST(ParquetReaderFuzz, RewrittenFileIsReadAnew) {
  if (!detail::parquet_supported()) GTEST_SKIP() << "built without Parquet";
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("simdup-pq-rewrite-" + std::to_string(getpid()));
  fs::create_directories(dir);
  // Two files of the same size: duplicates.parquet of one line, ids of the same length.
  std::vector<std::string> files;
  for (const char* id : {"aaaa", "bbbb"}) {
    {
      std::ofstream(dir / "d.jsonl")
          << R"({"id":")" << id << R"(","duplicate_of":"text of the row","cluster":1})"
          << "\n";
    }
    ASSERT_TRUE(detail::write_duplicates_parquet(dir / "d.jsonl", dir / "d.parquet"));
    std::ifstream in(dir / "d.parquet", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    files.push_back(ss.str());
  }
  fs::remove_all(dir);
  ASSERT_EQ(files[0].size(), files[1].size());
  mem_file file;
  reader_options options;
  options.format = input_format::parquet;
  options.fields.text = "duplicate_of";
  for (int round = 0; round < 2; ++round) {
    for (std::size_t k = 0; k < files.size(); ++k) {
      parquet_read r;
      ASSERT_EQ(read_parquet_once(file.write(files[k]), options, r), "");
      ASSERT_EQ(r.ids.size(), 1u);
      EXPECT_EQ(r.ids[0], k == 0 ? "aaaa" : "bbbb") << "round " << round;
    }
  }
}

// Readers on several threads (the Python module's, the service's) read the same file at once,
// each in its own DuckDB database: each reads every row.
TEST(ParquetReaderFuzz, ThreadsReadAtOnce) {
  if (!detail::parquet_supported()) GTEST_SKIP() << "built without Parquet";
  std::string seed;
  for (const auto& in : read_fuzz_corpus("parquet_reader")) {
    if (in.size() >= 1000 && in[0] == 0) seed = in.substr(1);  // the 40 rows, 6 without text
  }
  ASSERT_FALSE(seed.empty());
  mem_file file;
  const std::string path = file.write(seed);
  reader_options options;
  options.format = input_format::parquet;
  std::vector<std::string> broken(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < broken.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5 && broken[t].empty(); ++round) {
        parquet_read r;
        broken[t] = read_parquet_once(path, options, r);
        if (broken[t].empty() && (r.ids.size() != 40 || r.last != read_status::end))
          broken[t] = std::to_string(r.ids.size()) + " rows";
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& b : broken) EXPECT_EQ(b, "");
}

}  // namespace
}  // namespace simdup::fuzz
