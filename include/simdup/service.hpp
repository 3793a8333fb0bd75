// The online dedup service (`simdup serve`): HTTP/JSON front end over durable, windowed
// collections of fingerprints, kept in embedded RocksDB or in a shared redis-server.
#pragma once

#include <simdup/error.hpp>
#include <simdup/minhash.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace simdup {

struct service_options {
  /// Directory of the embedded RocksDB store (created if missing). Required with the default
  /// store; unused with a redis:// store.
  std::string data_dir;
  /// "rocksdb" (default, under data_dir) or "redis://HOST:PORT[/DB]" (shared by many processes).
  std::string store = "rocksdb";
  /// Address to bind. Loopback unless told otherwise.
  std::string host = "127.0.0.1";
  /// TCP port; 0 picks a free one (printed on stdout when listening).
  int port = 8080;
  /// Hamming distance (inclusive, 0 to max_index_k) of collections created without their own
  /// setting. Default 4, with default_verify (docs/service.md, "The price of k", says why not
  /// dedup's 8).
  int default_k = 4;
  /// Jaccard threshold of collections created without their own setting, in (0, 1]: a
  /// candidate within k is a duplicate only if its shingle Jaccard reaches it; 0: no
  /// verification. Default 0.8.
  double default_verify = 0.8;
  /// Window of collections created without their own setting, in seconds; 0 keeps documents
  /// forever.
  int64_t default_window_s = 7 * 24 * 3600;
  /// Shingle hashes kept per text document for verification (its bottom-k sketch), 16 to 4096,
  /// of collections created without their own setting. Default 512 (docs/service.md,
  /// "Verification").
  int default_sketch = 512;
  /// MinHash bands of collections created without their own setting (bands 0: off). Default
  /// 10 bands of 6 rows (docs/service.md, "MinHash bands").
  minhash_options default_minhash{.bands = 10, .rows = 6};
  /// File holding the bearer token (surrounding whitespace ignored). Empty: no authentication.
  std::string token_file;
  /// Largest accepted request body, in bytes (inclusive). Larger bodies get 413.
  std::size_t max_body_bytes = 8u << 20;
  /// Most documents in one request (inclusive). More get 413.
  std::size_t max_documents = 1000;
  /// Most matches listed per document (closest first).
  std::size_t max_matches = 10;
  /// Seconds (at least 1) a connection may stay idle or take to send a request, and a write
  /// may stay stuck, before the connection is closed; also how long stop() waits for answers.
  int timeout_s = 10;
  /// Event-loop threads serving HTTP; each serves any number of connections. 0 picks the core
  /// count with the RocksDB store and 4 x cores with Redis (whose calls hold a loop for a
  /// network round trip).
  int threads = 0;
  /// How often the window is enforced (expired documents removed), in milliseconds.
  int expire_interval_ms = 1000;
  /// RocksDB store: a collection's index is saved as a segment file (under data_dir/segments)
  /// when this many inserts and removals happened since the last file and the collection is
  /// idle for an expire interval, after ten minutes with any change, and at exit, so that a
  /// restart loads it and replays only newer documents. 0: only the other rules.
  uint64_t snapshot_documents = 100'000;
  /// Directory that POST /v1/{collection}/export writes its indexes under (export_dir/NAME;
  /// created at start if missing). Empty (the default): the route is refused, so that no
  /// client can fill the disk unless the operator chose where.
  std::string export_dir;
  /// TEST ONLY: read "now" (seconds since the epoch) from this file instead of the system
  /// clock, so tests can move time forward. Never use in production.
  std::string clock_file;
};

/// A running service. start() binds and serves on background threads; stop() (or SIGTERM with
/// run_until_signal) drains in-flight requests and closes the store cleanly.
class service {
 public:
  /// Opens the store, loads collections and rebuilds their indexes. Errors name the option or
  /// path at fault.
  static result<std::unique_ptr<service>> create(const service_options& options);

  /// Creates a collection with the default settings (k, verify, window) unless it exists.
  status add_collection(const std::string& name);

  /// What import_index did.
  struct import_counts {
    uint64_t imported = 0;
    /// Documents of the index without a fingerprint (short texts: the service has no exact
    /// layer for them).
    uint64_t without_fingerprint = 0;
  };
  /// Inserts the documents of a dedup index (`simdup dedup`'s DIR/index, or a merged one;
  /// simdup/dedup_index.hpp) into an existing collection, durably, as inserts of their
  /// fingerprints and (when the collection verifies) sketches, timed `now` for the window, a
  /// document with the id of a stored one replacing it. errc::not_found for a missing
  /// collection or index; invalid_argument when the index's fingerprint or verification
  /// settings are not the collection's (naming the first that differs); the index's and the
  /// store's errors. `progress(done, total)` is called after every batch (may be empty).
  result<import_counts> import_index(const std::string& collection, const std::string& index,
                                     const std::function<void(uint64_t, uint64_t)>& progress = {});

  /// What export_index wrote.
  struct export_counts {
    uint64_t documents = 0;  ///< written to the index
    /// Stored but out of the window at the export's time (not yet removed by expiry): left out.
    uint64_t expired = 0;
    /// Of those written, in a verifying collection, documents without a sketch (sent as
    /// fingerprints): written without verification shingles, so only their distance decides.
    uint64_t without_sketch = 0;
    uint64_t bytes = 0;  ///< of the index's files, the manifest included
  };
  /// Writes the collection's live documents (in its window now) as a dedup index in `out_dir`
  /// (simdup/dedup_index.hpp; created: it must not exist, its parent must), for `simdup dedup
  /// --against`, `simdup index` and import_index: their fingerprints and ids, and as
  /// verification shingles their sketches (the profile's verify.max_hashes is the collection's
  /// sketch size: a bottom-k sketch, not every shingle) and their MinHash band keys (zeros for
  /// documents without); no exact-layer keys (the service keeps none). The profile is the
  /// collection's settings (import_index's). The service goes on serving meanwhile: with RocksDB
  /// the export is the collection at one instant as the call starts (durable before the call
  /// returns); with Redis it follows SCAN (a document inserted or deleted meanwhile may or may not
  /// be in it, and one may be written twice if Redis resizes its table meanwhile). On any error
  /// nothing is left at `out_dir`. errc::not_found for a missing collection; invalid_argument when
  /// `out_dir` exists; unavailable when the service stops meanwhile; the store's and the files'
  /// errors. `progress(done, total)` every 10,000 documents visited (total: those stored as it
  /// began).
  result<export_counts> export_index(const std::string& collection, const std::string& out_dir,
                                     const std::function<void(uint64_t, uint64_t)>& progress = {});

  /// Binds the listening socket and serves on background threads; returns the bound port.
  result<int> start();
  /// Blocks until SIGTERM or SIGINT, then stops. Call start() first; the signals must be blocked
  /// in every thread (block_stop_signals() before creating any thread).
  void run_until_signal();
  /// Stops accepting, finishes in-flight requests and closes the store.
  void stop();

  ~service();

 private:
  struct impl;
  explicit service(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Blocks SIGTERM and SIGINT in the calling thread (and threads it creates later), so that
/// service::run_until_signal can wait for them synchronously.
void block_stop_signals();

}  // namespace simdup
