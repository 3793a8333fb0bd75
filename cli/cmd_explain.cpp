// `simdup explain TEXT_A TEXT_B`: why two texts are (or are not) near duplicates: their
// distance, the differing bits, and the heaviest shared and unshared features.
#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <simdup/json.hpp>
#include <simdup/simhash.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <unordered_map>

namespace simdup::cli {
namespace {

struct explain_command {
  std::vector<std::string> texts;
  std::vector<std::string> files;
  fingerprint_cli_options fp;
  std::size_t top = 10;
  bool json = false;
  /// The parsed subcommand and its two text sources, to restore the command-line order of
  /// mixed forms (`--file A TEXT` compares file A with TEXT, in that order).
  const CLI::App* app = nullptr;
  const CLI::Option* text_option = nullptr;
  const CLI::Option* file_option = nullptr;
};

struct side {
  fingerprint_result result;
  std::vector<weighted_feature> features;
};

struct shared_feature {
  std::string text;
  double weight_a;
  double weight_b;
};

struct comparison {
  side a, b;
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

comparison compare(const fingerprinter& fp, const std::string& text_a, const std::string& text_b) {
  comparison c;
  c.a = {fp.fingerprint(text_a), fp.features(text_a)};
  c.b = {fp.fingerprint(text_b), fp.features(text_b)};
  const uint64_t diff = c.a.result.fingerprint ^ c.b.result.fingerprint;
  for (int i = 0; i < 64; ++i) {
    if ((diff >> i) & 1) c.bits.push_back(i);
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
  return c.a.result.status == fingerprint_status::ok && c.b.result.status == fingerprint_status::ok;
}

std::string to_json(const comparison& c, std::size_t top) {
  std::string out;
  json::writer w(out);
  w.begin_object();
  for (const auto& [name, s] : {std::pair{"a", &c.a}, std::pair{"b", &c.b}}) {
    w.key(name).begin_object();
    w.key("fingerprint");
    if (s->result.status == fingerprint_status::ok) {
      w.value(to_hex(s->result.fingerprint));
    } else {
      w.null();
    }
    w.key("status").value(status_name(s->result.status));
    w.key("features").value(static_cast<uint64_t>(s->features.size()));
    w.end_object();
  }
  w.key("distance");
  if (both_ok(c)) {
    w.value(static_cast<int64_t>(c.bits.size()));
  } else {
    w.null();
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

std::string to_text(const comparison& c, std::size_t top) {
  std::ostringstream o;
  for (const auto& [name, s] : {std::pair{"A", &c.a}, std::pair{"B", &c.b}}) {
    o << name << ": ";
    if (s->result.status == fingerprint_status::ok) {
      o << to_hex(s->result.fingerprint);
    } else {
      o << "no fingerprint (" << status_name(s->result.status) << ")";
    }
    o << ", " << s->features.size() << " distinct features\n";
  }
  if (both_ok(c)) {
    o << "distance: " << c.bits.size() << " of 64 bits\n";
    if (!c.bits.empty()) {
      o << "differing bits (0 = least significant):";
      for (int b : c.bits) o << ' ' << b;
      o << '\n';
    }
  } else {
    o << "distance: undefined (a text without features has no fingerprint)\n";
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

int run_explain(explain_command& cmd) {
  // One parse_order() entry per value, so walking it interleaves TEXTs and --files as given.
  std::vector<std::string> texts;
  std::size_t next_text = 0, next_file = 0;
  for (const CLI::Option* opt : cmd.app->parse_order()) {
    if (opt == cmd.text_option && next_text < cmd.texts.size()) {
      texts.push_back(cmd.texts[next_text++]);
    } else if (opt == cmd.file_option && next_file < cmd.files.size()) {
      const std::string& path = cmd.files[next_file++];
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        print_error("explain", "cannot read " + path);
        return exit_failure;
      }
      std::ostringstream ss;
      ss << in.rdbuf();
      texts.push_back(ss.str());
    }
  }
  if (texts.size() != 2) {
    print_error("explain",
                "need exactly two texts (TEXT_A TEXT_B, or --file A --file B, or "
                "one of each); got " +
                    std::to_string(texts.size()));
    return exit_usage;
  }
  auto options = cmd.fp.resolve();
  if (!options) {
    print_error("explain", options.error().message);
    return exit_usage;
  }
  auto fp = fingerprinter::create(*options);
  if (!fp) {
    print_error("explain", fp.error().message);
    return exit_failure;
  }
  const comparison c = compare(*fp, texts[0], texts[1]);
  const std::string out = cmd.json ? to_json(c, cmd.top) : to_text(c, cmd.top);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

void setup(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<explain_command>();
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Compare two texts: fingerprints, Hamming distance, differing bits, and the heaviest "
      "shared and unshared features");
  cmd->app = sub;
  cmd->text_option = sub->add_option("TEXT", cmd->texts, "The two texts (TEXT_A TEXT_B)")
                         ->type_name("TEXT_A TEXT_B");
  // One FILE per --file: a vector option would otherwise swallow a following TEXT as a file.
  cmd->file_option = sub->add_option("--file", cmd->files,
                                     "Read a text from FILE (give twice, or with one TEXT; "
                                     "the texts are compared in command-line order)")
                         ->check(CLI::ExistingFile)
                         ->allow_extra_args(false);
  sub->add_option("--top", cmd->top, "Features listed per group")->capture_default_str();
  sub->add_flag("--json", cmd->json, "Machine-readable JSON output");
  add_fingerprint_options(*sub, cmd->fp);
  sub->callback([cmd, &rc] { rc = run_explain(*cmd); });
}

SIMDUP_REGISTER_COMMAND(30, setup);

}  // namespace
}  // namespace simdup::cli
