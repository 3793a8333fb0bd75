// Flags shared by `simdup pairs` and `simdup clusters`, defined once with their help.
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/detection.hpp>
#include <simdup/fingerprint_list.hpp>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "document_job.hpp"
#include "options.hpp"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

namespace simdup::cli {

/// "123", "64K", "512M", "24G", "1T" (powers of 1024) to bytes.
inline result<uint64_t> parse_bytes(std::string_view text, std::string_view flag = "--memory") {
  const auto bad =
      make_error(errc::invalid_argument,
                 std::string(flag) + ": expected bytes, optionally with K, M, G or T, got '" +
                     std::string(text) + "'");
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

/// The default --memory-limit: half of physical memory (the other half for the page cache
/// that the passes read the input from, and for other processes).
inline uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2
                               : uint64_t{4} << 30;
}

/// Under a memory limit (`limit` != 0), blocks of 1 MiB and more are mapped on their own, so
/// that freeing one returns it to the system. glibc raises that threshold to up to 32 MiB after
/// the first such block is freed; then the buffers a phase frees stay in the heap, resident and
/// fragmented (at 2M documents, 45 MB above a 256 MiB limit). A process-wide setting: the
/// CLI's to make, not the library's.
inline void return_large_blocks_when_freed(uint64_t limit) {
#if defined(__GLIBC__)
  if (limit != 0) ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
#else
  (void)limit;
#endif
}

struct index_cli_options {
  std::vector<std::string> inputs;
  int k = 3;
  std::string blocks;
  std::string memory;
  std::string memory_limit;  ///< --memory-limit SIZE; empty: default_memory_limit(); 0: none
  std::string tmp_dir;       ///< --tmp-dir DIR; empty: $TMPDIR, else /tmp
  unsigned threads = 0;
  bool binary = false;
  bool decimal = false;
  bool stats = false;
  std::string output = "-";       ///< -o/--output FILE ("-" = stdout), written atomically
  std::string on_error = "fail";  ///< --on-error fail|skip: malformed lines, unreadable inputs
  bool quiet = false;             ///< -q/--quiet: no skipped-line messages on stderr

  /// --memory-limit in bytes (0: none).
  result<uint64_t> limit_bytes() const {
    if (memory_limit.empty()) return default_memory_limit();
    return parse_bytes(memory_limit, "--memory-limit");
  }

  /// How the inputs are read (--binary, --decimal, --on-error), and under a limit of `limit`
  /// bytes (0: none) how much of them stays in memory (a quarter: the rest is for the passes).
  fingerprint_list_options list_options(uint64_t limit = 0) const {
    return {.binary = binary,
            .decimal = decimal,
            .skip_bad = on_error == "skip",
            .memory_budget = limit / 4,
            .spill_dir = tmp_dir};
  }

  /// The search for the fingerprints-only detection profile of -k and `clustering`.
  result<all_pairs_options> resolve(
      cluster_linking clustering = cluster_linking::components) const {
    const auto profile = detection_profile::for_fingerprints(k, clustering);
    if (auto st = profile.validate(); !st) return with_flags(st.error());
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
  cmd.add_option("--memory-limit", o.memory_limit,
                 "Most memory the run holds, bytes with optional K/M/G/T suffix (0: no limit; "
                 "default: half of physical memory). Past it, the input stays on disk (binary "
                 "files in place, text spilled under --tmp-dir) and is read in several passes; "
                 "the pairs are the same");
  cmd.add_option("--tmp-dir", o.tmp_dir,
                 "Directory for spilled input (default: $TMPDIR, else /tmp); a private "
                 "directory in it is removed at the end");
  add_threads_option(cmd, o.threads);
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

/// Runs all_pairs over the list within `limit` bytes (0: none), of which the list's in-memory
/// part and `reserved` (the caller's own state) are already taken: a list in memory is paired
/// from memory, a list on files in passes over them. Unless quiet, passes after the first are
/// announced on stderr.
inline result<all_pairs_stats> pairs_within(const char* command, const fingerprint_list& list,
                                            all_pairs_options options, uint64_t limit,
                                            uint64_t reserved, bool quiet, const pair_sink& sink) {
  if (limit != 0) {
    options.memory_limit = limit;
    options.memory_taken =
        reserved + list.fingerprints.size() * 8 + list.ids.size() + list.id_end.size() * 8;
    if (!quiet)
      options.on_pass = [command](uint64_t pass, uint64_t passes) {
        if (passes > 1)
          std::fprintf(stderr, "simdup %s: pass %llu of %llu\n", command,
                       static_cast<unsigned long long>(pass),
                       static_cast<unsigned long long>(passes));
      };
  }
  auto run = list.on_files() ? all_pairs(list.scan(), options, sink)
                             : all_pairs(list.fingerprints, options, sink);
  if (!run) return with_flags(std::move(run).error());
  return run;
}

/// After a run of `pairs` or `clusters`: reports what --on-error skip skipped, or that the
/// inputs held no fingerprints (unless quiet), and returns the exit code, exit_partial when
/// anything was skipped.
inline int report_skipped(const char* command, const fingerprint_list& list,
                          const std::vector<std::string>& inputs, bool quiet) {
  if (list.skipped_lines + list.skipped_inputs == 0) {
    if (!quiet && list.size() == 0) {
      std::fprintf(stderr, "simdup %s: warning: no fingerprints in %s; the output is empty\n",
                   command, describe_inputs(inputs).c_str());
    }
    return exit_ok;
  }
  if (!quiet) {
    for (const std::string& m : list.skip_messages)
      std::fprintf(stderr, "simdup %s: skipped %s\n", command, m.c_str());
    std::fprintf(stderr, "simdup %s: %llu fingerprints, %llu lines skipped, %llu inputs skipped\n",
                 command, static_cast<unsigned long long>(list.size()),
                 static_cast<unsigned long long>(list.skipped_lines),
                 static_cast<unsigned long long>(list.skipped_inputs));
  }
  return exit_partial;
}

}  // namespace simdup::cli
