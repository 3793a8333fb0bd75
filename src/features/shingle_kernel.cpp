// Run-time choice of the fused shingle kernel.
#include "features/shingle_kernel.hpp"

#include "features/accumulate.hpp"
#include "features/extract.hpp"
#include "features/hash.hpp"
#include "util/cpu.hpp"

namespace simdup::detail {

#if defined(__x86_64__)

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

void vote_ascii4_xxh3_shingles(std::string_view text, unit_votes& votes) {
  const ascii4_xxh3_kernel kernel = best_ascii4_xxh3_kernel();
  const auto one = [](std::string_view s) { return xxh3_64_short(s); };
  if (kernel == nullptr) {
    add_streamed(votes, [&](auto&& sink) {
      for_each_shingle(text, 4, [&](std::string_view s) { sink(one(s)); });
    });
    return;
  }
  const uint64_t bitflip = xxh3_len4_bitflip();
  add_streamed(votes, [&](auto&& sink) {
    for_each_shingle_run(
        text, 4, [&](std::string_view s) { sink(one(s)); },
        [&](const char* first, std::size_t count) {
          if (count < ascii4_kernel_min_run) {
            for (std::size_t k = 0; k < count; ++k) sink(one(std::string_view(first + k, 4)));
            return;
          }
          votes.add_counted(count,
                            [&](uint64_t* counts) { kernel(first, count, bitflip, counts); });
        });
  });
}

}  // namespace simdup::detail
