#include "store/band_index.hpp"

#include <algorithm>

namespace simdup::detail {

result<std::optional<band_index>> band_index::create(const collection_config& config,
                                                     const online_index_options& base) {
  if (config.verify <= 0 || config.minhash.bands == 0) return std::optional<band_index>();
  online_index_options o = base;
  // Exact key matches: one table over the whole key.
  o.layout = index_layout{.k = 0, .widths = {}, .second_level_blocks = 0};
  o.expected_size *= config.minhash.bands;
  auto index = online_index::create(std::move(o));
  if (!index) return std::move(index).error();
  return std::optional<band_index>(
      band_index(std::move(*index), config.minhash.bands, config.minhash.max_bucket));
}

uint64_t band_index::entry_key(std::size_t band, uint64_t key) {
  // splitmix64's finaliser over key + band * the golden ratio: a bijection per band.
  uint64_t x = key + (band + 1) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void band_index::insert(uint64_t num, int64_t time, std::span<const uint64_t> keys) {
  std::vector<index_entry> entries(keys.size());
  for (std::size_t b = 0; b < keys.size(); ++b) entries[b] = {entry_key(b, keys[b]), num, time};
  index_.insert(entries);
}

void band_index::query(std::span<const uint64_t> keys, int64_t now,
                       std::vector<uint64_t>& out) const {
  if (keys.size() != bands_) return;
  std::vector<uint64_t> probes(keys.size());
  for (std::size_t b = 0; b < keys.size(); ++b) probes[b] = entry_key(b, keys[b]);
  query_results results;
  query_params params;
  params.k = 0;
  params.now = now;
  index_.query(probes, results, params);
  const std::size_t first = out.size();
  for (std::size_t b = 0; b < results.size(); ++b) {
    // Sorted by (distance 0, time, number): the bucket's oldest first.
    const auto bucket = results[b];
    const std::size_t take = std::min(bucket.size(), max_bucket_);
    for (std::size_t m = 0; m < take; ++m) out.push_back(bucket[m].id);
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
}

}  // namespace simdup::detail
