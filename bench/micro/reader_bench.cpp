// Record reader throughput on the bundled sample corpus (data/sample/news.jsonl, 7 MB of JSONL;
// SIMDUP_BENCH_JSONL overrides it), read from memory plain, gzip- and zstd-compressed. The plain
// read is the baseline of the compressed ones; bytes/s counts the decompressed bytes. The zstd
// reader decodes in 4 KiB steps (src/io/byte_source.cpp: what a corruption may cost).
#include <simdup/reader.hpp>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "io/io_test_util.hpp"  // the tests' gzip and zstd encoders (levels 6 and 3)

namespace {

const std::string& sample() {
  static const std::string text = [] {
    const char* path = std::getenv("SIMDUP_BENCH_JSONL");
    std::ifstream in(path != nullptr ? path : SIMDUP_SOURCE_DIR "/data/sample/news.jsonl",
                     std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }();
  return text;
}

void read_records(benchmark::State& state, const std::string& bytes) {
  if (sample().empty()) {
    state.SkipWithError("no sample corpus (data/sample/news.jsonl or SIMDUP_BENCH_JSONL)");
    return;
  }
  uint64_t records = 0;
  for (auto _ : state) {
    simdup::reader r = simdup::reader::from_memory("sample", bytes, {});
    simdup::document doc;
    simdup::error_info error;
    while (r.next(doc, error) == simdup::read_status::record) ++records;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * sample().size()));
  state.counters["records"] =
      benchmark::Counter(static_cast<double>(records), benchmark::Counter::kIsRate);
}

void BM_ReadJsonlPlain(benchmark::State& state) {
  read_records(state, sample());
}
void BM_ReadJsonlGzip(benchmark::State& state) {
  static const std::string gz = simdup::test::gzip(sample());
  read_records(state, gz);
}
void BM_ReadJsonlZstd(benchmark::State& state) {
  static const std::string zst = simdup::test::zstd(sample());
  read_records(state, zst);
}

BENCHMARK(BM_ReadJsonlPlain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadJsonlGzip)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadJsonlZstd)->Unit(benchmark::kMillisecond);

}  // namespace
