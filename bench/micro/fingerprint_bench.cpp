// End-to-end fingerprinting of ~4 KiB documents on one core: normalise + features + hash +
// vote. Targets: default English shingle mode >= 300 MB/s, python-simhash compat >= 20 MB/s.
#include <benchmark/benchmark.h>
#include <simdup/fingerprint.hpp>

#include "bench_corpus.hpp"

namespace {

using simdup::bench::corpus;

void run(benchmark::State& state, const corpus& c, const simdup::fingerprint_options& o) {
  if (c.docs.empty()) {
    state.SkipWithError("benchmark corpus not found (set SIMDUP_BENCH_EN / SIMDUP_BENCH_ZH)");
    return;
  }
  auto fp = simdup::fingerprinter::create(o);
  if (!fp) {
    state.SkipWithError(fp.error().message.c_str());
    return;
  }
  for (auto _ : state)
    for (std::string_view doc : c.docs) benchmark::DoNotOptimize(fp->fingerprint(doc));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.docs.size()));
}

void BM_FingerprintDefaultEnglish(benchmark::State& state) {
  run(state, simdup::bench::english(), {});
}
BENCHMARK(BM_FingerprintDefaultEnglish);

void BM_FingerprintDefaultChinese(benchmark::State& state) {
  run(state, simdup::bench::chinese(), {});
}
BENCHMARK(BM_FingerprintDefaultChinese);

void BM_FingerprintPythonSimhashEnglish(benchmark::State& state) {
  simdup::fingerprint_options o;
  o.compat = simdup::compat_mode::python_simhash;
  run(state, simdup::bench::english(), o);
}
BENCHMARK(BM_FingerprintPythonSimhashEnglish);

void BM_FingerprintPythonSimhashChinese(benchmark::State& state) {
  simdup::fingerprint_options o;
  o.compat = simdup::compat_mode::python_simhash;
  run(state, simdup::bench::chinese(), o);
}
BENCHMARK(BM_FingerprintPythonSimhashChinese);

void BM_FingerprintWordsEnglish(benchmark::State& state) {
  simdup::fingerprint_options o;
  o.features.kind = simdup::feature_kind::words;
  run(state, simdup::bench::english(), o);
}
BENCHMARK(BM_FingerprintWordsEnglish);

void BM_FingerprintBinaryShinglesEnglish(benchmark::State& state) {
  simdup::fingerprint_options o;
  o.weighting.scheme = simdup::weighting_scheme::binary;
  run(state, simdup::bench::english(), o);
}
BENCHMARK(BM_FingerprintBinaryShinglesEnglish);

}  // namespace
