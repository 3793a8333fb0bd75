// The verifier's window-hash kernels against the definition: fmix64 of the weighted sum of each
// window's code points, high half. Exact-size inputs, so that ASan can see a read past the end.
#include <gtest/gtest.h>

#include "dedup/verify_kernel.hpp"
#include "util/cpu.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace simdup::detail {
namespace {

std::vector<window_hash_kernel> kernels() {
  std::vector<window_hash_kernel> k;
#if defined(__x86_64__)
  if (cpu_has_avx512f_dq()) k.push_back(&window_hashes_avx512);
#endif
  return k;
}

uint32_t defined_hash(const uint32_t* window, const std::vector<uint64_t>& weights) {
  uint64_t h = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) h += window[i] * weights[i];
  h ^= h >> 33;
  h *= fmix64_mul1;
  h ^= h >> 33;
  h *= fmix64_mul2;
  h ^= h >> 33;
  return static_cast<uint32_t>(h >> 32);
}

TEST(VerifyKernel, BestIsOneOfThisCpusKernels) {
  const auto ks = kernels();
  if (ks.empty()) {
    EXPECT_EQ(best_window_hash_kernel(), nullptr);
  } else {
    EXPECT_EQ(best_window_hash_kernel(), ks.back());
  }
}

TEST(VerifyKernel, MatchesTheDefinitionOnEveryCountAndWidth) {
  const auto ks = kernels();
  if (ks.empty()) GTEST_SKIP() << "no window-hash kernel on this CPU";
  std::mt19937 rng(5);
  for (auto kernel : ks) {
    for (std::size_t width : {1u, 2u, 5u, 9u, 17u}) {
      std::vector<uint64_t> weights(width, 1);
      for (std::size_t i = width - 1; i-- > 0;) weights[i] = weights[i + 1] * shingle_hash_base;
      // Counts around the 8-window block: whole blocks, each partial tail, one window.
      for (std::size_t count = 1; count <= 40; ++count) {
        std::vector<uint32_t> cps(count + width - 1);
        for (uint32_t& c : cps) c = rng() % 0x110000;  // any code point
        std::vector<uint32_t> out(count, 0xDEADBEEF);
        kernel(cps.data(), count, weights.data(), width, out.data());
        for (std::size_t j = 0; j < count; ++j) {
          ASSERT_EQ(out[j], defined_hash(cps.data() + j, weights))
              << "width " << width << " count " << count << " window " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace simdup::detail
