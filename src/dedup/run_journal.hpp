// The resume journal of a batch dedup run (--resume). Reading and signing is most of a run's
// work; the journal keeps what it produced, chunk by chunk, in the staging directory, so that a
// run killed (SIGKILL), stopped (SIGINT) or failed (a full disk) continues after the last chunk
// it finished instead of reading and signing everything again, and a run killed after its
// decisions skips the near layer too. Replaying a chunk hands the job exactly what consume()
// took from it the first time, so the resumed run decides byte for byte as an uninterrupted one.
//
// Files, in STAGING/resume/ (docs/dedup.md "Resuming a run" describes them for users):
//   manifest        the run's identity (settings, inputs with sizes and mtimes): --resume refuses
//                   a journal of other settings or changed inputs, naming the first difference
//   chunks.bin      "SDJRNL01", then one record per chunk: u64 payload bytes, u64 XXH3-64 of the
//                   payload, the payload. A record cut short or whose checksum fails (the process
//                   died while writing it) ends the journal: it is truncated there.
//   shingles.path   where verification's shingle arrays are (the engine's store, kept in a named
//                   file: shingles.bin here, or a file in an explicit --tmp-dir); the journal
//                   holds only their counts, and a chunk whose arrays the file lacks ends it.
//   decisions.bin   written once the decisions are made: "SDDECI01", the counts, the decisions,
//                   and the XXH3-64 of everything before it; absent or damaged, the near layer
//                   runs again.
// Integers are little-endian.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/error.hpp>

#include "dedup/job_input.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace simdup::detail {

/// Where a resumed run takes up reading: the chunks the journal holds, each with what the
/// reader gave for it (records and bad entries) and the digest of its records' bytes, which the
/// re-read compares to find an input that changed.
struct resume_point {
  struct chunk_check {
    uint32_t framed = 0;
    uint64_t digest = 0;
  };
  std::vector<chunk_check> chunks;
};

/// What the batch engine reported with its decisions, saved beside them.
struct journal_decisions {
  std::vector<dedup_decision> decisions;
  uint64_t candidate_pairs = 0;
  uint64_t rejected_pairs = 0;
  uint64_t prefiltered_pairs = 0;
  uint64_t minhash_pairs = 0;
  uint64_t engine_memory_bytes = 0;
  uint64_t verify_spill_bytes = 0;
  uint64_t column_spill_bytes = 0;
  uint64_t against_candidate_pairs = 0;
};

class run_journal {
 public:
  /// Starts an empty journal in `dir` (created; an existing one is replaced) for a run of
  /// `identity`. errc::io_error / no_space naming the file.
  static result<run_journal> create(const std::filesystem::path& dir, const std::string& identity,
                                    const std::filesystem::path& shingle_file);
  /// Opens the journal an interrupted run left in `dir`. errc::invalid_argument naming the first
  /// line that differs when it was written for another identity; errc::not_found without one.
  /// A damaged tail is cut off (the chunks before it are kept).
  static result<run_journal> open(const std::filesystem::path& dir, const std::string& identity);

  /// Hands every complete chunk whose shingle arrays the shingle file's `shingle_file_bytes`
  /// hold, in order, to `replay` as a chunk the reader and signers could have made (docs with
  /// id, id_is_number and format; signatures without shingles, their counts in
  /// `shingle_counts`; bad entries; byte counts) and fills `point`. Stops at replay's first
  /// error. Later appends continue after the last chunk replayed.
  status replay(const std::function<status(chunk&)>& replay, resume_point& point,
                uint64_t shingle_file_bytes);

  /// Appends what consume() took from `c` (the chunk's `framed` and `digest` as read_and_sign
  /// set them, its signatures' shingle counts), once the shingle file holds `shingle_end` bytes
  /// with its arrays. Written through at once: a killed process loses at most the record it
  /// was writing.
  status append(const chunk& c, uint64_t shingle_end);
  /// The file of verification's shingle arrays (shingles.path).
  const std::filesystem::path& shingle_file() const noexcept { return shingle_file_; }
  /// Chunks in the journal.
  uint64_t chunks() const noexcept { return chunks_; }
  /// Documents in the journal's chunks.
  uint64_t documents() const noexcept { return documents_; }
  /// Bytes of chunks.bin.
  uint64_t bytes() const noexcept { return end_; }

  /// Saves the decisions (written under a temporary name, then renamed).
  status save_decisions(const journal_decisions& d);
  /// The saved decisions, when decisions.bin is whole and holds `documents` of them.
  std::optional<journal_decisions> load_decisions(uint32_t documents) const;

  run_journal(run_journal&& other) noexcept;
  run_journal& operator=(run_journal&&) = delete;
  ~run_journal();

 private:
  run_journal(std::filesystem::path dir, int fd) : dir_(std::move(dir)), fd_(fd) {}
  std::filesystem::path dir_;
  std::filesystem::path shingle_file_;
  int fd_ = -1;
  uint64_t end_ = 0;  ///< bytes of whole records (and the file header)
  uint64_t chunks_ = 0;
  uint64_t documents_ = 0;
  std::string buffer_;
};

/// Removes the journal in `dir` with its shingle file, wherever that is (an explicit --tmp-dir).
void remove_journal(const std::filesystem::path& dir);

/// The identity a journal is written for: the settings that decide what reading and signing
/// produce and what is decided (the summary's parameters, the reader's fields and limits, the
/// error policy, the keep rule, the --against indexes), and each input with its size and
/// modification time. Threads, the memory limit, progress and the output options are left out:
/// they change neither. Empty when the run cannot be resumed (stdin, a database source).
std::string journal_identity(const dedup_job_options& options, const dedup_summary& parameters,
                             const std::vector<std::string>& inputs);

}  // namespace simdup::detail
