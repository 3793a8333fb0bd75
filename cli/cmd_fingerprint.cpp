// `simdup fingerprint`: one fingerprint line per input record, in input order (docs/cli.md).
#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <simdup/json.hpp>
#include <simdup/simhash.hpp>

#include <memory>

namespace simdup::cli {
namespace {

struct fingerprint_command {
  input_options input;
  fingerprint_cli_options fp;
  run_options run;
};

/// Appends one output line for `doc` and its result. A document without features has no
/// fingerprint (null), except in python-simhash mode, which reproduces the package's value
/// (e.g. the hash of the empty feature) next to the status.
void format_line(std::string& out, const document& doc, const fingerprint_result& r, bool tsv,
                 bool compat_value) {
  const bool ok = r.status == fingerprint_status::ok;
  const bool has_value = ok || compat_value;
  if (tsv) {
    append_tsv_escaped(out, doc.id);
    out.push_back('\t');
    if (has_value) out.append(to_hex(r.fingerprint));
    if (!ok) {
      out.push_back('\t');
      out.append(status_name(r.status));
    }
    out.push_back('\n');
    return;
  }
  out.append("{\"id\":");
  json::append_id(out, doc.id, doc.id_is_number);
  if (has_value) {
    out.append(",\"fingerprint\":\"");
    out.append(to_hex(r.fingerprint));
    out.push_back('"');
  } else {
    out.append(",\"fingerprint\":null");
  }
  if (!ok) {
    out.append(",\"status\":\"");
    out.append(status_name(r.status));
    out.push_back('"');
  }
  out.append("}\n");
}

int run_fingerprint(const fingerprint_command& cmd) {
  auto options = cmd.fp.resolve();
  if (!options) {
    print_error("fingerprint", options.error().message);
    return exit_usage;
  }
  auto fps = fingerprinter_set::create(*options);
  if (!fps) {
    print_error("fingerprint", fps.error().message);
    return exit_failure;
  }
  const fingerprinter_set& set = **fps;
  const bool tsv = cmd.run.format == "tsv";
  const bool compat_value = options->compat == compat_mode::python_simhash;
  return run_document_job("fingerprint", cmd.input, cmd.run, [&](document_batch& b) {
    for (std::size_t i = 0; i < b.size; ++i) {
      const document& doc = b.docs[i];
      const fingerprinter& fp = set.for_document(doc);
      const fingerprint_result r =
          doc.features ? fp.fingerprint_features(*doc.features) : fp.fingerprint(doc.text);
      b.invalid_utf8 += r.invalid_utf8;
      if (r.status != fingerprint_status::ok) ++b.too_short;
      format_line(b.out, doc, r, tsv, compat_value);
    }
  });
}

void setup(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<fingerprint_command>();
  CLI::App* sub = app.add_subcommand(
      "fingerprint",
      "Print a 64-bit SimHash fingerprint for each input record, in input order: JSONL "
      "{\"id\": <id as given>, \"fingerprint\": \"<16 hex>\"} (fingerprint null and \"status\": "
      "\"too_short\" for documents without features), or id<TAB>hex with --format tsv");
  add_input_options(*sub, cmd->input);
  add_fingerprint_options(*sub, cmd->fp);
  add_run_options(*sub, cmd->run);
  sub->callback([cmd, &rc] { rc = run_fingerprint(*cmd); });
}

SIMDUP_REGISTER_COMMAND(10, setup);

}  // namespace
}  // namespace simdup::cli
