// What the service needs from a store: durable, windowed collections of (id, fingerprint, time)
// with an atomic check-and-insert. Two implementations: embedded RocksDB with an in-memory
// index (rocks_backend) and a shared redis-server (redis_backend).
#pragma once

#include <simdup/detection.hpp>
#include <simdup/error.hpp>
#include <simdup/minhash.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// Settings of one collection; persisted by the backend as JSON.
struct collection_config {
  /// [A-Za-z0-9_.-], 1 to 64 characters.
  std::string name;
  /// Largest Hamming distance that counts as a duplicate (inclusive), 0 to max_index_k. Default
  /// 4 with verify = 0.8: dedup's k = 8 needs 495 online tables (2.4 KB and ~130 us per
  /// document), k = 4 needs 15 and still finds a light edit 4 bits away (docs/service.md).
  int k = 4;
  /// Jaccard threshold (inclusive, in (0, 1]) a candidate within k must reach against the
  /// document's shingle sketch to be a duplicate; 0: no verification. Settings stored before
  /// verification existed have none (stored_config_base).
  double verify = 0.8;
  /// Window in seconds: a document is live while time + window_s > now (the query's document
  /// time, or the clock for expiry); 0 keeps documents forever.
  int64_t window_s = 7 * 24 * 3600;
  /// Fingerprint settings for documents sent as text: "none", "python-simhash" or "jieba-tfidf".
  std::string compat = "none";
  /// Code points per shingle for compat "none" and features "shingles" (1 to 64).
  int shingle_width = 4;
  /// Features of compat "none": "shingles" (default), "jieba" (every jieba word) or "keywords"
  /// (jieba words weighted by TF-IDF, jieba's IDF table and stop words).
  std::string features = "shingles";
  /// Keep only the K heaviest features, 0 to 1000; 0 (default) keeps all (compat "jieba-tfidf":
  /// jieba's default of 20).
  int top_k = 0;
  /// Shingle hashes kept per document for verification (its bottom-k sketch), 16 to 4096:
  /// documents with at most this many distinct shingles are compared exactly, larger ones by
  /// the bottom-k estimate (standard error about sqrt(J(1-J)/k): 0.018 at J = 0.8 and k = 512;
  /// docs/service.md, "Verification"). Settings stored before it existed have 128.
  int sketch = 512;
  /// MinHash-LSH bands beside SimHash (dedup's --minhash): a document sent as text to a
  /// verifying collection also finds the stored documents that agree with it on every row of a
  /// band, however far apart their fingerprints are; each is then verified. bands 0: SimHash
  /// only (settings stored before it existed).
  minhash_options minhash{.bands = 10, .rows = 6};
};

/// Whether `name` is a valid collection name (see collection_config::name).
bool valid_collection_name(std::string_view name);
/// Checks a config's ranges; the message names the field.
status validate(const collection_config& config);
/// The collection's detection profile: its k, verification (over its sketch size) and MinHash
/// bands. Its fingerprint options are the library's defaults; text_fingerprints sets the
/// collection's.
detection_profile detection_for(const collection_config& config);
/// JSON form, as stored and as answered by GET /v1/{collection}/stats.
std::string to_json(const collection_config& config);
/// Parses to_json's form (and the body of PUT /v1/{collection}); missing fields keep `base`.
result<collection_config> config_from_json(std::string_view json, collection_config base);
/// The base for settings a store holds: fields missing from them take the values of the build
/// that wrote them (no verification), not today's defaults.
collection_config stored_config_base(std::string name);
/// "jaccard:T" (T in (0, 1]) or "off" (0) to a collection_config::verify threshold.
result<double> parse_verify_setting(std::string_view text);
/// The JSON string form of a threshold: "jaccard:0.8" or "off".
std::string verify_setting(double threshold);
/// The JSON string form of MinHash bands: "10x6" or "off".
std::string minhash_setting(const minhash_options& minhash);

enum class doc_op {
  check,         ///< report matches, change nothing
  insert,        ///< insert (replacing a document with the same id), report nothing
  check_insert,  ///< atomically: matches if any, else insert
};

struct doc_input {
  std::string id;
  uint64_t fingerprint = 0;
  /// Seconds since the epoch; the window is measured from it.
  int64_t time = 0;
  /// The bottom-k shingle sketch of a document sent as text to a verifying collection (at most
  /// collection_config::sketch hashes, sorted); empty for a document sent as a fingerprint,
  /// which cannot be verified.
  std::vector<uint32_t> sketch;
  /// Its MinHash band keys (collection_config::minhash.bands of them, from all its shingles);
  /// empty when it has no sketch or the collection has no bands.
  std::vector<uint64_t> band_keys;
};

struct doc_match {
  std::string id;
  int distance = 0;
  /// Estimated Jaccard similarity of the two documents' shingle sets; nullopt when the
  /// collection does not verify or either document has no sketch (then the distance decided).
  std::optional<double> jaccard;
};

struct doc_outcome {
  bool inserted = false;
  /// Closest first, then by id; at most the requested number.
  std::vector<doc_match> matches;
};

struct pending_removal {
  bool removed = false;
  /// For when_durable; 0: nothing to wait for.
  uint64_t ticket = 0;
};

/// A stored document, as GET /v1/{collection}/documents/{id} reports it.
struct stored_document {
  uint64_t fingerprint = 0;
  int64_t time = 0;
};

/// A stored document as for_each_document shows it; the views last for the call only.
struct document_view {
  std::string_view id;
  uint64_t fingerprint = 0;
  int64_t time = 0;
  /// As doc_input::sketch; empty when the document has none.
  std::span<const uint32_t> sketch;
  /// As doc_input::band_keys; empty when the document has none.
  std::span<const uint64_t> band_keys;
};

struct pending_lookup {
  std::optional<stored_document> document;
  /// For when_durable (the answer reports what the store holds); 0: nothing to wait for.
  uint64_t ticket = 0;
};

/// Counts of a collection. The totals are kept with the data and survive restarts (a store
/// written before they were kept starts them at 0).
struct collection_stats {
  uint64_t documents = 0;     ///< stored now
  uint64_t inserted = 0;      ///< inserted over the collection's life
  uint64_t expired = 0;       ///< removed by the window over the collection's life
  uint64_t deleted = 0;       ///< removed by DELETE over the collection's life
  uint64_t index_bytes = 0;   ///< memory held by the in-memory index (0 when there is none)
  uint64_t id_map_bytes = 0;  ///< memory held by the in-memory id map (0 when there is none)
  /// Segments of the in-memory index (0 when there is none): each is one probe per query.
  uint64_t index_segments = 0;
};

/// The Jaccard estimate of two documents' sketches (sketch_jaccard over the collection's sketch
/// size), or nullopt when either has none: such a pair cannot be verified, and its distance
/// decides.
std::optional<double> sketch_similarity(const collection_config& config,
                                        std::span<const uint32_t> a, std::span<const uint32_t> b);

class backend {
 public:
  virtual ~backend() = default;

  /// Every persisted collection (loaded at start).
  virtual result<std::vector<collection_config>> collections() = 0;
  /// Creates a collection durably. If one of that name exists: success when the settings are
  /// equal, errc::invalid_argument when they differ.
  virtual status create(const collection_config& config) = 0;

  /// Applies `op` to the documents in order (later ones see earlier ones inserted) and fills
  /// `out` (out.size() == docs.size()); `now` is the clock for the window. The changes are
  /// made but may not be durable yet: the returned ticket goes to when_durable, and an answer
  /// must not be sent before it completes. Ticket 0: nothing to wait for.
  virtual result<uint64_t> apply_pending(const collection_config& config, doc_op op,
                                         std::span<const doc_input> docs, int64_t now,
                                         std::size_t max_matches, std::span<doc_outcome> out) = 0;
  /// Calls `done` once, when every change made under `ticket` is durable (with an error when
  /// it cannot be made so): possibly at once on this thread, possibly later on another one.
  /// Durability is shared: one sync covers every ticket issued before it.
  virtual void when_durable(uint64_t ticket, std::function<void(status)> done) = 0;
  /// apply_pending, then waits for durability: for callers that can block.
  status apply(const collection_config& config, doc_op op, std::span<const doc_input> docs,
               int64_t now, std::size_t max_matches, std::span<doc_outcome> out);
  /// Blocks until when_durable(ticket) completes; returns its status.
  status wait_durable(uint64_t ticket);
  /// Removes a document; false if it did not exist. Like apply_pending, the removal is made but
  /// may not be durable yet: wait for the ticket with when_durable before answering.
  virtual result<pending_removal> remove_pending(const collection_config& config,
                                                 const std::string& id) = 0;
  /// remove_pending, then waits for durability.
  result<bool> remove(const collection_config& config, const std::string& id);
  /// The stored document with this id, if any (whatever its time: the caller applies the
  /// window). Wait for the ticket with when_durable before answering.
  virtual result<pending_lookup> lookup(const collection_config& config, const std::string& id) = 0;
  /// Calls `visit` once for each stored document of the collection, whatever its time (the
  /// caller applies the window), in no particular order; stops at the first error `visit`
  /// returns and returns it. RocksDB: one consistent snapshot of the collection as the call
  /// starts (changes made meanwhile are not seen); wait for the returned ticket with
  /// when_durable before reporting what was visited. Redis: a SCAN of the documents, with its
  /// guarantees: a document stored throughout the call is visited, one inserted or removed
  /// meanwhile may or may not be, and one may be visited twice while Redis resizes its table
  /// (ticket 0). errc::not_found when there is no such collection.
  virtual result<uint64_t> for_each_document(
      const collection_config& config,
      const std::function<status(const document_view&)>& visit) = 0;
  /// Deletes a collection durably with all its documents; errc::not_found when there is none.
  /// Requests still in flight on it fail with errc::not_found.
  virtual status drop(const std::string& name) = 0;
  /// Removes documents older than the window.
  virtual status expire(const collection_config& config, int64_t now) = 0;
  virtual result<collection_stats> stats(const collection_config& config) = 0;
  /// An error when the store cannot serve any request (until a restart).
  virtual status health() { return {}; }
};

struct rocks_options {
  /// A collection's index is saved as a segment file (under DIR/segments), so that a restart
  /// loads it and replays only newer documents: at close, when a collection has none, once
  /// this many inserts and removals happened since the last one and the collection is idle
  /// (no change between two expire() calls). Default 100,000; 0 disables this rule.
  uint64_t snapshot_documents = 100'000;
  /// ... and under a steady load once the last file is this many seconds old (and anything
  /// changed). Default 600; 0 disables this rule.
  int64_t snapshot_interval_s = 600;
};

/// Embedded RocksDB under `dir`; loads the in-memory indexes from their segment files and the
/// documents newer than them, or rebuilds them from the store when a file is missing, stale
/// or corrupt.
result<std::unique_ptr<backend>> open_rocks_backend(const std::string& dir,
                                                    const rocks_options& options = {});
/// redis://HOST:PORT[/DB]; several processes may share it.
result<std::unique_ptr<backend>> open_redis_backend(const std::string& url);

}  // namespace simdup::detail
