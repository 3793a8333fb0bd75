// The fused shingle kernels against the plain path: XXH3-64 of every 4-byte shingle through
// the library's own xxh3 (the same function the golden vectors pin), counted bit by bit.
#include <gtest/gtest.h>

#include "features/hash.hpp"
#include "features/shingle_kernel.hpp"
#include "util/cpu.hpp"

#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {
namespace {

std::vector<ascii4_xxh3_kernel> shingle_kernels() {
  std::vector<ascii4_xxh3_kernel> k;
#if defined(__x86_64__)
  if (cpu_has_avx2()) k.push_back(&ascii4_xxh3_votes_avx2);
  if (cpu_has_avx512vl_dq()) k.push_back(&ascii4_xxh3_votes_avx512);
#endif
  return k;
}

std::vector<uint64_t> naive_counts(std::string_view text, std::size_t first, std::size_t count) {
  std::vector<uint64_t> counts(64, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const uint64_t h = xxh3_64(text.substr(first + k, 4));
    for (int i = 0; i < 64; ++i) counts[i] += (h >> i) & 1;
  }
  return counts;
}

TEST(ShingleKernel, MatchesScalarXxh3OnEveryLengthAndOffset) {
  const auto ks = shingle_kernels();
  if (ks.empty()) GTEST_SKIP() << "no SIMD kernel on this CPU";
  std::mt19937 rng(7);
  std::string text(3000, ' ');
  for (char& c : text) c = static_cast<char>(rng() % 128);  // every ASCII byte, NUL included
  // Lengths around the 64-shingle block, the 69-shingle look-ahead and the 63-block flush.
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n < 200; ++n) lengths.push_back(n);
  for (std::size_t n : {255u, 256u, 1000u, 2900u}) lengths.push_back(n);
  for (auto kernel : ks) {
    for (std::size_t count : lengths) {
      for (std::size_t first : {0u, 1u, 3u, 17u}) {
        // Exactly first..first+count+3 of a copy, so ASan would catch a read past the end.
        const std::string piece = text.substr(first, count + 3);
        std::vector<uint64_t> counts(64, 9);  // kernels add to what is there
        kernel(piece.data(), count, xxh3_len4_bitflip(), counts.data());
        const auto expected = naive_counts(piece, 0, count);
        for (int i = 0; i < 64; ++i)
          ASSERT_EQ(counts[i], expected[i] + 9) << "count=" << count << " bit " << i;
      }
    }
  }
}

TEST(ShingleKernel, LongRunsDoNotOverflowCounters) {
  const auto ks = shingle_kernels();
  if (ks.empty()) GTEST_SKIP() << "no SIMD kernel on this CPU";
  // One shingle repeated: every bit counter gets all or nothing, past many 63-block flushes.
  const std::string text(70000, 'a');
  const std::size_t count = text.size() - 3;
  const uint64_t h = xxh3_64("aaaa");
  for (auto kernel : ks) {
    std::vector<uint64_t> counts(64, 0);
    kernel(text.data(), count, xxh3_len4_bitflip(), counts.data());
    for (int i = 0; i < 64; ++i) ASSERT_EQ(counts[i], ((h >> i) & 1) ? count : 0u) << i;
  }
}

}  // namespace
}  // namespace simdup::detail
