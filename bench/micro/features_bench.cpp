// The stages of the default pipeline in isolation, on already-normalised English text:
// shingle boundaries, shingle hashing, vote accumulation (each SIMD kernel).
#include <benchmark/benchmark.h>
#include <simdup/normalize.hpp>

#include "bench_corpus.hpp"
#include "features/accumulate.hpp"
#include "features/extract.hpp"
#include "features/hash.hpp"

#include <random>
#include <vector>

namespace {

const std::string& normalised_english() {
  static const std::string text = [] {
    auto norm = simdup::normalizer::create({});
    return norm ? norm->normalize(simdup::bench::english().text) : std::string();
  }();
  return text;
}

void BM_Shingle(benchmark::State& state) {
  const std::string& text = normalised_english();
  for (auto _ : state) {
    std::size_t n = 0;
    simdup::detail::for_each_shingle(text, 4, [&](std::string_view s) { n += s.back(); });
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_Shingle);

template <simdup::hash_kind Kind>
void BM_ShingleHash(benchmark::State& state) {
  const std::string& text = normalised_english();
  simdup::detail::feature_hasher hasher(Kind);
  for (auto _ : state) {
    uint64_t x = 0;
    simdup::detail::for_each_shingle(text, 4, [&](std::string_view s) { x ^= hasher(s); });
    benchmark::DoNotOptimize(x);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ShingleHash<simdup::hash_kind::xxh3>)->Name("BM_ShingleHash/xxh3");
BENCHMARK(BM_ShingleHash<simdup::hash_kind::fnv1a>)->Name("BM_ShingleHash/fnv1a");
BENCHMARK(BM_ShingleHash<simdup::hash_kind::md5>)->Name("BM_ShingleHash/md5");

void BM_StageNormalize(benchmark::State& state) {
  const std::string& text = simdup::bench::english().text;
  auto norm = simdup::normalizer::create({});
  std::string out;
  for (auto _ : state) {
    norm->normalize(text, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_StageNormalize);

// Positional popcount over a block of hashes; items = hashes.
void accumulate(benchmark::State& state, simdup::detail::positional_popcount_fn kernel) {
  std::vector<uint64_t> hashes(4096);
  std::mt19937_64 rng(1);
  for (auto& h : hashes) h = rng();
  uint64_t counts[64] = {};
  for (auto _ : state) {
    kernel(hashes, counts);
    benchmark::DoNotOptimize(counts);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * hashes.size()));
}
void BM_AccumulateScalar(benchmark::State& state) {
  accumulate(state, &simdup::detail::positional_popcount_scalar);
}
BENCHMARK(BM_AccumulateScalar);
#if defined(__x86_64__)
void BM_AccumulateSse2(benchmark::State& state) {
  accumulate(state, &simdup::detail::positional_popcount_sse2);
}
BENCHMARK(BM_AccumulateSse2);
void BM_AccumulateAvx2(benchmark::State& state) {
  if (!simdup::detail::cpu_has_avx2()) {
    state.SkipWithError("no AVX2");
    return;
  }
  accumulate(state, &simdup::detail::positional_popcount_avx2);
}
BENCHMARK(BM_AccumulateAvx2);
#endif

// Shingles + xxh3 + vote on normalised text: the default pipeline minus normalisation.
void BM_ShingleHashVote(benchmark::State& state) {
  const std::string& text = normalised_english();
  for (auto _ : state) {
    simdup::detail::unit_votes votes;
    simdup::detail::add_streamed(votes, [&](auto&& sink) {
      simdup::detail::for_each_shingle(
          text, 4, [&](std::string_view s) { sink(simdup::detail::xxh3_64_short(s)); });
    });
    benchmark::DoNotOptimize(votes.fingerprint());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ShingleHashVote);

}  // namespace
