// One-permutation MinHash band keys and their buckets (see include/simdup/minhash.hpp).
#include <simdup/minhash.hpp>

#include <algorithm>
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
  const std::size_t bins = options.bands * options.rows;
  // One permutation: the hash order itself. Bin of h = floor(h * bins / 2^32), monotonic in h,
  // so the minimum of each bin is the first sorted hash that falls in it.
  std::vector<uint64_t> value(bins, 0);
  std::vector<bool> filled(bins, false);
  for (const uint32_t h : hashes) {
    const auto bin = static_cast<std::size_t>((uint64_t{h} * bins) >> 32);
    if (!filled[bin]) {
      filled[bin] = true;
      value[bin] = h;
    }
  }
  // Rotation densification: an empty bin takes the next filled bin's value (circularly), tagged
  // with the distance, so that two sets agree on it only as they agree on that bin.
  for (std::size_t i = 0; i < bins; ++i) {
    if (filled[i]) continue;
    std::size_t j = (i + 1) % bins, step = 1;
    while (!filled[j]) {
      j = (j + 1) % bins;
      ++step;
    }
    value[i] = value[j] | (uint64_t{step} << 32);
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
