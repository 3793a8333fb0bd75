// The body of the fused shingle kernel (shingle_kernel.hpp) for x86 256-bit vectors, shared by
// shingle_kernel_avx2.cpp and shingle_kernel_avx512.cpp. Each includes it once, compiled with
// its own -m flags, after defining the two operations that differ (`ops::mul` and
// `ops::rotl`). Everything here has internal linkage, so no function compiled for one
// instruction set can be chosen by the linker for another translation unit.
//
// Per 16-byte load the kernel hashes 8 shingles: a byte shuffle lays each 4-byte shingle x out
// as the 64-bit word (x << 32) | x, which is XXH3's `input64` for a 4-byte input, and the
// rrmxmx finaliser runs on four words per vector. The votes are a positional popcount kept
// bit-sliced (Harley-Seal carry-save adders): 16 hash vectors cost 15 adders of 5 logic
// operations, and only the resulting "sixteens" vector is expanded into per-bit byte counters.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace simdup::detail {
namespace {

constexpr std::uint64_t xxh3_prime_mx = 0x9FB21C651E98DF25ULL;

inline std::uint64_t rotl_scalar(std::uint64_t x, int r) noexcept {
  return (x << r) | (x >> (64 - r));
}

// XXH3_len_4to8_64b for exactly 4 bytes at `p` (seed 0), as in xxhash.h.
inline std::uint64_t xxh3_4_scalar(const char* p, std::uint64_t bitflip) noexcept {
  std::uint32_t x;
  std::memcpy(&x, p, 4);  // x86 is little-endian, as XXH_readLE32 reads
  std::uint64_t h = ((std::uint64_t{x} << 32) | x) ^ bitflip;
  h ^= rotl_scalar(h, 49) ^ rotl_scalar(h, 24);
  h *= xxh3_prime_mx;
  h ^= (h >> 35) + 4;
  h *= xxh3_prime_mx;
  return h ^ (h >> 28);
}

inline __m256i xxh3_4_vector(__m256i input64, __m256i bitflip) noexcept {
  const __m256i prime = _mm256_set1_epi64x(static_cast<long long>(xxh3_prime_mx));
  __m256i h = _mm256_xor_si256(input64, bitflip);
  h = _mm256_xor_si256(h, _mm256_xor_si256(ops::rotl<49>(h), ops::rotl<24>(h)));
  h = ops::mul(h, prime);
  h = _mm256_xor_si256(h, _mm256_add_epi64(_mm256_srli_epi64(h, 35), _mm256_set1_epi64x(4)));
  h = ops::mul(h, prime);
  return _mm256_xor_si256(h, _mm256_srli_epi64(h, 28));
}

// Carry-save adder: h:l = a + b + c per bit.
inline void csa(__m256i& h, __m256i& l, __m256i a, __m256i b, __m256i c) noexcept {
  const __m256i u = _mm256_xor_si256(a, b);
  h = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u, c));
  l = _mm256_xor_si256(u, c);
}

// Per-bit counters in 8-bit lanes: every 64-bit lane holds a whole word, and byte b of lane q
// in register r tests bit 8*b + 4*r + q (the layout of positional_popcount_avx2).
class byte_counters {
 public:
  // Adds `weight` (1..255) to the counters of the bits set in `word`, broadcast to all lanes.
  void add(__m256i word, __m256i weight) noexcept {
    a0_ = _mm256_add_epi8(
        a0_, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(word, m0_), m0_), weight));
    a1_ = _mm256_add_epi8(
        a1_, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(word, m1_), m1_), weight));
  }
  // Adds each of the four 64-bit lanes of `v` with `weight`.
  void add_lanes(__m256i v, __m256i weight) noexcept {
    add(_mm256_permute4x64_epi64(v, 0x00), weight);
    add(_mm256_permute4x64_epi64(v, 0x55), weight);
    add(_mm256_permute4x64_epi64(v, 0xAA), weight);
    add(_mm256_permute4x64_epi64(v, 0xFF), weight);
  }
  // counts[i] += scale * counter of bit i; the counters restart at 0.
  void flush(std::uint64_t* counts, std::uint64_t scale) noexcept {
    alignas(32) std::uint8_t lanes[64];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a0_);
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 32), a1_);
    for (int r = 0; r < 2; ++r)
      for (int q = 0; q < 4; ++q)
        for (int b = 0; b < 8; ++b) counts[8 * b + 4 * r + q] += scale * lanes[32 * r + 8 * q + b];
    a0_ = _mm256_setzero_si256();
    a1_ = a0_;
  }

 private:
  static constexpr long long ones_ = 0x0101010101010101LL;
  const __m256i m0_ = _mm256_setr_epi64x(ones_, ones_ << 1, ones_ << 2, ones_ << 3);
  const __m256i m1_ = _mm256_slli_epi64(m0_, 4);
  __m256i a0_ = _mm256_setzero_si256();
  __m256i a1_ = _mm256_setzero_si256();
};

inline void ascii4_xxh3_votes_impl(const char* first, std::size_t count, std::uint64_t bitflip,
                                   std::uint64_t* counts) noexcept {
  const __m256i flip = _mm256_set1_epi64x(static_cast<long long>(bitflip));
  // Lane q of `lo` gets shingle q, lane q of `hi` shingle q + 4, as (x << 32) | x. vpshufb
  // works within 128-bit halves, so both halves hold the same 16 loaded bytes.
  const __m256i lo = _mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3, 4, 1, 2, 3, 4,  //
                                      2, 3, 4, 5, 2, 3, 4, 5, 3, 4, 5, 6, 3, 4, 5, 6);
  const __m256i hi = _mm256_add_epi8(lo, _mm256_set1_epi8(4));
  const __m256i one = _mm256_set1_epi8(1);
  byte_counters counters;
  __m256i ones = _mm256_setzero_si256();
  __m256i twos = ones, fours = ones, eights = ones;
  std::size_t k = 0;
  int blocks = 0;
  // A block hashes 64 shingles with 8 loads of 16 bytes at first + k + 8j; the last one ends at
  // first + k + 72, which must not pass first + count + 3.
  while (k + 69 <= count) {
    __m256i v[16];
    for (int j = 0; j < 8; ++j) {
      const __m256i bytes = _mm256_broadcastsi128_si256(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(first + k + 8 * j)));
      v[2 * j] = xxh3_4_vector(_mm256_shuffle_epi8(bytes, lo), flip);
      v[2 * j + 1] = xxh3_4_vector(_mm256_shuffle_epi8(bytes, hi), flip);
    }
    __m256i twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
    csa(twos_a, ones, ones, v[0], v[1]);
    csa(twos_b, ones, ones, v[2], v[3]);
    csa(fours_a, twos, twos, twos_a, twos_b);
    csa(twos_a, ones, ones, v[4], v[5]);
    csa(twos_b, ones, ones, v[6], v[7]);
    csa(fours_b, twos, twos, twos_a, twos_b);
    csa(eights_a, fours, fours, fours_a, fours_b);
    csa(twos_a, ones, ones, v[8], v[9]);
    csa(twos_b, ones, ones, v[10], v[11]);
    csa(fours_a, twos, twos, twos_a, twos_b);
    csa(twos_a, ones, ones, v[12], v[13]);
    csa(twos_b, ones, ones, v[14], v[15]);
    csa(fours_b, twos, twos, twos_a, twos_b);
    csa(eights_b, fours, fours, fours_a, fours_b);
    csa(sixteens, eights, eights, eights_a, eights_b);
    counters.add_lanes(sixteens, one);
    k += 64;
    // Four words per block: 63 blocks keep each 8-bit counter at most 252.
    if (++blocks == 63) {
      counters.flush(counts, 16);
      blocks = 0;
    }
  }
  counters.flush(counts, 16);
  // What the adders still hold: at most 4 lanes * (1 + 2 + 4 + 8) = 60 per counter; then at
  // most 68 leftover shingles, hashed one by one.
  counters.add_lanes(ones, one);
  counters.add_lanes(twos, _mm256_set1_epi8(2));
  counters.add_lanes(fours, _mm256_set1_epi8(4));
  counters.add_lanes(eights, _mm256_set1_epi8(8));
  for (; k < count; ++k) {
    const auto h = static_cast<long long>(xxh3_4_scalar(first + k, bitflip));
    counters.add(_mm256_set1_epi64x(h), one);
  }
  counters.flush(counts, 1);
}

}  // namespace
}  // namespace simdup::detail
