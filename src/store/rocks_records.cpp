// Records of the RocksDB backend (rocks_keys.hpp): finding a document by id or by number,
// rewriting a record without a document that is deleted or replaced, and reading every document
// of a collection from one snapshot (for_each_document: an export).
#include <algorithm>

#include "store/rocks_backend.hpp"

namespace simdup::detail {

using namespace rocks_keys;

namespace {

error_info corrupt_record(std::string_view collection, uint64_t record) {
  return make_error(errc::corrupt_data, "stored record " + std::to_string(record) +
                                            " of collection " + std::string(collection));
}

/// The newest document time of a record (the t/ key's time).
int64_t newest_of(std::span<const stored_doc> docs) {
  int64_t newest = INT64_MIN;
  for (const auto& d : docs) newest = std::max(newest, d.time);
  return newest;
}

const stored_doc* find_num(std::span<const stored_doc> docs, uint64_t num) noexcept {
  // Numbers ascend within a record.
  const auto it = std::lower_bound(docs.begin(), docs.end(), num,
                                   [](const stored_doc& d, uint64_t n) { return d.num < n; });
  return it != docs.end() && it->num == num ? &*it : nullptr;
}

}  // namespace

result<bool> record_reader::seek(uint64_t num) {
  if (positioned_ && record_ <= num && num <= last_) return true;
  positioned_ = false;
  if (!it_) it_.reset(db_.NewIterator(rocksdb::ReadOptions(), records_));
  // Records cover disjoint, ascending number ranges: the one holding `num` is the last one
  // keyed at or below it.
  const std::string p = prefix('n', collection_);
  it_->SeekForPrev(num_key(collection_, num));
  if (!it_->status().ok()) return db_error("read", it_->status());
  if (!it_->Valid() || !it_->key().starts_with(p)) return false;
  if (it_->key().size() != p.size() + 8) return corrupt_record(collection_, num);
  record_ = read_be(it_->key().ToStringView().substr(p.size()));
  value_ = it_->value().ToStringView();
  if (!decode_record(value_, docs_)) return corrupt_record(collection_, record_);
  last_ = docs_.empty() ? record_ : docs_.back().num;
  positioned_ = true;
  return true;
}

const stored_doc* record_reader::doc(uint64_t num) const noexcept {
  return find_num(docs_, num);
}

result<std::optional<doc_location>> rocks_backend::find_doc(const collection_state& c,
                                                            std::string_view id,
                                                            std::span<const uint64_t> candidates,
                                                            record_edits& edits) {
  record_reader stored = reader(c);
  for (const uint64_t num : candidates) {
    const stored_doc* d = nullptr;
    uint64_t record = 0;
    // A record this request already rewrote is read from its edit.
    auto e = edits.records.upper_bound(num);
    if (e != edits.records.begin() && std::prev(e)->second.last >= num) {
      --e;
      record = e->first;
      d = find_num(e->second.docs, num);
    } else {
      auto found = stored.seek(num);
      if (!found) return std::move(found).error();
      if (!*found) continue;
      record = stored.record();
      d = stored.doc(num);
    }
    // A tag shared with another id, or a number no longer stored.
    if (d && d->id == id) {
      doc_location at{record, d->num, d->fingerprint, d->time, {}};
      decode_band_keys(d->band_keys, at.band_keys);
      return std::optional<doc_location>{std::move(at)};
    }
  }
  return std::optional<doc_location>{};
}

status rocks_backend::remove_from_record(const collection_state& c, const doc_location& at,
                                         record_edits& edits) {
  auto [e, added] = edits.records.try_emplace(at.record);
  record_edits::record& r = e->second;
  if (added) {
    record_reader stored = reader(c);
    auto found = stored.seek(at.num);
    if (!found) return std::move(found).error();
    if (!*found || stored.record() != at.record) return corrupt_record(c.config.name, at.record);
    // The edit keeps its own copy: its documents outlive the reader.
    r.value = stored.value();
    if (!decode_record(r.value, r.docs)) {
      return corrupt_record(c.config.name, at.record);
    }
    r.newest = newest_of(r.docs);
    r.last = r.docs.empty() ? 0 : r.docs.back().num;
  }
  std::erase_if(r.docs, [&](const stored_doc& d) { return d.num == at.num; });
  return {};
}

void rocks_backend::write_edits(const collection_state& c, const record_edits& edits,
                                rocksdb::WriteBatch& batch) {
  for (const auto& [record, r] : edits.records) {
    batch.Delete(time_cf_, time_key(c.config.name, r.newest, record));
    if (r.docs.empty()) {
      batch.Delete(num_cf_, num_key(c.config.name, record));
      continue;
    }
    std::string value;
    for (const auto& d : r.docs) append_doc(value, d);
    batch.Put(num_cf_, num_key(c.config.name, record), value);
    batch.Put(time_cf_, time_key(c.config.name, newest_of(r.docs), record), {});
  }
}

result<uint64_t> rocks_backend::for_each_document(
    const collection_config& config, const std::function<status(const document_view&)>& visit) {
  auto found = find(config.name);
  if (!found) return std::move(found).error();
  collection_state& c = **found;
  // Taken under the collection lock, between two requests' batches: the snapshot holds whole
  // requests, and the newest of them is the ticket to wait for.
  const rocksdb::Snapshot* snap = nullptr;
  uint64_t ticket = 0;
  {
    std::lock_guard lock(c.mu);
    if (c.dropped) return make_error(errc::not_found, "no collection \"" + config.name + "\"");
    snap = db_->GetSnapshot();
    ticket = c.last_write;
  }
  const std::unique_ptr<const rocksdb::Snapshot, std::function<void(const rocksdb::Snapshot*)>>
      release(snap, [this](const rocksdb::Snapshot* s) { db_->ReleaseSnapshot(s); });
  rocksdb::ReadOptions ro;
  ro.snapshot = snap;
  ro.fill_cache = false;  // one pass: keep the cache for the requests
  const std::string p = prefix('n', config.name);
  const std::string end = prefix_end(p);
  const rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, num_cf_));
  std::vector<stored_doc> docs;
  std::vector<uint32_t> sketch;
  std::vector<uint64_t> band_keys;
  for (it->Seek(p); it->Valid(); it->Next()) {
    if (it->key().size() != p.size() + 8 || !decode_record(it->value().ToStringView(), docs)) {
      return make_error(errc::corrupt_data, "stored record of collection " + config.name);
    }
    for (const stored_doc& d : docs) {
      decode_sketch(d.sketch, sketch);
      decode_band_keys(d.band_keys, band_keys);
      if (auto st = visit({d.id, d.fingerprint, d.time, sketch, band_keys}); !st) {
        return std::move(st).error();
      }
    }
  }
  if (!it->status().ok()) return db_error("read", it->status());
  return ticket;
}

}  // namespace simdup::detail
