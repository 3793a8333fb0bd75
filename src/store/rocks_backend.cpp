// Embedded RocksDB backend: RocksDB is the durable log and source of truth (keys in
// rocks_keys.hpp); each collection has an in-memory online_index (simdup/online_index.hpp), saved
// now and then as a segment file so that a restart loads it and replays only the newer documents
// (rocks_snapshot.cpp).
//
// Documents are numbered per collection; the index holds (fingerprint, number, time) only, so its
// memory does not grow with id lengths, and ids are read from the records for matches. An in-memory
// id map (id_map.hpp) tells whether an id is stored, so an insert reads nothing from RocksDB unless
// it replaces a document.
//
// This file opens the store and keeps the list of collections (create, drop, stats, lookup). Writes
// and their concurrency: rocks_apply.cpp, with matching in rocks_matching.cpp; the group commit:
// rocks_commit.cpp; index maintenance: rocks_maintenance.cpp; expiry: rocks_expiry.cpp; records:
// rocks_records.cpp.
#include "store/rocks_backend.hpp"

#include <rocksdb/cache.h>
#include <rocksdb/table.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace simdup::detail {

using namespace rocks_keys;

error_info db_error(const char* what, const rocksdb::Status& s) {
  // A full disk, or a file-size limit (EFBIG, which RocksDB reports as a plain I/O error): told
  // apart so that the client knows a retry may work once there is space.
  const std::string text = s.ToString();
  const bool full = s.IsNoSpace() || text.find(std::strerror(EFBIG)) != std::string::npos;
  return make_error(full ? errc::no_space : errc::io_error,
                    std::string("rocksdb ") + what + ": " + text);
}

online_index_options index_options(const collection_config& c) {
  online_index_options o;
  o.layout.k = c.k;
  o.window = c.window_s;
  // Writers insert under the collection lock; sealing and merging run on the backend's
  // maintenance thread instead (rocks_backend::maintenance_loop).
  o.maintain_on_insert = false;
  return o;
}

rocks_backend::rocks_backend(std::unique_ptr<rocksdb::DB> db, rocksdb::ColumnFamilyHandle* num_cf,
                             rocksdb::ColumnFamilyHandle* time_cf, std::string dir,
                             rocks_options options)
    : db_(std::move(db)),
      num_cf_(num_cf),
      time_cf_(time_cf),
      dir_(std::move(dir)),
      options_(options),
      sync_thread_([this] { sync_loop(); }),
      maint_thread_([this] { maintenance_loop(); }) {}

rocks_backend::~rocks_backend() {
  {
    std::lock_guard lock(maint_mu_);
    maint_stop_ = true;
  }
  maint_cv_.notify_one();
  maint_thread_.join();
  // The sync thread completes what is queued before it ends.
  {
    std::lock_guard lock(sync_mu_);
    sync_stop_ = true;
  }
  sync_cv_.notify_one();
  sync_thread_.join();
  // After a failed sync the indexes may hold what the store never got: nothing is saved, the
  // next start rebuilds from the store.
  if (!failed_.load(std::memory_order_acquire)) {
    // A segment file per collection, so the next start loads instead of rebuilding.
    for (auto& [name, c] : collections_) {
      if (auto st = snapshot(*c); !st) {
        std::fprintf(stderr, "simdup serve: saving the index of %s: %s\n", name.c_str(),
                     st.error().message.c_str());
      }
    }
    // Make everything written durable before closing (expiry deletes are written unsynced).
    (void)sync_log();
  }
  if (log_fd_ >= 0) ::close(log_fd_);
  (void)db_->DestroyColumnFamilyHandle(num_cf_);
  (void)db_->DestroyColumnFamilyHandle(time_cf_);
  (void)db_->Close();
}

result<std::vector<collection_config>> rocks_backend::collections() {
  std::shared_lock lock(collections_mu_);
  std::vector<collection_config> out;
  for (const auto& [name, state] : collections_) out.push_back(state->config);
  return out;
}

status rocks_backend::create(const collection_config& config) {
  if (auto st = validate(config); !st) return st;
  if (auto st = health(); !st) return st;
  std::unique_lock lock(collections_mu_);
  auto it = collections_.find(config.name);
  if (it != collections_.end()) {
    std::lock_guard state_lock(it->second->mu);
    // A collection being dropped is replaced (its keys are gone from the store).
    if (it->second->dropped) it = collections_.end();
  }
  if (it != collections_.end()) {
    if (to_json(it->second->config) == to_json(config)) return {};
    return make_error(errc::invalid_argument,
                      "collection \"" + config.name +
                          "\" exists with other settings: " + to_json(it->second->config));
  }
  auto state = make_state(config);
  if (!state) return std::move(state).error();
  rocksdb::WriteOptions wo;
  wo.sync = true;
  if (auto st = through_gate(
          "put", [&] { return db_->Put(wo, single('c', config.name), to_json(config)); });
      !st)
    return st;
  collections_.insert_or_assign(config.name, std::move(*state));
  return {};
}

result<collection_stats> rocks_backend::stats(const collection_config& config) {
  auto found = find(config.name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  collection_stats st;
  st.documents = c.documents;
  st.inserted = c.inserted;
  st.expired = c.expired;
  st.deleted = c.deleted;
  const index_stats is = c.index.stats();
  st.index_bytes = is.memory_bytes;
  {
    std::lock_guard lock(c.mu);
    st.id_map_bytes = c.ids.memory_bytes();
    if (c.bands) st.index_bytes += c.bands->memory_bytes();
  }
  st.index_segments = is.segments;
  return st;
}

result<std::shared_ptr<collection_state>> rocks_backend::find(const std::string& name) {
  if (auto st = health(); !st) return std::move(st).error();
  std::shared_lock lock(collections_mu_);
  auto it = collections_.find(name);
  if (it == collections_.end()) {
    return make_error(errc::not_found, "no collection \"" + name + "\"");
  }
  return it->second;
}

result<std::shared_ptr<collection_state>> rocks_backend::make_state(
    const collection_config& config) {
  auto index = online_index::create(index_options(config));
  if (!index) return std::move(index).error();
  return std::make_shared<collection_state>(config, std::move(*index), band_index::create(config));
}

result<std::optional<doc_location>> rocks_backend::find_live_doc(const collection_state& c,
                                                                 const std::string& id,
                                                                 record_edits& edits) {
  if (c.dropped) return make_error(errc::not_found, "no collection \"" + c.config.name + "\"");
  std::vector<uint64_t> candidates;
  c.ids.find(id_map::hash(id), candidates);
  return find_doc(c, id, candidates, edits);
}

result<pending_lookup> rocks_backend::lookup(const collection_config& config,
                                             const std::string& id) {
  auto found = find(config.name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  std::lock_guard lock(c.mu);
  record_edits edits;
  auto at = find_live_doc(c, id, edits);
  if (!at) return std::move(at).error();
  // What is reported may have been written a moment ago and not be synced yet.
  pending_lookup out;
  out.ticket = c.last_write;
  if (*at) out.document = stored_document{(*at)->fingerprint, (*at)->time};
  return out;
}

status rocks_backend::drop(const std::string& name) {
  auto found = find(name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  {
    // snapshot_mu first (as snapshot() takes them): no segment file is being recorded.
    std::lock_guard slock(c.snapshot_mu);
    std::lock_guard lock(c.mu);
    if (c.dropped) return make_error(errc::not_found, "no collection \"" + name + "\"");
    // One synced batch: the collection and all its keys go together, or not at all.
    rocksdb::WriteBatch batch;
    for (const char tag : single_tags) batch.Delete(single(tag, name));
    for (const char tag : prefixed_default_tags) {
      const std::string p = prefix(tag, name);
      batch.DeleteRange(p, prefix_end(p));
    }
    const std::string n = prefix('n', name), t = prefix('t', name);
    batch.DeleteRange(num_cf_, n, prefix_end(n));
    batch.DeleteRange(time_cf_, t, prefix_end(t));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (auto st = through_gate("write", [&] { return db_->Write(wo, &batch); }); !st) return st;
    c.dropped = true;
    c.removals.fetch_add(1, std::memory_order_release);
    if (!c.snapshot.file.empty()) {
      std::error_code ec;
      std::filesystem::remove(std::filesystem::path(segments_dir()) / c.snapshot.file, ec);
      c.snapshot.file.clear();
    }
  }
  std::unique_lock lock(collections_mu_);
  if (auto it = collections_.find(name); it != collections_.end() && it->second == *found) {
    collections_.erase(it);
  }
  return {};
}

result<std::unique_ptr<backend>> open_rocks_backend(const std::string& dir,
                                                    const rocks_options& options) {
  if (dir.empty()) return make_error(errc::invalid_argument, "--data DIR is required");
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.IncreaseParallelism(2);
  // The write path is CPU-bound on small machines, and much of its cost is flushing and
  // compacting; the values (ids, fingerprints) barely compress, so compressing them is waste.
  db_options.compression = rocksdb::kNoCompression;
  // Memtables of all column families together: flushed (largest first) beyond this. With the
  // block cache, this is most of the store's memory beside the indexes and id maps (about 3
  // bytes per document at 10M); records are about 40 bytes per document, so the record family
  // flushes every 16 MB, about every two seconds at 200,000 inserts/s.
  db_options.db_write_buffer_size = std::size_t{32} << 20;
  // Writes only append to the WAL buffer (no write call under the collection lock); the group
  // commit writes and syncs it for every request queued (sync_loop). What a crash loses
  // from the buffer was never acknowledged.
  db_options.manual_wal_flush = true;
  // One small block cache for every family: reads are scans at start, records of replaced or
  // matched documents, and the few keys of the default family.
  const auto cache = rocksdb::NewLRUCache(std::size_t{8} << 20);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  rocksdb::ColumnFamilyOptions settings(db_options);
  settings.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // The n/ and t/ keys only grow (numbers, times), so they arrive in key order: in families of
  // their own, their files do not overlap and RocksDB moves them down the levels instead of
  // rewriting them. They are read by scans and by keys that exist: no Bloom filters.
  rocksdb::ColumnFamilyOptions records(settings);
  records.write_buffer_size = std::size_t{16} << 20;
  rocksdb::ColumnFamilyOptions times(settings);
  times.write_buffer_size = std::size_t{4} << 20;
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, settings},
      {std::string(num_family), records},
      {std::string(time_family), times}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(rocksdb::DBOptions(db_options), dir, families, &handles, &raw);
  if (!s.ok()) {
    // RocksDB's own words for a held LOCK file ("While lock file: ...: Resource temporarily
    // unavailable") do not say what to do; the usual cause is a second server on the same
    // directory.
    if (s.IsIOError() && s.ToString().find("lock") != std::string::npos) {
      return make_error(errc::io_error,
                        "the store in " + dir +
                            " is in use by another process (another simdup serve with the "
                            "same --data?); stop it or choose another --data directory");
    }
    return make_error(errc::io_error, "opening store " + dir + ": " + s.ToString());
  }
  // The default family is reached through DefaultColumnFamily(); its handle from Open is not
  // needed.
  (void)raw->DestroyColumnFamilyHandle(handles[0]);
  auto b = std::make_unique<rocks_backend>(std::unique_ptr<rocksdb::DB>(raw), handles[1],
                                           handles[2], dir, options);
  if (auto st = b->load(); !st) return std::move(st).error();
  return std::unique_ptr<backend>(std::move(b));
}

}  // namespace simdup::detail

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer suppressions built into the program (here, in an object every user of the
// store links), so the unit tests, `simdup serve` and the e2e tests under a TSan build need no
// TSAN_OPTIONS file. RocksDB comes from Debian (linked statically), built without TSan, so TSan
// sees its memory accesses only through its memcpy/memcmp interceptors, not the atomics that
// order them: its lock-free memtable publishes skip-list nodes with atomics, so a reader
// comparing a node another thread just wrote looks like a race. Only reports inside RocksDB are
// suppressed; races in our own code are still reported.
extern "C" const char* __tsan_default_suppressions();
extern "C" const char* __tsan_default_suppressions() {
  return "race:rocksdb::\n";
}
#endif
