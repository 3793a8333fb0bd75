// The dedup job's first phase, reading and signing: the inputs (globs expanded, stdin spooled
// when it must be read twice) and the pipeline in which one thread reads chunks of records,
// all threads sign them (normalise, fingerprint, keys, shingles), and one ordered stage hands
// each chunk to the job.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_job.hpp>
#include <simdup/document.hpp>
#include <simdup/error.hpp>
#include <simdup/record_source.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// True once the caller asked the job to stop.
inline bool stop_requested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

/// The error of a run stopped on request.
error_info interrupted_error();

/// A bad record or failed input met while reading, with its skipped-reason name.
struct bad_entry {
  error_info error;
  std::string reason;
  bool input = false;      ///< a whole input failed (missing, unreadable, not text), not a record
  std::size_t before = 0;  ///< records of the chunk read before it (its place among them)
};

/// Records read and signed together, in input order.
struct chunk {
  std::vector<document> docs;
  std::vector<doc_signature> sigs;
  std::size_t count = 0;
  std::vector<bad_entry> bad;  // bad records (skip mode), in order before/among docs
  // Header rows of the chunk's CSV records, each from record `first` on: a chunk can span CSV
  // inputs whose columns differ.
  struct header_run {
    std::size_t first;
    std::string header;
  };
  std::vector<header_run> csv_headers;
  std::string_view csv_header(std::size_t i) const {
    for (auto it = csv_headers.rbegin(); it != csv_headers.rend(); ++it)
      if (it->first <= i) return it->header;
    return {};
  }
  /// The reader failed (unreadable or truncated input, or a stop): always an error.
  std::optional<error_info> fatal;
  uint64_t bytes = 0;        // decompressed bytes read so far
  uint64_t input_bytes = 0;  // compressed bytes read so far
  // For the resume journal: the chunk's place in the input, what the reader gave for it
  // (records and bad entries, before the workers decode), and a digest of its records' bytes
  // and positions, by which a resumed run recognises the chunks it already has.
  uint64_t number = 0;
  uint32_t framed = 0;
  uint64_t digest = 0;
  // A chunk replayed from the journal: each signature's count of verification shingles, which
  // the shingle file holds (the signatures come without them). The candidate sketches of the
  // chunk's documents, concatenated (exact verification): those the engine made, for the
  // journal, or those it keeps, to replay.
  std::vector<uint32_t> shingle_counts;
  std::vector<uint8_t> sketches;
};

struct resume_point;

/// The job's inputs, opened anew for each pass over them.
class job_input {
 public:
  /// Expands the inputs' globs. stdin is copied to `spool_dir`/stdin.spool (and read from
  /// there) when `spool_dir` is not empty, for a job that reads its input twice.
  static result<job_input> open(const dedup_job_options& options,
                                const std::filesystem::path& spool_dir);
  /// A fresh reader over all the inputs (or the options' own source). `deferred`: JSONL
  /// records come framed only (reader_options::defer_decoding), for workers to decode.
  result<std::unique_ptr<record_source>> open_records(bool deferred = false) const;
  /// The field names records are decoded by.
  const field_names& fields() const noexcept { return reader_options_.fields; }
  /// Generated ids of a spooled stdin name the spool file; shows "stdin" as the source instead.
  void restore_stdin_name(document& doc) const;
  /// Input paths after glob expansion ("-" is stdin, replaced by the spool file when spooled).
  const std::vector<std::string>& paths() const noexcept { return paths_; }
  bool has_stdin() const noexcept { return has_stdin_; }
  /// Sum of the inputs' file sizes; 0 when any is not a regular file (no ETA).
  uint64_t total_size() const;
  /// Removes the spooled copy of stdin, if any.
  void remove_spool() const;

 private:
  explicit job_input(const dedup_job_options& options) : options_(&options) {}
  const dedup_job_options* options_;
  std::vector<std::string> paths_;
  reader_options reader_options_;  // options.reader plus the skip and stop settings
  std::string spool_;
  bool has_stdin_ = false;
};

/// Bytes that read_and_sign holds at most on `threads` workers (0: every usable core) besides
/// the consumer's state: the chunks in flight (up to 2 MiB of records each, their decoded
/// fields and their signatures' shingles) and the readers' buffers. What --memory-limit keeps
/// free for reading.
uint64_t read_working_bytes(unsigned threads);

/// Reads every record with `threads` workers (0: all cores), signs it with `signer` and hands
/// the chunks, in input order, to `consume`, which is never called concurrently. Stops at the
/// first error: a bad record without skip_bad_records, a failed input, a stop request or an
/// error of `consume`. With `resume`, the chunks it holds are read again but neither decoded nor
/// signed nor consumed: each must match the journal's (errc::invalid_input naming the chunk when
/// the input changed since), and `consume` gets the chunks after them.
status read_and_sign(const job_input& input, const document_signer& signer,
                     const dedup_job_options& options, const std::function<status(chunk&)>& consume,
                     const resume_point* resume = nullptr);

}  // namespace simdup::detail
