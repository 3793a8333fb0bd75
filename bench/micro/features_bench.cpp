// The stages of the default pipeline in isolation, on already-normalised English text:
// shingle boundaries, shingle hashing, vote accumulation (each SIMD kernel), and the fused
// hash-and-vote kernels the pipeline uses for ASCII stretches; and the compat mode's MD5.
#include <benchmark/benchmark.h>
#include <simdup/normalize.hpp>
#include <simdup/utf8.hpp>

#include "bench_corpus.hpp"
#include "features/accumulate.hpp"
#include "features/extract.hpp"
#include "features/hash.hpp"
#include "features/md5.hpp"
#include "features/shingle_kernel.hpp"
#include "util/cpu.hpp"

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

// The default pipeline's shingle stage as the fingerprinter runs it: ASCII stretches through
// the fused kernel, the rest hashed one by one (same votes as BM_ShingleHashVote).
void BM_ShingleHashVoteFused(benchmark::State& state) {
  const std::string& text = normalised_english();
  for (auto _ : state) {
    simdup::detail::unit_votes votes;
    simdup::detail::vote_ascii4_xxh3_shingles(text, votes);
    benchmark::DoNotOptimize(votes.fingerprint());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ShingleHashVoteFused);

#if defined(__x86_64__)
// Each fused kernel alone on one long ASCII run; items = shingles.
void fused(benchmark::State& state, simdup::detail::ascii4_xxh3_kernel kernel) {
  const std::string& text = normalised_english();
  std::size_t ascii = simdup::utf8::ascii_prefix_length(text);
  if (ascii < 4) {
    state.SkipWithError("no ASCII text");
    return;
  }
  const std::size_t count = ascii - 3;
  const uint64_t bitflip = simdup::detail::xxh3_len4_bitflip();
  uint64_t counts[64] = {};
  for (auto _ : state) {
    kernel(text.data(), count, bitflip, counts);
    benchmark::DoNotOptimize(counts);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * count));
}
void BM_FusedHashVoteAvx2(benchmark::State& state) {
  if (!simdup::detail::cpu_has_avx2()) {
    state.SkipWithError("no AVX2");
    return;
  }
  fused(state, &simdup::detail::ascii4_xxh3_votes_avx2);
}
BENCHMARK(BM_FusedHashVoteAvx2);
void BM_FusedHashVoteAvx512(benchmark::State& state) {
  if (!simdup::detail::cpu_has_avx512vl_dq()) {
    state.SkipWithError("no AVX-512 VL/DQ");
    return;
  }
  fused(state, &simdup::detail::ascii4_xxh3_votes_avx512);
}
BENCHMARK(BM_FusedHashVoteAvx512);
#endif

// The MD5 feature hash of python-simhash compat mode on the width-4 shingles of Chinese
// text (12 bytes each), one digest at a time and batched (md5_64_many, the vector lanes the
// compat vote uses); items = shingles.
const std::vector<std::string_view>& chinese_shingles() {
  static const std::vector<std::string_view> shingles = [] {
    std::vector<std::string_view> out;
    const std::string& text = simdup::bench::chinese().text;
    simdup::detail::for_each_shingle(text, 4, [&](std::string_view s) { out.push_back(s); });
    return out;
  }();
  return shingles;
}

void BM_Md5One(benchmark::State& state) {
  const auto& shingles = chinese_shingles();
  for (auto _ : state) {
    uint64_t x = 0;
    for (std::string_view s : shingles) x ^= simdup::detail::md5_64(s);
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * shingles.size()));
}
BENCHMARK(BM_Md5One);

void BM_Md5Many(benchmark::State& state) {
  const auto& shingles = chinese_shingles();
  std::vector<uint64_t> out(shingles.size());
  for (auto _ : state) {
    simdup::detail::md5_64_many(shingles, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * shingles.size()));
}
BENCHMARK(BM_Md5Many);

// Normalisation of Chinese text (t2s included) in ~4 KiB documents, as the fingerprint
// benchmark feeds it.
void BM_StageNormalizeChinese(benchmark::State& state) {
  const auto& c = simdup::bench::chinese();
  auto norm = simdup::normalizer::create({});
  if (c.docs.empty() || !norm) {
    state.SkipWithError("Chinese corpus or OpenCC data missing");
    return;
  }
  std::string out;
  for (auto _ : state) {
    for (std::string_view doc : c.docs) {
      norm->normalize(doc, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes()));
}
BENCHMARK(BM_StageNormalizeChinese);

}  // namespace
