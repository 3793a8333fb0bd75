// Subcommand registry: each cli/cmd_*.cpp registers itself, so adding a command touches no
// shared file. main.cpp builds the CLI11 app from the registry.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace simdup::cli {

/// Documented exit codes (docs/cli.md).
enum exit_code : int {
  exit_ok = 0,       ///< success
  exit_failure = 1,  ///< a runtime error: bad input with --on-error fail, I/O failure
  exit_usage = 2,    ///< bad command line (unknown flag, missing argument)
  exit_partial = 3,  ///< finished, but skipped records (--on-error skip) or had warnings
};

/// Adds one subcommand to `app`. The subcommand's callback stores its exit code in `rc`.
using command_setup = std::function<void(CLI::App& app, int& rc)>;

struct command_registration {
  /// `order` sorts commands in --help (lower first).
  command_registration(int order, command_setup setup);
};

}  // namespace simdup::cli

#define SIMDUP_CLI_CAT2(a, b) a##b
#define SIMDUP_CLI_CAT(a, b) SIMDUP_CLI_CAT2(a, b)
/// Registers a subcommand from a cli/cmd_*.cpp file.
#define SIMDUP_REGISTER_COMMAND(order, setup_fn)                                             \
  static const ::simdup::cli::command_registration SIMDUP_CLI_CAT(simdup_cmd_, __COUNTER__)( \
      order, setup_fn)
