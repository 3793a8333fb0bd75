#include "dedup/against.hpp"
#include "util/cpu.hpp"

#include <simdup/all_pairs.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/fingerprint_scan.hpp>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <mutex>
#include <thread>

namespace simdup::detail {

error_info against_needs_batch() {
  return invalid_parameter({.name = "against",
                            .reason = "needs batch mode: stream mode decides each document on "
                                      "arrival and does not join it with an earlier run's index"});
}
namespace {

// A near candidate: a document of the run and a position in the scan of the indexes.
struct near_candidate {
  uint32_t doc;
  uint32_t old;  // position after the run's documents: index bases below
  int8_t distance;
};

// Where each index's documents start in the scan (after the run's `first` fingerprints).
struct scan_positions {
  std::vector<uint64_t> base;  // per index, then the end
  std::pair<std::size_t, uint32_t> locate(uint32_t position) const {
    const auto it = std::upper_bound(base.begin(), base.end(), position) - 1;
    return {static_cast<std::size_t>(it - base.begin()), static_cast<uint32_t>(position - *it)};
  }
};

void exact_matches(const engine_state& state, std::vector<against_match>& matches) {
  const dedup_options& o = state.options;
  for (std::size_t x = 0; x < o.against.size(); ++x) {
    const dedup_index& index = *o.against[x];
    const struct {
      bool on;
      const exact_table& table;
      std::span<const uint64_t> keys;
      dedup_layer layer;
    } layers[] = {{o.url_layer, state.urls, index.url_keys(), dedup_layer::url},
                  {o.title_layer, state.titles, index.title_keys(), dedup_layer::title},
                  {o.content_layer, state.contents, index.content_keys(), dedup_layer::exact}};
    for (const auto& l : layers) {
      if (!l.on || l.table.size() == 0) continue;
      for (std::size_t j = 0; j < l.keys.size(); ++j) {
        const uint64_t key = l.keys[j];
        if (key == 0) continue;
        const auto holder = l.table.find(key);
        if (!holder) continue;
        const against_match m{.index = static_cast<uint8_t>(x + 1),
                              .layer = l.layer,
                              .distance = -1,
                              .document = static_cast<uint32_t>(j)};
        if (!matches[*holder].found() || m.better_than(matches[*holder])) matches[*holder] = m;
      }
    }
  }
}

}  // namespace

bool against_match::better_than(const against_match& o) const noexcept {
  const bool exact = layer != dedup_layer::near, other_exact = o.layer != dedup_layer::near;
  if (exact != other_exact) return exact;
  if (!exact && distance != o.distance) return distance < o.distance;
  if (index != o.index) return index < o.index;
  return document < o.document;
}

result<std::vector<against_match>> match_against(
    const engine_state& state, std::span<const uint32_t> twin, const record_column& band_keys,
    against_counts& counts, const std::function<void(std::string_view)>& phase) {
  const dedup_options& o = state.options;
  std::vector<against_match> matches(state.count);
  if (phase) phase("against: exact keys");
  exact_matches(state, matches);
  if (!o.near_layer) return matches;

  // The run's documents that the near layer compares: with a fingerprint, of new content, not
  // matched exactly already.
  std::vector<uint32_t> docs;
  for (uint32_t i = 0; i < state.count; ++i) {
    if (state.has_fingerprint[i] && (twin.empty() || twin[i] == i) && !matches[i].found()) {
      docs.push_back(i);
    }
  }
  scan_positions where;
  uint64_t total = docs.size();
  for (const auto& index : o.against) {
    where.base.push_back(total);
    total += index->size();
  }
  where.base.push_back(total);
  if (total >= UINT32_MAX) {
    return make_error(errc::too_large, "against: the run and its indexes hold " +
                                           std::to_string(total) +
                                           " documents together, more than 4294967294");
  }
  if (docs.empty()) return matches;
  const auto old_index = [&](uint32_t position) {
    const auto [x, j] = where.locate(position);
    return std::pair<const dedup_index&, uint32_t>(*o.against[x - 1], j);
  };
  // where.base[0] is the run's documents' end; index x starts at where.base[x].
  where.base.insert(where.base.begin(), 0);

  if (phase) phase("against: near pairs");
  std::vector<near_candidate> candidates;
  {
    fingerprint_scan scan;
    scan.size = total;
    scan.read = [&](const std::function<void(std::span<const uint64_t>)>& block) -> status {
      std::vector<uint64_t> mine(docs.size());
      for (std::size_t q = 0; q < docs.size(); ++q) mine[q] = state.fingerprints[docs[q]];
      block(mine);
      for (const auto& index : o.against) block(index->fingerprints());
      return {};
    };
    all_pairs_options search = o.detection.pair_search();
    search.cross_split = static_cast<uint32_t>(docs.size());
    // Memory that grows with this run, not with the indexes: each pass holds about as many
    // index fingerprints as the run has documents (at least 64 MiB), and the passes stream the
    // indexes' mapped fingerprints.
    search.memory_limit = std::max<uint64_t>(
        all_pairs_pass_bytes(2 * docs.size(), detail::available_cpus()), uint64_t{64} << 20);
    std::mutex mutex;
    const pair_sink collect = [&](std::span<const index_pair> pairs) {
      std::lock_guard lock(mutex);
      for (const index_pair& p : pairs) {
        const auto [index, j] = old_index(p.b);
        if (!index.has_fingerprint(j)) continue;  // stored as 0, not a fingerprint
        candidates.push_back({docs[p.a], p.b, static_cast<int8_t>(p.distance)});
      }
      return true;
    };
    auto run = all_pairs(scan, search, collect);
    if (!run && run.error().code == errc::too_large && total < UINT32_MAX) {
      // Too many equal fingerprints for passes of that size (refused before any pair): one
      // pass over everything instead.
      candidates.clear();
      search.memory_limit = 0;
      run = all_pairs(scan, search, collect);
    }
    if (!run) return std::move(run).error();
  }

  // MinHash: per band, the run's (key, document) sorted, joined with each index's keys. An index
  // key shared by more than max_bucket index documents pairs only its first max_bucket.
  const std::size_t bands = o.detection.minhash.bands;
  if (bands > 0 && state.shingles && band_keys.size() > 0) {
    std::vector<std::pair<uint64_t, uint32_t>> keyed;
    std::vector<uint16_t> used;
    for (std::size_t b = 0; b < bands; ++b) {
      keyed.clear();
      auto next = docs.begin();  // docs ascend, as the scan does
      auto read = for_each_word(band_keys, b, [&](uint32_t i, uint64_t key) {
        if (next == docs.end() || *next != i) return;
        ++next;
        if (key != 0) keyed.emplace_back(key, i);
      });
      if (!read) return std::move(read).error();
      tbb::parallel_sort(keyed.begin(), keyed.end());
      used.assign(keyed.size(), 0);
      for (std::size_t x = 0; x < o.against.size(); ++x) {
        const dedup_index& index = *o.against[x];
        if (index.bands() != bands) continue;
        const std::span<const uint64_t> keys = index.band_keys();
        for (uint64_t j = 0; j < index.size(); ++j) {
          const uint64_t key = keys[j * bands + b];
          if (key == 0) continue;
          auto lo =
              std::lower_bound(keyed.begin(), keyed.end(), std::pair<uint64_t, uint32_t>(key, 0));
          if (lo == keyed.end() || lo->first != key) continue;
          uint16_t& n = used[lo - keyed.begin()];
          if (n >= o.detection.minhash.max_bucket) continue;
          ++n;
          const uint64_t old_fp = index.fingerprints()[j];
          for (auto it = lo; it != keyed.end() && it->first == key; ++it) {
            candidates.push_back(
                {it->second, static_cast<uint32_t>(where.base[x + 1] + j),
                 static_cast<int8_t>(std::popcount(state.fingerprints[it->second] ^ old_fp))});
          }
        }
      }
    }
  }
  tbb::parallel_sort(candidates.begin(), candidates.end(),
                     [](const near_candidate& x, const near_candidate& y) {
                       return x.doc != y.doc ? x.doc < y.doc : x.old < y.old;
                     });
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [](const near_candidate& x, const near_candidate& y) {
                                 return x.doc == y.doc && x.old == y.old;
                               }),
                   candidates.end());
  counts.candidates += candidates.size();

  // Verification, grouped by document: its shingles read once, each index array in place.
  if (phase && state.shingles) phase("against: verification");
  std::vector<std::size_t> starts;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    if (c == 0 || candidates[c].doc != candidates[c - 1].doc) starts.push_back(c);
  }
  starts.push_back(candidates.size());
  const std::optional<verify_options>& verify = o.detection.verify;
  const double floor =
      !verify ? 0.0
              : std::max(verify->threshold, o.detection.clustering == cluster_linking::anchored
                                                ? o.detection.anchor_floor
                                                : 0.0);
  // Per index, the cap both sides are compared over: the smaller non-zero one of the run's and
  // the index's max_hashes (a bottom-k sketch, such as a service's export, is not an exact
  // set), or 0 for an exact Jaccard.
  std::vector<std::size_t> caps;
  for (const auto& index : o.against) {
    const std::size_t run_cap = verify ? verify->max_hashes : 0, cap = index->max_hashes();
    caps.push_back(run_cap == 0 ? cap : cap == 0 ? run_cap : std::min(run_cap, cap));
  }
  std::mutex mutex;
  status outcome;
  std::atomic<uint64_t> rejected{0};
  tbb::enumerable_thread_specific<std::vector<uint32_t>> buffers;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, starts.size() - 1), [&](const auto& range) {
    std::vector<uint32_t>& mine = buffers.local();
    for (std::size_t g = range.begin(); g != range.end(); ++g) {
      const uint32_t doc = candidates[starts[g]].doc;
      if (state.shingles) {
        if (auto st = state.shingles->get(doc, mine); !st) {
          std::lock_guard lock(mutex);
          if (outcome) outcome = std::move(st);
          return;
        }
      }
      against_match best;
      for (std::size_t c = starts[g]; c < starts[g + 1]; ++c) {
        const auto [index, j] = old_index(candidates[c].old);
        const auto [x, unused] = where.locate(candidates[c].old);
        float jaccard = std::numeric_limits<float>::quiet_NaN();
        // An index document with a fingerprint and no shingles (one a service was sent as a
        // fingerprint) cannot be verified: its distance decides, as in the service.
        if (verify && !index.shingles(j).empty()) {
          const std::span<const uint32_t> theirs = index.shingles(j);
          const std::size_t cap = caps[x - 1];
          double sim = 0;
          if (cap != 0) {
            sim = sketch_jaccard(std::span<const uint32_t>(mine).first(std::min(mine.size(), cap)),
                                 theirs, cap);
          } else if (const auto bound = jaccard_size_bound(mine.size(), theirs.size(), floor)) {
            sim = *bound;
          } else {
            sim = jaccard_at_least(mine, theirs, floor);
          }
          if (sim < floor) {
            rejected.fetch_add(1, std::memory_order_relaxed);
            continue;
          }
          jaccard = static_cast<float>(sim);
        }
        const against_match m{.index = static_cast<uint8_t>(x),
                              .layer = dedup_layer::near,
                              .distance = candidates[c].distance,
                              .jaccard = jaccard,
                              .document = j};
        if (!best.found() || m.better_than(best)) best = m;
      }
      matches[doc] = best;
    }
  });
  if (!outcome) return std::move(outcome).error();
  counts.rejected += rejected.load();
  return matches;
}

}  // namespace simdup::detail
