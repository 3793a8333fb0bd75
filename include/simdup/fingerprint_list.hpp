// Reads fingerprint lists (the input of pairs and clusters): the JSONL or TSV that a fingerprint
// run writes (records whose status is not ok are skipped), one fingerprint per line (16 hex
// digits, else decimal; id = line number), or little-endian uint64 (binary; id = 0-based
// position). The text format is detected per input from its first non-blank line.
//
// Under a memory budget a list does not hold everything: binary input files are read in place
// (scan() reads them again on each pass), and text beyond the budget goes to files in a
// private directory under the spill directory (the fingerprints as little-endian uint64, the
// ids' JSON and their end offsets), removed when the list is destroyed.
#pragma once

#include <simdup/error.hpp>
#include <simdup/fingerprint_scan.hpp>
#include <simdup/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace simdup {

/// Fingerprints with their ids, ready to print as JSON.
struct fingerprint_list {
  /// With skip_bad: malformed lines and inputs that could not be read, each counted once, and
  /// the first few messages (SOURCE:LINE: reason, or the input's error).
  uint64_t skipped_lines = 0;
  uint64_t skipped_inputs = 0;
  std::vector<std::string> skip_messages;

  /// The fingerprints, when the list is in memory (on_files() false).
  std::vector<uint64_t> fingerprints;
  /// JSON text of each id, concatenated; id i is ids[id_end[i-1] .. id_end[i]). Empty for
  /// binary input, whose ids are the positions, and when the ids are on files.
  std::string ids;
  std::vector<uint64_t> id_end;

  /// True when the fingerprints are read from files (input files in place, or spilled).
  bool on_files() const noexcept { return files_ != nullptr; }
  /// Number of fingerprints.
  uint64_t size() const noexcept;
  /// Bytes written to the spill directory (0 when nothing was spilled).
  uint64_t spilled_bytes() const noexcept;
  /// Every fingerprint in order, from memory or from the files.
  fingerprint_scan scan() const;

  /// Appends id `i` as JSON; an error only when a spilled id cannot be read back.
  status append_id(std::string& out, std::size_t i) const {
    if (files_) return append_spilled_id(out, i);
    if (id_end.empty()) {
      json::append_uint(out, i);
      return {};
    }
    const std::size_t begin = i == 0 ? 0 : id_end[i - 1];
    out.append(ids, begin, id_end[i] - begin);
    return {};
  }

  struct files;  ///< internal: the files behind a list on files
  std::shared_ptr<files> files_;

 private:
  status append_spilled_id(std::string& out, std::size_t i) const;
};

struct fingerprint_list_options {
  /// Little-endian uint64 values instead of text; positions continue across inputs.
  bool binary = false;
  /// Plain lines are decimal numbers (a 16-digit decimal number is otherwise read as hex).
  bool decimal = false;
  /// Malformed lines and unreadable inputs are counted in the list instead of failing.
  bool skip_bad = false;
  /// Bytes the list may hold in memory; 0 (default): no limit, everything in memory. With a
  /// budget, binary input files are not loaded but read in place, and text past the budget
  /// is spilled under `spill_dir`.
  uint64_t memory_budget = 0;
  /// Where a private spill directory is made (default: $TMPDIR, else /tmp).
  std::string spill_dir;
};

/// Reads `inputs` ("-" = stdin; globs expanded as by expand_inputs) in order. Errors are
/// "SOURCE:LINE: reason" (errc::invalid_input) or the input's own (not_found, io_error, ...);
/// a spill that cannot be written (a full disk) is io_error naming the directory and the
/// bytes it needed.
result<fingerprint_list> read_fingerprint_list(std::span<const std::string> inputs,
                                               const fingerprint_list_options& options);

}  // namespace simdup
