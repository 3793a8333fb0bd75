// jieba.finalseg: Viterbi over the states B(egin), M(iddle), E(nd), S(ingle) with jieba's
// start, transition and emission log probabilities, reproducing its arithmetic and tie-breaks.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace simdup::detail {

/// jieba's "impossible" log probability; sums with it absorb small terms exactly as in Python.
inline constexpr double hmm_min_float = -3.14e100;

/// The characters jieba's HMM segments (finalseg.re_han): U+4E00..U+9FD5.
inline constexpr uint32_t hmm_first_char = 0x4E00;
inline constexpr uint32_t hmm_last_char = 0x9FD5;
inline constexpr bool hmm_char(uint32_t cp) noexcept {
  return cp >= hmm_first_char && cp <= hmm_last_char;
}

struct hmm_model {
  enum state : uint8_t { B = 0, M = 1, E = 2, S = 3 };
  std::array<double, 4> start{};
  std::array<std::array<double, 4>, 4> trans{};  ///< trans[from][to]
  /// Emission log probabilities, one row of 4 (by state) per character jieba has an entry for;
  /// row 0 is hmm_min_float for the others.
  std::vector<double> emit;
  /// emit_row[cp - hmm_first_char]: cp's row of `emit`. Sparse, since a dense table of every
  /// character (670 KB) had to be filled by each load, user dictionaries' too.
  /// An array, not a vector: `new[]()` zeroes it at once, a vector element by element (slow in
  /// fuzz builds, which trace every loop).
  std::unique_ptr<uint16_t[]> emit_row;

  /// The emission row of `cp` (an hmm_char).
  const double* emissions(uint32_t cp) const noexcept {
    return &emit[std::size_t{emit_row[cp - hmm_first_char]} * 4];
  }

  /// The most likely state of each character of `chars` (all hmm_char); `states` gets one per
  /// character. Linear time (jieba copies paths, which is quadratic on long runs).
  void viterbi(std::span<const uint32_t> chars, std::vector<uint8_t>& states,
               std::vector<uint8_t>& back) const;
};

}  // namespace simdup::detail
