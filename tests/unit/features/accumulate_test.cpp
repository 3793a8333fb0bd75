#include <gtest/gtest.h>

#include "features/accumulate.hpp"
#include "util/cpu.hpp"

#include <random>
#include <vector>

namespace simdup::detail {
namespace {

std::vector<uint64_t> naive_counts(const std::vector<uint64_t>& hashes) {
  std::vector<uint64_t> counts(64, 0);
  for (uint64_t h : hashes)
    for (int i = 0; i < 64; ++i) counts[i] += (h >> i) & 1;
  return counts;
}

std::vector<positional_popcount_fn> popcount_kernels() {
  std::vector<positional_popcount_fn> k{&positional_popcount_scalar, best_positional_popcount()};
#if defined(__x86_64__)
  k.push_back(&positional_popcount_sse2);
  if (cpu_has_avx2()) k.push_back(&positional_popcount_avx2);
#endif
  return k;
}

TEST(PositionalPopcount, KernelsAgreeWithNaiveCount) {
  std::mt19937_64 rng(42);
  // Sizes around the 255-hash block where 8-bit lanes are widened.
  for (std::size_t n : {0u, 1u, 7u, 254u, 255u, 256u, 511u, 1000u}) {
    std::vector<uint64_t> hashes(n);
    for (auto& h : hashes) h = rng();
    if (n > 3) hashes[3] = ~0ULL;  // all lanes at once
    const auto expected = naive_counts(hashes);
    for (auto kernel : popcount_kernels()) {
      std::vector<uint64_t> counts(64, 5);  // kernels add to what is there
      kernel(hashes, counts.data());
      for (int i = 0; i < 64; ++i)
        ASSERT_EQ(counts[i], expected[i] + 5) << "n=" << n << " bit " << i;
    }
  }
}

TEST(PositionalPopcount, AllOnesDoNotOverflowLanes) {
  std::vector<uint64_t> hashes(1000, ~0ULL);
  for (auto kernel : popcount_kernels()) {
    std::vector<uint64_t> counts(64, 0);
    kernel(hashes, counts.data());
    for (int i = 0; i < 64; ++i) EXPECT_EQ(counts[i], 1000u);
  }
}

// Hand-computed: bit 0 is set in 3 of 3 hashes (+3), bit 1 in 2 (+1), bit 2 in 1 (-1), bit 3
// in none (-3): fingerprint 0b0011.
TEST(UnitVotes, HandComputedExample) {
  unit_votes v;
  const uint64_t hashes[] = {0b0111, 0b0011, 0b0001};
  v.add(hashes);
  EXPECT_EQ(v.total(), 3u);
  EXPECT_EQ(v.fingerprint(), 0b0011u);
}

TEST(UnitVotes, TiesGiveZero) {
  unit_votes v;
  const uint64_t hashes[] = {0b01, 0b10};  // bits 0 and 1 each: +1 -1 = 0
  v.add(hashes);
  EXPECT_EQ(v.fingerprint(), 0u);
}

TEST(UnitVotes, ManyHashesMatchNaiveMajority) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> hashes(3001);
  unit_votes v;
  for (auto& h : hashes) h = rng() & rng();  // biased towards 0 so both outcomes occur
  // Streamed in blocks through add_streamed, as the fingerprinter does.
  add_streamed(v, [&](auto&& sink) {
    for (uint64_t h : hashes) sink(h);
  });
  EXPECT_EQ(v.total(), hashes.size());
  const auto counts = naive_counts(hashes);
  uint64_t expected = 0;
  for (int i = 0; i < 64; ++i) expected |= uint64_t{2 * counts[i] > hashes.size()} << i;
  EXPECT_EQ(v.fingerprint(), expected);
}

TEST(WeightedVotes, HandComputedExample) {
  weighted_votes v;
  v.add(0b01, 2.0);  // bit 0: +2, bit 1: -2
  v.add(0b10, 1.5);  // bit 0: -1.5, bit 1: +1.5
  v.add(0b11, 0.5);  // bit 0: +0.5, bit 1: +0.5 -> bit 0: 1.0, bit 1: 0.0 (tie)
  EXPECT_EQ(v.fingerprint(), 0b01u);
}

}  // namespace
}  // namespace simdup::detail
