// The dedup engines on a synthetic corpus of N documents (default 10M): random fingerprints,
// with 10% exact copies and 20% near duplicates planted at 1..3 bits, no text. Measures the
// decision stage alone (the text pipeline is bench_dedup_throughput): documents/s, CPU time,
// engine bytes per document and peak RSS per document beyond the corpus, for batch
// (components, star) and stream mode.
//
//   bench_dedup_synthetic [N] [--mode batch|stream|all] [-k K] [--verify]
//
// With --verify every document gets a synthetic shingle array (200 hashes; a near duplicate
// shares 90% of its source's), generated on the fly so the corpus stays small, and the engines
// spill them to a temporary file (TMPDIR) as the dedup job does.
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "process_stats.hpp"

namespace {

using simdup::bench::cpu_seconds;
using simdup::bench::reset_peak_rss;
using simdup::bench::status_bytes;

using namespace simdup;

struct corpus {
  std::vector<doc_signature> docs;
  std::vector<uint32_t> source;  // the document a copy or near duplicate was made from (or itself)
};

corpus make_corpus(std::size_t n) {
  std::mt19937_64 rng(42);
  corpus c;
  c.docs.resize(n);
  c.source.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    doc_signature& d = c.docs[i];
    d.has_fingerprint = true;
    d.length = 500 + static_cast<uint32_t>(rng() % 3000);
    c.source[i] = static_cast<uint32_t>(i);
    const uint64_t roll = rng() % 10;
    if (i > 0 && roll == 0) {  // exact copy of an earlier document
      const auto src = static_cast<uint32_t>(rng() % i);
      d.fingerprint = c.docs[src].fingerprint;
      d.content_key = c.docs[src].content_key;
      c.source[i] = c.source[src];
    } else if (i > 0 && roll <= 2) {  // near duplicate
      const auto src = static_cast<uint32_t>(rng() % i);
      d.fingerprint = c.docs[src].fingerprint;
      const int bits = 1 + static_cast<int>(rng() % 3);
      for (int b = 0; b < bits; ++b) d.fingerprint ^= 1ull << (rng() % 64);
      d.content_key = rng() | 1;
      c.source[i] = c.source[src];
    } else {
      d.fingerprint = rng();
      d.content_key = rng() | 1;
    }
  }
  return c;
}

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// 200 sorted hashes, one per 2^24-wide slot: a document derived from another shares the slots'
// values of its source except in about 10% of the slots, where it has its own (Jaccard ~0.82).
void synthetic_shingles(const corpus& c, uint32_t i, std::vector<uint32_t>& out) {
  out.clear();
  const uint32_t src = c.source[i];
  for (uint32_t slot = 0; slot < 200; ++slot) {
    const uint64_t shared = splitmix((uint64_t{src} << 8) | slot);
    const uint64_t own = splitmix((uint64_t{i} << 8) | slot | (uint64_t{1} << 63));
    const uint64_t value = src != i && own % 10 == 0 ? own >> 40 : shared >> 40;
    out.push_back(slot << 24 | static_cast<uint32_t>(value & 0xFFFFFF));
  }
}

struct measure {
  double wall = 0, cpu = 0, peak_beyond = 0;
};

template <class F>
measure timed(F&& f) {
  const double rss = status_bytes("VmRSS:");
  reset_peak_rss();
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  measure m;
  m.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.cpu = cpu_seconds() - cpu0;
  m.peak_beyond = status_bytes("VmHWM:") - rss;
  return m;
}

void print(const char* name, std::size_t n, const measure& m, std::size_t duplicates,
           std::size_t engine_bytes, uint64_t candidates) {
  std::printf(
      "%-17s %7.2f s wall %7.2f s CPU %6.2f M docs/s  duplicates %zu  engine %.1f B/doc  "
      "peak RSS beyond corpus %.1f B/doc  candidates %llu\n",
      name, m.wall, m.cpu, static_cast<double>(n) / m.wall / 1e6, duplicates,
      static_cast<double>(engine_bytes) / static_cast<double>(n),
      m.peak_beyond / static_cast<double>(n), static_cast<unsigned long long>(candidates));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 10'000'000;
  std::string mode = "all";
  int k = 3;
  bool verify = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mode" && i + 1 < argc) {
      mode = argv[++i];
    } else if (a == "-k" && i + 1 < argc) {
      k = std::atoi(argv[++i]);
    } else if (a == "--verify") {
      verify = true;
    } else if (!a.empty() && a[0] != '-') {
      n = std::strtoull(a.c_str(), nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: bench_dedup_synthetic [N] [--mode batch|stream|all] [-k K] "
                   "[--verify]\n");
      return 2;
    }
  }
  std::printf(
      "synthetic corpus: %zu documents (10%% exact copies, 20%% near at 1-3 bits), k %d%s\n", n, k,
      verify ? ", --verify jaccard:0.8 (200 synthetic shingles per document)" : "");
  const corpus c = make_corpus(n);
  std::printf("corpus built, RSS %.0f MB\n", status_bytes("VmRSS:") / 1e6);
  dedup_options base;
  // The engines alone, as before the profile's defaults: no MinHash, verification on request.
  base.detection.k = k;
  base.detection.minhash = minhash_options{};
  base.detection.clustering = cluster_linking::components;
  if (!verify) base.detection.verify.reset();
  std::vector<uint32_t> shingles;

  if (mode == "batch" || mode == "all") {
    for (cluster_linking linking : {cluster_linking::components, cluster_linking::star}) {
      dedup_options o = base;
      o.detection.clustering = linking;
      std::size_t duplicates = 0, memory = 0;
      uint64_t candidates = 0;
      const measure m = timed([&] {
        auto engine = batch_deduplicator::create(o).value();
        for (uint32_t i = 0; i < n; ++i) {
          doc_signature copy = c.docs[i];
          if (verify) synthetic_shingles(c, i, copy.shingles);
          if (!engine.add(std::move(copy))) std::abort();
        }
        memory = engine.memory_bytes();
        const auto decisions = engine.finish().value();
        for (uint32_t i = 0; i < decisions.size(); ++i) duplicates += decisions[i].kept(i) ? 0 : 1;
        memory += decisions.capacity() * sizeof(dedup_decision);
        candidates = engine.candidate_pairs();
      });
      print(linking == cluster_linking::star ? "batch star" : "batch components", n, m, duplicates,
            memory, candidates);
    }
  }
  if (mode == "stream" || mode == "all") {
    dedup_options o = base;
    o.mode = dedup_mode::stream;
    std::size_t duplicates = 0, memory = 0;
    const measure m = timed([&] {
      auto engine = stream_deduplicator::create(o).value();
      // Chunks of 256 documents, as the dedup job's pipeline hands them over.
      std::vector<doc_signature> chunk(256);
      std::vector<dedup_decision> decisions;
      for (uint32_t first = 0; first < n; first += 256) {
        const uint32_t count = std::min<uint32_t>(256, static_cast<uint32_t>(n) - first);
        for (uint32_t j = 0; j < count; ++j) {
          const doc_signature& d = c.docs[first + j];
          doc_signature& sig = chunk[j];
          sig.fingerprint = d.fingerprint;
          sig.has_fingerprint = d.has_fingerprint;
          sig.content_key = d.content_key;
          sig.length = d.length;
          if (verify) synthetic_shingles(c, first + j, sig.shingles);
        }
        if (!engine.add(std::span(chunk.data(), count), decisions)) std::abort();
        for (uint32_t j = 0; j < count; ++j) duplicates += decisions[j].kept(first + j) ? 0 : 1;
      }
      memory = engine.memory_bytes();
    });
    print("stream", n, m, duplicates, memory, 0);
  }
  return 0;
}
