// Batch mode. add() applies the exact layers as documents arrive (links to the first holder of
// each key). finish() orders documents by the keep policy, so that "best" is "smallest rank":
// exact groups are joined (their best member stands for the group), the near layer runs
// all-pairs over those group leaders only (an exact group of 10,000 copies must not become
// 50M distance-0 pairs; batch_near.cpp), pairs are verified and clustered, and members follow
// their leader.
#include <simdup/clusters.hpp>
#include <simdup/dedup.hpp>

#include "dedup/against.hpp"
#include "dedup/batch_near.hpp"
#include "dedup/candidate_filter.hpp"
#include "dedup/engine_state.hpp"
#include "dedup/record_column.hpp"

#include <simdup/dedup_index.hpp>

#include <algorithm>
#include <bit>
#include <numeric>

namespace simdup {

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
  detail::record_column band_keys;
  // With exact verification, the candidate filter's sketch of each document's shingles
  // (detail::pair_sketch_bytes by ordinal; zeros where a twin's stand for them).
  detail::record_column sketches{detail::pair_sketch_bytes, "the candidate sketches"};
  std::vector<uint8_t> sketch_scratch;
  bool columns_spilled = false;
  // Of options.memory_limit, the bytes the caller holds beside the engine (set_memory_limit).
  uint64_t held_elsewhere = 0;
  uint64_t minhash_candidates = 0;
  uint64_t against_candidates = 0, against_rejected = 0;

  void link(uint32_t doc, std::optional<uint32_t> holder, dedup_layer layer) {
    if (!holder) return;
    links.push_back(index_pair{*holder, doc, static_cast<int>(layer)});
    if (layers[doc] == dedup_layer::none) layers[doc] = layer;
    if (layers[*holder] == dedup_layer::none) layers[*holder] = layer;
  }

  std::vector<dedup_decision> against_only_decisions(std::vector<detail::against_match>& matched);
  // add() and add_replayed(): with `replayed`, the document's shingles (that many) are already
  // in the reopened shingle file, and `sketch` is its candidate sketch.
  status add_signature(doc_signature&& sig, const std::size_t* replayed,
                       std::span<const uint8_t> sketch);
  // Under options.memory_limit: past half of it, the columns go to files.
  status fit_columns();
  std::size_t memory_bytes() const noexcept;

  keep_rank rank_of(uint32_t i) const {
    keep_rank r{i, 0, 0, 0};
    if (!lengths.empty()) r.length = lengths[i];
    if (!times.empty()) r.time = times[i];
    if (!fields.empty()) r.field = fields[i];
    return r;
  }
};

namespace {

// The decision on document i of an exact group dropped for `group` (its best match in an
// earlier run's index); `own` is i's own match, `layer` its exact layer within the run.
dedup_decision against_decision(const detail::engine_state& state,
                                const detail::against_match& group,
                                const detail::against_match& own, dedup_layer layer, uint32_t i) {
  dedup_decision d;
  d.against = group.index;
  d.representative = group.document;
  const bool direct = own.found() && own.index == group.index && own.document == group.document;
  d.layer = direct || layer == dedup_layer::none ? group.layer : layer;
  const dedup_index& index = *state.options.against[group.index - 1];
  if (state.has_fingerprint[i] && index.has_fingerprint(group.document)) {
    d.distance = static_cast<int8_t>(
        std::popcount(state.fingerprints[i] ^ index.fingerprints()[group.document]));
  }
  if (direct) d.jaccard = group.jaccard;
  return d;
}

}  // namespace

// Decontamination: a document is dropped only for its own match. Matches found for the first
// holder of an exact key pass to the documents linked to it by that key, and near matches to
// the documents of the same text (whose shingles were not compared again).
std::vector<dedup_decision> batch_deduplicator::impl::against_only_decisions(
    std::vector<detail::against_match>& matched) {
  const auto take = [&](uint32_t to, const detail::against_match& m) {
    if (m.found() && (!matched[to].found() || m.better_than(matched[to]))) matched[to] = m;
  };
  for (const index_pair& link : links) {
    const detail::against_match& m = matched[link.a];
    if (m.found() && static_cast<int>(m.layer) == link.distance) take(link.b, m);
  }
  for (uint32_t i = 0; i < twin.size(); ++i) {
    if (twin[i] != i && matched[twin[i]].layer == dedup_layer::near) take(i, matched[twin[i]]);
  }
  std::vector<dedup_decision> decisions(state.count);
  for (uint32_t i = 0; i < state.count; ++i) {
    decisions[i].representative = i;
    if (matched[i].found()) {
      decisions[i] = against_decision(state, matched[i], matched[i], dedup_layer::none, i);
    }
  }
  return decisions;
}

status batch_deduplicator::impl::fit_columns() {
  const uint64_t limit = state.options.memory_limit;
  const uint64_t share = limit > held_elsewhere ? limit - held_elsewhere : 1;
  if (limit == 0 || columns_spilled || memory_bytes() <= share / 2) return {};
  columns_spilled = true;
  const std::string dir =
      state.options.detection.verify ? state.options.detection.verify->tmp_dir : std::string();
  if (band_keys.size() > 0) {
    if (auto st = band_keys.spill(dir); !st) return st;
  }
  return sketches.size() > 0 ? sketches.spill(dir) : status{};
}

std::size_t batch_deduplicator::impl::memory_bytes() const noexcept {
  return state.memory_bytes() + links.capacity() * sizeof(index_pair) + layers.capacity() +
         lengths.capacity() * 4 + times.capacity() * 8 + fields.capacity() * 8 +
         twin.capacity() * 4 + band_keys.memory_bytes() + sketches.memory_bytes();
}

result<batch_deduplicator> batch_deduplicator::create(const dedup_options& options) {
  auto state = detail::engine_state::create(options);
  if (!state) return std::move(state).error();
  const std::size_t bands = options.detection.minhash.bands;
  return batch_deduplicator(std::unique_ptr<impl>(
      new impl{.state = std::move(state).value(),
               .band_keys = detail::record_column(bands * sizeof(uint64_t), "the MinHash keys")}));
}

status batch_deduplicator::add(doc_signature&& sig) {
  return impl_->add_signature(std::move(sig), nullptr, {});
}

status batch_deduplicator::add_replayed(doc_signature&& sig, std::size_t shingle_count,
                                        std::span<const uint8_t> sketch) {
  return impl_->add_signature(std::move(sig), &shingle_count, sketch);
}

status batch_deduplicator::candidate_sketches(uint32_t first, uint32_t count,
                                              std::vector<uint8_t>& out) const {
  out.clear();
  const impl& s = *impl_;
  if (s.sketches.size() == 0 || count == 0) return {};
  if (first + count > s.sketches.size()) {
    return make_error(errc::internal, "candidate_sketches beyond the documents added");
  }
  std::vector<uint32_t> ordinals(count);
  std::iota(ordinals.begin(), ordinals.end(), first);
  return s.sketches.gather(ordinals, out);
}

status batch_deduplicator::keep_shingles_in(const std::string& path, bool reopen) {
  impl& s = *impl_;
  if (!s.state.shingles) return {};
  if (s.state.count != 0) {
    return make_error(errc::internal, "keep_shingles_in after the first document");
  }
  auto store = reopen ? shingle_store::reopen_file(path) : shingle_store::create_file(path);
  if (!store) return std::move(store).error();
  s.state.shingles.emplace(std::move(store).value());
  return {};
}

status batch_deduplicator::end_replay() {
  return impl_->state.shingles ? impl_->state.shingles->end_adopting() : status{};
}

status batch_deduplicator::flush_shingles() {
  return impl_->state.shingles ? impl_->state.shingles->flush() : status{};
}

status batch_deduplicator::impl::add_signature(doc_signature&& sig, const std::size_t* replayed,
                                               std::span<const uint8_t> sketch) {
  impl& s = *this;
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
    if (sig.band_keys.size() != bands || same_text) sig.band_keys.assign(bands, 0);
    const auto* bytes = reinterpret_cast<const uint8_t*>(sig.band_keys.data());
    if (auto st = s.band_keys.append(std::span(bytes, bands * sizeof(uint64_t))); !st) return st;
  }
  if (s.state.shingles) {
    s.twin.push_back(same_text.value_or(i));
    const bool stored = !same_text && sig.has_fingerprint;
    if (stored && replayed) {
      if (auto st = s.state.shingles->adopt(i, *replayed); !st) return st;
    } else if (stored) {
      if (auto st = s.state.shingles->put(i, sig.shingles); !st) return st;
    }
    if (s.state.options.detection.verify->max_hashes == 0 && replayed) {
      if (sketch.size() != detail::pair_sketch_bytes) {
        return make_error(errc::corrupt_data, "a replayed document without its candidate sketch");
      }
      if (auto st = s.sketches.append(sketch); !st) return st;
    } else if (s.state.options.detection.verify->max_hashes == 0) {
      s.sketch_scratch.clear();
      detail::append_pair_sketch(
          stored ? std::span<const uint32_t>(sig.shingles) : std::span<const uint32_t>(),
          s.sketch_scratch);
      if (auto st = s.sketches.append(s.sketch_scratch); !st) return st;
    }
  }
  return s.fit_columns();
}

result<std::vector<dedup_decision>> batch_deduplicator::finish(
    const std::function<void(std::string_view)>& progress) {
  impl& s = *impl_;
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

  // Against earlier runs: each document's best match in their indexes.
  std::vector<detail::against_match> matched, group_match;
  if (!s.state.options.against.empty()) {
    detail::against_counts counts;
    auto found = detail::match_against(s.state, s.twin, s.band_keys, counts, phase);
    if (!found) return std::move(found).error();
    matched = std::move(found).value();
    s.state.candidate_pairs += counts.candidates;
    s.state.rejected_pairs += counts.rejected;
    s.against_candidates = counts.candidates;
    s.against_rejected = counts.rejected;
    if (s.state.options.against_only) return s.against_only_decisions(matched);
  }
  // The exact tables were for add() and the indexes' keys; the near layer needs the memory.
  s.state.release_exact_tables();

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

  // An exact group with a member that matches an index document is dropped for the best such
  // match (held at its leader's rank), and leaves the near layer.
  if (!matched.empty()) {
    group_match.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      detail::against_match& g = group_match[leader[rank[i]]];
      if (matched[i].found() && (!g.found() || matched[i].better_than(g))) g = matched[i];
    }
  }
  const auto dropped_against = [&](uint32_t lead_rank) {
    return !group_match.empty() && group_match[lead_rank].found();
  };

  // Near layer over group leaders with a fingerprint, in rank order.
  detail::near_slots slots;
  slots.of_rank.assign(n, UINT32_MAX);
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t i = order[r];
    if (leader[r] != r || !s.state.has_fingerprint[i] || dropped_against(r)) continue;
    slots.of_rank[r] = static_cast<uint32_t>(slots.ordinals.size());
    slots.ordinals.push_back(i);
    slots.fingerprints.push_back(s.state.fingerprints[i]);
  }
  slots.documents.assign(slots.ordinals.size(), 0);
  for (uint32_t r = 0; r < n; ++r) {
    if (const uint32_t slot = slots.of_rank[leader[r]]; slot != UINT32_MAX) ++slots.documents[slot];
  }
  detail::near_links near;
  near.representatives.resize(slots.ordinals.size());
  std::iota(near.representatives.begin(), near.representatives.end(), 0u);
  if (s.state.options.near_layer && slots.ordinals.size() > 1) {
    // The pair search gets what the state and this function's arrays leave of the limit.
    const uint64_t taken = s.held_elsewhere + s.memory_bytes() +
                           (order.capacity() + rank.capacity() + n) * 4 +
                           slots.ordinals.size() * 20 + uint64_t{n} * 4;
    auto linked = detail::link_near_duplicates(s.state, s.twin, s.band_keys, s.sketches, slots,
                                               rank, taken, phase);
    if (!linked) return std::move(linked).error();
    s.sketches.release();
    near = std::move(linked).value();
    s.minhash_candidates = near.minhash_candidates;
  }

  std::vector<dedup_decision> decisions(n);
  std::vector<std::pair<uint32_t, uint32_t>> to_measure;  // (representative, near duplicate)
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t lead_rank = leader[rank[i]];
    if (dropped_against(lead_rank)) {
      decisions[i] = against_decision(s.state, group_match[lead_rank], matched[i], s.layers[i], i);
      continue;
    }
    const uint32_t lead = order[lead_rank];
    const uint32_t slot = slots.of_rank[lead_rank];
    const uint32_t rep = slot == UINT32_MAX ? lead : slots.ordinals[near.representatives[slot]];
    dedup_decision& d = decisions[i];
    d.representative = rep;
    if (rep == i) continue;
    d.layer = lead != i ? s.layers[i] : dedup_layer::near;
    d.distance = s.state.distance(i, rep);
    if (s.state.shingles && d.layer == dedup_layer::near) {
      if (const auto jaccard = detail::verified_jaccard(near.accepted, rep, i)) {
        d.jaccard = *jaccard;
      } else {
        to_measure.emplace_back(rep, i);
      }
    }
  }
  std::vector<detail::verified_pair>().swap(near.accepted);
  if (!to_measure.empty()) {
    // The Jaccard with a representative it was not verified against (components chain
    // members), for the report: it may be below the threshold. Read grouped by representative.
    phase("jaccard to representatives");
    std::vector<double> similarity;
    if (auto st = detail::ordinal_jaccards(s.state, s.twin, to_measure, 0.0, similarity); !st) {
      return std::move(st).error();
    }
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
  return impl_->state.rejected_pairs + impl_->state.prefiltered_pairs;
}
uint64_t batch_deduplicator::prefiltered_pairs() const noexcept {
  return impl_->state.prefiltered_pairs;
}
uint64_t batch_deduplicator::minhash_candidate_pairs() const noexcept {
  return impl_->minhash_candidates;
}

uint64_t batch_deduplicator::against_candidate_pairs() const noexcept {
  return impl_->against_candidates;
}
uint64_t batch_deduplicator::against_rejected_pairs() const noexcept {
  return impl_->against_rejected;
}

status batch_deduplicator::shingles(uint32_t ordinal, std::vector<uint32_t>& out) const {
  out.clear();
  const impl& s = *impl_;
  if (!s.state.shingles || ordinal >= s.twin.size()) return {};
  const uint32_t stored = s.twin[ordinal];
  return stored < s.state.shingles->size() ? s.state.shingles->get(stored, out) : status{};
}

uint64_t batch_deduplicator::spilled_bytes() const noexcept {
  return impl_->state.spilled_bytes();
}

uint64_t batch_deduplicator::column_spilled_bytes() const noexcept {
  return impl_->band_keys.spilled_bytes() + impl_->sketches.spilled_bytes();
}

void batch_deduplicator::set_memory_limit(uint64_t limit, uint64_t held_elsewhere) noexcept {
  impl_->state.options.memory_limit = limit;
  impl_->held_elsewhere = held_elsewhere;
}

std::size_t batch_deduplicator::memory_bytes() const noexcept {
  return impl_->memory_bytes();
}

batch_deduplicator::batch_deduplicator(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
batch_deduplicator::batch_deduplicator(batch_deduplicator&&) noexcept = default;
batch_deduplicator& batch_deduplicator::operator=(batch_deduplicator&&) noexcept = default;
batch_deduplicator::~batch_deduplicator() = default;

}  // namespace simdup
