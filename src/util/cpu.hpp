// Run-time CPU feature checks for the SIMD paths (the features component's kernels, the dedup
// verifier's shingle hashing): compiled per instruction set and chosen once, at first use.
#pragma once

namespace simdup::detail {

#if defined(__x86_64__)
inline bool cpu_has_avx2() noexcept {
  return __builtin_cpu_supports("avx2");
}

/// AVX-512 with the VL and DQ extensions (256-bit vectors, 64-bit multiply).
inline bool cpu_has_avx512vl_dq() noexcept {
  return __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/// AVX-512 foundation with DQ (512-bit vectors, 64-bit multiply).
inline bool cpu_has_avx512f_dq() noexcept {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

}  // namespace simdup::detail
