// Reads fingerprint lists (the input of pairs and clusters): the JSONL or TSV that a fingerprint
// run writes (records whose status is not ok are skipped), one fingerprint per line (16 hex
// digits, else decimal; id = line number), or little-endian uint64 (binary; id = 0-based
// position). The text format is detected per input from its first non-blank line.
#pragma once

#include <simdup/error.hpp>
#include <simdup/json.hpp>

#include <cstddef>
#include <cstdint>
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

  std::vector<uint64_t> fingerprints;
  /// JSON text of each id, concatenated; id i is ids[id_end[i-1] .. id_end[i]). Empty for
  /// binary input, whose ids are the positions.
  std::string ids;
  std::vector<uint64_t> id_end;

  /// Appends id `i` as JSON.
  void append_id(std::string& out, std::size_t i) const {
    if (id_end.empty()) return json::append_uint(out, i);
    const std::size_t begin = i == 0 ? 0 : id_end[i - 1];
    out.append(ids, begin, id_end[i] - begin);
  }
};

struct fingerprint_list_options {
  /// Little-endian uint64 values instead of text; positions continue across inputs.
  bool binary = false;
  /// Plain lines are decimal numbers (a 16-digit decimal number is otherwise read as hex).
  bool decimal = false;
  /// Malformed lines and unreadable inputs are counted in the list instead of failing.
  bool skip_bad = false;
};

/// Reads `inputs` ("-" = stdin; globs expanded as by expand_inputs) in order. Errors are
/// "SOURCE:LINE: reason" (errc::invalid_input) or the input's own (not_found, io_error, ...).
result<fingerprint_list> read_fingerprint_list(std::span<const std::string> inputs,
                                               const fingerprint_list_options& options);

}  // namespace simdup
