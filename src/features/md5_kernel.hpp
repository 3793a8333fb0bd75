// The bodies of the MD5 kernels (md5.hpp), shared by md5.cpp (the build's baseline instruction
// set), md5_avx2.cpp and md5_avx512.cpp, each compiled with its own -m flags
// (src/features/CMakeLists.txt). Everything here has internal linkage, so no function compiled
// for one instruction set can be chosen by the linker for another translation unit.
#pragma once

#include "features/md5.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace simdup::detail {
namespace {

// RFC 1321 section 3.4: T[i] = floor(|sin(i + 1)| * 2^32).
constexpr uint32_t kSine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

// Left-rotation amounts: four per round, repeating within the round.
constexpr int kShift[16] = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

// Words A, B, C, D of section 3.3.
constexpr uint32_t kInit[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

// MD5 reads its message and writes its digest as little-endian words on every host.
uint32_t load_le32(const unsigned char* p) noexcept {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// The 64 steps of section 3.4 on words x[v][0..16), for N independent states side by side:
// one message (T = uint32_t, N = 1) or one per vector lane (GCC vector types, whose shifts
// and + with a scalar apply to every lane; N > 1 interleaves independent chains). Unrolled
// completely so that the round function, message index, constant and rotation of every step
// are compile-time constants.
template <class T, std::size_t N>
[[gnu::always_inline]] inline void md5_rounds(T (&a)[N], T (&b)[N], T (&c)[N], T (&d)[N],
                                              const T (&x)[N][16]) noexcept {
#pragma GCC unroll 64
  for (int i = 0; i < 64; ++i) {
    const int r = kShift[(i / 16) * 4 + i % 4];
#pragma GCC unroll 4
    for (std::size_t v = 0; v < N; ++v) {
      T f;
      int g = 0;
      switch (i / 16) {
        case 0:  // F(X,Y,Z) = XY v not(X) Z, as a select
          f = d[v] ^ (b[v] & (c[v] ^ d[v]));
          g = i;
          break;
        case 1:  // G(X,Y,Z) = XZ v Y not(Z)
          f = c[v] ^ (d[v] & (b[v] ^ c[v]));
          g = (5 * i + 1) % 16;
          break;
        case 2:  // H(X,Y,Z) = X xor Y xor Z
          f = b[v] ^ c[v] ^ d[v];
          g = (3 * i + 5) % 16;
          break;
        default:  // I(X,Y,Z) = Y xor (X v not(Z))
          f = c[v] ^ (b[v] | ~d[v]);
          g = (7 * i) % 16;
          break;
      }
      const T sum = a[v] + f + kSine[i] + x[v][g];
      a[v] = d[v];
      d[v] = c[v];
      c[v] = b[v];
      b[v] += (sum << r) | (sum >> (32 - r));
    }
  }
}

// The python-simhash value from the final C and D words: digest bytes 8..15 are C then D, each
// little-endian; read them big-endian.
uint64_t last8_big_endian(uint32_t c, uint32_t d) noexcept {
  const auto be = [](uint32_t w) {
    return (w & 0xff) << 24 | (w & 0xff00) << 8 | (w >> 8 & 0xff00) | w >> 24;
  };
  return static_cast<uint64_t>(be(c)) << 32 | be(d);
}

// MD5 is one chain of dependent steps, so a lone digest leaves most of a core idle. Short
// messages are therefore hashed md5_lanes at a time, one per lane of two 8 x 32-bit vectors
// (two independent chains per step). The vectors are GCC's generic ones: the compiler maps
// them to what the including file is compiled for (two SSE registers each on baseline x86-64,
// one AVX register with AVX2, plus a one-instruction rotate with AVX-512VL).
using u32x8 = uint32_t __attribute__((vector_size(32)));
using u32x16 = uint32_t __attribute__((vector_size(64)));
constexpr std::size_t kVectors = md5_lanes / 8;

// md5_64 of count <= md5_lanes messages of at most 55 bytes each; inlined into one function
// per instruction set.
[[gnu::always_inline]] inline void lanes_body(const std::string_view* msgs, std::size_t count,
                                              uint64_t* out) noexcept {
  // Word j of lane l's padded block at [j][l], assembled straight from the message: building
  // each block in bytes first and reading it back as words stalled on store forwarding.
  alignas(32) uint32_t words[16][md5_lanes] = {};
  for (std::size_t l = 0; l < count; ++l) {
    const auto* p = reinterpret_cast<const unsigned char*>(msgs[l].data());
    const std::size_t n = msgs[l].size();
    const std::size_t whole = n / 4;
    for (std::size_t j = 0; j < whole; ++j) words[j][l] = load_le32(p + 4 * j);
    uint32_t last = uint32_t{0x80} << (8 * (n % 4));  // the rest of the message, then 0x80
    for (std::size_t k = 0; k < n % 4; ++k) last |= uint32_t{p[4 * whole + k]} << (8 * k);
    words[whole][l] = last;
    words[14][l] = static_cast<uint32_t>(n * 8);  // the bit length; word 15 stays 0
  }
  u32x8 x[kVectors][16];
  u32x8 a[kVectors], b[kVectors], c[kVectors], d[kVectors];
  for (std::size_t v = 0; v < kVectors; ++v) {
    for (int j = 0; j < 16; ++j) std::memcpy(&x[v][j], &words[j][8 * v], sizeof(u32x8));
    a[v] = kInit[0] + u32x8{};
    b[v] = kInit[1] + u32x8{};
    c[v] = kInit[2] + u32x8{};
    d[v] = kInit[3] + u32x8{};
  }
  md5_rounds(a, b, c, d, x);
  alignas(32) uint32_t cs[md5_lanes], ds[md5_lanes];
  for (std::size_t v = 0; v < kVectors; ++v) {
    const u32x8 cv = c[v] + kInit[2], dv = d[v] + kInit[3];
    std::memcpy(cs + 8 * v, &cv, sizeof(cv));
    std::memcpy(ds + 8 * v, &dv, sizeof(dv));
  }
  for (std::size_t l = 0; l < count; ++l) out[l] = last8_big_endian(cs[l], ds[l]);
}

// Lane l's python-simhash value from its final C and D words: (be(C) << 32) | be(D) as a
// little-endian uint64_t is the word pair be(D), be(C), so the two vectors are byte-swapped
// and interleaved.
template <class V>
[[gnu::always_inline]] inline void store_last8(const V& c_word, const V& d_word,
                                               uint64_t* out) noexcept {
  // Vectors are passed by reference: by value, the baseline build's ABI would differ.
  const V c = c_word << 24 | (c_word & 0xff00) << 8 | (c_word >> 8 & 0xff00) | c_word >> 24;
  const V d = d_word << 24 | (d_word & 0xff00) << 8 | (d_word >> 8 & 0xff00) | d_word >> 24;
  // __builtin_shufflevector: GCC (12 on) and clang (the fuzz build) both have it.
  V low, high;
  if constexpr (sizeof(V) == 32) {
    low = __builtin_shufflevector(d, c, 0, 8, 1, 9, 2, 10, 3, 11);
    high = __builtin_shufflevector(d, c, 4, 12, 5, 13, 6, 14, 7, 15);
  } else {
    static_assert(sizeof(V) == 64);
    low = __builtin_shufflevector(d, c, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    high =
        __builtin_shufflevector(d, c, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  }
  std::memcpy(out, &low, sizeof(V));
  std::memcpy(out + sizeof(V) / 8, &high, sizeof(V));
}

// md5_64 of count <= kChains * (lanes of V) messages of at most 16 bytes, in kChains vectors
// of V (8 or 16 lanes of 32 bits): four independent chains keep the vector units busy through
// each step's dependent operations. Words 0..3 are the message, word 4 holds the 0x80 of a
// 16-byte one, word 14 the bit length; the other nine are zero constants, which the unrolled
// rounds drop.
template <class V, std::size_t kChains>
[[gnu::always_inline]] inline void short_body(const md5_short_message* msgs, std::size_t count,
                                              uint64_t* out) noexcept {
  constexpr std::size_t kWidth = sizeof(V) / 4;
  constexpr std::size_t kLanes = kWidth * kChains;
  alignas(64) uint32_t words[6][kLanes];  // message words 0..4 and 14
  for (std::size_t l = 0; l < count; ++l) {
    uint64_t lo = msgs[l].lo, hi = msgs[l].hi;
    const uint32_t n = msgs[l].size;
    // The 0x80 after the message: in lo, in hi, or (16 bytes) in word 4.
    if (n < 8) {
      lo |= uint64_t{0x80} << (8 * n);
    } else if (n < 16) {
      hi |= uint64_t{0x80} << (8 * (n - 8));
    }
    words[0][l] = static_cast<uint32_t>(lo);
    words[1][l] = static_cast<uint32_t>(lo >> 32);
    words[2][l] = static_cast<uint32_t>(hi);
    words[3][l] = static_cast<uint32_t>(hi >> 32);
    words[4][l] = n >= 16 ? 0x80u : 0u;
    words[5][l] = n * 8;
  }
  // The unused lanes hash zeros; their values are dropped.
  for (auto& row : words) std::fill(row + count, row + kLanes, 0u);
  V x[kChains][16];
  V a[kChains], b[kChains], c[kChains], d[kChains];
  for (std::size_t v = 0; v < kChains; ++v) {
    for (int j = 0; j < 16; ++j) x[v][j] = V{};
    for (int j = 0; j < 5; ++j) std::memcpy(&x[v][j], &words[j][kWidth * v], sizeof(V));
    std::memcpy(&x[v][14], &words[5][kWidth * v], sizeof(V));
    a[v] = kInit[0] + V{};
    b[v] = kInit[1] + V{};
    c[v] = kInit[2] + V{};
    d[v] = kInit[3] + V{};
  }
  md5_rounds(a, b, c, d, x);
  alignas(64) uint64_t values[kLanes];
  for (std::size_t v = 0; v < kChains; ++v) {
    const V cv = c[v] + kInit[2], dv = d[v] + kInit[3];
    store_last8(cv, dv, values + kWidth * v);
  }
  std::memcpy(out, values, count * sizeof(uint64_t));
}

}  // namespace
}  // namespace simdup::detail
