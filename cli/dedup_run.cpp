#include "dedup_run.hpp"

#include <simdup/dedup_report.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace simdup::cli {
namespace {

std::string decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// A boolean flag as the command line gives it: "--html", or "no --html".
std::string switch_flag(const char* flag, bool given) {
  return given ? std::string(flag) : std::string("no ") + flag;
}

/// One parameter as a flag with its value ("--features shingles"), for comparing the flags with
/// the run's; empty where the parameter does not apply (--verify-max-hashes without --verify).
/// A run that did not record a parameter (summary.json before the fingerprint settings) has
/// the flag's value, so it never differs.
struct flag_form {
  const char* flag;  ///< the name CLI11 knows it by (given or not: App::count)
  std::string (*form)(const dedup_options&);
};

const flag_form kFlagForms[] = {
    {"--mode",
     [](const dedup_options& o) {
       return std::string("--mode ") + (o.mode == dedup_mode::stream ? "stream" : "batch");
     }},
    {"--layers",
     [](const dedup_options& o) {
       std::string layers;
       for (const auto& [on, name] : {std::pair{o.url_layer, "url"},
                                      {o.title_layer, "title"},
                                      {o.content_layer, "exact"},
                                      {o.near_layer, "near"}}) {
         if (on) layers += (layers.empty() ? "" : ",") + std::string(name);
       }
       return "--layers " + layers;
     }},
    {"--k", [](const dedup_options& o) { return "-k " + std::to_string(o.detection.k); }},
    {"--clusters",
     [](const dedup_options& o) {
       return std::string("--clusters ") + linking_name(o.detection.clustering);
     }},
    {"--anchor-floor",
     [](const dedup_options& o) {
       return o.detection.clustering == cluster_linking::anchored
                  ? "--anchor-floor " + decimal(o.detection.anchor_floor)
                  : std::string();
     }},
    {"--minhash",
     [](const dedup_options& o) {
       const minhash_options& m = o.detection.minhash;
       return m.bands == 0 ? std::string("--minhash off")
                           : "--minhash " + std::to_string(m.bands) + "x" + std::to_string(m.rows);
     }},
    {"--verify",
     [](const dedup_options& o) {
       return o.detection.verify ? "--verify jaccard:" + decimal(o.detection.verify->threshold)
                                 : std::string("--verify off");
     }},
    {"--verify-max-hashes",
     [](const dedup_options& o) {
       return o.detection.verify
                  ? "--verify-max-hashes " + std::to_string(o.detection.verify->max_hashes)
                  : std::string();
     }},
    {"--verify-shingle-width",
     [](const dedup_options& o) {
       return o.detection.verify
                  ? "--verify-shingle-width " + std::to_string(o.detection.verify->shingle_width)
                  : std::string();
     }},
    {"--html",
     [](const dedup_options& o) {
       return switch_flag("--html", o.detection.fingerprint.normalize.html);
     }},
    {"--no-nfkc",
     [](const dedup_options& o) {
       return switch_flag("--no-nfkc", !o.detection.fingerprint.normalize.nfkc);
     }},
    {"--no-casefold",
     [](const dedup_options& o) {
       return switch_flag("--no-casefold", !o.detection.fingerprint.normalize.casefold);
     }},
    {"--no-t2s",
     [](const dedup_options& o) {
       return switch_flag("--no-t2s", !o.detection.fingerprint.normalize.t2s);
     }},
    {"--keep-punctuation",
     [](const dedup_options& o) {
       return switch_flag("--keep-punctuation",
                          !o.detection.fingerprint.normalize.strip_punctuation);
     }},
    {"--strip-digits",
     [](const dedup_options& o) {
       return switch_flag("--strip-digits", o.detection.fingerprint.normalize.strip_digits);
     }},
    {"--features",
     [](const dedup_options& o) {
       static constexpr const char* kNames[] = {"shingles", "words", "word-ngrams", "jieba",
                                                "keywords"};
       return std::string("--features ") +
              kNames[static_cast<int>(o.detection.fingerprint.features.kind)];
     }},
    {"--shingle-width",
     [](const dedup_options& o) {
       return "--shingle-width " + std::to_string(o.detection.fingerprint.features.shingle_width);
     }},
    {"--ngram",
     [](const dedup_options& o) {
       return "--ngram " + std::to_string(o.detection.fingerprint.features.ngram);
     }},
    {"--min-token-length",
     [](const dedup_options& o) {
       return "--min-token-length " +
              std::to_string(o.detection.fingerprint.features.min_token_length);
     }},
    {"--jieba-dict",
     [](const dedup_options& o) {
       const std::string& d = o.detection.fingerprint.features.jieba_dict;
       return d.empty() ? std::string("no --jieba-dict") : "--jieba-dict " + d;
     }},
    {"--user-dict",
     [](const dedup_options& o) {
       std::string out;
       for (const std::string& d : o.detection.fingerprint.features.jieba_user_dicts) {
         out += (out.empty() ? "--user-dict " : " --user-dict ") + d;
       }
       return out.empty() ? std::string("no --user-dict") : out;
     }},
    {"--weighting",
     [](const dedup_options& o) {
       static constexpr const char* kNames[] = {"count", "binary", "tfidf"};
       return std::string("--weighting ") +
              kNames[static_cast<int>(o.detection.fingerprint.weighting.scheme)];
     }},
    {"--idf",
     [](const dedup_options& o) {
       const std::string& f = o.detection.fingerprint.weighting.idf_path;
       return f.empty() ? std::string("no --idf") : "--idf " + f;
     }},
    {"--stopwords",
     [](const dedup_options& o) {
       const std::string& f = o.detection.fingerprint.weighting.stopwords_path;
       return f.empty() ? std::string("no --stopwords") : "--stopwords " + f;
     }},
    {"--top-k",
     [](const dedup_options& o) {
       return "--top-k " + std::to_string(o.detection.fingerprint.weighting.top_k);
     }},
    {"--hash",
     [](const dedup_options& o) {
       static constexpr const char* kNames[] = {"xxh3", "fnv1a", "md5"};
       return std::string("--hash ") + kNames[static_cast<int>(o.detection.fingerprint.hash)];
     }},
    {"--compat",
     [](const dedup_options& o) {
       static constexpr const char* kNames[] = {"none", "python-simhash", "jieba-tfidf"};
       return std::string("--compat ") + kNames[static_cast<int>(o.detection.fingerprint.compat)];
     }},
    {"--min-features",
     [](const dedup_options& o) {
       return "--min-features " + std::to_string(o.detection.fingerprint.min_features);
     }},
};

}  // namespace

status read_dedup_run(const std::string& dir, dedup_options& o, std::vector<std::string>& inputs) {
  const std::string path = dir + "/summary.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "--dedup-out: cannot read " + path);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto run = read_summary_parameters(json, path, o);
  if (!run) return make_error(run.error().code, "--dedup-out: " + run.error().message);
  o = std::move(run->options);
  inputs = std::move(run->inputs);
  return {};
}

result<std::vector<document>> find_records(const std::vector<std::string>& inputs,
                                           const field_names& fields,
                                           const std::vector<std::string>& ids) {
  reader_options ro;
  ro.fields = fields;
  ro.skip_failed_inputs = true;  // as the run may have with --on-error skip
  auto in = reader::open(inputs, ro);
  if (!in) return std::move(in).error();
  std::vector<document> found(ids.size());
  std::vector<bool> seen(ids.size(), false);
  std::size_t missing = ids.size();
  document doc;
  error_info err;
  for (read_status rs; missing > 0 && (rs = in->next(doc, err)) != read_status::end;) {
    if (rs == read_status::failed) return err;
    if (rs != read_status::record) continue;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!seen[i] && doc.id == ids[i]) {
        found[i] = doc;
        seen[i] = true;
        --missing;
      }
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!seen[i])
      return make_error(errc::not_found, "no record with id " + ids[i] + " in the inputs");
  }
  return found;
}

result<std::vector<run_decision>> read_run_decisions(const std::string& dir,
                                                     const std::vector<std::string>& ids) {
  std::vector<run_decision> out(ids.size());
  auto read = read_duplicate_records(dir + "/duplicates.jsonl", [&](const duplicate_record& r) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (r.id == ids[i]) out[i] = {false, r.duplicate_of, r.layer};
    }
  });
  if (!read) return make_error(read.error().code, "--dedup-out: " + read.error().message);
  return out;
}

std::vector<std::pair<std::string, std::string>> flags_unlike_run(const CLI::App& cmd,
                                                                  const dedup_options& flags,
                                                                  const dedup_options& run) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const flag_form& f : kFlagForms) {
    if (cmd.count(f.flag) == 0) continue;
    const std::string given = f.form(flags), used = f.form(run);
    if (!given.empty() && given != used) out.emplace_back(given, used);
  }
  return out;
}

}  // namespace simdup::cli
