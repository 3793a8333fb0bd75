// Record reader throughput on the bundled sample corpus (data/sample/news.jsonl, 7 MB of JSONL;
// SIMDUP_BENCH_JSONL overrides it), read from memory plain, gzip- and zstd-compressed. The plain
// read is the baseline of the compressed ones; bytes/s counts the decompressed bytes. The zstd
// reader decodes in 4 KiB steps (src/io/byte_source.cpp: what a corruption may cost).
#include <simdup/reader.hpp>

#include <benchmark/benchmark.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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

std::string gzip_of(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstd_of(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
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
  static const std::string gz = gzip_of(sample());
  read_records(state, gz);
}
void BM_ReadJsonlZstd(benchmark::State& state) {
  static const std::string zst = zstd_of(sample());
  read_records(state, zst);
}

BENCHMARK(BM_ReadJsonlPlain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadJsonlGzip)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadJsonlZstd)->Unit(benchmark::kMillisecond);

}  // namespace
