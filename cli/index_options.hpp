// Flags shared by `simdup pairs` and `simdup clusters`, defined once with their help.
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/detection.hpp>
#include <simdup/fingerprint_list.hpp>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

namespace simdup::cli {

/// "123", "64K", "512M", "24G", "1T" (powers of 1024) to bytes.
inline result<uint64_t> parse_bytes(std::string_view text) {
  const auto bad = make_error(
      errc::invalid_argument,
      "--memory: expected bytes, optionally with K, M, G or T, got '" + std::string(text) + "'");
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p == text.data() || end - p > 1) return bad;
  int shift = 0;
  if (p != end) {
    switch (*p) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        return bad;
    }
  }
  if (value > (UINT64_MAX >> shift)) return bad;
  return value << shift;
}

struct index_cli_options {
  std::vector<std::string> inputs;
  int k = 3;
  std::string blocks;
  std::string memory;
  unsigned threads = 0;
  bool binary = false;
  bool decimal = false;
  bool stats = false;
  std::string output = "-";       ///< -o/--output FILE ("-" = stdout), written atomically
  std::string on_error = "fail";  ///< --on-error fail|skip: malformed lines, unreadable inputs
  bool quiet = false;             ///< -q/--quiet: no skipped-line messages on stderr

  /// How the inputs are read (--binary, --decimal, --on-error).
  fingerprint_list_options list_options() const { return {binary, decimal, on_error == "skip"}; }

  /// The search for the fingerprints-only detection profile of -k and `clustering`.
  result<all_pairs_options> resolve(
      cluster_linking clustering = cluster_linking::components) const {
    const auto profile = detection_profile::for_fingerprints(k, clustering);
    if (auto st = profile.validate(); !st) {
      return make_error(st.error().code, flag_message(st.error().message));
    }
    all_pairs_options o = profile.pair_search();
    o.threads = threads;
    if (!blocks.empty()) {
      auto l = index_layout::parse(k, blocks);
      if (!l) return make_error(errc::invalid_argument, "--blocks: " + l.error().message);
      o.layout = *l;
    }
    if (!memory.empty()) {
      auto m = parse_bytes(memory);
      if (!m) return std::move(m).error();
      o.memory = *m;
    }
    return o;
  }
};

inline void add_index_options(CLI::App& cmd, index_cli_options& o) {
  cmd.add_option("INPUT", o.inputs,
                 "Fingerprint files: `simdup fingerprint` JSONL or TSV, one fingerprint per line "
                 "(16 hex digits or decimal), or with --binary little-endian uint64; - is "
                 "stdin (default)");
  cmd.add_option("-k,--k", o.k, "Largest Hamming distance reported (inclusive)")
      ->capture_default_str()
      ->check(distance_k(max_index_k));
  auto* blocks = cmd.add_option(
      "--blocks", o.blocks,
      "Block layout instead of the planner's: M (M even blocks), W1,W2,... (bit widths, "
      "most significant first), or either followed by /M2 (two levels)");
  cmd.add_option("--memory", o.memory,
                 "Memory budget for the planner, bytes with optional K/M/G/T suffix")
      ->excludes(blocks);
  cmd.add_option("--threads", o.threads, "Worker threads (0: all cores)")
      ->check(thread_count())
      ->capture_default_str();
  auto* binary = cmd.add_flag("--binary", o.binary,
                              "Inputs are little-endian uint64 fingerprints; id = position");
  cmd.add_flag("--decimal", o.decimal,
               "One-per-line fingerprints are decimal numbers (without it, a line of exactly 16 "
               "digits is read as hex)")
      ->excludes(binary);
  cmd.add_flag("--stats", o.stats, "Print the plan and pair counts on stderr");
  const char* g = "Output and errors";
  cmd.add_option("-o,--output", o.output,
                 "Output file (\"-\": stdout); written to a temporary name, renamed on success")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--on-error", o.on_error,
                 "Malformed lines and unreadable inputs (missing file, glob without matches): "
                 "fail (stop, exit 1) or skip (count, report, exit 3)")
      ->check(CLI::IsMember({"fail", "skip"}))
      ->capture_default_str()
      ->group(g);
  cmd.add_flag("-q,--quiet", o.quiet,
               "No skipped-line messages or summary on stderr (errors only); the exit code "
               "still says lines were skipped")
      ->group(g);
}

/// After a run of `pairs` or `clusters`: reports what --on-error skip skipped, or that the
/// inputs held no fingerprints (unless quiet), and returns the exit code, exit_partial when
/// anything was skipped.
inline int report_skipped(const char* command, const fingerprint_list& list,
                          const std::vector<std::string>& inputs, bool quiet) {
  if (list.skipped_lines + list.skipped_inputs == 0) {
    if (!quiet && list.fingerprints.empty()) {
      std::fprintf(stderr, "simdup %s: warning: no fingerprints in %s; the output is empty\n",
                   command, describe_inputs(inputs).c_str());
    }
    return exit_ok;
  }
  if (!quiet) {
    for (const std::string& m : list.skip_messages)
      std::fprintf(stderr, "simdup %s: skipped %s\n", command, m.c_str());
    std::fprintf(stderr, "simdup %s: %llu fingerprints, %llu lines skipped, %llu inputs skipped\n",
                 command, static_cast<unsigned long long>(list.fingerprints.size()),
                 static_cast<unsigned long long>(list.skipped_lines),
                 static_cast<unsigned long long>(list.skipped_inputs));
  }
  return exit_partial;
}

}  // namespace simdup::cli
