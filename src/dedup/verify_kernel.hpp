// The window hashes of --verify's shingles (verify.cpp) as SIMD kernels: one file per
// instruction set (verify_kernel_avx512.cpp), compiled with its own -m flags and chosen at run
// time through util's CPU check; verify.cpp's rolling hash is the portable path. Internal to
// the dedup component.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simdup::detail {

/// The shingle hash: a polynomial in this base over code points (mod 2^64), finalised by
/// MurmurHash3's fmix64 with these two multipliers. Shared by the rolling hash and the kernels,
/// which must give the same values.
inline constexpr std::uint64_t shingle_hash_base = 0x100000001B3ull;
inline constexpr std::uint64_t fmix64_mul1 = 0xFF51AFD7ED558CCDull;
inline constexpr std::uint64_t fmix64_mul2 = 0xC4CEB9FE1A85EC53ull;

/// out[j] = fmix64(sum over i < width of cps[j + i] * weights[i]) >> 32 for every j < count:
/// the hash of each window of `width` code points (with weights[i] = base^(width - 1 - i), the
/// values of the rolling hash). Reads cps[0 .. count + width - 1) and writes out[0 .. count)
/// only.
using window_hash_kernel = void (*)(const std::uint32_t* cps, std::size_t count,
                                    const std::uint64_t* weights, std::size_t width,
                                    std::uint32_t* out);

#if defined(__x86_64__)
/// AVX-512 F+DQ: 8 windows per 512-bit vector (the build's baseline has no 64-bit vector
/// multiply); call only when cpu_has_avx512f_dq().
void window_hashes_avx512(const std::uint32_t* cps, std::size_t count, const std::uint64_t* weights,
                          std::size_t width, std::uint32_t* out);
#endif

/// The fastest kernel this CPU supports, or null when it has none: callers then run the
/// rolling hash.
window_hash_kernel best_window_hash_kernel() noexcept;

}  // namespace simdup::detail
