// Online index end to end: inserts N fingerprints (N/10 of them near-duplicates of earlier ones),
// then measures batch queries on T threads, single-query latency (p50/p99), memory (on the
// segments as inserting left them, then after compact()), and removes by id (the first one
// builds the segments' id tables; it is timed apart).
//
//   bench_index_online [--n 10000000] [--k 3] [--queries 2000000] [--threads 2]
//                      [--removes 200000] [--merge-cap-divisor 8]
#include <simdup/online_index.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "process_stats.hpp"

namespace {

using simdup::bench::cpu_seconds;
using simdup::bench::seconds_since;
using simdup::bench::thread_cpu_seconds;
using clock_type = std::chrono::steady_clock;

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 10'000'000, queries = 2'000'000, removes = 200'000;
  int k = 3;
  unsigned threads = 2;
  std::size_t cap_divisor = simdup::online_index_options{}.merge_cap_divisor;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--n")
      n = std::stoull(next());
    else if (a == "--k")
      k = std::stoi(next());
    else if (a == "--queries")
      queries = std::stoull(next());
    else if (a == "--removes")
      removes = std::stoull(next());
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--merge-cap-divisor")
      cap_divisor = std::stoull(next());
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::mt19937_64 rng(7);
  std::vector<simdup::index_entry> entries(n);
  for (std::size_t i = 0; i < n; ++i) {
    uint64_t f = rng();
    if (i % 10 == 9) f = entries[rng() % i].fingerprint ^ (uint64_t{1} << (rng() % 64));
    entries[i] = {f, i, static_cast<int64_t>(i)};
  }
  simdup::online_index_options opt;
  opt.layout.k = k;
  opt.expected_size = n;
  opt.merge_cap_divisor = cap_divisor;
  auto created = simdup::online_index::create(opt);
  if (!created) {
    std::fprintf(stderr, "%s\n", created.error().message.c_str());
    return 1;
  }
  simdup::online_index& idx = *created;
  std::printf("layout: %s (k=%d, %zu tables)\n", idx.layout().describe().c_str(), k,
              idx.layout().table_count());

  auto t0 = clock_type::now();
  constexpr std::size_t batch = 4096;
  for (std::size_t i = 0; i < n; i += batch)
    idx.insert(std::span(entries).subspan(i, std::min(batch, n - i)));
  const double insert_s = seconds_since(t0);
  auto st = idx.stats();
  std::printf("inserts: %.0f /s (%zu in %.2f s, sealing and merging included)\n",
              static_cast<double>(n) / insert_s, n, insert_s);
  std::printf("memory: %.1f bytes per entry (%.0f MB)\n",
              static_cast<double>(st.memory_bytes) / static_cast<double>(st.size),
              static_cast<double>(st.memory_bytes) / 1e6);

  // Queries: half near-duplicates of indexed entries, half random.
  std::vector<uint64_t> qs(queries);
  for (std::size_t i = 0; i < queries; ++i)
    qs[i] = i % 2 ? rng() : entries[rng() % n].fingerprint ^ (uint64_t{1} << (rng() % 64));
  // Measured twice: on the segments as inserting left them (what a service sees), then after
  // compact().
  auto measure = [&](const char* shape) {
    const auto s = idx.stats();
    std::printf("-- %s: %llu sealed segments, largest %llu entries\n", shape,
                static_cast<unsigned long long>(s.sealed_segments),
                static_cast<unsigned long long>(s.largest_segment));
    std::vector<std::size_t> found(threads, 0);
    const double c0 = cpu_seconds();
    auto q0 = clock_type::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        simdup::query_results r;
        const std::size_t lo = queries * t / threads, hi = queries * (t + 1) / threads;
        for (std::size_t i = lo; i < hi; i += 1024) {
          idx.query(std::span(qs).subspan(i, std::min<std::size_t>(1024, hi - i)), r);
          found[t] += r.matches.size();
        }
      });
    for (auto& p : pool) p.join();
    const double query_s = seconds_since(q0);
    const double query_cpu = cpu_seconds() - c0;
    std::size_t total_found = 0;
    for (auto f : found) total_found += f;
    std::printf(
        "batch queries: %.0f /s on %u threads (%zu matches; wall %.2f s, CPU %.2f s, "
        "%.2f us CPU per query)\n",
        static_cast<double>(queries) / query_s, threads, total_found, query_s, query_cpu,
        query_cpu * 1e6 / static_cast<double>(queries));

    std::vector<double> lat;
    const std::size_t single = std::min<std::size_t>(queries, 200'000);
    lat.reserve(single);
    std::size_t sink = 0;
    const double t0_cpu = thread_cpu_seconds();
    for (std::size_t i = 0; i < single; ++i) {
      const auto a = clock_type::now();
      sink += idx.query(qs[i]).size();
      lat.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - a).count());
    }
    const double single_cpu = thread_cpu_seconds() - t0_cpu;
    std::sort(lat.begin(), lat.end());
    std::printf(
        "single query latency: p50 %.2f us, p99 %.2f us, max %.1f us (%zu matches; "
        "%.2f us CPU per query)\n",
        lat[lat.size() / 2], lat[lat.size() * 99 / 100], lat.back(), sink,
        single_cpu * 1e6 / static_cast<double>(single));
  };
  measure("as inserted");
  t0 = clock_type::now();
  idx.compact();
  std::printf("compact: %.2f s\n", seconds_since(t0));
  measure("compacted");
  // Removes: distinct random ids (each indexed once), so each call removes one entry.
  std::vector<uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = entries[i].id;
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.resize(std::min(n, removes + 1));
  if (!ids.empty()) {
    t0 = clock_type::now();
    std::size_t removed = idx.remove(ids[0]);
    const double first_s = seconds_since(t0);
    t0 = clock_type::now();
    for (std::size_t i = 1; i < ids.size(); ++i) removed += idx.remove(ids[i]);
    const double remove_s = seconds_since(t0);
    const auto after = idx.stats();
    std::printf("first remove (builds the id tables): %.1f ms\n", first_s * 1e3);
    std::printf("removes: %.0f /s (%zu ids, %zu entries removed)\n",
                static_cast<double>(ids.size() - 1) / remove_s, ids.size(), removed);
    std::printf("memory after removes (id tables included): %.1f bytes per entry\n",
                static_cast<double>(after.memory_bytes) / static_cast<double>(after.size));
  }
  std::printf("peak RSS: %.0f MB (entries array of the harness included)\n",
              simdup::bench::peak_rss_bytes() / 1e6);
  return 0;
}
