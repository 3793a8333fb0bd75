// Batch mode. add() applies the exact layers as documents arrive (links to the first holder of
// each key). finish() orders documents by the keep policy, so that "best" is "smallest rank":
// exact groups are joined (their best member stands for the group), the near layer runs
// all-pairs over those group leaders only (an exact group of 10,000 copies must not become
// 50M distance-0 pairs), pairs are verified and clustered, and members follow their leader.
#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>

#include "dedup/engine_state.hpp"
#include "dedup/pair_jaccard.hpp"

#include <algorithm>
#include <numeric>

namespace simdup {
namespace {

// Candidate pairs are verified in batches of this many: large enough that many pairs share a
// document (read once per batch), small enough to bound memory (about 32 bytes per pair).
constexpr std::size_t kVerifyBatch = std::size_t{1} << 18;

// A verified pair (ordinals, a < b) and its Jaccard, kept for the duplicates' report: with star
// clusters every near duplicate was verified against its representative, so its Jaccard is
// known without reading the arrays again.
struct verified_pair {
  uint32_t a;
  uint32_t b;
  float jaccard;
};

bool pair_before(const verified_pair& x, const verified_pair& y) {
  return x.a != y.a ? x.a < y.a : x.b < y.b;
}

}  // namespace

struct batch_deduplicator::impl {
  detail::engine_state state;
  // Exact-layer links (document, earlier holder of a shared key) and each end's first layer.
  std::vector<index_pair> links;
  std::vector<dedup_layer> layers;
  // Keep-policy data, filled only for the policy in use.
  std::vector<uint32_t> lengths;
  std::vector<int64_t> times;
  std::vector<double> fields;
  // Verification stores the shingles of documents with new content only: twin[i] is the
  // earlier document with the same normalised text (whose shingles stand for i), or i.
  std::vector<uint32_t> twin;
  // MinHash band keys, options.detection.minhash.bands per document (0: none).
  std::vector<uint64_t> band_keys;
  uint64_t minhash_candidates = 0;

  void link(uint32_t doc, std::optional<uint32_t> holder, dedup_layer layer) {
    if (!holder) return;
    links.push_back(index_pair{*holder, doc, 0});
    if (layers[doc] == dedup_layer::none) layers[doc] = layer;
    if (layers[*holder] == dedup_layer::none) layers[*holder] = layer;
  }

  // Jaccard of each (ordinal, ordinal) pair into out.
  // (exact when >= threshold; 0 for always exact).
  status jaccards(std::span<const std::pair<uint32_t, uint32_t>> pairs, double threshold,
                  std::vector<double>& out) {
    std::vector<detail::jaccard_job> jobs(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      jobs[i] = {twin[pairs[i].first], twin[pairs[i].second], static_cast<uint32_t>(i)};
    }
    out.assign(pairs.size(), 0.0);
    return detail::pair_jaccards(*state.shingles, jobs, state.options.detection.verify->max_hashes,
                                 threshold, out);
  }

  // anchor_clusters over the near layer's slots: the accepted (verified) pairs are the links,
  // and a member's similarity to its representative is the verified Jaccard when the pair was
  // verified, else measured (exactly when at least the floor).
  status anchor(const std::vector<uint32_t>& near_ordinals, const std::vector<uint32_t>& near_slot,
                const std::vector<uint32_t>& rank, const std::vector<verified_pair>& accepted,
                std::vector<uint32_t>& near_rep) {
    std::vector<index_pair> slot_links;
    slot_links.reserve(accepted.size());
    for (const verified_pair& p : accepted) {
      slot_links.push_back({near_slot[rank[p.a]], near_slot[rank[p.b]], 0});
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
        const auto [a, b] =
            std::minmax(near_ordinals[pairs[j].first], near_ordinals[pairs[j].second]);
        const verified_pair key{a, b, 0.0f};
        const auto it = std::lower_bound(accepted.begin(), accepted.end(), key, pair_before);
        if (it != accepted.end() && it->a == a && it->b == b) {
          out[j] = it->jaccard;
        } else {
          measure.emplace_back(a, b);
          measure_at.push_back(j);
        }
      }
      if (measure.empty()) return {};
      if (auto st = jaccards(measure, state.options.detection.anchor_floor, measured); !st)
        return st;
      for (std::size_t m = 0; m < measure.size(); ++m) out[measure_at[m]] = measured[m];
      return {};
    };
    return anchor_clusters(near_rep, slot_links, state.options.detection.anchor_floor, similarity);
  }

  keep_rank rank_of(uint32_t i) const {
    keep_rank r{i, 0, 0, 0};
    if (!lengths.empty()) r.length = lengths[i];
    if (!times.empty()) r.time = times[i];
    if (!fields.empty()) r.field = fields[i];
    return r;
  }
};

result<batch_deduplicator> batch_deduplicator::create(const dedup_options& options) {
  auto state = detail::engine_state::create(options);
  if (!state) return std::move(state).error();
  return batch_deduplicator(std::unique_ptr<impl>(new impl{.state = std::move(state).value()}));
}

status batch_deduplicator::add(doc_signature&& sig) {
  impl& s = *impl_;
  const auto admitted = s.state.admit(sig);
  if (!admitted) return std::move(admitted).error();
  const uint32_t i = *admitted;
  s.layers.push_back(dedup_layer::none);
  switch (s.state.options.keep.rule) {
    case keep_rule::first:
      break;
    case keep_rule::longest:
      s.lengths.push_back(sig.length);
      break;
    case keep_rule::newest:
      s.times.push_back(sig.time);
      break;
    case keep_rule::field:
      s.fields.push_back(sig.field);
      break;
  }
  s.link(i, s.state.urls.find_or_insert(sig.url_key, i), dedup_layer::url);
  s.link(i, s.state.titles.find_or_insert(sig.title_key, i), dedup_layer::title);
  const auto same_text = s.state.contents.find_or_insert(sig.content_key, i);
  s.link(i, same_text, dedup_layer::exact);
  if (const std::size_t bands = s.state.options.detection.minhash.bands; bands > 0) {
    if (sig.band_keys.size() == bands && !same_text) {
      s.band_keys.insert(s.band_keys.end(), sig.band_keys.begin(), sig.band_keys.end());
    } else {
      s.band_keys.insert(s.band_keys.end(), bands, 0);
    }
  }
  if (s.state.shingles) {
    s.twin.push_back(same_text.value_or(i));
    if (!same_text && sig.has_fingerprint) {
      if (auto st = s.state.shingles->put(i, sig.shingles); !st) return st;
    }
  }
  return {};
}

result<std::vector<dedup_decision>> batch_deduplicator::finish(
    const std::function<void(std::string_view)>& progress) {
  impl& s = *impl_;
  const detection_profile& detection = s.state.options.detection;
  const auto phase = [&](std::string_view name) {
    if (progress) progress(name);
  };
  const uint32_t n = s.state.count;

  // order[r] = ordinal of rank r (best first); rank[i] = rank of ordinal i.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (s.state.options.keep.rule != keep_rule::first) {
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return keep_before(s.state.options.keep.rule, s.rank_of(a), s.rank_of(b));
    });
  }
  std::vector<uint32_t> rank(n);
  for (uint32_t r = 0; r < n; ++r) rank[order[r]] = r;

  // Exact groups; components pick the smallest rank, i.e. the best member, as leader.
  phase("exact groups");
  std::vector<uint32_t> leader;
  {
    cluster_builder groups(n, cluster_linking::components);
    for (index_pair& p : s.links) {
      p = index_pair{std::min(rank[p.a], rank[p.b]), std::max(rank[p.a], rank[p.b]), 0};
    }
    groups.add(s.links);
    leader = groups.finish();
    std::vector<index_pair>().swap(s.links);
  }

  // Near layer over group leaders with a fingerprint, in rank order.
  std::vector<uint32_t> near_ordinals;
  std::vector<uint64_t> near_fingerprints;
  std::vector<uint32_t> near_slot(n, UINT32_MAX);  // by rank
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t i = order[r];
    if (leader[r] != r || !s.state.has_fingerprint[i]) continue;
    near_slot[r] = static_cast<uint32_t>(near_ordinals.size());
    near_ordinals.push_back(i);
    near_fingerprints.push_back(s.state.fingerprints[i]);
  }
  std::vector<verified_pair> accepted;
  std::vector<uint32_t> near_rep(near_ordinals.size());
  std::iota(near_rep.begin(), near_rep.end(), 0u);
  if (s.state.options.near_layer && near_ordinals.size() > 1) {
    phase("all pairs");
    cluster_builder clusters(near_ordinals.size(), detection.clustering);
    all_pairs_options ap;
    ap.k = detection.k;
    ap.layout.k = detection.k;
    // Verification buffers candidates and checks them a batch at a time (see kVerifyBatch).
    std::vector<index_pair> buffered, verified;
    std::vector<std::pair<uint32_t, uint32_t>> ordinals;
    std::vector<double> similarity;
    status verify_error;
    const auto verify_buffered = [&]() -> status {
      ordinals.clear();
      for (const index_pair& p : buffered) {
        ordinals.emplace_back(near_ordinals[p.a], near_ordinals[p.b]);
      }
      if (auto st = s.jaccards(ordinals, detection.verify->threshold, similarity); !st) return st;
      verified.clear();
      for (std::size_t i = 0; i < buffered.size(); ++i) {
        if (similarity[i] >= detection.verify->threshold) {
          verified.push_back(buffered[i]);
          const auto [a, b] = std::minmax(ordinals[i].first, ordinals[i].second);
          accepted.push_back({a, b, static_cast<float>(similarity[i])});
        } else {
          ++s.state.rejected_pairs;
        }
      }
      clusters.add(verified);
      buffered.clear();
      return {};
    };
    if (s.state.shingles) {
      if (auto st = s.state.shingles->flush(); !st) return std::move(st).error();
    }
    auto run = all_pairs(near_fingerprints, ap, [&](std::span<const index_pair> pairs) {
      s.state.candidate_pairs += pairs.size();
      if (!s.state.shingles) {
        clusters.add(pairs);
        return true;
      }
      buffered.insert(buffered.end(), pairs.begin(), pairs.end());
      if (buffered.size() >= kVerifyBatch) verify_error = verify_buffered();
      return static_cast<bool>(verify_error);
    });
    if (!run) return std::move(run).error();
    if (verify_error && s.state.shingles) verify_error = verify_buffered();
    if (verify_error && s.state.shingles && detection.minhash.bands > 0) {
      // The second generator: pairs that share a MinHash band but that SimHash did not find
      // (fingerprints more than k apart), verified the same way.
      phase("minhash pairs");
      const std::size_t bands = detection.minhash.bands;
      std::vector<uint64_t> slot_keys(near_ordinals.size() * bands);
      for (std::size_t slot = 0; slot < near_ordinals.size(); ++slot) {
        std::copy_n(s.band_keys.begin() + static_cast<std::ptrdiff_t>(near_ordinals[slot] * bands),
                    bands, slot_keys.begin() + static_cast<std::ptrdiff_t>(slot * bands));
      }
      std::vector<uint64_t>().swap(s.band_keys);
      std::vector<index_pair> extra;
      minhash_pairs(
          slot_keys, near_ordinals.size(), detection.minhash,
          [&](uint32_t a, uint32_t b) {
            return hamming_distance(near_fingerprints[a], near_fingerprints[b]) <= detection.k;
          },
          extra);
      s.state.candidate_pairs += extra.size();
      s.minhash_candidates = extra.size();
      for (std::size_t first = 0; first < extra.size() && verify_error; first += kVerifyBatch) {
        const std::size_t last = std::min(extra.size(), first + kVerifyBatch);
        buffered.assign(extra.begin() + static_cast<std::ptrdiff_t>(first),
                        extra.begin() + static_cast<std::ptrdiff_t>(last));
        verify_error = verify_buffered();
      }
    }
    if (!verify_error) return std::move(verify_error).error();
    phase("clusters");
    near_rep = clusters.finish();
    std::sort(accepted.begin(), accepted.end(), pair_before);
    if (detection.clustering == cluster_linking::anchored) {
      phase("anchoring clusters");
      if (auto st = s.anchor(near_ordinals, near_slot, rank, accepted, near_rep); !st) {
        return std::move(st).error();
      }
    }
  }

  std::vector<dedup_decision> decisions(n);
  std::vector<std::pair<uint32_t, uint32_t>> to_measure;  // (representative, near duplicate)
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t lead_rank = leader[rank[i]];
    const uint32_t lead = order[lead_rank];
    const uint32_t slot = near_slot[lead_rank];
    const uint32_t rep = slot == UINT32_MAX ? lead : near_ordinals[near_rep[slot]];
    dedup_decision& d = decisions[i];
    d.representative = rep;
    if (rep == i) continue;
    d.layer = lead != i ? s.layers[i] : dedup_layer::near;
    d.distance = s.state.distance(i, rep);
    if (s.state.shingles && d.layer == dedup_layer::near) {
      const auto [a, b] = std::minmax(rep, i);
      const verified_pair key{a, b, 0.0f};
      const auto it = std::lower_bound(accepted.begin(), accepted.end(), key, pair_before);
      if (it != accepted.end() && it->a == a && it->b == b) {
        d.jaccard = it->jaccard;
      } else {
        to_measure.emplace_back(rep, i);
      }
    }
  }
  std::vector<verified_pair>().swap(accepted);
  if (!to_measure.empty()) {
    // The Jaccard with a representative it was not verified against (components chain
    // members), for the report: it may be below the threshold. Read grouped by representative.
    phase("jaccard to representatives");
    std::vector<double> similarity;
    if (auto st = s.jaccards(to_measure, 0.0, similarity); !st) return std::move(st).error();
    for (std::size_t j = 0; j < to_measure.size(); ++j) {
      decisions[to_measure[j].second].jaccard = static_cast<float>(similarity[j]);
    }
  }
  return decisions;
}

uint32_t batch_deduplicator::size() const noexcept {
  return impl_->state.count;
}
uint64_t batch_deduplicator::candidate_pairs() const noexcept {
  return impl_->state.candidate_pairs;
}
uint64_t batch_deduplicator::rejected_pairs() const noexcept {
  return impl_->state.rejected_pairs;
}
uint64_t batch_deduplicator::minhash_candidate_pairs() const noexcept {
  return impl_->minhash_candidates;
}

uint64_t batch_deduplicator::spilled_bytes() const noexcept {
  return impl_->state.spilled_bytes();
}

std::size_t batch_deduplicator::memory_bytes() const noexcept {
  const impl& s = *impl_;
  return s.state.memory_bytes() + s.links.capacity() * sizeof(index_pair) + s.layers.capacity() +
         s.lengths.capacity() * 4 + s.times.capacity() * 8 + s.fields.capacity() * 8 +
         s.twin.capacity() * 4 + s.band_keys.capacity() * 8;
}

batch_deduplicator::batch_deduplicator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
batch_deduplicator::batch_deduplicator(batch_deduplicator&&) noexcept = default;
batch_deduplicator& batch_deduplicator::operator=(batch_deduplicator&&) noexcept = default;
batch_deduplicator::~batch_deduplicator() = default;

}  // namespace simdup
