#include "dedup/batch_near.hpp"

#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/minhash.hpp>

#include "dedup/candidate_filter.hpp"
#include "dedup/pair_jaccard.hpp"

#include <algorithm>

namespace simdup::detail {
namespace {

// Candidate pairs are verified in batches of this many: large enough that many pairs share a
// document (read once per batch), small enough to bound memory (about 32 bytes per pair).
constexpr std::size_t kVerifyBatch = std::size_t{1} << 18;

bool pair_before(const verified_pair& x, const verified_pair& y) {
  return x.a != y.a ? x.a < y.a : x.b < y.b;
}

// anchor_clusters over the near layer's slots: the accepted (verified) pairs are the links,
// and a member's similarity to its representative is the verified Jaccard when the pair was
// verified, else measured (exactly when at least the floor).
status anchor(const engine_state& state, std::span<const uint32_t> twin, const near_slots& slots,
              std::span<const uint32_t> rank, const std::vector<verified_pair>& accepted,
              std::vector<uint32_t>& near_rep) {
  const double floor = state.options.detection.anchor_floor;
  std::vector<index_pair> slot_links;
  slot_links.reserve(accepted.size());
  for (const verified_pair& p : accepted) {
    slot_links.push_back({slots.of_rank[rank[p.a]], slots.of_rank[rank[p.b]], 0});
  }
  std::vector<std::pair<uint32_t, uint32_t>> measure;
  std::vector<std::size_t> measure_at;
  std::vector<double> measured;
  const auto similarity = [&](std::span<const std::pair<uint32_t, uint32_t>> pairs,
                              std::vector<double>& out) -> status {
    out.assign(pairs.size(), 0.0);
    measure.clear();
    measure_at.clear();
    for (std::size_t j = 0; j < pairs.size(); ++j) {
      const uint32_t a = slots.ordinals[pairs[j].first], b = slots.ordinals[pairs[j].second];
      if (const auto jaccard = verified_jaccard(accepted, a, b)) {
        out[j] = *jaccard;
      } else {
        measure.push_back(std::minmax(a, b));
        measure_at.push_back(j);
      }
    }
    if (measure.empty()) return {};
    if (auto st = ordinal_jaccards(state, twin, measure, floor, measured); !st) return st;
    for (std::size_t m = 0; m < measure.size(); ++m) out[measure_at[m]] = measured[m];
    return {};
  };
  return anchor_clusters(near_rep, slot_links, floor, similarity);
}

}  // namespace

std::optional<float> verified_jaccard(const std::vector<verified_pair>& accepted, uint32_t a,
                                      uint32_t b) {
  const verified_pair key{std::min(a, b), std::max(a, b), 0.0f};
  const auto it = std::lower_bound(accepted.begin(), accepted.end(), key, pair_before);
  if (it != accepted.end() && it->a == key.a && it->b == key.b) return it->jaccard;
  return std::nullopt;
}

status ordinal_jaccards(const engine_state& state, std::span<const uint32_t> twin,
                        std::span<const std::pair<uint32_t, uint32_t>> pairs, double threshold,
                        std::vector<double>& out) {
  std::vector<jaccard_job> jobs(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    jobs[i] = {twin[pairs[i].first], twin[pairs[i].second], static_cast<uint32_t>(i)};
  }
  out.assign(pairs.size(), 0.0);
  return pair_jaccards(*state.shingles, jobs, state.options.detection.verify->max_hashes, threshold,
                       out);
}

result<near_links> link_near_duplicates(engine_state& state, std::span<const uint32_t> twin,
                                        record_column& band_keys, const record_column& sketches,
                                        const near_slots& slots, std::span<const uint32_t> rank,
                                        uint64_t memory_taken,
                                        const std::function<void(std::string_view)>& phase) {
  const detection_profile& detection = state.options.detection;
  const std::vector<uint32_t>& near_ordinals = slots.ordinals;
  const std::vector<uint64_t>& near_fingerprints = slots.fingerprints;
  const uint64_t limit = state.options.memory_limit;
  // Under a limit, smaller batches (each pair takes about 170 bytes with its two sketches).
  const uint64_t left = limit > memory_taken ? limit - memory_taken : 0;
  const std::size_t batch_pairs =
      limit == 0 ? kVerifyBatch : std::clamp<std::size_t>(left / 2048, 4096, kVerifyBatch);
  near_links out;
  phase("all pairs");
  cluster_builder clusters(near_ordinals.size(), detection.clustering, slots.documents);
  all_pairs_options ap = detection.pair_search();
  if (limit != 0) {
    ap.memory_limit = limit;
    ap.memory_taken = memory_taken + batch_pairs * 170;
  }
  // Verification buffers candidates and checks them a batch at a time (see kVerifyBatch).
  std::vector<index_pair> buffered, verified;
  std::vector<std::pair<uint32_t, uint32_t>> ordinals;
  std::vector<double> similarity;
  // Verification so far: ok until a batch fails to read its shingles (then all_pairs stops).
  status verification;
  // Pairs that cannot (sizes) or almost surely do not (sketches) reach the threshold are not
  // read: exact verification only, where sizes are exact (a bottom-k cap cuts them).
  const bool prefilter =
      state.shingles && detection.verify->max_hashes == 0 && sketches.size() == state.count;
  const candidate_filter filter(prefilter ? detection.verify->threshold : 1.0);
  // A batch's sketches: in memory, or gathered from the spilled column by ordinal.
  std::vector<uint32_t> sketch_ordinals;
  std::vector<uint8_t> gathered;
  const auto prefilter_buffered = [&]() -> status {
    if (!prefilter) return {};
    const uint8_t* in_memory = sketches.data();
    if (!in_memory) {
      sketch_ordinals.clear();
      for (const index_pair& p : buffered) {
        sketch_ordinals.push_back(twin[near_ordinals[p.a]]);
        sketch_ordinals.push_back(twin[near_ordinals[p.b]]);
      }
      std::sort(sketch_ordinals.begin(), sketch_ordinals.end());
      sketch_ordinals.erase(std::unique(sketch_ordinals.begin(), sketch_ordinals.end()),
                            sketch_ordinals.end());
      if (auto st = sketches.gather(sketch_ordinals, gathered); !st) return st;
    }
    const auto sketch_of = [&](uint32_t ordinal) -> const uint8_t* {
      if (in_memory) return in_memory + std::size_t{ordinal} * pair_sketch_bytes;
      const auto at = std::lower_bound(sketch_ordinals.begin(), sketch_ordinals.end(), ordinal);
      return gathered.data() +
             static_cast<std::size_t>(at - sketch_ordinals.begin()) * pair_sketch_bytes;
    };
    const std::size_t before = buffered.size();
    std::erase_if(buffered, [&](const index_pair& p) {
      const uint32_t a = twin[near_ordinals[p.a]], b = twin[near_ordinals[p.b]];
      return !filter.may_reach(state.shingles->count(a), state.shingles->count(b), sketch_of(a),
                               sketch_of(b));
    });
    state.prefiltered_pairs += before - buffered.size();
    return {};
  };
  const auto verify_buffered = [&]() -> status {
    if (auto st = prefilter_buffered(); !st) return st;
    ordinals.clear();
    for (const index_pair& p : buffered) {
      ordinals.emplace_back(near_ordinals[p.a], near_ordinals[p.b]);
    }
    if (auto st = ordinal_jaccards(state, twin, ordinals, detection.verify->threshold, similarity);
        !st) {
      return st;
    }
    verified.clear();
    for (std::size_t i = 0; i < buffered.size(); ++i) {
      if (similarity[i] >= detection.verify->threshold) {
        verified.push_back(buffered[i]);
        const auto [a, b] = std::minmax(ordinals[i].first, ordinals[i].second);
        out.accepted.push_back({a, b, static_cast<float>(similarity[i])});
      } else {
        ++state.rejected_pairs;
      }
    }
    clusters.add(verified);
    buffered.clear();
    return {};
  };
  if (state.shingles) {
    if (auto st = state.shingles->flush(); !st) return std::move(st).error();
  }
  auto run = all_pairs(near_fingerprints, ap, [&](std::span<const index_pair> pairs) {
    state.candidate_pairs += pairs.size();
    if (!state.shingles) {
      clusters.add(pairs);
      return true;
    }
    buffered.insert(buffered.end(), pairs.begin(), pairs.end());
    if (buffered.size() >= batch_pairs) verification = verify_buffered();
    return static_cast<bool>(verification);
  });
  if (!run) return std::move(run).error();
  if (verification && state.shingles) verification = verify_buffered();
  if (verification && state.shingles && detection.minhash.bands > 0) {
    // The second generator: pairs that share a MinHash band but that SimHash did not find
    // (fingerprints more than k apart), verified the same way. A band at a time: its keys by
    // slot are read from the column (one pass over it per band).
    phase("minhash pairs");
    minhash_options one_band = detection.minhash;
    one_band.bands = 1;
    std::vector<uint64_t> slot_keys(near_ordinals.size());
    std::vector<index_pair> extra;
    for (std::size_t band = 0; band < detection.minhash.bands && verification; ++band) {
      verification = for_each_word(band_keys, band, [&](uint32_t ordinal, uint64_t key) {
        if (const uint32_t slot = slots.of_rank[rank[ordinal]]; slot != UINT32_MAX) {
          slot_keys[slot] = key;
        }
      });
      minhash_pairs(
          slot_keys, near_ordinals.size(), one_band,
          [&](uint32_t a, uint32_t b) {
            return hamming_distance(near_fingerprints[a], near_fingerprints[b]) <= detection.k;
          },
          extra);
    }
    band_keys.release();
    std::vector<uint64_t>().swap(slot_keys);
    detail::sort_unique_pairs(extra, 0);  // over all bands
    state.candidate_pairs += extra.size();
    out.minhash_candidates = extra.size();
    for (std::size_t first = 0; first < extra.size() && verification; first += batch_pairs) {
      const std::size_t last = std::min(extra.size(), first + batch_pairs);
      buffered.assign(extra.begin() + static_cast<std::ptrdiff_t>(first),
                      extra.begin() + static_cast<std::ptrdiff_t>(last));
      verification = verify_buffered();
    }
  }
  if (!verification) return std::move(verification).error();
  phase("clusters");
  out.representatives = clusters.finish();
  std::sort(out.accepted.begin(), out.accepted.end(), pair_before);
  if (detection.clustering == cluster_linking::anchored) {
    phase("anchoring clusters");
    if (auto st = anchor(state, twin, slots, rank, out.accepted, out.representatives); !st) {
      return std::move(st).error();
    }
  }
  return out;
}

}  // namespace simdup::detail
