// `simdup clusters`: documents in clusters of two or more, with their representative.
#include <simdup/clusters.hpp>
#include <simdup/json.hpp>
#include <simdup/output_sink.hpp>

#include <cstdio>

#include "command.hpp"
#include "document_job.hpp"
#include "index_options.hpp"

namespace simdup::cli {
namespace {

struct clusters_options {
  index_cli_options index;
  std::string clusters = "components";  ///< --clusters, as in `simdup dedup`
  std::string old_mode;                 ///< --mode, the option's former name: a usage error
};

int run_clusters(const clusters_options& opts) {
  if (!opts.old_mode.empty()) {
    // `dedup --mode` is stream|batch; this option was renamed so that one name means one thing.
    print_error("clusters", "--mode was renamed --clusters (components|star), as in simdup dedup");
    return exit_usage;
  }
  auto clustering = parse_linking(opts.clusters);
  if (!clustering) {
    print_error("clusters", flag_message(clustering.error()));
    return exit_usage;
  }
  auto options = opts.index.resolve(*clustering);
  auto limit = opts.index.limit_bytes();
  if (!options || !limit) {
    print_error("clusters", (options ? limit.error() : options.error()).message);
    return exit_usage;
  }
  return_large_blocks_when_freed(*limit);
  auto list = read_fingerprint_list(opts.index.inputs, opts.index.list_options(*limit));
  if (!list) {
    print_error("clusters", list.error().message);
    return exit_failure;
  }
  const std::size_t n = list->size();
  auto out = output_sink::open(opts.index.output);
  if (!out) {
    print_error("clusters", out.error().message);
    return exit_failure;
  }
  cluster_builder builder(n, *clustering);
  // The union-find forest, which becomes the representatives, and a bit per fingerprint for
  // "has members" (star and centers also keep their pairs, which the limit does not bound).
  const uint64_t clustering_bytes = uint64_t{4} * n + n / 8 + 1;
  auto run = pairs_within("clusters", *list, *options, *limit, clustering_bytes, opts.index.quiet,
                          [&](std::span<const index_pair> pairs) {
                            builder.add(pairs);
                            return true;
                          });
  if (!run) {
    print_error("clusters", run.error().message);
    return run.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  const std::vector<uint32_t> rep = builder.finish();
  std::vector<bool> has_members(n);
  for (std::size_t i = 0; i < n; ++i)
    if (rep[i] != i) has_members[rep[i]] = true;
  std::string buf;
  status written;
  for (std::size_t i = 0; i < n && written && !out->broken_pipe(); ++i) {
    if (rep[i] == i && !has_members[i]) continue;  // a cluster of one
    buf.append("{\"id\":");
    written = list->append_id(buf, i);
    buf.append(",\"cluster\":");
    if (written) written = list->append_id(buf, rep[i]);
    buf.append("}\n");
    if (written && buf.size() >= (1u << 20)) {
      written = out->write(buf);
      buf.clear();
    }
  }
  if (written) written = out->write(buf);
  if (written) written = out->commit();
  if (out->broken_pipe()) return exit_ok;  // the reader of our output has all it wanted
  if (!written) {
    print_error("clusters", written.error().message);
    return exit_failure;
  }
  if (opts.index.stats)
    std::fprintf(stderr, "%spairs: %llu\n", run->plan.describe().c_str(),
                 static_cast<unsigned long long>(run->pairs));
  return report_skipped("clusters", *list, opts.index.inputs, opts.index.quiet);
}

void setup_clusters(CLI::App& app, int& rc) {
  static clusters_options opts;
  auto* cmd = app.add_subcommand(
      "clusters",
      "Clusters of near-duplicate fingerprints: JSONL {\"id\": ..., \"cluster\": <id of its "
      "representative>} for documents in clusters of two or more, in input order");
  add_index_options(*cmd, opts.index);
  cmd->add_option("--clusters", opts.clusters,
                  "components: connected components of the pair graph (chains merge); star: "
                  "each document joins the first earlier representative within k; centers: "
                  "clusters around the most linked documents, every member within k of its "
                  "cluster's center")
      ->capture_default_str()
      ->check(CLI::IsMember({"components", "star", "centers"}));
  cmd->add_option("--mode", opts.old_mode, "Former name of --clusters")->group("");
  cmd->callback([&rc] { rc = run_clusters(opts); });
}

SIMDUP_REGISTER_COMMAND(41, setup_clusters);

}  // namespace
}  // namespace simdup::cli
