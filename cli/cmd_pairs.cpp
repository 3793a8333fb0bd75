// `simdup pairs`: every pair of fingerprints within distance k, as JSONL.
#include <simdup/all_pairs.hpp>
#include <simdup/json.hpp>
#include <simdup/output_sink.hpp>

#include <cstdio>

#include "command.hpp"
#include "document_job.hpp"
#include "index_options.hpp"

namespace simdup::cli {
namespace {

void print_stats(const all_pairs_stats& s, const fingerprint_list& list) {
  std::fprintf(stderr,
               "%scandidates: %llu\npairs: %llu\npasses: %llu\nworking bytes: %llu\nspilled "
               "bytes: %llu\n",
               s.plan.describe().c_str(), static_cast<unsigned long long>(s.candidates),
               static_cast<unsigned long long>(s.pairs), static_cast<unsigned long long>(s.passes),
               static_cast<unsigned long long>(s.working_bytes),
               static_cast<unsigned long long>(list.spilled_bytes()));
}

int run_pairs(const index_cli_options& opts) {
  auto options = opts.resolve();
  auto limit = opts.limit_bytes();
  if (!options || !limit) {
    print_error("pairs", (options ? limit.error() : options.error()).message);
    return exit_usage;
  }
  return_large_blocks_when_freed(*limit);
  auto list = read_fingerprint_list(opts.inputs, opts.list_options(*limit));
  if (!list) {
    print_error("pairs", list.error().message);
    return exit_failure;
  }
  auto out = output_sink::open(opts.output);
  if (!out) {
    print_error("pairs", out.error().message);
    return exit_failure;
  }
  std::string buf;
  std::string write_error;
  auto sink = [&](std::span<const index_pair> pairs) {
    for (const index_pair& p : pairs) {
      buf.append("{\"a\":");
      status id = list->append_id(buf, p.a);
      buf.append(",\"b\":");
      if (id) id = list->append_id(buf, p.b);
      if (!id) {
        write_error = id.error().message;
        return false;
      }
      buf.append(",\"distance\":");
      json::append_int(buf, p.distance);
      buf.append("}\n");
    }
    if (auto w = out->write(buf); !w) write_error = w.error().message;
    buf.clear();
    return write_error.empty() && !out->broken_pipe();  // a closed pipe ends the run quietly
  };
  auto run = pairs_within("pairs", *list, *options, *limit, 0, opts.quiet, sink);
  if (!run) {
    print_error("pairs", run.error().message);
    return run.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  if (write_error.empty()) {
    if (auto c = out->commit(); !c) write_error = c.error().message;
  }
  if (out->broken_pipe()) return exit_ok;
  if (!write_error.empty()) {
    print_error("pairs", write_error);
    return exit_failure;
  }
  if (opts.stats) print_stats(*run, *list);
  return report_skipped("pairs", *list, opts.inputs, opts.quiet);
}

void setup_pairs(CLI::App& app, int& rc) {
  static index_cli_options opts;
  auto* cmd = app.add_subcommand(
      "pairs",
      "Every pair of fingerprints within Hamming distance k: JSONL {\"a\": id, \"b\": id, "
      "\"distance\": d}, each unordered pair once (a is the earlier input), in no fixed order");
  add_index_options(*cmd, opts);
  cmd->callback([&rc] { rc = run_pairs(opts); });
}

SIMDUP_REGISTER_COMMAND(40, setup_pairs);

}  // namespace
}  // namespace simdup::cli
