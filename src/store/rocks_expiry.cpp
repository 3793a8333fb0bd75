// Expiry in the RocksDB backend: dropping the documents that left a collection's window from its
// index and its store (the service's expiry loop calls expire now and then).
#include "store/rocks_backend.hpp"

namespace simdup::detail {

using namespace rocks_keys;

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
    auto more = expire_step(c, first, end);
    if (!more) return std::move(more).error();
    if (!*more) return {};
  }
}

result<bool> rocks_backend::expire_step(collection_state& c, const std::string& first,
                                        const std::string& end) {
  std::lock_guard lock(c.mu);
  if (c.dropped) return false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), time_cf_));
  record_reader stored = reader(c);
  rocksdb::WriteBatch batch;
  std::size_t n = 0;
  std::vector<uint64_t> band_keys;
  // A record goes once its newest document is out of the window.
  for (it->Seek(first); it->Valid() && it->key().compare(end) < 0 && n < 10000; it->Next()) {
    const std::string_view key = it->key().ToStringView();
    if (key.size() != first.size() + 16) {
      return make_error(errc::corrupt_data, "stored time key of collection " + c.config.name);
    }
    const uint64_t record = read_be(key.substr(first.size() + 8));
    auto held = stored.seek(record);
    if (!held) return std::move(held).error();
    if (*held && stored.record() == record) {
      for (const auto& d : stored.docs()) {
        c.ids.erase(id_map::hash(d.id), d.num);
        if (c.bands && !d.band_keys.empty()) {
          decode_band_keys(d.band_keys, band_keys);
          c.bands->erase(d.num, band_keys);
        }
      }
      n += stored.docs().size();
    }
    batch.Delete(time_cf_, it->key());
    batch.Delete(num_cf_, num_key(c.config.name, record));
  }
  if (!it->status().ok()) return db_error("scan", it->status());
  if (batch.Count() == 0) return false;
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
    return std::move(st).error();
  }
  // A probe made before this step may report expired documents' entries.
  c.removals.fetch_add(1, std::memory_order_release);
  c.expired += n;
  c.documents -= n;
  return true;
}

}  // namespace simdup::detail
