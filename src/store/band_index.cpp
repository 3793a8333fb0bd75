#include "store/band_index.hpp"

#include <algorithm>
#include <array>

namespace simdup::detail {

std::optional<band_index> band_index::create(const collection_config& config) {
  if (config.verify <= 0 || config.minhash.bands == 0) return std::nullopt;
  return band_index(config.minhash.bands, config.minhash.max_bucket);
}

uint64_t band_index::entry_hash(std::size_t band, uint64_t key) noexcept {
  // Band keys are already mixed (minhash_band_keys): a per-band constant keeps bands apart.
  return key ^ ((band + 1) * 0x9e3779b97f4a7c15ull);
}

void band_index::prefetch(std::span<const uint64_t> keys) const noexcept {
  for (std::size_t b = 0; b < keys.size(); ++b) map_.prefetch(entry_hash(b, keys[b]));
}

void band_index::insert(uint64_t num, std::span<const uint64_t> keys) {
  prefetch(keys);
  for (std::size_t b = 0; b < keys.size(); ++b) map_.insert(entry_hash(b, keys[b]), num);
}

void band_index::erase(uint64_t num, std::span<const uint64_t> keys) {
  for (std::size_t b = 0; b < keys.size(); ++b) map_.erase(entry_hash(b, keys[b]), num);
}

void band_index::find(std::span<const uint64_t> keys, std::vector<uint64_t>& out) const {
  if (keys.size() != bands_) return;
  std::array<uint64_t, 64> hashes;  // minhash_options: at most 64 bands
  for (std::size_t b = 0; b < keys.size(); ++b) {
    hashes[b] = entry_hash(b, keys[b]);
    map_.prefetch(hashes[b]);
  }
  const std::size_t first = out.size();
  thread_local std::vector<uint64_t> bucket;
  for (std::size_t b = 0; b < keys.size(); ++b) {
    bucket.clear();
    map_.find(hashes[b], bucket);
    if (bucket.size() > max_bucket_) {
      std::nth_element(bucket.begin(), bucket.begin() + static_cast<std::ptrdiff_t>(max_bucket_),
                       bucket.end());
      bucket.resize(max_bucket_);
    }
    out.insert(out.end(), bucket.begin(), bucket.end());
  }
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
}

}  // namespace simdup::detail
