// Embedded RocksDB backend: RocksDB is the durable log and source of truth (keys in
// rocks_keys.hpp); each collection has an in-memory online_index (simdup/online_index.hpp),
// saved now and then as a segment file so that a restart loads it and replays only the newer
// documents (rocks_snapshot.cpp).
//
// Documents are numbered per collection; the index holds (fingerprint, number, time) only, so
// its memory does not grow with id lengths, and ids are read from the records for matches. An
// in-memory id map (id_map.hpp) tells whether an id is stored, so an insert reads nothing from
// RocksDB unless it replaces a document.
//
// Concurrency of check-insert: a request probes the index for its whole batch without the
// collection lock (the index serves queries while others insert), then takes the lock and
// checks only what the probe cannot have seen: the entries inserted since (kept in a short
// in-memory list, numbered in insert order) and the earlier documents of its own batch. If a
// document was removed meanwhile, or the list no longer reaches back far enough, it probes again
// under the lock. So the check and the insert stay one atomic step, while most of the work runs
// in parallel with other writers.
//
// Durability: a request's changes are one WriteBatch, appended to the WAL buffer while the
// collection lock is held, so the log order is the order the index saw; the lock is then
// released and the request gets a ticket (its sequence number). A sync thread writes and fsyncs
// the WAL once for every ticket queued while its previous sync ran (group commit) and then
// completes them; the service sends an answer only after that. Writers go on during the fsync
// (sync_log says why that is safe).
#include "store/rocks_backend.hpp"

#include <fcntl.h>
#include <rocksdb/cache.h>
#include <rocksdb/table.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <tuple>

#include <simdup/simhash.hpp>

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

namespace {

/// Entries kept for re-checks: enough for the inserts of many concurrent batch requests.
constexpr std::size_t max_recent = 65536;

}  // namespace

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

result<uint64_t> rocks_backend::apply_pending(const collection_config& config, doc_op op,
                                              std::span<const doc_input> docs, int64_t now,
                                              std::size_t max_matches, std::span<doc_outcome> out) {
  (void)now;  // the window is measured from each document's own time
  auto found = find(config.name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  for (auto& o : out) o = doc_outcome{};
  // Snapshot before the lock-free probe: entries numbered from here on may be missing from it
  // (an entry is in the index and the store before its number is published).
  const uint64_t probed_num = c.published.load(std::memory_order_acquire);
  const uint64_t probed_removals = c.removals.load(std::memory_order_acquire);
  // Plain inserts report nothing, so they need no probe.
  std::vector<std::vector<index_match>> hits =
      op == doc_op::insert ? std::vector<std::vector<index_match>>(docs.size()) : probe(c, docs);
  hit_jaccards jaccards(docs.size());
  if (op == doc_op::check) {
    record_reader stored = reader(c);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (auto st = verify_hits(c, docs[i], stored, {}, 0, hits[i], jaccards[i]); !st) {
        return std::move(st).error();
      }
    }
    uint64_t ticket = 0;
    if (std::any_of(hits.begin(), hits.end(), [](const auto& h) { return !h.empty(); })) {
      // A hit may be an entry whose writer still holds the lock (it is in the index before it
      // is in the store): once the lock is free, its write is done and last_write covers it.
      std::lock_guard lock(c.mu);
      ticket = c.last_write;
    }
    if (auto st = resolve_all(c, hits, jaccards, max_matches, out); !st) {
      return std::move(st).error();
    }
    return ticket;
  }
  c.writers.fetch_add(1, std::memory_order_relaxed);
  // On every way out, error paths included: the writer count, and full index segments.
  struct writer_guard {
    rocks_backend& b;
    collection_state& c;
    ~writer_guard() {
      c.writers.fetch_sub(1, std::memory_order_relaxed);
      b.after_index_change(c);
    }
  } guard{*this, c};
  uint64_t seq = 0;
  {
    std::lock_guard lock(c.mu);
    if (c.dropped) return make_error(errc::not_found, "no collection \"" + config.name + "\"");
    // The request's record (rocks_keys.hpp), numbered from `base` on, and the records it
    // rewrites.
    const uint64_t base = c.next_num;
    std::vector<stored_doc> added;
    std::vector<char> dropped;
    record_edits edits;
    std::vector<uint64_t> removed;
    std::vector<undo_step> undo;
    added.reserve(docs.size());
    dropped.reserve(docs.size());
    undo.reserve(docs.size());
    const auto fail = [&](error_info e) {
      rollback(c, undo);
      return result<uint64_t>(std::move(e));
    };
    // What the probe cannot have seen: the entries inserted since, and this request's own as
    // it inserts them; after a removal, or when the list no longer reaches back, a new probe.
    const bool stale = c.removals.load(std::memory_order_relaxed) != probed_removals ||
                       !recent_reaches(c, probed_num);
    std::vector<index_entry> since;
    if (!stale && op == doc_op::check_insert) {
      const auto from = recent_from(c, probed_num);
      since.reserve(static_cast<std::size_t>(c.recent.cend() - from) + docs.size());
      since.assign(from, c.recent.cend());
    }
    // The id map's slots, fetched for all documents at once rather than one miss at a time.
    std::vector<uint64_t> hashes(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      hashes[i] = id_map::hash(docs[i].id);
      c.ids.prefetch(hashes[i]);
    }
    std::vector<uint64_t> candidates;
    record_reader stored = reader(c);
    // The stored form of each document's sketch, which its record points into.
    std::vector<std::string> sketches(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (op == doc_op::check_insert) {
        // Under the collection lock nothing is inserted between this check and the insert.
        const bool reprobe = stale || c.removals.load(std::memory_order_relaxed) != probed_removals;
        recheck_locked(c, docs[i], since, reprobe, hits[i]);
        if (auto st = verify_hits(c, docs[i], stored, added, base, hits[i], jaccards[i]); !st) {
          return fail(std::move(st).error());
        }
        if (!hits[i].empty()) continue;
      }
      if (c.next_num > id_map::max_number) {
        return fail(make_error(errc::unsupported, "collection " + c.config.name +
                                                      " has numbered all the documents it can"));
      }
      const uint64_t h = hashes[i];
      candidates.clear();
      c.ids.find(h, candidates);
      std::optional<doc_location> old;
      // An id inserted earlier in this request (numbered from base on, not in the store until
      // the batch is written): that document leaves the request's record instead.
      for (const uint64_t num : candidates) {
        if (num < base || num - base >= added.size() || dropped[num - base] ||
            added[num - base].id != docs[i].id) {
          continue;
        }
        const stored_doc& d = added[num - base];
        old = doc_location{0, d.num, d.fingerprint, d.time};
        dropped[num - base] = 1;
        break;
      }
      if (!old && !candidates.empty()) {
        auto got = find_doc(c, docs[i].id, candidates, edits);
        if (!got) return fail(std::move(got).error());
        old = *got;
        if (old) {
          if (auto st = remove_from_record(c, *old, edits); !st) return fail(std::move(st).error());
          removed.push_back(old->num);
        }
      }
      if (old) {
        // Re-sending an id replaces its document.
        c.removals.fetch_add(1, std::memory_order_release);
        // Deferred: a merge on the maintenance thread may hold the index for seconds, and this
        // thread holds the collection lock.
        c.index.remove_deferred(old->num);
        c.ids.erase(h, old->num);
      }
      const index_entry e{docs[i].fingerprint, c.next_num++, docs[i].time};
      c.index.insert(e);
      c.ids.insert(h, e.id);
      c.recent.push_back(e);
      if (c.recent.size() > max_recent) c.recent.pop_front();
      if (op == doc_op::check_insert) since.push_back(e);
      sketches[i] = encode_sketch(docs[i].sketch);
      added.push_back({e.id, e.fingerprint, e.timestamp, docs[i].id, sketches[i]});
      dropped.push_back(0);
      undo.push_back({e.id, h, old});
      out[i].inserted = true;
    }
    if (!undo.empty()) {
      const std::size_t replaced =
          removed.size() + static_cast<std::size_t>(std::count(dropped.begin(), dropped.end(), 1));
      std::string record;
      std::size_t bytes = 0;
      for (const auto& d : added) bytes += 30 + d.id.size() + d.sketch.size();
      record.reserve(bytes);
      uint64_t first = 0;
      int64_t newest = INT64_MIN;
      for (std::size_t j = 0; j < added.size(); ++j) {
        if (dropped[j]) continue;
        if (record.empty()) first = added[j].num;
        newest = std::max(newest, added[j].time);
        append_doc(record, added[j]);
      }
      rocksdb::WriteBatch batch(record.size() + 256);
      batch.Put(num_cf_, num_key(c.config.name, first), record);
      batch.Put(time_cf_, time_key(c.config.name, newest, first), {});
      write_edits(c, edits, batch);
      for (const uint64_t num : removed) {
        batch.Put(removal_key(c.config.name, c.next_removal++), u64_value(num));
      }
      batch.Put(next_number_key(c.config.name), u64_value(c.next_num));
      batch.Put(totals_key(c.config.name), c.totals_after(undo.size(), 0, 0));
      if (auto st =
              through_gate("write", [&] { return db_->Write(rocksdb::WriteOptions(), &batch); });
          !st) {
        return fail(std::move(st).error());
      }
      c.last_write = db_->GetLatestSequenceNumber();
      c.inserted += undo.size();
      c.documents += undo.size() - replaced;
    }
    c.published.store(c.next_num, std::memory_order_release);
    // Duplicates are answered only once what they match is synced, like inserts.
    const auto duplicate = [](const doc_outcome& o) { return !o.inserted; };
    if (!undo.empty() ||
        (op == doc_op::check_insert && std::any_of(out.begin(), out.end(), duplicate))) {
      seq = c.last_write;
    }
  }
  if (auto st = resolve_all(c, hits, jaccards, max_matches, out); !st) {
    return std::move(st).error();
  }
  return seq;
}

result<pending_removal> rocks_backend::remove_pending(const collection_config& config,
                                                      const std::string& id) {
  auto found = find(config.name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  uint64_t seq;
  {
    std::lock_guard lock(c.mu);
    record_edits edits;
    auto old = find_live_doc(c, id, edits);
    if (!old) return std::move(old).error();
    // Not found may be due to a removal not synced yet.
    if (!*old) return pending_removal{false, c.last_write};
    const doc_location& at = **old;
    if (auto st = remove_from_record(c, at, edits); !st) return std::move(st).error();
    rocksdb::WriteBatch batch;
    write_edits(c, edits, batch);
    batch.Put(removal_key(c.config.name, c.next_removal), u64_value(at.num));
    batch.Put(totals_key(c.config.name), c.totals_after(0, 0, 1));
    if (auto st =
            through_gate("write", [&] { return db_->Write(rocksdb::WriteOptions(), &batch); });
        !st) {
      return std::move(st).error();
    }
    ++c.next_removal;
    c.removals.fetch_add(1, std::memory_order_release);
    c.index.remove_deferred(at.num);
    c.ids.erase(id_map::hash(id), at.num);
    seq = c.last_write = db_->GetLatestSequenceNumber();
    --c.documents;
    ++c.deleted;
  }
  after_index_change(c);
  return pending_removal{true, seq};
}

status rocks_backend::expire(const collection_config& config, int64_t now) {
  if (failed_.load(std::memory_order_acquire)) return {};  // health() says why, once
  auto found = find(config.name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  if (auto st = maybe_snapshot(c); !st) return st;
  if (config.window_s <= 0) return {};
  // The index drops whole segments (its queries already skip entries out of the window); the
  // store drops every document that is no longer live (time + window <= now), oldest first,
  // in bounded steps so writers are not held up long. Matches whose document is gone from the
  // store are not reported.
  c.index.expire(now);
  const std::string first = prefix('t', c.config.name);
  const std::string end = time_key(c.config.name, now - config.window_s + 1, 0);
  for (;;) {
    std::lock_guard lock(c.mu);
    if (c.dropped) return {};
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), time_cf_));
    record_reader stored = reader(c);
    rocksdb::WriteBatch batch;
    std::size_t n = 0;
    // A record goes once its newest document is out of the window.
    for (it->Seek(first); it->Valid() && it->key().compare(end) < 0 && n < 10000; it->Next()) {
      const std::string_view key = it->key().ToStringView();
      if (key.size() != first.size() + 16) {
        return make_error(errc::corrupt_data, "stored time key of collection " + config.name);
      }
      const uint64_t record = read_be(key.substr(first.size() + 8));
      auto held = stored.seek(record);
      if (!held) return std::move(held).error();
      if (*held && stored.record() == record) {
        for (const auto& d : stored.docs()) c.ids.erase(id_map::hash(d.id), d.num);
        n += stored.docs().size();
      }
      batch.Delete(time_cf_, it->key());
      batch.Delete(num_cf_, num_key(c.config.name, record));
    }
    if (!it->status().ok()) return db_error("scan", it->status());
    if (batch.Count() == 0) return {};
    batch.Put(totals_key(c.config.name), c.totals_after(0, n, 0));
    // Unsynced: after a crash of the machine, documents whose deletion was lost are simply
    // expired again. Written out of the WAL buffer at once, so that a crash of the process
    // alone (kill -9) does not bring back a document the window already removed.
    if (auto st = through_gate("write",
                               [&] {
                                 auto s = db_->Write(rocksdb::WriteOptions(), &batch);
                                 return s.ok() ? db_->FlushWAL(false) : s;
                               });
        !st) {
      return st;
    }
    // A probe made before this step may report expired documents' entries.
    c.removals.fetch_add(1, std::memory_order_release);
    c.expired += n;
    c.documents -= n;
  }
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
  }
  st.index_segments = is.segments;
  return st;
}

error_info rocks_backend::write_error(const char* what, const rocksdb::Status& s) {
  error_info e = db_error(what, s);
  if (!s.IsIOError()) return e;
  std::lock_guard lock(sync_mu_);
  if (!failed_.load(std::memory_order_relaxed)) {
    failure_ = e.message;
    failed_.store(true, std::memory_order_release);
    std::fprintf(stderr, "simdup serve: %s\n", health().error().message.c_str());
  }
  return e;
}

status rocks_backend::health() {
  if (!failed_.load(std::memory_order_acquire)) return {};
  return make_error(errc::unavailable,
                    "the store stopped taking requests after a failed write of its log (" +
                        failure_ +
                        "); restart the service once the disk has space: acknowledged "
                        "changes are kept");
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
  return std::make_shared<collection_state>(config, std::move(*index));
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

namespace {

std::vector<index_match> query(const collection_state& c, const doc_input& d) {
  query_params params;
  params.now = d.time;  // live: time + window > the document's time
  return c.index.query(d.fingerprint, params);
}

bool live(const collection_state& c, int64_t timestamp, int64_t now) {
  return c.config.window_s <= 0 || timestamp + c.config.window_s > now;
}

bool match_order(const index_match& a, const index_match& b) {
  return std::tie(a.distance, a.timestamp, a.id) < std::tie(b.distance, b.timestamp, b.id);
}

}  // namespace

std::vector<std::vector<index_match>> rocks_backend::probe(const collection_state& c,
                                                           std::span<const doc_input> docs) {
  std::vector<std::vector<index_match>> hits(docs.size());
  if (docs.empty()) return hits;
  std::vector<uint64_t> fps(docs.size());
  query_params params;
  params.now = docs[0].time;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    fps[i] = docs[i].fingerprint;
    // The earliest time admits every entry live for some document; filtered per document.
    params.now = std::min(params.now, docs[i].time);
  }
  query_results results;
  c.index.query(fps, results, params);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    for (const index_match& m : results[i]) {
      if (live(c, m.timestamp, docs[i].time)) hits[i].push_back(m);
    }
  }
  return hits;
}

bool rocks_backend::recent_reaches(const collection_state& c, uint64_t num) {
  return num >= c.next_num || (!c.recent.empty() && c.recent.front().id <= num);
}

std::deque<index_entry>::const_iterator rocks_backend::recent_from(const collection_state& c,
                                                                   uint64_t num) {
  return std::lower_bound(c.recent.begin(), c.recent.end(), num,
                          [](const index_entry& e, uint64_t n) { return e.id < n; });
}

void rocks_backend::recheck_locked(const collection_state& c, const doc_input& d,
                                   std::span<const index_entry> since, bool reprobe,
                                   std::vector<index_match>& hits) {
  if (reprobe) {
    hits = query(c, d);
    return;
  }
  const std::size_t before = hits.size();
  for (const index_entry& e : since) {
    const int distance = hamming_distance(e.fingerprint, d.fingerprint);
    if (distance > c.config.k || !live(c, e.timestamp, d.time)) continue;
    // An entry inserted between the snapshot and the probe may be in both.
    const auto seen = [&](const index_match& m) { return m.id == e.id; };
    if (std::none_of(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(before), seen)) {
      hits.push_back(index_match{e.id, e.fingerprint, e.timestamp, distance});
    }
  }
  if (hits.size() != before) std::sort(hits.begin(), hits.end(), match_order);
}

void rocks_backend::rollback(collection_state& c, std::vector<undo_step>& undo) {
  c.removals.fetch_add(1, std::memory_order_release);
  ++c.rollbacks;
  // The undone inserts are the newest entries of the list.
  while (!c.recent.empty() && c.recent.back().id >= c.next_num - undo.size()) {
    c.recent.pop_back();
  }
  for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
    c.index.remove(it->inserted_num);
    c.ids.erase(it->id_hash, it->inserted_num);
    if (it->old) c.ids.insert(it->id_hash, it->old->num);
    // The replaced document's removal may not have been applied yet: then taking it back is
    // enough; else its entry goes back in.
    if (it->old && !c.index.cancel_removal(it->old->num)) {
      c.index.insert(index_entry{it->old->fingerprint, it->old->num, it->old->time});
    }
  }
}

void rocks_backend::request_maintenance(collection_state& c) {
  {
    std::lock_guard lock(maint_mu_);
    if (c.maintenance_queued) return;
    c.maintenance_queued = true;
    maint_queue_.push_back(c.shared_from_this());
  }
  maint_cv_.notify_one();
}

void rocks_backend::after_index_change(collection_state& c) {
  // Set-aside segments are probed as hash chains, each one costing every query, and take
  // about twice a sealed segment's memory (9 MB each with 10 tables); past this many, the
  // writer seals them itself (waiting for a merge in progress, if one is). At 200,000 inserts/s
  // a merge of 4M entries sets aside about three; a bulk load at 700,000/s set aside 20 to 30
  // while one ran, on top of the merge's own transient.
  constexpr std::size_t max_set_aside = 8;
  const std::size_t waiting = c.index.awaiting_maintenance();
  if (waiting > max_set_aside) {
    try {
      c.index.maintain();
    } catch (const std::exception&) {
      request_maintenance(c);
    }
  } else if (waiting > 0) {
    request_maintenance(c);
  }
}

void rocks_backend::maintenance_loop() {
  std::unique_lock lock(maint_mu_);
  for (;;) {
    maint_cv_.wait(lock, [this] { return maint_stop_ || !maint_queue_.empty(); });
    // At close the segments still set aside are saved as they are (save() covers them).
    if (maint_stop_) return;
    std::shared_ptr<collection_state> c = std::move(maint_queue_.front());
    maint_queue_.pop_front();
    c->maintenance_queued = false;
    lock.unlock();
    try {
      c->index.maintain();
    } catch (const std::exception& e) {
      // Out of memory while merging: the segments stay set aside (and queried) and the next
      // write asks again.
      std::fprintf(stderr, "simdup serve: index maintenance of %s failed: %s\n",
                   c->config.name.c_str(), e.what());
    }
    lock.lock();
  }
}

void rocks_backend::when_durable(uint64_t ticket, std::function<void(status)> done) {
  std::unique_lock lock(sync_mu_);
  if (ticket <= synced_) {
    lock.unlock();
    done({});
    return;
  }
  if (failed_.load(std::memory_order_relaxed)) {
    lock.unlock();
    done(health());
    return;
  }
  if (sync_ended_) {
    lock.unlock();
    done(sync_log());
    return;
  }
  sync_queue_.push_back(std::move(done));
  // A busy sync thread looks at the queue again when its sync ends.
  const bool wake = sync_idle_;
  sync_idle_ = false;
  lock.unlock();
  if (wake) sync_cv_.notify_one();
}

void rocks_backend::sync_loop() {
  std::vector<std::function<void(status)>> batch;
  std::unique_lock lock(sync_mu_);
  for (;;) {
    while (sync_queue_.empty() && !sync_stop_) {
      sync_idle_ = true;
      sync_cv_.wait(lock);
    }
    if (sync_queue_.empty()) {  // stopping, nothing left
      sync_ended_ = true;
      return;
    }
    batch.swap(sync_queue_);
    lock.unlock();
    // Every ticket queued is a sequence number already in the WAL buffer (manual_wal_flush), so
    // one write and fsync of the buffer now covers all of them.
    const uint64_t target = db_->GetLatestSequenceNumber();
    const status result = sync_log();
    lock.lock();
    if (result) synced_ = std::max(synced_, target);
    lock.unlock();
    for (auto& done : batch) {
      // A callback that throws (out of memory while answering) must not end this thread, or
      // every later ticket would wait forever; its answer is lost with it (the HTTP layer
      // answers 500 for a reply dropped unsent).
      try {
        done(result);
      } catch (...) {
        std::fprintf(stderr, "simdup serve: an answer callback threw after a sync\n");
      }
    }
    batch.clear();
    lock.lock();
  }
}

// Why writers may go on while the log is fsynced. RocksDB 7.8's WAL writer
// (WritableFileWriter) remembers a failed write or sync of its file (seen_error), and its next
// Append, Flush or Sync asserts unless that failure was a SyncWithoutFlush's
// (AssertFalseAndGetStatusForPrevError; Debian's build keeps assertions: the abort of issue 20).
// Every call that can write the log file through it goes through the gate, one at a time, and
// a failure is recorded (failed_) before the gate opens again, so no call can follow one: a
// Write (its Append; at a memtable switch, the old log's buffer, written from the writer's
// thread) and FlushWAL(false) (the buffer; manual_wal_flush keeps records there until then).
// RocksDB's own sync (FlushWAL(true), SyncWAL) could not run outside the gate: a writer's
// failed write of an old log at a memtable switch, between SyncWAL's choice of the logs and its
// SyncWithoutFlush of that log, makes the sync assert (and no buffer size keeps writers off the
// file: one that fills during a long fsync is written by the next Append). So the fsync is not
// RocksDB's: it runs on descriptors of our own, outside the gate, and RocksDB's writers never
// learn of it, failed or not (Linux's fdatasync writes back the file's data whichever
// descriptor wrote it). That also closes a way to the abort that RocksDB's own sync had left:
// a flush syncs the closed log files (SyncClosedLogs, with Sync), and SyncWAL would sync one
// whose Sync failed again.
status rocks_backend::sync_log() {
  std::unique_ptr<rocksdb::LogFile> current;
  if (auto st = through_gate("sync",
                             [&] {
                               // Read under the gate: no write can start a newer log meanwhile,
                               // so every record written so far is in this file or an older one.
                               const rocksdb::Status s = db_->FlushWAL(false);
                               return s.ok() ? db_->GetCurrentWalFile(&current) : s;
                             });
      !st) {
    return st;
  }
  std::lock_guard lock(log_sync_mu_);
  // After a failed fdatasync a later one may succeed without the lost pages: nothing more is
  // acknowledged.
  if (auto st = health(); !st) return st;
  return sync_log_files(*current);
}

status rocks_backend::sync_log_files(const rocksdb::LogFile& current) {
  const auto failed = [&](const std::string& path) {
    const std::string why = std::strerror(errno);
    return write_error("sync", errno == ENOSPC ? rocksdb::Status::NoSpace(path, why)
                                               : rocksdb::Status::IOError(path, why));
  };
  const auto sync_file = [&](const std::string& path) -> status {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    // Gone: its memtables were flushed to table files (synced) before RocksDB deleted it.
    if (fd < 0) return errno == ENOENT ? status{} : status(failed(path));
    const bool ok = ::fdatasync(fd) == 0;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return ok ? status{} : status(failed(path));
  };
  if (current.LogNumber() != log_number_) {
    // A new log since the last sync: the older ones may hold records written since (the tail
    // written at the switch), and the directory does not hold the new file durably yet.
    if (log_fd_ >= 0 && ::fdatasync(log_fd_) != 0) return failed(log_path_);
    rocksdb::VectorLogPtr logs;
    if (auto s = db_->GetSortedWalFiles(logs); !s.ok()) return write_error("sync", s);
    for (const auto& log : logs) {
      if (log->Type() != rocksdb::kAliveLogFile || log->LogNumber() <= log_number_ ||
          log->LogNumber() >= current.LogNumber()) {
        continue;
      }
      if (auto st = sync_file(dir_ + log->PathName()); !st) return st;
    }
    const std::string path = dir_ + current.PathName();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return failed(path);
    if (log_fd_ >= 0) ::close(log_fd_);
    log_fd_ = fd;
    log_number_ = current.LogNumber();
    log_path_ = path;
    const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || ::fsync(dir) != 0) {
      const auto st = failed(dir_);
      if (dir >= 0) ::close(dir);
      return st;
    }
    ::close(dir);
  }
  if (::fdatasync(log_fd_) != 0) return failed(log_path_);
  return {};
}

status rocks_backend::verify_hits(const collection_state& c, const doc_input& d,
                                  record_reader& stored, std::span<const stored_doc> own,
                                  uint64_t base, std::vector<index_match>& hits,
                                  std::vector<std::optional<double>>& jaccards) {
  jaccards.clear();
  if (c.config.verify <= 0 || d.sketch.empty() || hits.empty()) return {};
  thread_local std::vector<uint32_t> sketch;
  std::size_t kept = 0;
  for (const index_match& h : hits) {
    const stored_doc* at = nullptr;
    if (h.id >= base && h.id - base < own.size()) {
      at = &own[h.id - base];
    } else {
      auto found = stored.seek(h.id);
      if (!found) return std::move(found).error();
      at = *found ? stored.doc(h.id) : nullptr;
    }
    if (!at) continue;  // deleted since the probe
    decode_sketch(at->sketch, sketch);
    const std::optional<double> j = sketch_similarity(d.sketch, sketch);
    if (j && *j < c.config.verify) continue;
    hits[kept++] = h;
    jaccards.push_back(j);
  }
  hits.resize(kept);
  return {};
}

status rocks_backend::resolve_all(const collection_state& c,
                                  std::vector<std::vector<index_match>>& hits,
                                  const hit_jaccards& jaccards, std::size_t max_matches,
                                  std::span<doc_outcome> out) {
  record_reader stored = reader(c);
  for (std::size_t i = 0; i < hits.size(); ++i) {
    // The index sorts by (distance, time, number); ties beyond distance keep that order.
    for (std::size_t m = 0; m < hits[i].size(); ++m) {
      const index_match& h = hits[i][m];
      if (out[i].matches.size() >= max_matches) break;
      auto found = stored.seek(h.id);
      if (!found) return std::move(found).error();
      const stored_doc* d = *found ? stored.doc(h.id) : nullptr;
      if (!d) continue;  // deleted since the probe
      const std::optional<double> j =
          m < jaccards[i].size() ? jaccards[i][m] : std::optional<double>();
      out[i].matches.push_back({std::string(d->id), h.distance, j});
    }
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
