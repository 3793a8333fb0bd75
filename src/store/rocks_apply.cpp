// Writes of the RocksDB backend: check-insert, insert and check (apply_pending), DELETE of a
// document (remove_pending), and undoing a failed write's index changes.
//
// Concurrency of check-insert: a request probes the index for its whole batch without the
// collection lock (the index serves queries while others insert), then takes the lock and checks
// only what the probe cannot have seen: the entries inserted since (kept in a short in-memory list,
// numbered in insert order) and the earlier documents of its own batch. If a document was removed
// meanwhile, or the list no longer reaches back far enough, it probes again under the lock
// (rocks_matching.cpp). So the check and the insert stay one atomic step, while most of the work
// runs in parallel with other writers.
//
// A request's changes are one WriteBatch, appended to the WAL buffer while the collection lock is
// held, so the log order is the order the index saw; the request then gets a ticket for the group
// commit (rocks_commit.cpp).
#include <algorithm>

#include "store/rocks_backend.hpp"

namespace simdup::detail {

using namespace rocks_keys;

namespace {

/// Entries kept for re-checks: enough for the inserts of many concurrent batch requests.
constexpr std::size_t max_recent = 65536;

}  // namespace

/// What a write request builds under the collection lock: its own record (rocks_keys.hpp), numbered
/// from `base` on, the stored records it rewrites, and how to undo its index changes.
struct rocks_backend::request_write {
  /// With `since` filled unless `stale` (see write_locked), and the id map's slots of every
  /// document fetched at once rather than one miss at a time.
  request_write(collection_state& c, doc_op op, std::span<const doc_input> docs,
                uint64_t probed_num, bool stale)
      : base(c.next_num), hashes(docs.size()) {
    added.reserve(docs.size());
    dropped.reserve(docs.size());
    undo.reserve(docs.size());
    if (!stale && op == doc_op::check_insert) {
      const auto from = recent_from(c, probed_num);
      since.reserve(static_cast<std::size_t>(c.recent.cend() - from) + docs.size());
      since.assign(from, c.recent.cend());
    }
    for (std::size_t i = 0; i < docs.size(); ++i) {
      hashes[i] = id_map::hash(docs[i].id);
      c.ids.prefetch(hashes[i]);
    }
  }
  const uint64_t base;
  std::vector<stored_doc> added;
  /// Per document of `added`: replaced by a later one of the same request, so not written.
  std::vector<char> dropped;
  record_edits edits;
  /// Numbers of the stored documents it replaces (logged under removal keys).
  std::vector<uint64_t> removed;
  std::vector<undo_step> undo;
  /// The id map's hash of each document's id.
  std::vector<uint64_t> hashes;
  /// For check-insert: the entries the lock-free probe cannot have seen.
  std::vector<index_entry> since;
  /// The id map's numbers for one hash (reused).
  std::vector<uint64_t> candidates;
};

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
  const probe_mark mark{c.published.load(std::memory_order_acquire),
                        c.removals.load(std::memory_order_acquire)};
  // Plain inserts report nothing, so they need no probe.
  std::vector<std::vector<index_match>> hits =
      op == doc_op::insert ? std::vector<std::vector<index_match>>(docs.size()) : probe(c, docs);
  hit_jaccards jaccards(docs.size());
  if (op == doc_op::check) return check_only(c, docs, hits, jaccards, max_matches, out);
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
  auto seq = write_locked(c, op, docs, mark, hits, jaccards, out);
  if (!seq) return seq;
  if (auto st = resolve_all(c, hits, jaccards, max_matches, out); !st) {
    return std::move(st).error();
  }
  return *seq;
}

result<uint64_t> rocks_backend::check_only(collection_state& c, std::span<const doc_input> docs,
                                           std::vector<std::vector<index_match>>& hits,
                                           hit_jaccards& jaccards, std::size_t max_matches,
                                           std::span<doc_outcome> out) {
  if (c.bands) {
    // The band index is read under the collection lock: once for the whole request.
    std::lock_guard lock(c.mu);
    for (std::size_t i = 0; i < docs.size(); ++i) add_band_hits(c, docs[i], hits[i]);
  }
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

result<uint64_t> rocks_backend::write_locked(collection_state& c, doc_op op,
                                             std::span<const doc_input> docs,
                                             const probe_mark& mark,
                                             std::vector<std::vector<index_match>>& hits,
                                             hit_jaccards& jaccards, std::span<doc_outcome> out) {
  std::lock_guard lock(c.mu);
  if (c.dropped) return make_error(errc::not_found, "no collection \"" + c.config.name + "\"");
  // What the probe cannot have seen: the entries inserted since, and this request's own as
  // it inserts them; after a removal, or when the list no longer reaches back, a new probe.
  const bool stale =
      c.removals.load(std::memory_order_relaxed) != mark.removals || !recent_reaches(c, mark.num);
  request_write w(c, op, docs, mark.num, stale);
  const auto fail = [&](error_info e) {
    rollback(c, w.undo);
    return result<uint64_t>(std::move(e));
  };
  record_reader stored = reader(c);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (op == doc_op::check_insert) {
      // Under the collection lock nothing is inserted between this check and the insert.
      const bool reprobe = stale || c.removals.load(std::memory_order_relaxed) != mark.removals;
      recheck_locked(c, docs[i], w.since, reprobe, hits[i]);
      add_band_hits(c, docs[i], hits[i]);
      if (auto st = verify_hits(c, docs[i], stored, w.added, w.base, hits[i], jaccards[i]); !st) {
        return fail(std::move(st).error());
      }
      if (!hits[i].empty()) continue;
    }
    if (auto st = insert_doc(c, op, docs[i], i, w); !st) return fail(std::move(st).error());
    out[i].inserted = true;
  }
  if (!w.undo.empty()) {
    if (auto st = write_request(c, w); !st) return fail(std::move(st).error());
  }
  c.published.store(c.next_num, std::memory_order_release);
  // Duplicates are answered only once what they match is synced, like inserts.
  const auto duplicate = [](const doc_outcome& o) { return !o.inserted; };
  if (!w.undo.empty() ||
      (op == doc_op::check_insert && std::any_of(out.begin(), out.end(), duplicate))) {
    return c.last_write;
  }
  return uint64_t{0};
}

status rocks_backend::insert_doc(collection_state& c, doc_op op, const doc_input& d, std::size_t i,
                                 request_write& w) {
  if (c.next_num > id_map::max_number) {
    return make_error(errc::unsupported,
                      "collection " + c.config.name + " has numbered all the documents it can");
  }
  const uint64_t h = w.hashes[i];
  auto old = take_replaced(c, d.id, h, w);
  if (!old) return std::move(old).error();
  if (*old) {
    // Re-sending an id replaces its document.
    c.removals.fetch_add(1, std::memory_order_release);
    // Deferred: a merge on the maintenance thread may hold the index for seconds, and this
    // thread holds the collection lock.
    c.index.remove_deferred((*old)->num);
    if (c.bands) c.bands->erase((*old)->num, (*old)->band_keys);
    c.ids.erase(h, (*old)->num);
  }
  const index_entry e{d.fingerprint, c.next_num++, d.time};
  c.index.insert(e);
  const bool bands = c.bands && d.band_keys.size() == c.bands->bands();
  if (bands) c.bands->insert(e.id, d.band_keys);
  c.ids.insert(h, e.id);
  c.recent.push_back(e);
  if (c.recent.size() > max_recent) c.recent.pop_front();
  if (op == doc_op::check_insert) w.since.push_back(e);
  // The record points at the request's own sketch and keys (they outlive the write).
  w.added.push_back({e.id, e.fingerprint, e.timestamp, d.id, stored_bytes(std::span(d.sketch)),
                     bands ? stored_bytes(std::span(d.band_keys)) : std::string_view()});
  w.dropped.push_back(0);
  w.undo.push_back(
      {e.id, bands ? std::span(d.band_keys) : std::span<const uint64_t>(), h, std::move(*old)});
  return {};
}

result<std::optional<doc_location>> rocks_backend::take_replaced(const collection_state& c,
                                                                 std::string_view id, uint64_t h,
                                                                 request_write& w) {
  w.candidates.clear();
  c.ids.find(h, w.candidates);
  // An id inserted earlier in this request (numbered from base on, not in the store until
  // the batch is written): that document leaves the request's record instead.
  for (const uint64_t num : w.candidates) {
    if (num < w.base || num - w.base >= w.added.size() || w.dropped[num - w.base] ||
        w.added[num - w.base].id != id) {
      continue;
    }
    const stored_doc& d = w.added[num - w.base];
    w.dropped[num - w.base] = 1;
    doc_location at{0, d.num, d.fingerprint, d.time, {}};
    decode_band_keys(d.band_keys, at.band_keys);
    return std::optional<doc_location>{std::move(at)};
  }
  if (w.candidates.empty()) return std::optional<doc_location>{};
  auto got = find_doc(c, id, w.candidates, w.edits);
  if (!got || !*got) return got;
  if (auto st = remove_from_record(c, **got, w.edits); !st) return std::move(st).error();
  w.removed.push_back((*got)->num);
  return got;
}

status rocks_backend::write_request(collection_state& c, request_write& w) {
  const std::size_t replaced = w.removed.size() + static_cast<std::size_t>(std::count(
                                                      w.dropped.begin(), w.dropped.end(), 1));
  std::size_t bytes = 0;
  for (const auto& d : w.added) bytes += 31 + d.id.size() + d.sketch.size() + d.band_keys.size();
  rocksdb::WriteBatch batch(bytes + 256);
  // Records of at most about kRecordBytes: a candidate's sketch is read with its whole record,
  // and RocksDB reads and checksums a value as a block of its own once it outgrows one, so one
  // record per request (a 1,000-document batch of texts is 2 MB) made every such read cost
  // hundreds of microseconds.
  constexpr std::size_t kRecordBytes = 32 << 10;
  std::string record;
  record.reserve(std::min(bytes, kRecordBytes + 4096));
  uint64_t first = 0;
  int64_t newest = INT64_MIN;
  const auto put_record = [&] {
    batch.Put(num_cf_, num_key(c.config.name, first), record);
    batch.Put(time_cf_, time_key(c.config.name, newest, first), {});
    record.clear();
    newest = INT64_MIN;
  };
  for (std::size_t j = 0; j < w.added.size(); ++j) {
    if (w.dropped[j]) continue;
    if (record.empty()) first = w.added[j].num;
    newest = std::max(newest, w.added[j].time);
    append_doc(record, w.added[j]);
    if (record.size() >= kRecordBytes) put_record();
  }
  if (!record.empty()) put_record();
  write_edits(c, w.edits, batch);
  for (const uint64_t num : w.removed) {
    batch.Put(removal_key(c.config.name, c.next_removal++), u64_value(num));
  }
  batch.Put(next_number_key(c.config.name), u64_value(c.next_num));
  batch.Put(totals_key(c.config.name), c.totals_after(w.undo.size(), 0, 0));
  if (auto st = through_gate("write", [&] { return db_->Write(rocksdb::WriteOptions(), &batch); });
      !st) {
    return st;
  }
  c.last_write = db_->GetLatestSequenceNumber();
  c.inserted += w.undo.size();
  c.documents += w.undo.size() - replaced;
  return {};
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
    if (c.bands) c.bands->erase(it->inserted_num, it->inserted_band_keys);
    c.ids.erase(it->id_hash, it->inserted_num);
    if (it->old) c.ids.insert(it->id_hash, it->old->num);
    // The replaced document's removal may not have been applied yet: then taking it back is
    // enough; else its entry goes back in.
    if (it->old && !c.index.cancel_removal(it->old->num)) {
      c.index.insert(index_entry{it->old->fingerprint, it->old->num, it->old->time});
    }
    if (it->old && c.bands) c.bands->insert(it->old->num, it->old->band_keys);
  }
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
    if (c.bands) c.bands->erase(at.num, at.band_keys);
    c.ids.erase(id_map::hash(id), at.num);
    seq = c.last_write = db_->GetLatestSequenceNumber();
    --c.documents;
    ++c.deleted;
  }
  after_index_change(c);
  return pending_removal{true, seq};
}

}  // namespace simdup::detail
