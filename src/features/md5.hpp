// MD5 (RFC 1321), written for the python-simhash compat mode, which hashes every shingle with
// it. OpenSSL's EVP interface costs several times the compression itself on inputs this short
// (context set-up, provider dispatch, allocation and cleansing per digest); features are a few
// to a few dozen bytes, so one padded block is hashed straight from the stack.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace simdup::detail {

/// The 16-byte MD5 digest of `data`.
std::array<uint8_t, 16> md5_digest(std::string_view data) noexcept;

/// The last 8 bytes of MD5(data) read as a big-endian integer: python-simhash's feature hash
/// (`int(hashlib.md5(x).hexdigest()[-16:], 16)`).
uint64_t md5_64(std::string_view data) noexcept;

/// out[i] = md5_64(in[i]) for i < min(in.size(), out.size()). Several times the throughput of
/// calling md5_64 in a loop: inputs of at most 55 bytes are hashed many at a time, one per
/// vector lane.
void md5_64_many(std::span<const std::string_view> in, std::span<uint64_t> out) noexcept;

/// The vector kernels md5_64_many chooses from at run time (exposed so tests can check each;
/// the AVX2 and AVX-512 ones live in md5_avx2.cpp and md5_avx512.cpp, compiled for those):
/// out[l] = md5_64(msgs[l]) for l < count <= md5_lanes, every message at most 55 bytes.
inline constexpr std::size_t md5_lanes = 16;
using md5_lanes_fn = void (*)(const std::string_view* msgs, std::size_t count, uint64_t* out);
/// GCC generic vectors at the build's baseline instruction set.
void md5_64_lanes_generic(const std::string_view* msgs, std::size_t count, uint64_t* out) noexcept;
#if defined(__x86_64__)
/// AVX2; call only when cpu_has_avx2().
void md5_64_lanes_avx2(const std::string_view* msgs, std::size_t count, uint64_t* out) noexcept;
/// AVX-512VL on 256-bit vectors (one-instruction rotate); call only when
/// cpu_has_avx512vl_dq().
void md5_64_lanes_avx512(const std::string_view* msgs, std::size_t count, uint64_t* out) noexcept;
#endif

/// A message of at most 16 bytes held in two words: bytes [0, size) of lo then hi, read
/// little-endian; the bytes past `size` are zero. Every python-simhash shingle (four code
/// points) fits, so its counting and hashing need no pointers into the text.
struct md5_short_message {
  uint64_t lo = 0;
  uint64_t hi = 0;
  uint32_t size = 0;
};

/// out[i] = md5_64 of in[i]'s bytes, for i < min(in.size(), out.size()). The message words
/// come straight from the two registers and the padding words are constants, so this has
/// about twice the throughput of md5_64_many on the same short inputs.
void md5_64_short_many(std::span<const md5_short_message> in, std::span<uint64_t> out) noexcept;

/// The kernels md5_64_short_many chooses from (exposed so tests can check each): out[l] for
/// l < count <= md5_short_lanes.
inline constexpr std::size_t md5_short_lanes = 64;
using md5_short_fn = void (*)(const md5_short_message* msgs, std::size_t count, uint64_t* out);
void md5_64_short_generic(const md5_short_message* msgs, std::size_t count, uint64_t* out) noexcept;
#if defined(__x86_64__)
/// AVX2; call only when cpu_has_avx2().
void md5_64_short_avx2(const md5_short_message* msgs, std::size_t count, uint64_t* out) noexcept;
/// AVX-512 on 512-bit vectors; call only when cpu_has_avx512vl_dq().
void md5_64_short_avx512(const md5_short_message* msgs, std::size_t count, uint64_t* out) noexcept;
#endif

}  // namespace simdup::detail
