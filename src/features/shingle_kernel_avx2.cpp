// The fused shingle kernel for AVX2, compiled with -mavx2 (src/features/CMakeLists.txt) and
// called only on CPUs that have it. AVX2 has no 64-bit multiply or rotate: both are built here.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace simdup::detail {
namespace {

struct ops {
  // Low 64 bits of a * b from three 32x32->64 multiplies (the high halves' product only
  // affects bits 64 and up).
  static __m256i mul(__m256i a, __m256i b) noexcept {
    const __m256i low = _mm256_mul_epu32(a, b);
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                           _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
    return _mm256_add_epi64(low, _mm256_slli_epi64(cross, 32));
  }
  template <int R>
  static __m256i rotl(__m256i a) noexcept {
    return _mm256_or_si256(_mm256_slli_epi64(a, R), _mm256_srli_epi64(a, 64 - R));
  }
};

}  // namespace
}  // namespace simdup::detail

#include "features/shingle_kernel_x86.hpp"

namespace simdup::detail {

void ascii4_xxh3_votes_avx2(const char* first, std::size_t count, std::uint64_t bitflip,
                            std::uint64_t* counts) {
  ascii4_xxh3_votes_impl(first, count, bitflip, counts);
}

}  // namespace simdup::detail
