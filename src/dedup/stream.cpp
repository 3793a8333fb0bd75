// Stream mode: each document is decided on arrival against the documents kept before it, as a
// crawler would: exact keys first (cheapest), then the online Hamming index.
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/online_index.hpp>

#include "dedup/against.hpp"
#include "dedup/engine_state.hpp"

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
  // Its shingle store holds the kept documents' arrays; its counters count the near candidates
  // compared (each a kept document within k) and those verification rejected.
  detail::engine_state state;
  online_index index;
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
    state.urls.find_or_insert(sig.url_key, representative);
    state.titles.find_or_insert(sig.title_key, representative);
    state.contents.find_or_insert(sig.content_key, representative);
  }
};

result<stream_deduplicator> stream_deduplicator::create(const dedup_options& options) {
  if (!options.against.empty()) return detail::against_needs_batch();
  auto state = detail::engine_state::create(options);
  if (!state) return std::move(state).error();
  online_index_options index_options;
  index_options.layout.k = options.detection.k;
  // The stream's size is unknown (stdin): plan for the default 10M live documents within
  // 256 bytes each. The fastest plan at the default k = 8 holds 495 tables (about 2 KB per
  // document); this budget gives 45 (m = 10), and 10 at k = 3.
  index_options.memory = index_options.expected_size * 256;
  auto index = online_index::create(index_options);
  if (!index) return std::move(index).error();
  return stream_deduplicator(std::unique_ptr<impl>(
      new impl{.state = std::move(state).value(), .index = std::move(index).value()}));
}

result<dedup_decision> stream_deduplicator::impl::decide(
    const doc_signature& sig, const std::span<const index_match>* batch_matches) {
  const auto admitted = state.admit(sig);
  if (!admitted) return std::move(admitted).error();
  const uint32_t ordinal = *admitted;
  const dedup_options& options = state.options;
  dedup_decision d;
  d.representative = ordinal;

  std::optional<uint32_t> hit;
  if ((hit = state.urls.find(sig.url_key))) {
    d.layer = dedup_layer::url;
  } else if ((hit = state.titles.find(sig.title_key))) {
    d.layer = dedup_layer::title;
  } else if ((hit = state.contents.find(sig.content_key))) {
    d.layer = dedup_layer::exact;
  }
  if (hit) {
    d.representative = *hit;
    d.distance = state.distance(ordinal, *hit);
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
      ++state.candidate_pairs;
      if (state.shingles) {
        const std::size_t cap = options.detection.verify->max_hashes;
        // Sizes too far apart rule the pair out without reading the kept array.
        if (cap == 0 && jaccard_size_bound(sig.shingles.size(), state.shingles->count(candidate),
                                           options.detection.verify->threshold)) {
          ++state.rejected_pairs;
          continue;
        }
        if (auto st = state.shingles->get(candidate, kept_shingles); !st)
          return std::move(st).error();
        const double j = cap != 0 ? sketch_jaccard(sig.shingles, kept_shingles, cap)
                                  : jaccard_at_least(sig.shingles, kept_shingles,
                                                     options.detection.verify->threshold);
        if (j < options.detection.verify->threshold) {
          ++state.rejected_pairs;
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
      if (state.shingles) {
        if (auto st = state.shingles->put(ordinal, sig.shingles); !st) return std::move(st).error();
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
    if (sig.has_fingerprint && s.state.options.near_layer)
      s.batch_fingerprints.push_back(sig.fingerprint);
  }
  s.index.query(s.batch_fingerprints, s.batch_results);
  s.pending.clear();
  std::size_t slot = 0;
  status outcome;
  for (const doc_signature& sig : sigs) {
    std::span<const index_match> matches;
    if (sig.has_fingerprint && s.state.options.near_layer) matches = s.batch_results[slot++];
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
  return impl_->state.count;
}

uint64_t stream_deduplicator::candidate_pairs() const noexcept {
  return impl_->state.candidate_pairs;
}

uint64_t stream_deduplicator::rejected_pairs() const noexcept {
  return impl_->state.rejected_pairs;
}

status stream_deduplicator::shingles(uint32_t ordinal, std::vector<uint32_t>& out) const {
  out.clear();
  const auto& store = impl_->state.shingles;
  return store && ordinal < store->size() ? store->get(ordinal, out) : status{};
}

uint64_t stream_deduplicator::spilled_bytes() const noexcept {
  return impl_->state.spilled_bytes();
}

std::size_t stream_deduplicator::memory_bytes() const noexcept {
  return impl_->state.memory_bytes() + impl_->index.stats().memory_bytes;
}

stream_deduplicator::stream_deduplicator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
stream_deduplicator::stream_deduplicator(stream_deduplicator&&) noexcept = default;
stream_deduplicator& stream_deduplicator::operator=(stream_deduplicator&&) noexcept = default;
stream_deduplicator::~stream_deduplicator() = default;

}  // namespace simdup
