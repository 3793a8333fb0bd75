// Collection settings: validation and their JSON form (stored by both backends).
#include <simdup/duration.hpp>
#include <simdup/json.hpp>

#include <simdjson.h>

#include <charconv>

#include "store/backend.hpp"

namespace simdup::detail {

bool valid_collection_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

status validate(const collection_config& config) {
  if (!valid_collection_name(config.name)) {
    return make_error(errc::invalid_argument,
                      "collection name must be 1 to 64 characters of [A-Za-z0-9_.-]");
  }
  if (config.k < 0 || config.k > 7) {
    return make_error(errc::invalid_argument, "k must be between 0 and 7");
  }
  if (config.window_s < 0) {
    return make_error(errc::invalid_argument, "window_s must be >= 0 (0: no expiry)");
  }
  if (config.compat != "none" && config.compat != "python-simhash" &&
      config.compat != "jieba-tfidf") {
    return make_error(errc::invalid_argument,
                      "compat must be \"none\", \"python-simhash\" or \"jieba-tfidf\"");
  }
  if (config.shingle_width < 1 || config.shingle_width > 64) {
    return make_error(errc::invalid_argument, "shingle_width must be between 1 and 64");
  }
  if (config.features != "shingles" && config.features != "jieba" &&
      config.features != "keywords") {
    return make_error(errc::invalid_argument,
                      "features must be \"shingles\", \"jieba\" or \"keywords\"");
  }
  if (config.top_k < 0 || config.top_k > 1000) {
    return make_error(errc::invalid_argument, "top_k must be between 0 and 1000");
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
  out += "}";
  return out;
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
    if (key == "k" || key == "window_s" || key == "shingle_width" || key == "top_k") {
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
              "\" (known: k, window, window_s, compat, shingle_width, features, top_k)");
    }
  }
  if (auto st = validate(base); !st) return std::move(st).error();
  return base;
}

}  // namespace simdup::detail
