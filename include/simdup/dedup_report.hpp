// What a dedup run found, as summary.json, report.html and a short human summary.
#pragma once

#include <simdup/dedup.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// One member of a sample cluster in the report.
struct sample_document {
  std::string id;
  /// The text, cut to a few thousand bytes for the page.
  std::string text;
  dedup_layer layer = dedup_layer::none;
  int distance = -1;
  /// NaN when not verified.
  double jaccard = 0;
};

/// `text` as the report shows a member: at most 4,000 bytes, cut at a code point boundary and
/// marked with " …".
std::string sample_text(std::string_view text);

/// A document as the report shows it: sample_text of its text, or of the text of its markup
/// (tags dropped, entities decoded) when it is read as HTML (`all_html`: the run's --html; else
/// document_is_html). simdup dedup and simdup.dask both show members this way.
std::string sample_text(const document& doc, bool all_html);

/// One of the largest clusters, with its representative and a few members.
struct cluster_sample {
  uint64_t cluster = 0;  ///< the representative's ordinal (the cluster id)
  uint64_t size = 0;     ///< documents in the cluster, representative included
  sample_document representative;
  std::vector<sample_document> members;
};

/// Everything summary.json and report.html say. Counts satisfy
/// read == kept + duplicates + skipped.
struct dedup_summary {
  // Parameters.
  std::vector<std::string> inputs;
  std::string mode;  ///< "stream" or "batch"
  int k = 3;
  std::string keep;                 ///< keep policy as given ("first", "field:score", ...)
  std::string linking;              ///< linking_name: "anchored", "centers", ...
  std::vector<std::string> layers;  ///< enabled layers, cheapest first
  double verify_threshold = 0;      ///< 0 when not verifying
  std::size_t verify_max_hashes = 0;
  std::size_t verify_shingle_width = 0;
  /// Linking "anchored" (batch): a member's least Jaccard with its representative; 0 otherwise.
  double anchor_floor = 0;
  /// Normalisation, features, weighting, hash and min_features: with the parameters above, what
  /// a later `simdup explain --dedup-out` needs to decide as the run did.
  fingerprint_options fingerprint;
  std::string output_format;  ///< format of the kept records ("jsonl", ...)

  // Counts.
  uint64_t read = 0;  ///< records read, bad ones included
  uint64_t kept = 0;
  uint64_t duplicates = 0;
  uint64_t skipped = 0;  ///< bad records skipped (--on-error skip)
  /// Inputs skipped (--on-error skip): missing, unreadable, truncated, not text. Not records:
  /// they are not in `read` (the records a truncated input gave before the break are).
  uint64_t skipped_inputs = 0;
  uint64_t input_count = 0;  ///< inputs after glob expansion, skipped ones included
  /// Reason -> count, for records ("invalid_input", "too_large") and inputs ("missing_file",
  /// "not_a_file", "truncated_input", "corrupt_input", "binary_input", "unreadable_input").
  std::map<std::string, uint64_t> skipped_reasons;
  uint64_t candidate_pairs = 0;  ///< near pairs examined: found by the index, or in stream
                                 ///< mode the kept candidates a document was compared with
  uint64_t rejected_pairs = 0;   ///< of those, rejected by verification
  /// Of rejected_pairs, those ruled out in memory before their shingle arrays were read (batch
  /// mode with exact verification; 0 otherwise).
  uint64_t prefiltered_pairs = 0;
  /// Duplicates per layer, indexed by dedup_layer (none unused).
  std::array<uint64_t, 5> by_layer{};
  uint64_t short_documents = 0;   ///< too few features: exact layers only
  uint64_t invalid_utf8 = 0;      ///< invalid UTF-8 sequences repaired
  uint64_t minhash_pairs = 0;     ///< of candidate_pairs, found only by MinHash-LSH
  std::size_t minhash_bands = 0;  ///< MinHash-LSH bands (0: off) and rows per band
  std::size_t minhash_rows = 0;
  /// Distance of each duplicate to its representative: [0..64]; [65] counts unknown (-1).
  std::array<uint64_t, 66> distance_histogram{};
  /// Cluster size -> number of clusters of that size (size 1 = kept without duplicates).
  std::map<uint64_t, uint64_t> cluster_sizes;

  // Costs.
  uint64_t bytes = 0;  ///< input bytes (decompressed)
  double seconds_total = 0;
  std::vector<std::pair<std::string, double>> seconds_by_phase;
  uint64_t engine_memory_bytes = 0;  ///< exact tables, fingerprints, index, shingles
  uint64_t peak_rss_bytes = 0;
  /// The resident set before the first document (code, libraries, dictionaries): under
  /// --memory-limit it stays beside what the limit bounds.
  uint64_t start_rss_bytes = 0;
  /// Bytes of shingle arrays in the temporary file of --verify (on disk, not in memory).
  uint64_t verify_spill_bytes = 0;
  /// --memory-limit in bytes (0: none), and the engine's columns it moved to disk.
  uint64_t memory_limit_bytes = 0;
  uint64_t column_spill_bytes = 0;
  /// The peak resident set of each phase of seconds_by_phase (by name; empty where the system
  /// cannot reset the peak between phases).
  std::vector<std::pair<std::string, uint64_t>> peak_rss_by_phase;
  unsigned threads = 0;
  /// The resume journal (batch mode with files): its bytes at the end of reading, and what a
  /// --resume run took from an interrupted run's journal instead of reading and signing again
  /// (documents) or deciding again (the decisions).
  uint64_t journal_bytes = 0;
  uint64_t replayed_documents = 0;
  bool replayed_decisions = false;

  /// Per --against index: what it holds and how many of this run's documents were dropped for
  /// one of its documents.
  struct against_index {
    std::string name;
    uint64_t documents = 0;
    uint64_t dropped = 0;
    /// Of its documents, those at least one of this run's documents was dropped for.
    uint64_t documents_hit = 0;
  };
  std::vector<against_index> against;
  uint64_t by_against_total() const {
    uint64_t n = 0;
    for (const against_index& a : against) n += a.dropped;
    return n;
  }
  bool against_only = false;
  uint64_t against_candidate_pairs = 0;  ///< of candidate_pairs, with an index document
  /// The index this run wrote (DIR/index), when it wrote one.
  bool index_written = false;
  uint64_t index_documents = 0;
  uint64_t index_bytes = 0;
  uint64_t index_id_bytes = 0;            ///< ids and their offsets
  uint64_t index_verification_bytes = 0;  ///< shingles, their offsets, MinHash band keys
  uint64_t index_manifest_bytes = 0;      ///< fixed, not per document
  /// The largest clusters, for the report; `samples_note` explains when texts are missing.
  std::vector<cluster_sample> samples;
  std::string samples_note;
};

/// Records the run's parameters (mode, k, keep, clustering, MinHash, layers, verification,
/// threads; 0 threads means the hardware's) in the summary, as every dedup front end reports them.
void describe_parameters(dedup_summary& summary, const dedup_options& options,
                         const std::string& keep_spec, unsigned threads);

/// Adds one decision to the counts (layer, distance); cluster sizes are added separately.
void count_decision(dedup_summary& summary, const dedup_decision& decision, uint32_t ordinal);

/// summary.json: pretty enough to read, stable keys (docs/dedup.md).
std::string summary_json(const dedup_summary& summary);
/// report.html: one self-contained page (inline CSS and SVG, no scripts, no network).
std::string report_html(const dedup_summary& summary);
/// A few lines for the terminal.
std::string human_summary(const dedup_summary& summary);

/// A run's parameters read back from its summary.json.
struct summary_parameters {
  std::vector<std::string> inputs;  ///< parameters.inputs, as the run named them
  dedup_options options;
};

/// Reads back what summary_json records of a run's parameters: inputs, mode, layers, k,
/// linking, anchor floor, MinHash, verification and, in summaries that record them, the
/// fingerprint settings and the verification's shingle width; what a summary does not record
/// keeps its value in `base` (as does everything summary.json does not describe: keep policy,
/// against). The options read are validated (detection_profile::validate). Errors are
/// errc::invalid_input and begin with `name` (the summary's file, for messages): "NAME has no
/// parameters", "NAME: parameters.k missing or malformed", "NAME: " and the validation's.
result<summary_parameters> read_summary_parameters(std::string_view summary_json,
                                                   std::string_view name,
                                                   const dedup_options& base);

/// One line of a run's duplicates.jsonl read back: a dropped document.
struct duplicate_record {
  std::string id;            ///< as written: a JSON string's value, or a number's token
  std::string duplicate_of;  ///< the representative's id (or, against an index, its document's)
  std::string layer;         ///< "url", "title", "exact" or "near"
  std::string against;       ///< the index it was dropped against, or empty
};

/// Reads the duplicates.jsonl at `path` line by line (memory bounded by the longest line),
/// calling `each` for every record. errc::not_found when the file cannot be read;
/// errc::invalid_input "PATH:LINE: not a duplicates record (id, duplicate_of, layer)".
status read_duplicate_records(const std::string& path,
                              const std::function<void(const duplicate_record&)>& each);

/// Side-by-side difference of two texts as two HTML fragments (escaped), tokens only in `a`
/// wrapped in <del>, tokens only in `b` in <ins>. Tokens are ASCII letter/digit runs (compared
/// without case), single other code points, and whitespace runs. Texts beyond `max_tokens` tokens
/// are compared on their first max_tokens tokens and the rest is shown unmarked.
std::pair<std::string, std::string> diff_html(std::string_view a, std::string_view b,
                                              std::size_t max_tokens = 600);

/// HTML-escapes & < > " ' for text and attribute values.
std::string html_escape(std::string_view text);

}  // namespace simdup
