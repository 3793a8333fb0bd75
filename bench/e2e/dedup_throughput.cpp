// End-to-end throughput of the dedup job on real text: reading, normalising, fingerprinting,
// deciding and writing --out, with the default settings and with --verify.
//
//   bench_dedup_throughput [FILE.jsonl ...]   (default: data/sample/news.jsonl)
//
// Small files are read several times (the inputs list repeats them) so that the run lasts
// long enough to measure; MB/s counts the bytes actually read.
#include <simdup/dedup_job.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace simdup;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) files.emplace_back(argv[i]);
  if (files.empty()) files.emplace_back(SIMDUP_SOURCE_DIR "/data/sample/news.jsonl");
  uint64_t bytes = 0;
  for (const auto& f : files) {
    std::error_code ec;
    bytes += std::filesystem::file_size(f, ec);
    if (ec) {
      std::fprintf(stderr, "bench_dedup_throughput: cannot read %s\n", f.c_str());
      return 1;
    }
  }
  std::vector<std::string> inputs;
  const uint64_t target = 200'000'000;
  for (uint64_t total = 0; total < target || inputs.empty(); total += bytes) {
    inputs.insert(inputs.end(), files.begin(), files.end());
  }
  const auto out = std::filesystem::temp_directory_path() / "simdup-bench-dedup";
  std::printf("inputs: %zu files (%zu distinct), %.1f MB per pass over the distinct files\n",
              inputs.size(), files.size(), static_cast<double>(bytes) / 1e6);
  struct variant {
    const char* name;
    dedup_mode mode;
    bool verify;
  };
  for (const variant v : {variant{"batch, defaults", dedup_mode::batch, false},
                          variant{"stream, defaults", dedup_mode::stream, false},
                          variant{"batch, --verify jaccard:0.8", dedup_mode::batch, true}}) {
    dedup_job_options o;
    o.inputs = inputs;
    o.out_dir = out.string();
    o.progress = progress_style::none;
    o.fingerprint.min_features = 10;
    o.dedup.mode = v.mode;
    if (v.verify) o.dedup.verify = verify_options{};
    auto s = run_dedup_job(o, stderr);
    if (!s) {
      std::fprintf(stderr, "bench_dedup_throughput: %s\n", s.error().message.c_str());
      return 1;
    }
    std::printf(
        "%-30s %9.1f MB in %6.2f s = %6.1f MB/s, %8.0f docs/s, engine %.0f B/doc, "
        "peak RSS %.0f MB, duplicates %llu of %llu\n",
        v.name, static_cast<double>(s->bytes) / 1e6, s->seconds_total,
        static_cast<double>(s->bytes) / 1e6 / s->seconds_total,
        static_cast<double>(s->read) / s->seconds_total,
        static_cast<double>(s->engine_memory_bytes) / static_cast<double>(s->read),
        static_cast<double>(s->peak_rss_bytes) / 1e6,
        static_cast<unsigned long long>(s->duplicates), static_cast<unsigned long long>(s->read));
    for (const auto& [phase, sec] : s->seconds_by_phase) {
      std::printf("    %-40s %6.2f s\n", phase.c_str(), sec);
    }
  }
  std::filesystem::remove_all(out);
  return 0;
}
