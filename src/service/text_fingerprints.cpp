#include "service/text_fingerprints.hpp"

#include <simdup/detection.hpp>
#include <simdup/document.hpp>

namespace simdup::detail {

result<fingerprint_options> fingerprint_settings(const collection_config& config) {
  // dedup's profile (min_features among it): a text too short for `simdup dedup` to give it a
  // fingerprint is too short for the service too, and is never a near-duplicate candidate.
  fingerprint_options o = detection_profile::default_fingerprint();
  if (config.compat == "python-simhash") {
    o.compat = compat_mode::python_simhash;
  } else if (config.compat == "jieba-tfidf") {
    o.compat = compat_mode::jieba_tfidf;
  } else if (config.compat == "none") {
    o.compat = compat_mode::none;
    o.features.shingle_width = static_cast<std::size_t>(config.shingle_width);
    if (config.features == "jieba") {
      o.features.kind = feature_kind::jieba;
    } else if (config.features == "keywords") {
      o.features.kind = feature_kind::keywords;
    } else if (config.features != "shingles") {
      return make_error(errc::invalid_argument, "unknown features \"" + config.features + "\"");
    }
  } else {
    return make_error(errc::invalid_argument, "unknown compat \"" + config.compat + "\"");
  }
  o.weighting.top_k = static_cast<std::size_t>(config.top_k);
  return o;
}

result<bool> text_fingerprints::sign(const collection_config& config, std::string& text,
                                     doc_input& out) {
  const bool verify = config.verify > 0;
  const std::string key =
      config.compat + "/" + std::to_string(config.shingle_width) + "/" + config.features + "/" +
      std::to_string(config.top_k) +
      (verify ? "/verify/" + std::to_string(config.sketch) + "/" + minhash_setting(config.minhash)
              : "");
  std::shared_ptr<const document_signer> signer;
  {
    std::lock_guard lock(mu_);
    if (auto it = by_settings_.find(key); it != by_settings_.end()) signer = it->second;
  }
  if (!signer) {
    auto options = fingerprint_settings(config);
    if (!options) return std::move(options).error();
    // Only the near layer's work: the fingerprint, and the shingles when verifying.
    dedup_options dedup;
    dedup.url_layer = false;
    dedup.content_layer = false;
    dedup.detection = detection_for(config);
    dedup.detection.fingerprint = *options;
    auto created = document_signer::create(dedup);
    if (!created) {
      return make_error(
          created.error().code,
          "collection \"" + config.name + "\" fingerprint settings: " + created.error().message);
    }
    std::lock_guard lock(mu_);
    auto [it, fresh] =
        by_settings_.emplace(key, std::make_shared<const document_signer>(std::move(*created)));
    signer = it->second;
  }
  thread_local document doc;
  thread_local doc_signature sig;
  doc.text = std::move(text);
  signer->sign(doc, sig);
  text = std::move(doc.text);
  if (!sig.has_fingerprint) return false;
  out.fingerprint = sig.fingerprint;
  out.sketch.assign(sig.shingles.begin(), sig.shingles.end());
  out.band_keys.assign(sig.band_keys.begin(), sig.band_keys.end());
  return true;
}

}  // namespace simdup::detail
