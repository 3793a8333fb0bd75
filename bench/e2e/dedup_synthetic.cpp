// The dedup engines on a synthetic corpus of N documents (default 10M): random fingerprints,
// with 10% exact copies and 20% near duplicates planted at 1..3 bits, no text. Measures the
// decision stage alone (the text pipeline is bench_dedup_throughput): documents/s, engine
// bytes per document and peak RSS, for batch (components, star) and stream mode.
//
//   bench_dedup_synthetic [N]
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace simdup;

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

std::vector<doc_signature> make_corpus(std::size_t n) {
  std::mt19937_64 rng(42);
  std::vector<doc_signature> docs(n);
  for (std::size_t i = 0; i < n; ++i) {
    doc_signature& d = docs[i];
    d.has_fingerprint = true;
    d.length = 500 + static_cast<uint32_t>(rng() % 3000);
    const uint64_t roll = rng() % 10;
    if (i > 0 && roll == 0) {  // exact copy of an earlier document
      const doc_signature& src = docs[rng() % i];
      d.fingerprint = src.fingerprint;
      d.content_key = src.content_key;
    } else if (i > 0 && roll <= 2) {  // near duplicate
      d.fingerprint = docs[rng() % i].fingerprint;
      const int bits = 1 + static_cast<int>(rng() % 3);
      for (int b = 0; b < bits; ++b) d.fingerprint ^= 1ull << (rng() % 64);
      d.content_key = rng() | 1;
    } else {
      d.fingerprint = rng();
      d.content_key = rng() | 1;
    }
  }
  return docs;
}

template <class F>
double timed(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
  std::printf("synthetic corpus: %zu documents (10%% exact copies, 20%% near at 1-3 bits)\n", n);
  const auto corpus = make_corpus(n);
  std::printf("corpus built, peak RSS %.0f MB\n", peak_rss_mb());

  for (cluster_linking linking : {cluster_linking::components, cluster_linking::star}) {
    dedup_options o;
    o.linking = linking;
    auto engine = batch_deduplicator::create(o).value();
    std::size_t duplicates = 0, memory = 0;
    const double seconds = timed([&] {
      for (const auto& d : corpus) {
        doc_signature copy = d;
        if (!engine.add(std::move(copy))) std::abort();
      }
      memory = engine.memory_bytes();
      const auto decisions = engine.finish().value();
      for (uint32_t i = 0; i < decisions.size(); ++i) duplicates += decisions[i].kept(i) ? 0 : 1;
      memory += decisions.capacity() * sizeof(dedup_decision);
    });
    std::printf(
        "batch %-10s %8.2f s  %7.2f M docs/s  duplicates %zu  engine %.1f B/doc  "
        "peak RSS %.0f MB  candidates %llu\n",
        linking == cluster_linking::star ? "star" : "components", seconds,
        static_cast<double>(n) / seconds / 1e6, duplicates,
        static_cast<double>(memory) / static_cast<double>(n), peak_rss_mb(),
        static_cast<unsigned long long>(engine.candidate_pairs()));
  }

  dedup_options o;
  o.mode = dedup_mode::stream;
  auto engine = stream_deduplicator::create(o).value();
  std::size_t duplicates = 0;
  const double seconds = timed([&] {
    for (uint32_t i = 0; i < corpus.size(); ++i) {
      duplicates += engine.add(corpus[i]).value().kept(i) ? 0 : 1;
    }
  });
  std::printf(
      "stream           %8.2f s  %7.2f M docs/s  duplicates %zu  engine %.1f B/doc  "
      "peak RSS %.0f MB\n",
      seconds, static_cast<double>(n) / seconds / 1e6, duplicates,
      static_cast<double>(engine.memory_bytes()) / static_cast<double>(n), peak_rss_mb());
  return 0;
}
