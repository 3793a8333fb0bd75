// SimHash vote accumulation. The default pipeline gives every feature occurrence weight 1, so
// the vote reduces to a positional popcount: for each bit, how many hashes have it set. That
// is the hot loop of fingerprinting and has SIMD kernels selected at run time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>

namespace simdup::detail {

/// Adds, for each bit i, the number of `hashes` with bit i set to counts[i].
using positional_popcount_fn = void (*)(std::span<const uint64_t> hashes, uint64_t* counts);

/// The kernels' 8-bit lane counters overflow after 255 additions: each widens them into
/// `counts` after at most this many hashes.
inline constexpr std::size_t popcount_block = 255;

/// Portable SWAR kernel (eight 8-bit counters per 64-bit word).
void positional_popcount_scalar(std::span<const uint64_t> hashes, uint64_t* counts);
#if defined(__x86_64__)
/// SSE2 (x86-64 baseline).
void positional_popcount_sse2(std::span<const uint64_t> hashes, uint64_t* counts);
/// AVX2 (accumulate_avx2.cpp, compiled for it); call only when the CPU supports it
/// (cpu_has_avx2()).
void positional_popcount_avx2(std::span<const uint64_t> hashes, uint64_t* counts);
#endif

/// The fastest kernel this CPU supports (chosen once).
positional_popcount_fn best_positional_popcount() noexcept;

/// Unit-weight SimHash votes: counts, per bit, the hashes that have it set.
class unit_votes {
 public:
  unit_votes() noexcept : kernel_(best_positional_popcount()) {}

  void add(std::span<const uint64_t> hashes) noexcept {
    kernel_(hashes, counts_.data());
    total_ += hashes.size();
  }

  /// Adds the per-bit counts of `n` hashes that kernel(counts) adds to the 64 counters itself
  /// (the fused shingle kernels, which never materialise the hashes).
  template <class Kernel>
  void add_counted(uint64_t n, Kernel&& kernel) {
    kernel(counts_.data());
    total_ += n;
  }

  /// Feature occurrences added so far.
  uint64_t total() const noexcept { return total_; }
  /// Per bit: how many of them have it set.
  const std::array<uint64_t, 64>& counts() const noexcept { return counts_; }

  /// Bit i set iff more than half of the hashes have bit i set (vote sum > 0; ties -> 0).
  uint64_t fingerprint() const noexcept;

 private:
  positional_popcount_fn kernel_;
  uint64_t total_ = 0;
  std::array<uint64_t, 64> counts_{};
};

/// Feeds every hash that produce(sink) passes to sink(hash) into `votes`, in blocks through a
/// local buffer. The buffer index lives in a register; as a member it would be stored and
/// reloaded per hash, a loop-carried dependency through memory that halved throughput.
template <class Produce>
void add_streamed(unit_votes& votes, Produce&& produce) {
  uint64_t buf[252];
  uint32_t k = 0;
  produce([&](uint64_t h) {
    buf[k++] = h;
    if (k == std::size(buf)) {
      votes.add(std::span<const uint64_t>(buf, k));
      k = 0;
    }
  });
  votes.add(std::span<const uint64_t>(buf, k));
}

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
