// Command-line flags shared by every command that reads documents or fingerprints them. Each
// flag is defined once here, with its help text; commands add the groups they need.
#pragma once

#include <simdup/detection.hpp>
#include <simdup/fingerprint.hpp>
#include <simdup/reader.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace simdup::cli {

/// INPUT... and how to read it.
struct input_options {
  /// Files, globs or "-" (stdin); empty means stdin.
  std::vector<std::string> inputs;
  /// --input-format: auto, jsonl, tsv, csv, text, warc (wet).
  std::string format = "auto";
  /// --id-field ... --features-field: JSONL keys and CSV columns.
  field_names fields;
  /// --max-record-mb: larger records are skipped as bad records (MiB).
  std::size_t max_record_mb = 1024;

  /// The reader configuration; errors name the bad option.
  result<reader_options> resolve() const;
};

/// Adds --id-field ... --features-field (JSONL keys, CSV columns) to `cmd` in group `group`.
void add_field_options(CLI::App& cmd, field_names& fields, const char* group);

/// Adds the positional INPUT... and the input flags to `cmd`.
void add_input_options(CLI::App& cmd, input_options& opts);

/// Normalisation, features, weighting, hash and compatibility flags.
struct fingerprint_cli_options {
  bool html = false;                    ///< --html
  bool no_nfkc = false;                 ///< --no-nfkc
  bool no_casefold = false;             ///< --no-casefold
  bool no_t2s = false;                  ///< --no-t2s
  bool keep_punctuation = false;        ///< --keep-punctuation
  bool strip_digits = false;            ///< --strip-digits
  std::string features = "shingles";    ///< --features
  std::size_t shingle_width = 4;        ///< --shingle-width
  std::size_t ngram = 2;                ///< --ngram
  std::size_t min_token_length = 1;     ///< --min-token-length
  std::string jieba_dict;               ///< --jieba-dict
  std::vector<std::string> user_dicts;  ///< --user-dict (repeatable)
  std::string weighting = "count";      ///< --weighting
  std::string idf_path;                 ///< --idf
  std::string stopwords_path;           ///< --stopwords
  std::size_t top_k = 0;                ///< --top-k
  std::string hash = "xxh3";            ///< --hash
  std::string compat = "none";          ///< --compat
  std::size_t min_features = 1;         ///< --min-features

  /// The library configuration. Options CLI11 already checked (choices, ranges) are mapped
  /// here; cross-option errors (tfidf without --idf) name the options.
  result<fingerprint_options> resolve() const;
};

/// Adds the fingerprint flags to `cmd`.
void add_fingerprint_options(CLI::App& cmd, fingerprint_cli_options& opts);

/// The detection profile's flags (k, --verify..., --minhash, --clusters, --anchor-floor), shared
/// by `dedup` and `explain` so that both decide alike.
struct detection_cli_options {
  int k = detection_profile{}.k;                                        ///< -k/--k
  std::string clusters = linking_name(detection_profile{}.clustering);  ///< --clusters
  double anchor_floor = 0.8;                                            ///< --anchor-floor
  std::string minhash = "10x6";                                         ///< --minhash
  std::string verify = "jaccard:0.8";                                   ///< --verify (or off)
  std::size_t verify_max_hashes = 0;                                    ///< --verify-max-hashes
  std::size_t verify_shingle_width = 5;                                 ///< --verify-shingle-width
  std::string tmp_dir;                                                  ///< --tmp-dir (dedup only)

  /// The profile for a batch or stream run (detection_profile::effective), validated; errors
  /// name the flags.
  result<detection_profile> resolve(const fingerprint_options& fingerprint, bool batch) const;
};

/// Adds the detection flags to `cmd` in group `group`; `tmp_dir` adds --tmp-dir.
void add_detection_options(CLI::App& cmd, detection_cli_options& opts, const char* group,
                           bool tmp_dir = true);

/// How a document job runs and reports.
struct run_options {
  std::string on_error = "fail";  ///< --on-error fail|skip
  std::string output = "-";       ///< -o/--output FILE ("-" = stdout)
  std::string format = "jsonl";   ///< --format jsonl|tsv (output)
  unsigned threads = 0;           ///< --threads (0 = all cores)
  bool stats = false;             ///< --stats: always print the summary
  bool quiet = false;             ///< --quiet: no progress, summary only when it matters
  /// Not a flag: warn on stderr when the input had no records (idf build fails instead).
  bool warn_if_empty = true;
};

/// Adds --on-error, -o, --format, --threads, --stats, --quiet to `cmd`.
void add_run_options(CLI::App& cmd, run_options& opts);

/// A library error about a setting (error_info::parameter) speaks of the library's names ("k must
/// be in 0..32", "verify: expected ..."); this names the command line's flags instead ("--k must
/// be in 0..32", "--verify: expected ..."). Other errors keep their message.
std::string flag_message(const error_info& error);
/// The error with flag_message as its message.
error_info with_flags(error_info error);

/// Checks an integer option before CLI11 converts it, so that "abc", "-3" and "99999" get one
/// message saying what is wrong and what is allowed: "'abc' is not a number; MEANING: an integer
/// from MIN to MAX" (CLI11 prefixes the flag: "--threads: -3 is negative; ...").
CLI::Validator integer_range(long long min, long long max, const std::string& meaning);

/// -k/--k: "--k: 40 is too large; k counts the bits (of 64) in which two fingerprints may
/// differ: an integer from 0 to 32".
CLI::Validator distance_k(int max_k);

/// The most --threads a command accepts (0 means all cores).
inline constexpr long long max_threads = 4096;
/// Adds --threads (0 to max_threads; 0: every usable core) to `cmd`, for every command alike.
CLI::Option* add_threads_option(CLI::App& cmd, unsigned& threads);

}  // namespace simdup::cli

namespace simdup::cli {

/// The fingerprinter for the options, plus (created on first use) a twin with HTML
/// normalisation for records whose text is HTML (WARC responses). Thread-safe.
class fingerprinter_set {
 public:
  /// Errors name the offending file or option (a missing IDF file, ...).
  static result<std::unique_ptr<fingerprinter_set>> create(const fingerprint_options& options);

  /// The fingerprinter to use for `doc`.
  const fingerprinter& for_document(const document& doc) const;

  explicit fingerprinter_set(fingerprinter plain, fingerprint_options options)
      : options_(std::move(options)), plain_(std::move(plain)) {}

 private:
  fingerprint_options options_;
  fingerprinter plain_;
  mutable std::once_flag html_once_;
  mutable std::optional<fingerprinter> html_;
};

}  // namespace simdup::cli
