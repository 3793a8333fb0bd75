// Stream mode: each document is decided on arrival against the documents kept before it, as a
// crawler would: exact keys first (cheapest), then the online Hamming index.
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/online_index.hpp>

#include <cmath>

namespace simdup {

const char* layer_name(dedup_layer layer) noexcept {
  switch (layer) {
    case dedup_layer::none:
      return "kept";
    case dedup_layer::url:
      return "url";
    case dedup_layer::title:
      return "title";
    case dedup_layer::exact:
      return "exact";
    case dedup_layer::near:
      return "near";
  }
  return "kept";
}

struct stream_deduplicator::impl {
  dedup_options options;
  online_index index;
  exact_table urls, titles, contents;
  // Fingerprint of every document (distances to representatives found by an exact key).
  std::vector<uint64_t> fingerprints;
  std::vector<bool> has_fingerprint;
  // Shingles of kept documents (verification).
  shingle_store shingles;
  uint32_t count = 0;

  // Points every key of the document at `representative` unless the key is already taken, so a
  // later document sharing any key with a dropped one is a duplicate of the kept original.
  void register_keys(const doc_signature& sig, uint32_t representative) {
    urls.find_or_insert(sig.url_key, representative);
    titles.find_or_insert(sig.title_key, representative);
    contents.find_or_insert(sig.content_key, representative);
  }
};

result<stream_deduplicator> stream_deduplicator::create(const dedup_options& options) {
  if (options.k < 0 || options.k > max_index_k) {
    return make_error(errc::invalid_argument, "--k must be in 0.." + std::to_string(max_index_k) +
                                                  ", got " + std::to_string(options.k));
  }
  online_index_options index_options;
  index_options.k = options.k;
  index_options.layout.k = options.k;
  auto index = online_index::create(index_options);
  if (!index) return std::move(index).error();
  const std::size_t cap = options.verify ? options.verify->max_hashes : 0;
  return stream_deduplicator(std::unique_ptr<impl>(
      new impl{options, std::move(index).value(), {}, {}, {}, {}, {}, shingle_store(cap), 0}));
}

result<dedup_decision> stream_deduplicator::add(const doc_signature& sig) {
  impl& s = *impl_;
  if (s.count == UINT32_MAX) {
    return make_error(errc::too_large, "more than 4294967294 documents in one dedup run");
  }
  const uint32_t ordinal = s.count++;
  s.fingerprints.push_back(sig.fingerprint);
  s.has_fingerprint.push_back(sig.has_fingerprint);
  dedup_decision d;
  d.representative = ordinal;

  std::optional<uint32_t> hit;
  if ((hit = s.urls.find(sig.url_key))) {
    d.layer = dedup_layer::url;
  } else if ((hit = s.titles.find(sig.title_key))) {
    d.layer = dedup_layer::title;
  } else if ((hit = s.contents.find(sig.content_key))) {
    d.layer = dedup_layer::exact;
  }
  if (hit) {
    d.representative = *hit;
    if (sig.has_fingerprint && s.has_fingerprint[*hit]) {
      d.distance = static_cast<int8_t>(hamming_distance(sig.fingerprint, s.fingerprints[*hit]));
    }
  } else if (s.options.near_layer && sig.has_fingerprint) {
    // Matches come sorted by (distance, timestamp, id): the first that passes verification is
    // the closest earliest kept document.
    for (const index_match& m : s.index.query(sig.fingerprint)) {
      const auto candidate = static_cast<uint32_t>(m.id);
      if (s.options.verify) {
        const double j =
            sketch_jaccard(sig.shingles, s.shingles.get(candidate), s.options.verify->max_hashes);
        if (j < s.options.verify->threshold) continue;
        d.jaccard = static_cast<float>(j);
      }
      d.representative = candidate;
      d.layer = dedup_layer::near;
      d.distance = static_cast<int8_t>(m.distance);
      break;
    }
    if (d.layer == dedup_layer::none) {
      s.index.insert(index_entry{sig.fingerprint, ordinal, 0});
      if (s.options.verify) s.shingles.put(ordinal, sig.shingles);
    }
  }
  s.register_keys(sig, d.representative);
  return d;
}

uint32_t stream_deduplicator::size() const noexcept {
  return impl_->count;
}

std::size_t stream_deduplicator::memory_bytes() const noexcept {
  const impl& s = *impl_;
  return s.urls.memory_bytes() + s.titles.memory_bytes() + s.contents.memory_bytes() +
         s.fingerprints.capacity() * sizeof(uint64_t) + s.has_fingerprint.capacity() / 8 +
         s.shingles.memory_bytes() + s.index.stats().memory_bytes;
}

stream_deduplicator::stream_deduplicator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
stream_deduplicator::stream_deduplicator(stream_deduplicator&&) noexcept = default;
stream_deduplicator& stream_deduplicator::operator=(stream_deduplicator&&) noexcept = default;
stream_deduplicator::~stream_deduplicator() = default;

}  // namespace simdup
