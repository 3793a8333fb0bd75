// `simdup pairs`: every pair of fingerprints within distance k, as JSONL.
#include <simdup/all_pairs.hpp>
#include <simdup/json.hpp>

#include <cstdio>

#include "command.hpp"
#include "document_job.hpp"
#include "fingerprint_input.hpp"
#include "index_options.hpp"

namespace simdup::cli {
namespace {

/// Buffered stdout; stops quietly when the reader goes away (EPIPE).
class output {
 public:
  bool write(const std::string& s) {
    if (failed_) return false;
    failed_ = std::fwrite(s.data(), 1, s.size(), stdout) != s.size();
    return !failed_;
  }
  bool finish() { return !failed_ && std::fflush(stdout) == 0; }

 private:
  bool failed_ = false;
};

void print_stats(const all_pairs_stats& s) {
  std::fprintf(stderr, "%scandidates: %llu\npairs: %llu\n", s.plan.describe().c_str(),
               static_cast<unsigned long long>(s.candidates),
               static_cast<unsigned long long>(s.pairs));
}

int run_pairs(const index_cli_options& opts) {
  auto options = opts.resolve();
  if (!options) {
    print_error("pairs", options.error().message);
    return exit_usage;
  }
  auto list = read_fingerprints(opts.inputs, opts.binary, opts.decimal);
  if (!list) {
    print_error("pairs", list.error().message);
    return exit_failure;
  }
  output out;
  std::string buf;
  auto run = all_pairs(list->fingerprints, *options, [&](std::span<const index_pair> pairs) {
    for (const index_pair& p : pairs) {
      buf.append("{\"a\":");
      list->append_id(buf, p.a);
      buf.append(",\"b\":");
      list->append_id(buf, p.b);
      buf.append(",\"distance\":");
      json::append_int(buf, p.distance);
      buf.append("}\n");
    }
    const bool ok = out.write(buf);
    buf.clear();
    return ok;
  });
  if (!run) {
    print_error("pairs", run.error().message);
    return run.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  out.finish();  // a closed pipe is not an error
  if (opts.stats) print_stats(*run);
  return exit_ok;
}

void setup(CLI::App& app, int& rc) {
  static index_cli_options opts;
  auto* cmd = app.add_subcommand(
      "pairs",
      "Every pair of fingerprints within Hamming distance k: JSONL {\"a\": id, \"b\": id, "
      "\"distance\": d}, each unordered pair once (a is the earlier input), in no fixed order");
  add_index_options(*cmd, opts);
  cmd->callback([&rc] { rc = run_pairs(opts); });
}

SIMDUP_REGISTER_COMMAND(40, setup);

}  // namespace
}  // namespace simdup::cli
