// The window hashes of verify_kernel.hpp for AVX-512 F+DQ, compiled with those -m flags
// (src/dedup/CMakeLists.txt) and called only on CPUs that have them. Nothing here may be an
// inline function shared with other files (the linker could pick this AVX-512 copy for them):
// the helpers have internal linkage.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "dedup/verify_kernel.hpp"

namespace simdup::detail {
namespace {

// The high halves of the hashes of the 8 windows starting at cps, in 64-bit lanes. A partial
// block (Whole false) loads only the code points of the windows in `lanes`: masked loads touch
// nothing else, so nothing past the input is read.
template <bool Whole>
__m512i hash_8_windows(const std::uint32_t* cps, __mmask8 lanes, const std::uint64_t* weights,
                       std::size_t width) noexcept {
  // The zero-masking forms with every lane selected: the plain ones start from an undefined
  // vector, which GCC 12 reports as maybe uninitialised.
  const __mmask8 all = 0xFF;
  __m512i h = _mm512_setzero_si512();
  for (std::size_t i = 0; i < width; ++i) {
    __m256i c32;
    if constexpr (Whole) {
      c32 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cps + i));
    } else {
      c32 = _mm512_maskz_extracti64x4_epi64(0xF, _mm512_maskz_loadu_epi32(lanes, cps + i), 0);
    }
    const __m512i c = _mm512_maskz_cvtepu32_epi64(all, c32);
    h = _mm512_add_epi64(
        h, _mm512_mullo_epi64(c, _mm512_set1_epi64(static_cast<long long>(weights[i]))));
  }
  // fmix64, lane by lane.
  h = _mm512_xor_si512(h, _mm512_maskz_srli_epi64(all, h, 33));
  h = _mm512_mullo_epi64(h, _mm512_set1_epi64(static_cast<long long>(fmix64_mul1)));
  h = _mm512_xor_si512(h, _mm512_maskz_srli_epi64(all, h, 33));
  h = _mm512_mullo_epi64(h, _mm512_set1_epi64(static_cast<long long>(fmix64_mul2)));
  h = _mm512_xor_si512(h, _mm512_maskz_srli_epi64(all, h, 33));
  return _mm512_maskz_srli_epi64(all, h, 32);
}

}  // namespace

void window_hashes_avx512(const std::uint32_t* cps, std::size_t count, const std::uint64_t* weights,
                          std::size_t width, std::uint32_t* out) {
  const __mmask8 all = 0xFF;
  std::size_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const __m512i high = hash_8_windows<true>(cps + j, all, weights, width);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j),
                        _mm512_maskz_cvtepi64_epi32(all, high));
  }
  if (j < count) {
    const auto lanes = static_cast<__mmask8>((1u << (count - j)) - 1);
    _mm512_mask_cvtepi64_storeu_epi32(out + j, lanes,
                                      hash_8_windows<false>(cps + j, lanes, weights, width));
  }
}

}  // namespace simdup::detail
