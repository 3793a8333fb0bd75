// Loading the RocksDB backend's indexes at start, and the segment files that make it fast.
//
// A segment file is online_index::save's memory-mappable snapshot of a collection's index
// (docs/index-format.md), saved under DIR/segments without holding the collection lock. Its
// record in RocksDB (key s) says what it covers: every document numbered below next_num, and
// every removal (DELETE or replacement, logged under key r) numbered below `removal`. It may
// also hold some newer documents, inserted while it was being saved. So at start:
//   1. load the file (a missing file, another size than recorded, a bad checksum or another
//      layout: rebuild the index from the store instead; RocksDB stays the source of truth);
//   2. replay the removals logged from `removal` on (removing an absent number is a no-op);
//   3. insert the documents numbered from next_num on, unless the file already has them.
// Expired documents need no replay: queries skip entries outside the window, and their records
// are gone from the store. Every start reads all records once anyway, for the id map, and
// rebuilds the MinHash band index from their band keys (it has no segment file).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "store/rocks_backend.hpp"

namespace simdup::detail {

using namespace rocks_keys;

namespace {

int64_t steady_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Adds `e` to `entries`, inserting them into the index every 65536 entries (the caller
/// inserts what is left at the end). Full segments are sealed as they come, since the
/// service's indexes leave that to their owner: unsealed entries take about twice the memory.
void push_entry(online_index& index, std::vector<index_entry>& entries, const index_entry& e) {
  entries.push_back(e);
  if (entries.size() == 65536) {
    index.insert(entries);
    entries.clear();
    if (index.awaiting_maintenance() > 0) index.maintain();
  }
}

}  // namespace

std::string rocks_backend::segments_dir() const {
  return (std::filesystem::path(dir_) / "segments").string();
}

status rocks_backend::load() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const std::string cprefix = single('c', "");
  // Stores of earlier versions kept only the id under n/ keys (format 1) or every key in the
  // default column family (format 2): refuse them rather than misreading them. An empty store
  // gets the current format.
  std::string format;
  auto s = db_->Get(rocksdb::ReadOptions(), format_key, &format);
  if (!s.ok() && !s.IsNotFound()) return db_error("get", s);
  it->Seek(cprefix);
  const bool empty = !it->Valid() || !it->key().starts_with(cprefix);
  if (s.IsNotFound() && empty) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    s = db_->Put(wo, format_key, format_version);
    if (!s.ok()) return db_error("put", s);
  } else if (std::find(std::begin(upgradable_formats), std::end(upgradable_formats), format) !=
             std::end(upgradable_formats)) {
    // Its records read as they are; marked at once, so that an older build, which would
    // misread the sketches or band keys written from now on, refuses the store.
    rocksdb::WriteOptions wo;
    wo.sync = true;
    s = db_->Put(wo, format_key, format_version);
    if (!s.ok()) return db_error("put", s);
  } else if (format != format_version) {
    return make_error(errc::unsupported,
                      "store " + dir_ + " has format \"" + format + "\", this simdup reads \"" +
                          std::string(format_version) +
                          "\": re-create it (or rebuild it with the simdup that wrote it)");
  }
  for (it->Seek(cprefix); it->Valid() && it->key().starts_with(cprefix); it->Next()) {
    const collection_config base = stored_config_base(it->key().ToString().substr(cprefix.size()));
    auto config = config_from_json(it->value().ToStringView(), base);
    if (!config) {
      return make_error(errc::corrupt_data, "stored settings of collection \"" + base.name +
                                                "\": " + config.error().message);
    }
    auto state = make_state(*config);
    if (!state) return std::move(state).error();
    collection_state& c = **state;
    auto loaded = load_snapshot(c);
    if (!loaded) return std::move(loaded).error();
    if (*loaded) {
      // About as many ids as the file has entries: the map is sized once, not grown in steps.
      c.ids.reserve(c.index.stats().size);
      if (c.bands) c.bands->reserve(c.index.stats().size);
      if (auto st = scan_records(c, c.snapshot.next_num, c.snapshot.end_num); !st) return st;
    } else {
      if (auto st = scan_records(c, 0, 0); !st) return st;
      // A bulk rebuild leaves many small sealed segments; fewer segments mean fewer probes.
      c.index.compact();
      auto last_removal = last_number(db_->DefaultColumnFamily(), prefix('r', c.config.name));
      if (!last_removal) return std::move(last_removal).error();
      if (*last_removal) c.next_removal = **last_removal + 1;
    }
    // Numbers of documents removed since are never reused.
    std::string raw;
    s = db_->Get(rocksdb::ReadOptions(), next_number_key(c.config.name), &raw);
    if (!s.ok() && !s.IsNotFound()) return db_error("get", s);
    if (s.ok() && raw.size() != 8) {
      return make_error(errc::corrupt_data, "stored next number of collection " + c.config.name);
    }
    if (s.ok()) c.next_num = std::max(c.next_num, read_le(raw));
    s = db_->Get(rocksdb::ReadOptions(), totals_key(c.config.name), &raw);
    if (!s.ok() && !s.IsNotFound()) return db_error("get", s);
    if (s.ok()) {
      totals t;
      if (!decode(raw, t)) {
        return make_error(errc::corrupt_data, "stored totals of collection " + c.config.name);
      }
      c.inserted = t.inserted;
      c.expired = t.expired;
      c.deleted = t.deleted;
    }
    c.published = c.next_num;
    // The documents replayed after a segment file were only set aside in the index.
    if (c.index.awaiting_maintenance() > 0) request_maintenance(c);
    collections_.emplace(config->name, std::move(*state));
  }
  if (!it->status().ok()) return db_error("scan", it->status());
  return {};
}

result<bool> rocks_backend::load_snapshot(collection_state& c) {
  const std::string& name = c.config.name;
  std::string raw;
  auto s = db_->Get(rocksdb::ReadOptions(), single('s', name), &raw);
  if (s.IsNotFound()) return false;
  if (!s.ok()) return db_error("get", s);
  snapshot_record rec;
  const auto unusable = [&](const std::string& why) {
    std::fprintf(stderr, "simdup serve: collection %s: %s; rebuilding its index from the store\n",
                 name.c_str(), why.c_str());
    return false;
  };
  if (!decode(raw, rec)) return unusable("unreadable segment file record");
  const std::string path = (std::filesystem::path(segments_dir()) / rec.file).string();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return unusable("segment file " + path + ": " + ec.message());
  if (size != rec.file_size) {
    return unusable("segment file " + path + " is stale (" + std::to_string(size) +
                    " bytes, recorded " + std::to_string(rec.file_size) + ")");
  }
  auto index = online_index::load(path, index_options(c.config));
  if (!index) return unusable("segment file " + path + ": " + index.error().message);
  if (index->layout().k != c.config.k) {
    return unusable("segment file " + path + " was built for another k");
  }
  c.index = std::move(*index);

  // Removals since the file was saved.
  c.next_removal = rec.removal;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  const std::string rprefix = prefix('r', name);
  for (it->Seek(removal_key(name, rec.removal)); it->Valid() && it->key().starts_with(rprefix);
       it->Next()) {
    if (it->key().size() != rprefix.size() + 8 || it->value().size() != 8) {
      return make_error(errc::corrupt_data, "stored removal key of collection " + name);
    }
    c.index.remove(read_le(it->value().ToStringView()));
    c.next_removal = read_be(it->key().ToStringView().substr(rprefix.size())) + 1;
  }
  if (!it->status().ok()) return db_error("scan", it->status());

  c.next_num = std::max<uint64_t>(rec.next_num, 1);
  c.snapshot = rec;
  c.snapshot_time = steady_seconds();
  return true;
}

status rocks_backend::scan_records(collection_state& c, uint64_t from, uint64_t end_num) {
  const std::string& name = c.config.name;
  const std::string p = prefix('n', name);
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, num_cf_));
  std::vector<stored_doc> docs;
  std::vector<index_entry> entries;
  // Band entries likewise, 16 documents at a time (their keys decoded, their slots prefetched).
  std::vector<std::pair<uint64_t, std::vector<uint64_t>>> bands;
  std::size_t banded = 0;
  const auto add_bands = [&] {
    for (std::size_t j = 0; j < banded; ++j) c.bands->insert(bands[j].first, bands[j].second);
    banded = 0;
  };
  uint64_t count = 0;
  // Ids go into the map 64 at a time, their slots prefetched when they are read: one cache
  // miss per id, overlapped, was most of a start's time.
  std::vector<std::pair<uint64_t, uint64_t>> ids;
  const auto add_ids = [&] {
    for (const auto& [h, num] : ids) c.ids.insert(h, num);
    ids.clear();
  };
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
    if (it->key().size() != p.size() + 8 || !decode_record(it->value().ToStringView(), docs)) {
      return make_error(errc::corrupt_data, "stored record of collection " + name);
    }
    for (const stored_doc& d : docs) {
      if (d.num == 0 || d.num > id_map::max_number) {
        return make_error(errc::corrupt_data, "stored document number of collection " + name);
      }
      ids.emplace_back(id_map::hash(d.id), d.num);
      c.ids.prefetch(ids.back().first);
      if (ids.size() == 64) add_ids();
      ++count;
      c.next_num = std::max(c.next_num, d.num + 1);
      if (c.bands && d.band_keys.size() == 8 * c.bands->bands()) {
        if (bands.size() == banded) bands.emplace_back();
        bands[banded].first = d.num;
        decode_band_keys(d.band_keys, bands[banded].second);
        c.bands->prefetch(bands[banded].second);
        if (++banded == 16) add_bands();
      }
      if (d.num < from) continue;
      const index_entry e{d.fingerprint, d.num, d.time};
      // Only those numbered below end_num may be in the segment file already.
      if (d.num < end_num) {
        query_params exact;
        exact.k = 0;
        exact.now = e.timestamp;
        const auto same = c.index.query(e.fingerprint, exact);
        const auto is_e = [&](const index_match& m) { return m.id == e.id; };
        if (std::any_of(same.begin(), same.end(), is_e)) continue;
      }
      push_entry(c.index, entries, e);
    }
  }
  if (!it->status().ok()) return db_error("scan", it->status());
  add_ids();
  if (c.bands) add_bands();
  c.index.insert(entries);
  c.documents = count;
  return {};
}

result<std::optional<uint64_t>> rocks_backend::last_number(rocksdb::ColumnFamilyHandle* family,
                                                           std::string_view p) {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, family));
  std::string last(p);
  last.push_back('\xff');
  it->SeekForPrev(last);
  std::optional<uint64_t> num;
  if (it->Valid() && it->key().starts_with(p) && it->key().size() == p.size() + 8) {
    num = read_be(it->key().ToStringView().substr(p.size()));
  }
  if (!it->status().ok()) return db_error("scan", it->status());
  return num;
}

status rocks_backend::maybe_snapshot(collection_state& c) {
  uint64_t next_num, next_removal;
  {
    std::lock_guard lock(c.mu);
    next_num = c.next_num;
    next_removal = c.next_removal;
  }
  {
    std::lock_guard slock(c.snapshot_mu);
    const uint64_t changes = (next_num - std::max<uint64_t>(c.snapshot.next_num, 1)) +
                             (next_removal - c.snapshot.removal);
    const bool idle =
        next_num + next_removal == c.last_mark && c.writers.load(std::memory_order_relaxed) == 0;
    c.last_mark = next_num + next_removal;
    if (changes == 0) return {};
    // Without a file (a new collection, or rebuilt at start), the next start would rebuild.
    const bool first = c.snapshot.file.empty();
    // Saving holds the index's maintenance lock, so a writer that seals a segment meanwhile
    // waits (holding the collection lock) until the file is written: seconds at 10M documents.
    // So enough changes are saved once the collection is idle, and under a steady load only
    // when the file is too old.
    const bool by_count =
        options_.snapshot_documents > 0 && changes >= options_.snapshot_documents && idle;
    const bool by_time = options_.snapshot_interval_s > 0 &&
                         steady_seconds() - c.snapshot_time >= options_.snapshot_interval_s;
    if (!first && !by_count && !by_time) return {};
  }
  return snapshot(c);
}

status rocks_backend::snapshot(collection_state& c) {
  std::lock_guard slock(c.snapshot_mu);
  snapshot_record rec;
  uint64_t rollbacks;
  {
    std::lock_guard lock(c.mu);
    if (c.dropped) return {};
    rec.next_num = c.next_num;
    rec.removal = c.next_removal;
    rollbacks = c.rollbacks;
  }
  if (rec.next_num == c.snapshot.next_num && rec.removal == c.snapshot.removal) return {};
  std::error_code ec;
  std::filesystem::create_directories(segments_dir(), ec);
  if (ec) return make_error(errc::io_error, segments_dir() + ": " + ec.message());
  rec.file = c.config.name + "." + std::to_string(rec.next_num) + "." +
             std::to_string(rec.removal) + ".idx";
  const std::string path = (std::filesystem::path(segments_dir()) / rec.file).string();
  // Saved without the collection lock: writers go on (the file may get newer entries too).
  if (auto st = c.index.save(path); !st) return st;
  {
    std::lock_guard lock(c.mu);
    rec.end_num = c.next_num;
    if (c.rollbacks != rollbacks) {
      // An undone insert may be in the file; the next one will do.
      std::filesystem::remove(path, ec);
      return {};
    }
  }
  rec.file_size = std::filesystem::file_size(path, ec);
  if (ec) return make_error(errc::io_error, path + ": " + ec.message());
  rocksdb::WriteBatch batch;
  batch.Put(single('s', c.config.name), encode(rec));
  // Removals the file covers need no replay any more.
  if (rec.removal > 0) {
    batch.DeleteRange(removal_key(c.config.name, 0), removal_key(c.config.name, rec.removal));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  if (auto st = through_gate("write", [&] { return db_->Write(wo, &batch); }); !st) return st;
  if (!c.snapshot.file.empty() && c.snapshot.file != rec.file) {
    std::filesystem::remove(std::filesystem::path(segments_dir()) / c.snapshot.file, ec);
  }
  c.snapshot = rec;
  c.snapshot_time = steady_seconds();
  return {};
}

}  // namespace simdup::detail
