// MinHash band keys (dedup's second candidate generator, computed for every document while
// reading) at the default 10x6 and at 16x4, on sorted shingle-hash sets of a short paragraph,
// an article and a long page; beside the implementation before galloping (a pass over every
// hash with a vector<bool> of filled bins and two heap allocations per call), kept here only as
// the baseline. Both give the same keys (tests/unit/dedup/minhash_test.cpp checks the library's
// against the definition).
#include <benchmark/benchmark.h>
#include <simdup/minhash.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace {

std::vector<uint32_t> sorted_hashes(std::size_t n) {
  std::mt19937_64 rng(n);
  std::set<uint32_t> set;
  while (set.size() < n) set.insert(static_cast<uint32_t>(rng()));
  return {set.begin(), set.end()};
}

uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The library's implementation before this change, for the baseline.
void band_keys_before(std::span<const uint32_t> hashes, const simdup::minhash_options& options,
                      std::vector<uint64_t>& out) {
  out.clear();
  if (hashes.empty() || options.bands == 0) return;
  const std::size_t bins = options.bands * options.rows;
  std::vector<uint64_t> value(bins, 0);
  std::vector<bool> filled(bins, false);
  for (const uint32_t h : hashes) {
    const auto bin = static_cast<std::size_t>((uint64_t{h} * bins) >> 32);
    if (!filled[bin]) {
      filled[bin] = true;
      value[bin] = h;
    }
  }
  for (std::size_t i = 0; i < bins; ++i) {
    if (filled[i]) continue;
    std::size_t j = (i + 1) % bins, step = 1;
    while (!filled[j]) {
      j = (j + 1) % bins;
      ++step;
    }
    value[i] = value[j] | (uint64_t{step} << 32);
  }
  out.resize(options.bands);
  for (std::size_t band = 0; band < options.bands; ++band) {
    uint64_t key = mix(band + 1);
    for (std::size_t r = 0; r < options.rows; ++r) key = mix(key ^ value[band * options.rows + r]);
    out[band] = key == 0 ? 1 : key;
  }
}

template <bool Before>
void BM_BandKeys(benchmark::State& state) {
  const std::vector<uint32_t> hashes = sorted_hashes(static_cast<std::size_t>(state.range(0)));
  const simdup::minhash_options options{.bands = static_cast<std::size_t>(state.range(1)),
                                        .rows = static_cast<std::size_t>(state.range(2))};
  std::vector<uint64_t> keys;
  for (auto _ : state) {
    if constexpr (Before) {
      band_keys_before(hashes, options, keys);
    } else {
      simdup::minhash_band_keys(hashes, options, keys);
    }
    benchmark::DoNotOptimize(keys.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));  // documents per second
}

void sizes(benchmark::internal::Benchmark* b) {
  for (const int64_t n : {300, 3000, 30000}) {
    b->Args({n, 10, 6});
    b->Args({n, 16, 4});
  }
}

BENCHMARK(BM_BandKeys<true>)->Name("BM_BandKeys/before")->Apply(sizes);
BENCHMARK(BM_BandKeys<false>)->Name("BM_BandKeys/galloping")->Apply(sizes);

}  // namespace
