// The shared driver of commands that turn each input record into one output line
// (fingerprint, features): read -> process in parallel batches -> write in input order, with
// --on-error handling, progress, the stderr summary and exit codes (docs/cli.md).
#pragma once

#include "options.hpp"

#include <simdup/document.hpp>
#include <simdup/reader.hpp>
#include <simdup/record_source.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace simdup::cli {

/// A record or input skipped (--on-error skip), in its place among a batch's records.
struct skipped_record {
  std::size_t before = 0;  ///< frames of the batch read before it
  std::string message;
  std::string reason;  ///< the reader's skip reason ("invalid_input", "missing_file", ...)
  bool input = false;  ///< a whole input, not a record
};

/// A batch of records travelling through the pipeline. Documents are reused across batches.
struct document_batch {
  std::vector<document> docs;  ///< docs[0, size) are this batch's records, in input order
  std::size_t size = 0;
  std::string out;                      ///< output bytes the process step produced for this batch
  uint64_t invalid_utf8 = 0;            ///< repairs the process step made (the reader's are added)
  uint64_t too_short = 0;               ///< documents without enough features
  std::vector<skipped_record> skipped;  ///< in input order
  std::string failure;  ///< the error that ends the job after this batch's records; empty: none
};

/// What the command does to one batch (runs concurrently on different batches): fill
/// `batch.out` (one line per document, in order) and the counters.
using batch_processor = std::function<void(document_batch& batch)>;

/// Where a job reads and writes when not INPUT... and -o (a database): `source` replaces the
/// input files, `write` (called in input order) and `commit` replace the output file.
struct document_job_io {
  record_source* source = nullptr;
  std::function<status(const document_batch&)> write;
  std::function<status()> commit;
};

/// Runs the job. `command` names it in messages ("fingerprint"). Returns the exit code:
/// exit_ok, exit_partial (records skipped with --on-error skip), exit_failure (fatal error, or
/// a bad record with --on-error fail).
int run_document_job(const std::string& command, const input_options& input, const run_options& run,
                     const batch_processor& process, const document_job_io* io = nullptr);

/// How a warning names INPUT...: "stdin" (none, or "-"), the one input, or "the N inputs".
std::string describe_inputs(const std::vector<std::string>& inputs);

/// Prints "simdup COMMAND: error: MESSAGE" on stderr.
void print_error(const std::string& command, const std::string& message);

}  // namespace simdup::cli
