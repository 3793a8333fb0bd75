// Batch mode. add() applies the exact layers as documents arrive (links to the first holder of
// each key). finish() orders documents by the keep policy, so that "best" is "smallest rank":
// exact groups are joined (their best member stands for the group), the near layer runs
// all-pairs over those group leaders only (an exact group of 10,000 copies must not become
// 50M distance-0 pairs), pairs are verified and clustered, and members follow their leader.
#include <simdup/all_pairs.hpp>
#include <simdup/clusters.hpp>
#include <simdup/dedup.hpp>
#include <simdup/exact_layer.hpp>

#include <algorithm>
#include <numeric>

namespace simdup {

struct batch_deduplicator::impl {
  dedup_options options;
  exact_table urls, titles, contents;
  std::vector<uint64_t> fingerprints;
  std::vector<bool> has_fingerprint;
  // Exact-layer links (document, earlier holder of a shared key) and each end's first layer.
  std::vector<index_pair> links;
  std::vector<dedup_layer> layers;
  // Keep-policy data, filled only for the policy in use.
  std::vector<uint32_t> lengths;
  std::vector<int64_t> times;
  std::vector<double> fields;
  // Verification: shingles of documents with new content; twin[i] is the earlier document with
  // the same normalised text (whose shingles stand for i), or i itself.
  shingle_store shingles;
  std::vector<uint32_t> twin;
  uint32_t count = 0;
  uint64_t candidates = 0;
  uint64_t rejected = 0;

  void link(uint32_t doc, std::optional<uint32_t> holder, dedup_layer layer) {
    if (!holder) return;
    links.push_back(index_pair{*holder, doc, 0});
    if (layers[doc] == dedup_layer::none) layers[doc] = layer;
    if (layers[*holder] == dedup_layer::none) layers[*holder] = layer;
  }

  double jaccard(uint32_t a, uint32_t b) const { return shingles.jaccard(twin[a], twin[b]); }

  keep_rank rank_of(uint32_t i) const {
    keep_rank r{i, 0, 0, 0};
    if (!lengths.empty()) r.length = lengths[i];
    if (!times.empty()) r.time = times[i];
    if (!fields.empty()) r.field = fields[i];
    return r;
  }
};

result<batch_deduplicator> batch_deduplicator::create(const dedup_options& options) {
  if (options.k < 0 || options.k > max_index_k) {
    return make_error(errc::invalid_argument, "--k must be in 0.." + std::to_string(max_index_k) +
                                                  ", got " + std::to_string(options.k));
  }
  auto p = std::make_unique<impl>();
  p->options = options;
  p->shingles = shingle_store(options.verify ? options.verify->max_hashes : 0);
  return batch_deduplicator(std::move(p));
}

status batch_deduplicator::add(doc_signature&& sig) {
  impl& s = *impl_;
  if (s.count == UINT32_MAX) {
    return make_error(errc::too_large, "more than 4294967294 documents in one dedup run");
  }
  const uint32_t i = s.count++;
  s.fingerprints.push_back(sig.fingerprint);
  s.has_fingerprint.push_back(sig.has_fingerprint);
  s.layers.push_back(dedup_layer::none);
  switch (s.options.keep.rule) {
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
  s.link(i, s.urls.find_or_insert(sig.url_key, i), dedup_layer::url);
  s.link(i, s.titles.find_or_insert(sig.title_key, i), dedup_layer::title);
  const auto same_text = s.contents.find_or_insert(sig.content_key, i);
  s.link(i, same_text, dedup_layer::exact);
  if (s.options.verify) {
    s.twin.push_back(same_text.value_or(i));
    if (!same_text && sig.has_fingerprint) s.shingles.put(i, sig.shingles);
  }
  return {};
}

result<std::vector<dedup_decision>> batch_deduplicator::finish(
    const std::function<void(std::string_view)>& progress) {
  impl& s = *impl_;
  const auto phase = [&](std::string_view name) {
    if (progress) progress(name);
  };
  const uint32_t n = s.count;

  // order[r] = ordinal of rank r (best first); rank[i] = rank of ordinal i.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (s.options.keep.rule != keep_rule::first) {
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return keep_before(s.options.keep.rule, s.rank_of(a), s.rank_of(b));
    });
  }
  std::vector<uint32_t> rank(n);
  for (uint32_t r = 0; r < n; ++r) rank[order[r]] = r;

  // Exact groups; components pick the smallest rank, i.e. the best member, as leader.
  phase("exact groups");
  std::vector<uint32_t> leader;
  {
    cluster_builder groups(n, cluster_mode::components);
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
    if (leader[r] != r || !s.has_fingerprint[i]) continue;
    near_slot[r] = static_cast<uint32_t>(near_ordinals.size());
    near_ordinals.push_back(i);
    near_fingerprints.push_back(s.fingerprints[i]);
  }
  std::vector<uint32_t> near_rep(near_ordinals.size());
  std::iota(near_rep.begin(), near_rep.end(), 0u);
  if (s.options.near_layer && near_ordinals.size() > 1) {
    phase("all pairs");
    cluster_builder clusters(near_ordinals.size(), s.options.linking == cluster_linking::star
                                                       ? cluster_mode::star
                                                       : cluster_mode::components);
    all_pairs_options ap;
    ap.k = s.options.k;
    ap.layout.k = s.options.k;
    std::vector<index_pair> verified;
    auto run = all_pairs(near_fingerprints, ap, [&](std::span<const index_pair> pairs) {
      s.candidates += pairs.size();
      if (!s.options.verify) {
        clusters.add(pairs);
        return true;
      }
      verified.clear();
      for (const index_pair& p : pairs) {
        if (s.jaccard(near_ordinals[p.a], near_ordinals[p.b]) >= s.options.verify->threshold) {
          verified.push_back(p);
        } else {
          ++s.rejected;
        }
      }
      clusters.add(verified);
      return true;
    });
    if (!run) return std::move(run).error();
    phase("clusters");
    near_rep = clusters.finish();
  }

  std::vector<dedup_decision> decisions(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t lead_rank = leader[rank[i]];
    const uint32_t lead = order[lead_rank];
    const uint32_t slot = near_slot[lead_rank];
    const uint32_t rep = slot == UINT32_MAX ? lead : near_ordinals[near_rep[slot]];
    dedup_decision& d = decisions[i];
    d.representative = rep;
    if (rep == i) continue;
    d.layer = lead != i ? s.layers[i] : dedup_layer::near;
    if (s.has_fingerprint[i] && s.has_fingerprint[rep]) {
      d.distance = static_cast<int8_t>(hamming_distance(s.fingerprints[i], s.fingerprints[rep]));
    }
    if (s.options.verify && d.layer == dedup_layer::near) {
      d.jaccard = static_cast<float>(s.jaccard(i, rep));
    }
  }
  return decisions;
}

uint32_t batch_deduplicator::size() const noexcept {
  return impl_->count;
}
uint64_t batch_deduplicator::candidate_pairs() const noexcept {
  return impl_->candidates;
}
uint64_t batch_deduplicator::rejected_pairs() const noexcept {
  return impl_->rejected;
}

std::size_t batch_deduplicator::memory_bytes() const noexcept {
  const impl& s = *impl_;
  return s.urls.memory_bytes() + s.titles.memory_bytes() + s.contents.memory_bytes() +
         s.fingerprints.capacity() * 8 + s.has_fingerprint.capacity() / 8 +
         s.links.capacity() * sizeof(index_pair) + s.layers.capacity() + s.lengths.capacity() * 4 +
         s.times.capacity() * 8 + s.fields.capacity() * 8 + s.shingles.memory_bytes() +
         s.twin.capacity() * 4;
}

batch_deduplicator::batch_deduplicator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
batch_deduplicator::batch_deduplicator(batch_deduplicator&&) noexcept = default;
batch_deduplicator& batch_deduplicator::operator=(batch_deduplicator&&) noexcept = default;
batch_deduplicator::~batch_deduplicator() = default;

}  // namespace simdup
