// Flags shared by `simdup pairs` and `simdup clusters`, defined once with their help.
#pragma once

#include <simdup/all_pairs.hpp>

#include <CLI/CLI.hpp>

#include <charconv>
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

  result<all_pairs_options> resolve() const {
    all_pairs_options o;
    o.k = k;
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
      ->check(CLI::Range(0, max_index_k));
  auto* blocks = cmd.add_option(
      "--blocks", o.blocks,
      "Block layout instead of the planner's: M (M even blocks), W1,W2,... (bit widths, "
      "most significant first), or either followed by /M2 (two levels)");
  cmd.add_option("--memory", o.memory,
                 "Memory budget for the planner, bytes with optional K/M/G/T suffix")
      ->excludes(blocks);
  cmd.add_option("--threads", o.threads, "Worker threads (default: all cores)");
  auto* binary = cmd.add_flag("--binary", o.binary,
                              "Inputs are little-endian uint64 fingerprints; id = position");
  cmd.add_flag("--decimal", o.decimal,
               "One-per-line fingerprints are decimal numbers (without it, a line of exactly 16 "
               "digits is read as hex)")
      ->excludes(binary);
  cmd.add_flag("--stats", o.stats, "Print the plan and pair counts on stderr");
}

}  // namespace simdup::cli
