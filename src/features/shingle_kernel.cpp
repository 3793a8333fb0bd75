// Run-time choice of the fused shingle kernel.
#include "features/shingle_kernel.hpp"

#include "features/accumulate.hpp"
#include "features/hash.hpp"

namespace simdup::detail {

#if defined(__x86_64__)

bool cpu_has_avx512vl_dq() noexcept {
  return __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

ascii4_xxh3_kernel best_ascii4_xxh3_kernel() noexcept {
  static const ascii4_xxh3_kernel best = cpu_has_avx512vl_dq() ? &ascii4_xxh3_votes_avx512
                                         : cpu_has_avx2()      ? &ascii4_xxh3_votes_avx2
                                                               : nullptr;
  return best;
}

#else

ascii4_xxh3_kernel best_ascii4_xxh3_kernel() noexcept {
  return nullptr;
}

#endif

std::uint64_t xxh3_len4_bitflip() noexcept {
  return XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16);
}

}  // namespace simdup::detail
