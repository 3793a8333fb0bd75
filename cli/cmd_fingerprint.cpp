// `simdup fingerprint`: one fingerprint line per input record, in input order (docs/cli.md).
#include "command.hpp"
#include "database_options.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <simdup/json.hpp>
#include <simdup/simhash.hpp>

#include <cstdio>
#include <memory>

namespace simdup::cli {
namespace {

struct fingerprint_command {
  input_options input;
  database_options db;
  fingerprint_cli_options fp;
  run_options run;
};

/// Appends "HEX<TAB>status" (HEX empty without a fingerprint): what the database writer reads
/// back in order.
void format_row(std::string& out, const fingerprint_result& r) {
  if (r.status == fingerprint_status::ok) out.append(to_hex(r.fingerprint));
  out.push_back('\t');
  out.append(status_name(r.status));
  out.push_back('\n');
}

/// --from and/or --to: the same job with a PostgreSQL cursor as the source and/or a table as
/// the output. With --resume, the rows the table already holds for the run are skipped: by the
/// server (MOVE) when reading --from, else by not writing them again.
int run_with_database(const fingerprint_command& cmd, const batch_processor& process) {
  const database_options& db = cmd.db;
  std::unique_ptr<postgres_fingerprint_sink> sink;
  uint64_t skip = 0;
  if (db.writes_database()) {
    auto opened = postgres_fingerprint_sink::open(db.sink);
    if (!opened) {
      print_error("fingerprint", opened.error().message);
      return exit_failure;
    }
    sink = std::move(opened).value();
    skip = sink->committed_rows();
  }
  std::unique_ptr<postgres_records> records;
  std::unique_ptr<record_source> source;
  if (db.reads_database()) {
    auto connected = postgres_records::connect(db.source);
    if (!connected) {
      print_error("fingerprint", connected.error().message);
      return connected.error().code == errc::invalid_argument ? exit_usage : exit_failure;
    }
    records = std::move(connected).value();
    auto opened = records->open(skip);
    if (!opened) {
      print_error("fingerprint", opened.error().message);
      return exit_failure;
    }
    source = std::move(opened).value();
    skip = 0;
  }
  document_job_io io;
  io.source = source.get();
  const uint64_t already = sink ? sink->committed_rows() : 0;
  uint64_t written_rows = 0;  // by this run
  if (sink) {
    io.write = [&](const document_batch& b) -> status {
      std::string_view rows = b.out;
      for (std::size_t i = 0; i < b.size; ++i) {
        const std::size_t end = rows.find('\n');
        const std::string_view row = rows.substr(0, end);
        rows.remove_prefix(end + 1);
        if (skip > 0) {
          --skip;
          continue;
        }
        const std::size_t tab = row.find('\t');
        std::optional<uint64_t> value;
        if (tab > 0) {
          if (auto hex = parse_hex(row.substr(0, tab))) value = *hex;
        }
        if (auto st = sink->write(b.docs[i].id, value, row.substr(tab + 1)); !st) return st;
        ++written_rows;
      }
      return {};
    };
    io.commit = [&] { return sink->finish(); };
  }
  const int rc = run_document_job("fingerprint", cmd.input, cmd.run, process, &io);
  if (sink && !cmd.run.quiet && (rc == exit_ok || rc == exit_partial)) {
    // Nothing else says where the fingerprints went.
    const std::string resumed =
        already > 0 ? ", after the " + std::to_string(already) + " rows an earlier try wrote" : "";
    std::fprintf(stderr, "simdup fingerprint: %llu rows written to table %s (run %s%s)\n",
                 static_cast<unsigned long long>(written_rows), db.sink.table.c_str(),
                 db.sink.run.c_str(), resumed.c_str());
  }
  return rc;
}

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
  if (auto st = cmd.db.validate(!cmd.input.inputs.empty()); !st) {
    print_error("fingerprint", st.error().message);
    return exit_usage;
  }
  const bool tsv = cmd.run.format == "tsv";
  const bool compat_value = options->compat == compat_mode::python_simhash;
  const bool to_table = cmd.db.writes_database();
  const batch_processor process = [&](document_batch& b) {
    for (std::size_t i = 0; i < b.size; ++i) {
      const document& doc = b.docs[i];
      const fingerprinter& fp = set.for_document(doc);
      const fingerprint_result r =
          doc.features ? fp.fingerprint_features(*doc.features) : fp.fingerprint(doc.text);
      b.invalid_utf8 += r.invalid_utf8;
      if (r.status != fingerprint_status::ok) ++b.too_short;
      if (to_table) {
        format_row(b.out, r);
      } else {
        format_line(b.out, doc, r, tsv, compat_value);
      }
    }
  };
  if (cmd.db.reads_database() || to_table) return run_with_database(cmd, process);
  return run_document_job("fingerprint", cmd.input, cmd.run, process);
}

void setup_fingerprint(CLI::App& app, int& rc) {
  auto cmd = std::make_shared<fingerprint_command>();
  CLI::App* sub = app.add_subcommand(
      "fingerprint",
      "Print a 64-bit SimHash fingerprint for each input record, in input order: JSONL "
      "{\"id\": <id as given>, \"fingerprint\": \"<16 hex>\"} (fingerprint null and \"status\": "
      "\"too_short\" for documents without features), or id<TAB>hex with --format tsv");
  add_input_options(*sub, cmd->input);
  add_fingerprint_options(*sub, cmd->fp);
  add_run_options(*sub, cmd->run);
  add_database_source_options(*sub, cmd->db);
  add_database_sink_options(*sub, cmd->db, false);
  sub->callback([cmd, &rc] { rc = run_fingerprint(*cmd); });
}

SIMDUP_REGISTER_COMMAND(10, setup_fingerprint);

}  // namespace
}  // namespace simdup::cli
