#include "service/text_fingerprints.hpp"

namespace simdup::detail {

result<fingerprint_options> fingerprint_settings(const collection_config& config) {
  fingerprint_options o;
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

result<std::optional<uint64_t>> text_fingerprints::fingerprint(const collection_config& config,
                                                               std::string_view text) {
  const std::string key = config.compat + "/" + std::to_string(config.shingle_width) + "/" +
                          config.features + "/" + std::to_string(config.top_k);
  std::shared_ptr<const fingerprinter> fp;
  {
    std::lock_guard lock(mu_);
    if (auto it = by_settings_.find(key); it != by_settings_.end()) fp = it->second;
  }
  if (!fp) {
    auto options = fingerprint_settings(config);
    if (!options) return std::move(options).error();
    auto created = fingerprinter::create(*options);
    if (!created) {
      return make_error(
          created.error().code,
          "collection \"" + config.name + "\" fingerprint settings: " + created.error().message);
    }
    std::lock_guard lock(mu_);
    auto [it, fresh] =
        by_settings_.emplace(key, std::make_shared<const fingerprinter>(std::move(*created)));
    fp = it->second;
  }
  const fingerprint_result r = fp->fingerprint(text);
  if (r.status != fingerprint_status::ok) return std::optional<uint64_t>();
  return std::optional<uint64_t>(r.fingerprint);
}

}  // namespace simdup::detail
