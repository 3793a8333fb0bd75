// `simdup features`: the weighted features each record votes with, heaviest first, for
// debugging and tuning (docs/cli.md).
#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <simdup/json.hpp>

#include <algorithm>
#include <memory>

namespace simdup::cli {
namespace {

struct features_command {
  input_options input;
  fingerprint_cli_options fp;
  run_options run;
};

/// JSONL {"id":..., "features": [["tok", w], ...]} or TSV id<TAB>feature<TAB>weight lines.
void format_features(std::string& out, const document& doc,
                     const std::vector<weighted_feature>& features, bool tsv) {
  if (tsv) {
    for (const weighted_feature& f : features) {
      append_tsv_escaped(out, doc.id);
      out.push_back('\t');
      append_tsv_escaped(out, f.text);
      out.push_back('\t');
      json::append_number(out, f.weight);
      out.push_back('\n');
    }
    return;
  }
  out.append("{\"id\":");
  json::append_id(out, doc.id, doc.id_is_number);
  out.append(",\"features\":[");
  bool first = true;
  for (const weighted_feature& f : features) {
    if (!first) out.push_back(',');
    first = false;
    out.push_back('[');
    json::append_string(out, f.text);
    out.push_back(',');
    json::append_number(out, f.weight);
    out.push_back(']');
  }
  out.append("]}\n");
}

int run_features(const features_command& cmd) {
  auto options = cmd.fp.resolve();
  if (!options) {
    print_error("features", options.error().message);
    return exit_usage;
  }
  auto fps = fingerprinter_set::create(*options);
  if (!fps) {
    print_error("features", fps.error().message);
    return exit_failure;
  }
  const fingerprinter_set& set = **fps;
  const std::size_t min_features = options->min_features;
  const bool tsv = cmd.run.format == "tsv";
  return run_document_job("features", cmd.input, cmd.run, [&](document_batch& b) {
    std::vector<weighted_feature> features;
    for (std::size_t i = 0; i < b.size; ++i) {
      const document& doc = b.docs[i];
      if (doc.features) {
        // Supplied features vote as given; show them heaviest first like extracted ones.
        features = *doc.features;
        std::stable_sort(features.begin(), features.end(),
                         [](const weighted_feature& x, const weighted_feature& y) {
                           return x.weight > y.weight;
                         });
      } else {
        features = set.for_document(doc).features(doc.text);
      }
      if (features.size() < min_features) ++b.too_short;
      format_features(b.out, doc, features, tsv);
    }
  });
}

void setup_features(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<features_command>();
  CLI::App* sub = app.add_subcommand(
      "features",
      "Print the weighted features each record yields, heaviest first: JSONL {\"id\": ..., "
      "\"features\": [[\"tok\", weight], ...]}, or id<TAB>feature<TAB>weight lines with "
      "--format tsv");
  add_input_options(*sub, cmd->input);
  add_fingerprint_options(*sub, cmd->fp);
  add_run_options(*sub, cmd->run);
  sub->callback([cmd, &rc] { rc = run_features(*cmd); });
}

SIMDUP_REGISTER_COMMAND(20, setup_features);

}  // namespace
}  // namespace simdup::cli
