// Matching in the RocksDB backend: the lock-free batch probe of the index, the re-check under the
// collection lock of what that probe cannot have seen (rocks_apply.cpp says when), the Jaccard
// verification of hits against stored sketches, and naming the matches by their ids.
#include <algorithm>
#include <tuple>

#include <simdup/simhash.hpp>
#include "store/rocks_backend.hpp"

namespace simdup::detail {

using namespace rocks_keys;

namespace {

std::vector<index_match> query(const collection_state& c, const doc_input& d) {
  query_params params;
  params.now = d.time;  // live: time + window > the document's time
  return c.index.query(d.fingerprint, params);
}

bool live(const collection_state& c, int64_t timestamp, int64_t now) {
  return c.config.window_s <= 0 || timestamp + c.config.window_s > now;
}

bool match_order(const index_match& a, const index_match& b) {
  return std::tie(a.distance, a.timestamp, a.id) < std::tie(b.distance, b.timestamp, b.id);
}

}  // namespace

std::vector<std::vector<index_match>> rocks_backend::probe(const collection_state& c,
                                                           std::span<const doc_input> docs) {
  std::vector<std::vector<index_match>> hits(docs.size());
  if (docs.empty()) return hits;
  std::vector<uint64_t> fps(docs.size());
  query_params params;
  params.now = docs[0].time;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    fps[i] = docs[i].fingerprint;
    // The earliest time admits every entry live for some document; filtered per document.
    params.now = std::min(params.now, docs[i].time);
  }
  query_results results;
  c.index.query(fps, results, params);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    for (const index_match& m : results[i]) {
      if (live(c, m.timestamp, docs[i].time)) hits[i].push_back(m);
    }
  }
  return hits;
}

void rocks_backend::add_band_hits(const collection_state& c, const doc_input& d,
                                  std::vector<index_match>& hits) {
  if (!c.bands || d.band_keys.empty()) return;
  thread_local std::vector<uint64_t> nums;
  nums.clear();
  c.bands->find(d.band_keys, nums);
  const std::size_t simhash_hits = hits.size();
  for (const uint64_t num : nums) {
    const auto same = [&](const index_match& m) { return m.id == num; };
    if (std::none_of(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(simhash_hits),
                     same)) {
      hits.push_back(index_match{num, 0, 0, -1});
    }
  }
}

bool rocks_backend::recent_reaches(const collection_state& c, uint64_t num) {
  return num >= c.next_num || (!c.recent.empty() && c.recent.front().id <= num);
}

std::deque<index_entry>::const_iterator rocks_backend::recent_from(const collection_state& c,
                                                                   uint64_t num) {
  return std::lower_bound(c.recent.begin(), c.recent.end(), num,
                          [](const index_entry& e, uint64_t n) { return e.id < n; });
}

void rocks_backend::recheck_locked(const collection_state& c, const doc_input& d,
                                   std::span<const index_entry> since, bool reprobe,
                                   std::vector<index_match>& hits) {
  if (reprobe) {
    hits = query(c, d);
    return;
  }
  const std::size_t before = hits.size();
  for (const index_entry& e : since) {
    const int distance = hamming_distance(e.fingerprint, d.fingerprint);
    if (distance > c.config.k || !live(c, e.timestamp, d.time)) continue;
    // An entry inserted between the snapshot and the probe may be in both.
    const auto seen = [&](const index_match& m) { return m.id == e.id; };
    if (std::none_of(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(before), seen)) {
      hits.push_back(index_match{e.id, e.fingerprint, e.timestamp, distance});
    }
  }
  if (hits.size() != before) std::sort(hits.begin(), hits.end(), match_order);
}

status rocks_backend::verify_hits(const collection_state& c, const doc_input& d,
                                  record_reader& stored, std::span<const stored_doc> own,
                                  uint64_t base, std::vector<index_match>& hits,
                                  std::vector<std::optional<double>>& jaccards) {
  jaccards.clear();
  if (c.config.verify <= 0 || d.sketch.empty() || hits.empty()) return {};
  thread_local std::vector<uint32_t> sketch;
  std::size_t kept = 0;
  bool band_hits = false;
  for (index_match h : hits) {
    const stored_doc* at = nullptr;
    if (h.id >= base && h.id - base < own.size()) {
      at = &own[h.id - base];
    } else {
      auto found = stored.seek(h.id);
      if (!found) return std::move(found).error();
      at = *found ? stored.doc(h.id) : nullptr;
    }
    if (!at) continue;  // deleted since the probe
    if (h.distance < 0) {
      // Found by a MinHash band: its fingerprint may be anywhere, its time out of the window.
      if (!live(c, at->time, d.time)) continue;
      h.fingerprint = at->fingerprint;
      h.timestamp = at->time;
      h.distance = hamming_distance(d.fingerprint, at->fingerprint);
      band_hits = true;
    }
    decode_sketch(at->sketch, sketch);
    const std::optional<double> j = sketch_similarity(c.config, d.sketch, sketch);
    // Beyond k only a verified pair is a duplicate.
    if (j ? *j < c.config.verify : h.distance > c.config.k) continue;
    hits[kept++] = h;
    jaccards.push_back(j);
  }
  hits.resize(kept);
  if (band_hits) {
    // Closest first, as the index orders its own hits; the Jaccards follow their hits.
    std::vector<std::pair<index_match, std::optional<double>>> both(kept);
    for (std::size_t i = 0; i < kept; ++i) both[i] = {hits[i], jaccards[i]};
    std::sort(both.begin(), both.end(),
              [](const auto& a, const auto& b) { return match_order(a.first, b.first); });
    for (std::size_t i = 0; i < kept; ++i) std::tie(hits[i], jaccards[i]) = both[i];
  }
  return {};
}

status rocks_backend::resolve_all(const collection_state& c,
                                  std::vector<std::vector<index_match>>& hits,
                                  const hit_jaccards& jaccards, std::size_t max_matches,
                                  std::span<doc_outcome> out) {
  record_reader stored = reader(c);
  for (std::size_t i = 0; i < hits.size(); ++i) {
    // The index sorts by (distance, time, number); ties beyond distance keep that order.
    for (std::size_t m = 0; m < hits[i].size(); ++m) {
      const index_match& h = hits[i][m];
      if (out[i].matches.size() >= max_matches) break;
      auto found = stored.seek(h.id);
      if (!found) return std::move(found).error();
      const stored_doc* d = *found ? stored.doc(h.id) : nullptr;
      if (!d) continue;  // deleted since the probe
      const std::optional<double> j =
          m < jaccards[i].size() ? jaccards[i][m] : std::optional<double>();
      out[i].matches.push_back({std::string(d->id), h.distance, j});
    }
  }
  return {};
}

}  // namespace simdup::detail
