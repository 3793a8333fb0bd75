// Records of the RocksDB backend (rocks_keys.hpp): finding a document by id or by number, and
// rewriting a record without a document that is deleted or replaced.
#include <algorithm>

#include "store/rocks_backend.hpp"

namespace simdup::detail {

using namespace rocks_keys;

namespace {

error_info corrupt_record(const collection_state& c, uint64_t record) {
  return make_error(errc::corrupt_data,
                    "stored record " + std::to_string(record) + " of collection " + c.config.name);
}

/// The newest document time of a record (the t/ key's time).
int64_t newest_of(std::span<const stored_doc> docs) {
  int64_t newest = INT64_MIN;
  for (const auto& d : docs) newest = std::max(newest, d.time);
  return newest;
}

const stored_doc* find_num(std::span<const stored_doc> docs, uint64_t num) {
  // Numbers ascend within a record.
  const auto it = std::lower_bound(docs.begin(), docs.end(), num,
                                   [](const stored_doc& d, uint64_t n) { return d.num < n; });
  return it != docs.end() && it->num == num ? &*it : nullptr;
}

}  // namespace

result<bool> rocks_backend::read_record(const collection_state& c, uint64_t num, uint64_t& record,
                                        std::string& value) {
  // Records cover disjoint, ascending number ranges: the one holding `num` is the last one
  // keyed at or below it.
  const std::string p = prefix('n', c.config.name);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), num_cf_));
  it->SeekForPrev(num_key(c.config.name, num));
  if (!it->status().ok()) return db_error("read", it->status());
  if (!it->Valid() || !it->key().starts_with(p)) return false;
  if (it->key().size() != p.size() + 8) return corrupt_record(c, num);
  record = read_be(it->key().ToStringView().substr(p.size()));
  value.assign(it->value().data(), it->value().size());
  return true;
}

result<std::optional<doc_location>> rocks_backend::find_doc(const collection_state& c,
                                                            std::string_view id,
                                                            std::span<const uint64_t> candidates,
                                                            record_edits& edits) {
  std::vector<stored_doc> docs;
  std::string value;
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
      auto found = read_record(c, num, record, value);
      if (!found) return std::move(found).error();
      if (!*found) continue;
      if (!decode_record(value, docs)) return corrupt_record(c, record);
      d = find_num(docs, num);
    }
    // A tag shared with another id, or a number no longer stored.
    if (d && d->id == id) {
      return std::optional<doc_location>{doc_location{record, d->num, d->fingerprint, d->time}};
    }
  }
  return std::optional<doc_location>{};
}

status rocks_backend::remove_from_record(const collection_state& c, const doc_location& at,
                                         record_edits& edits) {
  auto [e, added] = edits.records.try_emplace(at.record);
  record_edits::record& r = e->second;
  if (added) {
    uint64_t record = 0;
    auto found = read_record(c, at.num, record, r.value);
    if (!found) return std::move(found).error();
    if (!*found || record != at.record || !decode_record(r.value, r.docs)) {
      return corrupt_record(c, at.record);
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

result<std::optional<std::string>> rocks_backend::stored_id(const collection_state& c,
                                                            uint64_t num) {
  uint64_t record = 0;
  std::string value;
  auto found = read_record(c, num, record, value);
  if (!found) return std::move(found).error();
  if (!*found) return std::optional<std::string>{};
  std::vector<stored_doc> docs;
  if (!decode_record(value, docs)) return corrupt_record(c, record);
  const stored_doc* d = find_num(docs, num);
  if (!d) return std::optional<std::string>{};
  return std::optional<std::string>{std::string(d->id)};
}

}  // namespace simdup::detail
