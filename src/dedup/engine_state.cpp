#include "dedup/engine_state.hpp"

#include <simdup/simhash.hpp>

namespace simdup::detail {

result<engine_state> engine_state::create(const dedup_options& options) {
  if (auto st = options.detection.validate(); !st) return std::move(st).error();
  engine_state state;
  state.options = options;
  if (options.detection.verify && options.near_layer) {
    auto store = shingle_store::create(options.detection.verify->tmp_dir);
    if (!store) return std::move(store).error();
    state.shingles.emplace(std::move(store).value());
  }
  return state;
}

result<uint32_t> engine_state::admit(const doc_signature& sig) {
  if (count == UINT32_MAX) {
    return make_error(errc::too_large, "more than 4294967294 documents in one dedup run");
  }
  fingerprints.push_back(sig.fingerprint);
  has_fingerprint.push_back(sig.has_fingerprint);
  return count++;
}

int8_t engine_state::distance(uint32_t a, uint32_t b) const noexcept {
  if (!has_fingerprint[a] || !has_fingerprint[b]) return -1;
  return static_cast<int8_t>(hamming_distance(fingerprints[a], fingerprints[b]));
}

std::size_t engine_state::memory_bytes() const noexcept {
  return urls.memory_bytes() + titles.memory_bytes() + contents.memory_bytes() +
         fingerprints.capacity() * sizeof(uint64_t) + has_fingerprint.capacity() / 8 +
         (shingles ? shingles->memory_bytes() : 0);
}

}  // namespace simdup::detail
