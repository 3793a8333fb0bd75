// The positional popcount for AVX2, compiled with -mavx2 (src/features/CMakeLists.txt) and
// called only on CPUs that have it (best_positional_popcount in accumulate.cpp).
#include "features/accumulate.hpp"

#include <immintrin.h>

#include <algorithm>

namespace simdup::detail {

void positional_popcount_avx2(std::span<const uint64_t> hashes, uint64_t* counts) {
  constexpr long long kOnes = 0x0101010101010101LL;
  // The lane layout of positional_popcount_sse2; register r, lane q tests bit position
  // p = 4*r + q within each byte.
  const __m256i m0 = _mm256_setr_epi64x(kOnes, kOnes << 1, kOnes << 2, kOnes << 3);
  const __m256i m1 = _mm256_slli_epi64(m0, 4);
  while (!hashes.empty()) {
    const std::size_t block = std::min(hashes.size(), popcount_block);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0;
    for (std::size_t i = 0; i < block; ++i) {
      const __m256i v = _mm256_set1_epi64x(static_cast<long long>(hashes[i]));
      a0 = _mm256_sub_epi8(a0, _mm256_cmpeq_epi8(_mm256_and_si256(v, m0), m0));
      a1 = _mm256_sub_epi8(a1, _mm256_cmpeq_epi8(_mm256_and_si256(v, m1), m1));
    }
    alignas(32) uint8_t lanes[64];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a0);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 32), a1);
    for (int r = 0; r < 2; ++r)
      for (int q = 0; q < 4; ++q)
        for (int b = 0; b < 8; ++b) counts[8 * b + 4 * r + q] += lanes[32 * r + 8 * q + b];
    hashes = hashes.subspan(block);
  }
}

}  // namespace simdup::detail
