#include "features/accumulate.hpp"

#include "util/cpu.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace simdup::detail {
void positional_popcount_scalar(std::span<const uint64_t> hashes, uint64_t* counts) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kBitInByte = 0x8040201008040201ULL;  // byte j keeps bit j
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  while (!hashes.empty()) {
    const std::size_t block = std::min(hashes.size(), popcount_block);
    uint64_t acc[8] = {};  // acc[k] byte j counts bit 8k+j
    for (std::size_t i = 0; i < block; ++i) {
      const uint64_t h = hashes[i];
      for (int k = 0; k < 8; ++k) {
        // Spread byte k to all 8 bytes, keep bit j in byte j, then turn non-zero bytes into 1.
        const uint64_t spread = (((h >> (8 * k)) & 0xff) * kOnes) & kBitInByte;
        acc[k] += ((spread + kLow7) & kHigh) >> 7;
      }
    }
    for (int k = 0; k < 8; ++k)
      for (int j = 0; j < 8; ++j) counts[8 * k + j] += (acc[k] >> (8 * j)) & 0xff;
    hashes = hashes.subspan(block);
  }
}

#if defined(__x86_64__)

// Lane layout shared by the SIMD kernels (this one and accumulate_avx2.cpp): every 64-bit lane
// holds the whole hash; the lane's
// mask keeps one bit position p in each of its 8 bytes, so byte b of the lane tests bit
// 8*b + p. This needs no byte shuffle: one broadcast, AND, compare, subtract per register.

void positional_popcount_sse2(std::span<const uint64_t> hashes, uint64_t* counts) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  // Register r, lane q tests bit position p = 2*r + q within each byte.
  const __m128i m0 =
      _mm_set_epi64x(static_cast<long long>(kOnes << 1), static_cast<long long>(kOnes));
  const __m128i m1 = _mm_slli_epi64(m0, 2);
  const __m128i m2 = _mm_slli_epi64(m0, 4);
  const __m128i m3 = _mm_slli_epi64(m0, 6);
  while (!hashes.empty()) {
    const std::size_t block = std::min(hashes.size(), popcount_block);
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    for (std::size_t i = 0; i < block; ++i) {
      const __m128i v = _mm_set1_epi64x(static_cast<long long>(hashes[i]));
      // cmpeq gives -1 where the bit is set; subtracting -1 counts it.
      a0 = _mm_sub_epi8(a0, _mm_cmpeq_epi8(_mm_and_si128(v, m0), m0));
      a1 = _mm_sub_epi8(a1, _mm_cmpeq_epi8(_mm_and_si128(v, m1), m1));
      a2 = _mm_sub_epi8(a2, _mm_cmpeq_epi8(_mm_and_si128(v, m2), m2));
      a3 = _mm_sub_epi8(a3, _mm_cmpeq_epi8(_mm_and_si128(v, m3), m3));
    }
    alignas(16) uint8_t lanes[64];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), a0);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes + 16), a1);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes + 32), a2);
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes + 48), a3);
    for (int r = 0; r < 4; ++r)
      for (int q = 0; q < 2; ++q)
        for (int b = 0; b < 8; ++b) counts[8 * b + 2 * r + q] += lanes[16 * r + 8 * q + b];
    hashes = hashes.subspan(block);
  }
}

positional_popcount_fn best_positional_popcount() noexcept {
  static const positional_popcount_fn best =
      cpu_has_avx2() ? &positional_popcount_avx2 : &positional_popcount_sse2;
  return best;
}

#else

positional_popcount_fn best_positional_popcount() noexcept {
  return &positional_popcount_scalar;
}

#endif

uint64_t unit_votes::fingerprint() const noexcept {
  uint64_t fp = 0;
  // +1 per set bit, -1 per clear bit: the sum is 2*count - total, positive iff 2*count > total.
  for (int i = 0; i < 64; ++i) fp |= static_cast<uint64_t>(2 * counts_[i] > total_) << i;
  return fp;
}

}  // namespace simdup::detail
