// The fused shingle kernel for AVX-512 VL+DQ on 256-bit vectors (native 64-bit multiply and
// rotate), compiled with those -m flags (src/features/CMakeLists.txt) and called only on CPUs
// that have them. 256-bit vectors avoid the clock penalty some CPUs apply to 512-bit ones.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace simdup::detail {
namespace {

struct ops {
  static __m256i mul(__m256i a, __m256i b) noexcept { return _mm256_mullo_epi64(a, b); }
  template <int R>
  static __m256i rotl(__m256i a) noexcept {
    return _mm256_rol_epi64(a, R);
  }
};

}  // namespace
}  // namespace simdup::detail

#include "features/shingle_kernel_x86.hpp"

namespace simdup::detail {

void ascii4_xxh3_votes_avx512(const char* first, std::size_t count, std::uint64_t bitflip,
                              std::uint64_t* counts) {
  ascii4_xxh3_votes_impl(first, count, bitflip, counts);
}

}  // namespace simdup::detail
