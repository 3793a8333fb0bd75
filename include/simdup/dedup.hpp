// The dedup job as a library: per-document signatures (computed in parallel), then decisions by
// the exact layers (URL, title, content) and the near layer (SimHash within k, optionally
// verified by shingle Jaccard), in stream mode (first kept wins) or batch mode (clusters and a
// representative per cluster). The CLI `simdup dedup` wires readers and writers around this.
#pragma once

#include <simdup/detection.hpp>
#include <simdup/document.hpp>
#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>
#include <simdup/keep_policy.hpp>
#include <simdup/minhash.hpp>
#include <simdup/verify.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace simdup {

class dedup_index;

enum class dedup_mode {
  stream,  ///< in input order: a document within k of an earlier kept one is dropped
  batch,   ///< order-free: all pairs, clusters, one representative per cluster by keep policy
};

/// How a duplicate was linked into its cluster; `none` for kept documents.
enum class dedup_layer : uint8_t { none, url, title, exact, near };
/// "url", "title", "exact", "near" ("kept" for none), as written in duplicates.jsonl.
const char* layer_name(dedup_layer layer) noexcept;

struct dedup_options {
  dedup_mode mode = dedup_mode::batch;
  /// What makes two documents near duplicates: fingerprint settings, k, verification,
  /// MinHash, cluster shape (batch), anchor floor. Validated by the engines and the signer.
  detection_profile detection;
  /// Exact layer by normalised URL (normalize_url). Default on.
  bool url_layer = true;
  /// Exact layer by normalised title. Default off: distinct pages often share a title.
  bool title_layer = false;
  /// Exact layer by the hash of the normalised text. Default on.
  bool content_layer = true;
  /// The SimHash near layer. Default on.
  bool near_layer = true;
  /// Representative of each cluster (batch mode; stream mode always keeps the first).
  keep_policy keep;
  /// Indexes of earlier runs (batch mode; at most 255, each of this run's profile): a document
  /// that is an exact or verified near duplicate of one of their documents is dropped for it
  /// (dedup_decision::against), with the whole exact group it belongs to; the others are
  /// deduplicated among themselves as without them.
  std::vector<std::shared_ptr<const dedup_index>> against;
  /// Decontamination: only drop the documents that match `against` (each for its own match);
  /// the run's documents are not compared with each other.
  bool against_only = false;
  /// Bytes the batch engine's state may hold (0: no limit). Once it holds half, the
  /// per-document columns that only the near layer reads (MinHash band keys, candidate
  /// sketches: up to 144 bytes per document) move to files in detection.verify's tmp_dir, and
  /// the near layer's pair search runs in passes within what is left. The rest of the state
  /// (about 70 bytes per document) stays in memory: the caller decides when that is too much.
  uint64_t memory_limit = 0;
};

/// Sets the layer switches of `options` from a comma-separated list of url, title, exact, near.
/// errc::invalid_argument naming the parameter `layers` for an unknown name.
status parse_layers(std::string_view list, dedup_options& options);

/// What the dedup engines need of one document; computed by document_signer, in parallel.
struct doc_signature {
  uint64_t fingerprint = 0;
  /// The fingerprint is valid (status ok). Short documents (too_short) only take part in the
  /// exact layers.
  bool has_fingerprint = false;
  /// Exact-layer keys (exact_key of the normalised value); 0 = none (empty, or layer off).
  uint64_t url_key = 0;
  uint64_t title_key = 0;
  uint64_t content_key = 0;
  /// Bytes of text (keep=longest).
  uint32_t length = 0;
  /// Unix seconds (keep=newest); min() when the record has no time.
  int64_t time = std::numeric_limits<int64_t>::min();
  /// Value of the keep field (keep=field:NAME: a JSONL field, or a CSV column named by the
  /// header row); -infinity when missing or not a number.
  double field = -std::numeric_limits<double>::infinity();
  /// Invalid UTF-8 sequences repaired while reading and normalising.
  uint32_t invalid_utf8 = 0;
  /// The text was normalised as HTML (a WARC response, or text that opens with a page tag).
  bool html = false;
  /// Sorted shingle hashes (only when verifying).
  std::vector<uint32_t> shingles;
  /// MinHash band keys of the shingles (only with detection_profile::minhash.bands > 0).
  std::vector<uint64_t> band_keys;
};

/// Turns documents into signatures. Create once; sign() is const and safe to call from many
/// threads at once.
class document_signer {
 public:
  /// Signs with options.detection.fingerprint. Errors name the offending parameter (missing
  /// dictionaries, bad shingle width, ...).
  static result<document_signer> create(const dedup_options& options);
  /// Fills `out` (every field overwritten) for `doc`. For keep=field:NAME on a CSV record,
  /// `csv_header` is its input's header row (reader::header()), which names the columns.
  void sign(const document& doc, doc_signature& out, std::string_view csv_header = {}) const;

  document_signer(document_signer&&) noexcept;
  document_signer& operator=(document_signer&&) noexcept;
  ~document_signer();

 private:
  struct impl;
  explicit document_signer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// The fate of one document.
struct dedup_decision {
  /// Ordinal (0-based input position) of the kept document this one duplicates; its own
  /// ordinal when kept. Also the cluster id.
  uint32_t representative = 0;
  dedup_layer layer = dedup_layer::none;
  /// Hamming distance to the representative's fingerprint; -1 when either has none.
  int8_t distance = -1;
  /// Verified Jaccard with the representative; NaN when not verified.
  float jaccard = std::numeric_limits<float>::quiet_NaN();
  /// 0, or i + 1 when the document duplicates document `representative` of
  /// dedup_options::against[i], an earlier run's index.
  uint8_t against = 0;

  bool kept(uint32_t ordinal) const noexcept { return against == 0 && representative == ordinal; }
};

/// Why dedup decides as it does about one pair: both documents through the same signer, then
/// the layers in dedup's order (url, title, exact, near).
struct pair_explanation {
  doc_signature a, b;
  /// Hamming distance of the fingerprints; -1 when either document is short (no fingerprint).
  int distance = -1;
  /// Jaccard of the verification shingles (exact, or the sketch estimate with max_hashes); NaN
  /// without verification or when either document has no fingerprint.
  double jaccard = std::numeric_limits<double>::quiet_NaN();
  /// MinHash bands agree (batch with MinHash): a candidate even beyond k.
  bool minhash_candidate = false;
  /// The layer that links the pair; none when it is not linked.
  dedup_layer layer = dedup_layer::none;
  /// Dedup links the two directly: same URL, title or text, or a near candidate (within k, or
  /// by MinHash) that passes verification and, for anchored clusters, the anchor floor.
  bool duplicate = false;
  /// One sentence: which rule decided.
  std::string reason;
};

/// Explains the pair (a, b) under `options` (its detection profile, layers and mode), exactly as
/// the dedup engines decide a direct link. Errors as document_signer::create.
result<pair_explanation> explain_pair(const dedup_options& options, const document& a,
                                      const document& b);

/// Stream mode: decides each document on arrival, against the documents kept before it.
class stream_deduplicator {
 public:
  static result<stream_deduplicator> create(const dedup_options& options);
  /// Decides the next document (ordinals count from 0 in call order).
  result<dedup_decision> add(const doc_signature& sig);
  /// Decides the next sigs.size() documents, in order, exactly as add() one by one would, into
  /// `out` (one decision each; on error, those made before it). Faster on a large index: one
  /// batch probe for all of them.
  status add(std::span<const doc_signature> sigs, std::vector<dedup_decision>& out);
  /// Documents added so far.
  uint32_t size() const noexcept;
  /// Near candidates compared so far (kept documents within k of a new one, closest first,
  /// until one passed verification), and those verification rejected.
  uint64_t candidate_pairs() const noexcept;
  uint64_t rejected_pairs() const noexcept;
  /// Bytes held by the exact tables, the index and the shingle store (for the summary).
  std::size_t memory_bytes() const noexcept;
  /// Bytes of shingle arrays in the temporary file (0 without verification).
  uint64_t spilled_bytes() const noexcept;
  /// The verification shingles of kept document `ordinal` (empty for a dropped one, or
  /// without verification); for the index of the run.
  status shingles(uint32_t ordinal, std::vector<uint32_t>& out) const;

  stream_deduplicator(stream_deduplicator&&) noexcept;
  stream_deduplicator& operator=(stream_deduplicator&&) noexcept;
  ~stream_deduplicator();

 private:
  struct impl;
  explicit stream_deduplicator(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Batch mode: collects signatures, then finds all near pairs, verifies them, clusters and
/// picks representatives.
class batch_deduplicator {
 public:
  static result<batch_deduplicator> create(const dedup_options& options);
  /// Adds the next document (ordinals count from 0). The exact layers are applied here.
  status add(doc_signature&& sig);

  /// Resuming (the dedup job's --resume journal). Before the first add: keeps verification's
  /// shingle arrays in the named file `path` instead of an unlinked temporary file, so that
  /// they outlive a killed run; with `reopen`, `path` is such a file of an interrupted run,
  /// whose arrays add_replayed() takes back. Without verification nothing changes.
  status keep_shingles_in(const std::string& path, bool reopen);
  /// add() for a document of the interrupted run: `sig` without its shingles, of which it had
  /// `shingle_count`, which the reopened file holds where add() stored them, and `sketch` its
  /// candidate sketch as candidate_sketches() gave it. The decisions are those the documents'
  /// add() would give.
  status add_replayed(doc_signature&& sig, std::size_t shingle_count,
                      std::span<const uint8_t> sketch);
  /// The candidate sketches (the in-memory pre-check of exact verification) of documents
  /// `first` .. `first + count - 1`, concatenated, for a journal to keep; empty without exact
  /// verification.
  status candidate_sketches(uint32_t first, uint32_t count, std::vector<uint8_t>& out) const;
  /// After the last add_replayed(): the reopened file is cut after the arrays taken back, and
  /// add() stores the next ones.
  status end_replay();
  /// Writes verification's buffered arrays to the file (a journal records only what the file
  /// holds).
  status flush_shingles();
  /// Runs the near layer and clustering; returns one decision per document added. `progress`
  /// (may be empty) is told the phase name as work proceeds.
  result<std::vector<dedup_decision>> finish(
      const std::function<void(std::string_view phase)>& progress = {});
  uint32_t size() const noexcept;
  /// Candidate pairs found by the index, and those rejected by verification (after finish).
  uint64_t candidate_pairs() const noexcept;
  uint64_t rejected_pairs() const noexcept;
  /// Of candidate_pairs(), those only MinHash found (options.minhash).
  uint64_t minhash_candidate_pairs() const noexcept;
  /// Of rejected_pairs(), those ruled out in memory (shingle-set sizes, candidate sketches)
  /// before verification read their shingle arrays.
  uint64_t prefiltered_pairs() const noexcept;
  /// Of candidate_pairs(), those between this run's documents and options.against's, and of
  /// rejected_pairs(), those of them verification rejected.
  uint64_t against_candidate_pairs() const noexcept;
  uint64_t against_rejected_pairs() const noexcept;
  /// The verification shingles of document `ordinal` (empty without verification or when it
  /// has no fingerprint), read back from the temporary file; for the index of the run.
  status shingles(uint32_t ordinal, std::vector<uint32_t>& out) const;
  std::size_t memory_bytes() const noexcept;
  /// Bytes of shingle arrays in the temporary file (0 without verification).
  uint64_t spilled_bytes() const noexcept;
  /// Bytes of band keys and sketches moved to files under options.memory_limit.
  uint64_t column_spilled_bytes() const noexcept;
  /// Replaces options.memory_limit from now on with the whole `limit`, of which the caller
  /// holds `held_elsewhere` (its ids, what the process held before the engine): the engine
  /// gets the rest, and a refusal names the whole limit. A caller whose own working set
  /// shrinks before finish() (reading is over) gives the near layer the difference.
  void set_memory_limit(uint64_t limit, uint64_t held_elsewhere = 0) noexcept;

  batch_deduplicator(batch_deduplicator&&) noexcept;
  batch_deduplicator& operator=(batch_deduplicator&&) noexcept;
  ~batch_deduplicator();

 private:
  struct impl;
  explicit batch_deduplicator(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
