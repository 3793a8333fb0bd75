// The detection profile's checks, and the dedup options' layer list.
#include <simdup/dedup.hpp>
#include <simdup/detection.hpp>

#include <string>
#include <string_view>

namespace simdup {

status detection_profile::validate() const {
  if (status s = validate_k(k); !s) return s;
  if (fingerprint.min_features == 0) {
    return invalid_parameter(
        {.name = "min_features", .value = "0", .allowed = "1..", .reason = "must be at least 1"});
  }
  if (verify) {
    if (!(verify->threshold > 0.0 && verify->threshold <= 1.0)) {
      const std::string value = std::to_string(verify->threshold);
      return invalid_parameter({.name = "verify.threshold",
                                .value = value,
                                .allowed = "(0, 1]",
                                .reason = "must be in (0, 1], got " + value},
                               "verify threshold");
    }
    if (verify->shingle_width == 0) {
      return invalid_parameter({.name = "verify.shingle_width",
                                .value = "0",
                                .allowed = "1..",
                                .reason = "must be at least 1"},
                               "verify shingle_width");
    }
  }
  const std::string bands = std::to_string(minhash.bands) + "x" + std::to_string(minhash.rows);
  if (minhash.bands > 64 || (minhash.bands > 0 && (minhash.rows < 1 || minhash.rows > 16))) {
    return invalid_parameter({.name = "minhash",
                              .value = bands,
                              .allowed = "at most 64 bands of 1..16 rows",
                              .reason = "must have at most 64 bands of 1..16 rows, got " + bands});
  }
  if (minhash.bands > 0 && !verify) {
    return invalid_parameter(
        {.name = "minhash", .value = bands, .reason = "candidates need", .needs = "verify"});
  }
  if (clustering == cluster_linking::anchored && !verify) {
    return invalid_parameter(
        {.name = "clustering", .value = "anchored", .reason = "needs", .needs = "verify"},
        "anchored clustering");
  }
  if (!(anchor_floor >= 0.0 && anchor_floor <= 1.0)) {
    const std::string value = std::to_string(anchor_floor);
    return invalid_parameter({.name = "anchor_floor",
                              .value = value,
                              .allowed = "[0, 1]",
                              .reason = "must be in [0, 1], got " + value});
  }
  return {};
}

detection_profile detection_profile::effective(bool batch) const {
  detection_profile p = *this;
  if (!batch || !p.verify) p.minhash = minhash_options{};
  if (!p.verify && p.clustering == cluster_linking::anchored) p.clustering = cluster_linking::star;
  return p;
}

status parse_layers(std::string_view list, dedup_options& options) {
  options.url_layer = options.title_layer = options.content_layer = options.near_layer = false;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view layer = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (layer == "url") {
      options.url_layer = true;
    } else if (layer == "title") {
      options.title_layer = true;
    } else if (layer == "exact") {
      options.content_layer = true;
    } else if (layer == "near") {
      options.near_layer = true;
    } else {
      return invalid_parameter(
          {.name = "layers",
           .value = std::string(layer),
           .allowed = "url, title, exact, near",
           .reason = ": unknown layer '" + std::string(layer) + "' (url, title, exact, near)"});
    }
  }
  return {};
}

}  // namespace simdup
