// The embedded RocksDB backend. Internal to the store component; the service uses backend.hpp. Its
// members are defined by concern: rocks_backend.cpp (opening, the collections), rocks_apply.cpp
// (writes), rocks_matching.cpp (probes and verification), rocks_records.cpp (records),
// rocks_commit.cpp (group commit), rocks_maintenance.cpp (index maintenance), rocks_expiry.cpp
// (expiry) and rocks_snapshot.cpp (loading at start and segment files).
#pragma once

#include <pthread.h>
#include <rocksdb/db.h>
#include <rocksdb/transaction_log.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <simdup/online_index.hpp>
#include "store/backend.hpp"
#include "store/band_index.hpp"
#include "store/id_map.hpp"
#include "store/rocks_keys.hpp"

namespace simdup::detail {

error_info db_error(const char* what, const rocksdb::Status& s);
online_index_options index_options(const collection_config& c);

/// A stored document and the record that holds it (rocks_keys.hpp).
struct doc_location {
  uint64_t record = 0;  ///< the record's key number
  uint64_t num = 0;
  uint64_t fingerprint = 0;
  int64_t time = 0;
  /// Its MinHash band keys; empty when it has none.
  std::vector<uint64_t> band_keys;
};

/// Records one request rewrites (documents deleted or replaced), by key number; written with
/// the request's batch.
struct record_edits {
  struct record {
    std::string value;                         ///< as stored; `docs` point into it
    std::vector<rocks_keys::stored_doc> docs;  ///< what is left
    int64_t newest = 0;                        ///< the stored t/ key's time
    uint64_t last = 0;                         ///< the largest number it held
  };
  std::map<uint64_t, record> records;
};

/// A mutex that spins a little before it sleeps (glibc's adaptive kind where available): the
/// collection lock is held for microseconds, less than a waiter's trip to sleep and back, and
/// such trips were most of a single-document request's cost.
class adaptive_mutex {
 public:
  adaptive_mutex() {
#if defined(__GLIBC__)
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&m_, &attr);
    pthread_mutexattr_destroy(&attr);
#else
    pthread_mutex_init(&m_, nullptr);
#endif
  }
  ~adaptive_mutex() {
    pthread_mutex_destroy(&m_);
  }
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;
  void lock() {
    pthread_mutex_lock(&m_);
  }
  void unlock() {
    pthread_mutex_unlock(&m_);
  }
  bool try_lock() {
    return pthread_mutex_trylock(&m_) == 0;
  }

 private:
  pthread_mutex_t m_;
};

struct collection_state : std::enable_shared_from_this<collection_state> {
  collection_state(collection_config c, online_index i, std::optional<band_index> b)
      : config(std::move(c)), index(std::move(i)), bands(std::move(b)) {}
  collection_config config;
  /// Serialises changes (the index allows concurrent queries, but check-insert, the WAL order
  /// and replacing an id must be one step).
  adaptive_mutex mu;
  online_index index;
  /// The MinHash bands' index when the collection has bands (under mu). Not saved in segment
  /// files: every start reads all records anyway (for the id map) and rebuilds it from their
  /// band keys.
  std::optional<band_index> bands;
  uint64_t next_num = 1;
  /// Number of the next removal-log key (under mu).
  uint64_t next_removal = 0;
  /// Every entry numbered below this is in the index and the store (published after both,
  /// under mu).
  std::atomic<uint64_t> published{1};
  /// Counts removals from the index or the store (under mu): a probe made before one may be
  /// stale.
  std::atomic<uint64_t> removals{0};
  /// Failed writes undone (under mu): a segment file saved meanwhile may hold undone entries.
  uint64_t rollbacks = 0;
  /// The most recent inserts, in number order (under mu), for the re-check after a lock-free
  /// probe; bounded.
  std::deque<index_entry> recent;
  /// Id to number of every stored document (under mu).
  id_map ids;
  std::atomic<uint64_t> documents{0}, inserted{0}, expired{0}, deleted{0};
  /// Set (under mu and snapshot_mu) once DELETE /v1/{collection} removed it from the store:
  /// requests that found it before fail, and nothing more is written for it.
  bool dropped = false;

  /// The totals key's value once `inserted`, `expired` and `deleted` grow by these (under mu).
  std::string totals_after(uint64_t more_inserted, uint64_t more_expired,
                           uint64_t more_deleted) const {
    return rocks_keys::encode(rocks_keys::totals{inserted + more_inserted, expired + more_expired,
                                                 deleted + more_deleted});
  }

  /// Segment file state (under snapshot_mu): what the current file covers and when it was saved.
  std::mutex snapshot_mu;
  rocks_keys::snapshot_record snapshot;
  int64_t snapshot_time = 0;
  /// next_num + next_removal at the previous maybe_snapshot: unchanged, with no writer in
  /// apply() now, means idle.
  uint64_t last_mark = 0;
  /// Requests in apply() that may write (a writer stuck behind a long index merge changes
  /// nothing for a while, yet the collection is not idle).
  std::atomic<int> writers{0};
  /// Queued for the maintenance thread (under rocks_backend::maint_mu_).
  bool maintenance_queued = false;
  /// Sequence number of the newest write (under mu): an answer that reports what the index
  /// holds waits for it, since what it reports may not be synced yet.
  uint64_t last_write = 0;
};

/// Reads a collection's records by document number through one iterator, made on first use:
/// a request's lookups share it, and consecutive numbers of one record are not read again.
class record_reader {
 public:
  record_reader(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* records, std::string_view collection)
      : db_(db), records_(records), collection_(collection) {}

  /// Positions at the record holding number `num`: false when no record does (its document
  /// may still be missing from it). Errors for an unreadable record.
  result<bool> seek(uint64_t num);
  /// Of the record seek found (valid until the next seek): its key number, value, documents.
  uint64_t record() const noexcept { return record_; }
  std::string_view value() const noexcept { return value_; }
  std::span<const rocks_keys::stored_doc> docs() const noexcept { return docs_; }
  /// Document `num` of that record, or null.
  const rocks_keys::stored_doc* doc(uint64_t num) const noexcept;

 private:
  rocksdb::DB& db_;
  rocksdb::ColumnFamilyHandle* records_;
  std::string_view collection_;
  std::unique_ptr<rocksdb::Iterator> it_;
  bool positioned_ = false;
  uint64_t record_ = 0, last_ = 0;
  std::string_view value_;
  std::vector<rocks_keys::stored_doc> docs_;
};

class rocks_backend final : public backend {
 public:
  /// Takes the column family handles of the n/ and t/ keys (rocks_keys.hpp).
  rocks_backend(std::unique_ptr<rocksdb::DB> db, rocksdb::ColumnFamilyHandle* num_cf,
                rocksdb::ColumnFamilyHandle* time_cf, std::string dir, rocks_options options);
  ~rocks_backend() override;

  /// Loads every collection: its segment file and the newer documents, or a full rebuild.
  status load();

  result<std::vector<collection_config>> collections() override;
  status create(const collection_config& config) override;
  result<uint64_t> apply_pending(const collection_config& config, doc_op op,
                                 std::span<const doc_input> docs, int64_t now,
                                 std::size_t max_matches, std::span<doc_outcome> out) override;
  void when_durable(uint64_t ticket, std::function<void(status)> done) override;
  result<pending_removal> remove_pending(const collection_config& config,
                                         const std::string& id) override;
  /// Also saves the collection's segment file when rocks_options says it is due.
  status expire(const collection_config& config, int64_t now) override;
  result<collection_stats> stats(const collection_config& config) override;
  result<pending_lookup> lookup(const collection_config& config, const std::string& id) override;
  /// In rocks_records.cpp.
  result<uint64_t> for_each_document(
      const collection_config& config,
      const std::function<status(const document_view&)>& visit) override;
  status drop(const std::string& name) override;
  /// errc::unavailable once a sync of the log failed (see failed_).
  status health() override;

 private:
  struct undo_step {
    uint64_t inserted_num;  ///< to remove from the indexes and the id map
    std::span<const uint64_t> inserted_band_keys;
    uint64_t id_hash;
    std::optional<doc_location> old;  ///< an older document with the same id was removed: restore
  };

  /// What apply_pending read before its lock-free probe: entries numbered from `num` on, and
  /// removals after the `removals`-th, may be missing from that probe.
  struct probe_mark {
    uint64_t num;
    uint64_t removals;
  };
  /// Per document, the Jaccard of each hit (aligned with its hits); empty when not verified.
  using hit_jaccards = std::vector<std::vector<std::optional<double>>>;
  /// A write request's state under the collection lock (rocks_apply.cpp).
  struct request_write;

  // rocks_apply.cpp
  /// apply_pending for doc_op::check: verifies and names the probe's hits; no lock but to read the
  /// ticket.
  result<uint64_t> check_only(collection_state& c, std::span<const doc_input> docs,
                              std::vector<std::vector<index_match>>& hits, hit_jaccards& jaccards,
                              std::size_t max_matches, std::span<doc_outcome> out);
  /// The locked part of a write: re-checks, inserts into the index and the id map, and writes the
  /// request's batch (undone on failure). Returns its ticket (0: nothing to wait for).
  result<uint64_t> write_locked(collection_state& c, doc_op op, std::span<const doc_input> docs,
                                const probe_mark& mark, std::vector<std::vector<index_match>>& hits,
                                hit_jaccards& jaccards, std::span<doc_outcome> out);
  /// Inserts document `i` of the request (`d`), replacing a stored one with its id.
  status insert_doc(collection_state& c, doc_op op, const doc_input& d, std::size_t i,
                    request_write& w);
  /// The document that an insert of `id` (id map hash `h`) replaces, taken out of its record: an
  /// earlier one of the same request, or a stored one; nullopt when none.
  result<std::optional<doc_location>> take_replaced(const collection_state& c, std::string_view id,
                                                    uint64_t h, request_write& w);
  /// Writes the request's record, the records it rewrote and its counters as one batch.
  status write_request(collection_state& c, request_write& w);

  /// Shared: a collection dropped meanwhile stays alive until its last request is done.
  result<std::shared_ptr<collection_state>> find(const std::string& name);
  static result<std::shared_ptr<collection_state>> make_state(const collection_config& config);

  /// One batch probe for all documents (interleaved probes), then each document's own window.
  static std::vector<std::vector<index_match>> probe(const collection_state& c,
                                                     std::span<const doc_input> docs);
  /// Whether the recent list holds every insert numbered from `num` on.
  static bool recent_reaches(const collection_state& c, uint64_t num);
  static std::deque<index_entry>::const_iterator recent_from(const collection_state& c,
                                                             uint64_t num);
  /// Completes a probe made without the lock with the entries inserted since (`since`), or
  /// probes again when `reprobe` (something was removed, or the list is too short).
  static void recheck_locked(const collection_state& c, const doc_input& d,
                             std::span<const index_entry> since, bool reprobe,
                             std::vector<index_match>& hits);
  // rocks_records.cpp; callers hold the collection lock.
  record_reader reader(const collection_state& c) {
    return record_reader(*db_, num_cf_, c.config.name);
  }
  /// The stored document with this id, as `edits` leave it, among the id map's `candidates`
  /// for its hash.
  result<std::optional<doc_location>> find_doc(const collection_state& c, std::string_view id,
                                               std::span<const uint64_t> candidates,
                                               record_edits& edits);
  /// Takes document `at` out of its record (in `edits`).
  status remove_from_record(const collection_state& c, const doc_location& at, record_edits& edits);
  void write_edits(const collection_state& c, const record_edits& edits,
                   rocksdb::WriteBatch& batch);
  static void rollback(collection_state& c, std::vector<undo_step>& undo);
  /// The group commit, on its own thread: writes and fsyncs the WAL once for every ticket
  /// queued while the previous sync ran, then completes them all.
  void sync_loop();
  /// Makes every write made so far durable: RocksDB writes its WAL buffer out through the gate,
  /// then the log files are fsynced through descriptors of our own, outside the gate, so that
  /// writers go on meanwhile (why that cannot reach RocksDB's abort: rocks_commit.cpp).
  status sync_log();
  /// The fdatasync of sync_log (under log_sync_mu_): the log files numbered from log_number_ to
  /// `current`, and the directory when a new file appeared.
  status sync_log_files(const rocksdb::LogFile& current);
  /// Seals and merges the index segments that writers set aside, on its own thread, so that
  /// no writer holds the collection lock through a merge.
  void maintenance_loop();
  void request_maintenance(collection_state& c);
  /// After a request changed the index: hands full segments to the maintenance thread, or
  /// seals them on this thread when it falls behind (back-pressure on writers).
  void after_index_change(collection_state& c);
  /// Appends to `hits` the documents that share a MinHash band with `d` and are not hits
  /// already, with distance -1 (unknown until verify_hits reads them and applies the window).
  /// Under the collection lock.
  static void add_band_hits(const collection_state& c, const doc_input& d,
                            std::vector<index_match>& hits);
  /// With verification on: keeps the hits of `d` whose Jaccard reaches the collection's
  /// threshold (or that cannot be verified and are within k), and their Jaccard in `jaccards`.
  /// A hit's sketch is read from the store, or from `own` for this request's documents
  /// (numbered from `base`); a band hit's distance is filled in from its fingerprint.
  static status verify_hits(const collection_state& c, const doc_input& d, record_reader& stored,
                            std::span<const rocks_keys::stored_doc> own, uint64_t base,
                            std::vector<index_match>& hits,
                            std::vector<std::optional<double>>& jaccards);
  /// db_error; an I/O error (disk full) also stops the store (failed_).
  error_info write_error(const char* what, const rocksdb::Status& s);
  /// The gate of RocksDB's write path: every Write, Put and FlushWAL after opening runs `call`
  /// through here, one at a time, and none runs once one has failed (health()). After a failed
  /// write of the WAL, RocksDB's WAL writer must not be used again (Debian's build asserts in
  /// WritableFileWriter::AssertFalseAndGetStatusForPrevError and aborts the service), and a
  /// concurrent call could reach it before RocksDB itself has recorded the failure. The fsync
  /// of the group commit is not a RocksDB call (sync_log) and runs outside.
  template <class Call>
  status through_gate(const char* what, Call&& call) {
    std::lock_guard lock(gate_mu_);
    if (auto st = health(); !st) return st;
    if (const rocksdb::Status s = call(); !s.ok()) return write_error(what, s);
    return {};
  }
  /// Under the collection lock: the stored document with this id, or an error when the
  /// collection was dropped meanwhile.
  result<std::optional<doc_location>> find_live_doc(const collection_state& c,
                                                    const std::string& id, record_edits& edits);
  status resolve_all(const collection_state& c, std::vector<std::vector<index_match>>& hits,
                     const hit_jaccards& jaccards, std::size_t max_matches,
                     std::span<doc_outcome> out);

  // rocks_snapshot.cpp
  /// The segment file and newer documents; false (with the reason on stderr) when the file
  /// cannot be used.
  result<bool> load_snapshot(collection_state& c);
  /// Reads every record: the id map and document count, and the index entries numbered from
  /// `from` on (all of them when there is no segment file).
  status scan_records(collection_state& c, uint64_t from, uint64_t end_num);
  /// The number of the last key under prefix `p` (p + 8 bytes big endian) in `family`, or
  /// nullopt when there is none.
  result<std::optional<uint64_t>> last_number(rocksdb::ColumnFamilyHandle* family,
                                              std::string_view p);
  status maybe_snapshot(collection_state& c);
  /// Saves the index as a segment file and records it; a no-op when nothing changed.
  status snapshot(collection_state& c);
  std::string segments_dir() const;
  // rocks_expiry.cpp
  /// One bounded step of expire, under the collection lock: removes the records whose newest time
  /// key lies in [first, end), for about 10,000 documents at most. False once none was left.
  result<bool> expire_step(collection_state& c, const std::string& first, const std::string& end);

  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::ColumnFamilyHandle* num_cf_;
  rocksdb::ColumnFamilyHandle* time_cf_;
  std::string dir_;
  rocks_options options_;
  std::shared_mutex collections_mu_;
  std::map<std::string, std::shared_ptr<collection_state>, std::less<>> collections_;
  /// Held through every call of RocksDB's write path (through_gate); taken before sync_mu_.
  std::mutex gate_mu_;
  /// Serialises the fsyncs of sync_log_files (the sync thread's, and callers' once it ended);
  /// taken after gate_mu_ is released, before sync_mu_.
  std::mutex log_sync_mu_;
  /// The newest log file fsynced (its number, path, and an open descriptor or -1), under
  /// log_sync_mu_.
  uint64_t log_number_ = 0;
  std::string log_path_;
  int log_fd_ = -1;
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  /// Completions of the tickets waiting for the next sync (under sync_mu_).
  std::vector<std::function<void(status)>> sync_queue_;
  /// The sync thread sleeps on sync_cv_ (under sync_mu_): only then is it worth a wake-up.
  bool sync_idle_ = false;
  bool sync_stop_ = false;
  /// The sync thread has ended (under sync_mu_): tickets are then synced by their caller.
  bool sync_ended_ = false;
  /// Every write numbered up to this is synced (under sync_mu_).
  uint64_t synced_ = 0;
  /// Set (under sync_mu_, once) by write_error: after a failed write of the WAL (disk full) its
  /// tail is in an unknown state and the indexes and memtables may hold changes that will never
  /// be durable, so every later request is refused (health()) and no later sync acknowledges
  /// anything, until a restart rebuilds from what the store holds. failure_ (why) is written
  /// before.
  std::atomic<bool> failed_{false};
  std::string failure_;
  std::mutex maint_mu_;
  std::condition_variable maint_cv_;
  std::deque<std::shared_ptr<collection_state>> maint_queue_;  ///< under maint_mu_
  bool maint_stop_ = false;                                    ///< under maint_mu_
  /// Started last in the constructor, joined first in the destructor.
  std::thread sync_thread_;
  std::thread maint_thread_;
};

}  // namespace simdup::detail
