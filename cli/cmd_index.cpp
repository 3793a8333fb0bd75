// `simdup index`: the dedup index a run leaves in DIR/index (docs/incremental.md): `stats` says
// what one holds, `merge` joins the indexes of several runs into one for later --against runs.
#include <simdup/dedup_index.hpp>
#include <simdup/json.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "document_job.hpp"

namespace simdup::cli {
namespace {

struct index_command {
  std::vector<std::string> inputs;
  std::string out;
  bool json = false;
};

int exit_for(const error_info& e) {
  return e.code == errc::invalid_argument ? exit_usage : exit_failure;
}

int run_stats(const index_command& cmd) {
  auto index = dedup_index::open(cmd.inputs.front());
  if (!index) {
    print_error("index stats", index.error().message);
    return exit_for(index.error());
  }
  const dedup_index& x = **index;
  const auto per_doc = [&](uint64_t bytes) {
    return x.size() ? static_cast<double>(bytes) / static_cast<double>(x.size()) : 0.0;
  };
  const uint64_t other = x.bytes() - x.manifest_bytes() - x.id_bytes() - x.verification_bytes();
  std::string out;
  json::writer w(out);
  w.begin_object().key("index").value(x.directory()).key("version").value(dedup_index_version);
  w.key("documents").value(x.size()).key("bytes").value(x.bytes());
  w.key("bytes_per_document").value(per_doc(x.bytes()));
  w.key("id_bytes_per_document").value(per_doc(x.id_bytes()));
  w.key("verification_bytes_per_document").value(per_doc(x.verification_bytes()));
  w.key("other_bytes_per_document").value(per_doc(other));
  w.key("minhash_bands").value(static_cast<uint64_t>(x.bands()));
  w.key("sources").begin_array();
  for (const std::string& s : x.sources()) w.value(s);
  w.end_array().key("profile").begin_object();
  for (const auto& [name, value] : x.profile()) w.key(name).raw(value);
  w.end_object().end_object();
  out.push_back('\n');
  if (cmd.json) {
    std::fputs(out.c_str(), stdout);
    return exit_ok;
  }
  std::printf("index      %s (version %u, checksums verified)\n", x.directory().c_str(),
              dedup_index_version);
  std::printf("documents  %llu from %zu inputs\n", static_cast<unsigned long long>(x.size()),
              x.sources().size());
  std::printf("bytes      %llu: %.1f per document (ids %.1f, verification data %.1f, other %.1f)\n",
              static_cast<unsigned long long>(x.bytes()), per_doc(x.bytes()), per_doc(x.id_bytes()),
              per_doc(x.verification_bytes()), per_doc(other));
  for (const auto& [name, value] : x.profile()) {
    std::printf("  %-30s %s\n", name.c_str(), value.c_str());
  }
  return exit_ok;
}

int run_merge(const index_command& cmd) {
  std::vector<std::shared_ptr<const dedup_index>> inputs;
  for (const std::string& path : cmd.inputs) {
    auto index = dedup_index::open(path);
    if (!index) {
      print_error("index merge", index.error().message);
      return exit_for(index.error());
    }
    inputs.push_back(std::move(index).value());
  }
  if (auto st = merge_dedup_indexes(inputs, cmd.out); !st) {
    print_error("index merge", st.error().message);
    return exit_for(st.error());
  }
  uint64_t n = 0;
  for (const auto& in : inputs) n += in->size();
  std::printf("simdup index merge: %llu documents of %zu indexes in %s\n",
              static_cast<unsigned long long>(n), inputs.size(), cmd.out.c_str());
  return exit_ok;
}

void setup_index(CLI::App& app, int& rc) {
  CLI::App* sub = app.add_subcommand(
      "index",
      "The dedup index a run writes to DIR/index (for later runs' --against): stats, merge");
  sub->require_subcommand(1);
  auto stats = std::make_shared<index_command>();
  CLI::App* s = sub->add_subcommand(
      "stats",
      "What an index holds: documents, bytes per document, the detection settings; "
      "reads every file and checks its checksum");
  s->add_option("DIR", stats->inputs, "A run's output directory, or an index directory")
      ->required()
      ->expected(1);
  s->add_flag("--json", stats->json, "One JSON object instead of text");
  s->callback([stats, &rc] { rc = run_stats(*stats); });

  auto merge = std::make_shared<index_command>();
  CLI::App* m = sub->add_subcommand(
      "merge",
      "Join the indexes of runs with the same detection settings into one (their "
      "documents in the order given), e.g. the history of monthly dumps");
  m->add_option("DIR", merge->inputs, "Runs' output directories or index directories")->required();
  m->add_option("--out", merge->out, "The merged index directory (must not exist)")->required();
  m->callback([merge, &rc] { rc = run_merge(*merge); });
}

SIMDUP_REGISTER_COMMAND(85, setup_index);

}  // namespace
}  // namespace simdup::cli
