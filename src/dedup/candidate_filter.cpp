#include "dedup/candidate_filter.hpp"

#include "dedup/sorted_search.hpp"

#include <simdup/verify.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace simdup::detail {
namespace {

// The most a pair at the threshold may be rejected, per pair: 240,000 true pairs (the large
// English evaluation) lose none in expectation (0.02).
constexpr double kMissProbability = 1e-7;

// P(X < c) for X ~ Binomial(n, p), by the recurrence of the probability mass.
double binomial_below(std::size_t n, double p, std::size_t c) {
  if (c == 0) return 0.0;
  if (p >= 1.0) return c > n ? 1.0 : 0.0;
  double mass = std::pow(1.0 - p, static_cast<double>(n));  // P(X = 0)
  double sum = 0.0;
  for (std::size_t x = 0; x < c && x <= n; ++x) {
    sum += mass;
    mass *= static_cast<double>(n - x) / static_cast<double>(x + 1) * p / (1.0 - p);
  }
  return sum;
}

// Bins filled by a set of n distinct uniform hashes (its expected number).
std::size_t filled_bins(std::size_t n) {
  const double bins = static_cast<double>(pair_sketch_bins);
  return static_cast<std::size_t>(bins * (1.0 - std::exp(-static_cast<double>(n) / bins)));
}

}  // namespace

void append_pair_sketch(std::span<const uint32_t> hashes, std::vector<uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + pair_sketch_bytes, 0);
  if (hashes.empty()) return;
  std::array<uint8_t, pair_sketch_bins> value{};
  std::array<bool, pair_sketch_bins> filled{};
  // Sorted hashes: a bin's smallest is the first at or above its start, found by galloping
  // from the previous bin's (a bin holds about n / 128 hashes), a few steps per bin.
  constexpr int shift = 32 - std::countr_zero(pair_sketch_bins);
  const std::size_t n = hashes.size();
  std::size_t i = 0;
  while (i < n) {
    const uint32_t bin = hashes[i] >> shift;
    filled[bin] = true;
    value[bin] = static_cast<uint8_t>(hashes[i] & 0xF);
    if (bin + 1 == pair_sketch_bins) break;
    i = gallop_to(hashes, i + 1, uint64_t{bin + 1} << shift);
  }
  for (std::size_t b = 0; b < pair_sketch_bins; ++b) {
    if (filled[b]) continue;
    std::size_t j = (b + 1) % pair_sketch_bins, step = 1;
    while (!filled[j]) {
      j = (j + 1) % pair_sketch_bins;
      ++step;
    }
    value[b] = static_cast<uint8_t>((value[j] + 7 * step) & 0xF);
  }
  for (std::size_t b = 0; b < pair_sketch_bytes; ++b) {
    out[at + b] = static_cast<uint8_t>(value[2 * b] | value[2 * b + 1] << 4);
  }
}

std::size_t pair_sketch_matches(const uint8_t* a, const uint8_t* b) noexcept {
  std::size_t differ = 0;
  for (std::size_t i = 0; i < pair_sketch_bytes; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    uint64_t d = x ^ y;
    d |= d >> 1;
    d |= d >> 2;  // the low bit of each nibble: some bit of it differs
    differ += static_cast<std::size_t>(std::popcount(d & 0x1111111111111111ull));
  }
  return pair_sketch_bins - differ;
}

candidate_filter::candidate_filter(double threshold) : threshold_(threshold) {
  // With f independent bins, agreements ~ Binomial(f, J) at Jaccard J (4-bit collisions only
  // add agreements): the least count c with P(X < c) <= kMissProbability at J = threshold,
  // scaled to the 128 bins the sketch compares.
  for (std::size_t f = 1; f <= pair_sketch_bins; ++f) {
    std::size_t c = 0;
    while (c < f && binomial_below(f, threshold, c + 1) <= kMissProbability) ++c;
    needed_[f] = static_cast<uint16_t>(c * pair_sketch_bins / f);
  }
}

bool candidate_filter::may_reach(std::size_t na, std::size_t nb, const uint8_t* sa,
                                 const uint8_t* sb) const {
  if (jaccard_size_bound(na, nb, threshold_)) return false;
  if (sa == nullptr || sb == nullptr) return true;
  const std::size_t f = filled_bins(std::min(na, nb));
  return f == 0 || pair_sketch_matches(sa, sb) >= needed_[f];
}

}  // namespace simdup::detail
