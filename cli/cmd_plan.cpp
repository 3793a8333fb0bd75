// `simdup plan`: the index layout the planner chooses, and its costs.
#include <simdup/json.hpp>
#include <simdup/plan.hpp>

#include <cstdio>

#include "command.hpp"
#include "document_job.hpp"
#include "index_options.hpp"

namespace simdup::cli {
namespace {

struct plan_options {
  uint64_t n = 0;
  int k = 3;
  std::string memory;
  std::string purpose = "batch";
  std::string blocks;
  bool json = false;
};

int run_plan(const plan_options& o) {
  const plan_purpose purpose = o.purpose == "online" ? plan_purpose::online : plan_purpose::batch;
  result<index_plan> plan = make_error(errc::internal, "no plan");
  if (!o.blocks.empty()) {
    auto layout = index_layout::parse(o.k, o.blocks);
    if (!layout) {
      print_error("plan", "--blocks: " + layout.error().message);
      return exit_usage;
    }
    plan = evaluate_layout(*layout, o.n, purpose);
  } else {
    uint64_t memory = 0;
    if (!o.memory.empty()) {
      auto m = parse_bytes(o.memory);
      if (!m) {
        print_error("plan", m.error().message);
        return exit_usage;
      }
      memory = *m;
    }
    plan = make_plan({.n = o.n, .k = o.k, .memory = memory, .purpose = purpose});
  }
  if (!plan) {
    print_error("plan", plan.error().message);
    return plan.error().code == errc::too_large ? exit_failure : exit_usage;
  }
  if (!o.json) {
    std::fputs(plan->describe().c_str(), stdout);
    return exit_ok;
  }
  std::string out;
  json::writer w(out);
  w.begin_object()
      .key("purpose")
      .value(o.purpose)
      .key("n")
      .value(plan->n)
      .key("k")
      .value(plan->layout.k)
      .key("blocks")
      .value(plan->layout.describe())
      .key("tables")
      .value(static_cast<uint64_t>(plan->tables))
      .key("min_prefix_bits")
      .value(plan->min_prefix_bits)
      .key("max_prefix_bits")
      .value(plan->max_prefix_bits)
      .key("candidates_per_probe")
      .value(plan->candidates_per_probe)
      .key("bytes_per_entry")
      .value(plan->bytes_per_entry)
      .end_object();
  out.push_back('\n');
  std::fputs(out.c_str(), stdout);
  return exit_ok;
}

void setup_plan(CLI::App& app, int& rc) {
  static plan_options opts;
  auto* cmd = app.add_subcommand("plan",
                                 "Show the Hamming index layout chosen for N fingerprints "
                                 "and distance k, with its costs");
  cmd->add_option("--n", opts.n, "Number of fingerprints (batch) or live entries (online)")
      ->required();
  cmd->add_option("-k,--k", opts.k, "Largest Hamming distance (inclusive)")
      ->capture_default_str()
      ->check(distance_k(max_index_k));
  auto* blocks = cmd->add_option("--blocks", opts.blocks,
                                 "Evaluate this layout instead of planning (syntax as in pairs)");
  cmd->add_option("--memory", opts.memory, "Memory budget, bytes with optional K/M/G/T suffix")
      ->excludes(blocks);
  cmd->add_option("--purpose", opts.purpose,
                  "batch (all pairs, one table at a time) or online (resident index)")
      ->capture_default_str()
      ->check(CLI::IsMember({"batch", "online"}));
  cmd->add_flag("--json", opts.json, "Print JSON instead of text");
  cmd->callback([&rc] { rc = run_plan(opts); });
}

SIMDUP_REGISTER_COMMAND(42, setup_plan);

}  // namespace
}  // namespace simdup::cli
