// explain_pair: one pair through dedup's signer and rules, for `simdup explain`.
#include <simdup/dedup.hpp>
#include <simdup/simhash.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace simdup {
namespace {

bool bands_agree(const doc_signature& a, const doc_signature& b) {
  if (a.band_keys.empty() || a.band_keys.size() != b.band_keys.size()) return false;
  for (std::size_t i = 0; i < a.band_keys.size(); ++i) {
    if (a.band_keys[i] != 0 && a.band_keys[i] == b.band_keys[i]) return true;
  }
  return false;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

}  // namespace

result<pair_explanation> explain_pair(const dedup_options& options, const document& a,
                                      const document& b) {
  auto signer = document_signer::create(options);
  if (!signer) return std::move(signer).error();
  pair_explanation e;
  signer->sign(a, e.a);
  signer->sign(b, e.b);
  const detection_profile& p = options.detection;
  const bool both = e.a.has_fingerprint && e.b.has_fingerprint;
  if (both) e.distance = hamming_distance(e.a.fingerprint, e.b.fingerprint);
  if (both && p.verify && options.near_layer) {
    e.jaccard = sketch_jaccard(e.a.shingles, e.b.shingles, p.verify->max_hashes);
  }
  const auto same = [](uint64_t x, uint64_t y) { return x != 0 && x == y; };
  if (same(e.a.url_key, e.b.url_key)) {
    e.layer = dedup_layer::url;
    e.reason = "same normalised URL";
  } else if (same(e.a.title_key, e.b.title_key)) {
    e.layer = dedup_layer::title;
    e.reason = "same normalised title";
  } else if (same(e.a.content_key, e.b.content_key)) {
    e.layer = dedup_layer::exact;
    e.reason = "same normalised text";
  }
  if (e.layer != dedup_layer::none) {
    e.duplicate = true;
    return e;
  }
  if (!options.near_layer) {
    e.reason = "no exact key in common and the near layer is off";
    return e;
  }
  if (!both) {
    e.reason = "a document with fewer than " + std::to_string(p.fingerprint.min_features) +
               " distinct features is short: exact layers only";
    return e;
  }
  e.minhash_candidate = options.mode == dedup_mode::batch && bands_agree(e.a, e.b);
  const bool within_k = e.distance <= p.k;
  if (!within_k && !e.minhash_candidate) {
    e.reason = "distance " + std::to_string(e.distance) + " > k " + std::to_string(p.k) +
               (p.minhash.bands > 0 && options.mode == dedup_mode::batch
                    ? " and no MinHash band agrees: not a candidate"
                    : ": not a candidate");
    return e;
  }
  const std::string candidate =
      within_k ? "distance " + std::to_string(e.distance) + " <= k " + std::to_string(p.k)
               : "a MinHash band agrees (distance " + std::to_string(e.distance) + " > k " +
                     std::to_string(p.k) + ")";
  if (p.verify && e.jaccard < p.verify->threshold) {
    e.reason = candidate + ", but Jaccard " + number(e.jaccard) + " < verify threshold " +
               number(p.verify->threshold);
    return e;
  }
  const bool anchored =
      options.mode == dedup_mode::batch && p.verify && p.clustering == cluster_linking::anchored;
  if (anchored && e.jaccard < p.anchor_floor) {
    e.reason = candidate + " and verified, but Jaccard " + number(e.jaccard) + " < anchor floor " +
               number(p.anchor_floor);
    return e;
  }
  e.layer = dedup_layer::near;
  e.duplicate = true;
  e.reason = candidate + (p.verify ? " and Jaccard " + number(e.jaccard) + " >= verify threshold " +
                                         number(p.verify->threshold)
                                   : " (no verification)");
  return e;
}

}  // namespace simdup
