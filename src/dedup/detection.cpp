// The detection profile's checks, and the dedup options' layer list.
#include <simdup/dedup.hpp>
#include <simdup/detection.hpp>

#include <string>
#include <string_view>

namespace simdup {

status detection_profile::validate() const {
  if (status s = validate_k(k); !s) return s;
  if (fingerprint.min_features == 0) {
    return make_error(errc::invalid_argument, "min_features must be at least 1");
  }
  if (verify) {
    if (!(verify->threshold > 0.0 && verify->threshold <= 1.0)) {
      return make_error(errc::invalid_argument, "verify threshold must be in (0, 1], got " +
                                                    std::to_string(verify->threshold));
    }
    if (verify->shingle_width == 0) {
      return make_error(errc::invalid_argument, "verify shingle_width must be at least 1");
    }
  }
  if (minhash.bands > 64 || (minhash.bands > 0 && (minhash.rows < 1 || minhash.rows > 16))) {
    return make_error(errc::invalid_argument,
                      "minhash must have at most 64 bands of 1..16 rows, got " +
                          std::to_string(minhash.bands) + "x" + std::to_string(minhash.rows));
  }
  if (minhash.bands > 0 && !verify) {
    return make_error(errc::invalid_argument, "minhash candidates need verify");
  }
  if (clustering == cluster_linking::anchored && !verify) {
    return make_error(errc::invalid_argument, "anchored clustering needs verify");
  }
  if (!(anchor_floor >= 0.0 && anchor_floor <= 1.0)) {
    return make_error(errc::invalid_argument,
                      "anchor_floor must be in [0, 1], got " + std::to_string(anchor_floor));
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
      return make_error(errc::invalid_argument, "layers: unknown layer '" + std::string(layer) +
                                                    "' (url, title, exact, near)");
    }
  }
  return {};
}

}  // namespace simdup
