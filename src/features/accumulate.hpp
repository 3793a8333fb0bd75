// SimHash vote accumulation. The default pipeline gives every feature occurrence weight 1, so
// the vote reduces to a positional popcount: for each bit, how many hashes have it set. That
// is the hot loop of fingerprinting and has SIMD kernels selected at run time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace simdup::detail {

/// Adds, for each bit i, the number of `hashes` with bit i set to counts[i].
using positional_popcount_fn = void (*)(std::span<const uint64_t> hashes, uint64_t* counts);

/// Portable SWAR kernel (eight 8-bit counters per 64-bit word).
void positional_popcount_scalar(std::span<const uint64_t> hashes, uint64_t* counts);
#if defined(__x86_64__)
/// SSE2 (x86-64 baseline).
void positional_popcount_sse2(std::span<const uint64_t> hashes, uint64_t* counts);
/// AVX2; call only when the CPU supports it (cpu_has_avx2()).
void positional_popcount_avx2(std::span<const uint64_t> hashes, uint64_t* counts);
bool cpu_has_avx2() noexcept;
#endif

/// The fastest kernel this CPU supports (chosen once).
positional_popcount_fn best_positional_popcount() noexcept;

/// Unit-weight SimHash votes, streamed: add() buffers hashes and counts them in blocks.
class unit_votes {
 public:
  unit_votes() noexcept : kernel_(best_positional_popcount()) {}

  void add(uint64_t hash) noexcept {
    buf_[n_++] = hash;
    if (n_ == buf_.size()) flush();
  }

  /// Feature occurrences added so far.
  uint64_t total() const noexcept { return total_ + n_; }

  /// Bit i set iff more than half of the hashes have bit i set (vote sum > 0; ties -> 0).
  uint64_t fingerprint() noexcept;

 private:
  void flush() noexcept;

  positional_popcount_fn kernel_;
  std::size_t n_ = 0;
  uint64_t total_ = 0;
  std::array<uint64_t, 64> counts_{};
  alignas(64) std::array<uint64_t, 256> buf_;
};

/// Real-valued SimHash votes: v[i] += w when bit i of the hash is set, -w otherwise.
class weighted_votes {
 public:
  void add(uint64_t hash, double weight) noexcept {
    for (int i = 0; i < 64; ++i) v_[i] += ((hash >> i) & 1) ? weight : -weight;
  }
  /// Bit i set iff v[i] > 0 (ties -> 0).
  uint64_t fingerprint() const noexcept {
    uint64_t fp = 0;
    for (int i = 0; i < 64; ++i) fp |= static_cast<uint64_t>(v_[i] > 0) << i;
    return fp;
  }

 private:
  std::array<double, 64> v_{};
};

}  // namespace simdup::detail
