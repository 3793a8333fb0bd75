// Collection settings: validation and their JSON form (stored by both backends).
#include <simdup/duration.hpp>
#include <simdup/json.hpp>
#include <simdup/plan.hpp>
#include <simdup/verify.hpp>

#include <simdjson.h>

#include <charconv>
#include <string>
#include <string_view>

#include "store/backend.hpp"

namespace simdup::detail {

namespace {
constexpr const char* kVerifyAllowed = R"("off" or "jaccard:T" with T in (0, 1])";
constexpr int kMinSketch = 16, kMaxSketch = 4096;
}  // namespace

bool valid_collection_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

detection_profile detection_for(const collection_config& config) {
  detection_profile p;
  p.k = config.k;
  p.minhash = minhash_options{};
  p.clustering = cluster_linking::star;
  if (config.verify > 0) {
    // dedup's shingle width (verify_options' default), so a text's Jaccard is dedup's.
    verify_options v;
    v.threshold = config.verify;
    v.max_hashes = static_cast<std::size_t>(config.sketch);
    p.verify = v;
    // Band keys come from the verification shingles: no verification, no bands.
    p.minhash = config.minhash;
  } else {
    p.verify.reset();
  }
  return p;
}

status validate(const collection_config& config) {
  if (!valid_collection_name(config.name)) {
    return invalid_parameter({.name = "name",
                              .value = config.name,
                              .allowed = "1 to 64 characters of [A-Za-z0-9_.-]",
                              .reason = "must be 1 to 64 characters of [A-Za-z0-9_.-]"},
                             "collection name");
  }
  if (auto k = detection_for(config).validate(); !k) return k;
  if (!(config.verify >= 0 && config.verify <= 1)) {
    return invalid_parameter({.name = "verify",
                              .value = std::to_string(config.verify),
                              .allowed = kVerifyAllowed,
                              .reason = "must be " + std::string(kVerifyAllowed)});
  }
  if (config.window_s < 0) {
    return invalid_parameter({.name = "window_s",
                              .value = std::to_string(config.window_s),
                              .allowed = "0..",
                              .reason = "must be >= 0 (0: no expiry)"});
  }
  if (config.compat != "none" && config.compat != "python-simhash" &&
      config.compat != "jieba-tfidf") {
    constexpr std::string_view allowed = R"("none", "python-simhash" or "jieba-tfidf")";
    return invalid_parameter({.name = "compat",
                              .value = config.compat,
                              .allowed = std::string(allowed),
                              .reason = "must be " + std::string(allowed)});
  }
  if (config.shingle_width < 1 || config.shingle_width > 64) {
    return invalid_parameter({.name = "shingle_width",
                              .value = std::to_string(config.shingle_width),
                              .allowed = "1..64",
                              .reason = "must be between 1 and 64"});
  }
  if (config.features != "shingles" && config.features != "jieba" &&
      config.features != "keywords") {
    constexpr std::string_view allowed = R"("shingles", "jieba" or "keywords")";
    return invalid_parameter({.name = "features",
                              .value = config.features,
                              .allowed = std::string(allowed),
                              .reason = "must be " + std::string(allowed)});
  }
  if (config.sketch < kMinSketch || config.sketch > kMaxSketch) {
    return invalid_parameter({.name = "sketch",
                              .value = std::to_string(config.sketch),
                              .allowed = "16..4096",
                              .reason = "must be between 16 and 4096 shingle hashes"});
  }
  if (config.minhash.bands > 0) {
    if (auto spec = parse_minhash_spec(minhash_setting(config.minhash)); !spec) {
      return std::move(spec).error();
    }
  }
  if (config.top_k < 0 || config.top_k > 1000) {
    return invalid_parameter({.name = "top_k",
                              .value = std::to_string(config.top_k),
                              .allowed = "0..1000",
                              .reason = "must be between 0 and 1000"});
  }
  return {};
}

std::string to_json(const collection_config& config) {
  std::string out = "{\"name\":";
  json::append_string(out, config.name);
  out += ",\"k\":" + std::to_string(config.k);
  out += ",\"window_s\":" + std::to_string(config.window_s);
  out += ",\"compat\":";
  json::append_string(out, config.compat);
  out += ",\"shingle_width\":" + std::to_string(config.shingle_width);
  out += ",\"features\":";
  json::append_string(out, config.features);
  out += ",\"top_k\":" + std::to_string(config.top_k);
  out += ",\"verify\":";
  json::append_string(out, verify_setting(config.verify));
  out += ",\"sketch\":" + std::to_string(config.sketch);
  out += ",\"minhash\":";
  json::append_string(out, minhash_setting(config.minhash));
  out += "}";
  return out;
}

collection_config stored_config_base(std::string name) {
  collection_config base;
  base.name = std::move(name);
  base.verify = 0;
  base.sketch = 128;
  base.minhash = minhash_options{};
  return base;
}

result<double> parse_verify_setting(std::string_view text) {
  if (text == "off") return 0.0;
  auto options = parse_verify_spec(text);
  if (!options) {
    return invalid_parameter({.name = "verify",
                              .value = std::string(text),
                              .allowed = kVerifyAllowed,
                              .reason = "must be " + std::string(kVerifyAllowed) + ", got \"" +
                                        std::string(text) + "\""});
  }
  return options->threshold;
}

std::string minhash_setting(const minhash_options& minhash) {
  if (minhash.bands == 0) return "off";
  return std::to_string(minhash.bands) + "x" + std::to_string(minhash.rows);
}

std::string verify_setting(double threshold) {
  if (threshold <= 0) return "off";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, threshold);
  return "jaccard:" + std::string(buf, ec == std::errc() ? end : buf);
}

result<collection_config> config_from_json(std::string_view json, collection_config base) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos) return base;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) {
    return make_error(errc::invalid_input, "collection settings are not valid JSON");
  }
  simdjson::dom::object obj;
  if (root.get(obj) != simdjson::SUCCESS) {
    return make_error(errc::invalid_input, "collection settings must be a JSON object");
  }
  for (auto field : obj) {
    const std::string_view key = field.key;
    if (key == "k" || key == "window_s" || key == "shingle_width" || key == "top_k" ||
        key == "sketch") {
      int64_t v;
      if (field.value.get(v) != simdjson::SUCCESS) {
        return make_error(errc::invalid_input, std::string(key) + " must be an integer");
      }
      if (v < INT32_MIN || v > INT32_MAX) {
        if (key != "window_s") {
          return make_error(errc::invalid_argument, std::string(key) + " is out of range");
        }
      }
      if (key == "k")
        base.k = static_cast<int>(v);
      else if (key == "window_s")
        base.window_s = v;
      else if (key == "top_k")
        base.top_k = static_cast<int>(v);
      else if (key == "sketch")
        base.sketch = static_cast<int>(v);
      else
        base.shingle_width = static_cast<int>(v);
    } else if (key == "window") {
      std::string_view v;
      if (field.value.get(v) != simdjson::SUCCESS) {
        return make_error(errc::invalid_input, "window must be a duration string such as \"7d\"");
      }
      auto d = parse_duration(v);
      if (!d) return std::move(d).error();
      base.window_s = *d;
    } else if (key == "verify") {
      std::string_view v;
      if (field.value.get(v) != simdjson::SUCCESS) {
        return make_error(errc::invalid_input, "verify must be a string: \"jaccard:T\" or \"off\"");
      }
      auto threshold = parse_verify_setting(v);
      if (!threshold) return std::move(threshold).error();
      base.verify = *threshold;
    } else if (key == "minhash") {
      std::string_view v;
      if (field.value.get(v) != simdjson::SUCCESS) {
        return make_error(errc::invalid_input,
                          "minhash must be a string: \"BANDSxROWS\" (e.g. \"10x6\") or \"off\"");
      }
      auto spec = parse_minhash_spec(v);
      if (!spec) return std::move(spec).error();
      // Only the bands and rows are a collection's setting; the bucket cap is the library's.
      base.minhash = minhash_options{.bands = spec->bands, .rows = spec->rows};
    } else if (key == "compat" || key == "name" || key == "features") {
      std::string_view v;
      if (field.value.get(v) != simdjson::SUCCESS) {
        return make_error(errc::invalid_input, std::string(key) + " must be a string");
      }
      (key == "compat" ? base.compat : key == "name" ? base.name : base.features) = std::string(v);
    } else {
      return make_error(
          errc::invalid_input,
          "unknown collection setting \"" + std::string(key) +
              "\" (known: k, window, window_s, compat, shingle_width, features, top_k, verify, "
              "sketch, minhash)");
    }
  }
  if (auto st = validate(base); !st) return std::move(st).error();
  return base;
}

}  // namespace simdup::detail
