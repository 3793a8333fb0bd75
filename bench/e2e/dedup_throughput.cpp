// End-to-end throughput of the dedup job on real text: reading, normalising, fingerprinting,
// deciding and writing --out, with the CLI's defaults (-k 8, star clusters, --verify
// jaccard:0.8, min-features 10) and without verification, in batch and stream mode.
//
//   bench_dedup_throughput [--once] [FILE.jsonl ...]   (default: data/sample/news.jsonl)
//
// Small files are read several times (the inputs list repeats them) so that the run lasts
// long enough to measure; MB/s counts the bytes actually read. The repeats are exact
// duplicates of the first pass, so they measure the exact layer more than the near layer and
// verification; --once reads each file once, as `simdup dedup FILE` does (the speed target is
// `--once eval/out/en.jsonl`). Prints MB/s of wall time and
// per CPU-second (all threads: on a busy machine the CPU figure is the stable one), documents/s,
// and the peak RSS beyond what the process held before the run, per document.
#include <simdup/dedup_job.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "process_stats.hpp"

namespace {

using simdup::bench::cpu_seconds;
using simdup::bench::reset_peak_rss;
using simdup::bench::status_bytes;

}  // namespace

int main(int argc, char** argv) {
  using namespace simdup;
  std::vector<std::string> files;
  bool once = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--once") {
      once = true;
    } else {
      files.emplace_back(argv[i]);
    }
  }
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
  const uint64_t target = once ? 0 : 200'000'000;
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
  for (const variant v : {variant{"batch, defaults (--verify)", dedup_mode::batch, true},
                          variant{"batch, --verify off", dedup_mode::batch, false},
                          variant{"stream, defaults (--verify)", dedup_mode::stream, true}}) {
    dedup_job_options o;
    o.inputs = inputs;
    o.out_dir = out.string();
    o.replace_output = true;  // each variant replaces the previous one's result
    o.progress = progress_style::none;
    o.dedup.mode = v.mode;
    o.dedup.detection.clustering = cluster_linking::star;
    o.dedup.detection.minhash = minhash_options{};
    if (!v.verify) o.dedup.detection.verify.reset();
    const double rss = status_bytes("VmRSS:");
    reset_peak_rss();
    const double cpu0 = cpu_seconds();
    auto s = run_dedup_job(o, stderr);
    const double cpu = cpu_seconds() - cpu0;
    const double peak = status_bytes("VmHWM:") - rss;
    if (!s) {
      std::fprintf(stderr, "bench_dedup_throughput: %s\n", s.error().message.c_str());
      return 1;
    }
    const double mb = static_cast<double>(s->bytes) / 1e6;
    const auto docs = static_cast<double>(s->read);
    std::printf(
        "%-28s %8.1f MB: %6.2f s wall = %6.1f MB/s, %6.2f s CPU = %6.1f MB/CPU-s, %8.0f docs/s, "
        "peak RSS beyond start %.0f MB = %.0f B/doc, engine %.0f B/doc, duplicates %llu of "
        "%llu, near pairs %llu (rejected %llu), spill %.1f MB\n",
        v.name, mb, s->seconds_total, mb / s->seconds_total, cpu, mb / cpu, docs / s->seconds_total,
        peak / 1e6, peak / docs, static_cast<double>(s->engine_memory_bytes) / docs,
        static_cast<unsigned long long>(s->duplicates), static_cast<unsigned long long>(s->read),
        static_cast<unsigned long long>(s->candidate_pairs),
        static_cast<unsigned long long>(s->rejected_pairs),
        static_cast<double>(s->verify_spill_bytes) / 1e6);
    for (const auto& [phase, sec] : s->seconds_by_phase) {
      std::printf("    %-40s %6.2f s\n", phase.c_str(), sec);
    }
  }
  std::filesystem::remove_all(out);
  return 0;
}
