// The default pipeline's hot loop fused into one SIMD kernel: hash every width-4 shingle of a
// run of ASCII text with XXH3-64 and count, per bit, the hashes that have it set. Hashes stay
// in vector registers from the byte load to the vote, instead of one scalar hash, a store and
// a broadcast per shingle. Internal to the features component.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace simdup::detail {

class unit_votes;

/// Adds to counts[i], for each bit i, how many of the `count` 4-byte shingles first[k..k+4)
/// (k < count) have bit i of their XXH3-64 (seed 0) set. All bytes first[0 .. count + 3) must
/// be ASCII; nothing outside them is read. `bitflip` is XXH3's constant for 4..8-byte inputs
/// (xxh3_len4_bitflip()).
using ascii4_xxh3_kernel = void (*)(const char* first, std::size_t count, std::uint64_t bitflip,
                                    std::uint64_t* counts);

/// Runs shorter than this go through the scalar hash: the kernel's fixed cost (spilling its
/// bit-sliced counters) outweighs what it saves.
inline constexpr std::size_t ascii4_kernel_min_run = 80;

#if defined(__x86_64__)
/// AVX2 (64-bit multiplies built from 32-bit ones); call only when cpu_has_avx2().
void ascii4_xxh3_votes_avx2(const char* first, std::size_t count, std::uint64_t bitflip,
                            std::uint64_t* counts);
/// AVX-512 VL+DQ on 256-bit vectors (native 64-bit multiply and rotate); call only when
/// cpu_has_avx512vl_dq().
void ascii4_xxh3_votes_avx512(const char* first, std::size_t count, std::uint64_t bitflip,
                              std::uint64_t* counts);
#endif

/// The fastest kernel this CPU supports, or null when it has none (no AVX2): callers then hash
/// shingle by shingle.
ascii4_xxh3_kernel best_ascii4_xxh3_kernel() noexcept;

/// XXH3's `bitflip` for 4..8-byte inputs with the default secret and seed 0.
std::uint64_t xxh3_len4_bitflip() noexcept;

/// Adds the unit-weight votes of every width-4 shingle of `text` hashed with XXH3-64 (the
/// default mode's shingle stage): ASCII stretches of at least ascii4_kernel_min_run shingles go
/// through best_ascii4_xxh3_kernel(), the rest are hashed one by one; the sum is the same.
void vote_ascii4_xxh3_shingles(std::string_view text, unit_votes& votes);

}  // namespace simdup::detail
