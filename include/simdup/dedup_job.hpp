// The whole dedup job: read inputs, decide, write --out DIR (kept records, duplicates.jsonl,
// summary.json, report.html) atomically. `simdup dedup` and the benchmarks call this.
#pragma once

#include <simdup/decision_sink.hpp>
#include <simdup/dedup.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/reader.hpp>
#include <simdup/record_source.hpp>

#include <atomic>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

enum class progress_style {
  automatic,  ///< a bar when the log stream is a terminal, else a plain line every few seconds
  bar,        ///< always the redrawn bar
  lines,      ///< always plain periodic lines
  none,       ///< nothing (--quiet)
};

struct dedup_job_options {
  /// Files, globs or "-" (stdin). Empty means stdin.
  std::vector<std::string> inputs;
  reader_options reader;
  /// Mode, layers, keep policy and the detection profile (fingerprint settings included).
  dedup_options dedup;
  /// Optional: opens the records anew for each pass (a database source; batch mode reads
  /// twice and the source must give the same rows in the same order). When set, `inputs` is
  /// not read; `source_name` names the source in the summary.
  std::function<result<std::unique_ptr<record_source>>()> open_source;
  std::string source_name;
  /// Optional: receives every document's decision in input order; finish() is called after the
  /// last one, before DIR is committed.
  decision_sink* decisions = nullptr;
  /// Output directory, created atomically on success. It may be missing or an empty
  /// directory; a non-empty one fails the job before any work (errc::invalid_argument) unless
  /// `replace_output`. May be empty when `decisions` is set: then no files are written (and
  /// batch mode does not read the source twice).
  std::string out_dir;
  /// --force: replace a non-empty out_dir (atomically, at the end of a successful run).
  bool replace_output = false;
  /// --resume: continue the interrupted run of out_dir (killed, stopped, or failed on a full
  /// disk) from its staging directory's journal instead of starting over: the chunks it read
  /// and signed are replayed, not read again, and saved decisions skip the near layer. The
  /// outputs are those of an uninterrupted run. Without a journal to resume, the run starts
  /// from the beginning (and says so on `log`). Batch mode with an output directory and inputs
  /// that can be read again (not stdin or a database source); the settings and inputs must be
  /// those of the interrupted run (errc::invalid_argument naming the first difference).
  /// Every batch run with files keeps the journal while it runs, whether or not it resumes.
  bool resume = false;
  /// Write kept records as kept.<ext>.zst.
  bool zstd_output = false;
  /// Also write annotated.<ext>[.zst]: every record in input order with its decision (keep,
  /// cluster, duplicate_of, distance, layer, jaccard; docs/formats.md). JSONL, CSV, TSV and
  /// Parquet inputs only (errc::invalid_argument naming the input otherwise).
  bool annotate = false;
  /// Also write duplicates.parquet: the rows of duplicates.jsonl as a Parquet table (ids as
  /// strings). errc::unsupported in a build without Parquet.
  bool duplicates_parquet = false;
  /// --against DIR: earlier runs' output directories or indexes (dedup_index::open), each of
  /// this run's detection profile; documents that duplicate one of theirs are dropped for it
  /// (batch mode; dedup.against_only: only those). Their ids are named in duplicates.jsonl
  /// and DIR/against_hits.jsonl counts the hits per index document.
  std::vector<std::string> against;
  /// Write DIR/index (the kept documents' index, for later --against runs). Default on.
  bool write_index = true;
  /// --on-error skip: bad records and inputs that cannot be read to their end (missing file,
  /// directory, truncated .gz/.zst: reader_options::skip_failed_inputs) are counted by reason
  /// and reported, and the run goes on; otherwise the first one fails the job (DIR untouched).
  bool skip_bad_records = false;
  /// Optional stop request (the CLI sets it on SIGINT/SIGTERM). Checked between records, while
  /// waiting on stdin, between phases and before the commit: once it holds true the job stops,
  /// removes its staging directory (but for a resume journal with work in it: `resume`) and
  /// fails with "interrupted"; DIR is left as it was. Not
  /// checked inside the batch clustering phase.
  const std::atomic<bool>* stop = nullptr;
  /// Bad-record messages printed before the rest are only counted. Default 20.
  std::size_t max_error_messages = 20;
  progress_style progress = progress_style::automatic;
  /// Worker threads for parsing and fingerprinting; 0 = all cores.
  unsigned threads = 0;
  /// The most bytes the job holds (0: no limit). Reading and signing keep their working set
  /// (detail::read_working_bytes: about 80 MiB on 2 threads); the batch engine gets the rest
  /// (dedup_options::memory_limit: past half of it the band keys and sketches go to disk, the
  /// pair search runs in passes). A limit below what reading needs fails at once, and a run
  /// whose in-memory state (about 70 bytes per document, plus the ids) outgrows the limit
  /// fails when it does; both with errc::too_large naming the bytes needed. Stream mode only
  /// checks.
  uint64_t memory_limit = 0;
  /// Largest clusters shown in report.html. Default 10.
  std::size_t report_clusters = 10;
  /// Members shown per cluster. Default 3.
  std::size_t report_members = 3;
  /// The --keep value as given, for the summary.
  std::string keep_spec = "first";
};

/// Runs the job. Messages (bad records, progress) go to `log`. Errors: a bad record without
/// skip_bad_records (invalid_input naming SOURCE:LINE), an unreadable input, an output that
/// cannot be written, a stop request; in every error case DIR is left as it was and the
/// staging directory is removed, except its resume journal after a failure that may pass (an
/// I/O error, a full disk, a stop, errc::too_large): `resume` continues from it.
result<dedup_summary> run_dedup_job(const dedup_job_options& options, std::FILE* log);

/// The kept records of one part of a corpus, written as the job writes kept.<ext>[.zst]
/// (simdup.dask writes one part per partition; their concatenation in order, decompressed, is
/// the job's file): the good records `in` gives whose flag in `keep` is set, byte for byte as
/// read, into DIR/STEM.<ext>[.zst] per input format (a CSV header row first). Bad records are
/// passed over (the caller counted them when it read the part first). When nothing is kept, an
/// empty DIR/STEM.<ext of `empty_format`>[.zst] is still written, as the job does. Returns the
/// records written; errc::io_error when `in` gives more or fewer good records than `keep` has
/// flags (the input changed) or a file cannot be written.
result<uint64_t> write_kept_part(reader& in, std::span<const uint8_t> keep, const std::string& dir,
                                 const std::string& stem, bool zstd, input_format empty_format);

/// One record's decision as --annotate writes it beside the record (JSONL: a "simdup" object;
/// CSV and TSV: six simdup_* columns).
struct record_annotation {
  bool keep = true;
  /// The cluster id: the representative's ordinal in the whole corpus.
  uint64_t cluster = 0;
  /// The representative's id and whether it is a JSON number; ignored when kept.
  std::string_view duplicate_of;
  bool duplicate_of_is_number = false;
  /// Hamming distance to the representative; -1 when either has no fingerprint or when kept.
  int distance = -1;
  dedup_layer layer = dedup_layer::none;
  /// Verified Jaccard with the representative; NaN when not verified.
  double jaccard = std::numeric_limits<double>::quiet_NaN();
};

/// Every good record of one part of a corpus with its decision (`notes`, one per good record in
/// order), as the job writes annotated.<ext>[.zst]: into DIR/STEM.<ext>[.zst] per input format,
/// in the same cases and with the same errors as write_kept_part; errc::invalid_argument for a
/// format that cannot carry an annotation (text, WARC).
result<uint64_t> write_annotated_part(reader& in, std::span<const record_annotation> notes,
                                      const std::string& dir, const std::string& stem, bool zstd,
                                      input_format empty_format);

}  // namespace simdup
