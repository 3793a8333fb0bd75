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

/// The deepest subcommand parsed so far ("idf build": build), or the root.
const CLI::App& parsed_command(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

/// "simdup dedup", "simdup idf build": how messages name the command.
std::string command_prefix(const CLI::App& app) {
  std::string path = "simdup";
  for (const CLI::App* at = &parsed_command(app); at->get_parent() != nullptr;
       at = at->get_parent()) {
    path.insert(6, " " + at->get_name());
  }
  return path;
}

/// Every bad command line ends with this line, whichever check found it (CLI11's or a
/// command's own), so that no usage error leaves the user without the way to the options.
std::string usage_hint(const CLI::App& app) {
  return "Run `" + command_prefix(app) + " --help` for the options.\n";
}

/// Edit distance with adjacent transpositions (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

/// The flag of `cmd` an unknown `arg` ("--verfy", "--verfy=off") most likely meant, or "": a
/// flag the argument begins (--max-record for --max-record-mb), else the closest within a
/// third of its length (at least 2 edits).
std::string closest_flag(const CLI::App& cmd, std::string arg) {
  if (const auto eq = arg.find('='); eq != std::string::npos) arg.resize(eq);
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, arg.size() / 3) + 1;
  for (const CLI::Option* opt : cmd.get_options()) {
    std::vector<std::string> names;
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
    for (const std::string& name : names) {
      const std::size_t d = arg.size() >= 4 && name.starts_with(arg) ? 0 : edit_distance(arg, name);
      if (d < best_distance) {
        best_distance = d;
        best = name;
      }
    }
  }
  return best;
}

/// CLI11's message, made to say what the user can do: a "did you mean" for unknown flags, and
/// for a value that is not of the option's type ("Could not convert: --top = -3") what is
/// expected.
std::string explained_error(const CLI::App& root, const CLI::Error& e) {
  const CLI::App& cmd = parsed_command(root);
  std::string message = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    for (const std::string& arg : cmd.remaining(false)) {
      if (arg.size() < 2 || arg[0] != '-') continue;
      if (const std::string flag = closest_flag(cmd, arg); !flag.empty()) {
        message += "; did you mean " + flag + "?";
        break;
      }
    }
  }
  constexpr std::string_view convert = "Could not convert: ";
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr && message.starts_with(convert)) {
    const std::size_t eq = message.find(" = ");
    if (eq != std::string::npos) {
      const std::string name = message.substr(convert.size(), eq - convert.size());
      const std::string value = message.substr(eq + 3);
      const CLI::Option* opt = cmd.get_option_no_throw(name);
      const std::string type = opt ? opt->get_type_name() : "";
      const char* expected = type == "UINT"    ? "a non-negative integer"
                             : type == "INT"   ? "an integer"
                             : type == "FLOAT" ? "a number"
                                               : nullptr;
      if (expected) message = name + ": '" + value + "' is not " + expected;
    }
  }
  return message;
}

/// CLI11 reads "-3" into a std::size_t option as a huge number (strtoull wraps it around): every
/// unsigned option of `app` and its subcommands refuses a sign instead.
void refuse_negative_counts(CLI::App& app) {
  const CLI::Validator unsigned_count(
      [](std::string& value) -> std::string {
        return value.starts_with('-') ? value + " is negative; expected a non-negative integer"
                                      : std::string();
      },
      "");
  for (CLI::Option* opt : app.get_options({})) {
    if (opt->get_type_name() == "UINT") opt->check(unsigned_count);
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_counts(*sub);
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
    return command_prefix(*root) + ": error: " + explained_error(*root, e) + "\n" +
           usage_hint(*root);
  });

  int rc = exit_ok;
  auto& cmds = registry();
  std::stable_sort(cmds.begin(), cmds.end(),
                   [](const registered& a, const registered& b) { return a.order < b.order; });
  for (auto& c : cmds) c.setup(app, rc);
  refuse_negative_counts(app);

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
  // A command's own checks of its options (--verify, --keep, a missing --out, ...) have
  // printed their error; the hint follows it here, as it does CLI11's.
  if (rc == exit_usage) std::cerr << usage_hint(app);
  return rc;
}
