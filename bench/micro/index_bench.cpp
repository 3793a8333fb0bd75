// Micro-benchmarks of the Hamming index: table permutation, batch all-pairs, online queries.
#include <simdup/all_pairs.hpp>
#include <simdup/online_index.hpp>

#include <benchmark/benchmark.h>

#include <random>

#include "index/tables.hpp"

namespace {

std::vector<uint64_t> random_fps(std::size_t n) {
  std::mt19937_64 rng(1);
  std::vector<uint64_t> v(n);
  for (auto& x : v) x = rng();
  return v;
}

void BM_IndexPermute(benchmark::State& state) {
  const auto tables = simdup::detail::build_tables(simdup::index_layout::even(3, 5));
  const auto fps = random_fps(4096);
  for (auto _ : state) {
    uint64_t acc = 0;
    for (uint64_t f : fps)
      for (const auto& t : tables) acc ^= t.apply(f);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 4096 * static_cast<int64_t>(tables.size()));
}
BENCHMARK(BM_IndexPermute);

void BM_IndexAllPairs(benchmark::State& state) {
  const auto fps = random_fps(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    uint64_t pairs = 0;
    auto r = simdup::all_pairs(fps, {}, [&](std::span<const simdup::index_pair> p) {
      pairs += p.size();
      return true;
    });
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_IndexAllPairs)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_IndexOnlineQuery(benchmark::State& state) {
  const auto fps = random_fps(1 << 20);
  simdup::online_index_options opt;
  opt.expected_size = fps.size();
  auto idx = simdup::online_index::create(opt);
  std::vector<simdup::index_entry> es;
  for (std::size_t i = 0; i < fps.size(); ++i) es.push_back({fps[i], i, 0});
  idx->insert(es);
  idx->compact();
  const auto qs = random_fps(1024);
  simdup::query_results r;
  for (auto _ : state) {
    idx->query(qs, r);
    benchmark::DoNotOptimize(r.matches.data());
  }
  state.SetItemsProcessed(state.iterations() * 1024);
}
BENCHMARK(BM_IndexOnlineQuery);

}  // namespace
