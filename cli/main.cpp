#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"

namespace simdup::cli {
namespace {

struct registered {
  int order;
  command_setup setup;
};

std::vector<registered>& registry() {
  static std::vector<registered> commands;
  return commands;
}

}  // namespace

command_registration::command_registration(int order, command_setup setup) {
  registry().push_back({order, std::move(setup)});
}

namespace {

/// "dedup", "idf build": the subcommands parsed so far, for error messages.
std::string command_path(const CLI::App& app) {
  std::string path;
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) {
    at = at->get_subcommands().front();
    path += (path.empty() ? "" : " ") + at->get_name();
  }
  return path;
}

}  // namespace

}  // namespace simdup::cli

int main(int argc, char** argv) {
  using namespace simdup::cli;
  // A closed pipe (`simdup ... | head`) ends output quietly: writes fail with EPIPE instead.
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"simdup: near-duplicate text detection with 64-bit SimHash fingerprints", "simdup"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "simdup 0.1.0");
  app.footer("Run `simdup COMMAND --help` for a command's options. Docs: docs/cli.md");
  // Command-line errors read like every other error: "simdup COMMAND: error: ..." (exit 2).
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    const CLI::App* root = failed;
    while (root->get_parent() != nullptr) root = root->get_parent();
    const std::string command = command_path(*root);
    const std::string prefix = command.empty() ? "simdup" : "simdup " + command;
    return prefix + ": error: " + e.what() + "\nRun `" + prefix + " --help` for the options.\n";
  });

  int rc = exit_ok;
  auto& cmds = registry();
  std::stable_sort(cmds.begin(), cmds.end(),
                   [](const registered& a, const registered& b) { return a.order < b.order; });
  for (auto& c : cmds) c.setup(app, rc);

  // CLI11 alone answers "A subcommand is required" for a misspelt command; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->check_name(argv[1]);
    }
    if (!known) {
      std::cerr << "simdup: error: unknown command '" << argv[1] << "' (commands: " << names
                << "); run `simdup --help`\n";
      return exit_usage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? exit_ok : exit_usage;
  }
  std::cout.flush();
  return rc;
}
