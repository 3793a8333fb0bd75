// Stream mode: each document is decided on arrival against the documents kept before it, as a
// crawler would: exact keys first (cheapest), then the online Hamming index.
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/online_index.hpp>

#include "dedup/pair_jaccard.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

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
  // Shingles of kept documents (verification), spilled to a temporary file.
  std::optional<shingle_store> shingles;
  uint32_t count = 0;
  // Near candidates compared (each a kept document within k), and those verification rejected.
  uint64_t candidate_pairs = 0;
  uint64_t rejected_pairs = 0;
  // Scratch of decide() and of batches: candidates of one document, the batch's fingerprints
  // and index matches, and the documents kept in the batch so far (inserted at its end).
  std::vector<index_match> candidates;
  std::vector<uint32_t> kept_shingles;
  std::vector<uint64_t> batch_fingerprints;
  query_results batch_results;
  std::vector<index_entry> pending;

  /// Decides the next document; `batch_matches` are its index matches from a batch probe
  /// (null: query the index now).
  result<dedup_decision> decide(const doc_signature& sig,
                                const std::span<const index_match>* batch_matches);

  // Points every key of the document at `representative` unless the key is already taken, so a
  // later document sharing any key with a dropped one is a duplicate of the kept original.
  void register_keys(const doc_signature& sig, uint32_t representative) {
    urls.find_or_insert(sig.url_key, representative);
    titles.find_or_insert(sig.title_key, representative);
    contents.find_or_insert(sig.content_key, representative);
  }
};

result<stream_deduplicator> stream_deduplicator::create(const dedup_options& options) {
  if (auto st = options.detection.validate(); !st) return std::move(st).error();
  online_index_options index_options;
  index_options.layout.k = options.detection.k;
  // The stream's size is unknown (stdin): plan for the default 10M live documents within
  // 256 bytes each. The fastest plan at the default k = 8 holds 495 tables (about 2 KB per
  // document); this budget gives 45 (m = 10), and 10 at k = 3.
  index_options.memory = index_options.expected_size * 256;
  auto index = online_index::create(index_options);
  if (!index) return std::move(index).error();
  auto shingles = detail::open_verify_store(options);
  if (!shingles) return std::move(shingles).error();
  return stream_deduplicator(
      std::unique_ptr<impl>(new impl{.options = options,
                                     .index = std::move(index).value(),
                                     .shingles = std::move(shingles).value()}));
}

result<dedup_decision> stream_deduplicator::impl::decide(
    const doc_signature& sig, const std::span<const index_match>* batch_matches) {
  if (count == UINT32_MAX) {
    return make_error(errc::too_large, "more than 4294967294 documents in one dedup run");
  }
  const uint32_t ordinal = count++;
  fingerprints.push_back(sig.fingerprint);
  has_fingerprint.push_back(sig.has_fingerprint);
  dedup_decision d;
  d.representative = ordinal;

  std::optional<uint32_t> hit;
  if ((hit = urls.find(sig.url_key))) {
    d.layer = dedup_layer::url;
  } else if ((hit = titles.find(sig.title_key))) {
    d.layer = dedup_layer::title;
  } else if ((hit = contents.find(sig.content_key))) {
    d.layer = dedup_layer::exact;
  }
  if (hit) {
    d.representative = *hit;
    if (sig.has_fingerprint && has_fingerprint[*hit]) {
      d.distance = static_cast<int8_t>(hamming_distance(sig.fingerprint, fingerprints[*hit]));
    }
  } else if (options.near_layer && sig.has_fingerprint) {
    // Candidates sorted by (distance, timestamp = 0, id = ordinal): the first that passes
    // verification is the closest earliest kept document. In a batch, the index was probed
    // before the batch, so documents kept earlier in the batch are compared here directly.
    if (batch_matches) {
      candidates.assign(batch_matches->begin(), batch_matches->end());
      bool local = false;
      for (const index_entry& e : pending) {
        const int distance = hamming_distance(sig.fingerprint, e.fingerprint);
        if (distance > options.detection.k) continue;
        candidates.push_back(index_match{e.id, e.fingerprint, 0, distance});
        local = true;
      }
      if (local) {
        std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
          return a.distance != b.distance ? a.distance < b.distance : a.id < b.id;
        });
      }
    } else {
      candidates = index.query(sig.fingerprint);
    }
    for (const index_match& m : candidates) {
      const auto candidate = static_cast<uint32_t>(m.id);
      ++candidate_pairs;
      if (shingles) {
        const std::size_t cap = options.detection.verify->max_hashes;
        // Sizes too far apart rule the pair out without reading the kept array.
        if (cap == 0 && jaccard_size_bound(sig.shingles.size(), shingles->count(candidate),
                                           options.detection.verify->threshold)) {
          ++rejected_pairs;
          continue;
        }
        if (auto st = shingles->get(candidate, kept_shingles); !st) return std::move(st).error();
        const double j = cap != 0 ? sketch_jaccard(sig.shingles, kept_shingles, cap)
                                  : jaccard_at_least(sig.shingles, kept_shingles,
                                                     options.detection.verify->threshold);
        if (j < options.detection.verify->threshold) {
          ++rejected_pairs;
          continue;
        }
        d.jaccard = static_cast<float>(j);
      }
      d.representative = candidate;
      d.layer = dedup_layer::near;
      d.distance = static_cast<int8_t>(m.distance);
      break;
    }
    if (d.layer == dedup_layer::none) {
      const index_entry entry{sig.fingerprint, ordinal, 0};
      if (batch_matches) {
        pending.push_back(entry);
      } else {
        index.insert(entry);
      }
      if (shingles) {
        if (auto st = shingles->put(ordinal, sig.shingles); !st) return std::move(st).error();
      }
    }
  }
  register_keys(sig, d.representative);
  return d;
}

result<dedup_decision> stream_deduplicator::add(const doc_signature& sig) {
  return impl_->decide(sig, nullptr);
}

status stream_deduplicator::add(std::span<const doc_signature> sigs,
                                std::vector<dedup_decision>& out) {
  impl& s = *impl_;
  out.clear();
  // One batch probe of the index for every document with a fingerprint: the probes of many
  // documents overlap their memory latency, which single queries of a 10M-entry index (tens of
  // cache misses each) cannot.
  s.batch_fingerprints.clear();
  for (const doc_signature& sig : sigs) {
    if (sig.has_fingerprint && s.options.near_layer)
      s.batch_fingerprints.push_back(sig.fingerprint);
  }
  s.index.query(s.batch_fingerprints, s.batch_results);
  s.pending.clear();
  std::size_t slot = 0;
  status outcome;
  for (const doc_signature& sig : sigs) {
    std::span<const index_match> matches;
    if (sig.has_fingerprint && s.options.near_layer) matches = s.batch_results[slot++];
    auto d = s.decide(sig, &matches);
    if (!d) {
      outcome = std::move(d).error();
      break;
    }
    out.push_back(*d);
  }
  s.index.insert(s.pending);
  s.pending.clear();
  return outcome;
}

uint32_t stream_deduplicator::size() const noexcept {
  return impl_->count;
}

uint64_t stream_deduplicator::candidate_pairs() const noexcept {
  return impl_->candidate_pairs;
}

uint64_t stream_deduplicator::rejected_pairs() const noexcept {
  return impl_->rejected_pairs;
}

uint64_t stream_deduplicator::spilled_bytes() const noexcept {
  return impl_->shingles ? impl_->shingles->stored_bytes() : 0;
}

std::size_t stream_deduplicator::memory_bytes() const noexcept {
  const impl& s = *impl_;
  return s.urls.memory_bytes() + s.titles.memory_bytes() + s.contents.memory_bytes() +
         s.fingerprints.capacity() * sizeof(uint64_t) + s.has_fingerprint.capacity() / 8 +
         (s.shingles ? s.shingles->memory_bytes() : 0) + s.index.stats().memory_bytes;
}

stream_deduplicator::stream_deduplicator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
stream_deduplicator::stream_deduplicator(stream_deduplicator&&) noexcept = default;
stream_deduplicator& stream_deduplicator::operator=(stream_deduplicator&&) noexcept = default;
stream_deduplicator::~stream_deduplicator() = default;

}  // namespace simdup
