// Batch all-pairs end to end: N random fingerprints plus P planted near-duplicates (0..3 bits
// flipped from a random earlier one), written as a binary file; then the timed run reads the
// file (mapped) and finds all pairs within k, and the plain single-threaded sort-per-table
// baseline runs on the same data. Prints wall and CPU times, the ratio (the baseline's time
// includes the same read) and peak RSS per fingerprint.
//
// With --memory-limit BYTES the timed run is the external one: passes over the file as
// `simdup pairs --binary` reads it (in place, in windows of the page cache), within the limit; the
// comparison is then the in-memory run on the mapped file, and both must give the same pairs. Peak
// RSS is taken before the comparison runs.
//
//   bench_index_pairs [--n 10000000] [--planted 1000000] [--k 3] [--threads 0]
//                     [--memory-limit BYTES] [--no-baseline] [--file /tmp/simdup_pairs.bin]
#include <simdup/all_pairs.hpp>
#include <simdup/fingerprint_list.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "index/all_pairs_baseline.hpp"
#include "process_stats.hpp"

namespace {

using simdup::bench::cpu_seconds;
using simdup::bench::peak_rss_bytes;
using simdup::bench::seconds_since;

using clock_type = std::chrono::steady_clock;

/// Runs in a child process so its memory does not count towards the measured peak.
void generate(const std::string& path, std::size_t n, std::size_t planted) {
  std::mt19937_64 rng(2026);
  std::vector<uint64_t> fps(n + planted);
  for (std::size_t i = 0; i < n; ++i) fps[i] = rng();
  for (std::size_t i = 0; i < planted; ++i) {
    uint64_t f = fps[rng() % n];
    const int flips = static_cast<int>(i % 4);
    for (int b = 0; b < flips; ++b) f ^= uint64_t{1} << (rng() % 64);
    fps[n + i] = f;
  }
  // Shuffle the planted copies in so they are not adjacent to nothing in particular.
  std::shuffle(fps.begin(), fps.end(), rng);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(fps.data(), 8, fps.size(), f) != fps.size()) std::exit(1);
  std::fclose(f);
}

/// A well-mixed hash of a pair: summed over a run, equal sums mean equal pair sets (pairs
/// come in any order; a collision is vanishingly unlikely).
uint64_t pair_hash(const simdup::index_pair& p) {
  uint64_t x = (uint64_t{p.a} << 32 | p.b) ^ (static_cast<uint64_t>(p.distance) << 58);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

/// The input file's fingerprints, memory-mapped and populated up front (no zero-filled copy:
/// the page cache's pages are mapped as they are).
class fingerprint_file {
 public:
  explicit fingerprint_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) std::exit(1);
    n_ = static_cast<std::size_t>(st.st_size) / 8;
    bytes_ = std::max<std::size_t>(n_ * 8, 1);
    void* p = ::mmap(nullptr, bytes_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) std::exit(1);
    data_ = static_cast<uint64_t*>(p);
    ::close(fd);
  }
  fingerprint_file(const fingerprint_file&) = delete;
  fingerprint_file& operator=(const fingerprint_file&) = delete;
  ~fingerprint_file() { ::munmap(data_, bytes_); }

  std::span<const uint64_t> span() const noexcept { return {data_, n_}; }

 private:
  std::size_t n_ = 0, bytes_ = 0;
  uint64_t* data_ = nullptr;
};

/// The external run within `limit`, then (with `compare`) the in-memory run on the same file.
int run_external(const std::string& path, simdup::all_pairs_options opt, uint64_t limit,
                 bool compare) {
  opt.memory_limit = limit;
  const auto t_start = clock_type::now();
  opt.on_pass = [&](uint64_t pass, uint64_t passes) {
    std::printf("  pass %llu of %llu at %.1f s\n", static_cast<unsigned long long>(pass),
                static_cast<unsigned long long>(passes), seconds_since(t_start));
    std::fflush(stdout);
  };
  // The CLI's reader: a binary file under a budget is read in place, in windows, each pass.
  auto list = simdup::read_fingerprint_list(std::vector<std::string>{path},
                                            {.binary = true, .memory_budget = 1});
  if (!list) {
    std::fprintf(stderr, "%s\n", list.error().message.c_str());
    return 1;
  }
  const simdup::fingerprint_scan scan = list->scan();
  const double c0 = cpu_seconds();
  const auto t0 = clock_type::now();
  uint64_t pairs = 0, digest = 0;
  auto run = simdup::all_pairs(scan, opt, [&](std::span<const simdup::index_pair> ps) {
    pairs += ps.size();
    for (const auto& p : ps) digest += pair_hash(p);
    return true;
  });
  const double wall = seconds_since(t0), cpu = cpu_seconds() - c0;
  if (!run) {
    std::fprintf(stderr, "%s\n", run.error().message.c_str());
    return 1;
  }
  const double rss = peak_rss_bytes();
  const double n = static_cast<double>(scan.size);
  std::printf("%s", run->plan.describe().c_str());
  std::printf(
      "external all pairs within %.2f GiB: %.1f s wall, %.1f s CPU (%.1f ns CPU per "
      "fingerprint), %llu passes\npairs: %llu\ncandidates: %llu\npeak RSS: %.1f MB = %.2f "
      "bytes per fingerprint; bytes written to disk: 0 (the input is read in place)\n",
      static_cast<double>(limit) / (1 << 30), wall, cpu, cpu * 1e9 / n,
      static_cast<unsigned long long>(run->passes), static_cast<unsigned long long>(pairs),
      static_cast<unsigned long long>(run->candidates), rss / 1e6, rss / n);
  if (compare) {
    const fingerprint_file input(path);
    opt.memory_limit = 0;
    opt.on_pass = nullptr;
    const double c1 = cpu_seconds();
    const auto t1 = clock_type::now();
    uint64_t mem_pairs = 0, mem_digest = 0;
    auto m = simdup::all_pairs(input.span(), opt, [&](std::span<const simdup::index_pair> ps) {
      mem_pairs += ps.size();
      for (const auto& p : ps) mem_digest += pair_hash(p);
      return true;
    });
    if (!m) return 1;
    const double mem_wall = seconds_since(t1), mem_cpu = cpu_seconds() - c1;
    std::printf(
        "in memory (mapped file, no limit): %.1f s wall, %.1f s CPU\npairs: %llu%s\n"
        "external / in memory: %.2fx wall, %.2fx CPU\n",
        mem_wall, mem_cpu, static_cast<unsigned long long>(mem_pairs),
        mem_pairs == pairs && mem_digest == digest ? " (same set)" : " (DIFFERENT!)",
        wall / mem_wall, cpu / mem_cpu);
  }
  std::remove(path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 10'000'000, planted = 1'000'000;
  int k = 3;
  unsigned threads = 0;
  uint64_t memory_limit = 0;
  bool baseline = true;
  std::string path = "/tmp/simdup_pairs.bin";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--n")
      n = std::stoull(next());
    else if (a == "--planted")
      planted = std::stoull(next());
    else if (a == "--k")
      k = std::stoi(next());
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--memory-limit")
      memory_limit = std::stoull(next());
    else if (a == "--no-baseline")
      baseline = false;
    else if (a == "--file")
      path = next();
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::printf("generating %zu random + %zu planted fingerprints into %s\n", n, planted,
              path.c_str());
  std::fflush(stdout);
  if (const pid_t pid = fork(); pid == 0) {
    generate(path, n, planted);
    std::_Exit(0);
  } else {
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
  }

  simdup::all_pairs_options opt;
  opt.layout.k = k;
  opt.threads = threads;
  if (memory_limit != 0) return run_external(path, opt, memory_limit, baseline);
  const double c0 = cpu_seconds();
  const auto t0 = clock_type::now();
  const fingerprint_file input(path);
  const std::span<const uint64_t> fps = input.span();
  const double read_s = seconds_since(t0);
  uint64_t pairs = 0, digest = 0;
  auto run = simdup::all_pairs(fps, opt, [&](std::span<const simdup::index_pair> ps) {
    pairs += ps.size();
    for (const auto& p : ps) digest += pair_hash(p);
    return true;
  });
  const double total_s = seconds_since(t0);
  const double total_cpu = cpu_seconds() - c0;
  if (!run) {
    std::fprintf(stderr, "%s\n", run.error().message.c_str());
    return 1;
  }
  const double rss = peak_rss_bytes();
  std::printf("%s", run->plan.describe().c_str());
  std::printf(
      "read (mmap, populated): %.4f s\nall pairs (read included): %.3f s wall, %.3f s CPU\npairs: "
      "%llu\n"
      "candidates: %llu\n",
      read_s, total_s, total_cpu, static_cast<unsigned long long>(pairs),
      static_cast<unsigned long long>(run->candidates));
  std::printf("peak RSS: %.1f MB = %.1f bytes per fingerprint\n", rss / 1e6,
              rss / static_cast<double>(fps.size()));
  if (baseline) {
    const double c1 = cpu_seconds();
    const auto t1 = clock_type::now();
    uint64_t base_pairs = 0, base_digest = 0;
    auto b = simdup::all_pairs_baseline(fps, opt, [&](std::span<const simdup::index_pair> ps) {
      base_pairs += ps.size();
      for (const auto& p : ps) base_digest += pair_hash(p);
      return true;
    });
    const double base_s = seconds_since(t1) + read_s;
    const double base_cpu = cpu_seconds() - c1;
    if (!b) return 1;
    std::printf(
        "baseline (single-threaded std::sort per table, same plan): %.3f s wall "
        "(read included), %.3f s CPU (read excluded)\nbaseline pairs: %llu%s\n"
        "speed-up: %.1fx wall, %.1fx CPU\n",
        base_s, base_cpu, static_cast<unsigned long long>(base_pairs),
        base_pairs == pairs && base_digest == digest ? " (same set)" : " (DIFFERENT!)",
        base_s / total_s, base_cpu / total_cpu);
  }
  std::remove(path.c_str());
  return 0;
}
