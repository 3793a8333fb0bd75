// A run's outputs read back (simdup explain --dedup-out decides and reports as the run did):
// summary.json's parameters as dedup_options, with the keys summary_json (summary.cpp) writes,
// and the records of duplicates.jsonl, as append_duplicate_line (record_writer.cpp) writes them.
#include <simdup/dedup_report.hpp>

#include <simdjson.h>

#include <fstream>
#include <initializer_list>
#include <optional>
#include <type_traits>

namespace simdup {
namespace {

// A record id as dedup writes it: a JSON string's value, or a number's token as written
// (numeric ids keep their text: 1.5, 18446744073709551615).
std::optional<std::string> id_text(simdjson::ondemand::object& record, std::string_view key) {
  simdjson::ondemand::value v;
  simdjson::ondemand::json_type type;
  if (record.find_field_unordered(key).get(v) || v.type().get(type)) return std::nullopt;
  std::string_view text;
  if (type == simdjson::ondemand::json_type::number) {
    text = v.raw_json_token();
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return std::string(text);
  }
  if (v.get_string().get(text)) return std::nullopt;
  return std::string(text);
}

// parameters.fingerprint as summary.json writes it (the names of the fingerprint settings'
// values); false for a missing or malformed key.
bool read_summary_fingerprint(simdjson::dom::object f, fingerprint_options& o) {
  const auto flag = [&](const char* key, bool& out) {
    return f[key].get(out) == simdjson::SUCCESS;
  };
  const auto size = [&](const char* key, std::size_t& out) {
    uint64_t v = 0;
    if (f[key].get(v) != simdjson::SUCCESS) return false;
    out = static_cast<std::size_t>(v);
    return true;
  };
  const auto text = [&](const char* key, std::string& out) {
    std::string_view v;
    if (f[key].get(v) != simdjson::SUCCESS) return false;
    out = std::string(v);
    return true;
  };
  // One of `names` (in enum order) to the enum.
  const auto choice = [&](const char* key, std::initializer_list<std::string_view> names,
                          auto& out) {
    std::string_view v;
    if (f[key].get(v) != simdjson::SUCCESS) return false;
    int i = 0;
    for (std::string_view name : names) {
      if (name == v) {
        out = static_cast<std::remove_reference_t<decltype(out)>>(i);
        return true;
      }
      ++i;
    }
    return false;
  };
  normalize_options& n = o.normalize;
  simdjson::dom::array dicts;
  if (!flag("html", n.html) || !flag("nfkc", n.nfkc) || !flag("casefold", n.casefold) ||
      !flag("t2s", n.t2s) || !flag("strip_punctuation", n.strip_punctuation) ||
      !flag("strip_digits", n.strip_digits) ||
      !choice("features", {"shingles", "words", "word-ngrams", "jieba", "keywords"},
              o.features.kind) ||
      !size("shingle_width", o.features.shingle_width) || !size("ngram", o.features.ngram) ||
      !size("min_token_length", o.features.min_token_length) ||
      !text("jieba_dict", o.features.jieba_dict) ||
      f["user_dicts"].get(dicts) != simdjson::SUCCESS ||
      !choice("weighting", {"count", "binary", "tfidf"}, o.weighting.scheme) ||
      !text("idf", o.weighting.idf_path) || !text("stopwords", o.weighting.stopwords_path) ||
      !size("top_k", o.weighting.top_k) || !choice("hash", {"xxh3", "fnv1a", "md5"}, o.hash) ||
      !choice("compat", {"none", "python-simhash", "jieba-tfidf"}, o.compat) ||
      !size("min_features", o.min_features)) {
    return false;
  }
  o.features.jieba_user_dicts.clear();
  for (auto d : dicts) {
    std::string_view path;
    if (d.get(path) != simdjson::SUCCESS) return false;
    o.features.jieba_user_dicts.emplace_back(path);
  }
  return true;
}

}  // namespace

result<summary_parameters> read_summary_parameters(std::string_view summary_json,
                                                   std::string_view name,
                                                   const dedup_options& base) {
  summary_parameters out{.inputs = {}, .options = base};
  dedup_options& o = out.options;
  simdjson::dom::parser parser;
  simdjson::dom::element params;
  if (parser.parse(summary_json.data(), summary_json.size())["parameters"].get(params) !=
      simdjson::SUCCESS) {
    return make_error(errc::invalid_input, std::string(name) + " has no parameters");
  }
  const auto bad = [&](const char* what) {
    return make_error(errc::invalid_input,
                      std::string(name) + ": parameters." + what + " missing or malformed");
  };
  simdjson::dom::array list;
  if (params["inputs"].get(list) != simdjson::SUCCESS) return bad("inputs");
  for (auto v : list) {
    std::string_view in;
    if (v.get(in) != simdjson::SUCCESS) return bad("inputs");
    out.inputs.emplace_back(in);
  }
  std::string_view text;
  if (params["mode"].get(text) != simdjson::SUCCESS) return bad("mode");
  o.mode = text == "stream" ? dedup_mode::stream : dedup_mode::batch;
  int64_t k = 0;
  if (params["k"].get(k) != simdjson::SUCCESS) return bad("k");
  detection_profile& p = o.detection;
  p.k = static_cast<int>(k);
  if (params["linking"].get(text) != simdjson::SUCCESS) return bad("linking");
  auto linking = parse_linking(text);
  if (!linking) return bad("linking");
  p.clustering = *linking;
  std::string layers;
  if (params["layers"].get(list) != simdjson::SUCCESS) return bad("layers");
  for (auto v : list) {
    if (v.get(text) != simdjson::SUCCESS) return bad("layers");
    layers += (layers.empty() ? "" : ",") + std::string(text);
  }
  if (auto st = parse_layers(layers, o); !st) return bad("layers");
  // Written only for a batch run with verification (describe_parameters); null means off.
  p.minhash = minhash_options{};
  if (simdjson::dom::object mh; params["minhash"].get(mh) == simdjson::SUCCESS) {
    uint64_t bands = 0, rows = 0;
    if (mh["bands"].get(bands) != simdjson::SUCCESS || mh["rows"].get(rows) != simdjson::SUCCESS)
      return bad("minhash");
    p.minhash.bands = bands;
    p.minhash.rows = rows;
  }
  if (simdjson::dom::object v; params["verify"].get(v) == simdjson::SUCCESS) {
    double threshold = 0;
    uint64_t max_hashes = 0;
    if (v["jaccard"].get(threshold) != simdjson::SUCCESS ||
        v["max_hashes"].get(max_hashes) != simdjson::SUCCESS)
      return bad("verify");
    if (!p.verify) p.verify = verify_options{};
    p.verify->threshold = threshold;
    p.verify->max_hashes = max_hashes;
    // Recorded since the fingerprint settings are; older runs used base's value.
    if (uint64_t width = 0; v["shingle_width"].get(width) == simdjson::SUCCESS) {
      p.verify->shingle_width = width;
    }
  } else {
    p.verify.reset();
  }
  if (double floor = 0; params["anchor_floor"].get(floor) == simdjson::SUCCESS) {
    p.anchor_floor = floor;
  }
  if (simdjson::dom::object f; params["fingerprint"].get(f) == simdjson::SUCCESS) {
    if (!read_summary_fingerprint(f, p.fingerprint)) return bad("fingerprint");
  }
  if (auto st = p.validate(); !st) {
    return make_error(errc::invalid_input, std::string(name) + ": " + st.error().message);
  }
  return out;
}

status read_duplicate_records(const std::string& path,
                              const std::function<void(const duplicate_record&)>& each) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "cannot read " + path);
  simdjson::ondemand::parser parser;
  std::string line;
  duplicate_record record;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const simdjson::padded_string padded(line);
    simdjson::ondemand::document doc;
    simdjson::ondemand::object rec;
    std::optional<std::string> id, rep;
    std::string_view layer, against;
    if (!parser.iterate(padded).get(doc) && !doc.get_object().get(rec)) {
      id = id_text(rec, "id");
      rep = id_text(rec, "duplicate_of");
    }
    if (!id || !rep || rec.find_field_unordered("layer").get_string().get(layer)) {
      return make_error(
          errc::invalid_input,
          path + ":" + std::to_string(n) + ": not a duplicates record (id, duplicate_of, layer)");
    }
    if (rec.find_field_unordered("against").get_string().get(against)) against = {};
    record.id = std::move(*id);
    record.duplicate_of = std::move(*rep);
    record.layer = std::string(layer);
    record.against = std::string(against);
    each(record);
  }
  return {};
}

}  // namespace simdup
