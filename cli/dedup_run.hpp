// A dedup output directory as `simdup explain --dedup-out DIR` reads it: the run's parameters
// (DIR/summary.json), the records of its inputs, and its decisions (DIR/duplicates.jsonl).
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/document.hpp>
#include <simdup/reader.hpp>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace simdup::cli {

/// What a dedup run decided for one document, from DIR/duplicates.jsonl.
struct run_decision {
  bool kept = true;
  std::string duplicate_of;  ///< when dropped
  std::string layer;         ///< when dropped
};

/// The parameters DIR/summary.json records (read_summary_parameters), over the flags' values
/// in `o`: inputs, mode, layers, k, clusters, anchor floor, MinHash, verification and (in runs
/// that record them) the fingerprint settings. Errors name the file and the malformed key.
status read_dedup_run(const std::string& dir, dedup_options& o, std::vector<std::string>& inputs);

/// The flags given on `cmd` whose value is not the run's: one "--features jieba" / "--features
/// shingles" pair each (what was given, what the run used), in the order of the help.
std::vector<std::pair<std::string, std::string>> flags_unlike_run(const CLI::App& cmd,
                                                                  const dedup_options& flags,
                                                                  const dedup_options& run);

/// The records of `ids` (the first record of each id, in the order given) in the run's inputs;
/// errc::not_found naming an id that is not there.
result<std::vector<document>> find_records(const std::vector<std::string>& inputs,
                                           const field_names& fields,
                                           const std::vector<std::string>& ids);

/// The run's decisions for `ids` from DIR/duplicates.jsonl (a document not listed was kept).
result<std::vector<run_decision>> read_run_decisions(const std::string& dir,
                                                     const std::vector<std::string>& ids);

}  // namespace simdup::cli
