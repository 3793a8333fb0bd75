// End-to-end fingerprint throughput on real text: MB/s and documents/s for the default mode and
// python-simhash compat mode, for English and Chinese documents separately, on one thread and
// on all threads.
//
//   bench_fingerprint_throughput [--only TEXT] [FILE...]     (default: data/sample/*.jsonl)
//
// --only runs just the rows whose "corpus mode" label contains TEXT (e.g. "english default"),
// so a profiler sees one path alone.
// FILE is anything simdup reads (JSONL, TSV, text, WARC; .gz/.zst). Documents are read into
// memory first, so the numbers measure normalise + features + hash + vote, not I/O. A document
// is "Chinese" when at least 1% of its code points are CJK ideographs, else "English" (the
// sample is about half each, and the two differ several-fold in speed).
//
// Two rates are printed: `cpu` divides the bytes by the CPU time the worker threads used (what
// the code costs, stable on a shared machine) and `wall` by elapsed time (what a user waits,
// inflated when other processes compete for the cores).
#include <simdup/fingerprint.hpp>
#include <simdup/reader.hpp>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "process_stats.hpp"

namespace {

using simdup::bench::thread_cpu_seconds;

using clock_type = std::chrono::steady_clock;

struct corpus {
  const char* name;
  std::vector<std::string> texts;
  std::size_t bytes = 0;
};

/// True when at least 1% of the code points of `text` are CJK unified ideographs.
bool mostly_chinese(const std::string& text) {
  std::size_t points = 0, cjk = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    ++points;
    // U+4E00..U+9FFF is E4 B8 80 .. E9 BF BF in UTF-8.
    if (c >= 0xE4 && c <= 0xE9 && i + 1 < text.size()) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      if (c > 0xE4 || c1 >= 0xB8) ++cjk;
    }
  }
  return points > 0 && cjk * 100 >= points;
}

bool load(const std::vector<std::string>& inputs, corpus& english, corpus& chinese) {
  auto rd = simdup::reader::open(inputs, {});
  if (!rd) {
    std::fprintf(stderr, "bench: %s\n", rd.error().message.c_str());
    return false;
  }
  simdup::document doc;
  simdup::error_info err;
  for (;;) {
    const auto st = rd->next(doc, err);
    if (st == simdup::read_status::end) break;
    if (st == simdup::read_status::failed) {
      std::fprintf(stderr, "bench: %s\n", err.message.c_str());
      return false;
    }
    if (st != simdup::read_status::record) continue;
    corpus& c = mostly_chinese(doc.text) ? chinese : english;
    c.bytes += doc.text.size();
    c.texts.push_back(std::move(doc.text));
  }
  return !english.texts.empty() || !chinese.texts.empty();
}

struct timing {
  double wall = 0;  ///< elapsed seconds per pass
  double cpu = 0;   ///< CPU seconds per pass, summed over the worker threads
};

/// Fingerprints the whole corpus on `threads` threads, repeating until at least `min_seconds`
/// passed.
timing time_pass(const simdup::fingerprinter& fp, const corpus& c, unsigned threads,
                 double min_seconds) {
  std::atomic<uint64_t> sink{0};  // keeps the work observable
  std::atomic<int64_t> cpu_ns{0};
  const auto one_pass = [&] {
    std::atomic<std::size_t> next{0};
    const auto worker = [&] {
      const double cpu_start = thread_cpu_seconds();
      uint64_t acc = 0;
      for (;;) {
        const std::size_t begin = next.fetch_add(64);
        if (begin >= c.texts.size()) break;
        const std::size_t end = std::min(begin + 64, c.texts.size());
        for (std::size_t i = begin; i < end; ++i) acc ^= fp.fingerprint(c.texts[i]).fingerprint;
      }
      sink ^= acc;
      cpu_ns += static_cast<int64_t>((thread_cpu_seconds() - cpu_start) * 1e9);
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  };
  one_pass();  // warm-up: dictionaries, caches
  cpu_ns = 0;
  int passes = 0;
  const auto start = clock_type::now();
  double elapsed = 0;
  do {
    one_pass();
    ++passes;
    elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  } while (elapsed < min_seconds);
  if (sink.load() == 42) std::puts("");  // never true in practice; defeats dead-code removal
  return {elapsed / passes, static_cast<double>(cpu_ns.load()) * 1e-9 / passes};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      inputs.push_back(arg);
    }
  }
  if (inputs.empty()) inputs.push_back(std::string(SIMDUP_SOURCE_DIR) + "/data/sample/*.jsonl");
  corpus english{"english"}, chinese{"chinese"};
  if (!load(inputs, english, chinese)) return 1;

  const unsigned all = std::max(1u, std::thread::hardware_concurrency());
  struct mode {
    const char* name;
    simdup::compat_mode compat;
  };
  for (const corpus* c : {&english, &chinese}) {
    if (c->texts.empty()) continue;
    bool header = false;
    for (const mode m : {mode{"default", simdup::compat_mode::none},
                         mode{"python-simhash", simdup::compat_mode::python_simhash}}) {
      if ((std::string(c->name) + " " + m.name).find(only) == std::string::npos) continue;
      if (!header) {
        std::printf("%s: %zu documents, %.1f MB of text\n", c->name, c->texts.size(),
                    static_cast<double>(c->bytes) / 1e6);
        header = true;
      }
      simdup::fingerprint_options o;
      o.compat = m.compat;
      auto fp = simdup::fingerprinter::create(o);
      if (!fp) {
        std::fprintf(stderr, "bench: %s\n", fp.error().message.c_str());
        return 1;
      }
      for (const unsigned threads : {1u, all}) {
        const timing t = time_pass(*fp, *c, threads, 2.0);
        const double mb = static_cast<double>(c->bytes) / 1e6;
        std::printf(
            "  %-8s %-15s threads=%u  cpu %7.1f MB/s per thread  wall %7.1f MB/s  %9.0f docs/s\n",
            c->name, m.name, threads, mb / t.cpu, mb / t.wall,
            static_cast<double>(c->texts.size()) / t.wall);
        if (all == 1) break;
      }
    }
  }
  return 0;
}
