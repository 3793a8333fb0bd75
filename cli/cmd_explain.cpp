// `simdup explain A B`: why dedup does (or does not) link two documents, under the same
// detection profile and signer as `simdup dedup` (HTML detection, normalisation,
// min-features, Jaccard, MinHash): distance, Jaccard, the deciding layer, the differing bits and
// the heaviest shared and unshared features. A and B are texts, files, JSONL records, or ids in
// the inputs of a dedup output directory (--dedup-out).
#include "command.hpp"
#include "dedup_run.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <simdup/dedup.hpp>
#include <simdup/json.hpp>
#include <simdup/reader.hpp>
#include <simdup/simhash.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace simdup::cli {
namespace {

struct explain_command {
  std::vector<std::string> texts;
  std::vector<std::string> files;
  fingerprint_cli_options fp;
  detection_cli_options detection;
  std::string mode = "batch";
  std::string layers = "url,exact,near";
  field_names fields;
  bool jsonl = false;
  std::string dedup_out;
  std::size_t top = 10;
  bool json = false;
  /// The parsed subcommand and its two text sources, to restore the command-line order of
  /// mixed forms (`--file A TEXT` compares file A with TEXT, in that order).
  const CLI::App* app = nullptr;
  const CLI::Option* text_option = nullptr;
  const CLI::Option* file_option = nullptr;
};

struct side {
  std::string id;
  std::vector<weighted_feature> features;
};

struct shared_feature {
  std::string text;
  double weight_a;
  double weight_b;
};

struct comparison {
  pair_explanation e;
  side a, b;
  /// --dedup-out: the run's decisions for A and B (the pair's own relation is `e`).
  std::optional<std::pair<run_decision, run_decision>> run;
  std::vector<int> bits;  ///< differing bit positions, 0 = least significant
  std::vector<shared_feature> shared;
  std::vector<weighted_feature> only_a, only_b;
};

/// Summed weight per feature text (a feature list may repeat a text).
std::unordered_map<std::string, double> weights(const std::vector<weighted_feature>& fs) {
  std::unordered_map<std::string, double> m;
  for (const auto& f : fs) m[f.text] += f.weight;
  return m;
}

comparison compare(const fingerprinter_set& fps, pair_explanation e, const document& doc_a,
                   const document& doc_b) {
  comparison c;
  c.e = std::move(e);
  // The features of the pipeline the signer used: HTML normalisation when it detected a page.
  const auto features = [&](const document& doc, bool html) {
    document d;
    d.text_is_html = html;
    return fps.for_document(d).features(doc.text);
  };
  c.a = {doc_a.id, features(doc_a, c.e.a.html)};
  c.b = {doc_b.id, features(doc_b, c.e.b.html)};
  if (c.e.distance >= 0) {
    const uint64_t diff = c.e.a.fingerprint ^ c.e.b.fingerprint;
    for (int i = 0; i < 64; ++i) {
      if ((diff >> i) & 1) c.bits.push_back(i);
    }
  }
  const auto wa = weights(c.a.features);
  const auto wb = weights(c.b.features);
  for (const auto& [text, w] : wa) {
    const auto it = wb.find(text);
    if (it != wb.end()) {
      c.shared.push_back({text, w, it->second});
    } else {
      c.only_a.push_back({text, w});
    }
  }
  for (const auto& [text, w] : wb) {
    if (!wa.count(text)) c.only_b.push_back({text, w});
  }
  // Heaviest first; ties by text so the output is deterministic.
  std::sort(c.shared.begin(), c.shared.end(), [](const auto& x, const auto& y) {
    const double sx = x.weight_a + x.weight_b, sy = y.weight_a + y.weight_b;
    return sx != sy ? sx > sy : x.text < y.text;
  });
  const auto by_weight = [](const weighted_feature& x, const weighted_feature& y) {
    return x.weight != y.weight ? x.weight > y.weight : x.text < y.text;
  };
  std::sort(c.only_a.begin(), c.only_a.end(), by_weight);
  std::sort(c.only_b.begin(), c.only_b.end(), by_weight);
  return c;
}

bool both_ok(const comparison& c) {
  return c.e.distance >= 0;
}

/// --dedup-out: whether the run put A and B in one cluster (one is the other's representative,
/// or both have the same one).
bool same_cluster(const comparison& c) {
  const auto& [a, b] = *c.run;
  const std::string& rep_a = a.kept ? c.a.id : a.duplicate_of;
  const std::string& rep_b = b.kept ? c.b.id : b.duplicate_of;
  return rep_a == rep_b;
}

const doc_signature& signature(const comparison& c, const side* s) {
  return s == &c.a ? c.e.a : c.e.b;
}

std::string to_json(const comparison& c, std::size_t top) {
  std::string out;
  json::writer w(out);
  w.begin_object();
  for (const auto& [name, s] : {std::pair{"a", &c.a}, std::pair{"b", &c.b}}) {
    const doc_signature& sig = signature(c, s);
    w.key(name).begin_object();
    w.key("id").value(s->id);
    w.key("fingerprint");
    if (sig.has_fingerprint) {
      w.value(to_hex(sig.fingerprint));
    } else {
      w.null();
    }
    w.key("status").value(sig.has_fingerprint ? "ok" : "too_short");
    w.key("html").value(sig.html);
    w.key("features").value(static_cast<uint64_t>(s->features.size()));
    w.end_object();
  }
  w.key("distance");
  if (both_ok(c)) {
    w.value(static_cast<int64_t>(c.bits.size()));
  } else {
    w.null();
  }
  w.key("jaccard");
  if (std::isnan(c.e.jaccard)) {
    w.null();
  } else {
    w.value(c.e.jaccard);
  }
  w.key("minhash_candidate").value(c.e.minhash_candidate);
  w.key("duplicate").value(c.e.duplicate);
  w.key("layer");
  if (c.e.duplicate) {
    w.value(layer_name(c.e.layer));
  } else {
    w.null();
  }
  w.key("reason").value(c.e.reason);
  if (c.run) {
    w.key("run").begin_object();
    for (const auto& [name, d] : {std::pair{"a", &c.run->first}, std::pair{"b", &c.run->second}}) {
      w.key(name).begin_object().key("kept").value(d->kept);
      if (!d->kept) w.key("duplicate_of").value(d->duplicate_of).key("layer").value(d->layer);
      w.end_object();
    }
    w.key("same_cluster").value(same_cluster(c));
    w.end_object();
  }
  w.key("differing_bits").begin_array();
  if (both_ok(c)) {
    for (int b : c.bits) w.value(b);
  }
  w.end_array();
  w.key("shared").begin_array();
  for (std::size_t i = 0; i < std::min(top, c.shared.size()); ++i) {
    w.begin_array().value(c.shared[i].text).value(c.shared[i].weight_a);
    w.value(c.shared[i].weight_b).end_array();
  }
  w.end_array();
  for (const auto& [name, list] :
       {std::pair{"only_a", &c.only_a}, std::pair{"only_b", &c.only_b}}) {
    w.key(name).begin_array();
    for (std::size_t i = 0; i < std::min(top, list->size()); ++i) {
      w.begin_array().value((*list)[i].text).value((*list)[i].weight).end_array();
    }
    w.end_array();
  }
  w.end_object();
  out.push_back('\n');
  return out;
}

std::string json_quoted(std::string_view s) {
  std::string q;
  json::append_string(q, s);
  return q;
}

std::string number(double v) {
  std::string s;
  json::append_number(s, v);
  return s;
}

/// A Jaccard as duplicates.jsonl and the decision's reason give it (the JSON output keeps all
/// digits).
std::string four_decimals(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string to_text(const comparison& c, std::size_t top) {
  std::ostringstream o;
  for (const auto& [name, s] : {std::pair{"A", &c.a}, std::pair{"B", &c.b}}) {
    const doc_signature& sig = signature(c, s);
    o << name << ": ";
    if (!s->id.empty()) o << "id " << s->id << ", ";
    if (sig.has_fingerprint) {
      o << to_hex(sig.fingerprint);
    } else {
      o << "no fingerprint (too_short)";
    }
    o << ", " << s->features.size() << " distinct features" << (sig.html ? ", HTML" : "") << '\n';
  }
  if (both_ok(c)) {
    o << "distance: " << c.bits.size() << " of 64 bits\n";
    if (!c.bits.empty()) {
      o << "differing bits (0 = least significant):";
      for (int b : c.bits) o << ' ' << b;
      o << '\n';
    }
  } else {
    o << "distance: undefined (a short text has no fingerprint)\n";
  }
  if (!std::isnan(c.e.jaccard)) o << "jaccard: " << four_decimals(c.e.jaccard) << '\n';
  o << "decision: "
    << (c.e.duplicate ? std::string("duplicate (") + layer_name(c.e.layer) + " layer)"
                      : std::string("not linked"))
    << ": " << c.e.reason << '\n';
  if (c.run) {
    const auto decided = [](const run_decision& d) {
      return d.kept ? std::string("kept")
                    : "dropped (" + d.layer + " duplicate of " + d.duplicate_of + ")";
    };
    o << "in the run: A " << decided(c.run->first) << "; B " << decided(c.run->second) << "; "
      << (same_cluster(c) ? "one cluster" : "different clusters");
    if (same_cluster(c) && !c.e.duplicate) {
      o << " (joined through another member: an exact group, the cluster's center or a chain)";
    }
    o << '\n';
  }
  o << "\nshared features: " << c.shared.size() << " (heaviest " << std::min(top, c.shared.size())
    << ": weight in A, weight in B, feature)\n";
  for (std::size_t i = 0; i < std::min(top, c.shared.size()); ++i) {
    o << "  " << number(c.shared[i].weight_a) << "\t" << number(c.shared[i].weight_b) << "\t"
      << json_quoted(c.shared[i].text) << '\n';
  }
  for (const auto& [name, list] : {std::pair{"A", &c.only_a}, std::pair{"B", &c.only_b}}) {
    o << "\nonly in " << name << ": " << list->size() << " (heaviest "
      << std::min(top, list->size()) << ": weight, feature)\n";
    for (std::size_t i = 0; i < std::min(top, list->size()); ++i) {
      o << "  " << number((*list)[i].weight) << "\t" << json_quoted((*list)[i].text) << '\n';
    }
  }
  return o.str();
}

// TEXT/--file values in command-line order: one parse_order() entry per value, so walking it
// interleaves TEXTs and --files as given.
result<std::vector<std::string>> ordered_values(const explain_command& cmd) {
  std::vector<std::string> texts;
  std::size_t next_text = 0, next_file = 0;
  for (const CLI::Option* opt : cmd.app->parse_order()) {
    if (opt == cmd.text_option && next_text < cmd.texts.size()) {
      texts.push_back(cmd.texts[next_text++]);
    } else if (opt == cmd.file_option && next_file < cmd.files.size()) {
      const std::string& path = cmd.files[next_file++];
      std::ifstream in(path, std::ios::binary);
      if (!in) return make_error(errc::not_found, "cannot read " + path);
      std::ostringstream ss;
      ss << in.rdbuf();
      texts.push_back(ss.str());
    }
  }
  return texts;
}

int run_explain(explain_command& cmd) {
  auto values = ordered_values(cmd);
  if (!values) {
    print_error("explain", values.error().message);
    return exit_failure;
  }
  std::vector<std::string>& texts = *values;
  if (texts.size() != 2) {
    print_error("explain",
                cmd.dedup_out.empty()
                    ? "need exactly two texts (TEXT_A TEXT_B, or --file A --file B, "
                      "or one of each); got " +
                          std::to_string(texts.size())
                    : "--dedup-out DIR needs two ids; got " + std::to_string(texts.size()));
    return exit_usage;
  }
  auto fp = cmd.fp.resolve();
  dedup_options o;
  o.mode = cmd.mode == "stream" ? dedup_mode::stream : dedup_mode::batch;
  status st = fp ? parse_layers(cmd.layers, o) : status(fp.error());
  if (st) {
    auto profile = cmd.detection.resolve(*fp, o.mode == dedup_mode::batch);
    if (profile) {
      o.detection = std::move(profile).value();
    } else {
      st = std::move(profile).error();
    }
  }
  if (!st) {
    print_error("explain", flag_message(st.error()));
    return exit_usage;
  }
  std::vector<document> docs(2);
  std::vector<run_decision> decided;
  if (!cmd.dedup_out.empty()) {
    std::vector<std::string> inputs;
    const dedup_options flags = o;
    if (auto read = read_dedup_run(cmd.dedup_out, o, inputs); !read) {
      print_error("explain", read.error().message);
      return exit_failure;
    }
    // The run's parameters win (explain is to decide as the run did); a flag that asked for
    // something else is named, not silently dropped.
    for (const auto& [given, used] : flags_unlike_run(*cmd.app, flags, o)) {
      std::fprintf(stderr,
                   "simdup explain: warning: %s differs from the run's %s (%s/summary.json); "
                   "explaining with the run's\n",
                   given.c_str(), used.c_str(), cmd.dedup_out.c_str());
    }
    auto found = find_records(inputs, cmd.fields, texts);
    if (!found) {
      print_error("explain", found.error().message);
      return exit_failure;
    }
    docs = std::move(found).value();
    auto decisions = read_run_decisions(cmd.dedup_out, texts);
    if (!decisions) {
      print_error("explain", decisions.error().message);
      return exit_failure;
    }
    decided = std::move(decisions).value();
  } else if (cmd.jsonl) {
    reader_options ro;
    ro.format = input_format::jsonl;
    ro.fields = cmd.fields;
    for (std::size_t i = 0; i < 2; ++i) {
      reader in = reader::from_memory(i == 0 ? "A" : "B", texts[i], ro);
      error_info err;
      if (in.next(docs[i], err) != read_status::record) {
        print_error("explain", std::string(i == 0 ? "A" : "B") + " is not a JSONL record: " +
                                   (err.message.empty() ? "empty" : err.message));
        return exit_usage;
      }
    }
  } else {
    for (std::size_t i = 0; i < 2; ++i) docs[i].text = texts[i];
  }
  auto explained = explain_pair(o, docs[0], docs[1]);
  auto fps = fingerprinter_set::create(o.detection.fingerprint);
  if (!explained || !fps) {
    print_error("explain", flag_message(explained ? fps.error() : explained.error()));
    return exit_failure;
  }
  comparison c = compare(**fps, std::move(explained).value(), docs[0], docs[1]);
  if (!decided.empty()) c.run = std::pair{decided[0], decided[1]};
  const std::string out = cmd.json ? to_json(c, cmd.top) : to_text(c, cmd.top);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

void setup_explain(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<explain_command>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Why dedup does or does not link two documents, under the same detection profile: "
      "fingerprints, Hamming distance, Jaccard, the deciding layer, differing bits, and the "
      "heaviest shared and unshared features");
  cmd->app = sub;
  cmd->text_option =
      sub->add_option("TEXT", cmd->texts,
                      "The two texts (TEXT_A TEXT_B); with --jsonl two JSONL records; with "
                      "--dedup-out two ids")
          ->type_name("A B");
  // One FILE per --file: a vector option would otherwise swallow a following TEXT as a file.
  cmd->file_option = sub->add_option("--file", cmd->files,
                                     "Read a text from FILE (give twice, or with one TEXT; "
                                     "the texts are compared in command-line order)")
                         ->check(CLI::ExistingFile)
                         ->allow_extra_args(false);
  sub->add_option("--top", cmd->top, "Features listed per group")->capture_default_str();
  sub->add_flag("--json", cmd->json, "Machine-readable JSON output");
  const char* g = "Records";
  sub->add_flag("--jsonl", cmd->jsonl,
                "A and B (or the --file contents) are JSONL records: text, URL and title from "
                "the --*-field keys, as dedup reads them")
      ->group(g);
  sub->add_option("--dedup-out", cmd->dedup_out,
                  "A and B are ids of records in the inputs of this dedup output directory; "
                  "its summary.json gives the inputs and every detection and fingerprint "
                  "setting (a flag that differs is overridden, with a warning)")
      ->check(CLI::ExistingDirectory)
      ->group(g);
  add_field_options(*sub, cmd->fields, g);
  const char* d = "Detection (as simdup dedup)";
  sub->add_option("--mode", cmd->mode,
                  "batch (MinHash candidates, clusters) or stream (SimHash within k only)")
      ->check(CLI::IsMember({"stream", "batch"}))
      ->capture_default_str()
      ->group(d);
  sub->add_option("--layers", cmd->layers, "Comma-separated layers: url, title, exact, near")
      ->capture_default_str()
      ->group(d);
  add_detection_options(*sub, cmd->detection, d, false);
  cmd->fp.min_features = detection_min_features;
  add_fingerprint_options(*sub, cmd->fp);
  sub->callback([cmd, &rc] { rc = run_explain(*cmd); });
}

SIMDUP_REGISTER_COMMAND(30, setup_explain);

}  // namespace
}  // namespace simdup::cli
