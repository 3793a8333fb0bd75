// `simdup clusters`: documents in clusters of two or more, with their representative.
#include <simdup/clusters.hpp>
#include <simdup/json.hpp>

#include <cstdio>

#include "command.hpp"
#include "document_job.hpp"
#include "fingerprint_input.hpp"
#include "index_options.hpp"

namespace simdup::cli {
namespace {

struct clusters_options {
  index_cli_options index;
  std::string mode = "components";
};

int run_clusters(const clusters_options& opts) {
  auto options = opts.index.resolve();
  if (!options) {
    print_error("clusters", options.error().message);
    return exit_usage;
  }
  auto list = read_fingerprints(opts.index.inputs, opts.index.binary, opts.index.decimal);
  if (!list) {
    print_error("clusters", list.error().message);
    return exit_failure;
  }
  const std::size_t n = list->fingerprints.size();
  cluster_builder builder(n, opts.mode == "star" ? cluster_mode::star : cluster_mode::components);
  auto run = all_pairs(list->fingerprints, *options, [&](std::span<const index_pair> pairs) {
    builder.add(pairs);
    return true;
  });
  if (!run) {
    print_error("clusters", run.error().message);
    return run.error().code == errc::invalid_argument ? exit_usage : exit_failure;
  }
  const std::vector<uint32_t> rep = builder.finish();
  std::vector<uint32_t> size(n, 0);
  for (uint32_t r : rep) ++size[r];
  std::string buf;
  bool ok = true;
  for (std::size_t i = 0; i < n && ok; ++i) {
    if (size[rep[i]] < 2) continue;
    buf.append("{\"id\":");
    list->append_id(buf, i);
    buf.append(",\"cluster\":");
    list->append_id(buf, rep[i]);
    buf.append("}\n");
    if (buf.size() >= (1u << 20)) {
      ok = std::fwrite(buf.data(), 1, buf.size(), stdout) == buf.size();
      buf.clear();
    }
  }
  if (ok) std::fwrite(buf.data(), 1, buf.size(), stdout);
  std::fflush(stdout);
  if (opts.index.stats)
    std::fprintf(stderr, "%spairs: %llu\n", run->plan.describe().c_str(),
                 static_cast<unsigned long long>(run->pairs));
  return exit_ok;
}

void setup(CLI::App& app, int& rc) {
  static clusters_options opts;
  auto* cmd = app.add_subcommand(
      "clusters",
      "Clusters of near-duplicate fingerprints: JSONL {\"id\": ..., \"cluster\": <id of its "
      "representative>} for documents in clusters of two or more, in input order");
  add_index_options(*cmd, opts.index);
  cmd->add_option("--mode", opts.mode,
                  "components: connected components of the pair graph (chains merge); star: "
                  "each document joins the first earlier representative within k")
      ->capture_default_str()
      ->check(CLI::IsMember({"components", "star"}));
  cmd->callback([&rc] { rc = run_clusters(opts); });
}

SIMDUP_REGISTER_COMMAND(41, setup);

}  // namespace
}  // namespace simdup::cli
