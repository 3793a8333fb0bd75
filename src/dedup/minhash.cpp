// One-permutation MinHash band keys and their buckets (see include/simdup/minhash.hpp).
#include <simdup/minhash.hpp>

#include "dedup/sorted_search.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>

namespace simdup {
namespace {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

result<minhash_options> parse_minhash_spec(std::string_view spec) {
  minhash_options o;
  if (spec == "off") return o;
  const auto x = spec.find('x');
  const auto number = [](std::string_view s, std::size_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc{} && end == s.data() + s.size();
  };
  if (x == std::string_view::npos || !number(spec.substr(0, x), o.bands) ||
      !number(spec.substr(x + 1), o.rows) || o.bands < 1 || o.bands > 64 || o.rows < 1 ||
      o.rows > 16) {
    constexpr std::string_view allowed = "off or BANDSxROWS (bands 1-64, rows 1-16, e.g. 16x4)";
    return invalid_parameter(
        {.name = "minhash",
         .value = std::string(spec),
         .allowed = std::string(allowed),
         .reason = ": expected " + std::string(allowed) + ", got '" + std::string(spec) + "'"});
  }
  return o;
}

void minhash_band_keys(std::span<const uint32_t> hashes, const minhash_options& options,
                       std::vector<uint64_t>& out) {
  out.clear();
  if (hashes.empty() || options.bands == 0) return;
  const std::size_t bins = options.bands * options.rows;  // at most 64 * 16
  // One permutation: the hash order itself. Bin of h = floor(h * bins / 2^32), monotonic in h,
  // so the minimum of each bin is the first sorted hash at or above the bin's start: found by
  // galloping from the previous bin's, a few steps per bin however many hashes there are (or,
  // for few hashes a bin, by one pass over them all).
  constexpr uint64_t empty = ~uint64_t{0};
  std::array<uint64_t, 64 * 16> value;
  std::fill_n(value.begin(), bins, empty);
  const std::size_t n = hashes.size();
  if (n <= 16 * bins) {
    // A few hashes per bin: one pass from the largest down, each storing into its bin, so the
    // smallest is stored last; no branch to mispredict, where galloping takes a few per bin.
    for (std::size_t i = n; i-- > 0;) {
      value[static_cast<std::size_t>((uint64_t{hashes[i]} * bins) >> 32)] = hashes[i];
    }
  } else {
    std::size_t i = 0;
    while (i < n) {
      const auto bin = static_cast<std::size_t>((uint64_t{hashes[i]} * bins) >> 32);
      value[bin] = hashes[i];
      if (bin + 1 == bins) break;
      // The least h with floor(h * bins / 2^32) >= bin + 1.
      i = detail::gallop_to(hashes, i + 1, ((uint64_t{bin + 1} << 32) + bins - 1) / bins);
    }
  }
  // Rotation densification: an empty bin takes the next filled bin's value (circularly), tagged
  // with the distance, so that two sets agree on it only as they agree on that bin. Walking
  // backwards, the next filled bin is at hand; past the last one it is the first, a lap on.
  std::size_t next = 0;
  while (value[next] == empty) ++next;
  uint64_t raw = value[next];
  next += bins;
  for (std::size_t k = bins; k-- > 0;) {
    if (value[k] != empty) {
      next = k;
      raw = value[k];
      continue;
    }
    value[k] = raw | (uint64_t{next - k} << 32);
  }
  out.resize(options.bands);
  for (std::size_t band = 0; band < options.bands; ++band) {
    uint64_t key = mix64(band + 1);
    for (std::size_t r = 0; r < options.rows; ++r) {
      key = mix64(key ^ value[band * options.rows + r]);
    }
    out[band] = key == 0 ? 1 : key;
  }
}

namespace detail {

void band_buckets(std::span<const uint64_t> keys, std::size_t n, std::size_t bands,
                  std::size_t band, std::vector<std::pair<uint64_t, uint32_t>>& out) {
  out.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t key = keys[i * bands + band];
    if (key != 0) out.emplace_back(key, static_cast<uint32_t>(i));
  }
  std::sort(out.begin(), out.end());
}

}  // namespace detail
}  // namespace simdup
