// summary.json and the terminal summary of a dedup run.
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/json.hpp>

#include "util/cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

namespace simdup {
namespace {

constexpr dedup_layer kLayers[] = {dedup_layer::url, dedup_layer::title, dedup_layer::exact,
                                   dedup_layer::near};

double per_second(double amount, double seconds) {
  return seconds > 0 ? amount / seconds : 0;
}

uint64_t clusters_with_duplicates(const dedup_summary& s, uint64_t* largest) {
  uint64_t count = 0;
  *largest = 0;
  for (const auto& [size, n] : s.cluster_sizes) {
    if (size < 2) continue;
    count += n;
    *largest = std::max(*largest, size);
  }
  return count;
}

std::string thousands(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

const char* feature_kind_name(feature_kind k) {
  switch (k) {
    case feature_kind::shingles:
      return "shingles";
    case feature_kind::words:
      return "words";
    case feature_kind::word_ngrams:
      return "word-ngrams";
    case feature_kind::jieba:
      return "jieba";
    case feature_kind::keywords:
      return "keywords";
  }
  return "?";
}

const char* weighting_name(weighting_scheme w) {
  switch (w) {
    case weighting_scheme::count:
      return "count";
    case weighting_scheme::binary:
      return "binary";
    case weighting_scheme::tfidf:
      return "tfidf";
  }
  return "?";
}

const char* hash_name(hash_kind h) {
  switch (h) {
    case hash_kind::xxh3:
      return "xxh3";
    case hash_kind::fnv1a:
      return "fnv1a";
    case hash_kind::md5:
      return "md5";
  }
  return "?";
}

const char* compat_name(compat_mode c) {
  switch (c) {
    case compat_mode::none:
      return "none";
    case compat_mode::python_simhash:
      return "python-simhash";
    case compat_mode::jieba_tfidf:
      return "jieba-tfidf";
  }
  return "?";
}

std::string json_text(std::string_view s) {
  std::string out;
  json::append_string(out, s);
  return out;
}

/// The fingerprint settings as (option name, JSON value) pairs: parameters.fingerprint of the
/// summary, and the fingerprint part of an index's profile.
index_profile fingerprint_fields(const fingerprint_options& f) {
  const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  const auto number = [](std::size_t n) { return std::to_string(n); };
  std::string dicts = "[";
  for (const std::string& d : f.features.jieba_user_dicts) {
    if (dicts.size() > 1) dicts += ",";
    dicts += json_text(d);
  }
  dicts += "]";
  return {{"html", flag(f.normalize.html)},
          {"nfkc", flag(f.normalize.nfkc)},
          {"casefold", flag(f.normalize.casefold)},
          {"t2s", flag(f.normalize.t2s)},
          {"strip_punctuation", flag(f.normalize.strip_punctuation)},
          {"strip_digits", flag(f.normalize.strip_digits)},
          {"features", json_text(feature_kind_name(f.features.kind))},
          {"shingle_width", number(f.features.shingle_width)},
          {"ngram", number(f.features.ngram)},
          {"min_token_length", number(f.features.min_token_length)},
          {"jieba_dict", json_text(f.features.jieba_dict)},
          {"user_dicts", dicts},
          {"weighting", json_text(weighting_name(f.weighting.scheme))},
          {"idf", json_text(f.weighting.idf_path)},
          {"stopwords", json_text(f.weighting.stopwords_path)},
          {"top_k", number(f.weighting.top_k)},
          {"hash", json_text(hash_name(f.hash))},
          {"compat", json_text(compat_name(f.compat))},
          {"min_features", number(f.min_features)}};
}

/// parameters.fingerprint: the option names and values of the CLI's fingerprint flags.
void write_fingerprint(json::writer& w, const fingerprint_options& f) {
  w.key("fingerprint").begin_object();
  for (const auto& [name, value] : fingerprint_fields(f)) w.key(name).raw(value);
  w.end_object();
}

}  // namespace

index_profile make_index_profile(const dedup_options& options) {
  const detection_profile p = options.detection.effective(options.mode == dedup_mode::batch);
  index_profile profile;
  for (auto& [name, value] : fingerprint_fields(p.fingerprint)) {
    profile.emplace_back("fingerprint." + name, std::move(value));
  }
  profile.emplace_back("k", std::to_string(p.k));
  if (p.verify) {
    std::string threshold;
    json::append_number(threshold, p.verify->threshold);
    profile.emplace_back("verify.threshold", threshold);
    profile.emplace_back("verify.shingle_width", std::to_string(p.verify->shingle_width));
    profile.emplace_back("verify.max_hashes", std::to_string(p.verify->max_hashes));
  } else {
    profile.emplace_back("verify", "null");
  }
  profile.emplace_back("minhash.bands", std::to_string(p.minhash.bands));
  profile.emplace_back("minhash.rows", std::to_string(p.minhash.rows));
  return profile;
}

void describe_parameters(dedup_summary& summary, const dedup_options& d,
                         const std::string& keep_spec, unsigned threads) {
  summary.mode = d.mode == dedup_mode::stream ? "stream" : "batch";
  const detection_profile& p = d.detection;
  summary.k = p.k;
  summary.keep = d.mode == dedup_mode::stream ? "first" : keep_spec;
  // Stream mode links each duplicate directly to one kept document (the closest within k, or
  // the holder of a shared key) and never re-clusters: that is a star, whatever --clusters says.
  summary.linking = d.mode == dedup_mode::stream ? linking_name(cluster_linking::star)
                                                 : linking_name(p.clustering);
  if (d.mode == dedup_mode::batch && p.verify) {
    summary.minhash_bands = p.minhash.bands;
    summary.minhash_rows = p.minhash.rows;
  }
  if (d.url_layer) summary.layers.push_back("url");
  if (d.title_layer) summary.layers.push_back("title");
  if (d.content_layer) summary.layers.push_back("exact");
  if (d.near_layer) summary.layers.push_back("near");
  if (p.verify) {
    summary.verify_threshold = p.verify->threshold;
    summary.verify_max_hashes = p.verify->max_hashes;
    summary.verify_shingle_width = p.verify->shingle_width;
  }
  if (d.mode == dedup_mode::batch && p.clustering == cluster_linking::anchored) {
    summary.anchor_floor = p.anchor_floor;
  }
  summary.fingerprint = p.fingerprint;
  summary.threads = threads ? threads : detail::available_cpus();
}

void count_decision(dedup_summary& summary, const dedup_decision& decision, uint32_t ordinal) {
  if (decision.kept(ordinal)) {
    ++summary.kept;
    return;
  }
  ++summary.duplicates;
  ++summary.by_layer[static_cast<std::size_t>(decision.layer)];
  const int d = decision.distance;
  ++summary.distance_histogram[d >= 0 && d <= 64 ? static_cast<std::size_t>(d) : 65];
}

std::string summary_json(const dedup_summary& s) {
  std::string out;
  json::writer w(out);
  w.begin_object();
  w.key("version").value(1);
  w.key("parameters").begin_object();
  w.key("inputs").begin_array();
  for (const auto& in : s.inputs) w.value(in);
  w.end_array();
  w.key("mode").value(s.mode).key("k").value(s.k).key("keep").value(s.keep);
  w.key("linking").value(s.linking);
  w.key("minhash");
  if (s.minhash_bands > 0) {
    w.begin_object().key("bands").value(static_cast<uint64_t>(s.minhash_bands));
    w.key("rows").value(static_cast<uint64_t>(s.minhash_rows)).end_object();
  } else {
    w.null();
  }
  w.key("layers").begin_array();
  for (const auto& l : s.layers) w.value(l);
  w.end_array();
  w.key("verify");
  if (s.verify_threshold > 0) {
    w.begin_object().key("jaccard").value(s.verify_threshold);
    w.key("max_hashes").value(static_cast<uint64_t>(s.verify_max_hashes));
    w.key("shingle_width").value(static_cast<uint64_t>(s.verify_shingle_width)).end_object();
  } else {
    w.null();
  }
  if (s.anchor_floor > 0) w.key("anchor_floor").value(s.anchor_floor);
  write_fingerprint(w, s.fingerprint);
  w.key("output_format").value(s.output_format);
  w.end_object();

  w.key("documents").begin_object();
  w.key("read").value(s.read).key("kept").value(s.kept).key("duplicates").value(s.duplicates);
  w.key("skipped").value(s.skipped).key("short").value(s.short_documents);
  w.key("invalid_utf8").value(s.invalid_utf8);
  w.end_object();
  w.key("duplicates_by_layer").begin_object();
  for (dedup_layer l : kLayers) w.key(layer_name(l)).value(s.by_layer[static_cast<std::size_t>(l)]);
  w.end_object();
  w.key("inputs").begin_object();
  w.key("count").value(s.input_count);
  w.key("skipped").value(s.skipped_inputs);
  w.end_object();
  w.key("skipped_reasons").begin_object();
  for (const auto& [reason, n] : s.skipped_reasons) w.key(reason).value(n);
  w.end_object();
  w.key("pairs").begin_object();
  w.key("candidates").value(s.candidate_pairs).key("rejected_by_verify").value(s.rejected_pairs);
  w.key("prefiltered").value(s.prefiltered_pairs);
  w.key("minhash_candidates").value(s.minhash_pairs);
  w.key("against_candidates").value(s.against_candidate_pairs);
  w.end_object();
  w.key("against").begin_object();
  w.key("only").value(s.against_only);
  w.key("dropped").value(s.by_against_total());
  w.key("indexes").begin_array();
  for (const auto& a : s.against) {
    w.begin_object().key("index").value(a.name).key("documents").value(a.documents);
    w.key("dropped").value(a.dropped).key("documents_hit").value(a.documents_hit).end_object();
  }
  w.end_array().end_object();
  w.key("index");
  if (s.index_written) {
    const auto per_doc = [&](uint64_t bytes) {
      return s.index_documents ? static_cast<double>(bytes) / static_cast<double>(s.index_documents)
                               : 0.0;
    };
    const uint64_t rest =
        s.index_bytes - s.index_manifest_bytes - s.index_id_bytes - s.index_verification_bytes;
    w.begin_object().key("path").value("index").key("documents").value(s.index_documents);
    w.key("bytes").value(s.index_bytes).key("bytes_per_document").value(per_doc(s.index_bytes));
    w.key("id_bytes_per_document").value(per_doc(s.index_id_bytes));
    w.key("verification_bytes_per_document").value(per_doc(s.index_verification_bytes));
    w.key("other_bytes_per_document").value(per_doc(rest)).end_object();
  } else {
    w.null();
  }

  uint64_t largest = 0;
  const uint64_t clusters = clusters_with_duplicates(s, &largest);
  w.key("clusters").begin_object();
  w.key("with_duplicates").value(clusters).key("largest").value(largest);
  w.key("by_size").begin_object();
  for (const auto& [size, n] : s.cluster_sizes) w.key(std::to_string(size)).value(n);
  w.end_object().end_object();

  w.key("distance_histogram").begin_object();
  for (std::size_t d = 0; d <= 64; ++d) {
    if (s.distance_histogram[d] != 0) w.key(std::to_string(d)).value(s.distance_histogram[d]);
  }
  if (s.distance_histogram[65] != 0) w.key("unknown").value(s.distance_histogram[65]);
  w.end_object();

  w.key("timings").begin_object();
  w.key("total_seconds").value(s.seconds_total);
  w.key("phases").begin_object();
  for (const auto& [name, sec] : s.seconds_by_phase) w.key(name).value(sec);
  w.end_object();
  w.key("bytes").value(s.bytes);
  w.key("mb_per_second").value(per_second(static_cast<double>(s.bytes) / 1e6, s.seconds_total));
  w.key("documents_per_second").value(per_second(static_cast<double>(s.read), s.seconds_total));
  w.key("threads").value(s.threads);
  w.end_object();
  w.key("memory").begin_object();
  w.key("engine_bytes").value(s.engine_memory_bytes);
  w.key("engine_bytes_per_document")
      .value(s.read ? static_cast<double>(s.engine_memory_bytes) / static_cast<double>(s.read)
                    : 0.0);
  w.key("peak_rss_bytes").value(s.peak_rss_bytes);
  w.key("start_rss_bytes").value(s.start_rss_bytes);
  w.key("verify_spill_bytes").value(s.verify_spill_bytes);
  w.key("limit_bytes").value(s.memory_limit_bytes);
  w.key("spilled_bytes").value(s.verify_spill_bytes + s.column_spill_bytes);
  w.key("peak_rss_bytes_by_phase").begin_object();
  for (const auto& [name, bytes] : s.peak_rss_by_phase) w.key(name).value(bytes);
  w.end_object();
  w.end_object();
  w.key("resume").begin_object();
  w.key("journal_bytes").value(s.journal_bytes);
  w.key("replayed_documents").value(s.replayed_documents);
  w.key("replayed_decisions").value(s.replayed_decisions);
  w.end_object();
  w.end_object();
  out.push_back('\n');
  return out;
}

std::string human_summary(const dedup_summary& s) {
  char line[256];
  std::string out;
  const double mb = static_cast<double>(s.bytes) / 1e6;
  std::snprintf(line, sizeof line,
                "simdup dedup: %s documents read (%.1f MB) in %.2f s (%.1f MB/s)\n",
                thousands(s.read).c_str(), mb, s.seconds_total, per_second(mb, s.seconds_total));
  out += line;
  const auto pct = [&](uint64_t v) {
    return s.read ? 100.0 * static_cast<double>(v) / static_cast<double>(s.read) : 0.0;
  };
  std::snprintf(line, sizeof line, "  kept        %12s (%.1f%%)\n", thousands(s.kept).c_str(),
                pct(s.kept));
  out += line;
  std::snprintf(line, sizeof line, "  duplicates  %12s (%.1f%%):", thousands(s.duplicates).c_str(),
                pct(s.duplicates));
  out += line;
  for (dedup_layer l : kLayers) {
    out +=
        std::string(" ") + layer_name(l) + " " + thousands(s.by_layer[static_cast<std::size_t>(l)]);
  }
  out += "\n";
  for (const auto& a : s.against) {
    out += "  against     " + thousands(a.dropped) + " dropped for " + thousands(a.documents_hit) +
           " of the " + thousands(a.documents) + " documents of " + a.name + "\n";
  }
  std::snprintf(line, sizeof line, "  skipped     %12s", thousands(s.skipped).c_str());
  out += line;
  if (s.skipped_inputs > 0) out += " records, " + thousands(s.skipped_inputs) + " inputs:";
  for (const auto& [reason, n] : s.skipped_reasons) out += " " + reason + " " + thousands(n);
  out += "\n";
  std::snprintf(line, sizeof line, "  short       %12s (exact layers only)\n",
                thousands(s.short_documents).c_str());
  out += line;
  if (s.invalid_utf8 > 0) {
    std::snprintf(line, sizeof line, "  invalid UTF-8 %10s sequences replaced by U+FFFD\n",
                  thousands(s.invalid_utf8).c_str());
    out += line;
  }
  uint64_t largest = 0;
  const uint64_t clusters = clusters_with_duplicates(s, &largest);
  std::snprintf(line, sizeof line, "  clusters    %12s with duplicates, largest %s\n",
                thousands(clusters).c_str(), thousands(largest).c_str());
  out += line;
  if (s.verify_threshold > 0) {
    std::snprintf(line, sizeof line, "  verified    %12s near pairs, %s rejected (Jaccard < %g)\n",
                  thousands(s.candidate_pairs).c_str(), thousands(s.rejected_pairs).c_str(),
                  s.verify_threshold);
    out += line;
  }
  return out;
}

}  // namespace simdup
